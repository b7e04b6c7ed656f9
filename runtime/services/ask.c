/*
 * ask.c — request/reply: asynchronous asks inside actors, with a
 * continuation and a timeout; blocking asks outside them, on an inbox.
 *
 * A request carries an ac_reply_to at the start of its payload; the reply
 * is a system envelope (AC_TAG_REPLY) that the replier sends to that
 * address with the id in its head. An actor's pending asks live in one
 * table per runtime, keyed by the asker's address and the ask's id, under
 * one lock (asks are not on the plain send path). The reply reaches the
 * asker as a message, so its continuation runs as one of its turns, with
 * its state, never concurrently with its handlers (this service consumes
 * AC_TAG_REPLY: the core hands such a message to `deliver`, below). Whoever removes the record —
 * the reply, the timeout, or the asker's death — is the only one to act
 * on it, which is what makes the continuation run at most once; the
 * reply or the timeout, one of which always comes while the asker lives,
 * makes it exactly once. A request its target dies with is answered at
 * once (`unanswered`, below) the way a timeout is, so the asker need not
 * wait for the timeout to learn it.
 *
 * A timeout is a timer (ac__timer_after_system) whose message is the
 * timed-out reply itself, sent to the asker. The timer is started in the
 * asker's handler, so it is the asker's: its death cancels it (timers.c). A
 * record made by a dying actor is refused by the services' protocol
 * (core/service.c), so none outlives its asker.
 *
 * Across nodes (docs/NODES.md): a reply to another node's asker travels
 * as a REPLY control record, its body encoded by the replier's type; the
 * asker's node decodes it with the same type, which it knows because the
 * ask was sent typed (every type an ask went out with is kept, by type
 * id). An ask to another node remembers that node, and so does a blocking
 * one (in `waits`): when the node is lost, each is answered at once with
 * AC_ENOCONNECTION, and a reply is believed only from the node asked.
 */
#include "services.h"
#include "timers.h"

#include "../lib/amap.h"
#include "../lib/frame.h"

#include <pthread.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ac_reply_head.flags: made by the runtime, not by a replier. */
enum {
    FROM_TIMER = 1u,  /* the ask's timeout */
    FROM_NODE = 2u,   /* the target's node was lost */
    FROM_GONE = 4u    /* the target died (or was gone) with the request */
};

typedef struct ask {
    ac__amap_node node;     /* key: the asker; extra: the ask's id */
    ac__amap_node by_asker; /* key: the asker: its death finds them all */
    ac_reply_call_fn call;  /* NULL: fn is an ac_reply_fn */
    ac_any_fn fn;
    void *arg;
    ac_timer_id timer;      /* 0: no timeout */
    uint64_t target_node;   /* the target's node when remote, else 0 */
    /* ac_ask_ctx: the asker's context, copied in, so that the common ask
     * carries what its continuation needs without an allocation of its
     * own; `arg` then points here. */
    alignas(16) unsigned char context[AC_ASK_CONTEXT_MAX];
} ask;

/* A blocking ask to another node: key, the inbox; extra, the ask's id. */
typedef struct remote_wait {
    ac__amap_node node;
    uint64_t target_node;
} remote_wait;

/* A type an ask went out with to another node, for decoding its replies. */
typedef struct known_type {
    uint64_t id;
    const ac_actor_type *type;
} known_type;

typedef struct ac__asks {
    pthread_mutex_t lock;
    ac__amap pending;
    ac__amap askers;         /* the pending asks by asker alone */
    ac__amap waits;          /* remote_wait records */
    known_type *types;
    size_t ntypes, types_cap;
    uint64_t next_id;
} ac__asks;

/* A thread's blocking asks (its context's slot): one inbox, kept, since
 * destroying one waits a grace period; the id of its last ask. */
typedef struct waiter {
    ac_inbox *inbox;
    uint64_t seq;
} waiter;

/* A reply envelope (AC_TAG_REPLY) with its head filled in. */
static ac__env *reply_new(ac_ctx *cx, uint64_t id, int status, uint32_t flags,
                          size_t body_size)
{
    ac__env *e = ac__system_envelope(cx, AC_TAG_REPLY, AC_REPLY_HEAD_SIZE + body_size);
    if (e == NULL)
        return NULL;
    ac_reply_head *h = ac_envelope_payload(ac__env_pub(e));
    h->id = id;
    h->status = status;
    h->flags = flags;
    return e;
}

