/*
 * typestats.c — per-actor-type counters. Each context keeps a table of
 * the types whose actors it ran, indexed by the descriptor's address
 * (open addressing, linear probing), which only its own thread writes:
 * counting is a load and a store of relaxed atomics, as for the
 * runtime's other counters (runtime.h), and a reader on any thread sums
 * the tables. A slot is claimed once and never given back, so a reader
 * that sees a slot's type (acquire) reads that type's counters.
 *
 * The mailbox high-water mark comes from the bound's count (actor.h,
 * ac__bound): with the counters on, every actor is spawned with one
 * (for an unbounded type the count alone, limit 0), and the turn reads
 * it as it takes each message. The count only falls when a message is
 * taken, so its maximum is reached just before a take, where it is read
 * (runtime/README.md, "Watching turns").
 */
#include "typestats.h"

#include "runtime.h"
#include "sched.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Types a thread can tell apart; the ones beyond are not counted (a
 * program has a few dozen). A power of two. */
#define TYPE_SLOTS 256

typedef struct ac__type_entry {
    /* Written once by the owner (release, after its counters are zero),
     * read by any thread (acquire). */
    _Atomic(const ac_actor_type *) type;
    _Atomic uint64_t turns, handled, failed, ns_total, ns_max, hwm;
} ac__type_entry;

struct ac__type_table {
    ac__type_entry slot[TYPE_SLOTS];
};

void ac__typestats_ctx_init(ac_ctx *cx)
{
    cx->types = NULL;
    if (!(cx->observe & AC__OBS_TYPES))
        return;
    /* calloc: every atomic starts as zero bytes, which is its zero value
     * on the platforms C11 atomics run on without locks. */
    ac__type_table *t = calloc(1, sizeof *t);
    if (t == NULL) {
        cx->observe &= ~AC__OBS_TYPES;
        return;
    }
    cx->types = t;
}

void ac__typestats_ctx_fini(ac_ctx *cx)
{
    free(cx->types);
    cx->types = NULL;
}

static unsigned slot_of(const ac_actor_type *type)
{
    /* Fibonacci hashing of the address: descriptors are laid out a few
     * dozen bytes apart, so the low bits alone would cluster. */
    return (unsigned)(((uint64_t)(uintptr_t)type * 0x9E3779B97F4A7C15u) >> 56) &
           (TYPE_SLOTS - 1);
}

/* The owner's entry for `type`, claimed if new; NULL when the table is full. */
static ac__type_entry *entry_of(ac_ctx *cx, const ac_actor_type *type)
{
    ac__type_table *t = cx->types;
    if (t == NULL || type == NULL)
        return NULL;
    for (unsigned i = slot_of(type), n = 0; n < TYPE_SLOTS; i = (i + 1) & (TYPE_SLOTS - 1), n++) {
        ac__type_entry *e = &t->slot[i];
        /* Relaxed: the owner reads what it wrote itself. */
        const ac_actor_type *seen = atomic_load_explicit(&e->type, memory_order_relaxed);
        if (seen == type)
            return e;
        if (seen == NULL) {
            /* Release: a reader that sees the type sees zero counters. */
            atomic_store_explicit(&e->type, type, memory_order_release);
            return e;
        }
    }
    return NULL;
}

/* Owner-only increments: a load and a store, not a read-modify-write. */
static inline void add(_Atomic uint64_t *c, uint64_t n)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

static inline void raise_to(_Atomic uint64_t *c, uint64_t n)
{
    if (n > atomic_load_explicit(c, memory_order_relaxed))
        atomic_store_explicit(c, n, memory_order_relaxed);  /* relaxed: as add */
}

void ac__typestats_turn(ac_ctx *cx, const ac_actor_type *type, uint32_t handled,
                        uint64_t ns, uint32_t hwm)
{
    ac__type_entry *e = entry_of(cx, type);
    if (e == NULL)
        return;
    add(&e->turns, 1);
    add(&e->handled, handled);
    add(&e->ns_total, ns);
    raise_to(&e->ns_max, ns);
    raise_to(&e->hwm, hwm);
}

void ac__typestats_failed(ac_ctx *cx, const ac_actor_type *type)
{
    ac__type_entry *e = entry_of(cx, type);
    if (e != NULL)
        add(&e->failed, 1);
}

/* ---- reading ------------------------------------------------------------- */

/* Adds one context's entries into acc[0..*n), growing it; false when out
 * of memory. */
