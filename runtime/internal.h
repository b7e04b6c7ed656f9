/*
 * internal.h — the runtime's private structures, shared by the files of runtime/.
 *
 * Ownership in one paragraph: an actor is owned by whoever runs it. It is
 * runnable exactly when its mailbox is marked non-empty, and the sender whose
 * push made the mailbox non-empty is the one that schedules it (mailbox.c).
 * Senders reach actors through the routing table without locks; an actor
 * that dies is unlinked from the table and freed only after a grace period
 * (qsbr.c), by a last "finalize" envelope pushed through its own mailbox, so
 * the scheduler's single-owner rule also covers its destruction.
 */
#ifndef AC_INTERNAL_H
#define AC_INTERNAL_H

#include "actorc.h"
#include "table.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define AC__CACHE_LINE 64

/* ---- store-load barriers ("publish, then look") ---------------------------
 *
 * The parking protocol (sched.c) and the reclamation protocol (qsbr.c) are
 * Dekker pairs: each side publishes a store, then reads what the other side
 * published, and at least one of them must see the other. Normally a seq_cst
 * fence between the two steps does it. ThreadSanitizer does not model fences
 * (gcc refuses to compile them), so under it every barrier becomes a no-op
 * and every announcement and observation a seq_cst read-modify-write on the
 * shared word: two RMWs on one word are ordered, and whichever comes second
 * reads from the first, which gives the same guarantee in terms TSan sees. */
#if defined(__SANITIZE_THREAD__)
#define AC__TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define AC__TSAN 1
#endif
#endif

static inline void ac__barrier(void)
{
#ifndef AC__TSAN
    atomic_thread_fence(memory_order_seq_cst);
#endif
}