static ac__asks *asks_of(ac_ctx *cx)
{
    return ac__service_state(ac_ctx_runtime(cx), AC__SERVICE_ask);
}

static int init(ac_runtime *rt, void **state)
{
    (void)rt;
    ac__asks *A = calloc(1, sizeof *A);
    if (A == NULL)
        return AC_ENOMEM;
    if (ac__amap_init(&A->pending) != 0 || ac__amap_init(&A->askers) != 0 ||
        ac__amap_init(&A->waits) != 0) {
        ac__amap_destroy(&A->pending);
        ac__amap_destroy(&A->askers);
        free(A);
        return AC_ENOMEM;
    }
    pthread_mutex_init(&A->lock, NULL);
    A->next_id = 1;
    *state = A;
    return 0;
}

/* Removes and returns the record of ask `id` of `asker`, or NULL. */
static ask *take(ac__asks *A, const ac_addr *asker, uint64_t id)
{
    pthread_mutex_lock(&A->lock);
    ac__amap_node *x = ac__amap_find(&A->pending, asker, id);
    ask *k = x ? AC__CONTAINER_OF(x, ask, node) : NULL;
    if (k != NULL) {
        ac__amap_remove(&A->pending, &k->node);
        ac__amap_remove(&A->askers, &k->by_asker);
    }
    pthread_mutex_unlock(&A->lock);
    return k;
}

static ac_reply_to *reply_to_of(ac_envelope *request)
{
    return (ac_reply_to *)ac_envelope_payload(request);
}

/* Keeps `type` for decoding the replies of asks to another node; locked.
 * Out of memory: its replies will be refused as undecodable. */
static void know_type(ac__asks *A, const ac_actor_type *type)
{
    for (size_t i = 0; i < A->ntypes; i++)
        if (A->types[i].type == type)
            return;
    if (A->ntypes == A->types_cap) {
        size_t cap = A->types_cap ? 2 * A->types_cap : 8;
        known_type *bigger = realloc(A->types, cap * sizeof *bigger);
        if (bigger == NULL)
            return;
        A->types = bigger;
        A->types_cap = cap;
    }
    A->types[A->ntypes++] = (known_type){ac__frame_type_id(type), type};
}

static const ac_actor_type *type_known(ac__asks *A, uint64_t id)
{
    const ac_actor_type *type = NULL;
    pthread_mutex_lock(&A->lock);
    for (size_t i = 0; i < A->ntypes && type == NULL; i++)
        if (A->types[i].id == id)
            type = A->types[i].type;
    pthread_mutex_unlock(&A->lock);
    return type;
}

/* An ask: the continuation's `arg`, or (ctx_size > 0) a copy of
 * ctx[0..ctx_size) in the record, which `arg` then points to. */