static bool gather(const ac_ctx *cx, ac_type_stats **acc, size_t *n, size_t *cap)
{
    if (cx->types == NULL)
        return true;
    for (unsigned i = 0; i < TYPE_SLOTS; i++) {
        const ac__type_entry *e = &cx->types->slot[i];
        /* Acquire: pairs with the claim's release (the counters' zeros). */
        const ac_actor_type *type = atomic_load_explicit(&e->type, memory_order_acquire);
        if (type == NULL)
            continue;
        size_t j = 0;
        while (j < *n && (*acc)[j].type != type)
            j++;
        if (j == *n) {
            if (*n == *cap) {
                size_t more = *cap ? *cap * 2 : 16;
                ac_type_stats *p = realloc(*acc, more * sizeof *p);
                if (p == NULL)
                    return false;
                *acc = p;
                *cap = more;
            }
            memset(&(*acc)[j], 0, sizeof **acc);
            (*acc)[j].type = type;
            (*n)++;
        }
        ac_type_stats *s = &(*acc)[j];
        /* Relaxed: counters, exact once the runtime is quiescent. */
        s->turns += atomic_load_explicit(&e->turns, memory_order_relaxed);
        s->handled += atomic_load_explicit(&e->handled, memory_order_relaxed);
        s->failed += atomic_load_explicit(&e->failed, memory_order_relaxed);
        s->turn_ns_total += atomic_load_explicit(&e->ns_total, memory_order_relaxed);
        uint64_t mx = atomic_load_explicit(&e->ns_max, memory_order_relaxed);
        uint64_t hw = atomic_load_explicit(&e->hwm, memory_order_relaxed);
        if (mx > s->turn_ns_max)
            s->turn_ns_max = mx;
        if (hw > s->mailbox_hwm)
            s->mailbox_hwm = hw;
    }
    return true;
}

/* Every type's sums, in *out (the caller frees it); the count, AC_ENOMEM,
 * or AC_ESTATE when the runtime does not count per type. */
static int collect(ac_runtime *rt, ac_type_stats **out)
{
    if (!(rt->observe & AC__OBS_TYPES))
        return AC_ESTATE;
    ac_type_stats *acc = NULL;
    size_t n = 0, cap = 0;
    bool ok = true;
    for (unsigned i = 0; i < rt->nslots && ok; i++)
        ok = gather(&rt->workers[i].cx, &acc, &n, &cap);
    pthread_mutex_lock(&rt->ext_lock);
    for (ac_ctx *p = rt->externals; p != NULL && ok; p = p->next_external)
        ok = gather(p, &acc, &n, &cap);
    pthread_mutex_unlock(&rt->ext_lock);
    if (!ok || n > (size_t)INT32_MAX) {
        free(acc);
        return AC_ENOMEM;
    }
    *out = acc;
    return (int)n;
}

int ac_runtime_type_stats(ac_runtime *rt, const ac_actor_type *type, ac_type_stats *out)
{
    if (rt == NULL || type == NULL || out == NULL)
        return AC_EINVAL;
    ac_type_stats *all;
    int n = collect(rt, &all);
    if (n < 0)
        return n;
    int rc = AC_ENOTFOUND;
    for (int i = 0; i < n; i++) {
        if (all[i].type == type) {
            *out = all[i];
            rc = 0;
        }
    }
    free(all);
    return rc;
}

int ac_runtime_types_stats(ac_runtime *rt, ac_type_stats *out, size_t cap)
{
    if (rt == NULL || (out == NULL && cap > 0))
        return AC_EINVAL;
    ac_type_stats *all;
    int n = collect(rt, &all);
    if (n < 0)
        return n;
    for (size_t i = 0; i < (size_t)n && i < cap; i++)
        out[i] = all[i];
    free(all);
    return n;
}

void ac__typestats_print(ac_runtime *rt, FILE *f)
{
    ac_type_stats *all = NULL;
    int n = collect(rt, &all);  /* none when types are not counted */
    for (int i = 0; i < n; i++) {
        const ac_type_stats *s = &all[i];
        fprintf(f,
                "actorc stats type %s turns %" PRIu64 " handled %" PRIu64 " failed %" PRIu64
                " turn_ns_mean %" PRIu64 " turn_ns_max %" PRIu64 " mailbox_hwm %" PRIu64 "\n",
                s->type->name ? s->type->name : "?", s->turns, s->handled, s->failed,
                s->turns ? s->turn_ns_total / s->turns : 0, s->turn_ns_max, s->mailbox_hwm);
    }
    free(all);
}