/* Stores v, then orders the store before the caller's later loads. */
static inline void ac__announce_u64(_Atomic uint64_t *p, uint64_t v)
{
#ifdef AC__TSAN
    atomic_exchange_explicit(p, v, memory_order_seq_cst);
#else
    atomic_store_explicit(p, v, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
#endif
}

/* Reads *p after an ac__barrier() (acquire: see qsbr.c). */
static inline uint64_t ac__observe_u64(_Atomic uint64_t *p)
{
#ifdef AC__TSAN
    return atomic_fetch_add_explicit(p, 0, memory_order_seq_cst);
#else
    return atomic_load_explicit(p, memory_order_acquire);
#endif
}

static inline uint32_t ac__observe_u32(_Atomic uint32_t *p)
{
#ifdef AC__TSAN
    return atomic_fetch_add_explicit(p, 0, memory_order_seq_cst);
#else
    return atomic_load_explicit(p, memory_order_relaxed);
#endif
}

/* ---- envelopes (runtime view of ac_envelope) ----------------------------- */

typedef struct ac__env {
    _Atomic(struct ac__env *) next;
    uint32_t tag;
    uint16_t klass;
    uint16_t flags;
} ac__env;

_Static_assert(sizeof(ac__env) == sizeof(ac_envelope), "envelope views differ");
_Static_assert(sizeof(ac__env) == AC_ENVELOPE_HEADER_SIZE, "header size");
_Static_assert(offsetof(ac__env, tag) == offsetof(ac_envelope, tag), "tag offset");
_Static_assert(offsetof(ac__env, klass) == offsetof(ac_envelope, ac_class), "class");
_Static_assert(sizeof(_Atomic(ac__env *)) == sizeof(void *), "atomic pointer size");

static inline ac__env *ac__env_of(ac_envelope *e) { return (ac__env *)(void *)e; }
static inline ac_envelope *ac__env_pub(ac__env *e) { return (ac_envelope *)(void *)e; }

/* System tags live at the top of the tag space; generated tags start at 0. */
#define AC__TAG_STOP 0xFFFFFFF0u
#define AC__TAG_FINALIZE 0xFFFFFFF1u
#define AC__TAG_KILL 0xFFFFFFF2u     /* wakes a killed actor (ac_kill) */

/* ---- envelope pools (pool.c) ---------------------------------------------- */

/* Size classes: 32-byte steps to 256 B, then about a half step each to
 * 16 KiB (pool.c). Envelopes and actor blocks share them. */
#define AC__POOL_CLASSES 20
#define AC__CLASS_HUGE 0xFFFEu      /* malloc'd directly */

/* A free block: the first word links it into a free list. */
typedef struct ac__block {
    struct ac__block *next;
} ac__block;

typedef struct ac__pool {
    ac__block *free[AC__POOL_CLASSES];
    uint32_t count[AC__POOL_CLASSES];
} ac__pool;

/* Where contexts hand surplus blocks, in batches, and fetch them back. */
typedef struct ac__depot {
    pthread_mutex_t lock;
    ac__block *batches[AC__POOL_CLASSES];  /* see pool.c */
    ac__block *slabs;                      /* every slab, freed at the end */
} ac__depot;

/* ---- per-context counters ------------------------------------------------- */

/* Written only by the owning thread, read by ac_runtime_stats from any
 * thread: relaxed atomics, and increments are load+store, not RMW. */
typedef struct ac__counters {
    _Atomic uint64_t messages, sends, dead_letters, spawned, stopped, failed,
        steals, parks, pool_misses, mailbox_drops, killed, unhandled;
} ac__counters;

#define AC__COUNT(cx, field, n)                                               \
    atomic_store_explicit(&(cx)->stats.field,                                 \
                          atomic_load_explicit(&(cx)->stats.field,            \
                                               memory_order_relaxed) + (n),   \
                          memory_order_relaxed)

/* ---- address stream (addr.c) ---------------------------------------------- */

typedef struct ac__addr_stream {
    uint8_t key[32];
    uint64_t nonce;
    uint32_t pos;
    uint8_t buf[1024];
} ac__addr_stream;

/* ---- actors ---------------------------------------------------------------- */

/* Flags change while the actor lives: its owner sets most of them, other
 * threads set KILLED and read DEAD (services.c), hence atomic. */
enum {
    AC__ACTOR_DEAD = 1u << 0,           /* stopped or failed; draining */
    AC__ACTOR_STOP_REQUESTED = 1u << 1, /* ac_stop_self in this handler */
    AC__ACTOR_FAIL_REQUESTED = 1u << 2, /* ac_fail in this handler */
    AC__ACTOR_KILLED = 1u << 3,         /* ac_kill: die before the next message */
    AC__ACTOR_TRAP_EXITS = 1u << 4      /* linked deaths arrive as messages */
};

/* Attributes are fixed before the actor is published and never change. */
enum {
    AC__ATTR_BOUNDED = 1u << 0,         /* an ac__bound precedes the block */
    AC__ATTR_INBOX = 1u << 1            /* a thread's inbox (inbox.c) */
};

/* Envelope flags (ac__env.flags). */
enum {
    AC__ENV_BOUNDED = 1u << 0           /* counted in its target's bound */
};

/* An actor's control block, followed by its state in the same block. Every
 * byte counts (an idle actor should cost at most 128 bytes with its table
 * slot): what only a dead actor needs lives in its finalize envelope
 * (qsbr.c), what only some actors need sits in front of the block
 * (ac__bound) or in the services' own tables, and the mailbox's initial
 * node is just a link. */
typedef struct ac__actor {
    _Atomic(ac__env *) head;        /* mailbox: producers exchange here */
    ac__env *tail;                  /* mailbox: consumer side */
    const ac_actor_type *type;
    struct ac__actor *next_runnable; /* injection queue link */
    _Atomic uint8_t flags;
    uint8_t attrs;
    uint16_t klass;                 /* pool class of this block */
    int exit_code;
    /* The mailbox's initial node: only its link is ever used (mailbox.c). */
    _Atomic(ac__env *) stub;
    ac_addr addr;
    alignas(16) unsigned char state[];
} ac__actor;

_Static_assert(offsetof(ac__env, next) == 0, "the stub is an envelope's link");
_Static_assert(offsetof(ac__actor, state) == 80, "control block size");

/* A bounded mailbox's counters, just in front of its actor's block. */
typedef struct ac__bound {
    _Atomic uint32_t len;   /* admitted messages not yet handled or shed */
    _Atomic uint32_t shed;  /* drop-oldest: how many to drop at the head */
    uint32_t limit;
    uint32_t overflow;      /* ac_overflow */
} ac__bound;

_Static_assert(sizeof(ac__bound) == 16, "keeps the block 16-byte aligned");

static inline ac__bound *ac__bound_of(ac__actor *a)
{
    return (ac__bound *)(void *)((unsigned char *)a - sizeof(ac__bound));
}

static inline unsigned ac__flags(ac__actor *a)
{
    /* Relaxed: the owner reads its own writes; a KILLED set by another
     * thread is also announced by a message (actor.c), which orders it. */
    return atomic_load_explicit(&a->flags, memory_order_relaxed);
}

static inline void ac__set_flags(ac__actor *a, unsigned f)
{
    /* Relaxed: see ac__flags. DEAD is set with seq_cst in actor.c. */
    atomic_fetch_or_explicit(&a->flags, (uint8_t)f, memory_order_relaxed);
}

static inline ac__env *ac__stub_of(ac__actor *a)
{
    return (ac__env *)(void *)&a->stub;
}

/* ---- work-stealing deque (deque.c) ----------------------------------------- */

typedef struct ac__deque_array {
    struct ac__deque_array *older;  /* kept until the deque is destroyed */
    int64_t size;                   /* a power of two */
    _Atomic(ac__actor *) slots[];
} ac__deque_array;

typedef struct ac__deque {
    alignas(AC__CACHE_LINE) _Atomic int64_t top;
    alignas(AC__CACHE_LINE) _Atomic int64_t bottom;
    _Atomic(ac__deque_array *) array;
} ac__deque;

int ac__deque_init(ac__deque *d, int64_t size);
void ac__deque_destroy(ac__deque *d);
int ac__deque_push(ac__deque *d, ac__actor *a);       /* owner only */
ac__actor *ac__deque_pop(ac__deque *d);               /* owner only: newest */
ac__actor *ac__deque_steal(ac__deque *d);             /* anyone: oldest */
int64_t ac__deque_size(ac__deque *d);                 /* approximate */

/* ---- routing table (route.c) ---------------------------------------------- */

/* A slot is one word: the actor's address in the low 48 bits (user-space
 * pointers fit), 16 bits of the hash above it to skip most mismatches
 * without touching the actor, or 0 (empty) or 1 (tombstone). */
typedef struct ac__route_array {
    struct ac__route_array *older;  /* outgrown arrays, newest first */
    uint64_t free_after;            /* once outgrown: its grace-period target */
    size_t mask;
    _Atomic uintptr_t slots[];
} ac__route_array;

/* The table's hash of an address; NULL means the identity hash. */
typedef uint64_t (*ac__route_hash_fn)(const ac_addr *addr, const void *key);

/* One of the table's independent parts: writers of different shards never
 * contend (spawns and deaths on all workers at once). */
typedef struct ac__route_shard {
    alignas(AC__CACHE_LINE) _Atomic(ac__route_array *) array;
    _Atomic uint32_t lock;          /* spin lock: serialises this shard's writers */
    size_t live, used;              /* under lock; used counts tombstones */
} ac__route_shard;

#define AC__ROUTE_SHARD_BITS 6

typedef struct ac__route {
    alignas(AC__CACHE_LINE) ac__route_shard shards[1u << AC__ROUTE_SHARD_BITS];
    ac__route_hash_fn hash;         /* NULL: identity (the runtime's) */
    const void *hash_key;
    _Atomic uint64_t *gp;           /* the runtime's grace-period counter */
    _Atomic bool has_outgrown;      /* some shard keeps an outgrown array */
    _Atomic uint64_t next_due;      /* no outgrown array is due before it */
} ac__route;

/* `gp` may be NULL: outgrown arrays are then kept until destroy. */
int ac__route_init(ac__route *r, size_t capacity, _Atomic uint64_t *gp);
/* Frees the outgrown arrays whose grace period ends at or before `oldest`
 * (qsbr.c computes it). */
void ac__route_reclaim(ac__route *r, uint64_t oldest);
void ac__route_destroy(ac__route *r);
ac__actor *ac__route_lookup(ac__route *r, const ac_addr *addr);
int ac__route_insert(ac__route *r, ac__actor *a);
/* bench/route.c keys a table with SipHash to compare: set the hash before
 * the first insert, and look up with the hash computed by the caller. The
 * runtime always uses the identity hash. */
void ac__route_set_hash(ac__route *r, ac__route_hash_fn fn, const void *key);
ac__actor *ac__route_lookup_hashed(ac__route *r, const ac_addr *addr, uint64_t h);
void ac__route_remove(ac__route *r, ac__actor *a);
/* Calls fn on every live actor, holding the writer lock. */
void ac__route_each(ac__route *r, void (*fn)(ac__actor *, void *), void *arg);
/* Slots in all the shards' current arrays (for bench/route.c). */
size_t ac__route_capacity(ac__route *r);

/* amap.c — the services' side tables: intrusive nodes keyed by an address
 * and a 64-bit discriminator, several nodes per key allowed, on the
 * chained table of table.h. Unlocked: each service holds its own lock
 * around its maps. */
typedef struct ac__amap_node {
    ac__tnode link;                  /* in the table; link.hash is the key's */
    uint64_t extra;
    ac_addr key;
    struct ac__amap_node *next;      /* the list ac__amap_take returns */
} ac__amap_node;

typedef struct ac__amap {
    ac__table table;
} ac__amap;

/* Makes the bucket array up front, so that adding never fails. */
int ac__amap_init(ac__amap *m);
void ac__amap_destroy(ac__amap *m);         /* the nodes are the caller's */
void ac__amap_add(ac__amap *m, ac__amap_node *x);
ac__amap_node *ac__amap_find(ac__amap *m, const ac_addr *key, uint64_t extra);
ac__amap_node *ac__amap_find_next(ac__amap_node *x);  /* same key, after x */
void ac__amap_remove(ac__amap *m, ac__amap_node *x);
/* Unlinks every node with this key; returns them linked through `next`. */
ac__amap_node *ac__amap_take(ac__amap *m, const ac_addr *key, uint64_t extra);
/* Calls fn on every node; fn may free the node (tearing down). */
void ac__amap_each(ac__amap *m, void (*fn)(ac__amap_node *, void *), void *arg);

#define AC__CONTAINER_OF(p, T, member) ((T *)(void *)((char *)(p) - offsetof(T, member)))

/* ---- contexts and workers --------------------------------------------------- */

typedef struct ac__worker ac__worker;

struct ac_ctx {
    ac_runtime *rt;
    ac__actor *current;             /* the actor whose handler is running */
    ac__worker *worker;             /* NULL for threads that are not workers */
    ac__pool pool;
    ac__addr_stream addrs;
    /* QSBR: 0 while offline, else the grace-period counter last observed. */
    alignas(AC__CACHE_LINE) _Atomic uint64_t qs_seen;
    /* Finalize envelopes of dead actors awaiting their grace period, oldest
     * first: targets only grow, so reaping stops at the first not yet due. */
    ac__env *retired, *retired_tail;
    unsigned depth;                 /* external contexts: nested runtime calls */
    struct ac_inbox *ask_inbox;     /* ask.c: this thread's ac_ask_wait inbox */
    uint64_t ask_seq;               /* ask.c: its last ask id */
    ac__counters stats;
    pthread_t thread;               /* external contexts: the owning thread */
    struct ac_ctx *next_external;
};

struct ac__worker {
    ac_ctx cx;
    ac__deque deque;
    ac__actor *lifo;                /* the LIFO slot: runs next, for locality */
    ac__actor *drained;             /* owned, mailbox empty, not yet released */
    unsigned lifo_streak;
    unsigned fresh;                 /* woken actors at the deque's bottom */
    unsigned since_oldest;          /* turns since the deque's top was served */
    uint32_t tick;
    uint64_t rng;
    bool searching;
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

struct ac_runtime {
    uint64_t id;                    /* unique per process, for the TLS cache */
    ac_config cfg;
    unsigned nworkers;              /* threads; 0 in deterministic mode */
    ac__worker *workers;            /* nworkers, or 1 driven by the caller */
    unsigned nslots;                /* entries in workers[] */
    ac__route route;
    ac__depot depot;

    alignas(AC__CACHE_LINE) _Atomic uint32_t idle;
    pthread_mutex_t sleep_lock;     /* guards sleepers */
    ac__worker *sleepers;
    _Atomic bool exiting;           /* workers leave their loop */

    alignas(AC__CACHE_LINE) _Atomic uint64_t gp;  /* QSBR grace-period counter */

    pthread_mutex_t inject_lock;    /* the global injection queue */
    ac__actor *inject_head, *inject_tail;
    _Atomic size_t inject_len;

    pthread_mutex_t orphan_lock;    /* retire lists of parked workers */
    ac__env *orphans;
    _Atomic bool has_orphans;

    pthread_mutex_t quiet_lock;     /* ac_runtime_run waits here */
    pthread_cond_t quiet_cond;

    pthread_mutex_t ext_lock;       /* contexts of non-worker threads */
    ac_ctx *externals;

    _Atomic bool closing;           /* no more sends from outside actors */
    /* Set once any service keeps per-actor state (services.c). */
    alignas(AC__CACHE_LINE) _Atomic bool services_used;
    ac_dead_letter_fn dead_letter_fn;
    void *dead_letter_arg;

    pthread_mutex_t monitor_lock;   /* monitor.c */
    ac__amap mon_by_target, mon_by_watcher, mon_by_ref;
    uint64_t next_ref;
    pthread_mutex_t link_lock;      /* link.c */
    ac__amap links;
    /* names.c, groups.c, router.c: each its own lock and tables */
    struct ac__names *names;
    struct ac__groups *groups;
    struct ac__routers *routers;
    _Atomic(struct ac__timers *) timers;  /* timer.c, made on first use */
    _Atomic(struct ac__asks *) asks;      /* ask.c, made on first use */
    _Atomic bool stopping;          /* no more spawns */
    bool shut_down;
};

/* ---- cross-file internals ---------------------------------------------------- */

/* mailbox.c */
void ac__mailbox_init(ac__actor *a, bool owned);
bool ac__mailbox_push(ac__actor *a, ac__env *e);   /* true: was empty */
ac__env *ac__mailbox_pop(ac_ctx *cx, ac__actor *a);
bool ac__mailbox_mark_empty(ac__actor *a);
bool ac__mailbox_has_next(ac__actor *a);

/* pool.c */
ac__env *ac__pool_alloc(ac_ctx *cx, size_t payload_size);
void ac__pool_free(ac_ctx *cx, ac__env *e);
/* Raw blocks of `size` bytes (16-byte aligned); *klass says how to free. */
void *ac__block_alloc(ac_ctx *cx, size_t size, uint16_t *klass);
void ac__block_free(ac_ctx *cx, void *p, uint16_t klass);
void ac__pool_release(ac__pool *p);
int ac__depot_init(ac__depot *d);
void ac__depot_destroy(ac__depot *d);

/* addr.c */
void ac__addr_stream_init(ac__addr_stream *s);
void ac__addr_next(ac__addr_stream *s, ac_addr *out);

/* qsbr.c */
void ac__qsbr_online(ac_ctx *cx);
void ac__qsbr_offline(ac_ctx *cx);
void ac__qsbr_quiescent(ac_ctx *cx);
bool ac__qsbr_retire(ac_ctx *cx, ac__actor *a);
void ac__qsbr_poll(ac_ctx *cx);
bool ac__qsbr_finalize_orphans(ac_ctx *cx);
void ac__qsbr_orphan(ac_ctx *cx);
void ac__qsbr_reclaim_tables(ac_ctx *cx);
bool ac__qsbr_all_offline_externals(ac_runtime *rt);
/* Waits until every reader online now has passed a quiescent state. The
 * caller must be offline (an external thread outside any runtime call). */
void ac__qsbr_synchronize(ac_ctx *cx);

/* sched.c */
void ac__schedule(ac_ctx *cx, ac__actor *a);
void ac__notify_work(ac_runtime *rt);
int ac__workers_start(ac_runtime *rt);
void ac__workers_stop(ac_runtime *rt);
unsigned ac__run_here(ac_runtime *rt, bool one_turn);
bool ac__quiescent(ac_runtime *rt);

/* actor.c */
void ac__enter(ac_ctx *cx);
void ac__leave(ac_ctx *cx);
/* How a turn ended: the actor is still owned by the caller unless FREED. */
typedef enum ac__turn {
    AC__TURN_MORE,     /* the batch ran out: run it again, after the others */
    AC__TURN_DRAINED,  /* its mailbox looked empty: ac__turn_release it */
    AC__TURN_FREED     /* it got its finalize envelope and is gone */
} ac__turn;
ac__turn ac__actor_turn(ac_ctx *cx, ac__actor *a, unsigned batch, unsigned *handled);
/* Gives up a drained actor: true if it is now unscheduled, false if a
 * message arrived and the caller must keep running it. */
bool ac__turn_release(ac__actor *a);
/* A zeroed actor block of `type` with `attrs` (AC__ATTR_*), its mailbox
 * not yet initialised; ac__actor_free gives it back. */
ac__actor *ac__actor_new(ac_ctx *cx, const ac_actor_type *type, unsigned attrs);
void ac__actor_free(ac_ctx *cx, ac__actor *a);
int ac__deliver(ac_ctx *cx, ac__actor *a, ac__env *e);
/* A runtime message with this system tag and payload size, flags clear
 * (NULL when out of memory); ac__stop_envelope is the stop one. */
ac__env *ac__system_envelope(ac_ctx *cx, uint32_t tag, size_t size);
/* A system envelope asking its actor to stop (NULL when out of memory). */
ac__env *ac__stop_envelope(ac_ctx *cx);
/* Sends a runtime message (AC_TAG_DOWN, AC_TAG_EXIT, AC_TAG_REPLY, stop):
 * allowed during shutdown, outside any mailbox bound, and not counted as a
 * dead letter when nobody is there. Consumes e. */
int ac__send_system(ac_ctx *cx, const ac_addr *to, ac__env *e);
/* Counts a message that reached no handler and shows it to the dead-letter
 * hook; the caller frees it. */
void ac__dead_letter(ac_ctx *cx, const ac_addr *to, ac__env *e, int reason);
/* Ends `a` (not running) from outside: killed (ac_kill) or by a link. */
int ac__kill(ac_ctx *cx, ac__actor *a, int reason, int code);

/* Spawns an actor; at `addr` when given (a supervisor restarting a child
 * under the address it had), else at a fresh random one. */
int ac__spawn_actor(ac_ctx *cx, const ac_actor_type *type, const void *args,
                    const ac_spawn_options *opts, const ac_addr *addr, ac_addr *out);

/* inbox.c: a push found an inbox's mailbox empty: wake its thread. */
void ac__inbox_wake(ac_ctx *cx, ac__actor *a);


/* supervisor.c: a supervisor died (any reason): end its children. */
extern const ac_actor_type ac__supervisor_type;
void ac__supervisor_died(ac_ctx *cx, ac__actor *a, int reason);

/* monitor.c and link.c */
int ac__monitors_init(ac_runtime *rt);
void ac__monitors_fini(ac_runtime *rt);
int ac__links_init(ac_runtime *rt);
void ac__links_fini(ac_runtime *rt);
void ac__monitors_died(ac_ctx *cx, ac__actor *a, int reason, int code);
int ac__link_new(ac_ctx *cx, ac__actor *a, const ac_addr *other);
void ac__links_died(ac_ctx *cx, ac__actor *a, int reason, int code);

/* names.c, groups.c, router.c. The init functions leave a runtime that the
 * fini functions can tear down even when they fail. */
int ac__names_init(ac_runtime *rt);
void ac__names_fini(ac_runtime *rt);
int ac__groups_init(ac_runtime *rt);
void ac__groups_fini(ac_runtime *rt);
int ac__routers_init(ac_runtime *rt);
void ac__routers_fini(ac_runtime *rt);
/* Spawn-time registration (ac_spawn_options.name), before the actor is
 * published: AC_EEXIST if taken, AC_EINVAL for a bad name. Release undoes
 * a claim whose spawn failed before the actor existed. */
int ac__names_claim(ac_ctx *cx, const char *name, ac__actor *a);
void ac__names_release(ac_ctx *cx, const char *name, ac__actor *a);
void ac__names_died(ac_ctx *cx, ac__actor *a);
void ac__groups_died(ac_ctx *cx, ac__actor *a);
void ac__routers_died(ac_ctx *cx, ac__actor *a);

/* timer.c: the runtime's timers (made on first use). A death cancels the
 * dead actor's timers; shutdown cancels every timer and joins the timer
 * thread before anything else; destroy frees what is left. */
typedef struct ac__timers ac__timers;
void ac__timers_died(ac_ctx *cx, ac__actor *a);
/* ac_timer_after for a runtime message (a timed-out reply, ask.c): sent
 * with ac__send_system when due. Consumes e. */
int ac__timer_after_system(ac_ctx *cx, const ac_addr *to, uint32_t ms, ac__env *e,
                           ac_timer_id *id);
/* Milliseconds on the runtime's clock: monotonic, or in deterministic mode
 * the ticks ac_runtime_advance has counted (supervisors' restart intensity). */
uint64_t ac__clock_ms(ac_runtime *rt);
void ac__timers_shutdown(ac_runtime *rt, ac_ctx *cx);
void ac__timers_free(ac_runtime *rt);

/* ask.c: a reply reached actor `a` (dispatch_system); its pending asks
 * die with it; destroy frees the threads' ask inboxes and the rest. */
int ac__asks_deliver(ac_ctx *cx, ac__actor *a, ac__env *e);
void ac__asks_died(ac_ctx *cx, ac__actor *a);
void ac__asks_free(ac_runtime *rt);

/* services.c — the per-actor state of names, groups, monitors, links,
 * timers, asks and supervisors, and its cleanup when the actor dies.
 *
 * A service that records something about a live actor calls
 * ac__service_target under its own lock, online (between ac__enter and
 * ac__leave): it returns the actor, or NULL when it is gone or dying. The
 * actor's death sets DEAD, then calls ac__services_died, which takes each
 * service's lock: so a record is either made before the cleanup runs (and
 * found by it) or refused. */
ac__actor *ac__service_target(ac_ctx *cx, const ac_addr *addr);
/* The same for an actor the caller already holds (its own self). */
bool ac__service_alive(ac_ctx *cx, ac__actor *a);
void ac__services_died(ac_ctx *cx, ac__actor *a, int reason, int code);

/* runtime.c */
typedef struct ac__tls_state {
    uint64_t rt_id;
    ac_ctx *cx;
} ac__tls_state;
ac__tls_state ac__tls_get(void);
void ac__tls_restore(ac__tls_state s);
void ac__tls_set(ac_runtime *rt, ac_ctx *cx);
void ac__ctx_init(ac_ctx *cx, ac_runtime *rt, ac__worker *w);
void ac__ctx_fini(ac_ctx *cx);

#endif /* AC_INTERNAL_H */