static int ask_start(ac_ctx *cx, const ac_addr *to, const ac_actor_type *type,
                     const ac_actor_type *asker, ac_envelope *request, uint32_t timeout_ms,
                     ac_reply_call_fn call, ac_any_fn fn, void *arg, const void *ctx,
                     size_t ctx_size)
{
    if (request == NULL || cx == NULL)
        return AC_EINVAL;
    int rc = 0;
    ac__actor *self = ac__current(cx);
    ac__asks *A = asks_of(cx);
    ask *k = NULL;
    if (self == NULL)
        rc = AC_ESTATE;
    else if (to == NULL || fn == NULL || request->tag >= AC_TAG_SYSTEM ||
             ctx_size > AC_ASK_CONTEXT_MAX || (ctx == NULL && ctx_size > 0) ||
             (asker != NULL && ac__type(self) != asker))
        rc = AC_EINVAL;
    else if ((k = calloc(1, sizeof *k)) == NULL)
        rc = AC_ENOMEM;
    if (rc != 0) {
        ac_envelope_free(cx, request);
        return rc;
    }
    k->call = call;
    k->fn = fn;
    k->arg = arg;
    if (ctx_size > 0) {
        memcpy(k->context, ctx, ctx_size);
        k->arg = k->context;
    }
    k->node.key = self->addr;
    k->target_node = ac__addr_remote(cx, to) ? ac_addr_node(to) : 0;

    /* Online: the per-actor-state protocol of core/service.c. */
    ac__enter(cx);
    pthread_mutex_lock(&A->lock);
    k->node.extra = A->next_id++;
    if (!ac__service_alive(cx, self))
        rc = AC_ESTATE;  /* asked from its stop hook: nobody will listen */
    else {
        ac__amap_add(&A->pending, &k->node);
        k->by_asker.key = self->addr;
        ac__amap_add(&A->askers, &k->by_asker);
    }
    if (rc == 0 && k->target_node != 0 && type != NULL)
        know_type(A, type);
    pthread_mutex_unlock(&A->lock);
    ac__leave(cx);
    uint64_t id = k->node.extra;
    if (rc != 0) {
        free(k);
        ac_envelope_free(cx, request);
        return rc;
    }

    if (timeout_ms > 0) {
        /* The timed-out reply itself, sent to us when the time is up. */
        ac__env *timeout = reply_new(cx, id, AC_ETIMEDOUT, FROM_TIMER, 0);
        /* The record is ours until the send: no reply can come yet. */
        rc = timeout ? ac__timer_after_system(cx, &self->addr, timeout_ms, timeout, &k->timer)
                     : AC_ENOMEM;
    }
    if (rc == 0) {
        ac_reply_to *back = reply_to_of(request);
        back->to = self->addr;
        back->id = id;
        ac__env_of(request)->flags |= AC__ENV_ASKED;  /* answered if dropped */
        rc = ac_send_checked(cx, to, type, request);
        request = NULL;
    }
    if (rc != 0) {
        /* Nothing was asked: undo, and fn never runs. */
        if (request != NULL)
            ac_envelope_free(cx, request);
        ask *mine = take(A, &self->addr, id);
        if (mine != NULL) {
            if (mine->timer != 0)
                (void)ac_timer_cancel(cx, mine->timer);
            free(mine);
        }
    }
    return rc;
}

int ac_ask_via(ac_ctx *cx, const ac_addr *to, const ac_actor_type *type,
               ac_envelope *request, uint32_t timeout_ms, ac_reply_call_fn call,
               ac_any_fn fn, void *arg)
{
    return ask_start(cx, to, type, NULL, request, timeout_ms, call, fn, arg, NULL, 0);
}

int ac_ask_ctx(ac_ctx *cx, const ac_addr *to, const ac_actor_type *type,
               const ac_actor_type *asker, ac_envelope *request, uint32_t timeout_ms,
               ac_reply_call_fn call, ac_any_fn fn, const void *ctx, size_t ctx_size)
{
    return ask_start(cx, to, type, asker, request, timeout_ms, call, fn, NULL, ctx,
                     ctx_size);
}

int ac_ask(ac_ctx *cx, const ac_addr *to, ac_envelope *request,
           uint32_t timeout_ms, ac_reply_fn fn, void *arg)
{
    return ac_ask_via(cx, to, NULL, request, timeout_ms, NULL, (ac_any_fn)fn, arg);
}

/* A reply (or a timeout) reached its asker `a`, as one of its turns. */
static int deliver(ac_ctx *cx, void *state, ac__actor *a, ac__env *e)
{
    ac_envelope *pub = ac__env_pub(e);
    const ac_reply_head *h = ac_envelope_payload(pub);
    ask *k = take(state, &a->addr, h->id);
    if (k == NULL) {
        /* The ask is over (answered, timed out): a late reply is a dead
         * letter; a late answer of the runtime's is nothing. */
        if (!(h->flags & (FROM_TIMER | FROM_NODE | FROM_GONE))) {
            ac__dead_letter(cx, &a->addr, e, AC_ENOTFOUND);
            return AC__DEAD_LETTERED;  /* not a message handled as well */
        }
        return 0;
    }
    if (k->timer != 0 && !(h->flags & FROM_TIMER))
        (void)ac_timer_cancel(cx, k->timer);
    const void *body = h->status == 0 ? ac_reply_body(pub) : NULL;
    int rc = k->call ? k->call(k->fn, a->state, cx, h->status, body, k->arg)
                     : ((ac_reply_fn)k->fn)(a->state, cx, h->status, body, k->arg);
    free(k);
    /* AC_EBADTAG would read as "no hook" to the core. */
    return rc == AC_EBADTAG ? AC_EFAILED : rc;
}

