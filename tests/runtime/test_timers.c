/* Timers: one-shot and interval, cancel, owners, dead targets, ordering,
 * shutdown; in deterministic mode (ticks, no sleeping) and with workers. */
#include "fixtures.h"

#include <stdlib.h>

/* ---- Ticker: records every tick it handles ----------------------------- */

enum { T_TICK = 0, T_ARM = 1, T_STOP = 2, T_FAIL = 3 };

#define MAX_TICKS 10000

typedef struct tick {
    uint32_t n;
} tick;

/* T_ARM: the running actor starts a timer it owns (now, or in its stop
 * hook), sending tick n to `to`. */
typedef struct arm {
    ac_addr to;
    uint32_t ms;
    uint32_t n;
    bool every;
    bool in_stop;
} arm;

typedef struct ticker {
    uint64_t count;
    bool arm_in_stop;
    arm stop_arm;
} ticker;

static _Atomic uint64_t g_ticks;             /* ticks handled, all tickers */
static _Atomic uint32_t g_seen[MAX_TICKS];   /* per tick number */
static _Atomic uint32_t g_order[MAX_TICKS];  /* tick numbers, handling order */
static _Atomic uint64_t g_order_len;
static _Atomic uint64_t g_ids[8];            /* ids of timers actors started */
static _Atomic uint64_t g_nids;
static _Atomic int g_arm_rc;

static const ac_actor_type ticker_type;

static ac_envelope *new_tick(ac_ctx *cx, uint32_t n)
{
    ac_envelope *e = ac_envelope_new(cx, T_TICK, sizeof(tick));
    cr_assert_not_null(e);
    ((tick *)ac_envelope_payload(e))->n = n;
    return e;
}

static void arm_now(ac_ctx *cx, const arm *a)
{
    ac_timer_id id;
    ac_envelope *e = new_tick(cx, a->n);
    int rc = a->every ? ac_timer_every(cx, &a->to, a->ms, &ticker_type, e, &id)
                      : ac_timer_after(cx, &a->to, a->ms, e, &id);
    atomic_store(&g_arm_rc, rc);
    uint64_t at = atomic_fetch_add(&g_nids, 1);
    if (at < 8)
        atomic_store(&g_ids[at], id);
}

static int ticker_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    ticker *self = state;
    switch (e->tag) {
    case T_TICK: {
        uint32_t n = ((const tick *)ac_envelope_payload(e))->n;
        self->count++;
        atomic_fetch_add(&g_ticks, 1);
        if (n < MAX_TICKS)
            atomic_fetch_add(&g_seen[n], 1);
        uint64_t at = atomic_fetch_add(&g_order_len, 1);
        if (at < MAX_TICKS)
            atomic_store(&g_order[at], n);
        return 0;
    }
    case T_ARM: {
        const arm *a = ac_envelope_payload(e);
        if (a->in_stop) {
            self->arm_in_stop = true;
            self->stop_arm = *a;
        } else {
            arm_now(cx, a);
        }
        return 0;
    }
    case T_STOP:
        return ac_stop_self(cx);
    case T_FAIL:
        return 7;
    }
    return AC_EBADTAG;
}

static void ticker_stop(void *state, ac_ctx *cx)
{
    ticker *self = state;
    if (self->arm_in_stop)
        arm_now(cx, &self->stop_arm);
}

/* Every Ticker message has a fixed-size payload, so a copy is a memcpy. */
static ac_envelope *ticker_copy(ac_ctx *cx, const ac_envelope *e)
{
    size_t size = e->tag == T_ARM ? sizeof(arm) : e->tag == T_TICK ? sizeof(tick) : 0;
    ac_envelope *c = ac_envelope_new(cx, e->tag, size);
    if (c != NULL)
        memcpy(ac_envelope_payload(c), ac_envelope_payload((ac_envelope *)e), size);
    return c;
}

static const char *const ticker_names[] = {"tick", "arm", "stop", "fail"};

