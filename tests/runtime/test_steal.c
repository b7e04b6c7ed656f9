/*
 * test_steal.c — a handler that blocks cannot hold hostage the actors its
 * worker keeps for it (the LIFO slot, the drained actor): another worker
 * takes them, and no actor ever runs on two workers at once; the monitor
 * that sees such a turn sleeps while the runtime is idle.
 */
#include "fixtures.h"

#include "core/sched.h"  /* the monitor's test hooks */

#include <time.h>

/* ---- a Blocker wakes a Waker and then waits for it ------------------- */

enum { T_KICK, T_BLOCK, T_PING };

static _Atomic bool woken_ran, blocker_saw;
static ac_addr blocker, waker;  /* set before any message is sent */

static bool wait_flag(_Atomic bool *flag, int seconds)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    /* Acquire: what the waker did before setting it. */
    while (!atomic_load_explicit(flag, memory_order_acquire)) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec >= seconds)
            return false;  /* a generous give-up, not a timing assert */
    }
    return true;
}

static int blocker_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    (void)state;
    /* Wake the waker (the slot, or it is held drained by this worker),
     * then block until it has run: only another worker can run it. */
    if (send_tag(cx, &waker, e->tag) != 0)
        return AC_ENOMEM;
    /* Release: the test thread reads it after ac_runtime_run. */
    atomic_store_explicit(&blocker_saw, wait_flag(&woken_ran, 10), memory_order_release);
    return 0;
}

static int waker_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    (void)state;
    if (e->tag == T_KICK)  /* the drained case: our turn wakes the blocker */
        return send_tag(cx, &blocker, T_PING);
    /* Release: the blocker's acquire load sees our run. */
    atomic_store_explicit(&woken_ran, true, memory_order_release);
    return 0;
}

static const char *const tag_names[] = {"kick", "block", "ping"};
static const ac_actor_type blocker_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.Blocker",
    .state_align = 1,
    .dispatch = blocker_dispatch,
    .message_count = 3,
    .message_names = tag_names,
};
static const ac_actor_type waker_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.Waker",
    .state_align = 1,
    .dispatch = waker_dispatch,
    .message_count = 3,
    .message_names = tag_names,
};

static void sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Waits until the monitor sleeps with no timeout; false after a generous
 * give-up (not a timing assert: it backs off to 10 ms looks at most). */
static bool monitor_asleep(ac_runtime *rt)
{
    for (int i = 0; i < 10000; i++) {
        if (ac__sched_monitor_state(rt) == 1)
            return true;
        sleep_ms(1);
    }
    return false;
}

static void blocked_handler(uint32_t first, const ac_addr *to)
{
    atomic_store(&woken_ran, false);
    atomic_store(&blocker_saw, false);
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    cr_assert_eq(ac_spawn(cx, &blocker_type, NULL, &blocker), 0);
    cr_assert_eq(ac_spawn(cx, &waker_type, NULL, &waker), 0);
    ac_runtime_run(rt);  /* both idle, the other worker parked */
    /* The send below then wakes one worker from full idle: the monitor
     * must wake with it (old code: nobody looked, and this waited). */
    if (ac__sched_monitor_state(rt) >= 0)
        cr_assert(monitor_asleep(rt), "the monitor never slept with every worker parked");
    cr_assert_eq(send_tag(cx, to, first), 0);
    ac_runtime_run(rt);
    cr_assert(atomic_load(&blocker_saw), "the woken actor waited for the blocked handler");
    ac_runtime_destroy(rt);
}

Test(steal, a_blocked_handler_does_not_hold_the_actor_in_its_slot, .timeout = 60)
{
    /* The blocker's send puts the waker into its worker's LIFO slot. */
    blocked_handler(T_BLOCK, &blocker);
}

Test(steal, a_blocked_handler_does_not_hold_the_actor_its_worker_drained, .timeout = 60)
{
    /* The waker's turn wakes the blocker (the slot) and ends drained: the
     * worker keeps it owned, so the blocker's ping does not schedule it. */
    blocked_handler(T_KICK, &waker);
}

/* ---- Guards: never two turns of one actor at once --------------------- */

enum { GUARDS = 8, WAKERS = 4, ROUNDS = 3000 };

typedef struct guard {
    _Atomic int running;
    uint64_t handled;  /* plain: only the owner of the turn touches it */
} guard;

static ac_addr guards[GUARDS];
static _Atomic uint64_t guard_msgs, guard_overlaps;

