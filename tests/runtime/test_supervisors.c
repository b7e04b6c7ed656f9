/*
 * test_supervisors.c — supervisors: strategies, restart policies, restart
 * intensity, addresses kept across restarts, ordered stops.
 */
#include "fixtures.h"
#include "probe.h"

#include <pthread.h>
#include <stdio.h>

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
        w.specs[i] = (ac_child_spec){.type = &probe_type, .args = &w.args,
                                     .args_size = sizeof w.args,
                                     .restart = AC_RESTART_PERMANENT};
    return &w;
}

static void close_world(world *w)
{
    probe_world_close(&w->p);
}

static void start_sup(world *w, uint32_t strategy, size_t n, uint32_t max, uint32_t within)
{
    ac_supervisor_spec spec = {.strategy = strategy, .max_restarts = max, .within_ms = within,
                               .children = w->specs, .nchildren = n};
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
    ac_supervisor_spec spec = {.strategy = AC_ONE_FOR_ONE, .max_restarts = 3, .within_ms = 1000,
                               .children = w->specs, .nchildren = 2};
    ac_addr sup;
    cr_assert_eq(ac_supervisor_start(w->p.cx, &spec, &sup, NULL), 44);
    ac_runtime_run(w->p.rt);
    ac_stats st;
    ac_runtime_stats(w->p.rt, &st);
    cr_assert_eq(st.killed, 0);
    cr_assert_eq(st.stopped, 1);  /* the first child, started before: stopped */
    close_world(w);
}

Test(supervisors, a_bad_specification_is_refused, .timeout = 30)
{
    world *w = open_world(0);
    ac_supervisor_spec spec = {.strategy = 7, .max_restarts = 3, .within_ms = 1000,
                               .children = w->specs, .nchildren = 1};
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
    /* Actors failed on purpose are not reported (failure.c). */
    ac_runtime_set_failure_hook(*rt, ac_failure_quiet, NULL);
    ac_ctx *cx = ac_runtime_ctx(*rt);
    ac_child_spec child = {.type = &slow_type, .restart = AC_RESTART_PERMANENT};
    ac_supervisor_spec spec = {.strategy = AC_ONE_FOR_ONE, .max_restarts = 1, .within_ms = 1,
                               .children = &child, .nchildren = 1};
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

/* ---- OTP's supervisor_SUITE, rebuilt ------------------------------------------
 *
 * A recording child: its start hook logs each attempt (id, or 100 + id for
 * one that fails: fail_next[id] says how many of its next starts fail),
 * its stop hook logs its id; message 0 fails it. The logs are global,
 * reset by each test. */
enum { REC_FAIL = 0, REC_NOP = 1 };

typedef struct rec_log {
    pthread_mutex_t lock;
    int starts[256], stops[256];
    size_t nstarts, nstops;
    int fail_next[128];
} rec_log;

static rec_log g_rec = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void rec_reset(void)
{
    pthread_mutex_lock(&g_rec.lock);
    g_rec.nstarts = g_rec.nstops = 0;
    memset(g_rec.fail_next, 0, sizeof g_rec.fail_next);
    pthread_mutex_unlock(&g_rec.lock);
}

static void rec_fail_next(int id, int n)
{
    pthread_mutex_lock(&g_rec.lock);
    g_rec.fail_next[id] = n;
    pthread_mutex_unlock(&g_rec.lock);
}

static int rec_start(void *state, ac_ctx *cx, const void *args)
{
    (void)cx;
    int id = *(const int *)args;
    *(int *)state = id;
    pthread_mutex_lock(&g_rec.lock);
    bool fail = g_rec.fail_next[id] > 0;
    if (fail)
        g_rec.fail_next[id]--;
    if (g_rec.nstarts < 256)
        g_rec.starts[g_rec.nstarts++] = fail ? 100 + id : id;
    pthread_mutex_unlock(&g_rec.lock);
    return fail ? AC_EFAILED : 0;
}

static void rec_stop(void *state, ac_ctx *cx)
{
    (void)cx;
    pthread_mutex_lock(&g_rec.lock);
    if (g_rec.nstops < 256)
        g_rec.stops[g_rec.nstops++] = *(int *)state;
    pthread_mutex_unlock(&g_rec.lock);
}

static int rec_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    (void)state;
    (void)cx;
    return e->tag == REC_FAIL ? 7 : 0;
}

