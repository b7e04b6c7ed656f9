/*
 * test_alloc_fail.c — every allocation failure is survivable: a workload
 * using every service (spawns, names, groups, monitors, links, timers, an
 * ask with its reply and timeout, a supervisor and its children, an inbox)
 * runs once to count its allocations, then again for each allocation N,
 * with N failing once and with N and every later one failing. Each run
 * must end — no crash, no hang — with 0 or a negative AC_E code, and
 * destroy what it made (AddressSanitizer's leak check holds CI to that).
 */
#include "alloc_count.h"
#include "sweep.actor.h"

#include <criterion/criterion.h>

int sweep_Cell_on_start(sweep_Cell *self, ac_ctx *cx, const sweep_Cell_start_args *m)
{
    (void)cx;
    self->n = m->n;
    return 0;
}

int sweep_Cell_on_add(sweep_Cell *self, ac_ctx *cx, const sweep_Cell_add *m)
{
    (void)cx;
    self->n += m->by;
    return 0;
}

int sweep_Cell_on_get(sweep_Cell *self, ac_ctx *cx, const sweep_Cell_get *m)
{
    return sweep_Cell_reply_get(cx, &m->reply_to, self->n);
}

static int pulled(void *state, ac_ctx *cx, int status, const sweep_Cell_get_reply *reply, void *arg)
{
    (void)cx;
    (void)arg;
    sweep_Cell *self = state;
    if (status == 0)
        self->n += reply->n;
    return 0;
}

int sweep_Cell_on_pull(sweep_Cell *self, ac_ctx *cx, const sweep_Cell_pull *m)
{
    (void)self;
    int rc = ac_link(cx, &m->peer.addr);
    return rc != 0 ? rc : sweep_Cell_ask_get(cx, m->peer, 50, pulled, NULL);
}

/* Some calls return a count (publish: the members reached); an error is
 * negative. */
#define TRY(call) do { if ((rc = (call)) < 0) goto out; } while (0)

/* One run; 0 when everything worked. */
static int workload(uint64_t *result)
{
    ac_config cfg;
    ac_config_init(&cfg);
    cfg.workers = 0;    /* one schedule: allocation N is the same N each run */
    ac_runtime *rt;
    int rc = ac_runtime_create(&rt, &cfg);
    if (rc != 0)
        return rc;
    ac_runtime_set_failure_hook(rt, ac_failure_quiet, NULL);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_inbox *ib = NULL;
    ac_envelope *env = NULL;
    sweep_Cell_ref a, b;
    TRY(cx == NULL ? AC_ENOMEM : 0);
    TRY(sweep_Cell_spawn(cx, &a, 1));
    TRY(sweep_Cell_spawn(cx, &b, 2));
    TRY(ac_register(cx, "a", &a.addr));
    TRY(ac_group_join(cx, "cells", &a.addr));
    TRY(ac_group_join(cx, "cells", &b.addr));
    TRY(ac_inbox_create(cx, &ib));
    TRY(ac_monitor(cx, ac_inbox_addr(ib), &b.addr, NULL));
    TRY(sweep_Cell_send_add_after(cx, a, 10, 5, NULL));
    uint64_t n = 100;
    ac_child_spec child = { .type = &sweep_Cell_type, .args = &n, .args_size = sizeof n,
                            .restart = AC_RESTART_PERMANENT, .name = "child" };
    ac_supervisor_spec spec = { .strategy = AC_ONE_FOR_ONE, .max_restarts = 3, .within_ms = 100,
                                .children = &child, .nchildren = 1 };
    ac_addr sup;
    TRY(ac_supervisor_start(cx, &spec, &sup, NULL));
    TRY(sweep_Cell_send_pull(cx, a, b));
    TRY(sweep_Cell_publish_add(cx, "cells", 1000));
    TRY(ac_runtime_run(rt));
    TRY(ac_runtime_advance(rt, 10));
    TRY(ac_runtime_run(rt));
    TRY(ac_stop(cx, &b.addr));
    TRY(ac_inbox_recv(cx, ib, AC_TAG_DOWN, 0, &env));
    ac_envelope_free(cx, env);
    sweep_Cell_get_reply *got;
    TRY(sweep_Cell_ask_get_wait(cx, a, AC_FOREVER, &got));
    *result = got->n;
    ac_reply_free(cx, got);
    rc = 0;
out:
    if (ib != NULL)
        ac_inbox_destroy(cx, ib);
    int drc = ac_runtime_destroy(rt);
    return rc != 0 ? rc : drc;
}

