/*
 * routers.c — router pools (ac_router_spawn).
 *
 * A router is an ordinary actor of a type defined here: it has an address
 * in the routing table, users send to it with the ordinary send functions
 * (so generated typed sends work on it), and its mailbox orders and
 * serialises what it forwards. Its dispatch picks a worker and sends it a
 * copy of the message: the envelope a handler gets is freed by the runtime
 * after the handler returns (it is its mailbox's stub until the next pop),
 * so it cannot be passed on as it is.
 *
 * The router watches each worker with a monitor; a worker's `down` arrives
 * through its dispatch like any message, and it spawns a replacement into
 * the same slot, so consistent hashing keeps sending a key to that slot.
 *
 * The pool (struct router) lives outside the actor's block because its size
 * depends on the worker count. Only the router's own handlers write it, so
 * they read it without a lock; the one lock of this file (per runtime)
 * orders those writes against ac_router_workers, called from any thread,
 * and against the pool being freed when the router dies.
 */
#include "services.h"

#include "../lib/xorshift.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct slot {
    ac_addr addr;
    uint64_t ref;   /* the router's monitor on this worker */
    bool live;      /* false: its replacement could not be spawned */
} slot;

typedef struct router {
    ac_router_options o;
    uint64_t next;  /* round robin */
    uint64_t rng;   /* xorshift64 state, never 0 */
    uint32_t n;
    slot slots[];
} router;

typedef struct router_state {
    router *r;      /* NULL once the router has died */
} router_state;

/* What ac_router_spawn hands the start hook: the hook says whether it took
 * the pool (from then on the router's death frees it). */
typedef struct start_args {
    router *r;
    bool adopted;
} start_args;

struct ac__routers {
    pthread_mutex_t lock;
};

static struct ac__routers *routers_of(ac_ctx *cx)
{
    return ac__service_state(ac_ctx_runtime(cx), AC__SERVICE_routers);
}

static int init(ac_runtime *rt, void **state)
{
    (void)rt;
    struct ac__routers *t = calloc(1, sizeof *t);
    if (t == NULL)
        return AC_ENOMEM;
    pthread_mutex_init(&t->lock, NULL);
    *state = t;
    return 0;
}

static void fini(void *state)
{
    struct ac__routers *t = state;
    pthread_mutex_destroy(&t->lock);
    free(t);
}

/* splitmix64's finaliser: keys like 1, 2, 3 spread over every bucket. */
static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9u;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBu;
    return x ^ (x >> 31);
}

/* Jump consistent hash (Lamping and Veach, 2014): a key's bucket among n,
 * such that growing n moves only the keys the new buckets take. */
static uint32_t jump_hash(uint64_t key, uint32_t n)
{
    int64_t b = -1, j = 0;
    while (j < (int64_t)n) {
        b = j;
        key = key * 2862933555777941757u + 1;
        j = (int64_t)((double)(b + 1) * ((double)(1LL << 31) / (double)((key >> 33) + 1)));
    }
    return (uint32_t)b;
}

/* Spawns and watches the worker of slot i. Runs in the router's handlers
 * (its start hook included), so the router is the running actor. */
static int start_worker(ac_ctx *cx, router *r, uint32_t i)
{
    ac_addr w;
    int rc = ac_spawn(cx, r->o.type, r->o.args, &w);
    if (rc != 0)
        return rc;
    uint64_t ref;
    rc = ac_monitor(cx, ac_self(cx), &w, &ref);
    if (rc != 0) {
        (void)ac_stop(cx, &w);  /* unwatched: it would never be replaced */
        return rc;
    }
    struct ac__routers *t = routers_of(cx);
    pthread_mutex_lock(&t->lock);
    r->slots[i] = (slot){w, ref, true};
    pthread_mutex_unlock(&t->lock);
    return 0;
}