static const ac_actor_type rec_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.Recorder",
    .state_size = sizeof(int),
    .state_align = _Alignof(int),
    .dispatch = rec_dispatch,
    .on_start = rec_start,
    .on_stop = rec_stop,
    .message_count = 2,
};

static int rec_ids[128];

static ac_child_spec rec_child(int id)
{
    rec_ids[id] = id;
    return (ac_child_spec){.type = &rec_type, .args = &rec_ids[id], .args_size = sizeof(int),
                           .restart = AC_RESTART_PERMANENT};
}

static ac_child_spec sup_child(const ac_supervisor_spec *spec)
{
    return (ac_child_spec){.restart = AC_RESTART_PERMANENT, .supervisor = spec};
}

/* The log as it is now (a copy, under the lock). */
static size_t rec_starts(int *out)
{
    pthread_mutex_lock(&g_rec.lock);
    size_t n = g_rec.nstarts;
    memcpy(out, g_rec.starts, n * sizeof *out);
    pthread_mutex_unlock(&g_rec.lock);
    return n;
}

static size_t rec_stops(int *out)
{
    pthread_mutex_lock(&g_rec.lock);
    size_t n = g_rec.nstops;
    memcpy(out, g_rec.stops, n * sizeof *out);
    pthread_mutex_unlock(&g_rec.lock);
    return n;
}

static void assert_log(const int *got, size_t n, const int *want, size_t m, const char *what)
{
    char g[512] = "", *p = g;
    for (size_t i = 0; i < n && p < g + sizeof g - 8; i++)
        p += snprintf(p, (size_t)(g + sizeof g - p), "%d ", got[i]);
    cr_assert_eq(n, m, "%s: %zu entries (%s), want %zu", what, n, g, m);
    for (size_t i = 0; i < m; i++)
        cr_assert_eq(got[i], want[i], "%s: entry %zu is %d, want %d (%s)", what, i, got[i],
                     want[i], g);
}

static ac_down expect_down_of(world *w, const ac_addr *who)
{
    ac_down d;
    expect_report(w->p.cx, w->p.ib, AC_TAG_DOWN, &d, sizeof d);
    cr_assert(ac_addr_eq(&d.who, who), "the down is the one watched");
    return d;
}

/* OTP-9549 (supervisor_SUITE's restart loop cases): each failed restart
 * attempt is one more restart against the intensity, so a child that can
 * never start again makes the supervisor give up after max_restarts of
 * them, and not try for ever. */
Test(supervisors, each_failed_restart_counts_and_the_supervisor_gives_up, .timeout = 30)
{
    rec_reset();
    world *w = open_world(0);
    ac_child_spec kid = rec_child(0);
    ac_supervisor_spec spec = {.strategy = AC_ONE_FOR_ONE, .max_restarts = 3, .within_ms = 100000,
                               .children = &kid, .nchildren = 1};
    ac_addr kids[1];
    cr_assert_eq(ac_supervisor_start(w->p.cx, &spec, &w->sup, kids), 0);
    cr_assert_eq(ac_monitor(w->p.cx, w->p.me, &w->sup, NULL), 0);
    rec_fail_next(0, 1000);
    cr_assert_eq(probe_cmd(w->p.cx, &kids[0], REC_FAIL, NULL, 0), 0);
    ac_down d = expect_down_of(w, &w->sup);
    cr_assert_eq(d.reason, AC_REASON_FAILED);
    cr_assert_eq(d.code, AC_EFAILED);
    int got[256];
    /* The death is restart 1; the attempts are restarts 2, 3, 4: the
     * fourth within the period is one too many. */
    assert_log(got, rec_starts(got), (int[]){0, 100, 100, 100}, 4, "starts");
    close_world(w);
}