static void died(ac_ctx *cx, void *state, ac__actor *a, int reason, int code)
{
    (void)cx;
    (void)reason;
    (void)code;
    ac__asks *A = state;
    pthread_mutex_lock(&A->lock);
    /* By asker alone: `pending` is keyed by the ask's id too (taking
     * the asker with id 0 there found nothing, and a dead asker's
     * unanswered asks stayed until the runtime was destroyed). */
    ac__amap_node *gone = ac__amap_take(&A->askers, &a->addr, 0);
    for (ac__amap_node *x = gone; x != NULL; x = x->next)
        ac__amap_remove(&A->pending, &AC__CONTAINER_OF(x, ask, by_asker)->node);
    pthread_mutex_unlock(&A->lock);
    /* Their timers are the dead actor's: timers.c cancels them. */
    for (ac__amap_node *x = gone, *next; x != NULL; x = next) {
        next = x->next;
        free(AC__CONTAINER_OF(x, ask, by_asker));
    }
}

/* A request an ask sent was dropped for want of its actor (ac__dead_letter:
 * it died with the request queued or stashed, or the request was sent on
 * to an address that is gone): the asker gets AC_ENOTFOUND now, the code
 * an ask to a gone address returns at once, through the path its timeout
 * would take (a runtime reply, so a system message, and nothing when the
 * ask is over by then). Only local askers: a request from another node
 * reaches its target decoded, unmarked, so its asker still waits for its
 * timeout (the MSG record does not say which messages are requests). */
static void unanswered(ac_ctx *cx, void *state, ac__env *e)
{
    (void)state;
    const ac_reply_to *back = reply_to_of(ac__env_pub(e));
    if (ac__addr_remote(cx, &back->to))
        return;
    ac__env *r = reply_new(cx, back->id, AC_ENOTFOUND, FROM_GONE, 0);
    if (r != NULL)
        (void)ac__send_system(cx, &back->to, r);  /* out of memory: its timeout */
}

int ac_forward_typed(ac_ctx *cx, const ac_addr *to, const ac_actor_type *type,
                     ac_envelope *request)
{
    /* Marked only with an asker to answer: a request a plain send made
     * has a nil reply_to. A stale one gets an answer its asker finds over
     * (a system message, nothing more). */
    if (request != NULL && request->tag < AC_TAG_SYSTEM &&
        !ac_addr_is_nil(&reply_to_of(request)->to))
        ac__env_of(request)->flags |= AC__ENV_ASKED;
    return ac_send_typed(cx, to, type, request);
}

/* ---- replies ------------------------------------------------------------------ */

ac_envelope *ac_reply_new(ac_ctx *cx, const ac_reply_to *to, size_t body_size)
{
    if (cx == NULL || to == NULL || body_size > AC_MAX_PAYLOAD - AC_REPLY_HEAD_SIZE)
        return NULL;
    ac__env *e = reply_new(cx, to->id, 0, 0, body_size);
    return e ? ac__env_pub(e) : NULL;
}

/* A REPLY record's body (docs/WIRE.md, "Control records"): the asker,
 * the ask's id, the status, the replier's type id and the request's tag
 * (both 0 without a body), then the body as that type's reply codec for
 * that tag encodes it. */
#define REPLY_HEAD (32u + 8u + 4u + 8u + 4u)

/* A reply for an asker of another node, as a REPLY record to its node:
 * with a body only when the replier's type is known. */
static int reply_remote(ac_ctx *cx, const ac_reply_to *to, const ac_actor_type *type,
                        uint32_t tag, ac_envelope *reply)
{
    const ac_reply_head *h = ac_envelope_payload(reply);
    bool body = h->status == 0;
    long need = !body ? 0 : type && type->encode_reply ? type->encode_reply(tag, reply, NULL, 0)
                                                         : AC_EINVAL;
    uint8_t *buf = need >= 0 ? malloc(REPLY_HEAD + (size_t)need) : NULL;
    int rc = need < 0 ? (int)need : buf == NULL ? AC_ENOMEM : 0;
    if (rc == 0) {
        ac_wire_out o = {buf, REPLY_HEAD, 0};
        ac_wire_bytes(&o, to->to.bytes, sizeof to->to.bytes);
        ac_wire_u64(&o, to->id);
        ac_wire_u32(&o, (uint32_t)h->status);
        ac_wire_u64(&o, body ? ac__frame_type_id(type) : 0);
        ac_wire_u32(&o, body ? tag : 0);
        if (need > 0)
            (void)type->encode_reply(tag, reply, buf + REPLY_HEAD, (size_t)need);
        rc = ac__services_transmit(cx, ac_addr_node(&to->to), AC__OP_REPLY, buf,
                                   REPLY_HEAD + (size_t)need, false);
    }
    free(buf);
    /* Counted as a local reply is: a send, which leaves in node_forwarded
     * (or is lost with its link's queue, a dead letter); refused when
     * its node is not up. Other errors came before routing: no count. */
    if (rc == 0)
        ac__count_sent(cx);
    else if (rc == AC_ENOTFOUND)
        ac__refuse(cx, &to->to, ac__env_of(reply), AC_ENOTFOUND);
    ac_envelope_free(cx, reply);
    return rc;
}

