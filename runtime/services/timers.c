/*
 * timers.c — messages sent after a delay or at an interval (ac_timer_*).
 *
 * Every runtime keeps its timers in one binary min-heap ordered by deadline,
 * then by when the timer was (re)scheduled, so equal deadlines fire in FIFO
 * order. Two side tables (amap.c) find a timer by its id (ac_timer_cancel)
 * and by its owner (the actor that started it, cancelled with it). One
 * mutex guards all of it: timers are started and cancelled far less often
 * than messages are sent, and a heap operation is a few dozen cycles.
 *
 * Time is counted in milliseconds. With workers, the clock is
 * CLOCK_MONOTONIC and a timer thread, started with the first timer, sleeps
 * on a condition variable until the earliest deadline. In deterministic
 * mode (no workers) there is no thread: the clock is a tick counter that
 * ac_runtime_advance moves, firing what falls due on the caller's thread.
 *
 * Firing sends with ac_send_typed (ac__send_system for the runtime's own timers:
 * ask timeouts) from the firing thread's own context, outside the lock, so
 * a send to a dead target is an ordinary dead letter and the dead-letter
 * hook may even start or cancel timers. While its message is
 * being sent a timer is "firing": out of the heap, still findable by id.
 * ac_timer_cancel waits for a firing in progress to end, which gives the
 * guarantee documented in actorc.h: once ac_timer_cancel has returned,
 * whatever it returned, the timer sends nothing more.
 */
#include "timers.h"

#include "services.h"
#include "../lib/amap.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOT_QUEUED UINT32_MAX

typedef struct timer {
    ac__amap_node by_id;        /* key: the nil address, extra: the id */
    ac__amap_node by_owner;     /* key: the owner's address (when owned) */
    uint64_t id;
    uint64_t due;               /* on the runtime's timer clock, in ms */
    uint64_t seq;               /* (re)scheduling order: FIFO among equals */
    uint32_t period;            /* 0: one-shot */
    uint32_t slot;              /* index in the heap, NOT_QUEUED while firing */
    bool owned;                 /* in the owners table */
    bool cancelled;             /* cancelled while firing: its firer frees it */
    bool system;                /* a runtime message (ac__timer_after_system) */
    ac__actor *owner;           /* when owned: its block (see died) */
    ac__env *env;               /* one-shot: the message; interval: its model */
    const ac_actor_type *type;  /* the target's, if known: an interval's copy
                                   makes each message, and a target of
                                   another node is sent to typed */
    ac_addr to;
} timer;

typedef struct ac__timers {
    ac_runtime *rt;
    pthread_mutex_t lock;       /* guards everything below but `owned` */
    pthread_cond_t wake;        /* the timer thread: new earliest, or closing */
    pthread_cond_t fired;       /* cancellers waiting for a firing to end */
    timer **heap;
    size_t len, cap;
    ac__amap ids, owners;
    uint64_t next_id, next_seq;
    uint64_t now;               /* deterministic mode: ticks advanced so far */
    timer *firing;              /* at most one: one firing thread */
    pthread_t firer;
    pthread_t thread;
    bool thread_started;
    bool advancing;             /* deterministic mode: ac_runtime_advance runs */
    bool closed;                /* shutdown began: no new timers */
    /* Timers in `owners`. Lets a death skip the lock when nobody owns a
     * timer (every actor's death calls died once any service was
     * used). Relaxed: an owner's timers are counted in by handlers of that
     * owner, and its death runs on the thread that owns it next, which the
     * scheduler's hand-over orders after those handlers; every value in the
     * counter's modification order after an increment includes that timer
     * until it is removed, so the dying owner never reads 0 while it owns one. */
    _Atomic uint64_t owned;
} ac__timers;

/* ---- the clock ------------------------------------------------------------ */

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Deadlines count from the next whole millisecond, and fire once the clock
 * has reached them (floor): a timer never fires before its delay. */
static uint64_t now_ceil_ms(void) { return (mono_ns() + 999999u) / 1000000u; }
static uint64_t now_floor_ms(void) { return mono_ns() / 1000000u; }

static bool deterministic(ac_runtime *rt) { return ac_runtime_workers(rt) == 0; }

/* The current time of rt's timer clock; under the lock. */
static uint64_t clock_now(ac_runtime *rt, ac__timers *T)
{
    return deterministic(rt) ? T->now : now_ceil_ms();
}

/* ---- the heap ---------------------------------------------------------------- */

static bool earlier(const timer *a, const timer *b)
{
    return a->due < b->due || (a->due == b->due && a->seq < b->seq);
}

