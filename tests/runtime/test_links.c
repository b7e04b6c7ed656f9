/*
 * test_links.c — links: an abnormal death ends the linked actor, unless it
 * traps exits and gets an `exit` message instead.
 */
#include "fixtures.h"
#include "probe.h"

/* probe.h's world, and short names for its parts. */
static probe_world world;
static ac_runtime *rt;
static ac_ctx *cx;
static ac_inbox *ib;
static const ac_addr *me;

static void setup_with(int workers)
{
    world = probe_world_open(workers);
    rt = world.rt;
    cx = world.cx;
    ib = world.ib;
    me = world.me;
}

static void teardown(void)
{
    probe_world_close(&world);
}

/* Each test gets a fresh runtime (deterministic unless it says otherwise)
 * and an inbox the probes report to. */
#define LINK_TEST(name, workers)                                              \
    static void name##_body(void);                                            \
    Test(links, name, .timeout = 60)                                          \
    {                                                                         \
        setup_with(workers);                                                  \
        name##_body();                                                        \
        teardown();                                                           \
    }                                                                         \
    static void name##_body(void)

static void link_probes(const ac_addr *a, const ac_addr *b)
{
    cr_assert_eq(probe_cmd(cx, a, P_LINK, b, sizeof *b), 0);
    probe_rc rc;
    expect_report(cx, ib, R_RC, &rc, sizeof rc);
    cr_assert_eq(rc.rc, 0);
}

static void fail(const ac_addr *a, int code)
{
    cr_assert_eq(probe_cmd(cx, a, P_FAIL, &code, sizeof code), 0);
}

static ac_down down_of(const ac_addr *who)
{
    ac_down d;
    expect_report(cx, ib, AC_TAG_DOWN, &d, sizeof d);
    cr_assert(ac_addr_eq(&d.who, who));
    return d;
}

LINK_TEST(a_failure_kills_the_linked_actor, 0)
{
    ac_addr a = spawn_probe(cx, me), b = spawn_probe(cx, me);
    link_probes(&a, &b);
    cr_assert_eq(ac_monitor(cx, me, &b, NULL), 0);
    fail(&a, 12);
    ac_down d = down_of(&b);
    cr_assert_eq(d.reason, AC_REASON_KILLED);
    cr_assert_eq(d.code, 12);
    ac_stats st;
    ac_runtime_run(rt);
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.failed, 1);
    cr_assert_eq(st.killed, 1);
}

LINK_TEST(links_work_both_ways, 0)
{
    ac_addr a = spawn_probe(cx, me), b = spawn_probe(cx, me);
    link_probes(&a, &b);
    cr_assert_eq(ac_monitor(cx, me, &a, NULL), 0);
    fail(&b, 4);
    cr_assert_eq(down_of(&a).reason, AC_REASON_KILLED);
}

LINK_TEST(a_trapping_actor_gets_an_exit_message_instead, 0)
{
    ac_addr a = spawn_probe(cx, me), b = spawn_probe(cx, me);
    link_probes(&a, &b);
    cr_assert_eq(probe_cmd(cx, &b, P_TRAP, NULL, 0), 0);
    fail(&a, 33);
    ac_exit x;
    expect_report(cx, ib, R_EXIT, &x, sizeof x);
    cr_assert(ac_addr_eq(&x.who, &a));
    cr_assert_eq(x.reason, AC_REASON_FAILED);
    cr_assert_eq(x.code, 33);
    /* It lives on. */
    cr_assert_eq(probe_cmd(cx, &b, P_COUNT, NULL, 0), 0);
    ac_runtime_run(rt);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.killed, 0);
}

LINK_TEST(a_normal_stop_does_not_kill_the_linked_actor, 0)
{
    ac_addr a = spawn_probe(cx, me), b = spawn_probe(cx, me);
    link_probes(&a, &b);
    ac_stop(cx, &a);
    ac_runtime_run(rt);
    cr_assert_eq(probe_cmd(cx, &b, P_COUNT, NULL, 0), 0);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.killed, 0);
    cr_assert_eq(st.stopped, 1);
}

LINK_TEST(a_trapping_actor_hears_of_normal_stops_too, 0)
{
    ac_addr a = spawn_probe(cx, me), b = spawn_probe(cx, me);
    link_probes(&a, &b);
    probe_cmd(cx, &b, P_TRAP, NULL, 0);
    ac_stop(cx, &a);
    ac_exit x;
    expect_report(cx, ib, R_EXIT, &x, sizeof x);
    cr_assert_eq(x.reason, AC_REASON_NORMAL);
}

