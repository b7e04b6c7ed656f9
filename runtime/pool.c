/*
 * pool.c — envelope pools.
 *
 * Each context (worker or external thread) keeps a free list per size class;
 * allocation and free on the send path touch only that list. Envelopes move
 * between threads (allocated by the sender, freed by the receiver's worker),
 * so a list that grows past twice a batch gives one batch to the runtime's
 * depot, and an empty list takes one back, one lock per BATCH envelopes,
 * before it falls back to malloc (counted as a pool miss).
 */
#include "internal.h"

#include <stdlib.h>

#define MIN_CLASS_SHIFT 6  /* 64 bytes */
#define BATCH 64u


static inline unsigned class_of(size_t total)
{
    unsigned k = 0;
    while (((size_t)1 << (MIN_CLASS_SHIFT + k)) < total)
        k++;
    return k;
}

static inline size_t class_size(unsigned k)
{
    return (size_t)1 << (MIN_CLASS_SHIFT + k);
}

/* Envelopes on free lists are chained through their mailbox link, which
 * nobody else reads while they are free: relaxed is enough. */
static inline ac__env *link_of(ac__env *e)
{
    return atomic_load_explicit(&e->next, memory_order_relaxed);
}

static inline void set_link(ac__env *e, ac__env *next)
{
    atomic_store_explicit(&e->next, next, memory_order_relaxed);
}

/* A batch in the depot: its first envelope's payload holds the next batch. */
static inline ac__env **next_batch(ac__env *first)
{
    return (ac__env **)(void *)(first + 1);
}

int ac__depot_init(ac__depot *d)
{
    for (unsigned k = 0; k < AC__POOL_CLASSES; k++)
        d->batches[k] = NULL;
    return pthread_mutex_init(&d->lock, NULL) == 0 ? 0 : AC_ENOMEM;
}

static void free_chain(ac__env *e)
{
    while (e) {
        ac__env *next = link_of(e);
        free(e);
        e = next;
    }
}

void ac__depot_destroy(ac__depot *d)
{
    for (unsigned k = 0; k < AC__POOL_CLASSES; k++) {
        ac__env *b = d->batches[k];
        while (b) {
            ac__env *next = *next_batch(b);
            free_chain(b);
            b = next;
        }
        d->batches[k] = NULL;
    }
    pthread_mutex_destroy(&d->lock);
}

void ac__pool_release(ac__pool *p)
{
    for (unsigned k = 0; k < AC__POOL_CLASSES; k++) {
        free_chain(p->free[k]);
        p->free[k] = NULL;
        p->count[k] = 0;
    }
}

static bool refill_from_depot(ac_ctx *cx, unsigned k)
{
    ac__depot *d = &cx->rt->depot;
    pthread_mutex_lock(&d->lock);
    ac__env *b = d->batches[k];
    if (b)
        d->batches[k] = *next_batch(b);
    pthread_mutex_unlock(&d->lock);
    if (b == NULL)
        return false;
    cx->pool.free[k] = b;
    cx->pool.count[k] = BATCH;
    return true;
}

static void spill_to_depot(ac_ctx *cx, unsigned k)
{
    /* Detach the first BATCH envelopes of the list as one batch. */
    ac__env *first = cx->pool.free[k], *last = first;
    for (unsigned i = 1; i < BATCH; i++)
        last = link_of(last);
    cx->pool.free[k] = link_of(last);
    cx->pool.count[k] -= BATCH;
    set_link(last, NULL);

    ac__depot *d = &cx->rt->depot;
    pthread_mutex_lock(&d->lock);
    *next_batch(first) = d->batches[k];
    d->batches[k] = first;
    pthread_mutex_unlock(&d->lock);
}

ac__env *ac__pool_alloc(ac_ctx *cx, size_t payload_size)
{
    if (payload_size > AC_MAX_PAYLOAD)
        return NULL;
    size_t total = AC_ENVELOPE_HEADER_SIZE + payload_size;
    unsigned k = class_of(total);
    ac__env *e;
    if (k >= AC__POOL_CLASSES) {
        e = malloc(total);
        if (e == NULL)
            return NULL;
        e->klass = AC__CLASS_HUGE;
        AC__COUNT(cx, pool_misses, 1);
        return e;
    }
    e = cx->pool.free[k];
    if (e == NULL && refill_from_depot(cx, k))
        e = cx->pool.free[k];
    if (e != NULL) {
        cx->pool.free[k] = link_of(e);
        cx->pool.count[k]--;
        return e;
    }
    /* 16-byte alignment from malloc keeps payloads aligned for any field. */
    e = malloc(class_size(k));
    if (e == NULL)
        return NULL;
    e->klass = (uint16_t)k;
    AC__COUNT(cx, pool_misses, 1);
    return e;
}

void ac__pool_free(ac_ctx *cx, ac__env *e)
{
    unsigned k = e->klass;
    if (k == AC__CLASS_EMBEDDED)
        return;
    if (k == AC__CLASS_HUGE) {
        free(e);
        return;
    }
    set_link(e, cx->pool.free[k]);
    cx->pool.free[k] = e;
    if (++cx->pool.count[k] > 2 * BATCH)
        spill_to_depot(cx, k);
}

ac_envelope *ac_envelope_new(ac_ctx *cx, uint32_t tag, size_t payload_size)
{
    if (cx == NULL)
        return NULL;
    ac__env *e = ac__pool_alloc(cx, payload_size);
    if (e == NULL)
        return NULL;
    e->tag = tag;
    e->flags = 0;
    return ac__env_pub(e);
}

void ac_envelope_free(ac_ctx *cx, ac_envelope *e)
{
    if (e != NULL)
        ac__pool_free(cx, ac__env_of(e));
}
