/*
 * services.h — the list of the runtime's services, one row each.
 *
 * The order is the order a death reaches them: names and groups first, so
 * whoever hears of the death (a supervisor restarting the actor under its
 * name) finds the name free; timers before anyone hears of it (timers.c);
 * links and monitors, which tell others, after the actor's records are
 * gone; then supervisors; the node, whose links carry all of that to other
 * nodes, last. Adding a service is writing its file (a const
 * ac__service named ac__<row>_service) and adding its row here.
 */
#ifndef AC_SERVICES_SERVICES_H
#define AC_SERVICES_SERVICES_H

#include "../core/service.h"

#define AC__SERVICES(X)                                                       \
    X(names)                                                                  \
    X(groups)                                                                 \
    X(routers)                                                                \
    X(timers)                                                                 \
    X(ask)                                                                    \
    X(links)                                                                  \
    X(monitors)                                                               \
    X(supervisors)                                                            \
    X(node)

/* A service's row in the table: the index of its state slots. */
enum ac__service_id {
#define AC__SERVICE_ID(row) AC__SERVICE_##row,
    AC__SERVICES(AC__SERVICE_ID)
#undef AC__SERVICE_ID
    AC__SERVICE_COUNT
};

#define AC__SERVICE_DECL(row) extern const ac__service ac__##row##_service;
AC__SERVICES(AC__SERVICE_DECL)
#undef AC__SERVICE_DECL

/* A down's payload as the monitors service sends it to a local watcher:
 * the public ac_down, then what only the runtime reads. */
typedef struct ac__down_note {
    ac_down down;
    uint32_t tag;   /* a failure: the tag its actor was handling; else
                       AC__NO_TAG */
    uint32_t pad;
} ac__down_note;

/* An ask's id: its record's index in the low bits, the record's
 * generation above (ask.c). */
#define AC__ASK_INDEX_BITS 28u

/* The ask records rt has made so far, pending or free (ask.c): asks reuse
 * them, so this stays at the most pending at once; for the tests. */
size_t ac__ask_records(ac_runtime *rt);

#endif /* AC_SERVICES_SERVICES_H */
