/*
 * ask.c — request/reply: asynchronous asks inside actors, with a
 * continuation and a timeout; blocking asks outside them, on an inbox.
 *
 * A request carries an ac_reply_to at the start of its payload; the reply
 * is a system envelope (AC_TAG_REPLY) that the replier sends to that
 * address with the id in its head. The reply reaches the asker as a
 * message, so its continuation runs as one of its turns, with its state,
 * never concurrently with its handlers (this service consumes
 * AC_TAG_REPLY: the core hands such a message to `deliver`, below).
 * Whoever removes the record — the reply, the timeout, the answer for a
 * target that is gone or a node that was lost, or the asker's death — is
 * the only one to act on it, which is what makes the continuation run at
 * most once; the reply or the timeout, one of which always comes while
 * the asker lives, makes it exactly once. A request its target dies with
 * is answered at once (`unanswered`, below) the way a timeout is, so the
 * asker need not wait for the timeout to learn it.
 *
 * The records. An ask's id is the runtime's own: the index of its record
 * in one store per runtime (the low ID_INDEX_BITS) and the record's
 * generation (the rest, never 0), which moves on each time the record is
 * freed, so that a stale reply (an ask over, its record used again) or a
 * forged one finds nothing: a reply is believed only when the record at
 * its index carries its whole id and names the actor it reached as its
 * asker. Any id indexes inside the store (its chunks cover every index
 * the bits can say; one not made yet is NULL), so an id from the network
 * is never out of bounds. Every removal happens on the asker's own
 * thread: a reply, a timeout and the runtime's answers are messages that
 * reach it as its turns, its death runs its died hook on the thread that
 * owns it, and an ask that could not be sent is undone by the handler
 * that made it. So a pending record is touched only by its asker, and
 * needs no lock: records come from a free list of the context (the
 * worker) the turn runs on, and go back to the one the removal runs on;
 * only a list that runs dry or grows long meets the store's lock, once
 * per BATCH records. The record's id (`stamp`) and asker are atomic
 * because a forged or stale reply reads them from another asker's thread.
 *
 * The asker's death must find its records (nothing else might ever
 * remove one: an ask without a timeout to a target that never answers).
 * Each asking actor has a book, the list of its pending records, found
 * by its block's address in one of NSHARDS small tables, each with its
 * own lock; an actor that never asked has none (ac__has_asked says so,
 * and its death looks nothing up). A continuation that asks again (the
 * common chain: each reply's handler sends the next request) finds its
 * book through the record just answered, with no lookup (`cxstate.book`).
 *
 * A timeout is a timer (ac__timer_after_system) whose message is the
 * timed-out reply itself, sent to the asker. The timer is started in the
 * asker's handler, so it is the asker's: its death cancels it (timers.c).
 * An ask from a dying actor (its stop hook) is refused, so none outlives
 * its asker.
 *
 * What a body is. A reply's body is read with the layout of the request
 * it answers, so the asker, not the replier, says what that is: every
 * pending ask keeps the type it asked and the request's tag, and a reply
 * carries the replier's type and the tag it answers (ac_reply_head, set by
 * ac_reply_typed). A typed ask takes a body only when both match (`fits`);
 * any other is refused as a dead letter (AC_EBADTAG) and the ask waits on
 * for its real answer or its timeout. An untyped ask (ac_ask, ac_ask_wait)
 * agreed on its body with its replier by hand, and takes any.
 *
 * Across nodes (docs/NODES.md): a reply to another node's asker travels
 * as a REPLY control record, its body encoded by the replier's type and
 * naming that type's id and the request's tag. An ask to another node
 * remembers that node and what it asked, and so does a blocking one, in
 * `remote` (keyed by the asker's address and the id, under the service's
 * lock: that path crosses a network anyway). A reply is believed only
 * from the node asked and only for the type and tag asked, and is decoded
 * with the asker's own type, never with one the record names; when the
 * node is lost, each ask is answered at once with AC_ENOCONNECTION.
 */