static int router_start(void *state, ac_ctx *cx, const void *args)
{
    start_args *sa = (start_args *)args;  /* ours: ac_router_spawn's local */
    router_state *st = state;
    router *r = sa->r;
    struct ac__routers *t = routers_of(cx);
    pthread_mutex_lock(&t->lock);
    /* Marks services as used, so that the router's death runs
     * the died hook, which frees the pool (core/service.c). */
    bool alive = ac__service_alive(cx, ac__current(cx));
    if (alive)
        st->r = r;
    pthread_mutex_unlock(&t->lock);
    if (!alive)
        return AC_ESTATE;
    sa->adopted = true;
    uint64_t seed;
    memcpy(&seed, ac_self(cx)->bytes + 8, sizeof seed);
    r->rng = seed | 1;
    for (uint32_t i = 0; i < r->n; i++) {
        int rc = start_worker(cx, r, i);
        if (rc != 0)
            return rc;  /* the router fails; its death stops the others */
    }
    return 0;
}

/* A worker is gone: a fresh one takes its slot. */
static int replace(ac_ctx *cx, router *r, const ac_down *d)
{
    for (uint32_t i = 0; i < r->n; i++) {
        if (!r->slots[i].live || r->slots[i].ref != d->ref)
            continue;
        struct ac__routers *t = routers_of(cx);
        pthread_mutex_lock(&t->lock);
        r->slots[i].live = false;
        pthread_mutex_unlock(&t->lock);
        /* Refused during shutdown (AC_ESHUTDOWN): the slot stays empty
         * and the router forwards to the others. */
        (void)start_worker(cx, r, i);
        break;
    }
    return 0;
}

/* Sends a copy of e to slot i. */
static int forward(ac_ctx *cx, router *r, uint32_t i, const ac_envelope *e)
{
    ac_envelope *c = r->o.type->copy(cx, e);
    if (c == NULL)
        return AC_ENOMEM;
    return ac_send_checked(cx, &r->slots[i].addr, NULL, c);
}

/* Is the worker of slot i still there? Its `down` may not have reached the
 * router yet. (A handler runs online: the lookup is safe.) */
static bool worker_alive(ac_ctx *cx, router *r, uint32_t i)
{
    if (!r->slots[i].live)
        return false;
    ac__actor *a = ac__lookup(cx, &r->slots[i].addr);
    return a != NULL && !(ac__flags(a) & AC__ACTOR_DEAD);
}

/* Round robin and random: from `start`, the first worker that takes it.
 * Workers that died a moment ago are skipped; one dying between the check
 * and the send refuses the message (a dead letter) and the next is tried. */
static bool forward_from(ac_ctx *cx, router *r, uint32_t start, const ac_envelope *e)
{
    for (uint32_t k = 0; k < r->n; k++) {
        uint32_t i = (start + k) % r->n;
        if (worker_alive(cx, r, i) && forward(cx, r, i, e) != AC_ENOTFOUND)
            return true;
    }
    return false;
}

static int router_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    router *r = ((router_state *)state)->r;
    if (e->tag == AC_TAG_DOWN)
        return replace(cx, r, ac_envelope_payload(e));
    if (e->tag >= AC_TAG_SYSTEM)
        return AC_EBADTAG;
    bool sent = false;
    switch (r->o.strategy) {
    case AC_ROUTE_ROUND_ROBIN:
        sent = forward_from(cx, r, (uint32_t)(r->next++ % r->n), e);
        break;
    case AC_ROUTE_RANDOM:
        sent = forward_from(cx, r, (uint32_t)(ac__xorshift64(&r->rng) % r->n), e);
        break;
    case AC_ROUTE_BROADCAST:
        for (uint32_t i = 0; i < r->n; i++)
            if (worker_alive(cx, r, i) && forward(cx, r, i, e) == 0)
                sent = true;
        break;
    case AC_ROUTE_HASH: {
        /* No second choice: a key's messages go to its slot or nowhere. */
        uint32_t i = jump_hash(mix(r->o.key(e, r->o.key_arg)), r->n);
        sent = worker_alive(cx, r, i) && forward(cx, r, i, e) != AC_ENOTFOUND;
        break;
    }
    }
    if (!sent && r->o.strategy != AC_ROUTE_BROADCAST)
        ac__refuse(cx, ac_self(cx), ac__env_of(e), AC_ENOTFOUND);  /* a send to no worker */
    return 0;  /* a message that found no worker does not fail the router */
}

