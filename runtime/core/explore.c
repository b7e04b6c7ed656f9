/*
 * explore.c — seeded schedules: deterministic mode's run loop with every
 * choice made by a seeded PRNG, so that a test can run one scenario under
 * many interleavings and replay a failing one (docs/RUNTIME.md,
 * "Systematic testing"; design in runtime/README.md, "Seeded schedules").
 *
 * Chosen once, at ac_runtime_create: a runtime with a seed and no workers
 * gives every context the slow send path (send_slow), and that path, not
 * the workers' one, hands a message to a live actor to ac__explore_hold.
 * So normal mode runs exactly the code it ran before.
 *
 * A held message waits on its channel: the (sender, receiver) pair, the
 * sender being the running actor, else the timer firing, else the thread.
 * A step is one of:
 *  - deliver the oldest message of one channel into its receiver's
 *    mailbox (so one sender's messages to one receiver stay FIFO, and
 *    different senders' messages interleave in every order), or
 *  - run one turn, of one message, of one ready actor.
 * The random strategy picks among them uniformly. PCT (Burckhardt et al.,
 * ASPLOS 2010) gives each actor and each channel a random priority when it
 * is first seen, always takes the highest, and at d - 1 steps drawn in
 * [1, k] lowers the priority of what it took below every other.
 *
 * Everything here runs on the one thread that drives deterministic mode:
 * no atomics, no locks.
 */
#include "explore.h"

#include "actor.h"
#include "pool.h"
#include "qsbr.h"
#include "sched.h"

#include "../lib/xorshift.h"

#include <stdlib.h>
#include <string.h>

typedef struct held {
    struct held *next;
    ac_addr to;
    ac__env *e;
    bool system;
} held;

typedef struct channel {
    /* The sender: an actor by its address (so a restarted one, at the
     * same address, keeps its predecessor's order), else a thread's
     * context or a timer by pointer (its address left nil). */
    const void *from;
    ac_addr from_addr;
    ac_addr to;             /* an address too, for the same reason */
    held *head, *tail;
    uint64_t prio;
} channel;

/* An actor's PCT priority, kept while it is not ready too. */
typedef struct ranked {
    const void *actor;
    uint64_t prio;
} ranked;

struct ac__explore {
    uint64_t rng;
    int strategy;
    uint64_t steps;
    /* PCT: the steps at which the taken one's priority drops, and the
     * next low priority to give (d - 1 down to 1, all below the initial
     * ones, which are drawn above AC_PCT_MAX_DEPTH). */
    uint64_t change[AC_PCT_MAX_DEPTH];
    unsigned nchange;
    uint64_t low;
    channel *chans;
    size_t nchans, capchans;
    ac__actor **ready;
    size_t nready, capready;
    ranked *ranks;
    size_t nranks, capranks;
};

/* Seeds with zero bits and seeds that differ in one bit must give
 * unrelated streams: splitmix64's finalizer spreads them. */
static uint64_t mix(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t draw(ac__explore *x, uint64_t n)
{
    return ac__xorshift64(&x->rng) % n;
}

static uint64_t fresh_prio(ac__explore *x)
{
    /* Above every low priority; equal ones are broken by position. */
    return AC_PCT_MAX_DEPTH + 1 + (ac__xorshift64(&x->rng) >> 8);
}

static bool grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return true;
    size_t n = *cap ? *cap * 2 : 16;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * size);
    if (q == NULL)
        return false;
    *p = q;
    *cap = n;
    return true;
}

ac__explore *ac__explore_new(const ac_config *cfg)
{
    ac__explore *x = calloc(1, sizeof *x);
    if (x == NULL)
        return NULL;
    x->rng = mix(cfg->seed);
    if (x->rng == 0)
        x->rng = 1;  /* xorshift must not start at zero */
    x->strategy = cfg->strategy;
    if (x->strategy == AC_SCHEDULE_PCT) {
        unsigned d = cfg->pct_depth ? cfg->pct_depth : AC_PCT_DEPTH;
        if (d > AC_PCT_MAX_DEPTH)
            d = AC_PCT_MAX_DEPTH;
        uint64_t k = cfg->pct_steps ? cfg->pct_steps : AC_PCT_STEPS;
        x->nchange = d - 1;
        x->low = d - 1;
        for (unsigned i = 0; i < x->nchange; i++)
            x->change[i] = 1 + draw(x, k);
    }
    return x;
}

