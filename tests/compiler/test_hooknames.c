/*
 * test_hooknames.c — hooknames.actor through the runtime: with the hooks
 * spelled `hook start(...)`, `hook stop;`, a message may be called start,
 * stop, down or exit and reaches its handler, while the hooks (named
 * m_A_hook_start ... so that both fit) still run at spawn and at stop.
 * The old spelling, `on start(...)`, `on stop;`, still makes hooks.
 */
#include <criterion/criterion.h>

#include "hooknames.actor.h"
#include "helpers.h"

static struct {
    uint64_t start_at;
    int stop_messages, down_code, exit_n, hook_stops, old_stops;
} seen;

int hooknames_Job_hook_start(hooknames_Job *self, ac_ctx *cx,
                             const hooknames_Job_start_args *args)
{
    (void)cx;
    self->seed = args->seed;
    self->started++;
    return 0;
}

void hooknames_Job_hook_stop(hooknames_Job *self, ac_ctx *cx)
{
    (void)cx;
    self->stopped++;
    seen.hook_stops++;
}

int hooknames_Job_hook_down(hooknames_Job *self, ac_ctx *cx,
                            const ac_down *m)
{
    (void)self, (void)cx, (void)m;
    return 0;
}

int hooknames_Job_hook_exit(hooknames_Job *self, ac_ctx *cx,
                            const ac_exit *m)
{
    (void)self, (void)cx, (void)m;
    return 0;
}

int hooknames_Job_on_start(hooknames_Job *self, ac_ctx *cx,
                           const hooknames_Job_start *m)
{
    (void)cx;
    /* The start hook ran first, at spawn. */
    cr_expect_eq(self->started, 1);
    cr_expect_eq(self->seed, 7);
    self->last = m->at;
    seen.start_at = m->at;
    return 0;
}

int hooknames_Job_on_stop(hooknames_Job *self, ac_ctx *cx,
                          const hooknames_Job_stop *m)
{
    (void)self, (void)cx, (void)m;
    seen.stop_messages++;
    return 0;
}

int hooknames_Job_on_down(hooknames_Job *self, ac_ctx *cx,
                          const hooknames_Job_down *m)
{
    (void)self, (void)cx;
    seen.down_code = (int)m->code;
    return 0;
}

int hooknames_Job_on_exit(hooknames_Job *self, ac_ctx *cx,
                          const hooknames_Job_exit *m)
{
    (void)self, (void)cx;
    seen.exit_n = (int)m->n;
    return 0;
}

int hooknames_Old_on_start(hooknames_Old *self, ac_ctx *cx,
                           const hooknames_Old_start_args *args)
{
    (void)cx;
    self->seed = args->seed;
    return 0;
}

void hooknames_Old_on_stop(hooknames_Old *self, ac_ctx *cx)
{
    (void)cx;
    self->stopped++;
    seen.old_stops++;
}

int hooknames_Old_on_exit(hooknames_Old *self, ac_ctx *cx,
                          const hooknames_Old_exit *m)
{
    (void)cx;
    self->exits += m->n;
    return 0;
}

Test(hooknames, messages_named_like_hooks_reach_their_handlers)
{
    /* The messages are messages: Job has four, Old one. */
    cr_expect_eq(hooknames_Job_type.message_count, 4);
    cr_expect_eq(hooknames_Job_TAG_start, 0);
    cr_expect_eq(hooknames_Job_TAG_exit, 3);
    cr_expect_eq(hooknames_Old_type.message_count, 1);
    cr_expect_eq(hooknames_Old_TAG_exit, 0);
    cr_expect_not_null(hooknames_Job_type.on_start);
    cr_expect_not_null(hooknames_Job_type.on_stop);
    cr_expect_not_null(hooknames_Old_type.on_start);
    cr_expect_not_null(hooknames_Old_type.on_stop);

    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    hooknames_Job_ref job;
    hooknames_Old_ref old;
    cr_assert_eq(hooknames_Job_spawn(cx, &job, 7), 0);
    cr_assert_eq(hooknames_Old_spawn(cx, &old, 9), 0);
    cr_assert_eq(hooknames_Job_send_start(cx, job, 42), 0);
    cr_assert_eq(hooknames_Job_send_stop(cx, job), 0);
    cr_assert_eq(hooknames_Job_send_down(cx, job, 5), 0);
    cr_assert_eq(hooknames_Job_send_exit(cx, job, 3), 0);
    cr_assert_eq(hooknames_Old_send_exit(cx, old, 4), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);

    cr_expect_eq(seen.start_at, 42);
    /* The message stop is not a stop: the actor is still there. */
    cr_expect_eq(seen.stop_messages, 1);
    cr_expect_eq(seen.hook_stops, 0);
    cr_expect_eq(seen.down_code, 5);
    cr_expect_eq(seen.exit_n, 3);

    /* ac_stop runs the stop hooks, of both spellings. */
    cr_assert_eq(ac_stop(cx, &job.addr), 0);
    cr_assert_eq(ac_stop(cx, &old.addr), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_expect_eq(seen.hook_stops, 1);
    cr_expect_eq(seen.old_stops, 1);
    ac_runtime_destroy(rt);
}
