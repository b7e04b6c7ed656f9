/*
 * deque.c — the Chase–Lev work-stealing deque (Chase and Lev, SPAA 2005;
 * C11 version: Lê, Pop, Cohen and Zappa Nardelli, "Correct and Efficient
 * Work-Stealing for Weak Memory Models", PPoPP 2013, figure 1).
 *
 * The owner pushes at the bottom and takes from either end: the newest
 * (ac__deque_pop, the paper's take) or, like everyone else, the oldest
 * (ac__deque_steal). Which end, and how often, is sched.c's decision: the
 * newest end keeps a tree of spawns depth-first, the oldest end keeps
 * actors that keep waking each other from starving the rest.
 *
 * Memory orders: where the paper puts a seq_cst fence between the owner's
 * decrement of bottom and its read of top (pop), and between a thief's read
 * of top and of bottom (steal), these accesses are themselves seq_cst
 * instead, so that all of them lie in one total order, which is the model
 * the original proof assumes. On x86 that is an xchg in pop and plain loads
 * in steal (no fence), and ThreadSanitizer, which does not model fences,
 * sees the same ordering.
 *
 * Arrays only grow; an outgrown array stays alive (chained through `older`)
 * until the deque is destroyed, because a thief may still be reading it. The
 * sizes double, so the old arrays together are smaller than the current one.
 */
#include "deque.h"

#include <stdlib.h>

static ac__deque_array *array_new(int64_t size, ac__deque_array *older)
{
    ac__deque_array *a =
        malloc(sizeof *a + (size_t)size * sizeof(_Atomic(ac__actor *)));
    if (a == NULL)
        return NULL;
    a->older = older;
    a->size = size;
    for (int64_t i = 0; i < size; i++)
        atomic_init(&a->slots[i], NULL);
    return a;
}

static inline ac__actor *slot_get(ac__deque_array *a, int64_t i)
{
    return atomic_load_explicit(&a->slots[i & (a->size - 1)], memory_order_relaxed);
}

static inline void slot_put(ac__deque_array *a, int64_t i, ac__actor *x)
{
    atomic_store_explicit(&a->slots[i & (a->size - 1)], x, memory_order_relaxed);
}

int ac__deque_init(ac__deque *d, int64_t size)
{
    ac__deque_array *a = array_new(size, NULL);
    if (a == NULL)
        return AC_ENOMEM;
    atomic_init(&d->top, 0);
    atomic_init(&d->bottom, 0);
    atomic_init(&d->array, a);
    return 0;
}

void ac__deque_destroy(ac__deque *d)
{
    ac__deque_array *a = atomic_load_explicit(&d->array, memory_order_relaxed);
    while (a) {
        ac__deque_array *older = a->older;
        free(a);
        a = older;
    }
    atomic_store_explicit(&d->array, NULL, memory_order_relaxed);
}

static ac__deque_array *grow(ac__deque *d, ac__deque_array *a, int64_t t, int64_t b)
{
    ac__deque_array *bigger = array_new(a->size * 2, a);
    if (bigger == NULL)
        return NULL;
    for (int64_t i = t; i < b; i++)
        slot_put(bigger, i, slot_get(a, i));
    /* Release: a thief that loads the new array sees its slots filled. */
    atomic_store_explicit(&d->array, bigger, memory_order_release);
    return bigger;
}

int ac__deque_push(ac__deque *d, ac__actor *x)
{
    int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
    int64_t t = atomic_load_explicit(&d->top, memory_order_acquire);
    ac__deque_array *a = atomic_load_explicit(&d->array, memory_order_relaxed);
    if (b - t > a->size - 1) {
        /* The published fix to the paper's push: use the array grow()
         * returns, never the one loaded before it. */
        a = grow(d, a, t, b);
        if (a == NULL)
            return AC_ENOMEM;
    }
    slot_put(a, b, x);
    /* Release (the paper's release fence, folded into the store): the slot,
     * and the actor it points to, are visible to a thief that sees the new
     * bottom. */
    atomic_store_explicit(&d->bottom, b + 1, memory_order_release);
    return 0;
}

ac__actor *ac__deque_pop(ac__deque *d)
{
    int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed) - 1;
    ac__deque_array *a = atomic_load_explicit(&d->array, memory_order_relaxed);
    /* seq_cst store, then seq_cst load: a thief that reads the old bottom
     * read top before we read it here (see steal), so for the last element
     * both of us go to the CAS on top below. */
    atomic_store_explicit(&d->bottom, b, memory_order_seq_cst);
    int64_t t = atomic_load_explicit(&d->top, memory_order_seq_cst);
    if (t > b) {
        /* Empty: put bottom back where it was. */
        atomic_store_explicit(&d->bottom, b + 1, memory_order_relaxed);
        return NULL;
    }
    ac__actor *x = slot_get(a, b);
    if (t < b)
        return x;  /* more than one left: no thief can reach slot b */
    /* The last element: race the thieves for it on top. */
    if (!atomic_compare_exchange_strong_explicit(&d->top, &t, t + 1,
                                                 memory_order_seq_cst,
                                                 memory_order_relaxed))
        x = NULL;
    atomic_store_explicit(&d->bottom, b + 1, memory_order_relaxed);
    return x;
}

ac__actor *ac__deque_steal(ac__deque *d)
{
    for (;;) {
        /* seq_cst (the paper's acquire load and fence): ordered with the
         * owner's decrement of bottom in pop; acquire: the slots below
         * bottom are filled. */
        int64_t t = atomic_load_explicit(&d->top, memory_order_seq_cst);
        int64_t b = atomic_load_explicit(&d->bottom, memory_order_seq_cst);
        if (t >= b)
            return NULL;
        /* Acquire (the paper's consume): the array's slots as published. */
        ac__deque_array *a = atomic_load_explicit(&d->array, memory_order_acquire);
        ac__actor *x = slot_get(a, t);
        if (atomic_compare_exchange_strong_explicit(&d->top, &t, t + 1,
                                                    memory_order_seq_cst,
                                                    memory_order_relaxed))
            return x;
        /* Lost the race for this element to another taker (or to the
         * owner's pop of the last one): try again. */
    }
}

int64_t ac__deque_size(ac__deque *d)
{
    /* Relaxed: a hint for wake-up decisions; a stale value costs at most a
     * spurious or a skipped notification that the parking protocol covers. */
    int64_t b = atomic_load_explicit(&d->bottom, memory_order_relaxed);
    int64_t t = atomic_load_explicit(&d->top, memory_order_relaxed);
    return b > t ? b - t : 0;
}
