/*
 * test_misuse.c — public calls used wrongly end in an error code, never a
 * crash (issue 12's list): NULL where a pointer belongs, a runtime
 * destroyed from its own handler, an inbox made after shutdown, a restart
 * intensity too large to keep.
 */
#include <actorc.h>
#include <criterion/criterion.h>

#include <stdatomic.h>

/* What the destroying actor's handler got back; an atomic because the
 * handler runs on a worker and the test reads it from main. */
static _Atomic int destroy_rc = 1;

static int destroyer_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    (void)state;
    (void)e;
    atomic_store_explicit(&destroy_rc, ac_runtime_destroy(ac_ctx_runtime(cx)), memory_order_relaxed);
    return 0;
}

static const ac_actor_type destroyer_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.Destroyer",
    .dispatch = destroyer_dispatch,
    .message_count = 1,
};

Test(misuse, destroy_from_a_handler_is_refused)
{
    for (int workers = 0; workers <= 2; workers += 2) {
        ac_config cfg;
        ac_config_init(&cfg);
        cfg.workers = workers;
        ac_runtime *rt;
        cr_assert_eq(ac_runtime_create(&rt, &cfg), 0);
        /* Actors failed on purpose are not reported (failure.c). */
        ac_runtime_set_failure_hook(rt, ac_failure_quiet, NULL);
        ac_ctx *cx = ac_runtime_ctx(rt);
        ac_addr a;
        cr_assert_eq(ac_spawn(cx, &destroyer_type, NULL, &a), 0);
        ac_envelope *e = ac_envelope_new(cx, 0, 0);
        cr_assert_not_null(e);
        cr_assert_eq(ac_send(cx, &a, e), 0);
        cr_assert_eq(ac_runtime_run(rt), 0);
        cr_assert_eq(atomic_load_explicit(&destroy_rc, memory_order_relaxed), AC_ESTATE);
        /* The runtime is whole: it still runs actors, then goes. */
        atomic_store_explicit(&destroy_rc, 1, memory_order_relaxed);
        e = ac_envelope_new(cx, 0, 0);
        cr_assert_not_null(e);
        cr_assert_eq(ac_send(cx, &a, e), 0);
        cr_assert_eq(ac_runtime_run(rt), 0);
        cr_assert_eq(atomic_load_explicit(&destroy_rc, memory_order_relaxed), AC_ESTATE);
        cr_assert_eq(ac_runtime_destroy(rt), 0);
    }
    cr_assert_eq(ac_runtime_destroy(NULL), 0);
}

Test(misuse, null_arguments)
{
    ac_addr a = {{1}};
    cr_assert(!ac_addr_eq(NULL, &a));
    cr_assert(!ac_addr_eq(&a, NULL));
    cr_assert(ac_addr_eq(NULL, NULL));
    cr_assert(ac_addr_is_nil(NULL));
    ac_config_init(NULL);
    ac_runtime_stats(NULL, NULL);
    ac_runtime *rt;
    cr_assert_eq(ac_runtime_create(&rt, NULL), 0);
    /* Actors failed on purpose are not reported (failure.c). */
    ac_runtime_set_failure_hook(rt, ac_failure_quiet, NULL);
    ac_runtime_stats(rt, NULL);
    ac_runtime_destroy(rt);
}

Test(misuse, inbox_after_shutdown)
{
    ac_runtime *rt;
    cr_assert_eq(ac_runtime_create(&rt, NULL), 0);
    /* Actors failed on purpose are not reported (failure.c). */
    ac_runtime_set_failure_hook(rt, ac_failure_quiet, NULL);
    ac_ctx *cx = ac_runtime_ctx(rt);
    cr_assert_eq(ac_runtime_shutdown(rt), 0);
    ac_inbox *ib = (ac_inbox *)&ib;
    cr_assert_eq(ac_inbox_create(cx, &ib), AC_ESHUTDOWN);
    cr_assert_null(ib);
    ac_runtime_destroy(rt);
}