/* The case with workers: a start that fails after 2 ms, under an
 * intensity it reaches (3 in 10 s), ends in the supervisor giving up. */
Test(supervisors, a_restart_loop_slower_than_a_turn_still_gives_up, .timeout = 30)
{
    atomic_store_explicit(&slow_starts, 0, memory_order_relaxed);
    world *w = open_world(2);
    ac_child_spec child = {.type = &slow_type, .restart = AC_RESTART_PERMANENT};
    ac_supervisor_spec spec = {.strategy = AC_ONE_FOR_ONE, .max_restarts = 3, .within_ms = 10000,
                               .children = &child, .nchildren = 1};
    ac_addr kid;
    cr_assert_eq(ac_supervisor_start(w->p.cx, &spec, &w->sup, &kid), 0);
    cr_assert_eq(ac_monitor(w->p.cx, w->p.me, &w->sup, NULL), 0);
    cr_assert_eq(probe_cmd(w->p.cx, &kid, 0, NULL, 0), 0);
    ac_down d = expect_down_of(w, &w->sup);
    cr_assert_eq(d.reason, AC_REASON_FAILED);
    cr_assert_eq(atomic_load_explicit(&slow_starts, memory_order_relaxed), 1 + 3);
    close_world(w);
}

/* OTP refuses a period of 0; an intensity of 0 means never restart: the
 * first death that asks for a restart ends the supervisor. */
Test(supervisors, a_period_of_zero_is_refused_and_an_intensity_of_zero_never_restarts,
     .timeout = 30)
{
    world *w = open_world(0);
    ac_supervisor_spec spec = {.strategy = AC_ONE_FOR_ONE, .max_restarts = 3, .within_ms = 0,
                               .children = w->specs, .nchildren = 1};
    ac_addr sup;
    cr_assert_eq(ac_supervisor_start(w->p.cx, &spec, &sup, NULL), AC_EINVAL);
    cr_assert_eq(no_report(w->p.cx, w->p.ib, R_STARTED), true, "nothing started");
    start_sup(w, AC_ONE_FOR_ONE, 2, 0, 1000);
    cr_assert_eq(ac_monitor(w->p.cx, w->p.me, &w->sup, NULL), 0);
    fail_kid(w, 0, 5);
    ac_down d = expect_down_of(w, &w->sup);
    cr_assert_eq(d.reason, AC_REASON_FAILED);
    cr_assert(no_report(w->p.cx, w->p.ib, R_STARTED), "no restart");
    cr_assert_eq(probe_cmd(w->p.cx, &w->kids[1], P_COUNT, NULL, 0), AC_ENOTFOUND);
    close_world(w);
}

/* A three-level tree of probes:
 *   top (one-for-one, 5 in 10 s): w0, mid, w2
 *   mid (one-for-one, 1 in 10 s): w10, bot
 *   bot (one-for-one, 0):         w20, w21 */
static const char *const tree_names[] = {"tree", "w0", "mid", "w2", "w10", "bot", "w20", "w21"};

typedef struct tree {
    ac_child_spec top_c[3], mid_c[2], bot_c[2];
    ac_supervisor_spec top, mid, bot;
    ac_addr top_a, w0, mid_a, w2, w10, bot_a, w20, w21;
} tree;

