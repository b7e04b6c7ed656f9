/*
 * route.c — the routing table: address -> local actor.
 *
 * Open addressing with linear probing. Addresses are uniformly random, so
 * the first 8 bytes are the hash as they stand (identity hashing): no
 * hashing work on the send path, and nobody can aim at a bucket without
 * knowing addresses, which are the capabilities themselves. The top bits of
 * the hash pick one of 64 shards, the low 32 bits a slot in it (scaled to
 * the shard's size: ac__route_home), bits 32..46 the tag stored beside the
 * pointer in the slot's word (route.h, ac__route_tag).
 *
 * A shard's array is kept between 55 % and 75 % full (tombstones count):
 * a slot is 8 bytes, so that is 11 to 14.5 bytes an actor, where arrays
 * of a power of two, kept a third to a half full, cost 16 to 24 (and 16.8
 * at a million actors, the size of bench/spawn_idle; the control block's
 * 80-byte pool block and the slot make the idle actor's 96 bytes:
 * runtime/README.md, "The control block"). Linear probing at 75 % takes
 * 2.5 probes on average to find an actor (bench/route measures it), most
 * of them in the same cache line as the home slot, and the send path
 * probes the home slot inline (route.h). Scaling instead of masking costs
 * the lookup one instruction.
 *
 * Readers take no lock: they load the shard's current array, probe, and
 * confirm the whole address against the actor. Writers (spawn, death) take
 * their shard's lock; 64 shards keep workers that spawn and kill actors at
 * the same time from queueing on one lock. A removal leaves a tombstone.
 * Growth copies the live entries into a new array and publishes it; readers
 * still probing the old one see a consistent if slightly older table, and
 * actors are freed only after a grace period (qsbr.c), so a reader never
 * touches freed memory. An outgrown array is freed once every reader has
 * passed a quiescent state after it was replaced (ac__route_reclaim, driven
 * by qsbr.c): readers may still be probing it until then.
 */
#include "route.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define EMPTY ((uintptr_t)0)
#define TOMBSTONE ((uintptr_t)1)
#define PTR_BITS AC__ROUTE_PTR_BITS  /* route.h: ac__route_find reads slots too */
#define PTR_MASK (((uintptr_t)1 << PTR_BITS) - 1)
#define MIN_SHARD_SLOTS 64
#define REHASH_AHEAD 8      /* slots: how far rehash prefetches (see there) */

static inline uint64_t identity_hash(const ac_addr *a)
{
    uint64_t h;
    memcpy(&h, a->bytes, sizeof h);
    return h;
}

static inline uint64_t route_hash(const ac__route *r, const ac_addr *a)
{
    return r->hash ? r->hash(a, r->hash_key) : identity_hash(a);
}

static inline uintptr_t tag_of(uint64_t h)
{
    return ac__route_tag(h) & ~PTR_MASK;
}

/* Linear probing's next slot, wrapping at the end of the array. */
static inline size_t next_slot(const ac__route_array *arr, size_t i)
{
    return i + 1 == arr->cap ? 0 : i + 1;
}

static inline ac__actor *actor_of(uintptr_t v)
{
    return (ac__actor *)(v & PTR_MASK);
}

static inline ac__route_shard *shard_of(ac__route *r, uint64_t h)
{
    return &r->shards[h >> (64 - AC__ROUTE_SHARD_BITS)];
}

/* The shard's writer lock. Writers hold it for tens of nanoseconds (a probe
 * and a store; a rehash now and then), and with 64 shards two writers
 * rarely meet, so a spin lock it is: one exchange to take it and a plain
 * store to give it back, where a mutex paid two locked instructions and two
 * library calls on every spawn and every death (runtime/README.md, Routing,
 * says what that cost). A holder
 * preempted by the OS would make spinners burn their time slice, so after
 * a short spin they yield. */
#if defined(__GNUC__)
__attribute__((noinline, cold))
#endif
static void shard_lock_wait(ac__route_shard *sh)
{
    for (unsigned spins = 0;;) {
        while (atomic_load_explicit(&sh->lock, memory_order_relaxed) != 0) {
            if (++spins < 128) {
#if defined(__x86_64__) || defined(__i386__)
                __builtin_ia32_pause();
#endif
            } else {
                sched_yield();
            }
        }
        /* Acquire: as in shard_lock. */
        if (atomic_exchange_explicit(&sh->lock, 1, memory_order_acquire) == 0)
            return;
    }
}

