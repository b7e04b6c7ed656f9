/*
 * test_failure.c — lifecycle and failure as users of Erlang or CAF expect
 * them: hooks, self, stopping, failing, and what is dropped and counted.
 */
#include "fixtures.h"
#include "probe.h"

static ac_stats stats_of(probe_world *w)
{
    ac_stats st;
    ac_runtime_run(w->rt);
    ac_runtime_stats(w->rt, &st);
    return st;
}

Test(failure, self_is_the_running_actor_and_null_outside_one, .timeout = 30)
{
    probe_world w = probe_world_open(0);
    ac_addr p = spawn_probe(w.cx, w.me);
    ac_addr seen;
    expect_report(w.cx, w.ib, R_STARTED, &seen, sizeof seen);
    cr_assert(ac_addr_eq(&seen, &p));
    cr_assert_null(ac_self(w.cx));
    probe_world_close(&w);
}

Test(failure, the_stop_hook_runs_on_a_graceful_stop_and_may_send, .timeout = 30)
{
    probe_world w = probe_world_open(2);
    ac_addr p = spawn_probe(w.cx, w.me);
    ac_stop(w.cx, &p);
    probe_stopped s;
    expect_report(w.cx, w.ib, R_STOPPED, &s, sizeof s);
    cr_assert(ac_addr_eq(&s.who, &p));
    probe_world_close(&w);
}

Test(failure, an_external_stop_waits_behind_the_queued_messages, .timeout = 30)
{
    probe_world w = probe_world_open(0);
    ac_addr p = spawn_probe(w.cx, w.me);
    for (int i = 0; i < 25; i++)
        probe_cmd(w.cx, &p, P_COUNT, NULL, 0);
    ac_stop(w.cx, &p);
    probe_cmd(w.cx, &p, P_COUNT, NULL, 0);  /* after the stop: dropped */
    probe_stopped s;
    expect_report(w.cx, w.ib, R_STOPPED, &s, sizeof s);
    cr_assert_eq(s.count, 25);
    ac_stats st = stats_of(&w);
    cr_assert_eq(st.dead_letters, 1);
    probe_world_close(&w);
}

Test(failure, stopping_itself_drops_and_counts_what_is_left, .timeout = 30)
{
    probe_world w = probe_world_open(0);
    ac_addr p = spawn_probe(w.cx, w.me);
    probe_cmd(w.cx, &p, P_COUNT, NULL, 0);
    probe_cmd(w.cx, &p, P_STOP_SELF, NULL, 0);
    for (int i = 0; i < 7; i++)
        probe_cmd(w.cx, &p, P_COUNT, NULL, 0);
    probe_stopped s;
    expect_report(w.cx, w.ib, R_STOPPED, &s, sizeof s);
    cr_assert_eq(s.count, 1);
    ac_stats st = stats_of(&w);
    cr_assert_eq(st.dead_letters, 7);
    cr_assert_eq(st.stopped, 1);
    probe_world_close(&w);
}

Test(failure, a_failed_actors_mailbox_is_dropped_and_counted, .timeout = 30)
{
    probe_world w = probe_world_open(0);
    ac_addr p = spawn_probe(w.cx, w.me);
    int code = 3;
    probe_cmd(w.cx, &p, P_FAIL, &code, sizeof code);
    for (int i = 0; i < 4; i++)
        probe_cmd(w.cx, &p, P_COUNT, NULL, 0);
    ac_stats st = stats_of(&w);
    cr_assert_eq(st.failed, 1);
    cr_assert_eq(st.dead_letters, 4);
    cr_assert(no_report(w.cx, w.ib, R_STOPPED));  /* no stop hook on failure */
    probe_world_close(&w);
}

