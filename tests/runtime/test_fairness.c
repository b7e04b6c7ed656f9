/*
 * test_fairness.c — no actor starves another, the counters tell the truth,
 * and what dead actors leave in the services' tables is cleaned up.
 */
#include "fixtures.h"
#include "probe.h"

#include <stdio.h>

/* ---- a Bouncer pair plays ping-pong forever until told; a Marker records
 * how far the game had got when its one message was handled. ----------- */

static _Atomic uint64_t bounces, marked_at = UINT64_MAX;
static _Atomic bool stop_bouncing;
static ac_addr marker;  /* set before the game starts */

typedef struct bouncer {
    ac_addr peer;
} bouncer;

static int bounce(ac_ctx *cx, const ac_addr *to)
{
    ac_envelope *e = ac_envelope_new(cx, 1, 0);
    return e ? ac_send(cx, to, e) : AC_ENOMEM;
}

static int bouncer_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    bouncer *self = state;
    if (e->tag == 0) {  /* set the peer */
        self->peer = *(const ac_addr *)ac_envelope_payload(e);
        return 0;
    }
    /* The first ball wakes the marker from inside the game, so what is
     * measured is the scheduler, not when the test thread got to send. */
    if (atomic_fetch_add(&bounces, 1) == 0 && bounce(cx, &marker) != 0)
        return AC_ENOMEM;
    if (atomic_load(&stop_bouncing))
        return 0;
    return bounce(cx, &self->peer);
}

static const char *const bouncer_names[] = {"peer", "ball"};
static const ac_actor_type bouncer_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.Bouncer",
    .state_size = sizeof(bouncer),
    .state_align = _Alignof(bouncer),
    .dispatch = bouncer_dispatch,
    .message_count = 2,
    .message_names = bouncer_names,
};

static int marker_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    (void)state;
    (void)cx;
    (void)e;
    atomic_store(&marked_at, atomic_load(&bounces));
    atomic_store(&stop_bouncing, true);
    return 0;
}

static const char *const marker_names[] = {"mark"};
static const ac_actor_type marker_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.Marker",
    .state_align = 1,
    .dispatch = marker_dispatch,
    .message_count = 1,
    .message_names = marker_names,
};

static void set_peer(ac_ctx *cx, const ac_addr *a, const ac_addr *peer)
{
    ac_envelope *e = ac_envelope_new(cx, 0, sizeof *peer);
    *(ac_addr *)ac_envelope_payload(e) = *peer;
    cr_assert_eq(ac_send(cx, a, e), 0);
}

static void pair_cannot_starve_a_third(int workers)
{
    ac_runtime *rt = make_runtime(workers);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a, b;
    cr_assert_eq(ac_spawn(cx, &bouncer_type, NULL, &a), 0);
    cr_assert_eq(ac_spawn(cx, &bouncer_type, NULL, &b), 0);
    cr_assert_eq(ac_spawn(cx, &marker_type, NULL, &marker), 0);
    set_peer(cx, &a, &b);
    set_peer(cx, &b, &a);
    ac_runtime_run(rt);
    cr_assert_eq(bounce(cx, &a), 0);
    ac_runtime_run(rt);  /* ends only because the marker stops the game */
    cr_assert_lt(atomic_load(&marked_at), 100000, "the marker waited %lu bounces",
                 (unsigned long)atomic_load(&marked_at));
    ac_runtime_destroy(rt);
}

Test(fairness, a_ping_pong_pair_cannot_starve_a_third_actor_on_one_worker, .timeout = 60)
{
    pair_cannot_starve_a_third(1);
}

Test(fairness, a_ping_pong_pair_cannot_starve_a_third_actor_deterministic, .timeout = 60)
{
    pair_cannot_starve_a_third(0);
}

Test(fairness, a_busy_actor_yields_after_its_batch, .timeout = 30)
{
    ac_config cfg;
    ac_config_init(&cfg);
    cfg.workers = 0;
    cfg.batch = 16;
    ac_runtime *rt;
    cr_assert_eq(ac_runtime_create(&rt, &cfg), 0);
    /* Actors failed on purpose are not reported (failure.c). */
    ac_runtime_set_failure_hook(rt, ac_failure_quiet, NULL);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr busy = spawn_counter(cx), quiet = spawn_counter(cx);
    for (uint64_t i = 0; i < 3000; i++)
        cr_assert_eq(send_item(cx, &busy, 0, i), 0);
    cr_assert_eq(send_item(cx, &quiet, 1, 999999), 0);
    /* A turn handles at most one batch, and work that waits in the
     * injection queue is looked at every 61 turns at the latest (Go's
     * figure): the quiet actor runs long before the busy one is done. */
    cr_assert_eq(ac_runtime_step(rt), 16);
    ac_runtime_run(rt);
    uint64_t at = UINT64_MAX;
    for (uint64_t i = 0; i < 3001; i++)
        if (atomic_load(&g_trace[i]) == 999999)
            at = i;
    cr_assert_leq(at, 62 * 16, "the quiet actor ran after %lu messages", (unsigned long)at);
    cr_assert_eq(atomic_load(&g_items), 3001);
    ac_runtime_destroy(rt);
}

