/*
 * test_supervisors.c — supervisors: strategies, restart policies, restart
 * intensity, addresses kept across restarts, ordered stops.
 */
#include "fixtures.h"
#include "probe.h"

/* probe.h's world (runtime, context, the inbox the probes report to) and
 * the supervisor under test. */
typedef struct world {
    probe_world p;
    probe_args args;
    ac_child_spec specs[4];
    ac_addr kids[4];
    ac_addr sup;
} world;

static world *open_world(int workers)
{
    static world w;
    memset(&w, 0, sizeof w);
    w.p = probe_world_open(workers);
    w.args = (probe_args){*w.p.me, 0, false};
    for (int i = 0; i < 4; i++)
        w.specs[i] = (ac_child_spec){&probe_type, &w.args, sizeof w.args,
                                     AC_RESTART_PERMANENT, NULL};
    return &w;
}

static void close_world(world *w)
{
    probe_world_close(&w->p);
}

static void start_sup(world *w, uint32_t strategy, size_t n, uint32_t max, uint32_t within)
{
    ac_supervisor_spec spec = {strategy, max, within, w->specs, n};
    cr_assert_eq(ac_supervisor_start(w->p.cx, &spec, &w->sup, w->kids), 0);
    for (size_t i = 0; i < n; i++) {
        ac_addr a;
        expect_report(w->p.cx, w->p.ib, R_STARTED, &a, sizeof a);
        cr_assert(ac_addr_eq(&a, &w->kids[i]), "children start in order");
    }
}

static void fail_kid(world *w, size_t i, int code)
{
    cr_assert_eq(probe_cmd(w->p.cx, &w->kids[i], P_FAIL, &code, sizeof code), 0);
}

static size_t started(world *w, size_t n)
{
    ac_addr a;
    expect_report(w->p.cx, w->p.ib, R_STARTED, &a, sizeof a);
    for (size_t i = 0; i < n; i++)
        if (ac_addr_eq(&a, &w->kids[i]))
            return i;
    cr_assert(false, "a start at an unknown address");
    return n;
}

static uint64_t count_of(world *w, size_t i)
{
    cr_assert_eq(probe_cmd(w->p.cx, &w->kids[i], P_GET_COUNT, NULL, 0), 0);
    probe_stopped s;
    expect_report(w->p.cx, w->p.ib, R_COUNT, &s, sizeof s);
    return s.count;
}

Test(supervisors, one_for_one_restarts_the_failed_child_at_its_address, .timeout = 30)
{
    world *w = open_world(0);
    start_sup(w, AC_ONE_FOR_ONE, 3, 5, 1000);
    fail_kid(w, 1, 9);
    cr_assert_eq(started(w, 3), 1);
    cr_assert(no_report(w->p.cx, w->p.ib, R_STARTED), "only the failed child restarts");
    close_world(w);
}

Test(supervisors, a_restarted_child_gets_fresh_state_and_senders_need_not_know, .timeout = 30)
{
    world *w = open_world(0);
    start_sup(w, AC_ONE_FOR_ONE, 1, 5, 1000);
    for (int i = 0; i < 3; i++)
        probe_cmd(w->p.cx, &w->kids[0], P_COUNT, NULL, 0);
    cr_assert_eq(count_of(w, 0), 3);
    fail_kid(w, 0, 1);
    started(w, 1);
    cr_assert_eq(probe_cmd(w->p.cx, &w->kids[0], P_COUNT, NULL, 0), 0);
    cr_assert_eq(count_of(w, 0), 1);
    close_world(w);
}

Test(supervisors, one_for_all_restarts_every_child_in_start_order, .timeout = 30)
{
    world *w = open_world(0);
    start_sup(w, AC_ONE_FOR_ALL, 3, 5, 1000);
    fail_kid(w, 1, 2);
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(started(w, 3), i);
    ac_stats st;
    ac_runtime_stats(w->p.rt, &st);
    cr_assert_eq(st.killed, 2);
    close_world(w);
}

