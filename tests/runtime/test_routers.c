/* test_routers.c — router pools: strategies, replacement, lifetime. */
#include "svc_probe.h"

/* The consistent-hashing key: the message's value (an account id). */
static uint64_t key_of(const ac_envelope *e, void *arg)
{
    (void)arg;
    const sv_msg *m = ac_envelope_payload((ac_envelope *)e);
    return m->v;
}

static ac_addr spawn_router(ac_ctx *cx, uint32_t strategy, uint32_t workers)
{
    ac_router_options o = {0};
    o.type = &sv_type;
    o.workers = workers;
    o.strategy = strategy;
    o.key = key_of;
    ac_addr r;
    cr_assert_eq(ac_router_spawn(cx, &o, &r), 0);
    return r;
}

/* The worker that logged the note with value v. */
static ac_addr worker_of(uint64_t v)
{
    uint64_t len = atomic_load(&sv_notes.len);
    for (uint64_t i = 0; i < len; i++)
        if (sv_notes.hits[i].v == v)
            return sv_notes.hits[i].who;
    cr_assert(false, "no note %llu", (unsigned long long)v);
    ac_addr none = {{0}};
    return none;
}

Test(routers, round_robin_gives_each_worker_its_turn)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr r = spawn_router(cx, AC_ROUTE_ROUND_ROBIN, 4), w[4];
    cr_assert_eq(ac_router_workers(cx, &r, w, 4), 4);
    for (uint64_t i = 0; i < 40; i++)
        cr_assert_eq(sv_send(cx, &r, SV_NOTE, i, NULL), 0);
    ac_runtime_run(rt);
    for (int k = 0; k < 4; k++)
        cr_assert_eq(sv_notes_of(&w[k]), 10);
    for (uint64_t i = 4; i < 40; i++) {  /* in turn: i and i - 4 share a worker */
        ac_addr a = worker_of(i), b = worker_of(i - 4);
        cr_assert(ac_addr_eq(&a, &b));
    }
    ac_runtime_destroy(rt);
}

Test(routers, random_routing_reaches_every_worker)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr r = spawn_router(cx, AC_ROUTE_RANDOM, 4), w[4];
    cr_assert_eq(ac_router_workers(cx, &r, w, 4), 4);
    for (uint64_t i = 0; i < 400; i++)
        cr_assert_eq(sv_send(cx, &r, SV_NOTE, i, NULL), 0);
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&sv_notes.len), 400);
    for (int k = 0; k < 4; k++) {
        uint64_t n = sv_notes_of(&w[k]);
        cr_assert(n > 40 && n < 160, "worker %d got %llu of 400", k, (unsigned long long)n);
    }
    ac_runtime_destroy(rt);
}

Test(routers, broadcast_gives_every_worker_a_copy)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr r = spawn_router(cx, AC_ROUTE_BROADCAST, 3), w[3];
    cr_assert_eq(ac_router_workers(cx, &r, w, 3), 3);
    for (uint64_t i = 0; i < 5; i++)
        cr_assert_eq(sv_send(cx, &r, SV_NOTE, i, NULL), 0);
    ac_runtime_run(rt);
    for (int k = 0; k < 3; k++)
        cr_assert_eq(sv_notes_of(&w[k]), 5);
    ac_runtime_destroy(rt);
}

Test(routers, consistent_hashing_sends_equal_keys_to_the_same_worker)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr r = spawn_router(cx, AC_ROUTE_HASH, 5), w[5];
    cr_assert_eq(ac_router_workers(cx, &r, w, 5), 5);
    /* 100 accounts, 4 messages each; every account must stay on one
     * worker, and the accounts must spread over all of them. */
    for (int round = 0; round < 4; round++)
        for (uint64_t acct = 0; acct < 100; acct++)
            cr_assert_eq(sv_send(cx, &r, SV_NOTE, acct, NULL), 0);
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&sv_notes.len), 400);
    for (uint64_t i = 0; i < 400; i++) {
        ac_addr first = worker_of(sv_notes.hits[i].v);
        cr_assert(ac_addr_eq(&sv_notes.hits[i].who, &first));
    }
    for (int k = 0; k < 5; k++)
        cr_assert_gt(sv_notes_of(&w[k]), 0);
    ac_runtime_destroy(rt);
}

Test(routers, a_dead_worker_is_replaced)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr r = spawn_router(cx, AC_ROUTE_ROUND_ROBIN, 3), w[3], now[3];
    cr_assert_eq(ac_router_workers(cx, &r, w, 3), 3);
    cr_assert_eq(sv_send(cx, &w[0], SV_FAIL, 0, NULL), 0);
    cr_assert_eq(ac_kill(cx, &w[1]), 0);
    ac_runtime_run(rt);
    cr_assert_eq(ac_router_workers(cx, &r, now, 3), 3);
    cr_assert_not(ac_addr_eq(&now[0], &w[0]));
    cr_assert_not(ac_addr_eq(&now[1], &w[1]));
    cr_assert(ac_addr_eq(&now[2], &w[2]));
    for (uint64_t i = 0; i < 6; i++)
        cr_assert_eq(sv_send(cx, &r, SV_NOTE, i, NULL), 0);
    ac_runtime_run(rt);
    for (int k = 0; k < 3; k++)
        cr_assert_eq(sv_notes_of(&now[k]), 2);
    ac_runtime_destroy(rt);
}