static const ac_actor_type ticker_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.Ticker",
    .state_size = sizeof(ticker),
    .state_align = _Alignof(ticker),
    .dispatch = ticker_dispatch,
    .on_stop = ticker_stop,
    .message_count = 4,
    .message_names = ticker_names,
    .copy = ticker_copy,
};

/* The same type without a copy function. */
static const ac_actor_type nocopy_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.NoCopy",
    .state_size = sizeof(ticker),
    .state_align = _Alignof(ticker),
    .dispatch = ticker_dispatch,
    .message_count = 4,
    .message_names = ticker_names,
};

static ac_addr spawn_ticker(ac_ctx *cx)
{
    ac_addr a;
    cr_assert_eq(ac_spawn(cx, &ticker_type, NULL, &a), 0);
    return a;
}

static ac_timer_id after(ac_ctx *cx, const ac_addr *to, uint32_t ms, uint32_t n)
{
    ac_timer_id id = 0;
    cr_assert_eq(ac_timer_after(cx, to, ms, new_tick(cx, n), &id), 0);
    cr_assert_neq(id, 0);
    return id;
}

static ac_timer_id every(ac_ctx *cx, const ac_addr *to, uint32_t ms, uint32_t n)
{
    ac_timer_id id = 0;
    cr_assert_eq(ac_timer_every(cx, to, ms, &ticker_type, new_tick(cx, n), &id), 0);
    cr_assert_neq(id, 0);
    return id;
}

/* Advances the deterministic clock, then runs what it fired. */
static int advance(ac_runtime *rt, uint32_t ms)
{
    int fired = ac_runtime_advance(rt, ms);
    cr_assert_geq(fired, 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    return fired;
}

/* Asks `owner` to start a timer of its own (sending tick n to `to`). */
static void ask_arm(ac_ctx *cx, const ac_addr *owner, const ac_addr *to, uint32_t ms,
                    uint32_t n, bool is_every, bool in_stop)
{
    ac_envelope *e = ac_envelope_new(cx, T_ARM, sizeof(arm));
    cr_assert_not_null(e);
    arm *a = ac_envelope_payload(e);
    a->to = *to;
    a->ms = ms;
    a->n = n;
    a->every = is_every;
    a->in_stop = in_stop;
    cr_assert_eq(ac_send(cx, owner, e), 0);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ---- deterministic mode ------------------------------------------------ */

Test(timers, one_shot_fires_once_after_its_delay, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_ticker(cx);
    after(cx, &a, 10, 1);
    cr_assert_eq(advance(rt, 9), 0, "not at ms - 1");
    cr_assert_eq(atomic_load(&g_ticks), 0);
    cr_assert_eq(advance(rt, 1), 1, "at ms");
    cr_assert_eq(atomic_load(&g_seen[1]), 1);
    cr_assert_eq(advance(rt, 1000), 0, "once");
    cr_assert_eq(atomic_load(&g_ticks), 1);
    ac_runtime_destroy(rt);
}

Test(timers, zero_delay_fires_at_the_next_advance, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_ticker(cx);
    after(cx, &a, 0, 1);
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&g_ticks), 0, "a timer never sends by itself");
    cr_assert_eq(advance(rt, 0), 1);
    cr_assert_eq(atomic_load(&g_ticks), 1);
    ac_runtime_destroy(rt);
}

Test(timers, delays_count_from_the_current_tick, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_ticker(cx);
    advance(rt, 100);
    after(cx, &a, 10, 1);
    cr_assert_eq(advance(rt, 9), 0);
    cr_assert_eq(advance(rt, 1), 1);
    ac_runtime_destroy(rt);
}

Test(timers, interval_fires_n_times_over_n_periods, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_ticker(cx);
    every(cx, &a, 10, 1);
    for (uint64_t i = 1; i <= 7; i++) {
        advance(rt, 9);
        cr_assert_eq(atomic_load(&g_ticks), i - 1, "not before the period ends");
        advance(rt, 1);
        cr_assert_eq(atomic_load(&g_ticks), i);
    }
    cr_assert_eq(atomic_load(&g_seen[1]), 7, "a copy of the same message each time");
    ac_runtime_destroy(rt);
}