Test(supervisors, one_for_all_waits_for_every_affected_child_to_be_down, .timeout = 60)
{
    world *w = open_world(2);
    start_sup(w, AC_ONE_FOR_ALL, 4, 5, 10000);
    /* Give the siblings work, so their deaths come late. */
    for (int k = 0; k < 2000; k++)
        for (size_t i = 0; i < 4; i++)
            if (i != 2)
                probe_cmd(w->p.cx, &w->kids[i], P_COUNT, NULL, 0);
    fail_kid(w, 2, 2);
    for (size_t i = 0; i < 4; i++)
        cr_assert_eq(started(w, 4), i);
    /* Every restarted child starts empty: none was restarted while its
     * old instance still ran. */
    for (size_t i = 0; i < 4; i++)
        cr_assert_eq(count_of(w, i), 0);
    close_world(w);
}

Test(supervisors, rest_for_one_restarts_the_failed_child_and_those_after_it, .timeout = 30)
{
    world *w = open_world(0);
    start_sup(w, AC_REST_FOR_ONE, 4, 5, 1000);
    fail_kid(w, 1, 2);
    cr_assert_eq(started(w, 4), 1);
    cr_assert_eq(started(w, 4), 2);
    cr_assert_eq(started(w, 4), 3);
    cr_assert(no_report(w->p.cx, w->p.ib, R_STARTED));
    close_world(w);
}

Test(supervisors, a_permanent_child_is_restarted_after_a_normal_stop, .timeout = 30)
{
    world *w = open_world(0);
    start_sup(w, AC_ONE_FOR_ONE, 1, 5, 1000);
    probe_cmd(w->p.cx, &w->kids[0], P_STOP_SELF, NULL, 0);
    cr_assert_eq(started(w, 1), 0);
    close_world(w);
}

Test(supervisors, a_transient_child_is_restarted_only_after_a_failure, .timeout = 30)
{
    world *w = open_world(0);
    w->specs[0].restart = AC_RESTART_TRANSIENT;
    w->specs[1].restart = AC_RESTART_TRANSIENT;
    start_sup(w, AC_ONE_FOR_ONE, 2, 5, 1000);
    fail_kid(w, 0, 3);
    cr_assert_eq(started(w, 2), 0);
    probe_cmd(w->p.cx, &w->kids[1], P_STOP_SELF, NULL, 0);
    cr_assert(no_report(w->p.cx, w->p.ib, R_STARTED));
    cr_assert_eq(probe_cmd(w->p.cx, &w->kids[1], P_COUNT, NULL, 0), AC_ENOTFOUND);
    close_world(w);
}

Test(supervisors, a_temporary_child_is_never_restarted, .timeout = 30)
{
    world *w = open_world(0);
    w->specs[0].restart = AC_RESTART_TEMPORARY;
    start_sup(w, AC_ONE_FOR_ONE, 1, 5, 1000);
    fail_kid(w, 0, 3);
    cr_assert(no_report(w->p.cx, w->p.ib, R_STARTED));
    close_world(w);
}

Test(supervisors, too_many_restarts_fail_the_supervisor_and_end_its_children, .timeout = 30)
{
    world *w = open_world(0);
    start_sup(w, AC_ONE_FOR_ONE, 2, 2, 1000);
    cr_assert_eq(ac_monitor(w->p.cx, w->p.me, &w->sup, NULL), 0);
    for (int round = 0; round < 2; round++) {
        fail_kid(w, 0, 1);
        cr_assert_eq(started(w, 2), 0);
    }
    fail_kid(w, 0, 1);  /* the third restart within 1000 ticks: too many */
    ac_down d;
    expect_report(w->p.cx, w->p.ib, AC_TAG_DOWN, &d, sizeof d);
    cr_assert(ac_addr_eq(&d.who, &w->sup));
    cr_assert_eq(d.reason, AC_REASON_FAILED);
    ac_runtime_run(w->p.rt);
    cr_assert_eq(probe_cmd(w->p.cx, &w->kids[1], P_COUNT, NULL, 0), AC_ENOTFOUND);
    close_world(w);
}

