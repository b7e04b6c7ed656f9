/*
 * services.c — the table of services the core walks (core/service.h), one
 * row per service of services.h, in its order.
 */
#include "services.h"

_Static_assert(AC__SERVICE_COUNT <= AC__SERVICE_MAX, "more services than slots");

const ac__service *const ac__service_table[] = {
#define AC__SERVICE_ROW(row) &ac__##row##_service,
    AC__SERVICES(AC__SERVICE_ROW)
#undef AC__SERVICE_ROW
};

const unsigned ac__service_count = AC__SERVICE_COUNT;
