/*
 * runtime.c — creating, running, shutting down and destroying a runtime,
 * and the contexts of the threads that use it.
 */
#include "explore.h"
#include "runtime.h"

#include "actor.h"
#include "mute.h"
#include "observe.h"
#include "qsbr.h"
#include "sched.h"
#include "service.h"
#include "stash.h"
#include "trace.h"
#include "typestats.h"

#include <inttypes.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_BATCH 64
#define INITIAL_DEQUE 256
#define INITIAL_ROUTE 1024
/* The most events a trace ring may keep: 40 bytes each, per thread. */
#define MAX_TRACE_EVENTS (1u << 24)

/* A thread's context for the runtime it last used. Keyed by the runtime's
 * id, not its pointer: a runtime allocated where a destroyed one was must
 * not find the old context. */
static _Thread_local ac__tls_state tls;
static _Atomic uint64_t next_runtime_id = 1;

ac__tls_state ac__tls_get(void) { return tls; }
void ac__tls_restore(ac__tls_state s) { tls = s; }

void ac__tls_set(ac_runtime *rt, ac_ctx *cx)
{
    tls.rt_id = rt ? rt->id : 0;
    tls.cx = cx;
}

/* A count from the environment: 0 when unset; a malformed one becomes
 * UINT32_MAX, which ac_runtime_create refuses (AC_EINVAL), as AC_WORKERS. */
static uint32_t env_count(const char *name)
{
    const char *env = getenv(name);
    if (env == NULL || *env == '\0')
        return 0;
    char *end;
    unsigned long n = strtoul(env, &end, 10);
    return (*end == '\0' && n > 0 && n < UINT32_MAX) ? (uint32_t)n : UINT32_MAX;
}

void ac_config_init(ac_config *cfg)
{
    if (cfg == NULL)
        return;
    cfg->workers = AC_WORKERS_AUTO;
    cfg->batch = 0;
    cfg->shutdown_ms = AC_SHUTDOWN_MS;
    const char *env = getenv("AC_WORKERS");
    if (env && *env) {
        char *end;
        long n = strtol(env, &end, 10);
        /* A malformed value makes ac_runtime_create fail with AC_EINVAL
         * rather than silently run with a guess. */
        cfg->workers = (*end == '\0' && n >= 0 && n <= AC_MAX_WORKERS) ? (int)n : -2;
    }
    cfg->trace_path = NULL;
    cfg->trace_events = 0;
    cfg->trace_flow_every = 0;
    env = getenv("AC_TRACE");
    if (env && *env)
        cfg->trace_path = env;
    cfg->trace_events = env_count("AC_TRACE_EVENTS");
    cfg->trace_flow_every = env_count("AC_TRACE_FLOW_EVERY");
    env = getenv("AC_STATS");
    cfg->type_stats = env != NULL && strcmp(env, "1") == 0;
    cfg->seed = ac__env_seed();
    cfg->strategy = AC_SCHEDULE_RANDOM;
    cfg->pct_depth = 0;
    cfg->pct_steps = 0;
}

uint64_t ac__env_seed(void)
{
    const char *env = getenv("AC_SEED");
    if (env == NULL || *env == '\0')
        return 0;
    char *end;
    unsigned long long n = strtoull(env, &end, 10);
    /* Malformed: UINT64_MAX, which no loop of ac_explore reaches by
     * chance, rather than 0, which would silently run unseeded. */
    return *end == '\0' ? (uint64_t)n : UINT64_MAX;
}

void ac__ctx_init(ac_ctx *cx, ac_runtime *rt, ac__worker *w)
{
    memset(cx, 0, sizeof *cx);
    cx->rt = rt;
    cx->worker = w;
    cx->observe = rt->observe;
    ac__trace_ctx_init(cx);
    ac__typestats_ctx_init(cx);
    /* Seeded mode holds every send in flight, on the slow copy. */
    cx->send_slow = w == NULL || (cx->observe & AC__OBS_TRACE) || rt->seeded != NULL;
    ac__addr_stream_init(&cx->addrs, rt->node);
    atomic_init(&cx->qs_seen, 0);
#define ZERO(f) atomic_init(&cx->stats.f, 0)
    ZERO(messages); ZERO(sends); ZERO(dead_letters); ZERO(spawned); ZERO(stopped);
    ZERO(failed); ZERO(steals); ZERO(parks); ZERO(pool_misses); ZERO(mailbox_drops);
    ZERO(killed); ZERO(unhandled); ZERO(refused); ZERO(system_messages);
    ZERO(handoffs); ZERO(wakeups); ZERO(idle_wakeups); ZERO(spins); ZERO(muted);
#undef ZERO
}

