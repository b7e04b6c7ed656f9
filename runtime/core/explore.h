/*
 * explore.h — the seeded mode of deterministic mode: a pseudo-random (or
 * PCT) choice of the next step, for systematic concurrency testing.
 * Design notes: runtime/README.md, "Seeded schedules".
 */
#ifndef AC_CORE_EXPLORE_H
#define AC_CORE_EXPLORE_H

#include "runtime.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct ac__explore ac__explore;

/* The seeded state of a runtime made with cfg->seed nonzero and no
 * workers; NULL when out of memory. */
ac__explore *ac__explore_new(const ac_config *cfg);
/* Frees it, and the envelopes still in flight (to the pool of cx). */
void ac__explore_free(ac_ctx *cx, ac__explore *x);

/* A send to the live actor at `to` (found by the sender): kept in flight
 * on its (sender, receiver) channel instead of reaching the mailbox.
 * False when out of memory: the caller delivers it at once. `system`: a
 * runtime message (nothing is counted for it). */
bool ac__explore_hold(ac_ctx *cx, const ac_addr *to, ac__env *e, bool system);

/* Deterministic mode's run loop when seeded (sched.c's run_here). */
unsigned ac__explore_run(ac_runtime *rt, bool one_turn, uint64_t deadline, bool *late);

#endif /* AC_CORE_EXPLORE_H */