static void start_tree(world *w, tree *t, const char *name)
{
    memset(t, 0, sizeof *t);
    t->bot_c[0] = t->bot_c[1] = t->mid_c[0] = t->top_c[0] = t->top_c[2] = w->specs[0];
    t->bot = (ac_supervisor_spec){.strategy = AC_ONE_FOR_ONE, .max_restarts = 0,
                                  .within_ms = 10000, .children = t->bot_c, .nchildren = 2};
    t->mid_c[1] = sup_child(&t->bot);
    t->mid = (ac_supervisor_spec){.strategy = AC_ONE_FOR_ONE, .max_restarts = 1,
                                  .within_ms = 10000, .children = t->mid_c, .nchildren = 2};
    t->top_c[1] = sup_child(&t->mid);
    t->top = (ac_supervisor_spec){.strategy = AC_ONE_FOR_ONE, .max_restarts = 5,
                                  .within_ms = 10000, .children = t->top_c, .nchildren = 3,
                                  .name = name};
    if (name) {  /* every actor of the tree named (tree_names) */
        t->top_c[0].name = "w0";
        t->top_c[1].name = "mid";
        t->top_c[2].name = "w2";
        t->mid_c[0].name = "w10";
        t->mid_c[1].name = "bot";
        t->bot_c[0].name = "w20";
        t->bot_c[1].name = "w21";
    }
    ac_addr kids[3], sub[2];
    cr_assert_eq(ac_supervisor_start(w->p.cx, &t->top, &t->top_a, kids), 0);
    t->w0 = kids[0];
    t->mid_a = kids[1];
    t->w2 = kids[2];
    cr_assert_eq(ac_supervisor_which_children(w->p.cx, &t->mid_a, sub, 2), 2);
    t->w10 = sub[0];
    t->bot_a = sub[1];
    cr_assert_eq(ac_supervisor_which_children(w->p.cx, &t->bot_a, sub, 2), 2);
    t->w20 = sub[0];
    t->w21 = sub[1];
    /* Depth first, in start order. */
    const ac_addr *order[] = {&t->w0, &t->w10, &t->w20, &t->w21, &t->w2};
    for (size_t i = 0; i < 5; i++) {
        ac_addr a;
        expect_report(w->p.cx, w->p.ib, R_STARTED, &a, sizeof a);
        cr_assert(ac_addr_eq(&a, order[i]), "start %zu in depth-first order", i);
    }
}

static void expect_started(world *w, const ac_addr *const *who, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        ac_addr a;
        expect_report(w->p.cx, w->p.ib, R_STARTED, &a, sizeof a);
        cr_assert(ac_addr_eq(&a, who[i]), "restart %zu at its old address", i);
    }
    cr_assert(no_report(w->p.cx, w->p.ib, R_STARTED), "nothing else restarted");
}

Test(supervisors, a_tree_escalates_through_its_levels_and_keeps_its_addresses, .timeout = 30)
{
    world *w = open_world(0);
    tree t;
    start_tree(w, &t, NULL);
    ac_addr seen[4];
    cr_assert_eq(ac_supervisor_which_children(w->p.cx, &t.top_a, seen, 4), 3);
    cr_assert(ac_addr_eq(&seen[1], &t.mid_a));
    cr_assert_eq(ac_supervisor_which_children(w->p.cx, &t.w0, seen, 4), AC_ENOTFOUND);
    cr_assert_eq(ac_monitor(w->p.cx, w->p.me, &t.bot_a, NULL), 0);
    cr_assert_eq(ac_monitor(w->p.cx, w->p.me, &t.mid_a, NULL), 0);

    /* bot may not restart at all: it gives up, and mid restarts it. */
    int code = 3;
    cr_assert_eq(probe_cmd(w->p.cx, &t.w20, P_FAIL, &code, sizeof code), 0);
    ac_down d = expect_down_of(w, &t.bot_a);
    cr_assert_eq(d.reason, AC_REASON_FAILED);
    expect_started(w, (const ac_addr *[]){&t.w20, &t.w21}, 2);
    cr_assert_eq(ac_supervisor_which_children(w->p.cx, &t.bot_a, seen, 4), 2);
    cr_assert(ac_addr_eq(&seen[0], &t.w20) && ac_addr_eq(&seen[1], &t.w21));

    /* Again: bot gives up, mid's second restart is one too many, mid
     * gives up, and top restarts mid's whole subtree where it was. */
    cr_assert_eq(ac_monitor(w->p.cx, w->p.me, &t.bot_a, NULL), 0);
    cr_assert_eq(probe_cmd(w->p.cx, &t.w20, P_FAIL, &code, sizeof code), 0);
    expect_down_of(w, &t.bot_a);
    d = expect_down_of(w, &t.mid_a);
    cr_assert_eq(d.reason, AC_REASON_FAILED);
    cr_assert_eq(d.code, AC_EFAILED);
    expect_started(w, (const ac_addr *[]){&t.w10, &t.w20, &t.w21}, 3);
    cr_assert_eq(ac_supervisor_which_children(w->p.cx, &t.mid_a, seen, 4), 2);
    cr_assert(ac_addr_eq(&seen[0], &t.w10) && ac_addr_eq(&seen[1], &t.bot_a));
    /* The rest of the tree never noticed. */
    cr_assert_eq(ac_supervisor_which_children(w->p.cx, &t.top_a, seen, 4), 3);
    close_world(w);
}