Test(misuse, restart_intensity_beyond_the_bound)
{
    ac_runtime *rt;
    cr_assert_eq(ac_runtime_create(&rt, NULL), 0);
    /* Actors failed on purpose are not reported (failure.c). */
    ac_runtime_set_failure_hook(rt, ac_failure_quiet, NULL);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_child_spec child = { .type = &destroyer_type, .restart = AC_RESTART_PERMANENT };
    ac_supervisor_spec spec = { .strategy = AC_ONE_FOR_ONE, .max_restarts = UINT32_MAX,
                                .within_ms = 1000, .children = &child, .nchildren = 1 };
    ac_addr sup;
    cr_assert_eq(ac_supervisor_start(cx, &spec, &sup, NULL), AC_EINVAL);
    spec.max_restarts = AC_MAX_RESTARTS;
    cr_assert_eq(ac_supervisor_start(cx, &spec, &sup, NULL), 0);
    ac_runtime_destroy(rt);
}

/* An actor that sends itself a message for every one it handles: the
 * runtime is never quiescent, and a graceful shutdown never ends. */
static int looper_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    (void)state;
    (void)e;
    ac_envelope *next = ac_envelope_new(cx, 0, 0);
    return next == NULL ? AC_ENOMEM : ac_send(cx, ac_self(cx), next);
}

static const ac_actor_type looper_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.Looper",
    .dispatch = looper_dispatch,
    .message_count = 1,
};

Test(misuse, shutdown_kills_what_is_still_running_at_its_deadline)
{
    for (int workers = 0; workers <= 2; workers += 2) {
        ac_config cfg;
        ac_config_init(&cfg);
        cfg.workers = workers;
        cfg.shutdown_ms = 50;
        ac_runtime *rt;
        cr_assert_eq(ac_runtime_create(&rt, &cfg), 0);
        /* Actors failed on purpose are not reported (failure.c). */
        ac_runtime_set_failure_hook(rt, ac_failure_quiet, NULL);
        ac_ctx *cx = ac_runtime_ctx(rt);
        ac_addr a, b;
        cr_assert_eq(ac_spawn(cx, &looper_type, NULL, &a), 0);
        cr_assert_eq(ac_spawn(cx, &looper_type, NULL, &b), 0);
        for (int i = 0; i < 2; i++) {
            ac_envelope *e = ac_envelope_new(cx, 0, 0);
            cr_assert_not_null(e);
            cr_assert_eq(ac_send(cx, i ? &b : &a, e), 0);
        }
        cr_assert_eq(ac_runtime_shutdown(rt), AC_ETIMEDOUT);
        ac_stats st;
        ac_runtime_stats(rt, &st);
        cr_assert_eq(st.killed, 2);
        /* Each looper held the message it had just sent itself. */
        cr_assert_geq(st.dead_letters, 2);
        /* The identity of docs/RUNTIME.md: nothing refused here, so every
         * send was handled or dropped, counted. */
        cr_assert_eq(st.refused, 0);
        cr_assert_eq(st.sends + st.refused, st.messages + st.dead_letters + st.mailbox_drops,
                     "sends %llu, handled %llu, dropped %llu", (unsigned long long)st.sends,
                     (unsigned long long)st.messages, (unsigned long long)st.dead_letters);
        cr_assert_eq(ac_runtime_destroy(rt), 0);
    }
}

Test(misuse, a_graceful_shutdown_within_its_deadline_kills_nothing)
{
    ac_config cfg;
    ac_config_init(&cfg);
    cfg.workers = 2;
    cfg.shutdown_ms = AC_SHUTDOWN_NEVER_FORCED;
    ac_runtime *rt;
    cr_assert_eq(ac_runtime_create(&rt, &cfg), 0);
    /* Actors failed on purpose are not reported (failure.c). */
    ac_runtime_set_failure_hook(rt, ac_failure_quiet, NULL);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a;
    cr_assert_eq(ac_spawn(cx, &destroyer_type, NULL, &a), 0);
    cr_assert_eq(ac_runtime_shutdown(rt), 0);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.killed, 0);
    cr_assert_eq(st.stopped, 1);
    cr_assert_eq(ac_runtime_destroy(rt), 0);
}
