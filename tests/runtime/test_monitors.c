/*
 * test_monitors.c — monitors: one `down` per monitor, with the reason;
 * references only their watcher can take back; no down after demonitor.
 */
#include "fixtures.h"
#include "probe.h"

#include <inttypes.h>

/* The inbox monitors `target`; returns the reference. */
static uint64_t watch(probe_world *w, const ac_addr *target)
{
    uint64_t ref = 0;
    cr_assert_eq(ac_monitor(w->cx, w->me, target, &ref), 0);
    cr_assert_neq(ref, 0);
    return ref;
}

static ac_down expect_down(probe_world *w)
{
    ac_down d;
    expect_report(w->cx, w->ib, AC_TAG_DOWN, &d, sizeof d);
    return d;
}

static void check_down_on(int workers, uint32_t how, int code, int reason)
{
    probe_world w = probe_world_open(workers);
    ac_addr p = spawn_probe(w.cx, w.me);
    uint64_t ref = watch(&w, &p);
    if (how == P_FAIL || how == P_FAIL_VIA_API)
        cr_assert_eq(probe_cmd(w.cx, &p, how, &code, sizeof code), 0);
    else if (how == P_STOP_SELF)
        cr_assert_eq(probe_cmd(w.cx, &p, how, NULL, 0), 0);
    else if (how == 1000)
        cr_assert_eq(ac_stop(w.cx, &p), 0);
    else
        cr_assert_eq(ac_kill(w.cx, &p), 0);
    ac_down d = expect_down(&w);
    cr_assert(ac_addr_eq(&d.who, &p));
    cr_assert_eq(d.ref, ref);
    cr_assert_eq(d.reason, reason);
    cr_assert_eq(d.code, code);
    probe_world_close(&w);
}

Test(monitors, stop_gives_down_with_reason_normal, .timeout = 30)
{
    check_down_on(0, 1000, 0, AC_REASON_NORMAL);
}

Test(monitors, stop_self_gives_down_with_reason_normal, .timeout = 30)
{
    check_down_on(0, P_STOP_SELF, 0, AC_REASON_NORMAL);
}

Test(monitors, failing_handler_gives_down_with_its_code, .timeout = 30)
{
    check_down_on(0, P_FAIL, 17, AC_REASON_FAILED);
}

Test(monitors, ac_fail_gives_down_with_its_code, .timeout = 30)
{
    check_down_on(0, P_FAIL_VIA_API, 23, AC_REASON_FAILED);
}

Test(monitors, kill_gives_down_with_reason_killed, .timeout = 30)
{
    check_down_on(0, 2000, 0, AC_REASON_KILLED);
}

Test(monitors, down_arrives_with_workers, .timeout = 30)
{
    check_down_on(2, P_FAIL, 5, AC_REASON_FAILED);
}

Test(monitors, two_monitors_give_two_downs, .timeout = 30)
{
    probe_world w = probe_world_open(0);
    ac_addr p = spawn_probe(w.cx, w.me);
    uint64_t r1 = watch(&w, &p), r2 = watch(&w, &p);
    cr_assert_neq(r1, r2);
    ac_stop(w.cx, &p);
    ac_down a = expect_down(&w), b = expect_down(&w);
    cr_assert((a.ref == r1 && b.ref == r2) || (a.ref == r2 && b.ref == r1));
    cr_assert(no_report(w.cx, w.ib, AC_TAG_DOWN));
    probe_world_close(&w);
}

Test(monitors, demonitor_means_no_down, .timeout = 30)
{
    probe_world w = probe_world_open(0);
    ac_addr p = spawn_probe(w.cx, w.me);
    uint64_t r1 = watch(&w, &p), r2 = watch(&w, &p);
    cr_assert_eq(ac_demonitor(w.cx, r1), 0);
    ac_stop(w.cx, &p);
    ac_down d = expect_down(&w);
    cr_assert_eq(d.ref, r2);
    cr_assert(no_report(w.cx, w.ib, AC_TAG_DOWN));
    probe_world_close(&w);
}

