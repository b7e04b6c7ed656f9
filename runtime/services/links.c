/*
 * links.c — links: two actors bound so that the abnormal death of either
 * ends the other, unless it traps exits and is told with an `exit` message
 * (Erlang's link/1 and trap_exit; CAF's link_to).
 *
 * A link is one record with a node on each end, both on one map keyed by
 * the end's address, and one on a map keyed by the pair (is a-b linked?),
 * under one lock (links change rarely: at spawn, on restarts). When an actor dies, taking its nodes off the map tells who
 * was linked to it; the other ends are unlinked in the same critical
 * section, so each link fires once even if both ends die together.
 *
 * Across nodes (docs/NODES.md) each node keeps the link with its own end:
 * LINK control records make it there (ADD), undo it (DEL) and carry a
 * death (EXIT), in order behind what the dead actor sent before; a lost
 * node ends every link to its actors with AC_REASON_NOCONNECTION.
 */
#include "services.h"

#include "../lib/amap.h"
#include "../lib/frame.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct link_rec {
    ac__amap_node end[2];
    ac__amap_node pair;     /* keyed by both ends (pair_key) */
} link_rec;

/* LINK control records: a sub-op byte, the sender's end, the receiver's,
 * and for EXIT the reason and code. */
enum { LINK_ADD = 1, LINK_DEL = 2, LINK_EXIT = 3 };