static void heap_set(ac__timers *T, size_t i, timer *t)
{
    T->heap[i] = t;
    t->slot = (uint32_t)i;
}

static void sift_up(ac__timers *T, size_t i)
{
    timer *t = T->heap[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!earlier(t, T->heap[parent]))
            break;
        heap_set(T, i, T->heap[parent]);
        i = parent;
    }
    heap_set(T, i, t);
}

static void sift_down(ac__timers *T, size_t i)
{
    timer *t = T->heap[i];
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= T->len)
            break;
        if (child + 1 < T->len && earlier(T->heap[child + 1], T->heap[child]))
            child++;
        if (!earlier(T->heap[child], t))
            break;
        heap_set(T, i, T->heap[child]);
        i = child;
    }
    heap_set(T, i, t);
}

/* Room for one more; the caller checks before it commits to anything. A
 * timer that is firing keeps its slot reserved, so that requeueing it
 * cannot fail. */
static int heap_reserve(ac__timers *T)
{
    if (T->len + (T->firing != NULL) < T->cap)
        return 0;
    size_t cap = T->cap ? T->cap * 2 : 64;
    if (cap > NOT_QUEUED)
        return AC_ENOMEM;  /* slot indices are 32-bit */
    timer **h = realloc(T->heap, cap * sizeof *h);
    if (h == NULL)
        return AC_ENOMEM;
    T->heap = h;
    T->cap = cap;
    return 0;
}

static void heap_push(ac__timers *T, timer *t)
{
    t->seq = T->next_seq++;
    T->heap[T->len] = t;
    sift_up(T, T->len++);
}

static void heap_remove(ac__timers *T, timer *t)
{
    size_t i = t->slot;
    t->slot = NOT_QUEUED;
    timer *last = T->heap[--T->len];
    if (i == T->len)
        return;
    heap_set(T, i, last);
    /* The moved timer may belong above or below its new place. */
    if (i > 0 && earlier(last, T->heap[(i - 1) / 2]))
        sift_up(T, i);
    else
        sift_down(T, i);
}

/* ---- timers ------------------------------------------------------------------ */

static const ac_addr nil_addr;

static timer *find(ac__timers *T, ac_timer_id id)
{
    ac__amap_node *n = ac__amap_find(&T->ids, &nil_addr, id);
    return n ? AC__CONTAINER_OF(n, timer, by_id) : NULL;
}

static void disown(ac__timers *T, timer *t)
{
    if (!t->owned)
        return;
    ac__amap_remove(&T->owners, &t->by_owner);
    t->owned = false;
    /* Relaxed: see `owned`. */
    atomic_fetch_sub_explicit(&T->owned, 1, memory_order_relaxed);
}

/* Unlinks a timer that is not queued and frees it with its envelope. */
static void destroy(ac_ctx *cx, ac__timers *T, timer *t)
{
    ac__amap_remove(&T->ids, &t->by_id);
    disown(T, t);
    if (t->env)
        ac_envelope_free(cx, ac__env_pub(t->env));
    free(t);
}

static void cond_init_monotonic(pthread_cond_t *c)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(c, &attr);
    pthread_condattr_destroy(&attr);
}

static ac__timers *timers_of(ac_runtime *rt)
{
    return ac__service_state(rt, AC__SERVICE_timers);
}

static int init(ac_runtime *rt, void **state)
{
    ac__timers *T = calloc(1, sizeof *T);
    if (T == NULL)
        return AC_ENOMEM;
    if (ac__amap_init(&T->ids) != 0 || ac__amap_init(&T->owners) != 0) {
        ac__amap_destroy(&T->ids);
        free(T);
        return AC_ENOMEM;
    }
    T->rt = rt;
    pthread_mutex_init(&T->lock, NULL);
    cond_init_monotonic(&T->wake);
    pthread_cond_init(&T->fired, NULL);
    T->next_id = 1;  /* 0 is never an id */
    atomic_init(&T->owned, 0);
    *state = T;
    return 0;
}

/* Fires t, the earliest timer, due at or before `now`: sends its message
 * outside the lock, then requeues it (interval) or frees it. Called and
 * returns with the lock held. */