void ac__ctx_fini(ac_ctx *cx)
{
    ac__pool_release(&cx->pool);
    ac__trace_ctx_fini(cx);
    ac__typestats_ctx_fini(cx);
    sodium_memzero(cx->addrs.key, sizeof cx->addrs.key);
}

static unsigned online_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        return 1;
    return n > AC_MAX_WORKERS ? AC_MAX_WORKERS : (unsigned)n;
}

static void free_runtime(ac_runtime *rt)
{
    /* Messages still in flight go back to a pool before the pools go. */
    ac__explore_free(&rt->workers[0].cx, rt->seeded);
    for (unsigned i = 0; i < rt->nslots; i++) {
        ac__ctx_fini(&rt->workers[i].cx);
        ac__deque_destroy(&rt->workers[i].deque);
    }
    ac_ctx *e = rt->externals;
    while (e) {
        ac_ctx *next = e->next_external;
        ac__ctx_fini(e);
        free(e);
        e = next;
    }
    ac__services_fini(rt);
    ac__stash_fini(rt);
    ac__mute_fini(rt);
    ac__route_destroy(&rt->route);
    ac__depot_destroy(&rt->depot);
    pthread_mutex_destroy(&rt->sleep_lock);
    pthread_mutex_destroy(&rt->inject_lock);
    pthread_mutex_destroy(&rt->orphan_lock);
    pthread_mutex_destroy(&rt->quiet_lock);
    pthread_cond_destroy(&rt->quiet_cond);
    pthread_mutex_destroy(&rt->ext_lock);
    free(rt->workers);
    free(rt->trace_path);
    free(rt);
}

