/*
 * quota.h — what each peer node holds in one of a service's tables: a
 * count per node id, taken when a record of that node's making is added
 * and given back when it goes, so that no one peer can fill the table
 * (docs/NODES.md, "What a peer may make a node hold"). Unlocked: the
 * service's lock guards it with the table it counts.
 */
#ifndef AC_LIB_QUOTA_H
#define AC_LIB_QUOTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ac__quota_slot {
    uint64_t node;   /* 0: empty (no incarnation is 0) */
    uint32_t held;
} ac__quota_slot;

typedef struct ac__quota {
    ac__quota_slot *slots;   /* open addressing, a power of two of them */
    size_t cap, used;
} ac__quota;

/* A zeroed ac__quota is empty and valid. */
void ac__quota_fini(ac__quota *q);

/* One more for `node`, unless it holds `max` already (or memory ran out
 * for a new node's slot): false then, and nothing is taken. */
bool ac__quota_take(ac__quota *q, uint64_t node, uint32_t max);

/* One back from `node` (which took it). */
void ac__quota_give(ac__quota *q, uint64_t node);

/* What `node` holds now. */
uint32_t ac__quota_held(const ac__quota *q, uint64_t node);

#endif /* AC_LIB_QUOTA_H */