void ac__explore_free(ac_ctx *cx, ac__explore *x)
{
    if (x == NULL)
        return;
    for (size_t i = 0; i < x->nchans; i++) {
        for (held *h = x->chans[i].head, *next; h != NULL; h = next) {
            next = h->next;
            ac__pool_free(cx, h->e);
            free(h);
        }
    }
    free(x->chans);
    free(x->ready);
    free(x->ranks);
    free(x);
}

bool ac__explore_hold(ac_ctx *cx, const ac_addr *to, ac__env *e, bool system)
{
    ac__explore *x = cx->rt->seeded;
    const void *from = NULL;
    ac_addr from_addr = {{0}};
    if (cx->current != NULL)
        from_addr = cx->current->addr;
    else
        from = cx->send_from ? cx->send_from : (const void *)cx;
    channel *c = NULL;
    for (size_t i = 0; i < x->nchans; i++)
        if (x->chans[i].from == from &&
            memcmp(&x->chans[i].from_addr, &from_addr, sizeof from_addr) == 0 &&
            memcmp(&x->chans[i].to, to, sizeof *to) == 0) {
            c = &x->chans[i];
            break;
        }
    held *h = malloc(sizeof *h);
    if (h == NULL)
        return false;
    if (c == NULL) {
        if (!grow((void **)&x->chans, &x->capchans, x->nchans + 1, sizeof *x->chans)) {
            free(h);
            return false;
        }
        c = &x->chans[x->nchans++];
        c->from = from;
        c->from_addr = from_addr;
        c->to = *to;
        c->head = c->tail = NULL;
        c->prio = fresh_prio(x);
    }
    h->next = NULL;
    h->to = *to;
    h->e = e;
    h->system = system;
    *(c->tail ? &c->tail->next : &c->head) = h;
    c->tail = h;
    return true;
}

/* Moves what the scheduler queued (spawns, wake-ups, finalize turns) into
 * the ready set, in the order it was queued. */
static bool collect(ac_runtime *rt, ac__explore *x)
{
    for (unsigned i = 0; i < rt->nslots; i++) {
        ac__actor *a;
        while ((a = ac__sched_take(&rt->workers[i])) != NULL) {
            if (!grow((void **)&x->ready, &x->capready, x->nready + 1, sizeof *x->ready)) {
                ac__schedule(&rt->workers[i].cx, a);  /* back: run it later */
                return false;
            }
            x->ready[x->nready++] = a;
        }
    }
    return true;
}

static ranked *rank_of(ac__explore *x, const void *actor)
{
    for (size_t i = 0; i < x->nranks; i++)
        if (x->ranks[i].actor == actor)
            return &x->ranks[i];
    if (!grow((void **)&x->ranks, &x->capranks, x->nranks + 1, sizeof *x->ranks))
        return NULL;
    ranked *r = &x->ranks[x->nranks++];
    r->actor = actor;
    r->prio = fresh_prio(x);
    return r;
}

/* The next step: an index below nready is a turn of ready[i], one above
 * is a delivery from chans[i - nready]. */
static size_t choose(ac__explore *x)
{
    size_t n = x->nready + x->nchans;
    if (x->strategy != AC_SCHEDULE_PCT)
        return (size_t)draw(x, n);
    size_t best = 0;
    uint64_t top = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t p;
        if (i < x->nready) {
            ranked *r = rank_of(x, x->ready[i]);
            p = r ? r->prio : 0;
        } else {
            p = x->chans[i - x->nready].prio;
        }
        if (i == 0 || p > top) {
            top = p;
            best = i;
        }
    }
    return best;
}