static int reply_checked(ac_ctx *cx, const ac_reply_to *to, const ac_actor_type *type,
                         uint32_t tag, ac_envelope *reply)
{
    if (reply == NULL || cx == NULL)
        return AC_EINVAL;
    if (to == NULL || reply->tag != AC_TAG_REPLY) {
        ac_envelope_free(cx, reply);
        return AC_EINVAL;
    }
    if (ac__addr_remote(cx, &to->to))
        return reply_remote(cx, to, type, tag, reply);
    /* A runtime message: outside any mailbox bound, allowed during
     * shutdown (the asker may be waiting on it); counted as the send the
     * program made. */
    return ac__send_counted(cx, &to->to, ac__env_of(reply));
}

/* An asker that is gone makes the reply a dead letter, not the replier's
 * failure (`return m_A_reply_x(...)` in a handler), as for a send. */
int ac_reply_typed(ac_ctx *cx, const ac_reply_to *to, const ac_actor_type *type, uint32_t tag,
                   ac_envelope *reply)
{
    int rc = reply_checked(cx, to, type, tag, reply);
    return rc == AC_ENOTFOUND ? 0 : rc;
}

int ac_reply(ac_ctx *cx, const ac_reply_to *to, ac_envelope *reply)
{
    return ac_reply_typed(cx, to, NULL, 0, reply);
}

/* A REPLY record from node `from`, on the node's thread: believed only
 * for an ask still waiting on that node, decoded by the type it was asked
 * of, and sent on to the asker (an actor, or a thread's inbox). */
static int control(ac_ctx *cx, void *state, uint64_t from, const uint8_t *body, size_t len)
{
    ac__asks *A = state;
    ac_wire_in in = {body, len, 0, false, 0};
    ac_reply_to to;
    memcpy(to.to.bytes, ac_wire_take(&in, sizeof to.to.bytes), sizeof to.to.bytes);
    to.id = ac_wire_get_u64(&in);
    int32_t status = (int32_t)ac_wire_get_u32(&in);
    uint64_t type_id = ac_wire_get_u64(&in);
    uint32_t tag = ac_wire_get_u32(&in);
    if (in.bad || status > 0 || (status != 0 && (in.pos != len || type_id != 0)) ||
        ac__addr_remote(cx, &to.to))
        return AC_EINVAL;
    pthread_mutex_lock(&A->lock);
    ac__amap_node *x = ac__amap_find(&A->pending, &to.to, to.id);
    uint64_t asked = x ? AC__CONTAINER_OF(x, ask, node)->target_node : 0;
    if (x == NULL && (x = ac__amap_find(&A->waits, &to.to, to.id)) != NULL)
        asked = AC__CONTAINER_OF(x, remote_wait, node)->target_node;
    pthread_mutex_unlock(&A->lock);
    if (x == NULL) {
        ac__refuse(cx, &to.to, NULL, AC_ENOTFOUND);  /* over already: refused here */
        return 0;
    }
    if (asked != from)
        return AC__EFORGED;  /* an answer from a node that was not asked */
    ac_envelope *e = NULL;
    if (status != 0) {
        ac__env *r = reply_new(cx, to.id, status, 0, 0);
        e = r ? ac__env_pub(r) : NULL;
    } else {
        const ac_actor_type *type = type_known(A, type_id);
        if (type == NULL || type->decode_reply == NULL ||
            type->decode_reply(cx, tag, &to, body + in.pos, len - in.pos, &e) != 0)
            return AC_EINVAL;
    }
    if (e != NULL)
        (void)ac__send_counted(cx, &to.to, ac__env_of(e));
    return 0;
}

/* An ask waiting on a lost node, to be answered. */
typedef struct orphan {
    ac_addr asker;
    uint64_t id;
} orphan;

typedef struct orphans {
    uint64_t node;
    orphan *list;
    size_t n, cap;
} orphans;

