/*
 * test_reports.c — what a program is told about failures and losses: a
 * send to a gone actor is a dead letter, not the sender's failure (issue
 * 13's reproduction); a failed actor is reported once, to the failure
 * hook, with its supervisor's action; an ask nobody answers is reported
 * by ac_runtime_run.
 */
#include "fixtures.h"
#include "reports.actor.h"

#include <stdio.h>

static _Atomic uint64_t handled;

int reports_Sink_on_note(reports_Sink *self, ac_ctx *cx AC_UNUSED, const reports_Sink_note *m)
{
    self->seen += m->n;
    atomic_fetch_add(&handled, 1);
    return ac_stop_self(cx);
}

int reports_Relay_on_relay(reports_Relay *self, ac_ctx *cx, const reports_Relay_relay *m)
{
    self->relayed++;
    atomic_fetch_add(&handled, 1);
    return reports_Sink_send_note(cx, m->sink, m->n);  /* the README's idiom */
}

int reports_Mute_on_question(reports_Mute *self AC_UNUSED, ac_ctx *cx AC_UNUSED,
                             const reports_Mute_question *m AC_UNUSED)
{
    return 0;  /* never answers */
}

static int on_answer(void *self, ac_ctx *cx AC_UNUSED, int status AC_UNUSED,
                     const reports_Mute_question_reply *reply AC_UNUSED, void *arg AC_UNUSED)
{
    ((reports_Asker *)self)->answers++;
    return 0;
}

int reports_Asker_on_go(reports_Asker *self AC_UNUSED, ac_ctx *cx, const reports_Asker_go *m)
{
    return reports_Mute_ask_question(cx, m->whom, 7, 0, on_answer, NULL);
}

/* The failure hook of these tests: keeps the reports. */
static ac_failure seen[8];
static _Atomic unsigned nseen;

static void keep(ac_ctx *cx AC_UNUSED, const ac_failure *f, void *arg AC_UNUSED)
{
    unsigned i = atomic_fetch_add(&nseen, 1);
    if (i < 8)
        seen[i] = *f;
}

/* Issue 13's reproduction: the sink stops after one note; the relay's
 * second note finds it gone. Before, that send's AC_ENOTFOUND failed the
 * relay in silence (handled 2, stopped 1, failed 1, dead letters 1). */