static void fire(ac_runtime *rt, ac_ctx *cx, ac__timers *T, timer *t, uint64_t now)
{
    heap_remove(T, t);
    ac__env *e = NULL;
    /* From here until `firing` is cleared, heap_reserve counts t's slot. */
    if (t->period == 0) {
        e = t->env;
        t->env = NULL;
    }
    T->firing = t;
    T->firer = pthread_self();
    pthread_mutex_unlock(&T->lock);

    /* While t is firing nobody frees it or its model (cancel waits, a
     * death marks it cancelled), so the copy needs no lock. */
    if (t->period != 0) {
        ac_envelope *copy = t->type->copy(cx, ac__env_pub(t->env));
        e = copy ? ac__env_of(copy) : NULL;  /* out of memory: skip a beat */
    }
    if (e != NULL) {
        /* Every outcome is accounted for by the send itself: for ac_send a
         * dead target is a counted dead letter, a full mailbox a counted
         * drop; a runtime message to nobody is nothing. */
        /* From the timer, in seeded mode: its messages race the
         * advancing thread's own sends (explore.c). */
        const void *from = ac__send_from(cx, t);
        if (t->system)
            (void)ac__send_system(cx, &t->to, e);
        else
            (void)ac_send_typed(cx, &t->to, t->type, ac__env_pub(e));
        (void)ac__send_from(cx, from);
    }

    pthread_mutex_lock(&T->lock);
    T->firing = NULL;
    if (t->period == 0 || t->cancelled || T->closed) {
        destroy(cx, T, t);
    } else {
        /* Fixed rate: the next deadline keeps the phase. A timer thread
         * that fell more than a period behind (a suspended process) skips
         * the beats it missed rather than sending them in a burst; a
         * deterministic clock never falls behind, it fires them all. */
        t->due += t->period;
        if (!deterministic(rt) && t->due <= now)
            t->due = now + t->period;
        heap_push(T, t);  /* cannot fail: its slot stayed reserved */
    }
    pthread_cond_broadcast(&T->fired);
}

static void *timer_thread(void *arg)
{
    ac__timers *T = arg;
    ac_runtime *rt = T->rt;
    ac_ctx *cx = NULL;
    pthread_mutex_lock(&T->lock);
    while (!T->closed) {
        if (cx == NULL) {
            /* Its own context, made on this thread (ac_runtime_ctx takes
             * another lock: not under ours). */
            pthread_mutex_unlock(&T->lock);
            cx = ac_runtime_ctx(rt);
            pthread_mutex_lock(&T->lock);
            if (cx == NULL) {
                /* Out of memory: try again in a while. */
                struct timespec ts;
                clock_gettime(CLOCK_MONOTONIC, &ts);
                ts.tv_sec += 1;
                pthread_cond_timedwait(&T->wake, &T->lock, &ts);
            }
            /* The lock was dropped: shutdown may have closed the timers
             * and signalled meanwhile, a wake-up nobody was waiting for. */
            continue;
        }
        if (T->len == 0) {
            pthread_cond_wait(&T->wake, &T->lock);
            continue;
        }
        timer *t = T->heap[0];
        uint64_t now = now_floor_ms();
        if (t->due > now) {
            struct timespec ts = {(time_t)(t->due / 1000), (long)(t->due % 1000) * 1000000L};
            pthread_cond_timedwait(&T->wake, &T->lock, &ts);
            continue;  /* woken early, timed out, or a new earliest timer */
        }
        fire(rt, cx, T, t, now);
    }
    pthread_mutex_unlock(&T->lock);
    return NULL;
}

/* Validates, then queues a timer. Consumes e in every case. Only the
 * runtime's own timers (system) may carry a system tag. */