#include "remote.h"
#include "services.h"
#include "timers.h"

#include "../lib/amap.h"

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

/* An id: (generation << ID_INDEX_BITS) | index. 2^28 asks pending at once
 * at most; a generation of 36 bits comes round again only after 2^36 asks
 * on one record, so a stale reply that late is the only one that could be
 * mistaken for a later ask's. */
#define ID_INDEX_BITS AC__ASK_INDEX_BITS
#define ID_INDEX_MASK ((UINT64_C(1) << ID_INDEX_BITS) - 1)
#define ID_GEN_MASK ((UINT64_C(1) << (64u - ID_INDEX_BITS)) - 1)
/* The store's chunks double: chunk 0 holds records 0..2^FIRST_BITS-1,
 * chunk c >= 1 the 2^(FIRST_BITS+c-1) from there, so NCHUNKS of them
 * cover every index and a runtime that asks little makes little. */
#define FIRST_BITS 6u
#define NCHUNKS (ID_INDEX_BITS - FIRST_BITS + 1u)
/* Records a context takes from the store, or gives back, at a time. */
#define BATCH 32u
#define NSHARDS 16u

typedef struct book book;

/* The head and the body's alignment that ac_reply_body promises. */
_Static_assert(sizeof(ac_reply_head) <= AC_REPLY_HEAD_SIZE && AC_REPLY_HEAD_SIZE % 16 == 0,
               "a reply's body follows its head, 16-byte aligned");

/* What an ask asked: the target's type (NULL: an untyped ask) and the
 * request's tag, which fix the layout of the reply's body. */
typedef struct asked {
    const ac_actor_type *type;
    uint32_t tag;
} asked;

/* An ask to another node: key, the asker (an actor, or a blocking ask's
 * inbox); extra, the ask's id. */
typedef struct remote_wait {
    ac__amap_node node;
    uint64_t target_node;
    asked what;
} remote_wait;

typedef struct ask {
    /* The id while pending, 0 while free. Written by its holder; read
     * by any actor a reply with this index reaches (forged or stale). */
    _Atomic uint64_t stamp;
    _Atomic(ac__actor *) asker;     /* while pending */
    struct ask *prev, *next;        /* in its book; `next` also on a free list */
    book *book;
    uint64_t gen;                   /* of its last id */
    uint32_t index;
    ac_reply_call_fn call;          /* NULL: fn is an ac_reply_fn */
    ac_any_fn fn;
    void *arg;
    ac_timer_id timer;              /* 0: no timeout */
    asked what;
    remote_wait *remote;            /* an ask to another node, else NULL */
    /* ac_ask_ctx: the asker's context, copied in, so that the common ask
     * carries what its continuation needs without an allocation of its
     * own; `arg` then points here. */
    alignas(16) unsigned char context[AC_ASK_CONTEXT_MAX];
} ask;

/* An asking actor's pending asks. */
struct book {
    ac__tnode link;                 /* in its shard; hash: of `owner` */
    ac__actor *owner;
    ask *first;
};

/* The books, by the owner's block. A line each: different askers' first
 * asks and deaths on different workers do not share one. */
typedef union shard {
    struct {
        pthread_mutex_t lock;
        ac__table books;
    } s;
    unsigned char line[128];
} shard;

typedef struct ac__asks {
    /* Guards the store's growth and stash, and `remote`: neither on a
     * local ask's path. */
    pthread_mutex_t lock;
    _Atomic(ask *) chunks[NCHUNKS]; /* published with release, read with acquire */
    size_t made;                    /* records made so far: the next index */
    ask *stash;                     /* free records given back by contexts */
    size_t nstash;
    /* remote_wait of asks to other nodes, asynchronous (key: the asker)
     * and blocking (key: the thread's inbox) */
    ac__amap remote;
    shard shards[NSHARDS];
} ac__asks;