Test(reports, a_send_to_a_gone_actor_does_not_fail_the_sender, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_runtime_set_failure_hook(rt, keep, NULL);
    ac_ctx *cx = ac_runtime_ctx(rt);
    reports_Sink_ref sink;
    reports_Relay_ref relay;
    cr_assert_eq(reports_Sink_spawn(cx, &sink), 0);
    cr_assert_eq(reports_Relay_spawn(cx, &relay), 0);
    cr_assert_eq(reports_Relay_send_relay(cx, relay, sink, 1), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(reports_Relay_send_relay(cx, relay, sink, 2), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(ac_runtime_shutdown(rt), 0);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(atomic_load(&handled), 3);  /* relay 2, sink 1 */
    cr_assert_eq(st.stopped, 2, "the relay stops at shutdown, as any live actor");
    cr_assert_eq(st.failed, 0);
    cr_assert_eq(st.dead_letters, 1);
    cr_assert_eq(st.refused, 1);
    cr_assert_eq(atomic_load(&nseen), 0, "nothing failed, nothing reported");
    cr_assert_eq(st.sends + st.refused,
                 st.messages + st.dead_letters + st.mailbox_drops + st.node_forwarded);
    ac_runtime_destroy(rt);
}

Test(reports, the_checked_send_still_tells_a_gone_target, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    reports_Sink_ref sink;
    cr_assert_eq(reports_Sink_spawn(cx, &sink), 0);
    cr_assert_eq(reports_Sink_send_note_checked(cx, sink, 1), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(reports_Sink_send_note_checked(cx, sink, 2), AC_ENOTFOUND);
    cr_assert_eq(reports_Sink_send_note(cx, sink, 3), 0);
    cr_assert_eq(reports_Sink_send_note(cx, reports_Sink_ref_nil(), 4), 0);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.dead_letters, 3, "all three counted alike");
    cr_assert_eq(st.refused, 3);
    ac_runtime_destroy(rt);
}

Test(reports, nil_references_are_made_and_recognised, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    reports_Sink_ref nil = reports_Sink_ref_nil(), sink;
    cr_assert(reports_Sink_ref_is_nil(nil));
    cr_assert(reports_Sink_ref_is_nil(reports_Sink_ref_self(cx)), "no actor runs in main");
    cr_assert_eq(reports_Sink_spawn(cx, &sink), 0);
    cr_assert_not(reports_Sink_ref_is_nil(sink));
    ac_runtime_destroy(rt);
}

Test(reports, a_failure_is_reported_once_with_its_type_tag_and_code, .timeout = 30)
{
    ac_runtime *rt = make_runtime(2);
    ac_runtime_set_failure_hook(rt, keep, NULL);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr c = spawn_counter(cx);
    cr_assert_eq(send_tag(cx, &c, COUNTER_FAIL), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(atomic_load(&nseen), 1);
    const ac_failure *f = &seen[0];
    cr_assert(ac_addr_eq(&f->who, &c));
    cr_assert_eq(f->type, &counter_type);
    cr_assert_eq(f->tag, COUNTER_FAIL);
    cr_assert_str_eq(f->tag_name, "fail");
    cr_assert_eq(f->code, 42);
    cr_assert_eq(f->action, AC_FAILURE_UNSUPERVISED);
    cr_assert(ac_addr_is_nil(&f->supervisor));
    char line[256], who[17];
    ac_failure_format(f, line, sizeof line);
    ac_addr_format(&c, who, 8);
    char want[256];
    snprintf(want, sizeof want, "actorc: actor tests.Counter %s failed handling fail: code 42; "
             "supervisor: none", who);
    cr_assert_str_eq(line, want);
    ac_runtime_destroy(rt);
}

static int no_dispatch(void *state AC_UNUSED, ac_ctx *cx AC_UNUSED, ac_envelope *e AC_UNUSED)
{
    return AC_EBADTAG;
}

static int fail_start(void *state AC_UNUSED, ac_ctx *cx AC_UNUSED, const void *args AC_UNUSED)
{
    return 44;
}

static const ac_actor_type failing_start_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.FailingStart",
    .dispatch = no_dispatch,
    .on_start = fail_start,
};

/* A turn moves its mailbox's tail in its context and stores it in the
 * block once (actor.c, turn_loop): the report of a failure in the middle
 * of a batch must still name the message that failed, not the one the
 * batch began with (the block's tail until the turn ends). */
Test(reports, a_failure_in_the_middle_of_a_batch_names_its_own_tag, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_runtime_set_failure_hook(rt, keep, NULL);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr c = spawn_counter(cx);
    /* Queued before the run: one turn takes them all. */
    for (int i = 0; i < 5; i++)
        cr_assert_eq(send_tag(cx, &c, COUNTER_ITEM), 0);
    cr_assert_eq(send_tag(cx, &c, COUNTER_FAIL), 0);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(send_tag(cx, &c, COUNTER_ITEM), 0);  /* dead letters */
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(atomic_load(&nseen), 1);
    cr_assert_eq(seen[0].tag, COUNTER_FAIL);
    cr_assert_str_eq(seen[0].tag_name, "fail");
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.messages, 6);
    cr_assert_eq(st.dead_letters, 3);
    ac_runtime_destroy(rt);
}

Test(reports, the_line_names_an_ac_code_and_the_supervisors_action, .timeout = 30)
{
    ac_failure f;
    memset(&f, 0, sizeof f);
    memset(&f.who, 0xab, sizeof f.who);
    f.type = &counter_type;
    f.tag = 77;  /* not one of its messages */
    f.code = AC_EFAILED;
    f.action = AC_FAILURE_GAVE_UP;
    char line[256], want[256];
    ac_failure_format(&f, line, sizeof line);
    snprintf(want, sizeof want, "actorc: actor tests.Counter abababababababab failed handling "
             "tag 77: %s (-8); supervisor: gave up (too many restarts)", ac_strerror(AC_EFAILED));
    cr_assert_str_eq(line, want);
}

Test(reports, a_failing_start_hook_is_reported_as_the_start, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_runtime_set_failure_hook(rt, keep, NULL);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr out;
    cr_assert_eq(ac_spawn(cx, &failing_start_type, NULL, &out), 44);
    cr_assert_eq(atomic_load(&nseen), 1);
    cr_assert_eq(seen[0].tag, AC_TAG_START);
    cr_assert_str_eq(seen[0].tag_name, "start");
    cr_assert_eq(seen[0].code, 44);
    ac_runtime_destroy(rt);
}

/* A supervised child is reported by its supervisor, with what it did. */
static void supervised(uint32_t max_restarts, uint32_t want_action)
{
    ac_runtime *rt = make_runtime(0);
    ac_runtime_set_failure_hook(rt, keep, NULL);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_child_spec kid = {.type = &counter_type, .restart = AC_RESTART_PERMANENT};
    ac_supervisor_spec spec = {.strategy = AC_ONE_FOR_ONE, .max_restarts = max_restarts,
                               .within_ms = 60000, .children = &kid, .nchildren = 1};
    ac_addr sup, child;
    cr_assert_eq(ac_supervisor_start(cx, &spec, &sup, &child), 0);
    cr_assert_eq(send_tag(cx, &child, COUNTER_FAIL), 0);
    ac_runtime_run(rt);
    cr_assert_geq(atomic_load(&nseen), 1);
    const ac_failure *f = &seen[0];
    cr_assert(ac_addr_eq(&f->who, &child));
    cr_assert_eq(f->type, &counter_type);
    cr_assert_str_eq(f->tag_name, "fail");
    cr_assert_eq(f->code, 42);
    cr_assert_eq(f->action, want_action);
    cr_assert(ac_addr_eq(&f->supervisor, &sup));
    if (want_action == AC_FAILURE_GAVE_UP) {
        /* The supervisor giving up is a failure of its own, reported. */
        cr_assert_eq(atomic_load(&nseen), 2);
        cr_assert(ac_addr_eq(&seen[1].who, &sup));
    } else {
        cr_assert_eq(atomic_load(&nseen), 1);
    }
    ac_runtime_destroy(rt);
}

Test(reports, a_restarted_child_is_reported_by_its_supervisor, .timeout = 30)
{
    supervised(3, AC_FAILURE_RESTARTED);
}

Test(reports, a_supervisor_that_gives_up_says_so, .timeout = 30)
{
    supervised(0, AC_FAILURE_GAVE_UP);
}

/* A supervised child whose start hook fails has no down (it was not
 * watched yet): the supervisors' died hook reports it, as the start, also
 * in a runtime where nothing else had used a service before it. The
 * supervisor's own start then fails, unsupervised. */
Test(reports, a_supervised_child_failing_its_start_is_reported_as_such, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_runtime_set_failure_hook(rt, keep, NULL);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_child_spec kid = {.type = &failing_start_type, .restart = AC_RESTART_PERMANENT};
    ac_supervisor_spec spec = {.strategy = AC_ONE_FOR_ONE, .max_restarts = 3,
                               .within_ms = 60000, .children = &kid, .nchildren = 1};
    ac_addr sup;
    cr_assert_eq(ac_supervisor_start(cx, &spec, &sup, NULL), 44);
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&nseen), 2, "the child's report and the supervisor's");
    const ac_failure *f = &seen[0];
    cr_assert_eq(f->type, &failing_start_type);
    cr_assert_eq(f->tag, AC_TAG_START);
    cr_assert_eq(f->code, 44);
    cr_assert_eq(f->action, AC_FAILURE_START_FAILED);
    cr_assert_str_eq(seen[1].type->name, "actorc.Supervisor");
    cr_assert_eq(seen[1].action, AC_FAILURE_UNSUPERVISED);
    cr_assert_eq(seen[1].tag, AC_TAG_START);
    ac_runtime_destroy(rt);
}

