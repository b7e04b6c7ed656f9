/*
 * test_inject.c — sends from threads that are not workers: they schedule
 * through the injection queue (sched.c), a lock-free stack that only the
 * push that makes it non-empty notifies for. These tests say that no message is lost or
 * reordered, that a fully parked runtime always wakes for one send (the
 * no-lost-wake-up argument), and that an awake worker stuck in a long turn
 * does not keep injected actors waiting (the monitor wakes another).
 */
#include "fixtures.h"

#include <pthread.h>
#include <time.h>

/* ---- many outside threads to many actors, exact counts ---------------- */

enum { THREADS = 8, ACTORS = 64, EACH = 500 };

typedef struct spray {
    ac_runtime *rt;
    const ac_addr *to;
    uint32_t id;
    int rc;
} spray;

/* Round-robin over every actor, EACH rounds: each send finds its actor
 * drained as often as the workers keep up, so most of them schedule. */
static void *spray_main(void *p)
{
    spray *s = p;
    ac_ctx *cx = ac_runtime_ctx(s->rt);
    for (uint64_t i = 0; i < EACH && s->rc == 0; i++)
        for (unsigned a = 0; a < ACTORS && s->rc == 0; a++)
            s->rc = send_item(cx, &s->to[a], s->id, i);
    return NULL;
}

static void many_to_many(int workers)
{
    ac_runtime *rt = make_runtime(workers);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr to[ACTORS];
    for (unsigned a = 0; a < ACTORS; a++)
        to[a] = spawn_counter(cx);
    /* Every counter must stop having seen every sender's every message. */
    atomic_store(&g_expected_per_actor, (uint64_t)THREADS * EACH);
    spray s[THREADS];
    pthread_t th[THREADS];
    for (uint32_t i = 0; i < THREADS; i++) {
        s[i] = (spray){.rt = rt, .to = to, .id = i};
        cr_assert_eq(pthread_create(&th[i], NULL, spray_main, &s[i]), 0);
    }
    for (unsigned i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
        cr_assert_eq(s[i].rc, 0, "%s", ac_strerror(s[i].rc));
    }
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&g_items), (uint64_t)THREADS * ACTORS * EACH);
    ac_runtime_destroy(rt);
    cr_assert_eq(atomic_load(&g_stopped_items), (uint64_t)THREADS * ACTORS * EACH);
    cr_assert_eq(atomic_load(&g_exact_actors), ACTORS, "every actor got exactly its share");
    cr_assert_eq(atomic_load(&g_fifo_violations), 0, "FIFO per sender");
}

Test(inject, eight_threads_to_sixty_four_actors_with_one_worker, .timeout = 120)
{
    many_to_many(1);
}

Test(inject, eight_threads_to_sixty_four_actors_with_two_workers, .timeout = 120)
{
    many_to_many(2);
}

Test(inject, eight_threads_to_sixty_four_actors_with_four_workers, .timeout = 120)
{
    many_to_many(4);
}

/* ---- a fully parked runtime wakes for one outside send ----------------- */

/* Each round parks every worker (ac_runtime_run returns at quiescence),
 * then sends one message from outside to one of a few actors: the push
 * makes the injection stack non-empty and must wake a worker, through the
 * Dekker pair of inject_push and park's look. A lost wake-up leaves the
 * message unhandled; wait_for gives up after ~20 s (not a timing assert). */
static void parked_rounds(int workers, unsigned rounds)
{
    ac_runtime *rt = make_runtime(workers);
    ac_ctx *cx = ac_runtime_ctx(rt);
    enum { FEW = 4 };
    ac_addr to[FEW];
    for (unsigned a = 0; a < FEW; a++)
        to[a] = spawn_counter(cx);
    for (uint64_t i = 0; i < rounds; i++) {
        ac_runtime_run(rt);  /* every worker is parked when this returns */
        cr_assert_eq(send_item(cx, &to[i % FEW], 0, i / FEW), 0);
        cr_assert(wait_for(&g_items, i + 1), "round %llu: the message was never handled",
                  (unsigned long long)i);
    }
    ac_runtime_destroy(rt);
    cr_assert_eq(atomic_load(&g_stopped_items), rounds);
    cr_assert_eq(atomic_load(&g_fifo_violations), 0);
}

