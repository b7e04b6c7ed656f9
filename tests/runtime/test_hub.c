/*
 * test_hub.c — a worker that runs a communication-bound hub keeps its
 * clients (thieves leave its deque alone), clients that do real work
 * still spread, and a hub's long turn holds nothing hostage (sched.c,
 * "Hubs"). AC_HUB_NS is set per test (Criterion runs each test in its
 * own process): a limit of a second a message makes every hub-shaped turn
 * cheap, however slow a sanitizer makes it, so the counts asserted below
 * do not depend on the machine's speed.
 */
#include "fixtures.h"

#include "core/sched.h"  /* the hub test hooks */

#include <stdlib.h>

/* T_REQ carries an item (fixtures.h): to the hub, the client's index and
 * round; to a client, its index (the start). */
enum { T_REQ = COUNTER_ITEM, T_REPLY, T_PING };

enum { CLIENTS = 256, ROUNDS = 400, WAITERS = 8 };

static ac_addr hub, clients[CLIENTS], waiters[WAITERS];
static long client_spin_us;             /* a client's work per reply */
static _Atomic uint64_t replies, clients_done, waiters_ran;
static _Atomic bool block_saw, block_sent;
static bool block_halfway;              /* the hub blocks once */

/* ---- the hub answers every request at once ------------------------------ */

static bool wait_waiters(int seconds)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    /* Relaxed: a count; the waiters' own stores are all we wait for. */
    while (atomic_load_explicit(&waiters_ran, memory_order_relaxed) < WAITERS) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec >= seconds)
            return false;  /* a generous give-up, not a timing assert */
    }
    return true;
}

static int hub_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    (void)state;
    const item *m = ac_envelope_payload(e);
    if (send_tag(cx, &clients[m->sender], T_REPLY) != 0)
        return AC_ENOMEM;
    /* Once, halfway and on a marked worker: wake the waiters (one into
     * this worker's slot, the rest into its deque, behind clients), then
     * block until all have run. Only another worker can run them, and
     * only if it may take from a hub's deque. */
    if (block_halfway && m->seq >= ROUNDS / 2 && ac__sched_hub_marked(cx) &&
        !atomic_exchange(&block_sent, true)) {
        for (unsigned i = 0; i < WAITERS; i++)
            if (send_tag(cx, &waiters[i], T_PING) != 0)
                return AC_ENOMEM;
        atomic_store(&block_saw, wait_waiters(10));
    }
    return 0;
}

static int client_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    uint32_t *me = state;  /* rounds << 16 | the client's index */
    if (e->tag == T_REQ) {
        *me = ((const item *)ac_envelope_payload(e))->sender;
        return send_item(cx, &hub, *me, 0);
    }
    if (client_spin_us > 0)
        spin_us(client_spin_us);
    atomic_fetch_add_explicit(&replies, 1, memory_order_relaxed);
    uint32_t rounds = (*me >> 16) + 1;
    *me = rounds << 16 | (*me & 0xFFFFu);
    if (rounds < ROUNDS)
        return send_item(cx, &hub, *me & 0xFFFFu, rounds);
    atomic_fetch_add_explicit(&clients_done, 1, memory_order_relaxed);
    return 0;
}

static int waiter_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    (void)state;
    (void)cx;
    (void)e;
    /* Relaxed: the hub only counts. */
    atomic_fetch_add_explicit(&waiters_ran, 1, memory_order_relaxed);
    return 0;
}

static const char *const tag_names[] = {"req", "reply", "ping"};
static const ac_actor_type hub_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.Hub",
    .state_align = 1,
    .dispatch = hub_dispatch,
    .message_count = 3,
    .message_names = tag_names,
};
static const ac_actor_type client_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.Client",
    .state_size = sizeof(uint32_t),
    .state_align = _Alignof(uint32_t),
    .dispatch = client_dispatch,
    .message_count = 3,
    .message_names = tag_names,
};
static const ac_actor_type waiter_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.Waiter",
    .state_align = 1,
    .dispatch = waiter_dispatch,
    .message_count = 3,
    .message_names = tag_names,
};

/* Spawns the hub, the waiters and `n` clients, then starts the clients
 * from this (outside) thread, and waits until the runtime is idle. */