int ac_runtime_create(ac_runtime **out, const ac_config *cfg)
{
    if (out == NULL)
        return AC_EINVAL;
    *out = NULL;
    ac_config c;
    if (cfg)
        c = *cfg;
    else
        ac_config_init(&c);
    if (c.workers == AC_WORKERS_AUTO)
        c.workers = (int)online_cores();
    if (c.seed == UINT64_MAX ||
        (c.strategy != AC_SCHEDULE_RANDOM && c.strategy != AC_SCHEDULE_PCT) ||
        c.pct_depth > AC_PCT_MAX_DEPTH)
        return AC_EINVAL;  /* a malformed AC_SEED among them */
    if (c.workers < 0 || c.workers > AC_MAX_WORKERS)
        return AC_EINVAL;
    if (c.batch == 0)
        c.batch = DEFAULT_BATCH;
    if (c.shutdown_ms == 0)
        c.shutdown_ms = AC_SHUTDOWN_MS;
    if (c.trace_events == 0)
        c.trace_events = AC_TRACE_EVENTS;
    if (c.trace_flow_every == 0)
        c.trace_flow_every = AC_TRACE_FLOW_EVERY;
    if (c.trace_events > MAX_TRACE_EVENTS || c.trace_flow_every == UINT32_MAX)
        return AC_EINVAL;
    if (sodium_init() < 0)
        return AC_ENOMEM;

    ac_runtime *rt = calloc(1, sizeof *rt);
    if (rt == NULL)
        return AC_ENOMEM;
    rt->id = atomic_fetch_add_explicit(&next_runtime_id, 1, memory_order_relaxed);
    do
        randombytes_buf(&rt->node, sizeof rt->node);
    while (rt->node == 0);  /* 0 is no node: the nil address's */
    if (c.trace_path != NULL && (rt->trace_path = strdup(c.trace_path)) == NULL) {
        free(rt);
        return AC_ENOMEM;
    }
    c.trace_path = rt->trace_path;  /* the caller's string need not outlive us */
    rt->cfg = c;
    rt->observe = (c.trace_path ? AC__OBS_TRACE : 0) | (c.type_stats ? AC__OBS_TYPES : 0);
    rt->trace_events = c.trace_events;
    rt->trace_flow_every = c.trace_flow_every;
    rt->trace_t0 = ac__now_ns();
    rt->failure_fn = ac_failure_print;
    rt->nworkers = (unsigned)c.workers;
    rt->nslots = rt->nworkers ? rt->nworkers : 1;
    rt->workers = aligned_alloc(AC__CACHE_LINE, rt->nslots * sizeof *rt->workers);
    /* Before any context is made: they read it (ac__ctx_init). */
    bool seeded_ok = c.workers != 0 || c.seed == 0 ||
                     (rt->seeded = ac__explore_new(&rt->cfg)) != NULL;
    if (!seeded_ok || rt->workers == NULL ||
        ac__route_init(&rt->route, INITIAL_ROUTE, &rt->gp) != 0) {
        ac__explore_free(NULL, rt->seeded);
        free(rt->workers);
        free(rt->trace_path);
        free(rt);
        return AC_ENOMEM;
    }
    /* The stashes' and the services' state: on failure the runtime is
     * torn down whole below (the fini functions free what was made). */
    int stash_rc = ac__stash_init(rt);
    int services_rc = ac__services_init(rt);
    if (services_rc == 0)
        services_rc = stash_rc;
    memset(rt->workers, 0, rt->nslots * sizeof *rt->workers);
    ac__depot_init(&rt->depot);
    ac__mute_init(rt);  /* after rt->seeded: seeded mode does not mute */
    pthread_mutex_init(&rt->sleep_lock, NULL);
    pthread_mutex_init(&rt->inject_lock, NULL);
    pthread_mutex_init(&rt->orphan_lock, NULL);
    pthread_mutex_init(&rt->quiet_lock, NULL);
    /* The monotonic clock: a shutdown's deadline (wait_quiet) must not
     * move with the wall clock. */
    pthread_condattr_t quiet_attr;
    pthread_condattr_init(&quiet_attr);
    pthread_condattr_setclock(&quiet_attr, CLOCK_MONOTONIC);
    pthread_cond_init(&rt->quiet_cond, &quiet_attr);
    pthread_condattr_destroy(&quiet_attr);
    pthread_mutex_init(&rt->ext_lock, NULL);
    atomic_init(&rt->idle, 0);
    atomic_init(&rt->exiting, false);
    atomic_init(&rt->gp, 1);
    atomic_init(&rt->inject_in, NULL);
    atomic_init(&rt->inject_out, NULL);
    atomic_init(&rt->has_orphans, false);
    atomic_init(&rt->closing, false);
    atomic_init(&rt->stopping, false);
    atomic_init(&rt->services_used, false);

    int rc = services_rc;
    for (unsigned i = 0; i < rt->nslots; i++) {
        ac__worker *w = &rt->workers[i];
        ac__ctx_init(&w->cx, rt, w);
        randombytes_buf(&w->rng, sizeof w->rng);
        w->rng |= 1;  /* xorshift must not start at zero */
        atomic_init(&w->park_state, AC__RUNNING);
        if (ac__deque_init(&w->deque, INITIAL_DEQUE) != 0)
            rc = AC_ENOMEM;
    }
    if (rc == 0)
        rc = ac__workers_start(rt);
    if (rc != 0) {
        ac__workers_stop(rt);
        free_runtime(rt);
        return rc;
    }
    *out = rt;
    return 0;
}

unsigned ac_runtime_workers(const ac_runtime *rt)
{
    return rt ? rt->nworkers : 0;
}

uint64_t ac_runtime_node(const ac_runtime *rt)
{
    return rt ? rt->node : 0;
}

ac_ctx *ac_runtime_ctx(ac_runtime *rt)
{
    if (rt == NULL)
        return NULL;
    if (tls.rt_id == rt->id)
        return tls.cx;
    pthread_t self = pthread_self();
    pthread_mutex_lock(&rt->ext_lock);
    ac_ctx *cx = rt->externals;
    while (cx && !pthread_equal(cx->thread, self))
        cx = cx->next_external;
    if (cx == NULL && (cx = aligned_alloc(AC__CACHE_LINE, sizeof *cx)) != NULL) {
        ac__ctx_init(cx, rt, NULL);
        cx->thread = self;
        cx->next_external = rt->externals;
        rt->externals = cx;
    }
    pthread_mutex_unlock(&rt->ext_lock);
    if (cx)
        ac__tls_set(rt, cx);
    return cx;
}

/* True when the calling thread is running a handler or is a worker of rt:
 * blocking on the runtime from there would wait for itself. */
