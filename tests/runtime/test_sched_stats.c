/*
 * test_sched_stats.c — the scheduler's counters (ac_stats.handoffs,
 * wakeups, idle_wakeups, spins) count what they say: a hand-off is a turn
 * on another worker than the actor's previous one, exactly as the
 * handlers themselves see it; a worker that had to be woken from a park
 * is a wake-up; with one worker nothing is handed off.
 */
#include "fixtures.h"

#include "core/sched.h"  /* whether the monitor exists (ac__sched_monitor_state) */

#include <pthread.h>
#include <stdio.h>
#include <time.h>

/* ---- two Hoppers pass a count back and forth ------------------------- */

enum { T_HOP = 0 };

/* A hop carries its sender, so that neither Hopper needs the other's
 * address in its state. */
typedef struct hop_msg {
    uint64_t n;
    ac_addr from;
} hop_msg;

typedef struct hopper {
    pthread_t last;   /* the thread of its previous handler call */
    bool ran;
} hopper;

/* Thread changes between two handler calls of one actor, as the handlers
 * see them: the hand-offs by definition (a turn has at least one call). */
static _Atomic uint64_t g_changes;
/* The count the last handler call saw (the hop that must run elsewhere
 * while its sender blocks). */
static _Atomic uint64_t g_seen;
static bool g_block;   /* set before the first send: block every BLOCK_EVERY */
static _Atomic uint64_t g_done;

#define BLOCK_EVERY 50u

static int send_hop(ac_ctx *cx, const ac_addr *to, uint64_t n)
{
    ac_envelope *e = ac_envelope_new(cx, T_HOP, sizeof(hop_msg));
    if (e == NULL)
        return AC_ENOMEM;
    hop_msg m = {.n = n, .from = *ac_self(cx)};
    memcpy(ac_envelope_payload(e), &m, sizeof m);
    return ac_send(cx, to, e);
}

/* Waits until the hop after ours was handled, or ~10 s (a give-up, not a
 * timing assert: the test then fails on the count of moves). */
static void wait_seen(uint64_t want)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    /* Acquire: pairs with the handler's release store. */
    while (atomic_load_explicit(&g_seen, memory_order_acquire) != want) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec >= 10)
            return;
    }
}

static int hopper_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    hopper *h = state;
    pthread_t self = pthread_self();
    if (h->ran && !pthread_equal(h->last, self))
        atomic_fetch_add_explicit(&g_changes, 1, memory_order_relaxed);
    h->last = self;
    h->ran = true;
    hop_msg m;
    memcpy(&m, ac_envelope_payload(e), sizeof m);
    /* Release: the blocked sender's acquire load. */
    atomic_store_explicit(&g_seen, m.n, memory_order_release);
    if (m.n == 0) {
        atomic_store_explicit(&g_done, 1, memory_order_release);
        return 0;
    }
    int rc = send_hop(cx, &m.from, m.n - 1);
    if (rc != 0)
        return rc;
    /* Block until the peer has handled what we sent: it sits in this
     * worker's slot (or drained here), so only another worker can run it,
     * which takes it from this long turn (sched.c): a hand-off for sure. */
    if (g_block && m.n % BLOCK_EVERY == 0)
        wait_seen(m.n - 1);
    return 0;
}

/* The second Hopper starts the game: its start hook sends the first hop
 * to the address in args (from the spawning thread: the injection queue,
 * so the peer's first turn, like its first handler call, counts nothing). */
static int hopper_start(void *state, ac_ctx *cx, const void *args)
{
    (void)state;
    const hop_msg *kick = args;
    return kick ? send_hop(cx, &kick->from, kick->n) : 0;
}

static const char *const hop_names[] = {"hop"};
static const ac_actor_type hopper_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.Hopper",
    .state_size = sizeof(hopper),
    .state_align = _Alignof(hopper),
    .on_start = hopper_start,
    .dispatch = hopper_dispatch,
    .message_count = 1,
    .message_names = hop_names,
};

/* Two Hoppers pass `hops` hops on a runtime of `workers` workers with the
 * per-type counters on or off; the counters at quiescence, with both alive
 * (no finalize turns), in *out. With two workers and the monitor (which
 * moves a blocked worker's actors), every BLOCK_EVERY-th hop blocks its
 * handler until the next one ran elsewhere. Returns whether it did. */
static bool hop(int workers, bool type_stats, uint64_t hops, ac_stats *out)
{
    ac_runtime *rt = make_typed_runtime(workers, type_stats);
    bool block = workers >= 2 && ac__sched_monitor_state(rt) >= 0;
    atomic_store(&g_changes, 0);
    atomic_store(&g_seen, UINT64_MAX);
    atomic_store(&g_done, 0);
    g_block = block;
    ac_ctx *cx = ac_runtime_ctx(rt);
    hop_msg kick = {.n = hops};
    cr_assert_eq(ac_spawn(cx, &hopper_type, NULL, &kick.from), 0);
    ac_runtime_run(rt);  /* idle: every worker parked */
    ac_addr second;
    cr_assert_eq(ac_spawn(cx, &hopper_type, &kick, &second), 0);
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&g_done), 1);
    ac_runtime_stats(rt, out);
    ac_runtime_destroy(rt);
    return block;
}

Test(sched_stats, one_worker_hands_nothing_off, .timeout = 60)
{
    ac_stats s;
    hop(1, true, 20000, &s);
    cr_assert_eq(s.handoffs, 0);
    cr_assert_eq(atomic_load(&g_changes), 0);
    cr_assert_eq(s.steals, 0);
    cr_assert_leq(s.idle_wakeups, s.wakeups);
    /* Parked at quiescence, the one worker was woken for the second
     * spawn's kick. */
    cr_assert_geq(s.wakeups, 1);
}

Test(sched_stats, handoffs_are_the_moves_the_handlers_see, .timeout = 120)
{
    ac_stats s;
    bool blocked = hop(2, true, 2000, &s);
    uint64_t changes = atomic_load(&g_changes);
    cr_assert_eq(s.handoffs, changes, "handoffs %llu, moves seen by the handlers %llu",
                 (unsigned long long)s.handoffs, (unsigned long long)changes);
    cr_assert_leq(s.idle_wakeups, s.wakeups);
    if (blocked) {
        /* Each blocked hop's successor ran on the other worker. */
        cr_assert_geq(changes, 2000 / BLOCK_EVERY);
        /* Both workers were parked when the kick came, and both ran. */
        cr_assert_geq(s.wakeups, 2);
    }
}

Test(sched_stats, handoffs_need_the_per_type_counters, .timeout = 120)
{
    ac_stats s;
    if (hop(2, false, 2000, &s))
        cr_assert_geq(atomic_load(&g_changes), 2000 / BLOCK_EVERY);
    cr_assert_eq(s.handoffs, 0);  /* not counted: documented as 0 */
}

Test(sched_stats, deterministic_mode_has_no_worker_to_count, .timeout = 60)
{
    ac_stats s;
    hop(0, true, 1000, &s);
    cr_assert_eq(s.handoffs, 0);
    cr_assert_eq(s.wakeups, 0);
    cr_assert_eq(s.idle_wakeups, 0);
    cr_assert_eq(s.spins, 0);
}