Test(supervisors, restarts_spread_over_time_stay_within_the_intensity, .timeout = 30)
{
    world *w = open_world(0);
    start_sup(w, AC_ONE_FOR_ONE, 1, 2, 100);
    for (int round = 0; round < 10; round++) {
        fail_kid(w, 0, 1);
        cr_assert_eq(started(w, 1), 0);
        cr_assert_geq(ac_runtime_advance(w->p.rt, 60), 0);  /* deterministic ticks */
    }
    ac_runtime_run(w->p.rt);
    ac_stats st;
    ac_runtime_stats(w->p.rt, &st);
    cr_assert_eq(st.failed, 10);  /* the child's ten failures; not the supervisor */
    cr_assert_eq(ac_supervisor_stop(w->p.cx, &w->sup), 0);  /* still there */
    close_world(w);
}

Test(supervisors, stopping_a_supervisor_stops_its_children_in_reverse_start_order, .timeout = 60)
{
    world *w = open_world(2);
    start_sup(w, AC_ONE_FOR_ONE, 4, 5, 1000);
    cr_assert_eq(ac_supervisor_stop(w->p.cx, &w->sup), 0);
    for (size_t i = 4; i-- > 0;) {
        probe_stopped s;
        expect_report(w->p.cx, w->p.ib, R_STOPPED, &s, sizeof s);
        cr_assert(ac_addr_eq(&s.who, &w->kids[i]), "child %zu stops in its turn", i);
    }
    ac_runtime_run(w->p.rt);
    ac_stats st;
    ac_runtime_stats(w->p.rt, &st);
    cr_assert_eq(st.stopped, 5);
    cr_assert(no_report(w->p.cx, w->p.ib, R_STARTED));
    close_world(w);
}

Test(supervisors, a_child_that_cannot_start_fails_the_supervisor_start, .timeout = 30)
{
    world *w = open_world(0);
    probe_args bad = {*w->p.me, 44, false};
    w->specs[1].args = &bad;
    ac_supervisor_spec spec = {AC_ONE_FOR_ONE, 3, 1000, w->specs, 2};
    ac_addr sup;
    cr_assert_eq(ac_supervisor_start(w->p.cx, &spec, &sup, NULL), 44);
    ac_runtime_run(w->p.rt);
    ac_stats st;
    ac_runtime_stats(w->p.rt, &st);
    cr_assert_eq(st.killed, 1);  /* the first child, started before */
    close_world(w);
}

Test(supervisors, a_bad_specification_is_refused, .timeout = 30)
{
    world *w = open_world(0);
    ac_supervisor_spec spec = {7, 3, 1000, w->specs, 1};
    ac_addr sup;
    cr_assert_eq(ac_supervisor_start(w->p.cx, &spec, &sup, NULL), AC_EINVAL);
    spec.strategy = AC_ONE_FOR_ONE;
    w->specs[0].restart = 9;
    cr_assert_eq(ac_supervisor_start(w->p.cx, &spec, &sup, NULL), AC_EINVAL);
    close_world(w);
}

Test(supervisors, killing_the_supervisor_kills_its_children, .timeout = 30)
{
    world *w = open_world(0);
    start_sup(w, AC_ONE_FOR_ONE, 3, 5, 1000);
    cr_assert_eq(ac_kill(w->p.cx, &w->sup), 0);
    ac_runtime_run(w->p.rt);
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(probe_cmd(w->p.cx, &w->kids[i], P_COUNT, NULL, 0), AC_ENOTFOUND);
    ac_stats st;
    ac_runtime_stats(w->p.rt, &st);
    cr_assert_eq(st.killed, 4);
    close_world(w);
}

Test(supervisors, a_named_child_gets_its_name_back_after_a_restart, .timeout = 30)
{
    world *w = open_world(0);
    w->specs[0].name = "worker";
    start_sup(w, AC_ONE_FOR_ONE, 1, 5, 1000);
    ac_addr a;
    cr_assert_eq(ac_whereis(w->p.cx, "worker", &a), 0);
    cr_assert(ac_addr_eq(&a, &w->kids[0]));
    fail_kid(w, 0, 1);
    started(w, 1);
    cr_assert_eq(ac_whereis(w->p.cx, "worker", &a), 0);
    cr_assert(ac_addr_eq(&a, &w->kids[0]));
    close_world(w);
}