Test(inject, a_parked_runtime_of_one_worker_wakes_for_every_send, .timeout = 120)
{
    parked_rounds(1, 1000);
}

Test(inject, a_parked_runtime_of_two_workers_wakes_for_every_send, .timeout = 120)
{
    parked_rounds(2, 1000);
}

Test(inject, a_parked_runtime_of_three_workers_wakes_for_every_send, .timeout = 120)
{
    parked_rounds(3, 1000);
}

/* Without waiting for quiescence: the send races with workers that are
 * on their way to park (spinning, announcing, re-checking), the window
 * the Dekker pair closes. */
Test(inject, sends_racing_with_parking_workers_are_all_handled, .timeout = 120)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_counter(cx);
    enum { ROUNDS = 2000 };
    struct timespec pause = {0, 0};
    for (uint64_t i = 0; i < ROUNDS; i++) {
        cr_assert_eq(send_item(cx, &a, 0, i), 0);
        cr_assert(wait_for(&g_items, i + 1), "message %llu was never handled",
                  (unsigned long long)i);
        /* 0-63 µs: sometimes inside the spin, sometimes past the park. */
        pause.tv_nsec = (long)(i * 7919 % 64) * 1000L;
        nanosleep(&pause, NULL);
    }
    ac_runtime_destroy(rt);
    cr_assert_eq(atomic_load(&g_stopped_items), ROUNDS);
    cr_assert_eq(atomic_load(&g_fifo_violations), 0);
}

/* ---- a long turn on the only awake worker ------------------------------- */

/* A Holder's handler blocks until a Freer has run; the Freer is sent to
 * from outside while the Holder's worker is the only one awake: the push
 * wakes the parked worker (ac__notify_work), or, had a searcher been
 * about, the monitor does once the turn is long (monitor_look). Were
 * neither to wake it, the Holder would wait for ever (here: gives up
 * after 10 s). */

static _Atomic bool holder_in, freer_ran, holder_saw;

static bool wait_flag(_Atomic bool *flag, int seconds)
{
    struct timespec start, now, nap = {0, 100000};
    clock_gettime(CLOCK_MONOTONIC, &start);
    /* Acquire: what the setter did before. */
    while (!atomic_load_explicit(flag, memory_order_acquire)) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec >= seconds)
            return false;  /* a generous give-up, not a timing assert */
        nanosleep(&nap, NULL);
    }
    return true;
}

static int holder_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    (void)state, (void)cx, (void)e;
    /* Release: the test thread waits for it before sending. */
    atomic_store_explicit(&holder_in, true, memory_order_release);
    atomic_store_explicit(&holder_saw, wait_flag(&freer_ran, 10), memory_order_release);
    return 0;
}

static int freer_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    (void)state, (void)cx, (void)e;
    /* Release: the holder's acquire load sees our run. */
    atomic_store_explicit(&freer_ran, true, memory_order_release);
    return 0;
}

static const char *const one_tag[] = {"go"};
static const ac_actor_type holder_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.Holder",
    .state_align = 1,
    .dispatch = holder_dispatch,
    .message_count = 1,
    .message_names = one_tag,
};
static const ac_actor_type freer_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.Freer",
    .state_align = 1,
    .dispatch = freer_dispatch,
    .message_count = 1,
    .message_names = one_tag,
};

Test(inject, a_long_turn_does_not_keep_injected_actors_waiting, .timeout = 60)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr holder, freer;
    cr_assert_eq(ac_spawn(cx, &holder_type, NULL, &holder), 0);
    cr_assert_eq(ac_spawn(cx, &freer_type, NULL, &freer), 0);
    ac_runtime_run(rt);  /* both workers parked */
    cr_assert_eq(send_tag(cx, &holder, 0), 0);
    cr_assert(wait_flag(&holder_in, 10), "the holder never ran");
    /* Let a woken second worker (the end of the first one's search may
     * have handed it on) spin out and park again, so that the send below
     * mostly finds one worker awake in a long turn and one parked; the
     * test is right either way, and fails only if the Freer is stranded. */
    struct timespec nap = {0, 5000000};
    nanosleep(&nap, NULL);
    cr_assert_eq(send_tag(cx, &freer, 0), 0);
    ac_runtime_run(rt);
    cr_assert(atomic_load(&holder_saw), "the injected actor waited for the long turn");
    ac_runtime_destroy(rt);
}