static void add_orphan(orphans *o, const ac_addr *asker, uint64_t id)
{
    if (o->n == o->cap) {
        size_t cap = o->cap ? 2 * o->cap : 16;
        orphan *bigger = realloc(o->list, cap * sizeof *bigger);
        if (bigger == NULL)
            return;  /* that ask waits for its timeout instead */
        o->list = bigger;
        o->cap = cap;
    }
    o->list[o->n++] = (orphan){*asker, id};
}

static void orphan_ask(ac__amap_node *x, void *arg)
{
    orphans *o = arg;
    if (AC__CONTAINER_OF(x, ask, node)->target_node == o->node)
        add_orphan(o, &x->key, x->extra);
}

static void orphan_wait(ac__amap_node *x, void *arg)
{
    orphans *o = arg;
    if (AC__CONTAINER_OF(x, remote_wait, node)->target_node == o->node)
        add_orphan(o, &x->key, x->extra);
}

/* Every ask waiting on `node` is answered now, with AC_ENOCONNECTION, as
 * a timeout would answer it; a reply that still comes finds it over. */
static void node_lost(ac_ctx *cx, void *state, uint64_t node)
{
    ac__asks *A = state;
    orphans o = {node, NULL, 0, 0};
    pthread_mutex_lock(&A->lock);
    ac__amap_each(&A->pending, orphan_ask, &o);
    ac__amap_each(&A->waits, orphan_wait, &o);
    pthread_mutex_unlock(&A->lock);
    for (size_t i = 0; i < o.n; i++) {
        ac__env *e = reply_new(cx, o.list[i].id, AC_ENOCONNECTION, FROM_NODE, 0);
        if (e != NULL)
            (void)ac__send_system(cx, &o.list[i].asker, e);
    }
    free(o.list);
}

int ac_reply_error(ac_ctx *cx, const ac_reply_to *to, int status)
{
    if (cx == NULL || to == NULL || status >= 0)
        return AC_EINVAL;
    ac_envelope *e = ac_reply_new(cx, to, 0);
    if (e == NULL)
        return AC_ENOMEM;
    ((ac_reply_head *)ac_envelope_payload(e))->status = status;
    return ac_reply(cx, to, e);
}

void ac_reply_free(ac_ctx *cx, const void *body)
{
    if (body == NULL)
        return;
    unsigned char *p = (unsigned char *)(uintptr_t)body;
    ac_envelope_free(cx, (ac_envelope *)(void *)(p - AC_REPLY_HEAD_SIZE -
                                                 AC_ENVELOPE_HEADER_SIZE));
}

/* ---- blocking asks ----------------------------------------------------------- */

/* The calling thread's waiter, made on its first blocking ask; NULL when
 * out of memory. */
static waiter *waiter_of(ac_ctx *cx)
{
    void **slot = ac__ctx_slot(cx, AC__SERVICE_ask);
    if (*slot != NULL)
        return *slot;
    waiter *w = calloc(1, sizeof *w);
    if (w == NULL)
        return NULL;
    if (ac_inbox_create(cx, &w->inbox) != 0) {
        free(w);
        return NULL;
    }
    *slot = w;
    return w;
}

/* The thread's context goes at destroy: its inbox goes first. */
static void ctx_fini(ac_ctx *cx, void *state, void **slot)
{
    (void)state;
    waiter *w = *slot;
    ac_inbox_destroy(cx, w->inbox);
    free(w);
    *slot = NULL;
}

/* Waits on w's inbox for the reply to ask `id`. */
static int await_reply(ac_ctx *cx, waiter *w, uint64_t id, int timeout_ms, ac_envelope **reply)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        int left = timeout_ms;
        if (timeout_ms > 0) {
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            int64_t spent = (int64_t)(now.tv_sec - t0.tv_sec) * 1000 +
                            (now.tv_nsec - t0.tv_nsec) / 1000000;
            left = spent >= timeout_ms ? 0 : timeout_ms - (int)spent;
        }
        ac_envelope *e = NULL;
        /* Taken uncounted: a late reply is a dead letter, not a message. */
        int rc = ac__inbox_take(cx, w->inbox, AC_TAG_REPLY, left, &e);
        if (rc != 0)
            return rc;
        const ac_reply_head *h = ac_envelope_payload(e);
        if (h->id != id) {
            /* An earlier ask's reply, come after it timed out (or the
             * runtime's answer to it, which is nothing). */
            if (!(h->flags & (FROM_NODE | FROM_GONE)))
                ac__dead_letter(cx, ac_inbox_addr(w->inbox), ac__env_of(e), AC_ENOTFOUND);
            else
                ac__count_taken(cx, ac__env_of(e));
            ac_envelope_free(cx, e);
            continue;
        }
        ac__count_taken(cx, ac__env_of(e));
        if (h->status != 0) {
            rc = h->status;
            ac_envelope_free(cx, e);
            return rc;
        }
        *reply = e;
        return 0;
    }
}