Test(monitors, demonitor_after_the_down_is_not_found, .timeout = 30)
{
    probe_world w = probe_world_open(0);
    ac_addr p = spawn_probe(w.cx, w.me);
    uint64_t ref = watch(&w, &p);
    ac_stop(w.cx, &p);
    expect_down(&w);
    cr_assert_eq(ac_demonitor(w.cx, ref), AC_ENOTFOUND);
    cr_assert_eq(ac_demonitor(w.cx, 987654321), AC_ENOTFOUND);
    probe_world_close(&w);
}

Test(monitors, monitoring_a_dead_actor_gives_noproc_at_once, .timeout = 30)
{
    probe_world w = probe_world_open(0);
    ac_addr p = spawn_probe(w.cx, w.me);
    ac_stop(w.cx, &p);
    ac_runtime_run(w.rt);
    uint64_t ref = watch(&w, &p);
    ac_down d = expect_down(&w);
    cr_assert_eq(d.reason, AC_REASON_NOPROC);
    cr_assert_eq(d.ref, ref);
    cr_assert(ac_addr_eq(&d.who, &p));
    probe_world_close(&w);
}

Test(monitors, a_watcher_that_is_already_dead_gets_nothing, .timeout = 30)
{
    probe_world w = probe_world_open(0);
    ac_addr watcher = spawn_probe(w.cx, w.me);
    ac_addr target = spawn_probe(w.cx, w.me);
    ac_stop(w.cx, &watcher);
    ac_runtime_run(w.rt);
    cr_assert_eq(ac_monitor(w.cx, &watcher, &target, NULL), AC_ENOTFOUND);
    ac_stats before, after;
    ac_runtime_stats(w.rt, &before);
    ac_stop(w.cx, &target);
    ac_runtime_run(w.rt);
    ac_runtime_stats(w.rt, &after);
    cr_assert_eq(after.dead_letters, before.dead_letters);
    probe_world_close(&w);
}

Test(monitors, an_actor_monitors_and_hears_through_its_hook, .timeout = 30)
{
    probe_world w = probe_world_open(0);
    ac_addr watcher = spawn_probe(w.cx, w.me);
    ac_addr target = spawn_probe(w.cx, w.me);
    cr_assert_eq(probe_cmd(w.cx, &watcher, P_MONITOR, &target, sizeof target), 0);
    probe_rc rc;
    expect_report(w.cx, w.ib, R_RC, &rc, sizeof rc);
    cr_assert_eq(rc.rc, 0);
    int code = 9;
    probe_cmd(w.cx, &target, P_FAIL, &code, sizeof code);
    ac_down d;
    expect_report(w.cx, w.ib, R_DOWN, &d, sizeof d);
    cr_assert(ac_addr_eq(&d.who, &target));
    cr_assert_eq(d.ref, rc.ref);
    cr_assert_eq(d.reason, AC_REASON_FAILED);
    cr_assert_eq(d.code, 9);
    probe_world_close(&w);
}

Test(monitors, a_down_without_a_hook_is_counted_and_harmless, .timeout = 30)
{
    probe_world w = probe_world_open(0);
    probe_args args = {*w.me, 0, true};
    ac_addr watcher, target = spawn_probe(w.cx, w.me);
    cr_assert_eq(ac_spawn(w.cx, &probe_type, &args, &watcher), 0);
    cr_assert_eq(ac_monitor(w.cx, &watcher, &target, NULL), 0);
    ac_stop(w.cx, &target);
    ac_runtime_run(w.rt);
    ac_stats st;
    ac_runtime_stats(w.rt, &st);
    cr_assert_eq(st.unhandled, 1);
    cr_assert_eq(st.failed, 0);
    /* The watcher lives on and still handles messages. */
    cr_assert_eq(probe_cmd(w.cx, &watcher, P_COUNT, NULL, 0), 0);
    probe_world_close(&w);
}