/* An ask whose reply never comes: at quiescence ac_runtime_run says how
 * many are still waiting, instead of returning as if all were done. */
Test(reports, run_counts_the_asks_left_waiting_at_quiescence, .timeout = 30)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    reports_Mute_ref mute;
    reports_Asker_ref a, b;
    cr_assert_eq(reports_Mute_spawn(cx, &mute), 0);
    cr_assert_eq(reports_Asker_spawn(cx, &a), 0);
    cr_assert_eq(reports_Asker_spawn(cx, &b), 0);
    cr_assert_eq(ac_runtime_run(rt), 0, "nothing asked yet");
    cr_assert_eq(reports_Asker_send_go(cx, a, mute), 0);
    cr_assert_eq(reports_Asker_send_go(cx, b, mute), 0);
    cr_assert_eq(ac_runtime_run(rt), 2);
    cr_assert_eq(ac_stop(cx, &a.addr), 0);  /* its ask dies with it */
    cr_assert_eq(ac_runtime_run(rt), 1);
    ac_runtime_destroy(rt);
}

/* ---- a child that fails before its supervisor watches it ------------------- */

/* Sends itself `boom` from its start hook and fails handling it: with
 * workers, the child can run (and fail) on another worker before the
 * supervisor that spawned it has installed its monitor. Before, that
 * failure came to the supervisor as a `noproc` down, which carries no
 * failure, and it was reported by no one. */