Test(timers, advance_fires_an_interval_as_many_times_as_it_falls_due, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_ticker(cx);
    every(cx, &a, 10, 1);
    cr_assert_eq(advance(rt, 35), 3);
    cr_assert_eq(atomic_load(&g_ticks), 3);
    cr_assert_eq(advance(rt, 5), 1, "fixed rate: the phase is kept");
    cr_assert_eq(advance(rt, 1000), 100);
    cr_assert_eq(atomic_load(&g_ticks), 104);
    ac_runtime_destroy(rt);
}

Test(timers, cancel_before_firing_means_never_delivered, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_ticker(cx);
    ac_timer_id id = after(cx, &a, 10, 1);
    advance(rt, 5);
    cr_assert_eq(ac_timer_cancel(cx, id), 0);
    cr_assert_eq(advance(rt, 100), 0);
    cr_assert_eq(atomic_load(&g_ticks), 0);
    ac_runtime_destroy(rt);
}

Test(timers, cancel_returns_enotfound_after_firing, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_ticker(cx);
    ac_timer_id id = after(cx, &a, 10, 1);
    cr_assert_eq(ac_runtime_advance(rt, 10), 1);
    cr_assert_eq(ac_timer_cancel(cx, id), AC_ENOTFOUND);
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&g_ticks), 1, "the message it sent is delivered");
    ac_runtime_destroy(rt);
}

Test(timers, cancel_twice_returns_enotfound_the_second_time, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_ticker(cx);
    cr_assert_eq(ac_timer_cancel(cx, 12345), AC_ENOTFOUND, "before any timer");
    ac_timer_id id = every(cx, &a, 10, 1);
    cr_assert_eq(ac_timer_cancel(cx, id), 0);
    cr_assert_eq(ac_timer_cancel(cx, id), AC_ENOTFOUND);
    cr_assert_eq(ac_timer_cancel(cx, 0), AC_ENOTFOUND, "0 is never an id");
    cr_assert_eq(ac_timer_cancel(NULL, id), AC_EINVAL);
    ac_runtime_destroy(rt);
}

Test(timers, ids_are_distinct_and_never_reused, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_ticker(cx);
    ac_timer_id prev = 0;
    for (int i = 0; i < 100; i++) {
        ac_timer_id id = after(cx, &a, 1, 1);
        cr_assert_gt(id, prev, "a fresh id, even after the last one ended");
        prev = id;
        if (i % 2)
            cr_assert_eq(ac_timer_cancel(cx, id), 0);
        else
            advance(rt, 1);
    }
    ac_runtime_destroy(rt);
}

Test(timers, cancelling_an_interval_stops_it, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_ticker(cx);
    ac_timer_id id = every(cx, &a, 10, 1);
    cr_assert_eq(advance(rt, 30), 3);
    cr_assert_eq(ac_timer_cancel(cx, id), 0, "a running interval is pending");
    cr_assert_eq(advance(rt, 1000), 0);
    cr_assert_eq(atomic_load(&g_ticks), 3);
    ac_runtime_destroy(rt);
}

Test(timers, owner_death_cancels_its_timers, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr owner = spawn_ticker(cx), target = spawn_ticker(cx);
    ask_arm(cx, &owner, &target, 10, 1, false, false);
    ask_arm(cx, &owner, &target, 10, 2, true, false);
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&g_arm_rc), 0);
    cr_assert_eq(atomic_load(&g_nids), 2);
    cr_assert_eq(send_tag(cx, &owner, T_STOP), 0);
    ac_runtime_run(rt);
    cr_assert_eq(advance(rt, 100), 0, "nothing fires");
    cr_assert_eq(atomic_load(&g_ticks), 0);
    cr_assert_eq(ac_timer_cancel(cx, atomic_load(&g_ids[0])), AC_ENOTFOUND);
    cr_assert_eq(ac_timer_cancel(cx, atomic_load(&g_ids[1])), AC_ENOTFOUND);
    ac_runtime_destroy(rt);
}

