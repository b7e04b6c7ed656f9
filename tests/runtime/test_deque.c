/* The Chase–Lev deque on its own: one owner pushing (and taking), thieves
 * stealing concurrently; every item is taken exactly once, across growth. */
#include "core/deque.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>

enum { ITEMS = 200000, THIEVES = 3 };

typedef struct shared {
    ac__deque d;
    _Atomic uint8_t *taken;   /* per item: how many times it was taken */
    _Atomic bool done;
    _Atomic uint64_t total;
} shared;

static ac__actor *as_item(uintptr_t i) { return (ac__actor *)(i + 1); }
static uintptr_t item_of(ac__actor *a) { return (uintptr_t)a - 1; }

static void take(shared *s, ac__actor *a)
{
    atomic_fetch_add(&s->taken[item_of(a)], 1);
    atomic_fetch_add(&s->total, 1);
}

static void *thief(void *p)
{
    shared *s = p;
    for (;;) {
        ac__actor *a = ac__deque_steal(&s->d);
        if (a)
            take(s, a);
        else if (atomic_load(&s->done))
            break;
    }
    return NULL;
}

Test(deque, every_item_is_taken_exactly_once_with_concurrent_thieves, .timeout = 120)
{
    shared s;
    cr_assert_eq(ac__deque_init(&s.d, 4), 0, "small, to exercise growth");
    s.taken = calloc(ITEMS, 1);
    atomic_init(&s.done, false);
    atomic_init(&s.total, 0);
    pthread_t th[THIEVES];
    for (int i = 0; i < THIEVES; i++)
        pthread_create(&th[i], NULL, thief, &s);
    for (uintptr_t i = 0; i < ITEMS; i++) {
        cr_assert_eq(ac__deque_push(&s.d, as_item(i)), 0);
        if (i % 3 == 0) {  /* the owner takes too, from the same end */
            ac__actor *a = ac__deque_steal(&s.d);
            if (a)
                take(&s, a);
        }
    }
    atomic_store(&s.done, true);
    for (int i = 0; i < THIEVES; i++)
        pthread_join(th[i], NULL);
    ac__actor *a;
    while ((a = ac__deque_steal(&s.d)) != NULL)
        take(&s, a);
    cr_assert_eq(atomic_load(&s.total), ITEMS);
    for (uintptr_t i = 0; i < ITEMS; i++)
        cr_assert_eq(atomic_load(&s.taken[i]), 1, "item %lu taken %d times",
                     (unsigned long)i, atomic_load(&s.taken[i]));
    cr_assert_eq(ac__deque_size(&s.d), 0);
    ac__deque_destroy(&s.d);
    free(s.taken);
}

Test(deque, fifo_for_a_single_taker, .timeout = 10)
{
    ac__deque d;
    cr_assert_eq(ac__deque_init(&d, 2), 0);
    for (uintptr_t i = 0; i < 100; i++)
        cr_assert_eq(ac__deque_push(&d, as_item(i)), 0);
    cr_assert_eq(ac__deque_size(&d), 100);
    for (uintptr_t i = 0; i < 100; i++)
        cr_assert_eq(item_of(ac__deque_steal(&d)), i);
    cr_assert_null(ac__deque_steal(&d));
    ac__deque_destroy(&d);
}