enum { EARLY_BOOM = 0 };

static _Atomic uint64_t early_reports;     /* of children, with their tag */
static _Atomic uint64_t early_wrong;       /* a child's report without it */
static _Atomic uint64_t sup_reports;       /* supervisors that gave up */

static int early_dispatch(void *state AC_UNUSED, ac_ctx *cx AC_UNUSED, ac_envelope *e)
{
    return e->tag == EARLY_BOOM ? 45 : AC_EBADTAG;
}

static int early_start(void *state AC_UNUSED, ac_ctx *cx, const void *args AC_UNUSED)
{
    return send_tag(cx, ac_self(cx), EARLY_BOOM);
}

static const char *const early_names[] = {"boom"};

static const ac_actor_type early_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.EarlyFail",
    .dispatch = early_dispatch,
    .on_start = early_start,
    .message_count = 1,
    .message_names = early_names,
};

static void count_early(ac_ctx *cx AC_UNUSED, const ac_failure *f, void *arg AC_UNUSED)
{
    if (f->type != &early_type) {
        atomic_fetch_add(&sup_reports, 1);
        return;
    }
    bool right = f->tag == EARLY_BOOM && f->code == 45 &&
                 f->action != AC_FAILURE_START_FAILED && !ac_addr_is_nil(&f->supervisor);
    atomic_fetch_add(right ? &early_reports : &early_wrong, 1);
}

Test(reports, a_child_failing_before_it_is_watched_is_reported_once, .timeout = 120)
{
    ac_runtime *rt = make_runtime(2);
    ac_runtime_set_failure_hook(rt, count_early, NULL);
    ac_ctx *cx = ac_runtime_ctx(rt);
    /* Temporary children (started from main, each once) and permanent
     * ones (restarted by the supervisor on a worker until it gives up). */
    ac_child_spec kids[8];
    for (int k = 0; k < 8; k++)
        kids[k] = (ac_child_spec){.type = &early_type,
                                  .restart = k < 4 ? AC_RESTART_TEMPORARY
                                                   : AC_RESTART_PERMANENT};
    ac_supervisor_spec spec = {.strategy = AC_ONE_FOR_ONE, .max_restarts = 16,
                               .within_ms = 60000, .children = kids, .nchildren = 8};
    for (int round = 0; round < 200; round++) {
        ac_addr sup, children[8];
        int rc = ac_supervisor_start(cx, &spec, &sup, children);
        /* A child that fails before the call returns may have made the
         * supervisor give up already: fine, it is counted all the same. */
        cr_assert(rc == 0 || rc == AC_ENOTFOUND, "start: %d", rc);
        ac_runtime_run(rt);
    }
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_gt(st.failed, 0);
    cr_assert_eq(atomic_load(&early_wrong), 0, "every child's report has its tag and code");
    cr_assert_eq(atomic_load(&early_reports) + atomic_load(&sup_reports), st.failed,
                 "reports %lu + %lu, failures %lu", (unsigned long)atomic_load(&early_reports),
                 (unsigned long)atomic_load(&sup_reports), (unsigned long)st.failed);
    ac_runtime_destroy(rt);
}
