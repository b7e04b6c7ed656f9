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
 * After ac_unlink returns, no exit of that link reaches the caller, even
 * one already on its way (Erlang's unlink/1). So a death does not forget
 * the link at once: the exit for the other end is queued *under the lock*,
 * marked for screening, and the record stays on the maps by that end
 * (fired toward it) until the end takes the exit off its queue (screen,
 * below). ac_unlink either comes first (no exit is sent) or removes the
 * fired record, and the exit, when taken, finds none and is dropped,
 * counted in `unhandled`. Whether the exit kills its receiver or reaches
 * it as a message is decided then too, when it is taken, as Erlang decides
 * on trap_exit when the signal is received: an actor not trapping exits
 * is killed there, after what was queued in front of the exit.
 *
 * Across nodes (docs/NODES.md) each node keeps the link with its own end:
 * LINK control records make it there (ADD), undo it (DEL) and carry a
 * death (EXIT), in order behind what the dead actor sent before; a lost
 * node ends every link to its actors with AC_REASON_NOCONNECTION.
 */
#include "remote.h"
#include "services.h"

#include "../lib/amap.h"
#include "../lib/quota.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct link_rec {
    ac__amap_node end[2];
    ac__amap_node pair;     /* keyed by both ends (pair_key) */
    int toward;             /* LIVE, or the end (0, 1) whose exit is queued:
                               only that end's node is still on the map */
    bool charged;           /* made by end 1's node (remote_add): counted
                               in its quota */
} link_rec;

enum { LIVE = -1 };

/* LINK control records (remote.h): the sender's end, the receiver's, and
 * for EXIT the reason and code. */
enum { LINK_ADD = 1, LINK_DEL = 2, LINK_EXIT = 3 };
static const uint8_t shapes[] = {
    [LINK_ADD] = AC__NOTE_SECOND,
    [LINK_DEL] = AC__NOTE_SECOND,
    [LINK_EXIT] = AC__NOTE_SECOND | AC__NOTE_FATE,
};
static const ac__note_shapes notes = {AC__OP_LINK, shapes, sizeof shapes};

static int control(ac_ctx *cx, void *state, uint64_t from, const uint8_t *body, size_t len);
static void node_lost(ac_ctx *cx, void *state, uint64_t node);
static const ac__remote_role role = {
    .op = AC__OP_LINK, .control = control, .node_lost = node_lost};

typedef struct ac__links {
    pthread_mutex_t lock;
    ac__amap map;           /* both ends of every link */
    ac__amap pairs;         /* every link by its two ends: whether a-b is
                               linked is one lookup, however many links
                               a has (a walk of them made N links O(N²)) */
    ac__quota peers;        /* links other nodes made, by their node */
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
    return ac__remote_register(rt, &role, L);
}

/* Chains the records through their pair node: every record has one. */
static void gather(ac__amap_node *x, void *arg)
{
    ac__amap_node **all = arg;
    x->next = *all;
    *all = x;
}