Test(supervisors, many_failures_under_load_each_restart_once, .timeout = 60)
{
    world *w = open_world(2);
    start_sup(w, AC_ONE_FOR_ONE, 4, 1000, 1000000);
    enum { ROUNDS = 100 };
    for (int r = 0; r < ROUNDS; r++) {
        size_t i = (size_t)r % 4;
        fail_kid(w, i, r + 1);
        cr_assert_eq(started(w, 4), i);
    }
    cr_assert(no_report(w->p.cx, w->p.ib, R_STARTED));
    close_world(w);
}

/* A child that starts once, then fails every later start after 2 ms: its
 * restarts are slower than a 1-restart-per-1-ms intensity can ever
 * count, so the supervisor tries for ever (OTP-9549's case). */
static _Atomic unsigned slow_starts;

static int slow_start(void *state, ac_ctx *cx, const void *args)
{
    (void)state;
    (void)cx;
    (void)args;
    if (atomic_fetch_add_explicit(&slow_starts, 1, memory_order_relaxed) == 0)
        return 0;
    struct timespec ts = {0, 2 * 1000 * 1000};
    nanosleep(&ts, NULL);
    return AC_EFAILED;
}

static int slow_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    (void)state;
    (void)cx;
    (void)e;
    return 7;
}

static const ac_actor_type slow_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.SlowFailer",
    .dispatch = slow_dispatch,
    .on_start = slow_start,
    .message_count = 1,
};

static void start_slow_loop(ac_runtime **rt, ac_addr *sup)
{
    atomic_store_explicit(&slow_starts, 0, memory_order_relaxed);
    ac_config cfg;
    ac_config_init(&cfg);
    cfg.workers = 2;
    cr_assert_eq(ac_runtime_create(rt, &cfg), 0);
    ac_ctx *cx = ac_runtime_ctx(*rt);
    ac_child_spec child = {.type = &slow_type, .restart = AC_RESTART_PERMANENT};
    ac_supervisor_spec spec = {AC_ONE_FOR_ONE, 1, 1, &child, 1};
    ac_addr kid;
    cr_assert_eq(ac_supervisor_start(cx, &spec, sup, &kid), 0);
    ac_envelope *e = ac_envelope_new(cx, 0, 0);
    cr_assert_not_null(e);
    cr_assert_eq(ac_send(cx, &kid, e), 0);
    /* Until it has retried a few times: the loop is under way. */
    while (atomic_load_explicit(&slow_starts, memory_order_relaxed) < 5)
        sched_yield();
}

/* Shutdown ends a restart loop that never exceeds the intensity. */
Test(supervisors, shutdown_ends_a_restart_loop_slower_than_the_intensity)
{
    ac_runtime *rt;
    ac_addr sup;
    start_slow_loop(&rt, &sup);
    cr_assert_eq(ac_runtime_destroy(rt), 0);
}

/* And so does stopping the supervisor: it handles the stop between tries. */
Test(supervisors, a_restart_loop_does_not_hold_the_supervisor)
{
    ac_runtime *rt;
    ac_addr sup;
    start_slow_loop(&rt, &sup);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_inbox *ib;
    cr_assert_eq(ac_inbox_create(cx, &ib), 0);
    cr_assert_eq(ac_monitor(cx, ac_inbox_addr(ib), &sup, NULL), 0);
    cr_assert_eq(ac_supervisor_stop(cx, &sup), 0);
    ac_envelope *e;
    cr_assert_eq(ac_inbox_recv(cx, ib, AC_TAG_DOWN, 10000, &e), 0);
    ac_envelope_free(cx, e);
    ac_inbox_destroy(cx, ib);
    cr_assert_eq(ac_runtime_destroy(rt), 0);
}