Test(timers, owner_failure_cancels_its_timers, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr owner = spawn_ticker(cx), target = spawn_ticker(cx);
    ask_arm(cx, &owner, &target, 10, 1, true, false);
    ac_runtime_run(rt);  /* the owner starts it now, at tick 0 */
    cr_assert_eq(advance(rt, 20), 2);
    cr_assert_eq(send_tag(cx, &owner, T_FAIL), 0);
    ac_runtime_run(rt);
    cr_assert_eq(advance(rt, 100), 0);
    cr_assert_eq(atomic_load(&g_ticks), 2);
    ac_runtime_destroy(rt);
}

Test(timers, a_death_leaves_other_owners_timers_running, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr dying = spawn_ticker(cx), living = spawn_ticker(cx), target = spawn_ticker(cx);
    ask_arm(cx, &dying, &target, 10, 1, false, false);
    ask_arm(cx, &living, &target, 10, 2, false, false);
    after(cx, &target, 10, 3);  /* no owner */
    ac_runtime_run(rt);
    cr_assert_eq(send_tag(cx, &dying, T_STOP), 0);
    ac_runtime_run(rt);
    cr_assert_eq(advance(rt, 10), 2);
    cr_assert_eq(atomic_load(&g_seen[1]), 0);
    cr_assert_eq(atomic_load(&g_seen[2]), 1);
    cr_assert_eq(atomic_load(&g_seen[3]), 1);
    ac_runtime_destroy(rt);
}

Test(timers, a_timer_started_in_a_stop_hook_never_fires, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr owner = spawn_ticker(cx), target = spawn_ticker(cx);
    ask_arm(cx, &owner, &target, 10, 1, false, true);
    ac_runtime_run(rt);
    cr_assert_eq(send_tag(cx, &owner, T_STOP), 0);
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&g_nids), 1, "the stop hook started it");
    cr_assert_eq(atomic_load(&g_arm_rc), 0, "not an error: cancelled with its owner");
    cr_assert_eq(ac_timer_cancel(cx, atomic_load(&g_ids[0])), AC_ENOTFOUND);
    cr_assert_eq(advance(rt, 100), 0);
    cr_assert_eq(atomic_load(&g_ticks), 0);
    ac_runtime_destroy(rt);
}

Test(timers, timers_to_a_dead_target_are_counted_dead_letters, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_ticker(cx);
    after(cx, &a, 10, 1);
    every(cx, &a, 10, 2);
    cr_assert_eq(ac_stop(cx, &a), 0);
    ac_runtime_run(rt);
    cr_assert_eq(advance(rt, 30), 4, "the interval keeps firing");
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.dead_letters, 4);
    cr_assert_eq(atomic_load(&g_ticks), 0);
    ac_runtime_destroy(rt);
}

Test(timers, equal_deadlines_fire_in_fifo_order, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_ticker(cx);
    for (uint32_t n = 0; n < 500; n++)
        after(cx, &a, 10, n);
    cr_assert_eq(advance(rt, 10), 500);
    cr_assert_eq(atomic_load(&g_order_len), 500);
    for (uint32_t n = 0; n < 500; n++)
        cr_assert_eq(atomic_load(&g_order[n]), n, "position %u", n);
    ac_runtime_destroy(rt);
}

Test(timers, earlier_deadlines_fire_first_whatever_the_start_order, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_ticker(cx);
    after(cx, &a, 30, 3);
    after(cx, &a, 10, 1);
    every(cx, &a, 15, 100);  /* at 15 and 30: the 30 after tick 3 */
    after(cx, &a, 20, 2);
    cr_assert_eq(advance(rt, 30), 5);
    uint32_t want[] = {1, 100, 2, 3, 100};
    for (int i = 0; i < 5; i++)
        cr_assert_eq(atomic_load(&g_order[i]), want[i], "position %d", i);
    ac_runtime_destroy(rt);
}