/* A context's state (its slot), made on its first ask: free records; for
 * blocking asks, one inbox, kept, since destroying one waits a grace
 * period, and the id of its last blocking ask; the book of the asker
 * whose continuation runs on it. */
typedef struct cxstate {
    ask *free;
    unsigned nfree;
    book *book;
    ac_inbox *inbox;
    uint64_t seq;
} cxstate;

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
    h->type = NULL;
    h->tag = 0;
    return e;
}

/* Whether reply head h may be read as the answer to what was asked. */
static bool fits(const asked *what, const ac_reply_head *h)
{
    return h->status != 0 || what->type == NULL ||
           (h->type == what->type && h->tag == what->tag);
}

static ac__asks *asks_of(ac_ctx *cx)
{
    return ac__service_state(ac_ctx_runtime(cx), AC__SERVICE_ask);
}

static int control(ac_ctx *cx, void *state, uint64_t from, const uint8_t *body, size_t len);
static void node_lost(ac_ctx *cx, void *state, uint64_t node);
static const ac__remote_role role = {
    .op = AC__OP_REPLY, .control = control, .node_lost = node_lost};

static int init(ac_runtime *rt, void **state)
{
    ac__asks *A = calloc(1, sizeof *A);
    if (A == NULL)
        return AC_ENOMEM;
    int rc = ac__amap_init(&A->remote) != 0 ? AC_ENOMEM : 0;
    unsigned made = 0;
    for (; rc == 0 && made < NSHARDS; made++)
        if (ac__table_init(&A->shards[made].s.books) != 0)
            rc = AC_ENOMEM;
    if (rc != 0) {
        for (unsigned i = 0; i < made; i++)
            ac__table_fini(&A->shards[i].s.books);
        ac__amap_destroy(&A->remote);
        free(A);
        return rc;
    }
    for (unsigned i = 0; i < NSHARDS; i++)
        pthread_mutex_init(&A->shards[i].s.lock, NULL);
    for (unsigned i = 0; i < NCHUNKS; i++)
        atomic_init(&A->chunks[i], NULL);
    pthread_mutex_init(&A->lock, NULL);
    *state = A;
    return ac__remote_register(rt, &role, A);
}

/* ---- the store ------------------------------------------------------------------ */

static inline unsigned chunk_of(uint64_t index, uint64_t *offset)
{
    if (index < (UINT64_C(1) << FIRST_BITS)) {
        *offset = index;
        return 0;
    }
    unsigned top = 63u - (unsigned)__builtin_clzll(index);
    *offset = index - (UINT64_C(1) << top);
    return top - FIRST_BITS + 1u;
}

static uint64_t chunk_len(unsigned c)
{
    return UINT64_C(1) << (c == 0 ? FIRST_BITS : FIRST_BITS + c - 1u);
}

/* The record id names, if the store has made it; any id is in bounds. */
static inline ask *record_at(ac__asks *A, uint64_t id)
{
    uint64_t off;
    unsigned c = chunk_of(id & ID_INDEX_MASK, &off);
    /* Acquire: pairs with the release that published the chunk, so its
     * records' initial state is seen. */
    ask *chunk = atomic_load_explicit(&A->chunks[c], memory_order_acquire);
    return chunk != NULL ? &chunk[off] : NULL;
}

/* The pending record of ask `id` of `a`, or NULL: a stale id (its ask is
 * over: the record is free or pending with a later id), a forged one, or
 * one of another asker's. Called on a's thread: if the record is a's,
 * only a changes it, so the plain fields are then safe to read. Seeing
 * another asker's record pending under `id` reads only its atomics: that
 * asker's thread may free it at the same moment, and a third use it
 * again, but whoever holds it then is not `a` (a is here), so the asker
 * test fails. */
