/*
 * runtime.h — a runtime and the contexts of the threads that use it.
 *
 * The core's files share these two structures; services never see them
 * (they hold ac_runtime and ac_ctx as the opaque types of actorc.h and
 * reach their own state through service.h).
 */
#ifndef AC_CORE_RUNTIME_H
#define AC_CORE_RUNTIME_H

#include "addr.h"
#include "atomics.h"
#include "observe.h"
#include "pool.h"
#include "route.h"
#include "service.h"
#include "transport.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Written only by the owning thread, read by ac_runtime_stats from any
 * thread: relaxed atomics, and increments are load+store, not RMW. */
/* A role a service registered (transport.h), with the service's state. */
typedef struct ac__remote {
    const ac__remote_role *role;
    void *state;
} ac__remote;

typedef struct ac__counters {
    _Atomic uint64_t messages, sends, dead_letters, spawned, stopped, failed,
        steals, parks, pool_misses, mailbox_drops, killed, unhandled, refused,
        system_messages, handoffs, wakeups, idle_wakeups, spins, muted;
} ac__counters;

#define AC__COUNT(cx, field, n)                                               \
    atomic_store_explicit(&(cx)->stats.field,                                 \
                          atomic_load_explicit(&(cx)->stats.field,            \
                                               memory_order_relaxed) + (n),   \
                          memory_order_relaxed)

typedef struct ac__worker ac__worker;

/* Buckets of the mute registry (mute.c): a few overloaded actors at a
 * time is the common case, so a small fixed table. */
#define AC__MUTE_BUCKETS 64

struct ac_ctx {
    ac_runtime *rt;
    ac__actor *current;             /* the actor whose handler is running */
    ac__env *handling;              /* its user message (ac__handling) */
    /* In a plain turn (actor.c: turn_loop), the mailbox tail of
     * `current`, ahead of its block's `tail`: the turn moves this one,
     * private to the context, and stores it back once. NULL otherwise. */
    ac__env *tail;
    /* AC__OBS_* (observe.h): the runtime's, fixed when the context is
     * made; beside `current`, which every turn writes, so testing it
     * touches no other line. */
    unsigned observe;
    /* Not a worker, or tracing: its sends take send_env's slow copy
     * (actor.c), which enters and leaves and records flows. */
    bool send_slow;
    ac__worker *worker;             /* NULL for threads that are not workers */
    ac__pool pool;
    ac__addr_stream addrs;
    /* QSBR: 0 while offline, else the grace-period counter last observed. */
    alignas(AC__CACHE_LINE) _Atomic uint64_t qs_seen;
    /* Finalize envelopes of dead actors awaiting their grace period, oldest
     * first: targets only grow, so reaping stops at the first not yet due. */
    ac__env *retired, *retired_tail;
    /* The first of them not yet given a target (NULL: all have one): a
     * death only appends; the targets are drawn for all at once, with one
     * increment of the shared counter per poll (qsbr.c, stamp). */
    ac__env *unstamped;
    unsigned depth;                 /* external contexts: nested runtime calls */
    ac__counters stats;
    void *slots[AC__SERVICE_MAX];   /* the services' per-thread state */
    pthread_t thread;               /* external contexts: the owning thread */
    /* ac__hold_runnable: actors this context's sends made runnable, kept
     * for ac__run_held (chained through next_runnable). */
    bool holding;
    ac__actor *held, *held_tail;
    struct ac_ctx *next_external;
    /* Observing (observe.h): this thread's trace ring and per-type table,
     * the turn in progress, and the count that samples sends as flows. */
    ac__trace_ring *trace;
    ac__type_table *types;
    ac__obs_turn turn;
    uint32_t flow_tick;
    /* Back-pressure (mute.c): the overloaded actor a handler of the
     * running turn sent to, first one only; NULL otherwise. */
    struct ac__actor *mute_on;
    /* Seeded mode (explore.c): who this context's sends are from when no
     * actor is running, if not the thread itself (a timer that fires). */
    const void *send_from;
};

struct ac_runtime {
    uint64_t id;                    /* unique per process, for the TLS cache */
    uint64_t node;                  /* ac_runtime_node: in every address */
    ac_config cfg;                  /* cfg.trace_path: NULL, see trace_path */
    unsigned observe;               /* AC__OBS_*: every context's */
    char *trace_path;               /* our copy; NULL: no trace */
    uint32_t trace_events, trace_flow_every;
    uint64_t trace_t0;              /* ac__now_ns at creation: the file's 0 */
    unsigned nworkers;              /* threads; 0 in deterministic mode */
    ac__worker *workers;            /* nworkers, or 1 driven by the caller */
    unsigned nslots;                /* entries in workers[] */
    ac__route route;
    ac__depot depot;

