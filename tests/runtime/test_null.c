/*
 * test_null.c — every public call given NULL where it needs a pointer ends
 * in AC_EINVAL (or, for one that returns no code, does nothing), never a
 * crash: the whole of actorc.h, one NULL at a time (the generated calls'
 * own NULL cases are in test_depth.c).
 */
#include <actorc.h>
#include <criterion/criterion.h>

#include <string.h>

static int nop_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    (void)state;
    (void)cx;
    (void)e;
    return 0;
}

static const ac_actor_type nop_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.Nop",
    .dispatch = nop_dispatch,
    .message_count = 1,
};

static ac_runtime *rt;
static ac_ctx *cx;

static void open_rt(void)
{
    ac_config cfg;
    ac_config_init(&cfg);
    cfg.workers = 0;
    cr_assert_eq(ac_runtime_create(&rt, &cfg), 0);
    /* Actors failed on purpose are not reported (failure.c). */
    ac_runtime_set_failure_hook(rt, ac_failure_quiet, NULL);
    cx = ac_runtime_ctx(rt);
    cr_assert_not_null(cx);
}

static ac_envelope *env(void)
{
    ac_envelope *e = ac_envelope_new(cx, 0, 8);
    cr_assert_not_null(e);
    return e;
}

#define EINVAL_(call) cr_assert_eq((call), AC_EINVAL, "%s", #call)

Test(null, runtime_and_addresses)
{
    ac_addr a = {{0}};
    char buf[8];
    cr_assert_not_null(ac_strerror(0));
    cr_assert(ac_addr_eq(NULL, NULL));
    cr_assert(ac_addr_is_nil(NULL));
    cr_assert_eq(ac_addr_node(NULL), 0);
    cr_assert_null(ac_addr_format(NULL, buf, 2));
    cr_assert_null(ac_addr_format(&a, NULL, 2));
    ac_config_init(NULL);
    EINVAL_(ac_runtime_create(NULL, NULL));
    cr_assert_eq(ac_runtime_workers(NULL), 0);
    EINVAL_(ac_runtime_run(NULL));
    EINVAL_(ac_runtime_step(NULL));
    EINVAL_(ac_runtime_shutdown(NULL));
    cr_assert_eq(ac_runtime_destroy(NULL), 0);
    cr_assert_null(ac_runtime_ctx(NULL));
    cr_assert_null(ac_ctx_runtime(NULL));
    cr_assert_null(ac_self(NULL));
    EINVAL_(ac_runtime_advance(NULL, 1));
    ac_runtime_set_dead_letter_hook(NULL, NULL, NULL);
    ac_runtime_stats(NULL, NULL);
    open_rt();
    ac_runtime_stats(rt, NULL);
    cr_assert_null(ac_envelope_new(NULL, 0, 0));
    ac_envelope_free(NULL, NULL);
    ac_envelope_free(cx, NULL);
    ac_string s = ac_string_of(NULL);
    cr_assert_eq(s.len, 0);
    ac_runtime_destroy(rt);
}

Test(null, actors)
{
    open_rt();
    ac_addr a;
    cr_assert_eq(ac_spawn(cx, &nop_type, NULL, &a), 0);
    EINVAL_(ac_spawn(NULL, &nop_type, NULL, &a));
    EINVAL_(ac_spawn(cx, NULL, NULL, &a));
    EINVAL_(ac_spawn(cx, &nop_type, NULL, NULL));
    EINVAL_(ac_spawn_opts(NULL, &nop_type, NULL, NULL, &a));
    EINVAL_(ac_spawn_opts(cx, NULL, NULL, NULL, &a));
    EINVAL_(ac_spawn_opts(cx, &nop_type, NULL, NULL, NULL));
    EINVAL_(ac_send(cx, NULL, env()));
    EINVAL_(ac_send(cx, &a, NULL));
    EINVAL_(ac_send_typed(cx, NULL, &nop_type, env()));
    EINVAL_(ac_send_typed(cx, &a, &nop_type, NULL));
    EINVAL_(ac_stop(NULL, &a));
    EINVAL_(ac_stop(cx, NULL));
    cr_assert_neq(ac_stop_self(NULL), 0);
    cr_assert_neq(ac_fail(NULL, 1), 0);
    EINVAL_(ac_kill(NULL, &a));
    EINVAL_(ac_kill(cx, NULL));
    cr_assert_neq(ac_trap_exits(NULL, true), 0);
    ac_runtime_destroy(rt);
}