static ac_stats run_clients(ac_runtime *rt, unsigned n)
{
    ac_ctx *cx = ac_runtime_ctx(rt);
    cr_assert_eq(ac_spawn(cx, &hub_type, NULL, &hub), 0);
    for (unsigned i = 0; i < WAITERS; i++)
        cr_assert_eq(ac_spawn(cx, &waiter_type, NULL, &waiters[i]), 0);
    for (unsigned i = 0; i < n; i++)
        cr_assert_eq(ac_spawn(cx, &client_type, NULL, &clients[i]), 0);
    for (unsigned i = 0; i < n; i++)
        cr_assert_eq(send_item(cx, &clients[i], i, 0), 0);
    ac_runtime_run(rt);
    ac_stats s;
    ac_runtime_stats(rt, &s);
    return s;
}

Test(hub, cheap_clients_stay_on_their_hubs_worker, .timeout = 120)
{
    setenv("AC_HUB_NS", "1000000000", 1);
    ac_config cfg;
    ac_config_init(&cfg);
    cfg.workers = 2;
    cfg.type_stats = true;  /* counts hand-offs */
    /* Turns of 16 messages, the fewest a hub-shaped one handles: short
     * enough under a sanitizer that they are not long (LONG_TURN_US),
     * when thieves may take from a hub's deque. */
    cfg.batch = 16;
    ac_runtime *rt = make_runtime_from(&cfg);
    if (ac__sched_monitor_state(rt) < 0) {
        ac_runtime_destroy(rt);
        cr_skip_test("no monitor here (membarrier), hence no hubs");
    }
    ac_stats s = run_clients(rt, CLIENTS);
    uint64_t transactions = (uint64_t)CLIENTS * ROUNDS;
    cr_assert_eq(atomic_load(&replies), transactions);
    cr_assert_eq(atomic_load(&clients_done), CLIENTS);
    cr_assert_gt(ac__sched_hub_marks(rt), 0, "the hub was never detected");
    /* Without hubs, 3-45 % of the transactions cross the cores (a client
     * that ran on the other worker); here only the clients' first moves to
     * the hub's worker (one each), and a few around a long turn (a
     * preempted worker), may: 60-1,600 measured, with and without TSan. */
    cr_assert_lt(s.handoffs, transactions / 25, "handoffs %llu of %llu transactions",
                 (unsigned long long)s.handoffs, (unsigned long long)transactions);
    assert_sends_accounted(rt);
    ac_runtime_destroy(rt);
}

Test(hub, clients_that_work_still_spread, .timeout = 120)
{
    unsetenv("AC_HUB_NS");  /* the default limit */
    client_spin_us = 200;   /* a hundred times the default limit a message */
    ac_runtime *rt = make_typed_runtime(2, true);
    ac_stats s = run_clients(rt, 64);
    cr_assert_eq(atomic_load(&replies), (uint64_t)64 * ROUNDS);
    cr_assert_eq(ac__sched_hub_marks(rt), 0, "a hub whose clients work was marked");
    cr_assert_gt(s.handoffs, 0, "the clients never ran on the second worker");
    ac_runtime_destroy(rt);
}

Test(hub, a_hubs_long_turn_holds_no_actor_hostage, .timeout = 120)
{
    setenv("AC_HUB_NS", "1000000000", 1);
    block_halfway = true;
    ac_runtime *rt = make_runtime(2);
    if (ac__sched_monitor_state(rt) < 0) {
        ac_runtime_destroy(rt);
        cr_skip_test("no monitor here (membarrier), hence no hubs");
    }
    run_clients(rt, CLIENTS);
    cr_assert_eq(atomic_load(&clients_done), CLIENTS);
    cr_assert(atomic_load(&block_sent), "the hub was not marked halfway");
    cr_assert(atomic_load(&block_saw), "the hub's deque was held for its whole turn");
    cr_assert_eq(atomic_load(&waiters_ran), WAITERS);
    ac_runtime_destroy(rt);
}

Test(hub, a_malformed_limit_refuses_the_runtime)
{
    ac_config cfg;
    ac_config_init(&cfg);
    cfg.workers = 2;
    ac_runtime *rt = NULL;
    const char *bad[] = {"fast", "-1", "12x", "99999999999"};
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("AC_HUB_NS", bad[i], 1);
        cr_assert_eq(ac_runtime_create(&rt, &cfg), AC_EINVAL, "AC_HUB_NS=%s", bad[i]);
    }
    setenv("AC_HUB_NS", "0", 1);  /* off: the runtime runs, and marks nothing */
    rt = make_runtime_from(&cfg);
    run_clients(rt, 32);
    cr_assert_eq(atomic_load(&replies), (uint64_t)32 * ROUNDS);
    cr_assert_eq(ac__sched_hub_marks(rt), 0);
    ac_runtime_destroy(rt);
}