static int guard_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    guard *g = state;
    /* acq_rel: if a second worker ran this actor at once, one of the two
     * exchanges reads the other's 1. */
    if (atomic_exchange_explicit(&g->running, 1, memory_order_acq_rel) != 0)
        atomic_fetch_add_explicit(&guard_overlaps, 1, memory_order_relaxed);
    g->handled++;
    uint32_t hops = e->tag;
    if (hops > 0) {
        /* Wake another guard (into this worker's slot), and now and then
         * stay in the turn long enough for a thief to take it. */
        if (send_tag(cx, &guards[(g->handled + hops) % GUARDS], hops - 1) != 0)
            return AC_ENOMEM;
        if (g->handled % 64 == 0)
            spin_us(700);
    }
    atomic_fetch_add_explicit(&guard_msgs, 1, memory_order_relaxed);
    /* Release: the next owner's exchange sees this turn's writes. */
    atomic_store_explicit(&g->running, 0, memory_order_release);
    return 0;
}

static const char *const guard_names[] = {"hop0", "hop1", "hop2", "hop3", "hop4"};
static const ac_actor_type guard_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.Guard",
    .state_size = sizeof(guard),
    .state_align = _Alignof(guard),
    .dispatch = guard_dispatch,
    .message_count = 5,
    .message_names = guard_names,
};

/* Wakers send the guards chains of hops from many actors at once. */
static int chain_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    (void)state;
    for (uint32_t i = 0; i < 4; i++)
        if (send_tag(cx, &guards[(e->tag + i) % GUARDS], 4) != 0)
            return AC_ENOMEM;
    return 0;
}

static const char *const chain_names[] = {"go"};
static const ac_actor_type chain_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.Chain",
    .state_align = 1,
    .dispatch = chain_dispatch,
    .message_count = 1,
    .message_names = chain_names,
};

static void no_double_runs(int workers)
{
    atomic_store(&guard_msgs, 0);
    atomic_store(&guard_overlaps, 0);
    ac_runtime *rt = make_runtime(workers);
    ac_ctx *cx = ac_runtime_ctx(rt);
    for (int i = 0; i < GUARDS; i++)
        cr_assert_eq(ac_spawn(cx, &guard_type, NULL, &guards[i]), 0);
    ac_addr chains[WAKERS];
    for (int i = 0; i < WAKERS; i++)
        cr_assert_eq(ac_spawn(cx, &chain_type, NULL, &chains[i]), 0);
    for (uint32_t r = 0; r < ROUNDS; r++)
        cr_assert_eq(send_tag(cx, &chains[r % WAKERS], 0), 0);
    ac_runtime_run(rt);
    /* Each chain message starts 4 chains of 5 guard turns. */
    cr_assert_eq(atomic_load(&guard_msgs), (uint64_t)ROUNDS * 4 * 5);
    cr_assert_eq(atomic_load(&guard_overlaps), 0, "an actor ran on two workers at once");
    ac_runtime_destroy(rt);
}

Test(steal, no_actor_runs_twice_at_once_with_two_workers, .timeout = 120)
{
    no_double_runs(2);
}

Test(steal, no_actor_runs_twice_at_once_with_four_workers, .timeout = 120)
{
    no_double_runs(4);
}

/* ---- the monitor sleeps while every worker is parked ------------------ */

Test(steal, an_idle_runtime_wakes_the_monitor_never_and_work_wakes_it, .timeout = 60)
{
    ac_runtime *rt = make_runtime(4);
    if (ac__sched_monitor_state(rt) < 0) {
        ac_runtime_destroy(rt);
        cr_skip_test("no monitor: membarrier(2) is not available here");
    }
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr target = spawn_counter(cx);
    ac_runtime_run(rt);  /* every worker parked */
    cr_assert(monitor_asleep(rt), "the monitor never slept with every worker parked");
    uint64_t before = ac__sched_monitor_wakes(rt);
    sleep_ms(200);
    cr_assert_eq(ac__sched_monitor_wakes(rt), before, "the monitor woke %llu times while idle",
                 (unsigned long long)(ac__sched_monitor_wakes(rt) - before));
    cr_assert_eq(ac__sched_monitor_state(rt), 1);
    /* A message wakes a worker, and that transition wakes the monitor. */
    cr_assert_eq(send_tag(cx, &target, 0), 0);
    ac_runtime_run(rt);
    cr_assert(monitor_asleep(rt), "the monitor stayed awake after the work was done");
    cr_assert_gt(ac__sched_monitor_wakes(rt), before, "the wake-up from idle did not wake it");
    ac_runtime_destroy(rt);
}