Test(timers, ten_thousand_timers_each_fire_exactly_once, .timeout = 60)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_ticker(cx);
    uint64_t x = 88172645463325252u;
    for (uint32_t n = 0; n < MAX_TICKS; n++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        after(cx, &a, (uint32_t)(x % 1000), n);
    }
    int fired = 0;
    for (int step = 0; step < 10; step++)
        fired += advance(rt, 100);
    cr_assert_eq(fired, MAX_TICKS);
    cr_assert_eq(atomic_load(&g_ticks), MAX_TICKS);
    for (uint32_t n = 0; n < MAX_TICKS; n++)
        cr_assert_eq(atomic_load(&g_seen[n]), 1, "tick %u", n);
    ac_runtime_destroy(rt);
}

static _Atomic uint64_t g_hook_cancel;

static void cancel_in_hook(ac_ctx *cx, const ac_addr *to, const ac_envelope *e, int reason,
                           void *arg)
{
    (void)to, (void)e, (void)reason, (void)arg;
    atomic_store(&g_hook_cancel, (uint64_t)(ac_timer_cancel(cx, atomic_load(&g_ids[0])) + 100));
}

Test(timers, an_interval_can_be_cancelled_while_it_fires, .timeout = 30)
{
    /* The dead-letter hook runs inside the timer's own send. */
    ac_runtime *rt = make_runtime(0);
    ac_runtime_set_dead_letter_hook(rt, cancel_in_hook, NULL);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_ticker(cx);
    cr_assert_eq(ac_stop(cx, &a), 0);
    ac_runtime_run(rt);
    atomic_store(&g_ids[0], every(cx, &a, 10, 1));
    cr_assert_eq(advance(rt, 100), 1, "it ended with its first beat");
    cr_assert_eq(atomic_load(&g_hook_cancel), 100, "the cancel said 0");
    cr_assert_eq(ac_timer_cancel(cx, atomic_load(&g_ids[0])), AC_ENOTFOUND);
    ac_runtime_destroy(rt);
}

/* ---- refusals ------------------------------------------------------------ */

Test(timers, every_without_copy_is_einval, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_ticker(cx);
    ac_timer_id id = 99;
    cr_assert_eq(ac_timer_every(cx, &a, 10, &nocopy_type, new_tick(cx, 1), &id), AC_EINVAL);
    cr_assert_eq(id, 0);
    cr_assert_eq(ac_timer_every(cx, &a, 10, NULL, new_tick(cx, 1), &id), AC_EINVAL);
    cr_assert_eq(ac_timer_every(cx, &a, 0, &ticker_type, new_tick(cx, 1), &id), AC_EINVAL,
                 "a zero period");
    cr_assert_eq(advance(rt, 100), 0);
    ac_runtime_destroy(rt);  /* ASan: the refused envelopes were freed */
}

Test(timers, invalid_arguments_are_refused, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_ticker(cx);
    cr_assert_eq(ac_timer_after(cx, NULL, 1, new_tick(cx, 1), NULL), AC_EINVAL);
    cr_assert_eq(ac_timer_after(cx, &a, 1, NULL, NULL), AC_EINVAL);
    ac_envelope *sys = ac_envelope_new(cx, AC_TAG_DOWN, sizeof(ac_down));
    cr_assert_eq(ac_timer_after(cx, &a, 1, sys, NULL), AC_EINVAL, "system tags");
    cr_assert_eq(ac_runtime_advance(NULL, 1), AC_EINVAL);
    ac_runtime_destroy(rt);
}

Test(timers, advance_needs_deterministic_mode, .timeout = 30)
{
    ac_runtime *rt = make_runtime(2);
    cr_assert_eq(ac_runtime_advance(rt, 1), AC_ESTATE);
    ac_runtime_destroy(rt);
}

Test(timers, timers_are_refused_after_shutdown, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_ticker(cx);
    cr_assert_eq(ac_runtime_shutdown(rt), 0);
    ac_timer_id id = 99;
    cr_assert_eq(ac_timer_after(cx, &a, 1, new_tick(cx, 1), &id), AC_ESHUTDOWN);
    cr_assert_eq(id, 0);
    cr_assert_eq(ac_runtime_advance(rt, 1), AC_ESHUTDOWN);
    ac_runtime_destroy(rt);
}

