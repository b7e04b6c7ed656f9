/*
 * stash.c — deferring the message being handled (ac_stash) and taking the
 * deferred ones up again, oldest first, ahead of newer mail
 * (ac_unstash_all): Akka's Stash, CAF's skip, what Erlang's selective
 * receive leaves in the mailbox. Part of the turn (as CAF's stash is of
 * its actor's resume loop), so the core's: the turn asks it for the next
 * message (ac__stash_replay), a death empties it (ac__stash_died).
 *
 * A stash holds envelopes, not copies: the one being handled is flagged
 * AC__ENV_STASHED, which tells the mailbox not to free it when the queue
 * moves past it (it may still be the queue's stub, whose link producers
 * write: so the stash keeps its envelopes in arrays, never through their
 * link), and tells the turn not to count the handling as a message (it
 * is counted when it is handled for good, or as a dead letter). Its
 * reply_to, being part of the payload, is untouched.
 *
 * ac_unstash_all moves the stash onto the front of the actor's replay
 * stack (the newest deferred on the bottom, the oldest on top) and sets
 * AC__OWN_REPLAY; the turn then takes a message from here before each
 * pop of the mailbox, until none is left. A message handled from the
 * replay and stashed again goes back to the stash, in the order of its
 * stashing.
 *
 * One record per actor that ever stashed or set its capacity, which marks
 * it AC__OWN_STASHES: made by the actor's own handler and freed by its
 * death, both on the thread that owns it, so one never races the other;
 * the owner flag spares every other death the lookup. Everything but the
 * lookup is the owner's (its handlers run one at a time): the lock guards
 * the table and the counters.
 */
#include "stash.h"

#include "runtime.h"

#include "../lib/amap.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct stash {
    ac__amap_node node;   /* key: the actor */
    uint32_t cap;         /* at most this many held, stashed and replaying */
    uint32_t len;         /* stashed, oldest first: held[0..len) */
    uint32_t replay;      /* taken up again, next on top: back[replay - 1] */
    uint32_t size;        /* slots of each array */
    ac__env **held;
    ac__env **back;
} stash;

typedef struct ac__stashes {
    pthread_mutex_t lock;
    ac__amap records;
    uint64_t held;        /* in every stash and replay now */
    uint64_t overflows;   /* ac_stash refused: the stash was full */
} ac__stashes;

int ac__stash_init(ac_runtime *rt)
{
    ac__stashes *S = calloc(1, sizeof *S);
    if (S == NULL)
        return AC_ENOMEM;
    if (ac__amap_init(&S->records) != 0) {
        free(S);
        return AC_ENOMEM;
    }
    pthread_mutex_init(&S->lock, NULL);
    rt->stashes = S;
    return 0;
}

static void free_record(stash *r)
{
    free(r->held);
    free(r->back);
    free(r);
}

static void free_node(ac__amap_node *x, void *arg)
{
    (void)arg;
    free_record(AC__CONTAINER_OF(x, stash, node));
}

void ac__stash_fini(ac_runtime *rt)
{
    ac__stashes *S = rt->stashes;
    if (S == NULL)
        return;
    /* Every actor died before this, and took its record with it; those
     * an out-of-memory death never freed are freed here. */
    ac__amap_each(&S->records, free_node, NULL);
    ac__amap_destroy(&S->records);
    pthread_mutex_destroy(&S->lock);
    free(S);
    rt->stashes = NULL;
}

/* The record of the actor at `addr`, or NULL; locked. */
static stash *find_record(ac__stashes *S, const ac_addr *addr)
{
    ac__amap_node *x = ac__amap_find(&S->records, addr, 0);
    return x ? AC__CONTAINER_OF(x, stash, node) : NULL;
}

/* The running actor's record, made if there is none; locked. NULL: out
 * of memory (*rc says so). The caller checked that self is not dying: its
 * death, on this same thread, cannot have passed. */
static stash *record_of(ac__stashes *S, ac__actor *self, int *rc)
{
    stash *found = find_record(S, &self->addr);
    if (found != NULL)
        return found;
    stash *r = calloc(1, sizeof *r);
    if (r == NULL) {
        *rc = AC_ENOMEM;
        return NULL;
    }
    r->cap = AC_STASH_CAPACITY;
    r->node.key = self->addr;
    ac__amap_add(&S->records, &r->node);
    /* From here on its death looks the record up (ac__stash_died). The
     * owner's own: self is running. */
    self->oflags |= AC__OWN_STASHES;
    return r;
}

/* Room for one more held message in each array (both as long: a stash
 * taken up goes whole onto the replay stack). */
static int grow(stash *r)
{
    if (r->len + r->replay < r->size)
        return 0;
    uint32_t size = r->size ? 2 * r->size : 8;
    if (size > r->cap)
        size = r->cap;
    ac__env **held = realloc(r->held, size * sizeof *held);
    if (held == NULL)
        return AC_ENOMEM;
    r->held = held;
    ac__env **back = realloc(r->back, size * sizeof *back);
    if (back == NULL)
        return AC_ENOMEM;
    r->back = back;
    r->size = size;
    return 0;
}