static bool inside_runtime(ac_runtime *rt)
{
    return tls.rt_id == rt->id && tls.cx &&
           (tls.cx->current != NULL || (tls.cx->worker && rt->nworkers > 0));
}

/* Until the runtime is quiescent (true) or `deadline` (ac__monotonic_ms;
 * 0: none) has passed (false). */
static bool wait_quiet(ac_runtime *rt, uint64_t deadline)
{
    if (rt->nworkers == 0 || rt->shut_down)
        return ac__run_here_until(rt, deadline);
    struct timespec at = {(time_t)(deadline / 1000), (long)(deadline % 1000) * 1000000};
    pthread_mutex_lock(&rt->quiet_lock);
    bool quiet;
    while (!(quiet = ac__quiescent(rt))) {
        if (deadline == 0)
            pthread_cond_wait(&rt->quiet_cond, &rt->quiet_lock);
        else if (pthread_cond_timedwait(&rt->quiet_cond, &rt->quiet_lock, &at) != 0) {
            quiet = ac__quiescent(rt);
            break;
        }
    }
    pthread_mutex_unlock(&rt->quiet_lock);
    return quiet;
}

int ac_runtime_run(ac_runtime *rt)
{
    if (rt == NULL)
        return AC_EINVAL;
    if (inside_runtime(rt))
        return AC_ESTATE;
    (void)wait_quiet(rt, 0);
    /* Quiescent, and what stays pending can only be an ask no reply
     * reached: say how many, so that a result left unset is not silent. */
    size_t n = ac__services_pending(rt);
    return n > (size_t)INT_MAX ? INT_MAX : (int)n;
}

int ac_runtime_step(ac_runtime *rt)
{
    if (rt == NULL)
        return AC_EINVAL;
    if (rt->nworkers != 0)
        return AC_ESTATE;
    if (inside_runtime(rt))
        return AC_ESTATE;
    return (int)ac__run_here(rt, true);
}

static void wait_externals_offline(ac_runtime *rt)
{
    while (!ac__qsbr_all_offline_externals(rt))
        sched_yield();
}

/* A walk of shutdown's over every actor (a stop or a kill each), which
 * gives up asking for memory at the first envelope it cannot get, and the
 * stop walk at all once the deadline has passed (looked at every
 * WALK_CLOCK_EVERY actors): with millions of actors and memory gone, every
 * failing allocation costs the allocator a search of its arenas, and one
 * per actor made a 5 s shutdown take minutes. The actors a walk leaves
 * outlive the shutdown, counted (ac_stats.shutdown_left). */
#define WALK_CLOCK_EVERY 1024

typedef struct walk {
    ac_ctx *cx;
    uint64_t deadline;      /* ac__monotonic_ms; 0: none */
    unsigned until_clock;
    bool over;              /* past the deadline, or out of memory */
    bool out_of_memory;
} walk;

/* Whether the walk still acts on the next actor. */
static bool walk_on(walk *w)
{
    if (w->over)
        return false;
    if (w->deadline != 0 && ++w->until_clock == WALK_CLOCK_EVERY) {
        w->until_clock = 0;
        w->over = ac__monotonic_ms() >= w->deadline;
    }
    return !w->over;
}

static void walk_out_of_memory(walk *w)
{
    w->over = true;
    w->out_of_memory = true;
}

static void stop_one(ac__actor *a, void *arg)
{
    walk *w = arg;
    if (a->attrs & AC__ATTR_SUPERVISED)
        return;  /* its supervisor stops it, last started first (supervisors.c) */
    if (!walk_on(w))
        return;
    ac__env *e = ac__stop_envelope(w->cx);
    if (e == NULL) {
        walk_out_of_memory(w);  /* this actor, and the rest, outlive the shutdown */
        return;
    }
    ac__deliver(w->cx, a, e);
}

static void kill_one(ac__actor *a, void *arg)
{
    walk *w = arg;
    if (a->attrs & AC__ATTR_INBOX)
        return;  /* a thread's, not an actor's: it stops with the others */
    if (ac__flags(a) & (AC__ACTOR_DEAD | AC__ACTOR_KILLED))
        return;
    if (walk_on(w) && ac__kill(w->cx, a, AC_REASON_KILLED, AC_ETIMEDOUT) == AC_ENOMEM)
        walk_out_of_memory(w);  /* it runs on, and so do the rest */
}

