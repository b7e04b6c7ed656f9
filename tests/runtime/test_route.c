/*
 * test_route.c — the routing table (core/route.c) under concurrent
 * writers and lock-free readers: actors that stay are always found,
 * actors that come and go are found as themselves or not at all, and the
 * shards' locks serialise writers that meet (the writers share shards:
 * their addresses are random). Run under ThreadSanitizer too: readers and
 * writers meet on the slots, the arrays a rehash publishes, and the locks.
 */
#include "fixtures.h"

#include "core/addr.h"
#include "core/route.h"

#include <pthread.h>
#include <stdlib.h>

#define STABLE 2000     /* inserted first, never removed */
#define CHURN 2000      /* per writer: inserted and removed, round after round */
#define ROUNDS 20
#define WRITERS 2
#define READERS 2

typedef struct table_test {
    ac__route route;
    ac__actor *stable[STABLE];
    ac__actor *churn[WRITERS][CHURN];
    _Atomic bool done;
    _Atomic uint64_t wrong;   /* a lookup that found another actor */
    _Atomic uint64_t missed;  /* a stable actor not found */
    _Atomic uint64_t found;   /* churning actors found (they were there) */
} table_test;

static ac__actor *fake_actor(ac__addr_stream *s)
{
    /* The table reads only the address; the block is a real actor's size
     * (a multiple of the alignment, as aligned_alloc asks). */
    size_t size = (sizeof(ac__actor) + 16 + 15) & ~(size_t)15;
    ac__actor *a = aligned_alloc(16, size);
    cr_assert_not_null(a);
    memset(a, 0, size);
    ac__addr_next(s, &a->addr);
    return a;
}

typedef struct writer_arg {
    table_test *t;
    unsigned id;
    int rc;
} writer_arg;

static void *writer(void *p)
{
    writer_arg *w = p;
    table_test *t = w->t;
    for (unsigned r = 0; r < ROUNDS && w->rc == 0; r++) {
        for (unsigned i = 0; i < CHURN && w->rc == 0; i++)
            w->rc = ac__route_insert(&t->route, t->churn[w->id][i]);
        for (unsigned i = 0; i < CHURN; i++)
            ac__route_remove(&t->route, t->churn[w->id][i]);
    }
    return NULL;
}

static void *reader(void *p)
{
    table_test *t = p;
    unsigned pass = 0;
    do {
        for (unsigned i = 0; i < STABLE; i += 1 + pass % 3) {
            ac__actor *a = t->stable[i];
            ac__actor *got = ac__route_find(&t->route, &a->addr);
            if (got == NULL)
                atomic_fetch_add_explicit(&t->missed, 1, memory_order_relaxed);
            else if (got != a)
                atomic_fetch_add_explicit(&t->wrong, 1, memory_order_relaxed);
        }
        for (unsigned w = 0; w < WRITERS; w++)
            for (unsigned i = pass % 5; i < CHURN; i += 5) {
                ac__actor *a = t->churn[w][i];
                ac__actor *got = ac__route_lookup(&t->route, &a->addr);
                if (got == a)
                    atomic_fetch_add_explicit(&t->found, 1, memory_order_relaxed);
                else if (got != NULL)
                    atomic_fetch_add_explicit(&t->wrong, 1, memory_order_relaxed);
            }
        pass++;
        /* Relaxed: only when to stop; the threads' join orders the rest. */
    } while (!atomic_load_explicit(&t->done, memory_order_relaxed) || pass < 2);
    return NULL;
}

Test(route, inserts_and_removes_race_with_lookups)
{
    table_test *t = calloc(1, sizeof *t);
    cr_assert_not_null(t);
    /* A small table, so that the churn rehashes it again and again while
     * readers probe (gp NULL: outgrown arrays are kept until destroy,
     * which is what a grace period guarantees the runtime's readers). */
    cr_assert_eq(ac__route_init(&t->route, 64, NULL), 0);
    ac__addr_stream s;
    ac__addr_stream_init(&s, 1);
    for (unsigned i = 0; i < STABLE; i++) {
        t->stable[i] = fake_actor(&s);
        cr_assert_eq(ac__route_insert(&t->route, t->stable[i]), 0);
    }
    for (unsigned w = 0; w < WRITERS; w++)
        for (unsigned i = 0; i < CHURN; i++)
            t->churn[w][i] = fake_actor(&s);
    pthread_t rd[READERS], wr[WRITERS];
    writer_arg wa[WRITERS];
    for (unsigned i = 0; i < READERS; i++)
        cr_assert_eq(pthread_create(&rd[i], NULL, reader, t), 0);
    for (unsigned w = 0; w < WRITERS; w++) {
        wa[w] = (writer_arg){.t = t, .id = w};
        cr_assert_eq(pthread_create(&wr[w], NULL, writer, &wa[w]), 0);
    }
    for (unsigned w = 0; w < WRITERS; w++) {
        pthread_join(wr[w], NULL);
        cr_assert_eq(wa[w].rc, 0, "insert failed: %d", wa[w].rc);
    }
    atomic_store_explicit(&t->done, true, memory_order_relaxed);
    for (unsigned i = 0; i < READERS; i++)
        pthread_join(rd[i], NULL);
    cr_assert_eq(atomic_load(&t->wrong), 0, "a lookup found another actor");
    cr_assert_eq(atomic_load(&t->missed), 0, "a stable actor went missing");
    /* Afterwards: every stable actor there, every churning one gone. */
    for (unsigned i = 0; i < STABLE; i++)
        cr_assert_eq(ac__route_lookup(&t->route, &t->stable[i]->addr), t->stable[i]);
    for (unsigned w = 0; w < WRITERS; w++)
        for (unsigned i = 0; i < CHURN; i++)
            cr_assert_null(ac__route_lookup(&t->route, &t->churn[w][i]->addr));
    size_t count = 0;
    for (unsigned sh = 0; sh < (1u << AC__ROUTE_SHARD_BITS); sh++)
        count += t->route.shards[sh].live;
    cr_assert_eq(count, STABLE, "the shards' live counts add up");
    ac__route_destroy(&t->route);
    for (unsigned i = 0; i < STABLE; i++)
        free(t->stable[i]);
    for (unsigned w = 0; w < WRITERS; w++)
        for (unsigned i = 0; i < CHURN; i++)
            free(t->churn[w][i]);
    free(t);
}
