/*
 * pool.h — per-context size-class pools of envelopes and actor blocks, and
 * the runtime's depot where contexts trade surplus blocks in batches.
 */
#ifndef AC_CORE_POOL_H
#define AC_CORE_POOL_H

#include "envelope.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* Size classes: 16-byte steps to 256 B, then about a half step each to
 * 16 KiB (pool.c). Envelopes and actor blocks share them. */
#define AC__POOL_CLASSES 28
#define AC__CLASS_HUGE 0xFFu        /* malloc'd directly; fits an actor's byte */

/* A free block: the first word links it into a free list. */
typedef struct ac__block {
    struct ac__block *next;
} ac__block;

typedef struct ac__pool {
    ac__block *free[AC__POOL_CLASSES];
    uint32_t count[AC__POOL_CLASSES];
} ac__pool;

/* Where contexts hand surplus blocks, in batches, and fetch them back. */
typedef struct ac__depot {
    pthread_mutex_t lock;
    ac__block *batches[AC__POOL_CLASSES];  /* see pool.c */
    ac__block *slabs;                      /* every slab, freed at the end */
} ac__depot;

ac__env *ac__pool_alloc(ac_ctx *cx, size_t payload_size);
void ac__pool_free(ac_ctx *cx, ac__env *e);
/* Raw blocks of `size` bytes (16-byte aligned); *klass says how to free. */
void *ac__block_alloc(ac_ctx *cx, size_t size, uint16_t *klass);
void ac__block_free(ac_ctx *cx, void *p, uint16_t klass);
void ac__pool_release(ac__pool *p);
/* The bytes a block of class `klass` takes (0 for AC__CLASS_HUGE): for
 * tests/runtime/test_footprint.c. */
size_t ac__pool_class_size(unsigned klass);
int ac__depot_init(ac__depot *d);
void ac__depot_destroy(ac__depot *d);

#endif /* AC_CORE_POOL_H */
