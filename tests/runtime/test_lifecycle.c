/* Lifecycle: start hooks, stop, stop_self, failure, shutdown. */
#include "fixtures.h"

#include <pthread.h>
#include <stdlib.h>

Test(lifecycle, external_stop_is_queued_behind_pending_messages, .timeout = 30)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_counter(cx);
    for (uint64_t i = 0; i < 100; i++)
        cr_assert_eq(send_item(cx, &a, 0, i), 0);
    cr_assert_eq(ac_stop(cx, &a), 0);
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&g_stopped_items), 100, "every earlier message first");
    cr_assert_eq(atomic_load(&g_stops), 1);
    cr_assert_eq(send_item(cx, &a, 0, 100), AC_ENOTFOUND, "gone once stopped");
    cr_assert_eq(ac_stop(cx, &a), AC_ENOTFOUND);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.stopped, 1);
    cr_assert_eq(st.dead_letters, 1);
    ac_runtime_destroy(rt);
    cr_assert_eq(atomic_load(&g_stops), 1, "a stopped actor is not stopped again");
}

Test(lifecycle, stop_self_drops_the_rest_and_counts_it, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_counter(cx);
    cr_assert_eq(send_tag(cx, &a, COUNTER_STOP_SELF), 0);
    for (uint64_t i = 0; i < 5; i++)
        cr_assert_eq(send_item(cx, &a, 0, i), 0);
    ac_runtime_run(rt);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(atomic_load(&g_items), 0);
    cr_assert_eq(st.stopped, 1);
    cr_assert_eq(st.dead_letters, 5);
    cr_assert_eq(atomic_load(&g_stops), 1, "stop hook ran");
    ac_runtime_destroy(rt);
}

/* An actor that dies with nothing queued behind its death is freed at the
 * end of its grace period by whoever reaps it, without a last turn for
 * its finalize envelope: in deterministic mode the step after its death
 * finds nothing to run (it ran the finalize turn, one "message", before). */
Test(lifecycle, an_actor_dead_and_drained_is_freed_without_a_turn, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_counter(cx);
    cr_assert_eq(send_tag(cx, &a, COUNTER_STOP_SELF), 0);
    cr_assert_eq(ac_runtime_step(rt), 1);  /* the stop, and the death */
    cr_assert_eq(ac_runtime_step(rt), 0, "no finalize turn");
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.stopped, 1);
    cr_assert_eq(st.dead_letters, 0);
    ac_runtime_destroy(rt);
}

Test(lifecycle, a_failing_handler_fails_only_its_actor, .timeout = 30)
{
    /* Deterministic: the items must be queued before the failure runs. */
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr bad = spawn_counter(cx), good = spawn_counter(cx);
    cr_assert_eq(send_tag(cx, &bad, COUNTER_FAIL), 0);
    for (uint64_t i = 0; i < 3; i++) {
        cr_assert_eq(send_item(cx, &bad, 0, i), 0);
        cr_assert_eq(send_item(cx, &good, 0, i), 0);
    }
    ac_runtime_run(rt);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.failed, 1);
    cr_assert_eq(st.dead_letters, 3);
    cr_assert_eq(atomic_load(&g_items), 3, "the other actor is unaffected");
    cr_assert_eq(send_item(cx, &bad, 0, 3), AC_ENOTFOUND);
    ac_runtime_destroy(rt);
    cr_assert_eq(atomic_load(&g_stops), 1, "no stop hook for the failed actor");
}

/* ---- start hooks ------------------------------------------------------- */

typedef struct starter {
    uint64_t seed;
    bool started_before_first_message;
} starter;

static _Atomic uint64_t g_start_ok;

static int starter_start(void *state, ac_ctx *cx, const void *args)
{
    starter *self = state;
    self->seed = *(const uint64_t *)args;
    if (self->seed == 0)
        return ac_fail(cx, 7), 0;
    /* Sending to itself from the start hook must not run it early. */
    ac_envelope *e = ac_envelope_new(cx, 0, 0);
    return e ? ac_send(cx, ac_self(cx), e) : AC_ENOMEM;
}

static int starter_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    (void)cx;
    (void)e;
    starter *self = state;
    if (self->seed != 0)
        atomic_fetch_add(&g_start_ok, 1);
    return 0;
}

static const char *const starter_names[] = {"hello"};
static const ac_actor_type starter_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.Starter",
    .state_size = sizeof(starter),
    .state_align = _Alignof(starter),
    .dispatch = starter_dispatch,
    .on_start = starter_start,
    .message_count = 1,
    .message_names = starter_names,
};