Test(failure, a_failure_leaves_every_other_actor_untouched, .timeout = 30)
{
    probe_world w = probe_world_open(2);
    enum { N = 50 };
    ac_addr a[N];
    for (int i = 0; i < N; i++)
        a[i] = spawn_probe(w.cx, w.me);
    int code = 11;
    probe_cmd(w.cx, &a[0], P_FAIL, &code, sizeof code);
    for (int i = 1; i < N; i++)
        for (int k = 0; k < 10; k++)
            cr_assert_eq(probe_cmd(w.cx, &a[i], P_COUNT, NULL, 0), 0);
    for (int i = 1; i < N; i++) {
        cr_assert_eq(probe_cmd(w.cx, &a[i], P_GET_COUNT, NULL, 0), 0);
        probe_stopped s;
        expect_report(w.cx, w.ib, R_COUNT, &s, sizeof s);
        cr_assert_eq(s.count, 10);
    }
    ac_stats st = stats_of(&w);
    cr_assert_eq(st.failed, 1);
    probe_world_close(&w);
}

Test(failure, a_failing_start_hook_fails_the_spawn_and_counts, .timeout = 30)
{
    probe_world w = probe_world_open(0);
    probe_args args = {*w.me, 55, false};
    ac_addr a;
    memset(&a, 0xAB, sizeof a);
    cr_assert_eq(ac_spawn(w.cx, &probe_type, &args, &a), 55);
    ac_stats st = stats_of(&w);
    cr_assert_eq(st.failed, 1);
    cr_assert_eq(st.spawned, 1);
    probe_world_close(&w);
}

Test(failure, ac_fail_with_code_zero_still_fails, .timeout = 30)
{
    probe_world w = probe_world_open(0);
    ac_addr p = spawn_probe(w.cx, w.me);
    cr_assert_eq(ac_monitor(w.cx, w.me, &p, NULL), 0);
    int zero = 0;
    probe_cmd(w.cx, &p, P_FAIL_VIA_API, &zero, sizeof zero);
    ac_down d;
    expect_report(w.cx, w.ib, AC_TAG_DOWN, &d, sizeof d);
    cr_assert_eq(d.reason, AC_REASON_FAILED);
    cr_assert_eq(d.code, AC_EFAILED);
    probe_world_close(&w);
}

Test(failure, calls_that_need_a_handler_are_refused_outside_one, .timeout = 30)
{
    probe_world w = probe_world_open(0);
    ac_addr p = spawn_probe(w.cx, w.me);
    cr_assert_eq(ac_fail(w.cx, 1), AC_ESTATE);
    cr_assert_eq(ac_stop_self(w.cx), AC_ESTATE);
    cr_assert_eq(ac_trap_exits(w.cx, true), AC_ESTATE);
    cr_assert_eq(ac_link(w.cx, &p), AC_ESTATE);
    probe_world_close(&w);
}

Test(failure, sends_to_the_dead_return_enotfound_and_count, .timeout = 30)
{
    probe_world w = probe_world_open(2);
    ac_addr p = spawn_probe(w.cx, w.me);
    ac_stop(w.cx, &p);
    ac_runtime_run(w.rt);
    for (int i = 0; i < 9; i++)
        cr_assert_eq(probe_cmd(w.cx, &p, P_COUNT, NULL, 0), AC_ENOTFOUND);
    cr_assert_eq(ac_stop(w.cx, &p), AC_ENOTFOUND);
    cr_assert_eq(ac_kill(w.cx, &p), AC_ENOTFOUND);
    ac_stats st = stats_of(&w);
    cr_assert_eq(st.dead_letters, 9);
    probe_world_close(&w);
}

Test(failure, system_tags_cannot_be_sent_by_users, .timeout = 30)
{
    probe_world w = probe_world_open(0);
    ac_addr p = spawn_probe(w.cx, w.me);
    ac_envelope *e = ac_envelope_new(w.cx, AC_TAG_DOWN, sizeof(ac_down));
    cr_assert_eq(ac_send(w.cx, &p, e), AC_EINVAL);
    probe_world_close(&w);
}