/* What reached the inbox, in order: stop hooks of the probes and the
 * supervisors' downs. */
typedef struct event {
    uint32_t tag;
    ac_addr who;
} event;

static size_t gather(world *w, event *ev, size_t max, size_t want_downs)
{
    size_t n = 0, downs = 0;
    while (downs < want_downs && n < max) {
        ac_envelope *e = NULL;
        cr_assert_eq(ac_inbox_recv(w->p.cx, w->p.ib, AC_ANY_TAG, 10000, &e), 0);
        if (e->tag == R_STOPPED) {
            ev[n++] = (event){R_STOPPED, ((const probe_stopped *)ac_envelope_payload(e))->who};
        } else if (e->tag == AC_TAG_DOWN) {
            ev[n++] = (event){AC_TAG_DOWN, ((const ac_down *)ac_envelope_payload(e))->who};
            downs++;
        }
        ac_envelope_free(w->p.cx, e);
    }
    return n;
}

static size_t pos(const event *ev, size_t n, uint32_t tag, const ac_addr *who)
{
    for (size_t i = 0; i < n; i++)
        if (ev[i].tag == tag && ac_addr_eq(&ev[i].who, who))
            return i;
    cr_assert(false, "an event that did not happen");
    return n;
}

/* Stopping a tree stops it last started first, each supervisor after
 * its children; both ac_supervisor_stop and ac_stop. */
static void check_tree_stop(int workers, bool by_ac_stop)
{
    world *w = open_world(workers);
    tree t;
    start_tree(w, &t, NULL);
    /* Give the leaves work, so that a stop that does not wait shows. */
    for (int k = 0; k < 500; k++) {
        const ac_addr *leaves[] = {&t.w0, &t.w10, &t.w20, &t.w21, &t.w2};
        for (size_t i = 0; i < 5; i++)
            cr_assert_eq(probe_cmd(w->p.cx, leaves[i], P_COUNT, NULL, 0), 0);
    }
    const ac_addr *sups[] = {&t.bot_a, &t.mid_a, &t.top_a};
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(ac_monitor(w->p.cx, w->p.me, sups[i], NULL), 0);
    if (by_ac_stop)
        cr_assert_eq(ac_stop(w->p.cx, &t.top_a), 0);
    else
        cr_assert_eq(ac_supervisor_stop(w->p.cx, &t.top_a), 0);
    event ev[16];
    size_t n = gather(w, ev, 16, 3);
    cr_assert_eq(n, 8);
    size_t s2 = pos(ev, n, R_STOPPED, &t.w2), s21 = pos(ev, n, R_STOPPED, &t.w21),
           s20 = pos(ev, n, R_STOPPED, &t.w20), s10 = pos(ev, n, R_STOPPED, &t.w10),
           s0 = pos(ev, n, R_STOPPED, &t.w0);
    cr_assert(s2 < s21 && s21 < s20 && s20 < s10 && s10 < s0, "last started first");
    size_t dbot = pos(ev, n, AC_TAG_DOWN, &t.bot_a), dmid = pos(ev, n, AC_TAG_DOWN, &t.mid_a),
           dtop = pos(ev, n, AC_TAG_DOWN, &t.top_a);
    cr_assert(dbot > s20 && dbot > s21, "bot after its children");
    cr_assert(dmid > dbot && dmid > s10, "mid after its children");
    cr_assert(dtop > dmid && dtop > s0 && dtop > s2, "top after everything");
    close_world(w);
}