/* PCT: past a change point, what was just taken drops below all. */
static void after_step(ac__explore *x, const void *actor, channel *c)
{
    x->steps++;
    for (unsigned i = 0; i < x->nchange; i++) {
        if (x->change[i] != x->steps)
            continue;
        uint64_t p = x->low > 0 ? x->low-- : 0;
        if (c != NULL) {
            c->prio = p;
        } else {
            ranked *r = rank_of(x, actor);
            if (r)
                r->prio = p;
        }
    }
}

/* The end of a held send. Here rather than in actor.c beside send_env:
 * there, one more lookup made LTO stop inlining ac__route_lookup into
 * send_env, half an instruction a ring hop (callgrind). */
static void deliver(ac_ctx *cx, const ac_addr *to, ac__env *e, bool system)
{
    ac__actor *a = ac__lookup(cx, to);
    if (a != NULL) {
        (void)ac__deliver(cx, a, e);
        return;
    }
    /* Gone while the message was in flight: what a send to it would have
     * been then, except that the send was already counted and returned. */
    if (!system)
        ac__dead_letter(cx, to, e, AC_ENOTFOUND);
    ac__pool_free(cx, e);
}

static void deliver_head(ac_ctx *cx, ac__explore *x, size_t i)
{
    channel *c = &x->chans[i];
    held *h = c->head;
    c->head = h->next;
    if (c->head == NULL)
        c->tail = NULL;
    after_step(x, NULL, c);
    if (c->head == NULL) {
        /* Keep the order of the rest: the choice depends on positions. */
        memmove(c, c + 1, (x->nchans - i - 1) * sizeof *c);
        x->nchans--;
    }
    ac_addr to = h->to;
    ac__env *e = h->e;
    bool system = h->system;
    free(h);
    deliver(cx, &to, e, system);
}

unsigned ac__explore_run(ac_runtime *rt, bool one_turn, uint64_t deadline, bool *late)
{
    ac__explore *x = rt->seeded;
    ac__worker *w = &rt->workers[0];
    ac_ctx *cx = &w->cx;
    unsigned handled = 0;
    *late = false;
    ac__tls_state prev = ac__tls_get();
    ac__tls_set(rt, cx);
    ac__qsbr_online(cx);
    for (;;) {
        (void)collect(rt, x);
        if (x->nready + x->nchans == 0) {
            /* Everything that could run has: reap, which may queue the
             * finalize turns of dead actors. */
            ac__qsbr_orphan(cx);
            ac__qsbr_offline(cx);
            bool more = ac__qsbr_finalize_orphans(cx);
            ac__qsbr_online(cx);
            if (!more)
                break;
            continue;
        }
        size_t i = choose(x);
        if (i >= x->nready) {
            deliver_head(cx, x, i - x->nready);
            continue;
        }
        ac__actor *a = x->ready[i];
        unsigned n;
        w->tick++;
        /* One message a turn: every message is a point where another
         * actor may run. */
        ac__turn end = ac__actor_turn(cx, a, 1, &n);
        handled += n;
        after_step(x, a, NULL);
        /* MUTED: never here (seeded mode does not mute, mute.c), but the
         * registry would hold it. */
        if (end == AC__TURN_FREED || end == AC__TURN_MUTED || (end == AC__TURN_DRAINED && ac__turn_release(a))) {
            memmove(&x->ready[i], &x->ready[i + 1], (x->nready - i - 1) * sizeof *x->ready);
            x->nready--;
        }
        ac__qsbr_quiescent(cx);
        ac__qsbr_poll(cx);
        if (one_turn)
            break;
        if (deadline != 0 && ac__monotonic_ms() >= deadline) {
            *late = true;
            break;
        }
    }
    /* What is still ready goes back to the run queue, for the next call
     * (or ac_runtime_step's caller) to take again in the same order. */
    for (size_t j = 0; j < x->nready; j++)
        ac__schedule(cx, x->ready[j]);
    x->nready = 0;
    ac__qsbr_orphan(cx);
    ac__qsbr_offline(cx);
    ac__tls_restore(prev);
    return handled;
}

uint64_t ac_runtime_seeded_steps(const ac_runtime *rt)
{
    return rt && rt->seeded ? rt->seeded->steps : 0;
}