Test(monitors, a_dead_watchers_monitors_are_dropped, .timeout = 30)
{
    probe_world w = probe_world_open(0);
    ac_addr watcher = spawn_probe(w.cx, w.me);
    ac_addr target = spawn_probe(w.cx, w.me);
    probe_cmd(w.cx, &watcher, P_MONITOR, &target, sizeof target);
    expect_report(w.cx, w.ib, R_RC, NULL, 0);
    ac_stop(w.cx, &watcher);
    ac_runtime_run(w.rt);
    ac_stats before, after;
    ac_runtime_stats(w.rt, &before);
    ac_stop(w.cx, &target);
    ac_runtime_run(w.rt);
    ac_runtime_stats(w.rt, &after);
    /* No down was sent to the dead watcher (it would be a dropped system
     * message, invisible, so look at the table instead: nothing left). */
    cr_assert_eq(after.unhandled, before.unhandled);
    cr_assert(no_report(w.cx, w.ib, R_DOWN));
    probe_world_close(&w);
}

Test(monitors, a_down_comes_after_the_messages_its_actor_handled, .timeout = 30)
{
    probe_world w = probe_world_open(0);
    ac_addr watcher = spawn_probe(w.cx, w.me);
    ac_addr target = spawn_probe(w.cx, w.me);
    probe_cmd(w.cx, &watcher, P_MONITOR, &target, sizeof target);
    expect_report(w.cx, w.ib, R_RC, NULL, 0);
    for (int i = 0; i < 10; i++)
        probe_cmd(w.cx, &target, P_COUNT, NULL, 0);
    ac_stop(w.cx, &target);
    probe_stopped s;
    expect_report(w.cx, w.ib, R_STOPPED, &s, sizeof s);
    cr_assert_eq(s.count, 10);
    expect_report(w.cx, w.ib, R_DOWN, NULL, 0);
    probe_world_close(&w);
}

Test(monitors, every_monitor_of_many_dying_actors_fires_once, .timeout = 60)
{
    enum { N = 2000 };
    probe_world w = probe_world_open(2);
    static ac_addr actors[N];
    for (int i = 0; i < N; i++) {
        actors[i] = spawn_probe(w.cx, w.me);
        watch(&w, &actors[i]);
    }
    /* Half stop, half fail, while the monitors are being taken. */
    for (int i = 0; i < N; i++) {
        int code = 3;
        if (i % 2)
            ac_stop(w.cx, &actors[i]);
        else
            probe_cmd(w.cx, &actors[i], P_FAIL, &code, sizeof code);
    }
    int normal = 0, failed = 0;
    for (int i = 0; i < N; i++) {
        ac_down d = expect_down(&w);
        normal += d.reason == AC_REASON_NORMAL;
        failed += d.reason == AC_REASON_FAILED;
    }
    cr_assert_eq(normal, N / 2);
    cr_assert_eq(failed, N / 2);
    cr_assert(no_report(w.cx, w.ib, AC_TAG_DOWN));
    probe_world_close(&w);
}

Test(monitors, monitoring_races_with_deaths_without_losing_a_down, .timeout = 60)
{
    enum { N = 2000 };
    probe_world w = probe_world_open(2);
    int code = 1;
    for (int i = 0; i < N; i++) {
        ac_addr p = spawn_probe(w.cx, w.me);
        /* The failure races with the monitor: either it fires, or the
         * monitor finds the actor gone (noproc). One down either way. */
        probe_cmd(w.cx, &p, P_FAIL, &code, sizeof code);
        watch(&w, &p);
    }
    for (int i = 0; i < N; i++) {
        ac_down d = expect_down(&w);
        cr_assert(d.reason == AC_REASON_FAILED || d.reason == AC_REASON_NOPROC);
    }
    cr_assert(no_report(w.cx, w.ib, AC_TAG_DOWN));
    probe_world_close(&w);
}

/* ---- references are capabilities of their watcher -------------------------- */