typedef struct ac__links {
    pthread_mutex_t lock;
    ac__amap map;           /* both ends of every link */
    ac__amap pairs;         /* every link by its two ends: whether a-b is
                               linked is one lookup, however many links
                               a has (a walk of them made N links O(N²)) */
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
    if (ac__amap_init(&L->map) != 0 || ac__amap_init(&L->pairs) != 0) {
        ac__amap_destroy(&L->map);
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
    ac__amap_destroy(&L->pairs);
    pthread_mutex_destroy(&L->lock);
    free(L);
}

/* The key of the pair a-b, the same both ways: the lower address, and
 * the higher one's digest under the map's key (ends whose digests agree
 * share a key, and are told apart by find). Keyed, not the address's
 * first bytes: a peer node chooses its actors' addresses, and could link
 * one actor to many that share those bytes, all under one key, whose
 * list find walks. */
static void pair_key(const ac__links *L, const ac_addr *a, const ac_addr *b, ac_addr *key,
                     uint64_t *extra)
{
    bool a_low = memcmp(a->bytes, b->bytes, sizeof a->bytes) < 0;
    *key = a_low ? *a : *b;
    *extra = ac__amap_digest(&L->pairs, a_low ? b : a);
}

/* The link between a and b, or NULL. Under the lock. */
static link_rec *find(ac__links *L, const ac_addr *a, const ac_addr *b)
{
    ac_addr key;
    uint64_t extra;
    pair_key(L, a, b, &key, &extra);
    for (ac__amap_node *x = ac__amap_find(&L->pairs, &key, extra); x != NULL;
         x = ac__amap_find_next(x)) {
        link_rec *r = AC__CONTAINER_OF(x, link_rec, pair);
        for (int e = 0; e < 2; e++)
            if (ac_addr_eq(&r->end[e].key, a) && ac_addr_eq(&r->end[1 - e].key, b))
                return r;
    }
    return NULL;
}

/* Records the link a-b; locked. */
static void add(ac__links *L, link_rec *r, const ac_addr *a, const ac_addr *b)
{
    /* `extra` tells the ends apart (rec_of); both are found by address,
     * whichever end it is. */
    r->end[0].key = *a;
    r->end[0].extra = 0;
    r->end[1].key = *b;
    r->end[1].extra = 1;
    ac__amap_add(&L->map, &r->end[0]);
    ac__amap_add(&L->map, &r->end[1]);
    pair_key(L, a, b, &r->pair.key, &r->pair.extra);
    ac__amap_add(&L->pairs, &r->pair);
}

/* Takes r off every map; locked. */
static void unlink_rec(ac__links *L, link_rec *r)
{
    ac__amap_remove(&L->map, &r->end[0]);
    ac__amap_remove(&L->map, &r->end[1]);
    ac__amap_remove(&L->pairs, &r->pair);
}

/* Removes the link a-b if it is there: true for the one caller that did. */
static bool take(ac__links *L, const ac_addr *a, const ac_addr *b)
{
    pthread_mutex_lock(&L->lock);
    link_rec *r = find(L, a, b);
    if (r)
        unlink_rec(L, r);
    pthread_mutex_unlock(&L->lock);
    free(r);
    return r != NULL;
}

/* A LINK record from our end `mine` to `theirs`, on its node. */
static int transmit(ac_ctx *cx, uint8_t op, const ac_addr *mine, const ac_addr *theirs,
                    int reason, int code)
{
    uint8_t buf[1 + 32 + 32 + 4 + 4];
    ac_wire_out o = {buf, sizeof buf, 0};
    ac_wire_u8(&o, op);
    ac_wire_bytes(&o, mine->bytes, 32);
    ac_wire_bytes(&o, theirs->bytes, 32);
    if (op == LINK_EXIT) {
        ac_wire_u32(&o, (uint32_t)reason);
        ac_wire_u32(&o, (uint32_t)code);
    }
    return ac__services_transmit(cx, ac_addr_node(theirs), AC__OP_LINK, buf, o.len, false);
}

static int link_new(ac_ctx *cx, ac__links *L, ac__actor *a, const ac_addr *other)
{
    if (ac_addr_eq(&a->addr, other))
        return AC_EINVAL;
    link_rec *r = malloc(sizeof *r);
    if (r == NULL)
        return AC_ENOMEM;
    bool remote = ac__addr_remote(cx, other), made = false;
    ac__enter(cx);
    pthread_mutex_lock(&L->lock);
    int rc = 0;
    if (!ac__service_alive(cx, a) || (!remote && ac__service_target(cx, other) == NULL)) {
        rc = AC_ENOTFOUND;
    } else if (find(L, &a->addr, other) == NULL) {
        add(L, r, &a->addr, other);
        r = NULL;
        made = true;
    }
    pthread_mutex_unlock(&L->lock);
    ac__leave(cx);
    free(r);
    /* The other end's node links its half, or answers NOPROC. */
    if (made && remote && transmit(cx, LINK_ADD, &a->addr, other, 0, 0) != 0 &&
        take(L, &a->addr, other))
        rc = AC_ENOCONNECTION;
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
    if (!take(links_of(cx), &self->addr, other))
        return AC_ENOTFOUND;
    if (ac__addr_remote(cx, other))
        (void)transmit(cx, LINK_DEL, &self->addr, other, 0, 0);
    return 0;
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

/* Tells `other`, the other end of a link, that `dead` died; online. */
static void notify(ac_ctx *cx, const ac_addr *dead, const ac_addr *other, int reason, int code)
{
    if (ac__addr_remote(cx, other)) {
        (void)transmit(cx, LINK_EXIT, dead, other, reason, code);
        return;
    }
    ac__actor *o = ac__lookup(cx, other);
    if (o == NULL)
        return;
    /* Relaxed: the other actor sets the flag on itself; a concurrent
     * change of mind races with the death either way. */
    if (ac__flags(o) & AC__ACTOR_TRAP_EXITS)
        send_exit(cx, other, dead, reason, code);
    else if (reason != AC_REASON_NORMAL)
        (void)ac__kill(cx, o, AC_REASON_KILLED, code);
}

/* notify, online as it needs (a record's arrival, a node's loss). */
static void notify_online(ac_ctx *cx, const ac_addr *dead, const ac_addr *other, int reason,
                          int code)
{
    ac__enter(cx);
    notify(cx, dead, other, reason, code);
    ac__leave(cx);
}

static void died(ac_ctx *cx, void *state, ac__actor *a, int reason, int code)
{
    ac__links *L = state;
    ac__amap_node *ends[2];
    pthread_mutex_lock(&L->lock);
    for (int e = 0; e < 2; e++) {
        ends[e] = ac__amap_take(&L->map, &a->addr, (uint64_t)e);
        for (ac__amap_node *x = ends[e]; x != NULL; x = x->next) {
            link_rec *r = AC__CONTAINER_OF(x, link_rec, end[e]);
            ac__amap_remove(&L->map, &r->end[1 - e]);
            ac__amap_remove(&L->pairs, &r->pair);
        }
    }
    pthread_mutex_unlock(&L->lock);
    for (int e = 0; e < 2; e++) {
        for (ac__amap_node *x = ends[e], *next; x != NULL; x = next) {
            next = x->next;
            link_rec *r = AC__CONTAINER_OF(x, link_rec, end[e]);
            notify(cx, &a->addr, &r->end[1 - e].key, reason, code);
            free(r);
        }
    }
}

/* ---- across nodes ------------------------------------------------------------------- */

/* Another node's actor links to ours (ADD): our half is made if ours
 * lives, else the answer is its NOPROC exit. */
static int remote_add(ac_ctx *cx, ac__links *L, const ac_addr *theirs, const ac_addr *ours)
{
    link_rec *r = malloc(sizeof *r);
    if (r == NULL)
        return AC_ENOMEM;
    ac__enter(cx);
    pthread_mutex_lock(&L->lock);
    bool alive = ac__service_target(cx, ours) != NULL;
    if (alive && find(L, ours, theirs) == NULL) {
        add(L, r, ours, theirs);
        r = NULL;
    }
    pthread_mutex_unlock(&L->lock);
    ac__leave(cx);
    free(r);
    if (!alive)
        (void)transmit(cx, LINK_EXIT, ours, theirs, AC_REASON_NOPROC, 0);
    return 0;
}

/* A LINK record from node `from`: its sender's end must live there. */
static int control(ac_ctx *cx, void *state, uint64_t from, const uint8_t *body, size_t len)
{
    ac__links *L = state;
    ac_wire_in in = {body, len, 0, false, 0};
    uint8_t op = ac_wire_get_u8(&in);
    ac_addr theirs, ours;
    memcpy(theirs.bytes, ac_wire_take(&in, 32), 32);
    memcpy(ours.bytes, ac_wire_take(&in, 32), 32);
    int reason = 0, code = 0;
    if (op == LINK_EXIT) {
        reason = (int)ac_wire_get_u32(&in);
        code = (int)ac_wire_get_u32(&in);
    }
    if (in.bad || in.pos != len || op < LINK_ADD || op > LINK_EXIT || ac__addr_remote(cx, &ours))
        return AC_EINVAL;
    if (ac_addr_node(&theirs) != from)
        return AC__EFORGED;
    if (op == LINK_ADD)
        return remote_add(cx, L, &theirs, &ours);
    if (take(L, &ours, &theirs) && op == LINK_EXIT)
        notify_online(cx, &theirs, &ours, reason, code);
    return 0;
}

/* An end on node *arg. */
static bool on_node(const ac__amap_node *x, void *arg)
{
    return ac_addr_node(&x->key) == *(const uint64_t *)arg;
}

/* Node `node` is gone: every link to its actors ends with NOCONNECTION. */
static void node_lost(ac_ctx *cx, void *state, uint64_t node)
{
    ac__links *L = state;
    pthread_mutex_lock(&L->lock);
    ac__amap_node *found = ac__amap_select(&L->map, on_node, &node);
    for (ac__amap_node *x = found; x != NULL; x = x->next) {
        int which;
        unlink_rec(L, rec_of(x, &which));
    }
    pthread_mutex_unlock(&L->lock);
    for (ac__amap_node *x = found, *next; x != NULL; x = next) {
        next = x->next;
        int which;
        link_rec *r = rec_of(x, &which);
        notify_online(cx, &x->key, &r->end[1 - which].key, AC_REASON_NOCONNECTION, 0);
        free(r);
    }
}

const ac__service ac__links_service = {
    .name = "links",
    .init = init,
    .fini = fini,
    .attach = attach,
    .died = died,
    .control_op = AC__OP_LINK,
    .control = control,
    .node_lost = node_lost,
};