static int start(ac_ctx *cx, const ac_addr *to, uint32_t ms, bool every, bool system,
                 const ac_actor_type *type, ac_envelope *e, ac_timer_id *id)
{
    uint32_t period = every ? ms : 0;
    if (id != NULL)
        *id = 0;
    if (e == NULL || cx == NULL)
        return AC_EINVAL;  /* without a context e cannot even be freed */
    int rc = 0;
    if (to == NULL || (e->tag >= AC_TAG_SYSTEM) != system)
        rc = AC_EINVAL;
    else if (every && (ms == 0 || type == NULL || type->copy == NULL))
        rc = AC_EINVAL;  /* a zero period never ends; each beat needs a copy */
    if (rc != 0) {
        ac_envelope_free(cx, e);
        return rc;
    }
    ac_runtime *rt = ac_ctx_runtime(cx);
    ac__timers *T = timers_of(rt);
    timer *t = calloc(1, sizeof *t);
    if (t == NULL) {
        ac_envelope_free(cx, e);
        return AC_ENOMEM;
    }
    t->period = period;
    t->system = system;
    t->type = type;
    t->to = *to;
    t->env = ac__env_of(e);
    t->slot = NOT_QUEUED;
    ac__actor *owner = ac__current(cx);

    /* Online: the per-actor-state protocol of core/service.c. */
    ac__enter(cx);
    pthread_mutex_lock(&T->lock);
    if (T->closed)
        rc = AC_ESHUTDOWN;
    else if (heap_reserve(T) != 0)
        rc = AC_ENOMEM;
    else if (!deterministic(rt) && !T->thread_started) {
        if (pthread_create(&T->thread, NULL, timer_thread, T) != 0)
            rc = AC_ENOMEM;
        else
            T->thread_started = true;
    }
    if (rc == 0) {
        t->id = T->next_id++;
        t->due = clock_now(rt, T) + ms;
        if (id != NULL)
            *id = t->id;
        if (owner != NULL && !ac__service_alive(cx, owner)) {
            /* Started by a dying actor (in its stop hook): it is cancelled
             * with its owner at once. Not an error: the same happens to
             * every timer its owner left running. */
            ac_envelope_free(cx, e);
            free(t);
            t = NULL;
        } else {
            t->by_id.key = nil_addr;
            t->by_id.extra = t->id;
            ac__amap_add(&T->ids, &t->by_id);
            if (owner != NULL) {
                t->by_owner.key = owner->addr;
                t->by_owner.extra = 0;
                ac__amap_add(&T->owners, &t->by_owner);
                t->owner = owner;
                t->owned = true;
                /* Relaxed: see `owned`. */
                atomic_fetch_add_explicit(&T->owned, 1, memory_order_relaxed);
            }
            heap_push(T, t);
            if (t->slot == 0 && !deterministic(rt))
                pthread_cond_signal(&T->wake);  /* a new earliest deadline */
        }
    } else {
        ac_envelope_free(cx, e);
        free(t);
    }
    pthread_mutex_unlock(&T->lock);
    ac__leave(cx);
    return rc;
}

int ac_timer_after(ac_ctx *cx, const ac_addr *to, uint32_t ms, ac_envelope *e,
                   ac_timer_id *id)
{
    return start(cx, to, ms, false, false, NULL, e, id);
}

int ac_timer_after_typed(ac_ctx *cx, const ac_addr *to, const ac_actor_type *type, uint32_t ms,
                         ac_envelope *e, ac_timer_id *id)
{
    return start(cx, to, ms, false, false, type, e, id);
}

int ac__timer_after_system(ac_ctx *cx, const ac_addr *to, uint32_t ms, ac__env *e,
                           ac_timer_id *id)
{
    return start(cx, to, ms, false, true, NULL, ac__env_pub(e), id);
}

int ac_timer_every(ac_ctx *cx, const ac_addr *to, uint32_t ms,
                   const ac_actor_type *type, ac_envelope *e, ac_timer_id *id)
{
    return start(cx, to, ms, true, false, type, e, id);
}

int ac_timer_cancel(ac_ctx *cx, ac_timer_id id)
{
    if (cx == NULL)
        return AC_EINVAL;
    ac__timers *T = timers_of(ac_ctx_runtime(cx));
    if (id == 0)
        return AC_ENOTFOUND;
    int rc;
    pthread_mutex_lock(&T->lock);
    for (;;) {
        timer *t = find(T, id);
        if (t == NULL || t->cancelled) {
            rc = AC_ENOTFOUND;  /* fired (one-shot) or cancelled already */
            break;
        }
        if (T->firing == t) {
            if (pthread_equal(T->firer, pthread_self())) {
                /* Called while sending its own message (the dead-letter
                 * hook): waiting would wait for ourselves. That message is
                 * already handed over; the firer frees the timer. */
                t->cancelled = true;
                rc = t->period != 0 ? 0 : AC_ENOTFOUND;
                break;
            }
            /* Its message is being sent: wait until it is in the mailbox,
             * then look again (a one-shot is then gone). */
            pthread_cond_wait(&T->fired, &T->lock);
            continue;
        }
        heap_remove(T, t);
        destroy(cx, T, t);
        rc = 0;
        break;
    }
    pthread_mutex_unlock(&T->lock);
    return rc;
}

uint64_t ac__clock_ms(ac_runtime *rt)
{
    if (!deterministic(rt))
        return now_floor_ms();
    /* The tick count is read unlocked: in deterministic mode the thread
     * that advances it is the one running every handler. */
    return timers_of(rt)->now;
}