/* Counts an actor left after the shutdown (not a thread's inbox, which
 * goes with the runtime by design). */
static void count_left(ac__actor *a, void *arg)
{
    if (!(a->attrs & AC__ATTR_INBOX))
        ++*(uint64_t *)arg;
}

/* Waits for quiescence until the graceful part's deadline; past it, every
 * actor still there is killed and what it holds is dropped as a dead
 * letter as its mailbox drains. True when it had to kill. The kill walk
 * has no clock (it is what ends the time given): it costs one envelope an
 * actor, and stops at the first it cannot get. */
static bool quiet_or_force(ac_runtime *rt, ac_ctx *cx, uint64_t deadline, bool *out_of_memory)
{
    if (wait_quiet(rt, deadline))
        return false;
    atomic_store_explicit(&rt->stopping, true, memory_order_seq_cst);
    walk w = {cx, 0, 0, false, false};
    ac__enter(cx);
    ac__route_each(&rt->route, kill_one, &w);
    ac__leave(cx);
    *out_of_memory |= w.out_of_memory;
    (void)wait_quiet(rt, 0);
    return true;
}

int ac_runtime_shutdown(ac_runtime *rt)
{
    if (rt == NULL)
        return AC_EINVAL;
    if (inside_runtime(rt))
        return AC_ESTATE;
    if (rt->shut_down)
        return 0;
    ac_ctx *cx = ac_runtime_ctx(rt);
    if (cx == NULL)
        return AC_ENOMEM;
    uint32_t ms = rt->cfg.shutdown_ms;
    uint64_t deadline = ms == AC_SHUTDOWN_NEVER_FORCED ? 0 : ac__monotonic_ms() + ms;

    /* 0. The services first: timers stop firing, and none starts. */
    ac__services_shutdown(cx);
    /* 1. No more sends from outside; let calls in progress finish. */
    atomic_store_explicit(&rt->closing, true, memory_order_seq_cst);
    wait_externals_offline(rt);
    /* 2. Every accepted message is handled. */
    bool out_of_memory = false;
    bool forced = quiet_or_force(rt, cx, deadline, &out_of_memory);
    /* 3. Every actor stops, behind anything its stop hook sends. A stop
     * walk that the deadline cut short leaves the rest to the kills. */
    atomic_store_explicit(&rt->stopping, true, memory_order_seq_cst);
    walk w = {cx, deadline, 0, false, false};
    ac__enter(cx);
    ac__route_each(&rt->route, stop_one, &w);
    ac__leave(cx);
    out_of_memory |= w.out_of_memory;
    forced |= quiet_or_force(rt, cx, deadline, &out_of_memory);
    /* 4. Workers leave; whatever they left (finalize turns) runs here. */
    if (rt->nworkers > 0)
        ac__workers_stop(rt);
    rt->shut_down = true;
    ac__run_here(rt, false);
    /* 5. What could not be stopped, counted from the table itself: one
     * source for every way an actor outlives the shutdown (a walk out of
     * memory, a supervisor whose down never came). */
    uint64_t left = 0;
    ac__route_each(&rt->route, count_left, &left);
    /* Relaxed: a counter, read by ac_runtime_stats like the others. */
    atomic_store_explicit(&rt->shutdown_left, left, memory_order_relaxed);
    if (left > 0)
        return out_of_memory ? AC_ENOMEM : AC_ETIMEDOUT;
    return forced ? AC_ETIMEDOUT : 0;
}

/* Adds the counters of one context to *out. */
static void add_counters(const ac_ctx *cx, ac_stats *out)
{
#define ADD(f) out->f += atomic_load_explicit(&cx->stats.f, memory_order_relaxed)
    ADD(messages); ADD(sends); ADD(dead_letters); ADD(spawned); ADD(stopped);
    ADD(failed); ADD(steals); ADD(parks); ADD(pool_misses); ADD(mailbox_drops);
    ADD(killed); ADD(unhandled); ADD(refused); ADD(system_messages);
    ADD(handoffs); ADD(wakeups); ADD(idle_wakeups); ADD(spins); ADD(muted);
#undef ADD
}

static void ctx_counters(const ac_ctx *cx, ac_stats *out)
{
    memset(out, 0, sizeof *out);
    add_counters(cx, out);
}

