/*
 * timers.h — what the timer service offers the other services: the
 * runtime's clock and timers for runtime messages.
 */
#ifndef AC_SERVICES_TIMERS_H
#define AC_SERVICES_TIMERS_H

#include "../core/service.h"

#include <stdint.h>

/* ac_timer_after for a runtime message (a timed-out reply, ask.c): sent
 * with ac__send_system when due. Consumes e. */
int ac__timer_after_system(ac_ctx *cx, const ac_addr *to, uint32_t ms, ac__env *e,
                           ac_timer_id *id);
/* Milliseconds on the runtime's clock: monotonic, or in deterministic mode
 * the ticks ac_runtime_advance has counted (supervisors' restart intensity). */
uint64_t ac__clock_ms(ac_runtime *rt);

#endif /* AC_SERVICES_TIMERS_H */