/* The uncontended take inline, the wait out of line: the call, its saved
 * registers and the loop's set-up cost every spawn and every death about
 * ten instructions each (callgrind, skynet). */
static inline void shard_lock(ac__route_shard *sh)
{
    /* Acquire: the previous holder's writes are visible. */
    if (__builtin_expect(atomic_exchange_explicit(&sh->lock, 1, memory_order_acquire) != 0, 0))
        shard_lock_wait(sh);
}

static void shard_unlock(ac__route_shard *sh)
{
    /* Release: our writes happen before the next holder's. */
    atomic_store_explicit(&sh->lock, 0, memory_order_release);
}

static ac__route_array *array_new(size_t capacity, ac__route_array *older)
{
    ac__route_array *arr = malloc(sizeof *arr + capacity * sizeof(_Atomic uintptr_t));
    if (arr == NULL)
        return NULL;
    arr->older = older;
    arr->cap = capacity;
    for (size_t i = 0; i < capacity; i++)
        atomic_init(&arr->slots[i], EMPTY);
    return arr;
}

static void shard_destroy(ac__route_shard *sh)
{
    ac__route_array *arr = atomic_load_explicit(&sh->array, memory_order_relaxed);
    while (arr) {
        ac__route_array *older = arr->older;
        free(arr);
        arr = older;
    }
    atomic_store_explicit(&sh->array, NULL, memory_order_relaxed);
}

int ac__route_init(ac__route *r, size_t capacity, _Atomic uint64_t *gp)
{
    size_t nshards = 1u << AC__ROUTE_SHARD_BITS, cap = MIN_SHARD_SLOTS;
    while (cap * nshards < capacity)
        cap *= 2;
    for (size_t i = 0; i < nshards; i++) {
        ac__route_shard *sh = &r->shards[i];
        ac__route_array *arr = array_new(cap, NULL);
        if (arr == NULL) {
            while (i-- > 0)
                shard_destroy(&r->shards[i]);
            return AC_ENOMEM;
        }
        atomic_init(&sh->array, arr);
        atomic_init(&sh->lock, 0);
        sh->live = sh->used = 0;
    }
    r->hash = NULL;
    r->hash_key = NULL;
    r->gp = gp;
    atomic_init(&r->has_outgrown, false);
    atomic_init(&r->next_due, UINT64_MAX);
    return 0;
}

/* Lowers r->next_due to at most `due`. */
static void due_at(ac__route *r, uint64_t due)
{
    /* Relaxed: a hint; the arrays themselves are read under the locks. */
    uint64_t cur = atomic_load_explicit(&r->next_due, memory_order_relaxed);
    while (due < cur &&
           !atomic_compare_exchange_weak_explicit(&r->next_due, &cur, due,
                                                  memory_order_relaxed,
                                                  memory_order_relaxed))
        ;
}

void ac__route_reclaim(ac__route *r, uint64_t oldest)
{
    /* Nothing is due yet: skip the 64 locks. Called between turns as long
     * as an outgrown array waits, which is as long as the slowest reader
     * takes to pass a quiescent state (a worker the OS has descheduled). */
    if (atomic_load_explicit(&r->next_due, memory_order_relaxed) > oldest)
        return;
    /* Relaxed: a hint, set again below by any shard that still waits. */
    if (!atomic_exchange_explicit(&r->has_outgrown, false, memory_order_relaxed))
        return;
    /* Every array still waiting after the scan lowers it again; an array
     * outgrown during the scan lowers it itself (rehash, under its shard's
     * lock, after this store). */
    atomic_store_explicit(&r->next_due, UINT64_MAX, memory_order_relaxed);
    uint64_t next = UINT64_MAX;
    bool waiting = false;
    for (size_t s = 0; s < (1u << AC__ROUTE_SHARD_BITS); s++) {
        ac__route_shard *sh = &r->shards[s];
        shard_lock(sh);
        ac__route_array *keep = atomic_load_explicit(&sh->array, memory_order_relaxed);
        /* Newest first, so targets fall along the chain: free from the
         * first one that is due. */
        while (keep->older && keep->older->free_after > oldest)
            keep = keep->older;
        ac__route_array *due = keep->older;
        keep->older = NULL;
        if (keep != atomic_load_explicit(&sh->array, memory_order_relaxed)) {
            waiting = true;
            if (keep->free_after < next)  /* the oldest waiting, the first due */
                next = keep->free_after;
        }
        shard_unlock(sh);
        while (due) {
            ac__route_array *older = due->older;
            free(due);
            due = older;
        }
    }
    if (waiting) {
        due_at(r, next);
        atomic_store_explicit(&r->has_outgrown, true, memory_order_relaxed);
    }
}

