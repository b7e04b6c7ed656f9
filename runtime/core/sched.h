/*
 * sched.h — workers: their deques and LIFO slots, scheduling an actor that
 * became runnable, parking and waking (sched.c; design notes in
 * runtime/README.md).
 */
#ifndef AC_CORE_SCHED_H
#define AC_CORE_SCHED_H

#include "deque.h"
#include "runtime.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct ac__worker {
    ac_ctx cx;
    ac__deque deque;
    unsigned lifo_streak;
    /* Hub detection (sched.c, "Hubs"): the owner's. */
    unsigned woke;                  /* wakes queued in the deque since the last long batch */
    bool hub_on;                    /* marked: the owner's copy of `hub` */
    uint32_t hub_tick;              /* `tick` at the last hub-shaped turn */
    uint64_t hub_seen_ns;           /* when that turn ended */
    uint64_t hub_seen_msgs;         /* and the messages handled here by then */
    unsigned fresh;                 /* woken actors at the deque's bottom */
    unsigned since_oldest;          /* turns since the deque's top was served */
    uint32_t tick;
    uint64_t rng;
    bool searching;
    bool woken;                     /* woken, and no turn run since (stats) */
    /* What a thief may take from a worker stuck in one long turn (sched.c,
     * "Taking what a long turn holds"): one line, written by the owner at
     * every turn, read by thieves only before they park and by the monitor
     * at most every MON_POLL_US. */
    alignas(AC__CACHE_LINE) _Atomic uint32_t turn;  /* turns << 1 | in a turn */
    _Atomic uint32_t steal;                 /* a thief holds the window */
    _Atomic(ac__actor *) lifo;      /* the LIFO slot: runs next, for locality */
    _Atomic(ac__actor *) drained;   /* owned, mailbox empty, not yet released */
    /* Thieves' note: `turn` as last seen, and when (µs, low 32 bits). */
    alignas(AC__CACHE_LINE) _Atomic uint64_t seen;
    /* A hub runs here: thieves leave the deque alone. On the thieves'
     * line, not the turn's, which the owner writes every turn. */
    _Atomic bool hub;
    _Atomic uint32_t hub_marks;     /* times marked (AC_STATS, tests); the owner's */
    alignas(AC__CACHE_LINE) _Atomic uint32_t park_state;  /* futex word */
    struct ac__worker *next_sleeper;
    pthread_t thread;
};

enum { AC__RUNNING = 0, AC__PARKED = 1, AC__NOTIFIED = 2 };

/* searching workers in the low half, sleeping workers in the high half */
#define AC__IDLE_SEARCH_ONE 1u
#define AC__IDLE_SLEEP_ONE (1u << 16)
#define AC__IDLE_SEARCHING(s) ((s) & 0xFFFFu)
#define AC__IDLE_SLEEPING(s) ((s) >> 16)

void ac__schedule(ac_ctx *cx, ac__actor *a);
/* The observed turn of `a` on worker context cx: counts a hand-off if its
 * previous turn ran on another worker (ac_stats.handoffs). */
void ac__sched_note_handoff(ac_ctx *cx, ac__actor *a);
void ac__notify_work(ac_runtime *rt);
/* ac__hold_runnable and ac__run_held (service.h). */
void ac__sched_hold(ac_ctx *cx, bool on);
void ac__sched_run_held(ac_ctx *cx);
int ac__workers_start(ac_runtime *rt);
void ac__workers_stop(ac_runtime *rt);
/* Deterministic mode, and whatever is left after the workers stop: runs
 * turns on the calling thread until nothing is left (or one turn), and
 * returns the messages handled. The _until form also stops at `deadline`
 * (ac__monotonic_ms; checked between turns) and says whether it got to
 * quiescence. */
/* The actor next_local would run next on w, taken (seeded mode's run
 * loop collects the runnable actors with it); NULL when none. */
ac__actor *ac__sched_take(ac__worker *w);
unsigned ac__run_here(ac_runtime *rt, bool one_turn);
bool ac__run_here_until(ac_runtime *rt, uint64_t deadline);
/* The monotonic clock in ms (real time, also in deterministic mode). */
uint64_t ac__monotonic_ms(void);
bool ac__quiescent(ac_runtime *rt);
/* Test hooks (tests/runtime/test_steal.c): how often the monitor has
 * returned from a sleep, and whether it sleeps with no timeout now (1),
 * is awake (0), or does not exist (-1: fewer than 2 workers, or no
 * membarrier). */
uint64_t ac__sched_monitor_wakes(ac_runtime *rt);
int ac__sched_monitor_state(ac_runtime *rt);
/* How many times a worker was marked a hub (AC_STATS=1 prints it), and,
 * a test hook (tests/runtime/test_hub.c), whether cx's worker is marked
 * now (sched.c, "Hubs"). */
uint64_t ac__sched_hub_marks(ac_runtime *rt);
bool ac__sched_hub_marked(ac_ctx *cx);

#endif /* AC_CORE_SCHED_H */