int ac_ask_wait_typed(ac_ctx *cx, const ac_addr *to, const ac_actor_type *type,
                      ac_envelope *request, int timeout_ms, ac_envelope **reply)
{
    if (request == NULL || cx == NULL)
        return AC_EINVAL;
    if (reply != NULL)
        *reply = NULL;
    int rc = 0;
    waiter *w = NULL;
    remote_wait *rw = NULL;
    bool remote = to != NULL && ac__addr_remote(cx, to);
    if (ac__current(cx) != NULL)
        rc = AC_ESTATE;  /* a worker must not block */
    else if (to == NULL || reply == NULL || request->tag >= AC_TAG_SYSTEM)
        rc = AC_EINVAL;
    else if ((w = waiter_of(cx)) == NULL || (remote && (rw = malloc(sizeof *rw)) == NULL))
        rc = AC_ENOMEM;
    if (rc != 0) {
        ac_envelope_free(cx, request);
        return rc;
    }
    uint64_t id = ++w->seq;
    ac_reply_to *back = reply_to_of(request);
    back->to = *ac_inbox_addr(w->inbox);
    back->id = id;
    ac__env_of(request)->flags |= AC__ENV_ASKED;  /* answered if dropped */
    ac__asks *A = asks_of(cx);
    if (rw != NULL) {
        /* Known before the request goes: node loss answers it from then. */
        rw->node.key = back->to;
        rw->node.extra = id;
        rw->target_node = ac_addr_node(to);
        pthread_mutex_lock(&A->lock);
        ac__amap_add(&A->waits, &rw->node);
        if (type != NULL)
            know_type(A, type);
        pthread_mutex_unlock(&A->lock);
    }
    rc = ac_send_checked(cx, to, type, request);
    if (rc == 0)
        rc = await_reply(cx, w, id, timeout_ms, reply);
    if (rw != NULL) {
        pthread_mutex_lock(&A->lock);
        ac__amap_remove(&A->waits, &rw->node);
        pthread_mutex_unlock(&A->lock);
        free(rw);
    }
    return rc;
}

int ac_ask_wait(ac_ctx *cx, const ac_addr *to, ac_envelope *request,
                int timeout_ms, ac_envelope **reply)
{
    return ac_ask_wait_typed(cx, to, NULL, request, timeout_ms, reply);
}

static void free_ask(ac__amap_node *x, void *arg)
{
    (void)arg;
    free(AC__CONTAINER_OF(x, ask, node));
}

static void count_one(ac__amap_node *x, void *arg)
{
    (void)x;
    ++*(size_t *)arg;
}

static void fini(void *state)
{
    ac__asks *A = state;
    /* Actors still alive at the end (shutdown stopped them all, so only
     * those it could not) leave records behind. */
    ac__amap_each(&A->pending, free_ask, NULL);
    ac__amap_destroy(&A->pending);
    ac__amap_destroy(&A->askers);
    ac__amap_destroy(&A->waits);  /* empty: each wait removes its own */
    free(A->types);
    pthread_mutex_destroy(&A->lock);
    free(A);
}

/* Asks of actors waiting for a reply: at quiescence, ones that no running
 * handler will answer (ac_runtime_run reports them). */
static size_t pending(void *state)
{
    ac__asks *A = state;
    size_t n = 0;
    pthread_mutex_lock(&A->lock);
    ac__amap_each(&A->pending, count_one, &n);
    pthread_mutex_unlock(&A->lock);
    return n;
}

const ac__service ac__ask_service = {
    .name = "ask",
    .init = init,
    .ctx_fini = ctx_fini,
    .fini = fini,
    .died = died,
    .consumes = AC_TAG_REPLY,
    .deliver = deliver,
    .unanswered = unanswered,
    .control_op = AC__OP_REPLY,
    .control = control,
    .node_lost = node_lost,
    .pending = pending,
};