Test(supervisors, stopping_a_tree_stops_it_in_order_each_supervisor_after_its_children,
     .timeout = 60)
{
    check_tree_stop(0, false);
    check_tree_stop(2, false);
}

Test(supervisors, ac_stop_on_a_supervisor_stops_its_children_first, .timeout = 60)
{
    check_tree_stop(0, true);
    check_tree_stop(2, true);
}

/* OTP: a supervisor terminates after its children. Its down comes when
 * they are gone and their names are free, so the same tree starts again
 * at once (the issue saw AC_EEXIST in 35 rounds of 50). */
Test(supervisors, a_supervisors_down_comes_after_its_children_and_their_names, .timeout = 120)
{
    world *w = open_world(2);
    for (int round = 0; round < 50; round++) {
        tree t;
        start_tree(w, &t, "tree");
        for (int k = 0; k < 50; k++)
            cr_assert_eq(probe_cmd(w->p.cx, &t.w0, P_COUNT, NULL, 0), 0);
        cr_assert_eq(ac_monitor(w->p.cx, w->p.me, &t.top_a, NULL), 0);
        if (round % 2 == 0) {
            cr_assert_eq(ac_stop(w->p.cx, &t.top_a), 0);
        } else {
            /* Giving up: top's intensity is 5, so fail w0 six times. */
            for (int f = 0; f < 6; f++) {
                int code = 1;
                if (probe_cmd(w->p.cx, &t.w0, P_FAIL, &code, sizeof code) != 0)
                    break;
                if (f < 5) {
                    ac_addr a;
                    expect_report(w->p.cx, w->p.ib, R_STARTED, &a, sizeof a);
                }
            }
        }
        ac_down d;
        expect_report(w->p.cx, w->p.ib, AC_TAG_DOWN, &d, sizeof d);
        cr_assert(ac_addr_eq(&d.who, &t.top_a));
        cr_assert_eq(d.reason, round % 2 == 0 ? AC_REASON_NORMAL : AC_REASON_FAILED);
        ac_addr a;
        for (size_t i = 0; i < 8; i++)
            cr_assert_eq(ac_whereis(w->p.cx, tree_names[i], &a), AC_ENOTFOUND,
                         "round %d: %s is free", round, tree_names[i]);
        const ac_addr *all[] = {&t.w0, &t.mid_a, &t.w2, &t.w10, &t.bot_a, &t.w20, &t.w21};
        for (size_t i = 0; i < 7; i++)
            cr_assert_eq(probe_cmd(w->p.cx, all[i], P_COUNT, NULL, 0), AC_ENOTFOUND,
                         "round %d: child %zu gone", round, i);
        /* Drain the probes' stop reports before the next round. */
        ac_envelope *e;
        while (ac_inbox_recv(w->p.cx, w->p.ib, R_STOPPED, 0, &e) == 0)
            ac_envelope_free(w->p.cx, e);
    }
    close_world(w);
}

/* OTP (supervisor_SUITE's one_for_all restart failures): when a child
 * fails to start during a one-for-all restart, the whole group is ended
 * and started again, and the failure counts as one more restart. */