Test(timers, shutdown_frees_pending_timers, .timeout = 30)
{
    /* AddressSanitizer's leak check is the assertion. */
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_ticker(cx), b = spawn_ticker(cx);
    for (uint32_t n = 0; n < 100; n++)
        after(cx, &a, 1000 + n, n);
    every(cx, &b, 10, 1);
    ask_arm(cx, &a, &b, 50, 2, true, false);  /* owned */
    ac_runtime_run(rt);
    cr_assert_eq(advance(rt, 20), 2);
    ac_runtime_destroy(rt);
    cr_assert_eq(atomic_load(&g_ticks), 2, "nothing more was sent");
}

/* ---- with workers ----------------------------------------------------------- */

Test(timers, a_timer_arrives_with_two_workers, .timeout = 30)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_ticker(cx);
    after(cx, &a, 20, 1);
    cr_assert(wait_for(&g_ticks, 1));
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&g_ticks), 1);
    ac_runtime_destroy(rt);
}

Test(timers, pending_timers_do_not_keep_run_waiting, .timeout = 30)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_ticker(cx);
    after(cx, &a, 3600 * 1000, 1);
    every(cx, &a, 3600 * 1000, 2);
    cr_assert_eq(ac_runtime_run(rt), 0);
    ac_runtime_destroy(rt);  /* and shutdown does not wait for them either */
    cr_assert_eq(atomic_load(&g_ticks), 0);
}

Test(timers, an_interval_ticks_with_two_workers_until_cancelled, .timeout = 30)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_ticker(cx);
    ac_timer_id id = every(cx, &a, 1, 1);
    cr_assert(wait_for(&g_ticks, 5));
    cr_assert_eq(ac_timer_cancel(cx, id), 0);
    ac_runtime_run(rt);  /* what it sent before the cancel returned */
    uint64_t seen = atomic_load(&g_ticks);
    sleep_ms(30);
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&g_ticks), seen, "nothing after the cancel returned");
    ac_runtime_destroy(rt);
}

Test(timers, cancel_racing_with_firing_has_exactly_one_outcome, .timeout = 60)
{
    /* Each timer is either cancelled (0: never delivered) or had fired
     * (AC_ENOTFOUND: delivered exactly once), never both or neither. */
    enum { N = 3000 };
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_ticker(cx);
    static ac_timer_id ids[N];
    static int rcs[N];
    for (uint32_t n = 0; n < N; n++)
        ids[n] = after(cx, &a, 1 + n % 3, n);
    sleep_ms(2);  /* some fired, some firing, some pending */
    for (uint32_t n = 0; n < N; n++)
        rcs[n] = ac_timer_cancel(cx, ids[n]);
    ac_runtime_run(rt);
    unsigned cancelled = 0;
    for (uint32_t n = 0; n < N; n++) {
        cr_assert(rcs[n] == 0 || rcs[n] == AC_ENOTFOUND);
        cr_assert_eq(atomic_load(&g_seen[n]), rcs[n] == 0 ? 0u : 1u, "timer %u", n);
        cancelled += rcs[n] == 0;
    }
    sleep_ms(10);
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&g_ticks), N - cancelled);
    ac_runtime_destroy(rt);
}

Test(timers, owner_death_cancels_its_timers_with_two_workers, .timeout = 30)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr owner = spawn_ticker(cx), target = spawn_ticker(cx);
    ask_arm(cx, &owner, &target, 1, 1, true, false);
    cr_assert(wait_for(&g_ticks, 3));
    cr_assert_eq(send_tag(cx, &owner, T_STOP), 0);
    /* A beat sent while the owner died is in the mailbox when it is over. */
    ac_runtime_run(rt);
    uint64_t seen = atomic_load(&g_ticks);
    sleep_ms(30);
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&g_ticks), seen);
    cr_assert_eq(ac_timer_cancel(cx, atomic_load(&g_ids[0])), AC_ENOTFOUND);
    ac_runtime_destroy(rt);
}