LINK_TEST(unlink_stops_the_propagation, 0)
{
    ac_addr a = spawn_probe(cx, me), b = spawn_probe(cx, me);
    link_probes(&a, &b);
    cr_assert_eq(probe_cmd(cx, &a, P_UNLINK, &b, sizeof b), 0);
    probe_rc rc;
    expect_report(cx, ib, R_RC, &rc, sizeof rc);
    cr_assert_eq(rc.rc, 0);
    fail(&a, 1);
    ac_runtime_run(rt);
    cr_assert_eq(probe_cmd(cx, &b, P_UNLINK, &a, sizeof a), 0);
    expect_report(cx, ib, R_RC, &rc, sizeof rc);
    cr_assert_eq(rc.rc, AC_ENOTFOUND);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.killed, 0);
}

LINK_TEST(linking_to_a_dead_actor_is_not_found, 0)
{
    ac_addr a = spawn_probe(cx, me), b = spawn_probe(cx, me);
    ac_stop(cx, &b);
    ac_runtime_run(rt);
    cr_assert_eq(probe_cmd(cx, &a, P_LINK, &b, sizeof b), 0);
    probe_rc rc;
    expect_report(cx, ib, R_RC, &rc, sizeof rc);
    cr_assert_eq(rc.rc, AC_ENOTFOUND);
}

LINK_TEST(linking_twice_is_one_link, 0)
{
    ac_addr a = spawn_probe(cx, me), b = spawn_probe(cx, me);
    link_probes(&a, &b);
    link_probes(&b, &a);
    probe_cmd(cx, &b, P_TRAP, NULL, 0);
    fail(&a, 2);
    expect_report(cx, ib, R_EXIT, NULL, 0);
    cr_assert(no_report(cx, ib, R_EXIT));
}

LINK_TEST(a_failure_travels_down_a_chain, 0)
{
    ac_addr a = spawn_probe(cx, me), b = spawn_probe(cx, me), c = spawn_probe(cx, me);
    link_probes(&a, &b);
    link_probes(&b, &c);
    cr_assert_eq(ac_monitor(cx, me, &c, NULL), 0);
    fail(&a, 8);
    ac_down d = down_of(&c);
    cr_assert_eq(d.reason, AC_REASON_KILLED);
    cr_assert_eq(d.code, 8);
}

LINK_TEST(a_spawn_option_links_before_the_start_hook, 0)
{
    ac_addr parent = spawn_probe(cx, me);
    probe_cmd(cx, &parent, P_TRAP, NULL, 0);
    ac_runtime_run(rt);
    probe_args args = {*me, 77, false};  /* its start hook fails */
    ac_spawn_options o = {0};
    o.link = &parent;
    ac_addr child;
    cr_assert_eq(ac_spawn_opts(cx, &probe_type, &args, &o, &child), 77);
    ac_exit x;
    expect_report(cx, ib, R_EXIT, &x, sizeof x);
    cr_assert_eq(x.reason, AC_REASON_FAILED);
    cr_assert_eq(x.code, 77);
}

LINK_TEST(a_killed_actor_drops_its_queue_and_skips_its_stop_hook, 0)
{
    ac_addr a = spawn_probe(cx, me);
    for (int i = 0; i < 5; i++)
        probe_cmd(cx, &a, P_COUNT, NULL, 0);
    cr_assert_eq(ac_kill(cx, &a), 0);
    ac_runtime_run(rt);
    cr_assert(no_report(cx, ib, R_STOPPED));
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.killed, 1);
    cr_assert_eq(st.dead_letters, 5);
    cr_assert_eq(ac_kill(cx, &a), AC_ENOTFOUND);
}

LINK_TEST(linked_pairs_fail_together_under_load, 2)
{
    enum { PAIRS = 500 };
    for (int i = 0; i < PAIRS; i++) {
        ac_addr a = spawn_probe(cx, me), b = spawn_probe(cx, me);
        link_probes(&a, &b);
        cr_assert_eq(ac_monitor(cx, me, &b, NULL), 0);
        fail(&a, i + 1);
    }
    int killed = 0;
    for (int i = 0; i < PAIRS; i++) {
        ac_down d;
        expect_report(cx, ib, AC_TAG_DOWN, &d, sizeof d);
        killed += d.reason == AC_REASON_KILLED && d.code > 0;
    }
    cr_assert_eq(killed, PAIRS);
}