static const ac_actor_type router_type = {
    .abi = AC_ABI_VERSION,
    .name = "actorc.Router",
    .state_size = sizeof(router_state),
    .state_align = _Alignof(router_state),
    .dispatch = router_dispatch,
    .on_start = router_start,
};

int ac_router_spawn(ac_ctx *cx, const ac_router_options *o, ac_addr *out)
{
    if (cx == NULL || o == NULL || out == NULL || o->type == NULL ||
        o->type->copy == NULL || o->workers == 0 ||
        o->workers > AC_ROUTER_MAX_WORKERS || o->strategy > AC_ROUTE_HASH ||
        (o->strategy == AC_ROUTE_HASH && o->key == NULL))
        return AC_EINVAL;
    if (o->type->abi != AC_ABI_VERSION)
        return AC_EINVAL;
    /* The workers' start arguments, made whole by the type's copy_args,
     * follow the slots: a replacement spawned long after this call reads
     * them there, not in the caller's memory. */
    size_t at = sizeof(router) + o->workers * sizeof(slot), args_size = 0;
    at = (at + _Alignof(max_align_t) - 1) & ~(_Alignof(max_align_t) - 1);
    if (o->args != NULL && o->type->copy_args != NULL &&
        (args_size = o->type->copy_args(o->args, NULL, 0)) > AC_MAX_PAYLOAD)
        return AC_EINVAL;
    router *r = calloc(1, at + args_size);
    if (r == NULL)
        return AC_ENOMEM;
    r->o = *o;
    r->n = o->workers;
    if (args_size != 0) {
        (void)o->type->copy_args(o->args, (char *)r + at, args_size);
        r->o.args = (char *)r + at;
    }
    start_args sa = {r, false};
    int rc = ac_spawn(cx, &router_type, &sa, out);
    if (!sa.adopted)
        free(r);  /* the spawn failed before the start hook took it */
    return rc;
}

int ac_router_workers(ac_ctx *cx, const ac_addr *router_addr, ac_addr *out, size_t max)
{
    if (cx == NULL || router_addr == NULL || (out == NULL && max != 0))
        return AC_EINVAL;
    struct ac__routers *t = routers_of(cx);
    int n = AC_ENOTFOUND;
    ac__enter(cx);  /* the actor's block stays valid while we read it */
    pthread_mutex_lock(&t->lock);
    ac__actor *a = ac__lookup(cx, router_addr);
    router *r = a && ac__type(a) == &router_type ? ((router_state *)(void *)a->state)->r : NULL;
    if (r != NULL) {
        n = 0;
        for (uint32_t i = 0; i < r->n; i++) {
            if (!r->slots[i].live)
                continue;
            if ((size_t)n < max)
                out[n] = r->slots[i].addr;
            n++;
        }
    }
    pthread_mutex_unlock(&t->lock);
    ac__leave(cx);
    return n;
}

static void died(ac_ctx *cx, void *state, ac__actor *a, const ac__death *d)
{
    (void)d;
    if (ac__type(a) != &router_type)
        return;
    struct ac__routers *t = state;
    router_state *st = (router_state *)(void *)a->state;
    pthread_mutex_lock(&t->lock);
    router *r = st->r;
    st->r = NULL;
    pthread_mutex_unlock(&t->lock);
    if (r == NULL)
        return;
    /* The workers go with their router, after what it already forwarded;
     * their `down`s find nobody and vanish (system messages). */
    for (uint32_t i = 0; i < r->n; i++)
        if (r->slots[i].live)
            (void)ac_stop(cx, &r->slots[i].addr);
    free(r);
}

const ac__service ac__routers_service = {
    .name = "routers",
    .init = init,
    .fini = fini,
    .died = died,
};