static void print_counters(const char *who, const ac_stats *s)
{
    fprintf(stderr,
            "actorc stats %-8s messages %" PRIu64 " sends %" PRIu64 " dead_letters %" PRIu64
            " spawned %" PRIu64 " stopped %" PRIu64 " failed %" PRIu64 " steals %" PRIu64
            " parks %" PRIu64 " pool_misses %" PRIu64 " mailbox_drops %" PRIu64
            " killed %" PRIu64 " unhandled %" PRIu64 " refused %" PRIu64
            " system_messages %" PRIu64 " handoffs %" PRIu64 " wakeups %" PRIu64
            " idle_wakeups %" PRIu64 " spins %" PRIu64 " muted %" PRIu64 "\n",
            who, s->messages, s->sends, s->dead_letters, s->spawned, s->stopped, s->failed,
            s->steals, s->parks, s->pool_misses, s->mailbox_drops, s->killed, s->unhandled,
            s->refused, s->system_messages, s->handoffs, s->wakeups, s->idle_wakeups, s->spins, s->muted);
}

/* AC_STATS=1: every worker's counters, then the total, then the
 * services' lines (a node's peers), on stderr. */
static void print_stats_at_exit(ac_runtime *rt)
{
    const char *env = getenv("AC_STATS");
    if (env == NULL || strcmp(env, "1") != 0)
        return;
    for (unsigned i = 0; i < rt->nslots; i++) {
        ac_stats s;
        char who[24];
        ctx_counters(&rt->workers[i].cx, &s);
        snprintf(who, sizeof who, "worker%u", i);
        print_counters(who, &s);
    }
    ac_stats total;
    ac_runtime_stats(rt, &total);
    print_counters("total", &total);
    if (total.shutdown_left > 0)
        fprintf(stderr, "actorc stats shutdown left %" PRIu64 " actors it could not stop\n",
                total.shutdown_left);
    if (rt->hub_ns != 0)  /* sched.c, "Hubs" */
        fprintf(stderr, "actorc stats hubs marked %" PRIu64 "\n", ac__sched_hub_marks(rt));
    ac__services_print_stats(rt, stderr);
    ac__typestats_print(rt, stderr);
}

int ac_runtime_destroy(ac_runtime *rt)
{
    if (rt == NULL)
        return 0;
    if (inside_runtime(rt))
        return AC_ESTATE;
    int rc = ac_runtime_shutdown(rt);
    /* The contexts' service state (a thread's ask inbox) goes while the
     * services it belongs to are still there. */
    for (unsigned i = 0; i < rt->nslots; i++)
        ac__services_ctx_fini(&rt->workers[i].cx);
    for (ac_ctx *e = rt->externals; e != NULL; e = e->next_external)
        ac__services_ctx_fini(e);
    print_stats_at_exit(rt);
    /* Every worker has stopped and no thread is inside the runtime: the
     * rings are still. A trace that cannot be written is said on stderr,
     * as AC_STATS prints there: destroy has no other way to say it. */
    if (ac__trace_write(rt) != 0)
        fprintf(stderr, "actorc: cannot write the trace to %s\n", rt->trace_path);
    if (tls.rt_id == rt->id)
        ac__tls_set(NULL, NULL);
    free_runtime(rt);
    return rc == AC_ETIMEDOUT || rc == AC_ENOMEM ? rc : 0;
}

void ac_runtime_set_dead_letter_hook(ac_runtime *rt, ac_dead_letter_fn fn, void *arg)
{
    if (rt == NULL)
        return;
    /* Plain stores: documented as set before the first spawn, so workers
     * read it only after thread creation or a send ordered it. */
    rt->dead_letter_arg = arg;
    rt->dead_letter_fn = fn;
}

void ac_runtime_stats(ac_runtime *rt, ac_stats *out)
{
    if (out == NULL)
        return;
    memset(out, 0, sizeof *out);
    if (rt == NULL)
        return;
    for (unsigned i = 0; i < rt->nslots; i++)
        add_counters(&rt->workers[i].cx, out);
    pthread_mutex_lock(&rt->ext_lock);
    for (ac_ctx *p = rt->externals; p; p = p->next_external)
        add_counters(p, out);
    pthread_mutex_unlock(&rt->ext_lock);
    /* Relaxed: as the contexts' counters. */
    out->shutdown_left = atomic_load_explicit(&rt->shutdown_left, memory_order_relaxed);
    ac__stash_stats(rt, out);
    ac__services_stats(rt, out);
}