    alignas(AC__CACHE_LINE) _Atomic uint32_t idle;
    pthread_mutex_t sleep_lock;     /* guards sleepers */
    ac__worker *sleepers;
    _Atomic bool exiting;           /* workers leave their loop */

    /* The monitor (sched.c, "The monitor"): one thread that watches for
     * turns that block holding actors, awake only while a worker is. */
    alignas(AC__CACHE_LINE) _Atomic uint32_t mon_state;  /* futex word */
    _Atomic uint64_t mon_wakes;     /* its returns from sleep (test hook) */
    pthread_t mon_thread;
    int mon_timer;                  /* timerfd: the kick's delayed wake-up */
    _Atomic bool mon_started;       /* set before the monitor exists */

    alignas(AC__CACHE_LINE) _Atomic uint64_t gp;  /* QSBR grace-period counter */

    /* The injection queue (sched.c, "The injection queue"), each half on
     * a line of its own: sharing gp's line, every push dirtied the line
     * each worker loads after every turn and each outside call at entry.
     * Senders push onto `inject_in`, a lock-free stack, newest first. */
    alignas(AC__CACHE_LINE) _Atomic(ac__actor *) inject_in;
    /* Workers take from `inject_out`, the older actors in FIFO order,
     * refilled from the stack when empty; under inject_lock, atomic only
     * for the lock-free looks (work_visible). */
    alignas(AC__CACHE_LINE) pthread_mutex_t inject_lock;
    _Atomic(ac__actor *) inject_out;

    alignas(AC__CACHE_LINE) pthread_mutex_t orphan_lock;  /* retire lists of parked workers */
    ac__env *orphans;
    _Atomic bool has_orphans;

    pthread_mutex_t quiet_lock;     /* ac_runtime_run waits here */
    pthread_cond_t quiet_cond;

    pthread_mutex_t ext_lock;       /* contexts of non-worker threads */
    ac_ctx *externals;

    _Atomic bool closing;           /* no more sends from outside actors */
    _Atomic bool stopping;          /* no more spawns */
    bool shut_down;
    _Atomic uint64_t shutdown_left; /* ac_stats.shutdown_left */
    ac_dead_letter_fn dead_letter_fn;
    void *dead_letter_arg;
    ac_failure_fn failure_fn;       /* never NULL: ac_failure_print by default */
    void *failure_arg;

    /* Back-pressure (mute.c): muted actors by the overloaded actor they
     * wait for. Taken only by a turn that mutes its actor and by an
     * overloaded actor's first turn that keeps up again. */
    alignas(AC__CACHE_LINE) pthread_mutex_t mute_lock;
    struct ac__mute_group *mute_groups[AC__MUTE_BUCKETS];
    struct ac__mute_group *mute_spare;  /* emptied groups, for reuse */
    bool mute_off;                  /* AC_MUTE=0, or seeded mode */
    uint32_t hub_ns;                /* AC_HUB_NS; 0: no hub detection */

    /* The actors' stashes (stash.c). */
    struct ac__stashes *stashes;

    /* Set once any service keeps per-actor state (service.c). */
    alignas(AC__CACHE_LINE) _Atomic bool services_used;
    /* Each service's state, by its row in the table (service.h): set
     * before the workers start, so read without ordering. */
    void *services[AC__SERVICE_MAX];
    /* The row that consumes system tag AC_TAG_SYSTEM + i, AC__NO_ROW for
     * none (service.c): a reply's delivery looks here, not down the table. */
    unsigned char consumer[AC__SYSTEM_ROWS];
    /* Across nodes (transport.c), set from the services' init hooks: the
     * transport (NULL: none), the roles, and by op the role's index + 1
     * (0: none). */
    const ac__transport *transport;
    void *transport_state;
    ac__remote roles[AC__ROLES_MAX];
    unsigned nroles;
    unsigned char role_of[AC__OPS];
    /* Seeded mode (explore.c); NULL in every other. Read only on the
     * slow paths: deterministic mode's run loop and send_env's slow copy. */
    struct ac__explore *seeded;
};

/* A thread's context for the runtime it last used. */
typedef struct ac__tls_state {
    uint64_t rt_id;
    ac_ctx *cx;
} ac__tls_state;
/* AC_SEED as a seed: 0 when unset, UINT64_MAX when malformed. */
uint64_t ac__env_seed(void);
ac__tls_state ac__tls_get(void);
void ac__tls_restore(ac__tls_state s);
void ac__tls_set(ac_runtime *rt, ac_ctx *cx);

void ac__ctx_init(ac_ctx *cx, ac_runtime *rt, ac__worker *w);
/* A send to another node's address: true when the transport took it
 * (transport.c). */
bool ac__transport_forward(ac_ctx *cx, const ac_addr *to, const ac_actor_type *type, ac__env *e,
                           int *rc);
void ac__ctx_fini(ac_ctx *cx);

#endif /* AC_CORE_RUNTIME_H */