static void one_for_all_retry(uint32_t max_restarts, const int *want, size_t nwant,
                              bool gives_up)
{
    rec_reset();
    world *w = open_world(0);
    ac_child_spec kids[3] = {rec_child(0), rec_child(1), rec_child(2)};
    ac_supervisor_spec spec = {.strategy = AC_ONE_FOR_ALL, .max_restarts = max_restarts,
                               .within_ms = 100000, .children = kids, .nchildren = 3};
    ac_addr addrs[3];
    cr_assert_eq(ac_supervisor_start(w->p.cx, &spec, &w->sup, addrs), 0);
    cr_assert_eq(ac_monitor(w->p.cx, w->p.me, &w->sup, NULL), 0);
    rec_fail_next(2, 1);
    cr_assert_eq(probe_cmd(w->p.cx, &addrs[0], REC_FAIL, NULL, 0), 0);
    ac_runtime_run(w->p.rt);
    int got[256];
    assert_log(got, rec_starts(got), want, nwant, "starts");
    if (gives_up) {
        ac_down d = expect_down_of(w, &w->sup);
        cr_assert_eq(d.reason, AC_REASON_FAILED);
    } else {
        cr_assert(no_report(w->p.cx, w->p.ib, AC_TAG_DOWN), "the supervisor lives");
        for (size_t i = 0; i < 3; i++)
            cr_assert_eq(probe_cmd(w->p.cx, &addrs[i], REC_NOP, NULL, 0), 0, "child %zu runs", i);
    }
    close_world(w);
}

Test(supervisors, one_for_all_starts_the_whole_group_again_when_a_restart_fails, .timeout = 30)
{
    one_for_all_retry(5, (int[]){0, 1, 2, 0, 1, 102, 0, 1, 2}, 9, false);
}

Test(supervisors, one_for_all_counts_a_failed_restart_against_the_intensity, .timeout = 30)
{
    one_for_all_retry(1, (int[]){0, 1, 2, 0, 1, 102}, 6, true);
}

/* Children already started when a later one fails to start are stopped,
 * stop hooks and all, last started first. */
Test(supervisors, a_failed_start_stops_the_started_children_last_first, .timeout = 30)
{
    rec_reset();
    world *w = open_world(0);
    ac_child_spec kids[4] = {rec_child(0), rec_child(1), rec_child(2), rec_child(3)};
    rec_fail_next(3, 1);
    ac_supervisor_spec spec = {.strategy = AC_ONE_FOR_ONE, .max_restarts = 5, .within_ms = 1000,
                               .children = kids, .nchildren = 4};
    ac_addr sup;
    cr_assert_eq(ac_supervisor_start(w->p.cx, &spec, &sup, NULL), AC_EFAILED);
    ac_runtime_run(w->p.rt);
    int got[256];
    assert_log(got, rec_stops(got), (int[]){2, 1, 0}, 3, "stops");
    close_world(w);
}

/* rest_for_one ends the later children last started first, each once the
 * one after it is gone; with child supervisors, which are stopped whole,
 * their workers' stop hooks show the order. */
static void group_order(uint32_t strategy, int workers, const int *want, size_t nwant)
{
    rec_reset();
    world *w = open_world(workers);
    ac_child_spec leaf[4] = {rec_child(0), rec_child(1), rec_child(2), rec_child(3)};
    ac_supervisor_spec subs[3];
    ac_child_spec kids[4] = {leaf[0]};
    for (int i = 0; i < 3; i++) {
        subs[i] = (ac_supervisor_spec){.strategy = AC_ONE_FOR_ONE, .max_restarts = 1,
                                       .within_ms = 1000, .children = &leaf[i + 1],
                                       .nchildren = 1};
        kids[i + 1] = sup_child(&subs[i]);
    }
    ac_supervisor_spec spec = {.strategy = strategy, .max_restarts = 5, .within_ms = 100000,
                               .children = kids, .nchildren = 4};
    ac_addr addrs[4];
    cr_assert_eq(ac_supervisor_start(w->p.cx, &spec, &w->sup, addrs), 0);
    cr_assert_eq(probe_cmd(w->p.cx, &addrs[0], REC_FAIL, NULL, 0), 0);
    /* Until the group is back: four first starts and four restarts, for
     * up to 30 s (a bound in time, not in tries: a loaded machine may run
     * the restarts late, and 10,000 yields can pass in milliseconds). */
    int got[256];
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (now = t0; rec_starts(got) < 8 && now.tv_sec - t0.tv_sec < 30;
         clock_gettime(CLOCK_MONOTONIC, &now)) {
        ac_runtime_run(w->p.rt);
        if (workers)
            sched_yield();
    }
    assert_log(got, rec_stops(got), want, nwant, "stops");
    close_world(w);
}