/* The probe `who` monitors `target`: the reference. */
static uint64_t probe_watch(probe_world *w, const ac_addr *who, const ac_addr *target)
{
    cr_assert_eq(probe_cmd(w->cx, who, P_MONITOR, target, sizeof *target), 0);
    probe_rc rc;
    expect_report(w->cx, w->ib, R_RC, &rc, sizeof rc);
    cr_assert_eq(rc.rc, 0);
    return rc.ref;
}

/* The probe `who` demonitors `ref`: what ac_demonitor said. */
static int probe_demonitor(probe_world *w, const ac_addr *who, uint64_t ref)
{
    cr_assert_eq(probe_cmd(w->cx, who, P_DEMONITOR, &ref, sizeof ref), 0);
    probe_rc rc;
    expect_report(w->cx, w->ib, R_RC, &rc, sizeof rc);
    return rc.rc;
}

Test(monitors, references_are_neither_small_nor_sequential, .timeout = 30)
{
    enum { N = 256 };
    probe_world w = probe_world_open(0);
    ac_addr p = spawn_probe(w.cx, w.me);
    uint64_t refs[N];
    for (int i = 0; i < N; i++) {
        refs[i] = watch(&w, &p);
        /* 2^-40 for a random 64-bit value; certain for a counter. */
        cr_assert_gt(refs[i], (uint64_t)1 << 24, "ref %d is %" PRIu64, i, refs[i]);
        for (int j = 0; j < i; j++) {
            cr_assert_neq(refs[i], refs[j], "references are unique");
            cr_assert_neq(refs[i] - refs[j], 1);
            cr_assert_neq(refs[j] - refs[i], 1);
        }
    }
    probe_world_close(&w);
}

Test(monitors, only_the_watcher_takes_its_monitor_back, .timeout = 30)
{
    probe_world w = probe_world_open(0);
    ac_addr watcher = spawn_probe(w.cx, w.me), target = spawn_probe(w.cx, w.me);
    ac_addr bystander = spawn_probe(w.cx, w.me);
    uint64_t ref = probe_watch(&w, &watcher, &target);
    /* Knowing the reference is not enough: neither another actor nor a
     * thread that is not the watcher may take it back, and both hear what
     * they would for a reference that never was. */
    cr_assert_eq(probe_demonitor(&w, &bystander, ref), AC_ENOTFOUND);
    cr_assert_eq(ac_demonitor(w.cx, ref), AC_ENOTFOUND);
    cr_assert_eq(ac_demonitor(w.cx, 0), AC_ENOTFOUND);
    cr_assert_eq(probe_demonitor(&w, &watcher, 0), AC_ENOTFOUND);
    cr_assert_eq(probe_demonitor(&w, &watcher, ref + 1), AC_ENOTFOUND);
    for (uint64_t guess = 1; guess <= 64; guess++) {
        cr_assert_eq(ac_demonitor(w.cx, guess), AC_ENOTFOUND);
        cr_assert_eq(probe_demonitor(&w, &bystander, guess), AC_ENOTFOUND);
    }
    int code = 3;
    cr_assert_eq(probe_cmd(w.cx, &target, P_FAIL, &code, sizeof code), 0);
    ac_down d;
    expect_report(w.cx, w.ib, R_DOWN, &d, sizeof d);
    cr_assert_eq(d.ref, ref, "the monitor survived the attempts");
    cr_assert_eq(d.code, 3);
    /* Its own watcher can no longer: the down was taken. */
    cr_assert_eq(probe_demonitor(&w, &watcher, ref), AC_ENOTFOUND);
    probe_world_close(&w);
}