void ac__route_set_hash(ac__route *r, ac__route_hash_fn fn, const void *key)
{
    r->hash = fn;
    r->hash_key = key;
}

void ac__route_destroy(ac__route *r)
{
    for (size_t i = 0; i < (1u << AC__ROUTE_SHARD_BITS); i++)
        shard_destroy(&r->shards[i]);
}

ac__actor *ac__route_lookup(ac__route *r, const ac_addr *addr)
{
    return ac__route_lookup_hashed(r, addr, identity_hash(addr));
}

ac__actor *ac__route_lookup_hashed(ac__route *r, const ac_addr *addr, uint64_t h)
{
    /* Acquire: the array's slots as they were when it was published. */
    ac__route_array *arr =
        atomic_load_explicit(&shard_of(r, h)->array, memory_order_acquire);
    uintptr_t tag = tag_of(h);
    for (size_t i = ac__route_home(h, arr->cap);; i = next_slot(arr, i)) {
        /* Acquire: pairs with the insert's release, so the actor's address
         * and type are initialised when we read them. */
        uintptr_t v = atomic_load_explicit(&arr->slots[i], memory_order_acquire);
        if (v == EMPTY)
            return NULL;
        /* The tag filters; the full compare decides. */
        if ((v & ~PTR_MASK) == tag) {  /* never empty nor a tombstone */
            ac__actor *a = actor_of(v);
            if (memcmp(a->addr.bytes, addr->bytes, sizeof addr->bytes) == 0)
                return a;
        }
    }
}

/* Writer side, under the shard's lock: relaxed loads suffice for our own
 * data. */
#if defined(__GNUC__)
__attribute__((always_inline))  /* in insert, as it was before the scaling */
#endif
static inline void place(ac__route_array *arr, ac__actor *a, uint64_t h, bool *took_empty)
{
    for (size_t i = ac__route_home(h, arr->cap);; i = next_slot(arr, i)) {
        uintptr_t cur = atomic_load_explicit(&arr->slots[i], memory_order_relaxed);
        if (cur == EMPTY || cur == TOMBSTONE) {
            *took_empty = cur == EMPTY;
            /* Release: publishes the actor's initialised fields. */
            atomic_store_explicit(&arr->slots[i], tag_of(h) | (uintptr_t)a,
                                  memory_order_release);
            return;
        }
    }
}

static int rehash(ac__route *r, ac__route_shard *sh, ac__route_array *arr)
{
    /* To 55 % full with the insert that asks (live + 1), at least the
     * smallest size: more than 75 % triggers the next rehash (insert), so
     * a table spends its life between the two (tombstones aside). A
     * rehash that only sweeps tombstones may shrink the array. */
    size_t cap = (sh->live + 1) * 20 / 11 + 1;
    if (cap < MIN_SHARD_SLOTS)
        cap = MIN_SHARD_SLOTS;
    ac__route_array *fresh = array_new(cap, arr);
    if (fresh == NULL)
        return AC_ENOMEM;
    for (size_t i = 0; i < arr->cap; i++) {
        /* Rehashing reads every actor's address, scattered over memory:
         * ask for the one a few slots ahead now (a cache miss each at a
         * million actors, and a 75 % table grows by 1.36x, not 2x). */
        if (i + REHASH_AHEAD < arr->cap) {
            uintptr_t ahead = atomic_load_explicit(&arr->slots[i + REHASH_AHEAD],
                                                   memory_order_relaxed);
            if (ahead > TOMBSTONE)
                __builtin_prefetch(&actor_of(ahead)->addr);
        }
        uintptr_t v = atomic_load_explicit(&arr->slots[i], memory_order_relaxed);
        if (v != EMPTY && v != TOMBSTONE) {
            bool took_empty;
            ac__actor *a = actor_of(v);
            place(fresh, a, route_hash(r, &a->addr), &took_empty);
        }
    }
    sh->used = sh->live;
    /* Release: readers that load the new array see it filled. */
    atomic_store_explicit(&sh->array, fresh, memory_order_release);
    /* acq_rel, after the publication: a reader that announces this value
     * later has stopped probing the old array (as for actors, qsbr.c). */
    arr->free_after = r->gp ? atomic_fetch_add_explicit(r->gp, 1, memory_order_acq_rel) + 1
                            : UINT64_MAX;
    due_at(r, arr->free_after);
    atomic_store_explicit(&r->has_outgrown, true, memory_order_relaxed);
    return 0;
}