Test(supervisors, rest_for_one_ends_the_later_children_last_started_first, .timeout = 30)
{
    group_order(AC_REST_FOR_ONE, 0, (int[]){3, 2, 1}, 3);
    group_order(AC_REST_FOR_ONE, 2, (int[]){3, 2, 1}, 3);
}

Test(supervisors, one_for_all_ends_the_others_last_started_first, .timeout = 30)
{
    group_order(AC_ONE_FOR_ALL, 2, (int[]){3, 2, 1}, 3);
}

/* At shutdown, supervised children stop as ac_supervisor_stop stops
 * them, last started first, each after the one after it is gone. */
Test(supervisors, runtime_shutdown_stops_supervised_children_last_started_first,
     .timeout = 60)
{
    for (int workers = 0; workers <= 2; workers += 2) {
        rec_reset();
        ac_runtime *rt = make_runtime(workers);
        ac_ctx *cx = ac_runtime_ctx(rt);
        ac_child_spec inner[2] = {rec_child(10), rec_child(11)};
        ac_supervisor_spec mid = {.strategy = AC_ONE_FOR_ALL, .max_restarts = 1,
                                  .within_ms = 1000, .children = inner, .nchildren = 2};
        ac_child_spec kids[5] = {rec_child(0), rec_child(1), sup_child(&mid), rec_child(3),
                                 rec_child(4)};
        ac_supervisor_spec spec = {.strategy = AC_REST_FOR_ONE, .max_restarts = 5,
                                   .within_ms = 1000, .children = kids, .nchildren = 5};
        ac_addr sup;
        cr_assert_eq(ac_supervisor_start(cx, &spec, &sup, NULL), 0);
        cr_assert_eq(ac_runtime_destroy(rt), 0);
        int got[256];
        assert_log(got, rec_stops(got), (int[]){4, 3, 11, 10, 1, 0}, 6, "stops");
    }
}

Test(supervisors, a_bad_tree_is_refused, .timeout = 30)
{
    world *w = open_world(0);
    ac_supervisor_spec inner = {.strategy = AC_ONE_FOR_ONE, .max_restarts = 1, .within_ms = 10,
                                .children = w->specs, .nchildren = 1};
    ac_child_spec kid = sup_child(&inner);
    ac_supervisor_spec spec = {.strategy = AC_ONE_FOR_ONE, .max_restarts = 1, .within_ms = 10,
                               .children = &kid, .nchildren = 1};
    ac_addr sup;
    kid.type = &probe_type;  /* a supervisor and a type */
    cr_assert_eq(ac_supervisor_start(w->p.cx, &spec, &sup, NULL), AC_EINVAL);
    kid.type = NULL;
    inner.name = "x";  /* a child supervisor is named by its child spec */
    cr_assert_eq(ac_supervisor_start(w->p.cx, &spec, &sup, NULL), AC_EINVAL);
    inner.name = NULL;
    inner.within_ms = 0;  /* a bad spec deep down */
    cr_assert_eq(ac_supervisor_start(w->p.cx, &spec, &sup, NULL), AC_EINVAL);
    /* A tree that contains itself is deeper than AC_MAX_DEPTH. */
    inner.within_ms = 10;
    inner.children = &kid;
    cr_assert_eq(ac_supervisor_start(w->p.cx, &spec, &sup, NULL), AC_EINVAL);
    cr_assert(no_report(w->p.cx, w->p.ib, R_STARTED), "nothing started");
    close_world(w);
}