Test(monitors, a_supervisor_still_restarts_after_a_bystander_tried_its_references,
     .timeout = 60)
{
    probe_world w = probe_world_open(0);
    probe_args args = {*w.me, 0, false};
    ac_child_spec kid = {.type = &probe_type, .args = &args, .args_size = sizeof args,
                         .restart = AC_RESTART_PERMANENT};
    ac_supervisor_spec spec = {.strategy = AC_ONE_FOR_ONE, .max_restarts = 5, .within_ms = 1000,
                               .children = &kid, .nchildren = 1};
    ac_addr sup, child;
    cr_assert_eq(ac_supervisor_start(w.cx, &spec, &sup, &child), 0);
    expect_report(w.cx, w.ib, R_STARTED, NULL, 0);
    /* The bystander tried 1..64 and removed the supervisor's
     * monitor; here it also knows a reference it was given. */
    ac_addr bystander = spawn_probe(w.cx, w.me);
    expect_report(w.cx, w.ib, R_STARTED, NULL, 0);
    uint64_t mine = probe_watch(&w, &bystander, &child);
    for (uint64_t k = 0; k <= 4096; k++) {
        cr_assert_eq(ac_demonitor(w.cx, k), AC_ENOTFOUND);
        cr_assert_eq(ac_demonitor(w.cx, mine + k), AC_ENOTFOUND);
        cr_assert_eq(ac_demonitor(w.cx, mine - k), AC_ENOTFOUND);
    }
    for (uint64_t k = 0; k <= 64; k++)
        cr_assert_eq(probe_demonitor(&w, &bystander, k), AC_ENOTFOUND);
    for (int round = 0; round < 3; round++) {
        int code = 10 + round;
        cr_assert_eq(probe_cmd(w.cx, &child, P_FAIL, &code, sizeof code), 0);
        ac_addr again;
        expect_report(w.cx, w.ib, R_STARTED, &again, sizeof again);
        cr_assert(ac_addr_eq(&again, &child), "restarted at its address");
    }
    probe_world_close(&w);
}

/* ---- after ac_demonitor returns, no down of that monitor arrives ----------- */

Test(monitors, demonitor_drops_a_down_already_queued, .timeout = 30)
{
    probe_world w = probe_world_open(0);
    ac_addr p = spawn_probe(w.cx, w.me);
    uint64_t ref = watch(&w, &p);
    ac_stop(w.cx, &p);
    ac_runtime_run(w.rt);  /* the down is in the inbox now */
    /* Its reports taken, nothing sent is left unaccounted for. */
    expect_report(w.cx, w.ib, R_STARTED, NULL, 0);
    expect_report(w.cx, w.ib, R_STOPPED, NULL, 0);
    ac_stats before, after;
    ac_runtime_stats(w.rt, &before);
    cr_assert_eq(ac_demonitor(w.cx, ref), 0, "taken back, with the down queued");
    cr_assert(no_report(w.cx, w.ib, AC_TAG_DOWN));
    cr_assert_eq(ac_demonitor(w.cx, ref), AC_ENOTFOUND);
    ac_runtime_stats(w.rt, &after);
    /* Counted where a down reaching no hook is. */
    cr_assert_eq(after.unhandled - before.unhandled, 1);
    cr_assert_eq(after.system_messages - before.system_messages, 1);
    cr_assert_eq(after.sends + after.refused,
                 after.messages + after.dead_letters + after.mailbox_drops +
                     after.node_forwarded);
    probe_world_close(&w);
}

Test(monitors, demonitor_in_a_handler_drops_the_down_queued_behind_it, .timeout = 30)
{
    probe_world w = probe_world_open(0);
    ac_addr watcher = spawn_probe(w.cx, w.me), target = spawn_probe(w.cx, w.me);
    uint64_t ref = probe_watch(&w, &watcher, &target);
    /* The target runs first and dies; its down queues behind the
     * demonitor already in the watcher's mailbox. */
    int code = 5;
    cr_assert_eq(probe_cmd(w.cx, &target, P_FAIL, &code, sizeof code), 0);
    cr_assert_eq(probe_cmd(w.cx, &watcher, P_DEMONITOR, &ref, sizeof ref), 0);
    cr_assert_gt(ac_runtime_step(w.rt), 0);
    probe_rc rc;
    expect_report(w.cx, w.ib, R_RC, &rc, sizeof rc);
    cr_assert_eq(rc.rc, 0);
    cr_assert(no_report(w.cx, w.ib, R_DOWN));
    probe_world_close(&w);
}