int ac_runtime_advance(ac_runtime *rt, uint32_t ms)
{
    if (rt == NULL)
        return AC_EINVAL;
    if (!deterministic(rt))
        return AC_ESTATE;  /* the monotonic clock drives these timers */
    ac_ctx *cx = ac_runtime_ctx(rt);
    if (cx == NULL)
        return AC_ENOMEM;
    ac__timers *T = timers_of(rt);
    pthread_mutex_lock(&T->lock);
    if (T->closed || T->advancing) {
        /* Advancing from a dead-letter hook of this very advance, or from
         * two threads at once, would break the one-firer rule. */
        int rc = T->closed ? AC_ESHUTDOWN : AC_ESTATE;
        pthread_mutex_unlock(&T->lock);
        return rc;
    }
    T->advancing = true;
    uint64_t target = T->now + ms;
    int fired = 0;
    while (T->len > 0 && T->heap[0]->due <= target && !T->closed) {
        timer *t = T->heap[0];
        if (t->due > T->now)
            T->now = t->due;  /* timers started meanwhile count from here */
        fire(rt, cx, T, t, T->now);
        if (fired < INT32_MAX)
            fired++;
    }
    if (!T->closed)
        T->now = target;
    T->advancing = false;
    pthread_mutex_unlock(&T->lock);
    return fired;
}

static void died(ac_ctx *cx, void *state, ac__actor *a, const ac__death *d)
{
    (void)d;
    ac__timers *T = state;
    /* Relaxed: see `owned`. */
    if (atomic_load_explicit(&T->owned, memory_order_relaxed) == 0)
        return;
    pthread_mutex_lock(&T->lock);
    ac__amap_node *n = ac__amap_take(&T->owners, &a->addr, 0);
    timer *in_flight = NULL;
    while (n != NULL) {
        ac__amap_node *next = n->next;
        timer *t = AC__CONTAINER_OF(n, timer, by_owner);
        if (t->owner != a) {
            /* A successor restarted at the same address (a supervisor's
             * child) started it: not ours to cancel. The dead block is
             * not freed before this cleanup ends, so blocks tell them
             * apart where addresses cannot. */
            ac__amap_add(&T->owners, &t->by_owner);
            n = next;
            continue;
        }
        t->owned = false;  /* take() unlinked it already */
        /* Relaxed: see `owned`. */
        atomic_fetch_sub_explicit(&T->owned, 1, memory_order_relaxed);
        if (T->firing == t) {
            t->cancelled = true;  /* its firer frees it */
            in_flight = t;
        } else {
            heap_remove(T, t);
            destroy(cx, T, t);
        }
        n = next;
    }
    /* As ac_timer_cancel does, wait for a message being sent, so that once
     * the death is over its timers send nothing more. The firer blocks on
     * nothing a worker holds (ac_send takes no lock a dying actor's worker
     * keeps), so this wait is short; unless the firer is this very thread
     * (a dead-letter hook that made an actor die). Only the pointer is
     * compared: the firer frees t. */
    if (in_flight != NULL && !pthread_equal(T->firer, pthread_self()))
        while (T->firing == in_flight)
            pthread_cond_wait(&T->fired, &T->lock);
    pthread_mutex_unlock(&T->lock);
}

/* Timers go first at shutdown: none fires, none starts (no timer thread
 * can start once shutdown has passed here), the pending ones are freed. */
static void close_timers(ac_ctx *cx, void *state)
{
    ac__timers *T = state;
    pthread_mutex_lock(&T->lock);
    T->closed = true;
    pthread_cond_signal(&T->wake);
    bool joined = T->thread_started;
    T->thread_started = false;
    pthread_mutex_unlock(&T->lock);
    if (joined)
        pthread_join(T->thread, NULL);
    /* Nothing fires any more: free what is pending, sent nowhere. */
    pthread_mutex_lock(&T->lock);
    while (T->firing != NULL)  /* a deterministic advance on another thread */
        pthread_cond_wait(&T->fired, &T->lock);
    while (T->len > 0) {
        timer *t = T->heap[0];
        heap_remove(T, t);
        destroy(cx, T, t);
    }
    pthread_mutex_unlock(&T->lock);
}

static void fini(void *state)
{
    ac__timers *T = state;
    ac__amap_destroy(&T->ids);
    ac__amap_destroy(&T->owners);
    free(T->heap);
    pthread_mutex_destroy(&T->lock);
    pthread_cond_destroy(&T->wake);
    pthread_cond_destroy(&T->fired);
    free(T);
}

const ac__service ac__timers_service = {
    .name = "timers",
    .init = init,
    .shutdown = close_timers,
    .fini = fini,
    .died = died,
};
