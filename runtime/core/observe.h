/*
 * observe.h — what a context observes of the turns it runs: an execution
 * trace (trace.c) and per-actor-type counters (typestats.c). Both are
 * chosen when the runtime is created and fixed for its life, so a turn
 * that observes nothing pays one test of ac_ctx.observe, a word it keeps
 * beside the fields the turn writes anyway (runtime/README.md, "Watching
 * turns").
 */
#ifndef AC_CORE_OBSERVE_H
#define AC_CORE_OBSERVE_H

#include "actorc.h"

#include <stdint.h>
#include <time.h>

enum {
    AC__OBS_TRACE = 1u << 0,  /* record events in the context's trace ring */
    AC__OBS_TYPES = 1u << 1   /* count per actor type, with turn times */
};

typedef struct ac__trace_ring ac__trace_ring;  /* trace.c */
typedef struct ac__type_table ac__type_table;  /* typestats.c */

/* The observed turn in progress on a context: what its end records. The
 * actor may be gone by then (its finalize turn), so its type and short
 * address are taken at the start. */
typedef struct ac__obs_turn {
    uint64_t t0;                    /* ns, ac__now_ns */
    const ac_actor_type *type;
    uint32_t addr;                  /* the address's first 4 bytes */
    uint32_t handled;               /* messages given to its handlers */
    uint32_t hwm;                   /* the longest mailbox seen in it */
} ac__obs_turn;

/* Monotonic nanoseconds: one vDSO call, no system call. */
static inline uint64_t ac__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* An address's short form in the trace: its first 4 bytes, big-endian, so
 * that printed as %08x it reads as the address's first 8 hex digits. */
static inline uint32_t ac__addr_short(const ac_addr *a)
{
    return (uint32_t)a->bytes[0] << 24 | (uint32_t)a->bytes[1] << 16 |
           (uint32_t)a->bytes[2] << 8 | a->bytes[3];
}

#endif /* AC_CORE_OBSERVE_H */