Test(lifecycle, start_hook_runs_with_its_args_before_the_first_message, .timeout = 30)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    for (uint64_t i = 1; i <= 100; i++) {
        ac_addr a;
        cr_assert_eq(ac_spawn(cx, &starter_type, &i, &a), 0);
    }
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&g_start_ok), 100);
    ac_runtime_destroy(rt);
}

Test(lifecycle, a_failing_start_hook_fails_the_spawn, .timeout = 30)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    uint64_t zero = 0;
    ac_addr a;
    memset(&a, 0, sizeof a);
    cr_assert_eq(ac_spawn(cx, &starter_type, &zero, &a), 7);
    cr_assert(ac_addr_is_nil(&a), "no address for an actor that never started");
    ac_runtime_run(rt);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.failed, 1);
    ac_runtime_destroy(rt);
}

/* ---- shutdown ------------------------------------------------------------ */

typedef struct sender_arg {
    ac_runtime *rt;
    ac_addr to;
    uint32_t id;
    uint64_t accepted;
    int unexpected;  /* Criterion asserts only on the test's own thread */
} sender_arg;

/* Senders that have had 100 sends accepted: the shutdown waits for all
 * of them, so that it starts with messages in flight however late a
 * loaded machine runs the threads. */
static _Atomic uint64_t g_sending;

static void *sender_main(void *p)
{
    sender_arg *s = p;
    ac_ctx *cx = ac_runtime_ctx(s->rt);
    for (uint64_t i = 0; i < 200000; i++) {
        int rc = send_item(cx, &s->to, s->id, s->accepted);
        if (rc == 0) {
            if (++s->accepted == 100)
                atomic_fetch_add(&g_sending, 1);
        } else {
            if (rc != AC_ESHUTDOWN)
                s->unexpected = rc;
            break;
        }
    }
    return NULL;
}

Test(lifecycle, shutdown_with_messages_in_flight_handles_every_accepted_one, .timeout = 60)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    enum { SENDERS = 4 };
    sender_arg args[SENDERS];
    pthread_t threads[SENDERS];
    for (uint32_t i = 0; i < SENDERS; i++) {
        args[i] = (sender_arg){.rt = rt, .to = spawn_counter(cx), .id = i};
        pthread_create(&threads[i], NULL, sender_main, &args[i]);
    }
    cr_assert(wait_for(&g_sending, SENDERS), "the senders never got going");
    cr_assert_eq(ac_runtime_shutdown(rt), 0);
    uint64_t accepted = 0;
    for (int i = 0; i < SENDERS; i++) {
        pthread_join(threads[i], NULL);
        cr_assert_eq(args[i].unexpected, 0, "%s", ac_strerror(args[i].unexpected));
        accepted += args[i].accepted;
    }
    cr_assert_gt(accepted, 0);
    cr_assert_eq(atomic_load(&g_stopped_items), accepted, "accepted %lu, handled %lu",
                 (unsigned long)accepted, (unsigned long)atomic_load(&g_stopped_items));
    cr_assert_eq(atomic_load(&g_fifo_violations), 0);
    cr_assert_eq(atomic_load(&g_stops), SENDERS);
    ac_addr a;
    cr_assert_eq(ac_spawn(cx, &counter_type, NULL, &a), AC_ESHUTDOWN);
    cr_assert_eq(send_item(cx, &args[0].to, 0, 0), AC_ESHUTDOWN);
    cr_assert_eq(ac_runtime_shutdown(rt), 0, "idempotent");
    ac_runtime_destroy(rt);
}

Test(lifecycle, malformed_worker_count_is_refused, .timeout = 30)
{
    setenv("AC_WORKERS", "two", 1);
    ac_config cfg;
    ac_config_init(&cfg);
    ac_runtime *rt = (ac_runtime *)1;
    cr_assert_eq(ac_runtime_create(&rt, &cfg), AC_EINVAL);
    cr_assert_null(rt);
    setenv("AC_WORKERS", "3", 1);
    ac_config_init(&cfg);
    cr_assert_eq(cfg.workers, 3);
    cfg.workers = AC_MAX_WORKERS + 1;
    cr_assert_eq(ac_runtime_create(&rt, &cfg), AC_EINVAL);
}

Test(lifecycle, every_error_code_has_a_description, .timeout = 10)
{
    for (int code = AC_ESTATE; code <= AC_OK; code++)
        cr_assert_str_neq(ac_strerror(code), "unknown error", "code %d", code);
    cr_assert_str_eq(ac_strerror(12345), "unknown error");
}