Test(alloc_fail, every_allocation_of_a_workload_using_every_service)
{
    uint64_t result = 0;
    /* The second run counts: the first also makes what a process makes
     * once (the thread's context cache, libc's buffers). */
    cr_assert_eq(workload(&result), 0);
    uint64_t before = alloc_count();
    cr_assert_eq(workload(&result), 0);
    uint64_t total = alloc_count() - before;
    /* a: 1, +1000 published, +1002 pulled from b (its 2 and its 1000), +5
     * from the timer. */
    cr_assert_eq(result, 1 + 1000 + 1002 + 5, "a counted %llu", (unsigned long long)result);
    cr_assert_gt(total, 20, "the workload made only %llu allocations", (unsigned long long)total);

    unsigned failed_runs = 0;
    for (uint64_t n = 1; n <= total; n++) {
        for (int forever = 0; forever <= 1; forever++) {
            alloc_fail_from(n, forever);
            int rc = workload(&result);
            uint64_t failures = alloc_fail_from(0, false);
            cr_assert(rc <= 0 && rc >= AC_ENOCONNECTION,
                      "allocation %llu failing%s: the workload returned %d",
                      (unsigned long long)n, forever ? " from then on" : "", rc);
            failed_runs += rc != 0;
            cr_assert_geq(failures, 1, "allocation %llu was never reached", (unsigned long long)n);
        }
    }
    cr_log_info("alloc_fail: %llu allocations, %u of %llu runs ended in an error",
                (unsigned long long)total, failed_runs, (unsigned long long)(2 * total));
    cr_assert_gt(failed_runs, 0);
}

/* Many actors, then memory gone (issue 26: 4,076,736 actors spawned until
 * allocation failed took destroy 248 s, each stop and each kill asking the
 * allocator once more). The walks give up at the first envelope they
 * cannot get: shutdown ends after a handful of failed allocations, not one
 * an actor, counts the actors it left (their stop hooks did not run), and
 * says AC_ENOMEM; destroy then frees them as they are. */
static void shutdown_out_of_memory(int workers)
{
    enum { N = 20000 };
    ac_config cfg;
    ac_config_init(&cfg);
    cfg.workers = workers;
    ac_runtime *rt;
    cr_assert_eq(ac_runtime_create(&rt, &cfg), 0);
    ac_runtime_set_failure_hook(rt, ac_failure_quiet, NULL);
    ac_ctx *cx = ac_runtime_ctx(rt);
    cr_assert_not_null(cx);
    for (uint64_t i = 0; i < N; i++) {
        sweep_Cell_ref c;
        cr_assert_eq(sweep_Cell_spawn(cx, &c, i), 0);
    }
    cr_assert_eq(ac_runtime_run(rt), 0);

    alloc_fail_from(1, true);
    int rc = ac_runtime_shutdown(rt);
    uint64_t failures = alloc_fail_from(0, false);
    ac_stats s;
    ac_runtime_stats(rt, &s);
    cr_expect_eq(rc, AC_ENOMEM);
    cr_expect_gt(s.shutdown_left, 0);
    cr_expect_eq(s.stopped + s.killed + s.shutdown_left, N,
                 "stopped %llu killed %llu left %llu", (unsigned long long)s.stopped,
                 (unsigned long long)s.killed, (unsigned long long)s.shutdown_left);
    cr_expect_lt(failures, 64, "%llu allocations failed: one an actor",
                 (unsigned long long)failures);
    cr_expect_eq(ac_runtime_destroy(rt), 0, "shut down already");
}

Test(alloc_fail, shutdown_out_of_memory_ends_and_counts_what_it_left, .timeout = 120)
{
    shutdown_out_of_memory(0);
}

Test(alloc_fail, shutdown_out_of_memory_with_workers, .timeout = 120)
{
    shutdown_out_of_memory(2);
}

/* Destroy alone, with memory still gone: it returns AC_ENOMEM. */
Test(alloc_fail, destroy_out_of_memory_says_enomem, .timeout = 120)
{
    ac_config cfg;
    ac_config_init(&cfg);
    cfg.workers = 0;
    ac_runtime *rt;
    cr_assert_eq(ac_runtime_create(&rt, &cfg), 0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    for (uint64_t i = 0; i < 1000; i++) {
        sweep_Cell_ref c;
        cr_assert_eq(sweep_Cell_spawn(cx, &c, i), 0);
    }
    alloc_fail_from(1, true);
    int rc = ac_runtime_destroy(rt);
    alloc_fail_from(0, false);
    cr_expect_eq(rc, AC_ENOMEM);
}

/* Memory enough: nothing is left, and the counter says 0. */
Test(alloc_fail, a_shutdown_with_memory_leaves_nothing, .timeout = 60)
{
    ac_config cfg;
    ac_config_init(&cfg);
    cfg.workers = 2;
    ac_runtime *rt;
    cr_assert_eq(ac_runtime_create(&rt, &cfg), 0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    for (uint64_t i = 0; i < 1000; i++) {
        sweep_Cell_ref c;
        cr_assert_eq(sweep_Cell_spawn(cx, &c, i), 0);
    }
    cr_assert_eq(ac_runtime_shutdown(rt), 0);
    ac_stats s;
    ac_runtime_stats(rt, &s);
    cr_expect_eq(s.shutdown_left, 0);
    cr_expect_eq(s.stopped, 1000);
    cr_expect_eq(ac_runtime_destroy(rt), 0);
}
