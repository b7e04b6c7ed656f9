/*
 * links.c — links: two actors bound so that the abnormal death of either
 * ends the other, unless it traps exits and is told with an `exit` message
 * (Erlang's link/1 and trap_exit; CAF's link_to).
 *
 * A link is one record with a node on each end, both on one map keyed by
 * the end's address, under one lock (links change rarely: at spawn, on
 * restarts). When an actor dies, taking its nodes off the map tells who
 * was linked to it; the other ends are unlinked in the same critical
 * section, so each link fires once even if both ends die together.
 */
#include "services.h"

#include "../lib/amap.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct link_rec {
    ac__amap_node end[2];
} link_rec;

typedef struct ac__links {
    pthread_mutex_t lock;
    ac__amap map;           /* both ends of every link */
} ac__links;

static ac__links *links_of(ac_ctx *cx)
{
    return ac__service_state(ac_ctx_runtime(cx), AC__SERVICE_links);
}

/* The record of an end; `extra` says which end it is. */
static link_rec *rec_of(ac__amap_node *x, int *which)
{
    *which = (int)x->extra;
    return *which ? AC__CONTAINER_OF(x, link_rec, end[1])
                  : AC__CONTAINER_OF(x, link_rec, end[0]);
}

static int init(ac_runtime *rt, void **state)
{
    (void)rt;
    ac__links *L = calloc(1, sizeof *L);
    if (L == NULL)
        return AC_ENOMEM;
    if (ac__amap_init(&L->map) != 0) {
        free(L);
        return AC_ENOMEM;
    }
    pthread_mutex_init(&L->lock, NULL);
    *state = L;
    return 0;
}

/* Chains the records through their end 0, each once. */
static void gather(ac__amap_node *x, void *arg)
{
    ac__amap_node **all = arg;
    if (x->extra == 0) {
        x->next = *all;
        *all = x;
    }
}

static void fini(void *state)
{
    ac__links *L = state;
    ac__amap *m = &L->map;
    /* Each record has two nodes on the map: gather the records, then free
     * them once the walk is over. */
    ac__amap_node *all = NULL;
    ac__amap_each(m, gather, &all);
    for (ac__amap_node *x = all, *next; x != NULL; x = next) {
        next = x->next;
        free(AC__CONTAINER_OF(x, link_rec, end[0]));
    }
    ac__amap_destroy(m);
    pthread_mutex_destroy(&L->lock);
    free(L);
}

/* The link between a and b, or NULL. Under the lock. */
static link_rec *find(ac__links *L, const ac_addr *a, const ac_addr *b)
{
    for (int e = 0; e < 2; e++) {
        for (ac__amap_node *x = ac__amap_find(&L->map, a, (uint64_t)e); x != NULL;
             x = ac__amap_find_next(x)) {
            int which;
            link_rec *r = rec_of(x, &which);
            if (ac_addr_eq(&r->end[1 - which].key, b))
                return r;
        }
    }
    return NULL;
}

static int link_new(ac_ctx *cx, ac__links *L, ac__actor *a, const ac_addr *other)
{
    if (ac_addr_eq(&a->addr, other))
        return AC_EINVAL;
    link_rec *r = malloc(sizeof *r);
    if (r == NULL)
        return AC_ENOMEM;
    ac__enter(cx);
    pthread_mutex_lock(&L->lock);
    int rc = 0;
    if (!ac__service_alive(cx, a) || ac__service_target(cx, other) == NULL) {
        rc = AC_ENOTFOUND;
    } else if (find(L, &a->addr, other) == NULL) {
        /* `extra` tells the ends apart (rec_of); both are found by
         * address, whichever end it is. */
        r->end[0].key = a->addr;
        r->end[0].extra = 0;
        r->end[1].key = *other;
        r->end[1].extra = 1;
        ac__amap_add(&L->map, &r->end[0]);
        ac__amap_add(&L->map, &r->end[1]);
        r = NULL;
    }
    pthread_mutex_unlock(&L->lock);
    ac__leave(cx);
    free(r);
    return rc;
}

int ac_link(ac_ctx *cx, const ac_addr *other)
{
    if (cx == NULL || other == NULL)
        return AC_EINVAL;
    ac__actor *self = ac__current(cx);
    if (self == NULL)
        return AC_ESTATE;
    return link_new(cx, links_of(cx), self, other);
}

/* ac_spawn_options.link: the new actor is linked before its start hook. */
static int attach(ac_ctx *cx, void *state, ac__actor *a, const ac_spawn_options *o)
{
    return o->link ? link_new(cx, state, a, o->link) : 0;
}

int ac_unlink(ac_ctx *cx, const ac_addr *other)
{
    if (cx == NULL || other == NULL)
        return AC_EINVAL;
    ac__actor *self = ac__current(cx);
    if (self == NULL)
        return AC_ESTATE;
    ac__links *L = links_of(cx);
    pthread_mutex_lock(&L->lock);
    link_rec *r = find(L, &self->addr, other);
    if (r) {
        ac__amap_remove(&L->map, &r->end[0]);
        ac__amap_remove(&L->map, &r->end[1]);
    }
    pthread_mutex_unlock(&L->lock);
    free(r);
    return r ? 0 : AC_ENOTFOUND;
}

static void send_exit(ac_ctx *cx, const ac_addr *to, const ac_addr *who, int reason, int code)
{
    ac__env *e = ac__system_envelope(cx, AC_TAG_EXIT, sizeof(ac_exit));
    if (e == NULL)
        return;
    ac_exit *x = ac_envelope_payload(ac__env_pub(e));
    x->who = *who;
    x->reason = reason;
    x->code = code;
    (void)ac__send_system(cx, to, e);
}

/* Tells the other end of a link that `a` died. Online (die() runs in a
 * turn or inside ac__enter). */
static void notify(ac_ctx *cx, ac__actor *a, const ac_addr *other, int reason, int code)
{
    ac__actor *o = ac__lookup(cx, other);
    if (o == NULL)
        return;
    /* Relaxed: the other actor sets the flag on itself; a concurrent
     * change of mind races with the death either way. */
    if (ac__flags(o) & AC__ACTOR_TRAP_EXITS)
        send_exit(cx, other, &a->addr, reason, code);
    else if (reason != AC_REASON_NORMAL)
        (void)ac__kill(cx, o, AC_REASON_KILLED, code);
}

static void died(ac_ctx *cx, void *state, ac__actor *a, int reason, int code)
{
    ac__links *L = state;
    ac__amap_node *ends[2];
    pthread_mutex_lock(&L->lock);
    for (int e = 0; e < 2; e++) {
        ends[e] = ac__amap_take(&L->map, &a->addr, (uint64_t)e);
        for (ac__amap_node *x = ends[e]; x != NULL; x = x->next)
            ac__amap_remove(&L->map, &AC__CONTAINER_OF(x, link_rec, end[e])->end[1 - e]);
    }
    pthread_mutex_unlock(&L->lock);
    for (int e = 0; e < 2; e++) {
        for (ac__amap_node *x = ends[e], *next; x != NULL; x = next) {
            next = x->next;
            link_rec *r = AC__CONTAINER_OF(x, link_rec, end[e]);
            notify(cx, a, &r->end[1 - e].key, reason, code);
            free(r);
        }
    }
}

const ac__service ac__links_service = {
    .name = "links",
    .init = init,
    .fini = fini,
    .attach = attach,
    .died = died,
};