int ac_stash(ac_ctx *cx)
{
    if (cx == NULL)
        return AC_EINVAL;
    ac__actor *self = cx->current;
    ac__env *e = cx->handling;
    /* Only a user message, in its own handler: not a hook's or a
     * continuation's (their envelope is the runtime's), and once. */
    if (self == NULL || e == NULL || (e->flags & AC__ENV_STASHED) ||
        (self->oflags & AC__OWN_DEAD))
        return AC_ESTATE;
    ac__stashes *S = cx->rt->stashes;
    int rc = 0;
    pthread_mutex_lock(&S->lock);
    stash *r = record_of(S, self, &rc);
    if (r != NULL && r->len + r->replay >= r->cap) {
        S->overflows++;
        rc = AC_EFULL;
    } else if (r != NULL && (rc = grow(r)) == 0) {
        r->held[r->len++] = e;
        S->held++;
        /* Its bound was released when it was first handled; it leaves the
         * mailbox's accounting for good. */
        e->flags = (uint16_t)((e->flags | AC__ENV_STASHED) & ~AC__ENV_BOUNDED);
        /* handle_live counts every handling after its dispatch, so that
         * the plain path tests nothing: this one is taken back here, on
         * the same context, within the same handling (the counter only
         * wraps below zero for the moment between the two, where no
         * quiescent reading can fall). */
        AC__COUNT(cx, messages, (uint64_t)-1);
    }
    pthread_mutex_unlock(&S->lock);
    return rc;
}

/* The actor running on cx, whose stash the public calls are about; NULL
 * with *rc set when there is none. */
static ac__actor *running(ac_ctx *cx, int *rc)
{
    if (cx == NULL) {
        *rc = AC_EINVAL;
        return NULL;
    }
    if (cx->current == NULL)
        *rc = AC_ESTATE;
    return cx->current;
}

int ac_unstash_all(ac_ctx *cx)
{
    int n = 0;
    ac__actor *self = running(cx, &n);
    if (self == NULL)
        return n;
    ac__stashes *S = cx->rt->stashes;
    pthread_mutex_lock(&S->lock);
    stash *r = find_record(S, &self->addr);
    if (r != NULL && r->len > 0) {
        /* Onto the front: the oldest stashed comes up first, then what an
         * earlier unstash left. */
        for (uint32_t i = r->len; i-- > 0;)
            r->back[r->replay++] = r->held[i];
        n = (int)r->len;
        r->len = 0;
        self->oflags |= AC__OWN_REPLAY;  /* the owner's own */
    }
    pthread_mutex_unlock(&S->lock);
    return n;
}

int ac_stash_capacity(ac_ctx *cx, uint32_t capacity)
{
    if (capacity == 0)
        return AC_EINVAL;
    int rc = 0;
    ac__actor *self = running(cx, &rc);
    if (self == NULL)
        return rc;
    if (self->oflags & AC__OWN_DEAD)
        return AC_ESTATE;  /* from its stop hook */
    ac__stashes *S = cx->rt->stashes;
    pthread_mutex_lock(&S->lock);
    stash *r = record_of(S, self, &rc);
    if (r != NULL)
        r->cap = capacity;  /* below what it holds: the next stash is full */
    pthread_mutex_unlock(&S->lock);
    return rc;
}

int ac_stash_count(ac_ctx *cx)
{
    int n = 0;
    ac__actor *self = running(cx, &n);
    if (self == NULL)
        return n;
    ac__stashes *S = cx->rt->stashes;
    pthread_mutex_lock(&S->lock);
    stash *r = find_record(S, &self->addr);
    n = r ? (int)r->len : 0;
    pthread_mutex_unlock(&S->lock);
    return n;
}

ac__env *ac__stash_replay(ac_ctx *cx, ac__actor *a)
{
    ac__stashes *S = cx->rt->stashes;
    ac__env *e = NULL;
    pthread_mutex_lock(&S->lock);
    stash *r = find_record(S, &a->addr);
    if (r != NULL && r->replay > 0) {
        e = r->back[--r->replay];
        S->held--;
    }
    pthread_mutex_unlock(&S->lock);
    if (e == NULL) {
        a->oflags &= (uint8_t)~AC__OWN_REPLAY;  /* the owner's own: a runs */
        return NULL;
    }
    e->flags = (uint16_t)(e->flags & ~AC__ENV_STASHED);
    return e;
}

/* Gives one held envelope back at the death, a dead letter. The one the
 * dying turn is still handling (stashed, then the actor failed) is left
 * to the turn, and the mailbox's stub to the mailbox. */
static void drop(ac_ctx *cx, ac__actor *a, ac__env *e)
{
    e->flags = (uint16_t)(e->flags & ~AC__ENV_STASHED);
    ac__dead_letter(cx, &a->addr, e, AC_ENOTFOUND);
    if (e != cx->handling)
        ac__env_release(cx, a, e);
}

void ac__stash_died(ac_ctx *cx, ac__actor *a)
{
    if (!(a->oflags & AC__OWN_STASHES))
        return;  /* never stashed: no record */
    ac__stashes *S = cx->rt->stashes;
    pthread_mutex_lock(&S->lock);
    stash *r = find_record(S, &a->addr);
    if (r != NULL) {
        ac__amap_remove(&S->records, &r->node);
        S->held -= r->len + r->replay;
    }
    pthread_mutex_unlock(&S->lock);
    if (r == NULL)
        return;
    /* Oldest first: the replay's top, then the stash. */
    while (r->replay > 0)
        drop(cx, a, r->back[--r->replay]);
    for (uint32_t i = 0; i < r->len; i++)
        drop(cx, a, r->held[i]);
    free_record(r);
}

void ac__stash_stats(ac_runtime *rt, ac_stats *out)
{
    ac__stashes *S = rt->stashes;
    pthread_mutex_lock(&S->lock);
    out->stashed += S->held;
    out->stash_overflows += S->overflows;
    pthread_mutex_unlock(&S->lock);
}