Test(timers, shutdown_with_workers_frees_pending_timers, .timeout = 30)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_ticker(cx);
    for (uint32_t n = 0; n < 100; n++)
        after(cx, &a, 60000 + n, n);
    every(cx, &a, 1, 1);
    ask_arm(cx, &a, &a, 60000, 2, true, false);
    cr_assert(wait_for(&g_ticks, 2));
    ac_runtime_destroy(rt);
}

Test(timers, timers_from_many_threads_all_fire, .timeout = 60)
{
    /* Owners on both workers start timers at once, one of them each. */
    enum { OWNERS = 200 };
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr target = spawn_ticker(cx);
    for (uint32_t n = 0; n < OWNERS; n++) {
        ac_addr o = spawn_ticker(cx);
        ask_arm(cx, &o, &target, n % 5, n, false, false);
    }
    cr_assert(wait_for(&g_ticks, OWNERS));
    ac_runtime_run(rt);
    for (uint32_t n = 0; n < OWNERS; n++)
        cr_assert_eq(atomic_load(&g_seen[n]), 1, "tick %u", n);
    ac_runtime_destroy(rt);
}

/* ---- with a supervisor ------------------------------------------------------- */

static _Atomic uint32_t g_incarnation;

/* A child whose start hook starts an interval to the address in `args`,
 * ticking its incarnation number (100, 101, ...). */
static int beeper_start(void *state, ac_ctx *cx, const void *args)
{
    (void)state;
    uint32_t n = 100 + atomic_fetch_add(&g_incarnation, 1);
    return ac_timer_every(cx, args, 10, &ticker_type, new_tick(cx, n), NULL);
}

static const ac_actor_type beeper_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.Beeper",
    .state_size = sizeof(ticker),
    .state_align = _Alignof(ticker),
    .dispatch = ticker_dispatch,
    .on_start = beeper_start,
    .message_count = 4,
    .message_names = ticker_names,
    .copy = ticker_copy,
};

Test(timers, a_restarted_child_keeps_only_its_new_timers, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr target = spawn_ticker(cx);
    ac_child_spec child = {.type = &beeper_type, .args = &target, .args_size = sizeof target,
                           .restart = AC_RESTART_PERMANENT};
    ac_supervisor_spec spec = {.strategy = AC_ONE_FOR_ONE, .max_restarts = 5, .within_ms = 1000,
                               .children = &child, .nchildren = 1};
    ac_addr sup, kid;
    cr_assert_eq(ac_supervisor_start(cx, &spec, &sup, &kid), 0);
    ac_runtime_run(rt);
    cr_assert_eq(advance(rt, 10), 1);
    cr_assert_eq(atomic_load(&g_seen[100]), 1);
    cr_assert_eq(send_tag(cx, &kid, T_FAIL), 0);
    ac_runtime_run(rt);  /* it fails, its interval goes, it is restarted */
    cr_assert_eq(atomic_load(&g_incarnation), 2);
    cr_assert_eq(advance(rt, 30), 3, "one interval left, the new one");
    cr_assert_eq(atomic_load(&g_seen[100]), 1);
    cr_assert_eq(atomic_load(&g_seen[101]), 3);
    ac_runtime_destroy(rt);
}

Test(timers, shutdown_racing_with_the_timer_threads_start_never_hangs, .timeout = 120)
{
    /* The timer thread makes its context with the lock dropped; a shutdown
     * that closed the timers in that window once left it asleep on an
     * hour-long deadline, and the join waited forever (1 run in ~50). */
    for (int i = 0; i < 3000; i++) {
        ac_runtime *rt = make_runtime(2);
        ac_ctx *cx = ac_runtime_ctx(rt);
        ac_addr a = spawn_ticker(cx);
        after(cx, &a, 3600 * 1000, 1);
        ac_runtime_destroy(rt);
    }
    cr_assert_eq(atomic_load(&g_ticks), 0);
}