Test(null, monitors_links_names_groups)
{
    open_rt();
    ac_addr a;
    uint64_t ref;
    cr_assert_eq(ac_spawn(cx, &nop_type, NULL, &a), 0);
    EINVAL_(ac_monitor(NULL, &a, &a, &ref));
    EINVAL_(ac_monitor(cx, NULL, &a, &ref));
    EINVAL_(ac_monitor(cx, &a, NULL, &ref));
    cr_assert_neq(ac_demonitor(NULL, 1), 0);
    cr_assert_neq(ac_link(NULL, &a), 0);
    cr_assert_neq(ac_link(cx, NULL), 0);
    cr_assert_neq(ac_unlink(NULL, &a), 0);
    cr_assert_neq(ac_unlink(cx, NULL), 0);
    EINVAL_(ac_register(NULL, "n", &a));
    EINVAL_(ac_register(cx, NULL, &a));
    EINVAL_(ac_register(cx, "n", NULL));
    EINVAL_(ac_unregister(NULL, "n"));
    EINVAL_(ac_unregister(cx, NULL));
    EINVAL_(ac_whereis(NULL, "n", &a));
    EINVAL_(ac_whereis(cx, NULL, &a));
    EINVAL_(ac_whereis(cx, "n", NULL));
    EINVAL_(ac_whereis_on(NULL, "x", "n", 0, &a));
    EINVAL_(ac_whereis_on(cx, NULL, "n", 0, &a));
    EINVAL_(ac_whereis_on(cx, "x", NULL, 0, &a));
    EINVAL_(ac_whereis_on(cx, "x", "n", 0, NULL));
    EINVAL_(ac_send_named(NULL, "n", NULL));
    EINVAL_(ac_send_named(cx, NULL, env()));
    EINVAL_(ac_send_named(cx, "n", NULL));
    cr_assert_eq(ac_registered(NULL, NULL, 4), 0);
    cr_assert_eq(ac_registered(cx, NULL, 4), 0);
    EINVAL_(ac_group_join(NULL, "g", &a));
    EINVAL_(ac_group_join(cx, NULL, &a));
    EINVAL_(ac_group_join(cx, "g", NULL));
    EINVAL_(ac_group_leave(NULL, "g", &a));
    EINVAL_(ac_group_leave(cx, NULL, &a));
    EINVAL_(ac_group_leave(cx, "g", NULL));
    EINVAL_(ac_group_publish(NULL, "g", &nop_type, NULL));
    EINVAL_(ac_group_publish(cx, NULL, &nop_type, env()));
    EINVAL_(ac_group_publish(cx, "g", &nop_type, NULL));
    cr_assert_eq(ac_group_members(NULL, "g", NULL, 4), 0);
    cr_assert_eq(ac_group_members(cx, NULL, NULL, 4), 0);
    cr_assert_eq(ac_groups(NULL, NULL, 4), 0);
    ac_runtime_destroy(rt);
}

Test(null, routers_supervisors_inboxes_timers)
{
    open_rt();
    ac_addr a, out[2];
    cr_assert_eq(ac_spawn(cx, &nop_type, NULL, &a), 0);
    ac_router_options ro = {0};
    EINVAL_(ac_router_spawn(NULL, &ro, &a));
    EINVAL_(ac_router_spawn(cx, NULL, &a));
    EINVAL_(ac_router_spawn(cx, &ro, NULL));
    cr_assert_lt(ac_router_workers(NULL, &a, out, 2), 0);
    cr_assert_lt(ac_router_workers(cx, NULL, out, 2), 0);
    ac_supervisor_spec spec = {0};
    EINVAL_(ac_supervisor_start(NULL, &spec, &a, NULL));
    EINVAL_(ac_supervisor_start(cx, NULL, &a, NULL));
    EINVAL_(ac_supervisor_start(cx, &spec, NULL, NULL));
    EINVAL_(ac_supervisor_stop(NULL, &a));
    EINVAL_(ac_supervisor_stop(cx, NULL));
    cr_assert_eq(ac_supervisor_which_children(NULL, &a, out, 2), AC_EINVAL);
    cr_assert_eq(ac_supervisor_which_children(cx, NULL, out, 2), AC_EINVAL);
    cr_assert_eq(ac_supervisor_which_children(cx, &a, NULL, 2), AC_EINVAL);
    cr_assert_eq(ac_supervisor_which_children(cx, &a, NULL, 0), AC_ENOTFOUND);
    ac_inbox *ib;
    EINVAL_(ac_inbox_create(NULL, &ib));
    EINVAL_(ac_inbox_create(cx, NULL));
    cr_assert_null(ac_inbox_addr(NULL));
    ac_envelope *e;
    cr_assert_eq(ac_inbox_create(cx, &ib), 0);
    EINVAL_(ac_inbox_recv(NULL, ib, AC_ANY_TAG, 0, &e));
    EINVAL_(ac_inbox_recv(cx, NULL, AC_ANY_TAG, 0, &e));
    EINVAL_(ac_inbox_recv(cx, ib, AC_ANY_TAG, 0, NULL));
    ac_inbox_destroy(NULL, ib);
    ac_inbox_destroy(cx, NULL);
    ac_inbox_destroy(cx, ib);
    ac_timer_id id;
    EINVAL_(ac_timer_after(NULL, &a, 1, NULL, &id));
    EINVAL_(ac_timer_after(cx, NULL, 1, env(), &id));
    EINVAL_(ac_timer_after(cx, &a, 1, NULL, &id));
    EINVAL_(ac_timer_after_typed(cx, NULL, &nop_type, 1, env(), &id));
    EINVAL_(ac_timer_after_typed(cx, &a, &nop_type, 1, NULL, &id));
    EINVAL_(ac_timer_every(cx, NULL, 1, &nop_type, env(), &id));
    EINVAL_(ac_timer_every(cx, &a, 1, &nop_type, NULL, &id));
    cr_assert_neq(ac_timer_cancel(NULL, 1), 0);
    ac_runtime_destroy(rt);
}

