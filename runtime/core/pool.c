/*
 * pool.c — block pools for envelopes and actors.
 *
 * Each context (worker or external thread) keeps a free list per size
 * class; allocation and free on the send path touch only that list. Blocks
 * move between threads (an envelope is allocated by the sender and freed by
 * the receiver's worker), so a list that grows past twice a batch gives one
 * batch to the runtime's depot, and an empty list takes one back: one lock
 * per BATCH blocks, before falling back to malloc (counted as a pool miss).
 * A miss allocates a slab of BATCH blocks at once: no malloc header per
 * block, one call per BATCH blocks. Freed memory is kept until the runtime
 * is destroyed: reusing warm blocks is what makes the steady state free of
 * page faults and system calls.
 */
#include "pool.h"

#include "runtime.h"

#include <stdlib.h>

#define BATCH 64u

/* 16-byte steps, not 32, below 256: an actor's block (a 72-byte control
 * block and 8 bytes of state) fits 80 exactly instead of taking 96; a
 * step costs the same shift either way. The smallest class holds a depot
 * batch's two links. */
static const uint32_t class_sizes[AC__POOL_CLASSES] = {
    16, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256,
    384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384,
};

/* The class of the smallest block that holds `size` bytes, or
 * AC__POOL_CLASSES when none does. */
static inline unsigned class_of(size_t size)
{
    if (size <= 256)
        return size == 0 ? 0 : (unsigned)((size - 1) >> 4);
    unsigned k = 16;
    while (k < AC__POOL_CLASSES && class_sizes[k] < size)
        k++;
    return k;
}

size_t ac__pool_class_size(unsigned klass)
{
    return klass < AC__POOL_CLASSES ? class_sizes[klass] : 0;
}

/* A batch in the depot: its first block's second word links the next
 * batch (the first word links the blocks of the batch). */
static inline ac__block **next_batch(ac__block *first)
{
    return (ac__block **)(void *)(first + 1);
}

int ac__depot_init(ac__depot *d)
{
    d->slabs = NULL;
    for (unsigned k = 0; k < AC__POOL_CLASSES; k++)
        d->batches[k] = NULL;
    return pthread_mutex_init(&d->lock, NULL) == 0 ? 0 : AC_ENOMEM;
}

/* Frees every slab; the blocks on free lists and in the depot live in them. */
void ac__depot_destroy(ac__depot *d)
{
    while (d->slabs) {
        ac__block *next = d->slabs->next;
        free(d->slabs);
        d->slabs = next;
    }
    for (unsigned k = 0; k < AC__POOL_CLASSES; k++)
        d->batches[k] = NULL;
    pthread_mutex_destroy(&d->lock);
}

void ac__pool_release(ac__pool *p)
{
    for (unsigned k = 0; k < AC__POOL_CLASSES; k++) {
        p->free[k] = NULL;  /* the memory belongs to the depot's slabs */
        p->count[k] = 0;
    }
}

/* A slab: one header block (the depot's slab list link, padded to keep the
 * blocks 16-byte aligned), then BATCH blocks of class k, which become the
 * context's free list. */
static bool refill_from_malloc(ac_ctx *cx, unsigned k)
{
    size_t size = class_sizes[k];
    unsigned char *slab = malloc(16 + (size_t)BATCH * size);
    if (slab == NULL)
        return false;
    AC__COUNT(cx, pool_misses, 1);
    ac__block *head = (ac__block *)(void *)slab;
    ac__depot *d = &cx->rt->depot;
    pthread_mutex_lock(&d->lock);
    head->next = d->slabs;
    d->slabs = head;
    pthread_mutex_unlock(&d->lock);
    ac__block *list = NULL;
    for (unsigned i = BATCH; i-- > 0;) {
        ac__block *b = (ac__block *)(void *)(slab + 16 + (size_t)i * size);
        b->next = list;
        list = b;
    }
    cx->pool.free[k] = list;
    cx->pool.count[k] = BATCH;
    return true;
}

static bool refill_from_depot(ac_ctx *cx, unsigned k)
{
    ac__depot *d = &cx->rt->depot;
    pthread_mutex_lock(&d->lock);
    ac__block *b = d->batches[k];
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
    /* Detach the first BATCH blocks of the list as one batch. */
    ac__block *first = cx->pool.free[k], *last = first;
    for (unsigned i = 1; i < BATCH; i++)
        last = last->next;
    cx->pool.free[k] = last->next;
    cx->pool.count[k] -= BATCH;
    last->next = NULL;

    ac__depot *d = &cx->rt->depot;
    pthread_mutex_lock(&d->lock);
    *next_batch(first) = d->batches[k];
    d->batches[k] = first;
    pthread_mutex_unlock(&d->lock);
}

/* The slow halves of alloc and free, out of line: the fast halves below
 * then call nothing but these, as tail calls, so they save no registers
 * and are small enough for link-time inlining into the send path and the
 * turn (callgrind: 44 instructions an allocation before, most of them the
 * saves and restores that the calls to the refills cost every call). */
#if defined(__GNUC__)
#define POOL_SLOW __attribute__((noinline, cold))
#else
#define POOL_SLOW
#endif

static POOL_SLOW void *block_alloc_slow(ac_ctx *cx, size_t size, uint16_t *klass)
{
    unsigned k = class_of(size);
    if (k == AC__POOL_CLASSES) {
        *klass = AC__CLASS_HUGE;
        AC__COUNT(cx, pool_misses, 1);
        return malloc(size);
    }
    if (!refill_from_depot(cx, k) && !refill_from_malloc(cx, k))
        return NULL;
    *klass = (uint16_t)k;
    ac__block *b = cx->pool.free[k];
    cx->pool.free[k] = b->next;
    cx->pool.count[k]--;
    return b;
}

void *ac__block_alloc(ac_ctx *cx, size_t size, uint16_t *klass)
{
    unsigned k = class_of(size);
    if (k < AC__POOL_CLASSES) {
        ac__block *b = cx->pool.free[k];
        if (b != NULL) {
            *klass = (uint16_t)k;
            cx->pool.free[k] = b->next;
            cx->pool.count[k]--;
            return b;
        }
    }
    return block_alloc_slow(cx, size, klass);
}

/* A huge block, or a list past twice a batch (the block is on it). */
static POOL_SLOW void block_free_slow(ac_ctx *cx, void *p, uint16_t klass)
{
    if (klass == AC__CLASS_HUGE)
        free(p);
    else
        spill_to_depot(cx, klass);
}

void ac__block_free(ac_ctx *cx, void *p, uint16_t klass)
{
    if (klass != AC__CLASS_HUGE) {
        ac__block *b = p;
        b->next = cx->pool.free[klass];
        cx->pool.free[klass] = b;
        if (++cx->pool.count[klass] <= 2 * BATCH)
            return;
    }
    block_free_slow(cx, p, klass);
}

ac__env *ac__pool_alloc(ac_ctx *cx, size_t payload_size)
{
    if (payload_size > AC_MAX_PAYLOAD)
        return NULL;
    uint16_t k;
    ac__env *e = ac__block_alloc(cx, AC_ENVELOPE_HEADER_SIZE + payload_size, &k);
    if (e != NULL)
        e->klass = k;
    return e;
}

void ac__pool_free(ac_ctx *cx, ac__env *e)
{
    ac__block_free(cx, e, e->klass);
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