static ask *record_of(ac__asks *A, uint64_t id, const ac__actor *a)
{
    if ((id >> ID_INDEX_BITS) == 0)
        return NULL;  /* generation 0 is never given out: no free record matches */
    ask *k = record_at(A, id);
    /* Acquire: pairs with the release that made it pending under id. */
    if (k == NULL || atomic_load_explicit(&k->stamp, memory_order_acquire) != id)
        return NULL;
    /* Relaxed: written before that release by whoever made it pending. */
    return atomic_load_explicit(&k->asker, memory_order_relaxed) == a ? k : NULL;
}

/* Moves up to BATCH free records to c: from the stash, else new ones.
 * AC_ENOMEM when there are none and none can be made. */
static int refill(ac__asks *A, cxstate *c)
{
    pthread_mutex_lock(&A->lock);
    while (A->stash != NULL && c->nfree < BATCH) {
        ask *k = A->stash;
        A->stash = k->next;
        A->nstash--;
        k->next = c->free;
        c->free = k;
        c->nfree++;
    }
    while (c->nfree < BATCH && A->made <= ID_INDEX_MASK) {
        uint64_t off;
        unsigned ch = chunk_of(A->made, &off);
        /* Relaxed: the lock orders the store's own writes. */
        ask *chunk = atomic_load_explicit(&A->chunks[ch], memory_order_relaxed);
        if (chunk == NULL) {
            uint64_t len = chunk_len(ch);
            if ((chunk = calloc(len, sizeof *chunk)) == NULL)
                break;
            for (uint64_t i = 0; i < len; i++) {
                atomic_init(&chunk[i].stamp, 0);
                atomic_init(&chunk[i].asker, NULL);
                chunk[i].index = (uint32_t)(A->made + i);
            }
            /* Release: a reply that indexes this chunk from now on sees
             * its records initialised (record_at). */
            atomic_store_explicit(&A->chunks[ch], chunk, memory_order_release);
        }
        ask *k = &chunk[off];
        A->made++;
        k->next = c->free;
        c->free = k;
        c->nfree++;
    }
    pthread_mutex_unlock(&A->lock);
    return c->free != NULL ? 0 : AC_ENOMEM;
}

/* Frees k (removed: off its book, its stamp cleared) onto c's list, or
 * the stash without one; a long list gives BATCH back. */
static inline void record_free(ac__asks *A, cxstate *c, ask *k)
{
    if (c == NULL) {
        pthread_mutex_lock(&A->lock);
        k->next = A->stash;
        A->stash = k;
        A->nstash++;
        pthread_mutex_unlock(&A->lock);
        return;
    }
    k->next = c->free;
    c->free = k;
    if (++c->nfree < 2 * BATCH)
        return;
    /* A context where asks end more often than they begin (an asker
     * that moved here) would hoard: BATCH go where others refill. */
    ask *last = c->free;
    for (unsigned i = 1; i < BATCH; i++)
        last = last->next;
    ask *rest = last->next;
    pthread_mutex_lock(&A->lock);
    last->next = A->stash;
    A->stash = c->free;
    A->nstash += BATCH;
    pthread_mutex_unlock(&A->lock);
    c->free = rest;
    c->nfree -= BATCH;
}

/* This context's state, made on first use; NULL when out of memory. */
static cxstate *cxstate_of(ac_ctx *cx)
{
    void **slot = ac__ctx_slot(cx, AC__SERVICE_ask);
    if (*slot == NULL)
        *slot = calloc(1, sizeof(cxstate));
    return *slot;
}

/* ---- books --------------------------------------------------------------------- */

/* The hash of a block's address: a local pointer, never a peer's choice,
 * so an unkeyed mix (the murmur3 finaliser) cannot be steered. */
