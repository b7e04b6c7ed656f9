/*
 * route.h — the routing table: address -> local actor, identity-hashed,
 * lock-free lookups, sharded writers (route.c says how).
 */
#ifndef AC_CORE_ROUTE_H
#define AC_CORE_ROUTE_H

#include "actor.h"
#include "atomics.h"

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A slot is one word: the actor's address in the low 48 bits (user-space
 * pointers fit), a tag above it to skip most mismatches without touching
 * the actor (ac__route_tag), or 0 (empty) or 1 (tombstone). */
typedef struct ac__route_array {
    struct ac__route_array *older;  /* outgrown arrays, newest first */
    uint64_t free_after;            /* once outgrown: its grace-period target */
    size_t cap;                     /* slots: any number below 2^32 */
    _Atomic uintptr_t slots[];
} ac__route_array;

/* An address's home slot in an array of `cap`: the low 32 bits of the
 * hash scaled to [0, cap) by a multiply and a shift (Lemire's reduction),
 * so that a shard's array can be any size, not only a power of two, for
 * one instruction more than a mask (route.c says why). */
static inline size_t ac__route_home(uint64_t h, size_t cap)
{
    return (size_t)(((h & 0xFFFFFFFFu) * (uint64_t)cap) >> 32);
}

/* The table's hash of an address; NULL means the identity hash. */
typedef uint64_t (*ac__route_hash_fn)(const ac_addr *addr, const void *key);

/* One of the table's independent parts: writers of different shards never
 * contend (spawns and deaths on all workers at once). */
typedef struct ac__route_shard {
    /* Read by every send, written only by a rehash: alone on its line, so
     * that the writers' lock and counts (spawns and deaths, on every
     * worker) do not take it from the readers' caches. */
    alignas(AC__CACHE_LINE) _Atomic(ac__route_array *) array;
    alignas(AC__CACHE_LINE) _Atomic uint32_t lock;  /* spin lock: serialises this shard's writers */
    size_t live, used;              /* under lock; used counts tombstones */
} ac__route_shard;

#define AC__ROUTE_SHARD_BITS 6

typedef struct ac__route {
    alignas(AC__CACHE_LINE) ac__route_shard shards[1u << AC__ROUTE_SHARD_BITS];
    ac__route_hash_fn hash;         /* NULL: identity (the runtime's) */
    const void *hash_key;
    _Atomic uint64_t *gp;           /* the runtime's grace-period counter */
    _Atomic bool has_outgrown;      /* some shard keeps an outgrown array */
    _Atomic uint64_t next_due;      /* no outgrown array is due before it */
} ac__route;

/* `gp` may be NULL: outgrown arrays are then kept until destroy. */
int ac__route_init(ac__route *r, size_t capacity, _Atomic uint64_t *gp);
/* Frees the outgrown arrays whose grace period ends at or before `oldest`
 * (qsbr.c computes it). */
void ac__route_reclaim(ac__route *r, uint64_t oldest);
void ac__route_destroy(ac__route *r);
ac__actor *ac__route_lookup(ac__route *r, const ac_addr *addr);
int ac__route_insert(ac__route *r, ac__actor *a);
/* bench/route.c keys a table with SipHash to compare: set the hash before
 * the first insert, and look up with the hash computed by the caller. The
 * runtime always uses the identity hash. */
void ac__route_set_hash(ac__route *r, ac__route_hash_fn fn, const void *key);
ac__actor *ac__route_lookup_hashed(ac__route *r, const ac_addr *addr, uint64_t h);
void ac__route_remove(ac__route *r, ac__actor *a);

/* The tag of hash h, in the top 16 bits (the rest is noise the caller
 * masks or shifts out): bits 32..46 of the hash under a top bit that is
 * always set, so that an empty slot (0) or a tombstone (1) never matches
 * and a lookup need not test for them apart. */
static inline uint64_t ac__route_tag(uint64_t h)
{
    return (h << 16) | ((uint64_t)1 << 63);
}

/* The lookup of the send path: the home slot probed inline (at the
 * table's load, 55 % to 75 % full, most actors sit there), the full
 * probe (ac__route_lookup) out of line. Identity hashing, as
 * ac__route_lookup; the slot word as route.c packs it: the tag
 * (ac__route_tag) above a 48-bit pointer. */
#define AC__ROUTE_PTR_BITS 48
static inline ac__actor *ac__route_find(ac__route *r, const ac_addr *addr)
{
    uint64_t h;
    memcpy(&h, addr->bytes, sizeof h);
    /* Acquire, both: as in ac__route_lookup_hashed (the array as it was
     * published; the actor's fields as its insert released them). */
    ac__route_array *arr = atomic_load_explicit(
        &r->shards[h >> (64 - AC__ROUTE_SHARD_BITS)].array, memory_order_acquire);
    uintptr_t v = atomic_load_explicit(&arr->slots[ac__route_home(h, arr->cap)],
                                       memory_order_acquire);
    /* The tags match: a live entry (ac__route_tag). */
    if (((v ^ ac__route_tag(h)) >> AC__ROUTE_PTR_BITS) == 0) {
        ac__actor *a = (ac__actor *)(v & (((uintptr_t)1 << AC__ROUTE_PTR_BITS) - 1));
        if (memcmp(a->addr.bytes, addr->bytes, sizeof addr->bytes) == 0)
            return a;
    }
    return ac__route_lookup_hashed(r, addr, h);
}
/* Calls fn on every live actor, holding the writer lock. */
void ac__route_each(ac__route *r, void (*fn)(ac__actor *, void *), void *arg);
/* Slots in all the shards' current arrays (for bench/route.c). */
size_t ac__route_capacity(ac__route *r);

#endif /* AC_CORE_ROUTE_H */