Test(routers, a_worker_failing_on_a_routed_message_is_replaced_in_its_slot)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr r = spawn_router(cx, AC_ROUTE_HASH, 4);
    cr_assert_eq(sv_send(cx, &r, SV_NOTE, 77, NULL), 0);
    ac_runtime_run(rt);
    ac_addr before = worker_of(77);
    /* Account 77's worker fails; the replacement gets account 77 next. */
    ac_envelope *e = sv_new(cx, SV_FAIL, 77, NULL);
    cr_assert_eq(ac_send(cx, &r, e), 0);
    ac_runtime_run(rt);
    atomic_store(&sv_notes.len, 0);
    cr_assert_eq(sv_send(cx, &r, SV_NOTE, 77, NULL), 0);
    ac_runtime_run(rt);
    ac_addr after = worker_of(77), w[4];
    cr_assert_not(ac_addr_eq(&after, &before));
    cr_assert_eq(ac_router_workers(cx, &r, w, 4), 4);
    bool listed = false;
    for (int k = 0; k < 4; k++)
        listed |= ac_addr_eq(&w[k], &after);
    cr_assert(listed);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.failed, 1);
    ac_runtime_destroy(rt);
}

Test(routers, stopping_the_router_stops_its_workers)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr r = spawn_router(cx, AC_ROUTE_ROUND_ROBIN, 3), w[3];
    cr_assert_eq(ac_router_workers(cx, &r, w, 3), 3);
    for (uint64_t i = 0; i < 3; i++)
        cr_assert_eq(sv_send(cx, &r, SV_NOTE, i, NULL), 0);
    cr_assert_eq(ac_stop(cx, &r), 0);
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&sv_notes.len), 3);  /* forwarded before the stop */
    cr_assert_eq(ac_router_workers(cx, &r, w, 3), AC_ENOTFOUND);
    for (int k = 0; k < 3; k++)
        cr_assert_eq(sv_send(cx, &w[k], SV_NOTE, 9, NULL), AC_ENOTFOUND);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.stopped, 4);
    ac_runtime_destroy(rt);
}

Test(routers, a_worker_whose_start_hook_fails_fails_the_router_spawn)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    sv_args bad = {NULL, 5};
    ac_router_options o = {0};
    o.type = &sv_type;
    o.args = &bad;
    o.workers = 2;
    ac_addr r;
    cr_assert_eq(ac_router_spawn(cx, &o, &r), 5);
    ac_runtime_run(rt);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.failed, 2);  /* the worker and the router */
    ac_runtime_destroy(rt);
}

Test(routers, bad_router_options_are_refused)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_router_options o = {0};
    ac_addr r;
    o.type = &sv_type;
    cr_assert_eq(ac_router_spawn(cx, &o, &r), AC_EINVAL);  /* no workers */
    o.workers = AC_ROUTER_MAX_WORKERS + 1;
    cr_assert_eq(ac_router_spawn(cx, &o, &r), AC_EINVAL);
    o.workers = 2;
    o.strategy = AC_ROUTE_HASH;  /* without a key function */
    cr_assert_eq(ac_router_spawn(cx, &o, &r), AC_EINVAL);
    o.strategy = 99;
    cr_assert_eq(ac_router_spawn(cx, &o, &r), AC_EINVAL);
    o.strategy = AC_ROUTE_RANDOM;
    o.type = &sv_nocopy_type;  /* forwarding copies */
    cr_assert_eq(ac_router_spawn(cx, &o, &r), AC_EINVAL);
    ac_addr plain = sv_spawn(cx), w[1];
    cr_assert_eq(ac_router_workers(cx, &plain, w, 1), AC_ENOTFOUND);
    ac_runtime_destroy(rt);
}

Test(routers, routing_from_several_workers_loses_no_message)
{
    ac_runtime *rt = make_runtime(4);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr r = spawn_router(cx, AC_ROUTE_ROUND_ROBIN, 8), w[8];
    enum { N = 20000 };
    for (uint64_t i = 0; i < N; i++)
        cr_assert_eq(sv_send(cx, &r, SV_NOTE, i, NULL), 0);
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&sv_notes.len), N);
    cr_assert_eq(ac_router_workers(cx, &r, w, 8), 8);
    for (int k = 0; k < 8; k++)
        cr_assert_eq(sv_notes_of(&w[k]), N / 8);
    ac_runtime_destroy(rt);
}

Test(routers, workers_killed_while_messages_flow_are_replaced_on_several_workers)
{
    ac_runtime *rt = make_runtime(4);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr r = spawn_router(cx, AC_ROUTE_RANDOM, 4), w[4];
    for (int round = 0; round < 50; round++) {
        int n = ac_router_workers(cx, &r, w, 4);
        cr_assert(n >= 0 && n <= 4);
        if (n > 0)
            (void)ac_kill(cx, &w[round % n]);  /* may already be dying */
        for (uint64_t i = 0; i < 20; i++)
            cr_assert_eq(sv_send(cx, &r, SV_NOTE, i, NULL), 0);
    }
    ac_runtime_run(rt);
    cr_assert_eq(ac_router_workers(cx, &r, w, 4), 4);
    /* A message forwarded to a worker killed before handling it is lost
     * (a dead letter); all the others arrived. */
    ac_stats st;
    ac_runtime_stats(rt, &st);
    uint64_t notes = atomic_load(&sv_notes.len);
    cr_assert(notes <= 1000 && notes + st.dead_letters >= 1000, "%llu notes, %llu dead letters",
              (unsigned long long)notes, (unsigned long long)st.dead_letters);
    ac_runtime_destroy(rt);
}