Test(statistics, counters_add_up_after_a_known_script, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_inbox *ib;
    cr_assert_eq(ac_inbox_create(cx, &ib), 0);
    const ac_addr *me = ac_inbox_addr(ib);
    ac_addr a = spawn_probe(cx, me), b = spawn_probe(cx, me), c = spawn_probe(cx, me);
    for (int i = 0; i < 5; i++)
        probe_cmd(cx, &a, P_COUNT, NULL, 0);
    int code = 4;
    probe_cmd(cx, &b, P_FAIL, &code, sizeof code);
    ac_kill(cx, &c);
    ac_stop(cx, &a);
    ac_runtime_run(rt);
    probe_cmd(cx, &a, P_COUNT, NULL, 0);  /* a dead letter */
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.spawned, 3);
    cr_assert_eq(st.stopped, 1);
    cr_assert_eq(st.failed, 1);
    cr_assert_eq(st.killed, 1);
    cr_assert_eq(st.dead_letters, 1);
    /* 5 counts + 1 fail handled by probes; the inbox took none yet. */
    cr_assert_eq(st.messages, 6);
    /* Sends: the 6 commands and 4 reports (3 starts, a's stop hook). */
    cr_assert_eq(st.sends, 10);
    ac_inbox_destroy(cx, ib);
    ac_runtime_destroy(rt);
}

Test(statistics, counters_can_be_read_while_workers_run, .timeout = 60)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_counter(cx);
    uint64_t last = 0;
    for (uint64_t i = 0; i < 20000; i++) {
        cr_assert_eq(send_item(cx, &a, 0, i), 0);
        if (i % 1000 == 0) {
            ac_stats st;
            ac_runtime_stats(rt, &st);
            cr_assert_geq(st.sends, last);  /* never goes backwards */
            last = st.sends;
        }
    }
    ac_runtime_run(rt);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.sends, 20000);
    cr_assert_eq(st.messages, 20000);
    ac_runtime_destroy(rt);
}

Test(cleanup, dead_actors_leave_no_names_groups_or_monitors_behind, .timeout = 60)
{
    enum { N = 500 };
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_inbox *ib;
    cr_assert_eq(ac_inbox_create(cx, &ib), 0);
    const ac_addr *me = ac_inbox_addr(ib);
    for (int i = 0; i < N; i++) {
        ac_addr p = spawn_probe(cx, me);
        char name[32];
        snprintf(name, sizeof name, "p%d", i);
        cr_assert_eq(ac_register(cx, name, &p), 0);
        cr_assert_eq(ac_group_join(cx, i % 2 ? "odd" : "even", &p), 0);
        cr_assert_eq(ac_monitor(cx, me, &p, NULL), 0);
        if (i % 3)
            ac_stop(cx, &p);
        else
            ac_kill(cx, &p);
    }
    for (int i = 0; i < N; i++)
        expect_report(cx, ib, AC_TAG_DOWN, NULL, 0);
    ac_runtime_run(rt);
    cr_assert_eq(ac_registered(cx, NULL, 0), 0);
    cr_assert_eq(ac_groups(cx, NULL, 0), 0);
    cr_assert_eq(ac_demonitor(cx, 1), AC_ENOTFOUND);
    ac_inbox_destroy(cx, ib);
    ac_runtime_destroy(rt);
}

Test(cleanup, destroying_a_runtime_frees_every_services_state, .timeout = 60)
{
    /* Under AddressSanitizer this fails on any leak: live actors with
     * names, groups, monitors, links, timers, a supervisor and an inbox. */
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_inbox *ib;
    cr_assert_eq(ac_inbox_create(cx, &ib), 0);
    const ac_addr *me = ac_inbox_addr(ib);
    ac_addr a = spawn_probe(cx, me), b = spawn_probe(cx, me);
    cr_assert_eq(ac_register(cx, "a", &a), 0);
    cr_assert_eq(ac_group_join(cx, "g", &b), 0);
    cr_assert_eq(ac_monitor(cx, &a, &b, NULL), 0);
    cr_assert_eq(probe_cmd(cx, &a, P_LINK, &b, sizeof b), 0);
    ac_envelope *e = ac_envelope_new(cx, P_COUNT, 0);
    cr_assert_eq(ac_timer_after(cx, &a, 60000, e, NULL), 0);
    probe_args args = {*me, 0, false};
    ac_child_spec kid = {.type = &probe_type, .args = &args, .args_size = sizeof args,
                         .restart = AC_RESTART_PERMANENT};
    ac_supervisor_spec spec = {.strategy = AC_ONE_FOR_ONE, .max_restarts = 3, .within_ms = 1000,
                               .children = &kid, .nchildren = 1};
    ac_addr sup;
    cr_assert_eq(ac_supervisor_start(cx, &spec, &sup, NULL), 0);
    ac_runtime_run(rt);
    /* The inbox is left for the runtime to free. */
    ac_runtime_destroy(rt);
}