static uint64_t owner_hash(const ac__actor *a)
{
    uint64_t x = (uint64_t)(uintptr_t)a;
    x ^= x >> 33;
    x *= UINT64_C(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x *= UINT64_C(0xc4ceb9fe1a85ec53);
    x ^= x >> 33;
    return x;
}

static bool book_is(const ac__tnode *n, const void *key)
{
    return AC__CONTAINER_OF(n, const book, link)->owner == key;
}

static shard *shard_of(ac__asks *A, uint64_t hash)
{
    return &A->shards[hash >> 60];
}

/* a's book, made on its first ask; NULL when out of memory. On a's
 * thread: only it makes its book and only its death takes it. */
static book *book_of(ac__asks *A, ac__actor *a)
{
    uint64_t h = owner_hash(a);
    shard *s = shard_of(A, h);
    pthread_mutex_lock(&s->s.lock);
    ac__tnode *n = ac__table_find(&s->s.books, h, book_is, a);
    book *b = n != NULL ? AC__CONTAINER_OF(n, book, link) : NULL;
    if (b == NULL && (b = calloc(1, sizeof *b)) != NULL) {
        b->owner = a;
        b->link.hash = h;
        (void)ac__table_insert(&s->s.books, &b->link);  /* made at init: cannot fail */
    }
    pthread_mutex_unlock(&s->s.lock);
    if (b != NULL)
        ac__mark_asker(a);
    return b;
}

static inline void book_unlink(ask *k)
{
    if (k->prev != NULL)
        k->prev->next = k->next;
    else
        k->book->first = k->next;
    if (k->next != NULL)
        k->next->prev = k->prev;
}

static void remote_forget(ac__asks *A, ask *k)
{
    if (k->remote == NULL)
        return;
    pthread_mutex_lock(&A->lock);
    ac__amap_remove(&A->remote, &k->remote->node);
    pthread_mutex_unlock(&A->lock);
    free(k->remote);
    k->remote = NULL;
}

/* Removes pending record k: off its book and out of `remote`; its id is
 * stale from here. The caller frees it (record_free) once done with it. */
static inline void take(ac__asks *A, ask *k)
{
    book_unlink(k);
    /* Relaxed: a reader that still sees the id finds the asker unchanged
     * until a new holder writes it (record_of). */
    atomic_store_explicit(&k->stamp, 0, memory_order_relaxed);
    remote_forget(A, k);
}

static ac_reply_to *reply_to_of(ac_envelope *request)
{
    return (ac_reply_to *)ac_envelope_payload(request);
}

/* Makes k pending as an ask of `self` in book b; its new id. */
static uint64_t record_start(ask *k, ac__actor *self, book *b)
{
    k->gen = (k->gen + 1) & ID_GEN_MASK;
    if (k->gen == 0)
        k->gen = 1;
    uint64_t id = (k->gen << ID_INDEX_BITS) | k->index;
    k->book = b;
    k->prev = NULL;
    k->next = b->first;
    if (b->first != NULL)
        b->first->prev = k;
    b->first = k;
    /* Relaxed: published by the release below. */
    atomic_store_explicit(&k->asker, self, memory_order_relaxed);
    /* Release: a reader that sees this id sees the asker above. */
    atomic_store_explicit(&k->stamp, id, memory_order_release);
    return id;
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
    cxstate *c = NULL;
    book *b = NULL;
    ask *k = NULL;
    remote_wait *rw = NULL;
    bool remote = false;
    if (self == NULL)
        rc = AC_ESTATE;
    else if (to == NULL || fn == NULL || request->tag >= AC_TAG_SYSTEM ||
             ctx_size > AC_ASK_CONTEXT_MAX || (ctx == NULL && ctx_size > 0) ||
             (asker != NULL && ac__type(self) != asker))
        rc = AC_EINVAL;
    else if (!ac__service_alive(cx, self))
        /* Asked from its stop hook: nobody will listen. (The call also
         * makes sure the death runs the died hooks: service.c.) */
        rc = AC_ESTATE;
    else if ((c = cxstate_of(cx)) == NULL)
        rc = AC_ENOMEM;
    else if ((b = c->book != NULL && c->book->owner == self ? c->book : book_of(A, self)) == NULL)
        rc = AC_ENOMEM;
    else if ((remote = ac__addr_remote(cx, to)) && (rw = malloc(sizeof *rw)) == NULL)
        rc = AC_ENOMEM;
    else if (c->free == NULL && refill(A, c) != 0)
        rc = AC_ENOMEM;
    if (rc != 0) {
        free(rw);
        ac_envelope_free(cx, request);
        return rc;
    }
    k = c->free;
    c->free = k->next;
    c->nfree--;
    k->call = call;
    k->fn = fn;
    k->arg = arg;
    k->timer = 0;
    k->what = (asked){type, request->tag};
    k->remote = NULL;
    if (ctx_size > 0) {
        memcpy(k->context, ctx, ctx_size);
        k->arg = k->context;
    }
    uint64_t id = record_start(k, self, b);
    if (remote) {
        /* Known before the request goes: node loss answers it from then,
         * and its reply is believed only from that node (control). */
        rw->node.key = self->addr;
        rw->node.extra = id;
        rw->target_node = ac_addr_node(to);
        rw->what = k->what;
        k->remote = rw;
        pthread_mutex_lock(&A->lock);
        ac__amap_add(&A->remote, &rw->node);
        pthread_mutex_unlock(&A->lock);
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
        /* Nothing was asked: undo, and fn never runs. A runtime answer
         * the failed send may have queued (FROM_GONE) finds it over. */
        if (request != NULL)
            ac_envelope_free(cx, request);
        take(A, k);
        if (k->timer != 0)
            (void)ac_timer_cancel(cx, k->timer);
        record_free(A, c, k);
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

/* A reply (or a timeout, or the runtime's answer) reached its asker `a`,
 * as one of its turns. */
static int deliver(ac_ctx *cx, void *state, ac__actor *a, ac__env *e)
{
    ac__asks *A = state;
    ac_envelope *pub = ac__env_pub(e);
    const ac_reply_head *h = ac_envelope_payload(pub);
    ask *k = record_of(A, h->id, a);
    if (k == NULL) {
        /* The ask is over (answered, timed out), or the id is not one of
         * a's (forged): a reply is a dead letter; a late answer of the
         * runtime's is nothing. */
        if (!(h->flags & (FROM_TIMER | FROM_NODE | FROM_GONE))) {
            ac__dead_letter(cx, &a->addr, e, AC_ENOTFOUND);
            return AC__DEAD_LETTERED;  /* not a message handled as well */
        }
        return 0;
    }
    if (!fits(&k->what, h)) {
        /* A body of another layout: refused, and the ask waits on. */
        ac__dead_letter(cx, &a->addr, e, AC_EBADTAG);
        return AC__DEAD_LETTERED;
    }
    take(A, k);
    if (k->timer != 0 && !(h->flags & FROM_TIMER))
        (void)ac_timer_cancel(cx, k->timer);
    /* NULL when out of memory: the record then goes to the stash. */
    cxstate *c = cxstate_of(cx);
    book *outer = NULL;
    if (c != NULL) {
        /* An ask the continuation makes goes in the same book. */
        outer = c->book;
        c->book = k->book;
    }
    const void *body = h->status == 0 ? ac_reply_body(pub) : NULL;
    int rc = k->call ? k->call(k->fn, a->state, cx, h->status, body, k->arg)
                     : ((ac_reply_fn)k->fn)(a->state, cx, h->status, body, k->arg);
    if (c != NULL)
        c->book = outer;
    /* Freed only now: `arg` may point into it. */
    record_free(A, c, k);
    /* AC_EBADTAG would read as "no hook" to the core. */
    return rc == AC_EBADTAG ? AC_EFAILED : rc;
}

/* On a's thread, after its DEAD flag: its pending asks go with it, their
 * continuations never run; a reply that still comes finds its id stale. */
static void died(ac_ctx *cx, void *state, ac__actor *a, const ac__death *d)
{
    (void)d;
    if (!ac__has_asked(a))
        return;  /* never asked: no book */
    ac__asks *A = state;
    uint64_t h = owner_hash(a);
    shard *s = shard_of(A, h);
    pthread_mutex_lock(&s->s.lock);
    ac__tnode *n = ac__table_find(&s->s.books, h, book_is, a);
    if (n != NULL)
        ac__table_remove(&s->s.books, n);
    pthread_mutex_unlock(&s->s.lock);
    if (n == NULL)
        return;
    book *b = AC__CONTAINER_OF(n, book, link);
    cxstate *c = cxstate_of(cx);
    /* Their timers are the dead actor's: timers.c cancels them. */
    while (b->first != NULL) {
        ask *k = b->first;
        take(A, k);
        record_free(A, c, k);
    }
    free(b);
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
        ac_wire_u64(&o, body ? ac__type_id(type) : 0);
        ac_wire_u32(&o, body ? tag : 0);
        if (need > 0)
            (void)type->encode_reply(tag, reply, buf + REPLY_HEAD, (size_t)need);
        rc = ac__transmit(cx, ac_addr_node(&to->to), AC__OP_REPLY, buf,
                          REPLY_HEAD + (size_t)need, AC__TRANSMIT_COUNTED);
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
    ac_reply_head *h = ac_envelope_payload(reply);
    h->type = type;
    h->tag = type != NULL ? tag : 0;
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
 * for an ask still waiting on that node, and (with a body) only when it
 * answers the type and tag asked, which decode it; then sent on to the
 * asker (an actor, or a thread's inbox). */
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
    ac__amap_node *x = ac__amap_find(&A->remote, &to.to, to.id);
    /* Copied under the lock: the asker may end the wait once it is down. */
    uint64_t asked_node = x ? AC__CONTAINER_OF(x, remote_wait, node)->target_node : 0;
    asked what = x ? AC__CONTAINER_OF(x, remote_wait, node)->what : (asked){NULL, 0};
    pthread_mutex_unlock(&A->lock);
    if (x == NULL) {
        ac__refuse(cx, &to.to, NULL, AC_ENOTFOUND);  /* over already: refused here */
        return 0;
    }
    if (asked_node != from)
        return AC__EFORGED;  /* an answer from a node that was not asked */
    ac_envelope *e = NULL;
    if (status != 0) {
        ac__env *r = reply_new(cx, to.id, status, 0, 0);
        e = r ? ac__env_pub(r) : NULL;
    } else {
        const ac_actor_type *type = what.type;
        if (type == NULL || type_id != ac__type_id(type) || tag != what.tag)
            return AC__EFORGED;  /* the answer to another question */
        if (type->decode_reply == NULL ||
            type->decode_reply(cx, tag, &to, body + in.pos, len - in.pos, &e) != 0)
            return AC_EINVAL;
        ac_reply_head *h = ac_envelope_payload(e);
        h->type = type;
        h->tag = tag;
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
    ac__amap_each(&A->remote, orphan_wait, &o);
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

/* The calling thread's state with its inbox, made on its first blocking
 * ask; NULL when out of memory. */
static cxstate *waiter_of(ac_ctx *cx)
{
    cxstate *w = cxstate_of(cx);
    if (w != NULL && w->inbox == NULL && ac_inbox_create(cx, &w->inbox) != 0)
        return NULL;
    return w;
}

/* The context goes at destroy (every context of a runtime goes then,
 * before its services): its inbox first; its free records back to the
 * store, whose chunks hold them. */
static void ctx_fini(ac_ctx *cx, void *state, void **slot)
{
    ac__asks *A = state;
    cxstate *c = *slot;
    if (c->inbox != NULL)
        ac_inbox_destroy(cx, c->inbox);
    pthread_mutex_lock(&A->lock);
    while (c->free != NULL) {
        ask *k = c->free;
        c->free = k->next;
        k->next = A->stash;
        A->stash = k;
        A->nstash++;
    }
    pthread_mutex_unlock(&A->lock);
    free(c);
    *slot = NULL;
}

/* Waits on w's inbox for the reply to ask `id`, which asked `what`. */
static int await_reply(ac_ctx *cx, cxstate *w, uint64_t id, const asked *what, int timeout_ms,
                       ac_envelope **reply)
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
        if (h->id != id || !fits(what, h)) {
            /* An earlier ask's reply, come after it timed out (or the
             * runtime's answer to it, which is nothing), or a body of
             * another layout than this ask's. */
            if (h->id == id)
                ac__dead_letter(cx, ac_inbox_addr(w->inbox), ac__env_of(e), AC_EBADTAG);
            else if (!(h->flags & (FROM_NODE | FROM_GONE)))
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
    cxstate *w = NULL;
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
    asked what = {type, request->tag};
    if (rw != NULL) {
        /* Known before the request goes: node loss answers it from then. */
        rw->node.key = back->to;
        rw->node.extra = id;
        rw->target_node = ac_addr_node(to);
        rw->what = what;
        pthread_mutex_lock(&A->lock);
        ac__amap_add(&A->remote, &rw->node);
        pthread_mutex_unlock(&A->lock);
    }
    rc = ac_send_checked(cx, to, type, request);
    if (rc == 0)
        rc = await_reply(cx, w, id, &what, timeout_ms, reply);
    if (rw != NULL) {
        pthread_mutex_lock(&A->lock);
        ac__amap_remove(&A->remote, &rw->node);
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

static void free_book(ac__tnode *n, void *arg)
{
    (void)arg;
    free(AC__CONTAINER_OF(n, book, link));
}

static void free_remote(ac__amap_node *x, void *arg)
{
    (void)arg;
    free(AC__CONTAINER_OF(x, remote_wait, node));
}

static void fini(void *state)
{
    ac__asks *A = state;
    /* Actors still alive at the end (shutdown stopped them all, so only
     * those it could not) leave records behind: in the chunks, freed
     * with them, and in their books. Blocking asks have all returned. */
    for (unsigned i = 0; i < NSHARDS; i++) {
        ac__table_each(&A->shards[i].s.books, free_book, NULL);
        ac__table_fini(&A->shards[i].s.books);
        pthread_mutex_destroy(&A->shards[i].s.lock);
    }
    ac__amap_each(&A->remote, free_remote, NULL);
    ac__amap_destroy(&A->remote);
    for (unsigned i = 0; i < NCHUNKS; i++)
        free(atomic_load_explicit(&A->chunks[i], memory_order_relaxed));  /* every worker is gone */
    pthread_mutex_destroy(&A->lock);
    free(A);
}

/* Asks of actors waiting for a reply: at quiescence, ones that no running
 * handler will answer (ac_runtime_run reports them). The records made so
 * far, pending or free; quiescence leaves none half made. */
static size_t pending(void *state)
{
    ac__asks *A = state;
    size_t n = 0;
    pthread_mutex_lock(&A->lock);
    for (size_t i = 0; i < A->made; i++) {
        ask *k = record_at(A, ((uint64_t)1 << ID_INDEX_BITS) | i);
        /* Relaxed: quiescence ordered every handler's writes before us. */
        n += atomic_load_explicit(&k->stamp, memory_order_relaxed) != 0;
    }
    pthread_mutex_unlock(&A->lock);
    return n;
}

size_t ac__ask_records(ac_runtime *rt)
{
    ac__asks *A = ac__service_state(rt, AC__SERVICE_ask);
    pthread_mutex_lock(&A->lock);
    size_t n = A->made;
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
    .pending = pending,
};