int ac__route_insert(ac__route *r, ac__actor *a)
{
    if (((uintptr_t)a & ~PTR_MASK) != 0)
        return AC_EINVAL;  /* a pointer above 2^48: no room for the tag */
    uint64_t h = route_hash(r, &a->addr);
    ac__route_shard *sh = shard_of(r, h);
    shard_lock(sh);
    ac__route_array *arr = atomic_load_explicit(&sh->array, memory_order_relaxed);
    if ((sh->used + 1) * 4 > arr->cap * 3) {  /* keep probes short: <= 3/4 */
        int rc = rehash(r, sh, arr);
        if (rc != 0) {
            shard_unlock(sh);
            return rc;
        }
        arr = atomic_load_explicit(&sh->array, memory_order_relaxed);
    }
    bool took_empty;
    place(arr, a, h, &took_empty);
    sh->live++;
    sh->used += took_empty;
    shard_unlock(sh);
    return 0;
}

void ac__route_remove(ac__route *r, ac__actor *a)
{
    uint64_t h = route_hash(r, &a->addr);
    ac__route_shard *sh = shard_of(r, h);
    shard_lock(sh);
    ac__route_array *arr = atomic_load_explicit(&sh->array, memory_order_relaxed);
    for (size_t i = ac__route_home(h, arr->cap);; i = next_slot(arr, i)) {
        uintptr_t cur = atomic_load_explicit(&arr->slots[i], memory_order_relaxed);
        if (cur == EMPTY)
            break;  /* not present: removed already */
        if (cur != TOMBSTONE && actor_of(cur) == a) {
            sh->live--;
            size_t next = next_slot(arr, i);
            if (atomic_load_explicit(&arr->slots[next], memory_order_relaxed) != EMPTY) {
                /* Release: orders the removal before the grace period
                 * the caller starts next (qsbr.c). */
                atomic_store_explicit(&arr->slots[i], TOMBSTONE, memory_order_release);
                break;
            }
            /* The slot ends a run: no probe goes past it, so it can be
             * empty, and so can the tombstones just before it. A reader
             * probing here concludes "absent" one slot earlier, which is
             * the same answer. Without this, a table with many deaths
             * (skynet) fills with tombstones that every probe walks. */
            for (;;) {
                atomic_store_explicit(&arr->slots[i], EMPTY, memory_order_release);
                sh->used--;
                i = (i == 0 ? arr->cap : i) - 1;
                if (atomic_load_explicit(&arr->slots[i], memory_order_relaxed) != TOMBSTONE)
                    break;
            }
            break;
        }
    }
    shard_unlock(sh);
}

void ac__route_each(ac__route *r, void (*fn)(ac__actor *, void *), void *arg)
{
    for (size_t s = 0; s < (1u << AC__ROUTE_SHARD_BITS); s++) {
        ac__route_shard *sh = &r->shards[s];
        shard_lock(sh);
        ac__route_array *arr = atomic_load_explicit(&sh->array, memory_order_relaxed);
        for (size_t i = 0; i < arr->cap; i++) {
            uintptr_t v = atomic_load_explicit(&arr->slots[i], memory_order_relaxed);
            if (v != EMPTY && v != TOMBSTONE)
                fn(actor_of(v), arg);
        }
        shard_unlock(sh);
    }
}

size_t ac__route_capacity(ac__route *r)
{
    size_t slots = 0;
    for (size_t s = 0; s < (1u << AC__ROUTE_SHARD_BITS); s++)
        slots += atomic_load_explicit(&r->shards[s].array, memory_order_relaxed)->cap;
    return slots;
}