Test(null, asks_and_replies)
{
    open_rt();
    ac_addr a;
    cr_assert_eq(ac_spawn(cx, &nop_type, NULL, &a), 0);
    ac_reply_to to;
    memset(&to, 0, sizeof to);
    ac_envelope *e;
    cr_assert_null(ac_reply_new(NULL, &to, 8));
    cr_assert_null(ac_reply_new(cx, NULL, 8));
    EINVAL_(ac_reply(NULL, &to, NULL));
    EINVAL_(ac_reply(cx, NULL, ac_reply_new(cx, &to, 8)));
    EINVAL_(ac_reply(cx, &to, NULL));
    EINVAL_(ac_reply_error(NULL, &to, AC_EFAILED));
    EINVAL_(ac_reply_error(cx, NULL, AC_EFAILED));
    cr_assert_neq(ac_ask(NULL, &a, NULL, 0, NULL, NULL), 0);
    cr_assert_neq(ac_ask(cx, NULL, env(), 0, NULL, NULL), 0);
    cr_assert_neq(ac_ask(cx, &a, NULL, 0, NULL, NULL), 0);
    EINVAL_(ac_ask_wait(NULL, &a, NULL, 0, &e));
    EINVAL_(ac_ask_wait(cx, NULL, env(), 0, &e));
    EINVAL_(ac_ask_wait(cx, &a, NULL, 0, &e));
    EINVAL_(ac_ask_wait(cx, &a, env(), 0, NULL));
    EINVAL_(ac_ask_wait_typed(cx, NULL, &nop_type, env(), 0, &e));
    EINVAL_(ac_ask_wait_typed(cx, &a, &nop_type, NULL, 0, &e));
    EINVAL_(ac_ask_wait_typed(cx, &a, &nop_type, env(), 0, NULL));
    EINVAL_(ac_reply_typed(NULL, &to, &nop_type, 0, NULL));
    EINVAL_(ac_reply_typed(cx, NULL, &nop_type, 0, ac_reply_new(cx, &to, 8)));
    EINVAL_(ac_reply_typed(cx, &to, &nop_type, 0, NULL));
    ac_reply_free(NULL, NULL);
    ac_reply_free(cx, NULL);
    ac_runtime_destroy(rt);
}

Test(null, nodes)
{
    char key[AC_NODE_KEY_LEN + 1];
    EINVAL_(ac_node_keygen(NULL, key));
    EINVAL_(ac_node_keygen("/nonexistent/k", NULL));
    EINVAL_(ac_node_public_key(NULL, key));
    EINVAL_(ac_node_public_key("/nonexistent/k", NULL));
    open_rt();
    ac_node_config nc = {0};
    EINVAL_(ac_node_start(NULL, &nc, NULL, 0));
    EINVAL_(ac_node_start(rt, NULL, NULL, 0));
    EINVAL_(ac_node_add_peer(NULL, "p", "tcp://127.0.0.1:1", "k"));
    cr_assert_lt(ac_node_add_peer(rt, NULL, "tcp://127.0.0.1:1", "k"), 0);
    cr_assert_lt(ac_node_remove_peer(rt, NULL), 0);
    EINVAL_(ac_node_remove_peer(NULL, "p"));
    cr_assert_eq(ac_node_peers(NULL, NULL, 4), 0);
    cr_assert_eq(ac_node_peers(rt, NULL, 4), 0);
    cr_assert_lt(ac_runtime_node_stats(NULL, NULL), 0);
    cr_assert_lt(ac_runtime_node_stats(rt, NULL), 0);
    ac_runtime_destroy(rt);
}