/* Rounds of a target that fails while its watcher takes the monitor back;
 * the issue saw a down after ac_demonitor in 47 of 100. */
enum { RACE_ROUNDS = 400 };

/* A wait that changes with each round, so that what follows falls
 * before, during and after what another worker is doing. */
static void spin(int round)
{
    for (volatile int i = 0; i < (round % 61) * 1000; i++)
        continue;
}

Test(monitors, a_down_never_follows_demonitor_of_an_inbox, .timeout = 120)
{
    probe_world w = probe_world_open(2);
    for (int round = 0; round < RACE_ROUNDS; round++) {
        ac_addr p = spawn_probe(w.cx, w.me);
        uint64_t ref = watch(&w, &p);
        int code = 1;
        cr_assert_eq(probe_cmd(w.cx, &p, P_FAIL, &code, sizeof code), 0);
        spin(round);
        /* Whether or not the down is queued already, it was not taken. */
        cr_assert_eq(ac_demonitor(w.cx, ref), 0, "round %d", round);
        /* A second monitor's down comes once the target is gone. */
        uint64_t after = watch(&w, &p);
        for (;;) {
            ac_down d = expect_down(&w);
            cr_assert_neq(d.ref, ref, "round %d: a down after demonitor", round);
            if (d.ref == after)
                break;
        }
        cr_assert(no_report(w.cx, w.ib, AC_TAG_DOWN), "round %d", round);
    }
    ac_stats st;
    ac_runtime_stats(w.rt, &st);
    cr_log_info("of %d downs, %" PRIu64 " were queued before the demonitor and dropped",
                RACE_ROUNDS, st.unhandled);
    probe_world_close(&w);
}

Test(monitors, a_down_never_follows_demonitor_in_a_handler, .timeout = 120)
{
    probe_world w = probe_world_open(2);
    int before_it = 0;
    for (int round = 0; round < RACE_ROUNDS; round++) {
        ac_addr watcher = spawn_probe(w.cx, w.me), target = spawn_probe(w.cx, w.me);
        uint64_t ref = probe_watch(&w, &watcher, &target);
        int code = 1;
        cr_assert_eq(probe_cmd(w.cx, &target, P_FAIL, &code, sizeof code), 0);
        spin(round);
        cr_assert_eq(probe_cmd(w.cx, &watcher, P_DEMONITOR, &ref, sizeof ref), 0);
        /* The watcher's reports come in the order it made them: a down it
         * took before the demonitor, then the demonitor's answer, which is
         * AC_ENOTFOUND exactly then; nothing after it. */
        union { probe_rc rc; ac_down d; } r;
        uint32_t tag = next_report(w.cx, w.ib, &r, sizeof r);
        if (tag == R_DOWN) {
            cr_assert_eq(r.d.ref, ref);
            before_it++;
            cr_assert_eq(next_report(w.cx, w.ib, &r, sizeof r), R_RC, "round %d", round);
            cr_assert_eq(r.rc.rc, AC_ENOTFOUND, "round %d", round);
        } else {
            cr_assert_eq(tag, R_RC, "round %d", round);
            cr_assert_eq(r.rc.rc, 0, "round %d", round);
        }
        cr_assert(no_report(w.cx, w.ib, R_DOWN), "round %d: a down after demonitor", round);
        ac_stop(w.cx, &watcher);
    }
    ac_stats st;
    ac_runtime_stats(w.rt, &st);
    /* Those withdrawn (queued after the demonitor was): the race. */
    cr_log_info("of %d downs, %d came before the demonitor, %" PRIu64 " were dropped after it",
                RACE_ROUNDS, before_it, st.unhandled);
    probe_world_close(&w);
}