static void fini(void *state)
{
    ac__links *L = state;
    /* Gather the records, then free them once the walk is over. */
    ac__amap_node *all = NULL;
    ac__amap_each(&L->pairs, gather, &all);
    for (ac__amap_node *x = all, *next; x != NULL; x = next) {
        next = x->next;
        free(AC__CONTAINER_OF(x, link_rec, pair));
    }
    ac__amap_destroy(&L->map);
    ac__amap_destroy(&L->pairs);
    ac__quota_fini(&L->peers);
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

/* A record of a and b, or NULL: the live link (fired = false), or one
 * fired toward a whose exit from b is queued (fired = true). Locked. */
static link_rec *find(ac__links *L, const ac_addr *a, const ac_addr *b, bool fired)
{
    ac_addr key;
    uint64_t extra;
    pair_key(L, a, b, &key, &extra);
    for (ac__amap_node *x = ac__amap_find(&L->pairs, &key, extra); x != NULL;
         x = ac__amap_find_next(x)) {
        link_rec *r = AC__CONTAINER_OF(x, link_rec, pair);
        for (int e = 0; e < 2; e++)
            if (ac_addr_eq(&r->end[e].key, a) && ac_addr_eq(&r->end[1 - e].key, b) &&
                (fired ? r->toward == e : r->toward == LIVE))
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
    r->toward = LIVE;
    r->charged = false;
    ac__amap_add(&L->map, &r->end[0]);
    ac__amap_add(&L->map, &r->end[1]);
    pair_key(L, a, b, &r->pair.key, &r->pair.extra);
    ac__amap_add(&L->pairs, &r->pair);
}

/* Takes r off every map it is on; locked. */
static void unlink_rec(ac__links *L, link_rec *r)
{
    for (int e = 0; e < 2; e++)
        if (r->toward == LIVE || r->toward == e)
            ac__amap_remove(&L->map, &r->end[e]);
    ac__amap_remove(&L->pairs, &r->pair);
    if (r->charged)
        ac__quota_give(&L->peers, ac_addr_node(&r->end[1].key));
    r->charged = false;
}

/* Removes the live link a-b if it is there: true for the one caller that
 * did. */
static bool take(ac__links *L, const ac_addr *a, const ac_addr *b)
{
    pthread_mutex_lock(&L->lock);
    link_rec *r = find(L, a, b, false);
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
    ac__note n = {op, *mine, *theirs, 0, reason, code};
    return ac__note_send(cx, &notes, ac_addr_node(theirs), &n);
}

static int link_new(ac_ctx *cx, ac__links *L, ac__actor *a, const ac_addr *other)
{
    if (ac_addr_eq(&a->addr, other))
        return 0;  /* Erlang's link(self()): nothing to do, and no error */
    link_rec *r = malloc(sizeof *r);
    if (r == NULL)
        return AC_ENOMEM;
    bool remote = ac__addr_remote(cx, other), made = false;
    ac__enter(cx);
    pthread_mutex_lock(&L->lock);
    int rc = 0;
    if (!ac__service_alive(cx, a) || (!remote && ac__service_target(cx, other) == NULL)) {
        rc = AC_ENOTFOUND;
    } else if (find(L, &a->addr, other, false) == NULL) {
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
    if (ac_addr_eq(&self->addr, other))
        return 0;  /* as linking to oneself: nothing */
    ac__links *L = links_of(cx);
    pthread_mutex_lock(&L->lock);
    /* The link, and an exit of it already queued for us (the other end
     * died, or died and came back at its address and was linked again):
     * both go, and such an exit is dropped when we take it. */
    link_rec *live = find(L, &self->addr, other, false);
    if (live != NULL)
        unlink_rec(L, live);
    link_rec *fired = find(L, &self->addr, other, true);
    if (fired != NULL)
        unlink_rec(L, fired);
    pthread_mutex_unlock(&L->lock);
    free(fired);
    if (live == NULL)
        return fired != NULL ? 0 : AC_ENOTFOUND;
    free(live);
    if (ac__addr_remote(cx, other))
        (void)transmit(cx, LINK_DEL, &self->addr, other, 0, 0);
    return 0;
}

/* Queues for an end the exit of a link whose other end died. */
static int send_exit(ac_ctx *cx, const ac_addr *to, const ac_addr *who, int reason, int code)
{
    ac__env *e = ac__system_envelope(cx, AC_TAG_EXIT, sizeof(ac_exit));
    if (e == NULL)
        return AC_ENOMEM;
    e->flags |= AC__ENV_SCREEN;
    ac_exit *x = ac_envelope_payload(ac__env_pub(e));
    x->who = *who;
    x->reason = reason;
    x->code = code;
    return ac__send_system(cx, to, e);
}

/* End `dead` of r is gone (its node already off the map) and the other,
 * local, end hears of it: its exit is queued before the lock is released,
 * so that ac_unlink finds either the link or the exit it must withdraw,
 * and r stays, fired toward that end, until the exit is taken (screen).
 * False when nothing was sent (the end is gone, an inbox, or neither
 * traps exits nor would be killed): r is then the caller's to remove.
 * Locked, online. */
static bool fire(ac_ctx *cx, link_rec *r, int dead, int reason, int code)
{
    const ac_addr *to = &r->end[1 - dead].key;
    ac__actor *o = ac__lookup(cx, to);
    if (o == NULL || (o->attrs & AC__ATTR_INBOX))
        return false;
    /* Relaxed: the actor sets the flag on itself; a normal death reaches
     * only an end that traps exits, which it checks again when it takes
     * the exit. */
    if (reason == AC_REASON_NORMAL && !(ac__flags(o) & AC__ACTOR_TRAP_EXITS))
        return false;
    if (send_exit(cx, to, &r->end[dead].key, reason, code) != 0)
        return false;
    r->toward = 1 - dead;
    return true;
}

/* The remote end `dead` of the live link r died, or its node was lost:
 * its node leaves the map and the local end hears of it. True when r
 * stays, fired (fire); false when it is off every map, the caller's to
 * free. One place for both ways a remote end goes (fire_remote,
 * node_lost). Locked, online. */
static bool fire_lost(ac_ctx *cx, ac__links *L, link_rec *r, int dead, int reason, int code)
{
    ac__amap_remove(&L->map, &r->end[dead]);
    if (fire(cx, r, dead, reason, code))
        return true;
    r->toward = 1 - dead;  /* its one node left is the local end's */
    unlink_rec(L, r);
    return false;
}

/* The live link of `ours` and `theirs` ends with theirs's death, reported
 * by its node or by the loss of its node: ours hears of it. */
static void fire_remote(ac_ctx *cx, ac__links *L, const ac_addr *ours, const ac_addr *theirs,
                        int reason, int code)
{
    ac__enter(cx);
    pthread_mutex_lock(&L->lock);
    link_rec *r = find(L, ours, theirs, false);
    if (r != NULL && fire_lost(cx, L, r, ac_addr_eq(&r->end[0].key, theirs) ? 0 : 1, reason,
                               code))
        r = NULL;
    pthread_mutex_unlock(&L->lock);
    ac__leave(cx);
    free(r);
}

static void died(ac_ctx *cx, void *state, ac__actor *a, const ac__death *d)
{
    ac__links *L = state;
    ac__amap_node *gone = NULL;  /* records to free, by their end[e].next */
    pthread_mutex_lock(&L->lock);
    for (int e = 0; e < 2; e++) {
        ac__amap_node *ends = ac__amap_take(&L->map, &a->addr, (uint64_t)e);
        for (ac__amap_node *x = ends, *next; x != NULL; x = next) {
            next = x->next;
            link_rec *r = AC__CONTAINER_OF(x, link_rec, end[e]);
            const ac_addr *other = &r->end[1 - e].key;
            bool keep = false;
            if (r->toward == LIVE && !ac__addr_remote(cx, other))
                keep = fire(cx, r, e, d->reason, d->code);
            if (keep)
                continue;
            /* A remote end's node is told after the lock; an exit that
             * was queued for us (toward e) dies with us. */
            if (r->toward == LIVE)
                ac__amap_remove(&L->map, &r->end[1 - e]);
            ac__amap_remove(&L->pairs, &r->pair);
            if (r->charged)
                ac__quota_give(&L->peers, ac_addr_node(&r->end[1].key));
            x->next = gone;
            gone = x;
        }
    }
    pthread_mutex_unlock(&L->lock);
    for (ac__amap_node *x = gone, *next; x != NULL; x = next) {
        next = x->next;
        int e;
        link_rec *r = rec_of(x, &e);
        if (r->toward == LIVE && ac__addr_remote(cx, &r->end[1 - e].key))
            (void)transmit(cx, LINK_EXIT, &a->addr, &r->end[1 - e].key, d->reason, d->code);
        free(r);
    }
}

/* An exit is taken by its end: it passes (an `exit` message) if the link
 * fired toward it is still there and the end traps exits; an end that does
 * not is killed here, by an abnormal death (AC_REASON_KILLED with its
 * code), and ignores a normal one. Without the record the link was undone
 * after the exit was queued, and the exit is dropped. */
static int screen(ac_ctx *cx, void *state, ac__actor *a, const ac__env *e)
{
    ac__links *L = state;
    const ac_exit *x = ac_envelope_payload(ac__env_pub((ac__env *)e));
    pthread_mutex_lock(&L->lock);
    link_rec *r = find(L, &a->addr, &x->who, true);
    if (r != NULL)
        unlink_rec(L, r);
    pthread_mutex_unlock(&L->lock);
    if (r == NULL)
        return AC__SCREEN_VOID;
    free(r);
    if (ac__flags(a) & AC__ACTOR_TRAP_EXITS)
        return AC__SCREEN_PASS;
    /* Out of memory for the kill, the actor lives on: the exit is lost as
     * a message would be. */
    if (x->reason != AC_REASON_NORMAL)
        (void)ac__kill(cx, a, AC_REASON_KILLED, x->code);
    return AC__SCREEN_TAKEN;
}

/* ---- across nodes ------------------------------------------------------------------- */

/* Another node's actor links to ours (ADD): our half is made if ours
 * lives, else the answer is its NOPROC exit; refused past its node's
 * quota, answered with a NOCONNECTION exit (this node will not keep it,
 * as if the link had gone). */
static int remote_add(ac_ctx *cx, ac__links *L, const ac_addr *theirs, const ac_addr *ours)
{
    uint32_t quota = ac__peer_quota(cx);
    link_rec *r = malloc(sizeof *r);
    if (r == NULL)
        return AC_ENOMEM;
    ac__enter(cx);
    pthread_mutex_lock(&L->lock);
    bool alive = ac__service_target(cx, ours) != NULL, refused = false;
    if (alive && find(L, ours, theirs, false) == NULL) {
        refused = !ac__quota_take(&L->peers, ac_addr_node(theirs), quota);
        if (!refused) {
            add(L, r, ours, theirs);
            r->charged = true;
            r = NULL;
        }
    }
    pthread_mutex_unlock(&L->lock);
    ac__leave(cx);
    free(r);
    if (!alive || refused)
        (void)transmit(cx, LINK_EXIT, ours, theirs,
                       refused ? AC_REASON_NOCONNECTION : AC_REASON_NOPROC, 0);
    return refused ? AC__EQUOTA : 0;
}

/* A LINK record from node `from`: its sender's end must live there. */
static int control(ac_ctx *cx, void *state, uint64_t from, const uint8_t *body, size_t len)
{
    ac__links *L = state;
    ac__note n;
    int rc = ac__note_read(cx, &notes, from, body, len, &n);
    if (rc != 0)
        return rc;
    const ac_addr *theirs = &n.first, *ours = &n.second;
    if (n.op == LINK_ADD)
        return remote_add(cx, L, theirs, ours);
    if (n.op == LINK_EXIT)
        fire_remote(cx, L, ours, theirs, n.reason, n.code);
    else
        (void)take(L, ours, theirs);
    return 0;
}

/* Node `node` is gone: every link to its actors ends with NOCONNECTION.
 * Its ends on the map are of live links: a fired link keeps only its
 * local end there. */
static void node_lost(ac_ctx *cx, void *state, uint64_t node)
{
    ac__links *L = state;
    ac__enter(cx);
    pthread_mutex_lock(&L->lock);
    ac__amap_node *found = ac__amap_select(&L->map, ac__note_on_node, &node);
    for (ac__amap_node *x = found, *next; x != NULL; x = next) {
        next = x->next;
        int dead;
        link_rec *r = rec_of(x, &dead);
        if (!fire_lost(cx, L, r, dead, AC_REASON_NOCONNECTION, 0))
            free(r);
    }
    pthread_mutex_unlock(&L->lock);
    ac__leave(cx);
}

const ac__service ac__links_service = {
    .name = "links",
    .init = init,
    .fini = fini,
    .attach = attach,
    .died = died,
    .screens = AC_TAG_EXIT,
    .screen = screen,
};
