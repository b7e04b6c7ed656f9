/*
 * test_ask_down.c — an ask whose target dies before answering is answered
 * at once with AC_ENOTFOUND (CAF's request_receiver_down): a request
 * queued behind a stop, a failure or a kill, or held in a stash when its
 * actor dies, reaches its asker (a blocking ask, a continuation, a
 * continuation with an inline context) long before its timeout, through
 * the timeout's own path; the request is still one dead letter, the
 * answer a system message, and the counters reconcile.
 *
 * The timeouts are 60 s: without the answer, the workers' tests would sit
 * them out and the deterministic ones would find the ask still pending.
 */
#include "fixtures.h"

#include <stdint.h>

#define LONG_MS 60000
#define KILL 100u  /* continuation_answered: ac_kill instead of a message */

enum {
    S_REQ = 0,     /* a request: echoed, or stashed while `stashing` */
    S_STOP = 1,    /* stops itself */
    S_FAIL = 2,    /* fails */
    S_STASH = 3,   /* stash requests from now on */
    S_COUNT
};

typedef struct sreq {
    ac_reply_to reply_to;
    uint64_t n;
} sreq;

typedef struct server {
    bool stashing;
} server;

static _Atomic uint64_t g_handled;   /* requests answered by the server */
static dead_count g_dead = {{S_REQ}, 1, 0}; /* requests the dead-letter hook saw */

static int server_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    server *self = state;
    switch (e->tag) {
    case S_REQ: {
        if (self->stashing)
            return ac_stash(cx);
        const sreq *r = ac_envelope_payload(e);
        ac_envelope *rep = ac_reply_new(cx, &r->reply_to, sizeof(uint64_t));
        cr_assert_not_null(rep);
        *(uint64_t *)ac_reply_body(rep) = r->n + 1;
        atomic_fetch_add(&g_handled, 1);
        return ac_reply(cx, &r->reply_to, rep);
    }
    case S_STOP:
        return ac_stop_self(cx);
    case S_FAIL:
        return -5;
    case S_STASH:
        self->stashing = true;
        return 0;
    }
    return AC_EBADTAG;
}

static const char *const server_names[] = {"req", "stop", "fail", "stash"};

static const ac_actor_type server_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.DownServer",
    .state_size = sizeof(server),
    .state_align = _Alignof(server),
    .dispatch = server_dispatch,
    .message_count = S_COUNT,
    .message_names = server_names,
};

/* The asker: on A_GO it asks `target` once, by ac_ask or ac_ask_ctx. */
enum { A_GO = 0, A_COUNT };

typedef struct go_msg {
    ac_addr target;
    bool with_ctx;
} go_msg;

typedef struct seen {
    _Atomic uint32_t calls;
    _Atomic int status;
    _Atomic bool body_null;
    _Atomic uint64_t ctx;  /* what the inline context held */
    _Atomic int ask_rc;
} seen;

static seen g_seen;

static int on_answer(void *state, ac_ctx *cx, int status, const void *body, void *arg)
{
    (void)state;
    (void)cx;
    atomic_store(&g_seen.status, status);
    atomic_store(&g_seen.body_null, body == NULL);
    if (arg != NULL)
        atomic_store(&g_seen.ctx, *(const uint64_t *)arg);
    atomic_fetch_add(&g_seen.calls, 1);
    return 0;
}

static ac_envelope *new_req(ac_ctx *cx, uint64_t n)
{
    ac_envelope *e = ac_envelope_new(cx, S_REQ, sizeof(sreq));
    cr_assert_not_null(e);
    sreq *r = ac_envelope_payload(e);
    memset(r, 0, sizeof *r);
    r->n = n;
    return e;
}

static int asker_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    (void)state;
    if (e->tag != A_GO)
        return AC_EBADTAG;
    const go_msg *g = ac_envelope_payload(e);
    uint64_t ctx = 0xC0FFEE;
    int rc = g->with_ctx ? ac_ask_ctx(cx, &g->target, NULL, NULL, new_req(cx, 1), LONG_MS,
                                      NULL, (ac_any_fn)on_answer, &ctx, sizeof ctx)
                         : ac_ask(cx, &g->target, new_req(cx, 1), LONG_MS, on_answer, NULL);
    atomic_store(&g_seen.ask_rc, rc);
    return 0;
}

static const char *const asker_names[] = {"go"};

static const ac_actor_type asker_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.DownAsker",
    .dispatch = asker_dispatch,
    .message_count = A_COUNT,
    .message_names = asker_names,
};

/* ---- helpers ------------------------------------------------------------------ */

static ac_runtime *runtime(int workers)
{
    ac_runtime *rt = make_runtime(workers);
    ac_runtime_set_dead_letter_hook(rt, count_dead_letters, &g_dead);
    return rt;
}

static ac_addr spawn_server(ac_ctx *cx)
{
    ac_addr a;
    cr_assert_eq(ac_spawn(cx, &server_type, NULL, &a), 0);
    return a;
}

static void go(ac_ctx *cx, const ac_addr *asker, const ac_addr *target, bool with_ctx)
{
    ac_envelope *e = ac_envelope_new(cx, A_GO, sizeof(go_msg));
    cr_assert_not_null(e);
    *(go_msg *)ac_envelope_payload(e) = (go_msg){*target, with_ctx};
    cr_assert_eq(ac_send(cx, asker, e), 0);
}

/* The request was one dead letter, seen once by the hook, and nothing
 * is unaccounted for. */
static void assert_counts(ac_runtime *rt, uint64_t dead)
{
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.dead_letters, dead);
    cr_assert_eq(atomic_load(&g_dead.n), dead);
    assert_sends_accounted(rt);
    cr_assert_eq(st.stashed, 0);
    cr_assert_eq(atomic_load(&g_handled), 0, "the server answered nothing itself");
}

/* A continuation ask, its request queued behind `tag` (or, with `stash`,
 * stashed first), answered in deterministic mode before any time passes. */
static void continuation_answered(uint32_t tag, bool stash, bool with_ctx)
{
    ac_runtime *rt = runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr srv = spawn_server(cx), asker;
    cr_assert_eq(ac_spawn(cx, &asker_type, NULL, &asker), 0);
    if (stash) {
        /* The request is stashed, and the ask waits for it. */
        cr_assert_eq(send_tag(cx, &srv, S_STASH), 0);
        go(cx, &asker, &srv, with_ctx);
        cr_assert_eq(ac_runtime_run(rt), 1, "the ask waits");
        cr_assert_eq(stashed_now(rt), 1);
    } else {
        /* The asker runs first (it was made runnable first), so its
         * request queues behind `tag`. */
        go(cx, &asker, &srv, with_ctx);
    }
    if (tag == KILL)
        cr_assert_eq(ac_kill(cx, &srv), 0);
    else
        cr_assert_eq(send_tag(cx, &srv, tag), 0);
    cr_assert_eq(ac_runtime_run(rt), 0, "no ask is left waiting");
    cr_assert_eq(atomic_load(&g_seen.ask_rc), 0, "the ask went out");
    cr_assert_eq(atomic_load(&g_seen.calls), 1);
    cr_assert_eq(atomic_load(&g_seen.status), AC_ENOTFOUND);
    cr_assert(atomic_load(&g_seen.body_null));
    if (with_ctx)
        cr_assert_eq(atomic_load(&g_seen.ctx), 0xC0FFEE, "the context came with it");
    /* The timeout was cancelled: nothing more, ever. */
    ac_runtime_advance(rt, 2 * LONG_MS);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(atomic_load(&g_seen.calls), 1, "answered exactly once");
    assert_counts(rt, 1);
    ac_runtime_destroy(rt);
}

/* ---- continuations ------------------------------------------------------------ */

Test(ask_down, continuation_behind_a_stop_is_answered_enotfound)
{
    continuation_answered(S_STOP, false, false);
}

Test(ask_down, continuation_behind_a_failure_is_answered_enotfound)
{
    continuation_answered(S_FAIL, false, false);
}

Test(ask_down, continuation_of_a_killed_target_is_answered_enotfound)
{
    continuation_answered(KILL, false, false);
}

Test(ask_down, continuation_with_a_context_behind_a_failure_gets_its_context)
{
    continuation_answered(S_FAIL, false, true);
}

Test(ask_down, stashed_request_of_a_target_that_fails_is_answered_once)
{
    continuation_answered(S_FAIL, true, false);
}

Test(ask_down, stashed_request_of_a_target_that_stops_is_answered_once)
{
    continuation_answered(S_STOP, true, true);
}

/* ---- blocking asks --------------------------------------------------------------- */

/* Deterministic: the request is queued behind the failure for certain;
 * before, the ask found nothing left to run and timed out. */
Test(ask_down, blocking_ask_behind_a_failure_returns_enotfound)
{
    ac_runtime *rt = runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr srv = spawn_server(cx);
    cr_assert_eq(send_tag(cx, &srv, S_FAIL), 0);
    ac_envelope *reply = (ac_envelope *)&reply;
    cr_assert_eq(ac_ask_wait(cx, &srv, new_req(cx, 1), LONG_MS, &reply), AC_ENOTFOUND);
    cr_assert_null(reply);
    cr_assert_eq(ac_runtime_run(rt), 0);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.failed, 1);
    cr_assert_geq(st.system_messages, 1, "the answer is a system message");
    assert_counts(rt, 1);
    ac_runtime_destroy(rt);
}

/* With workers, a stop sent first: the request is queued behind it or
 * finds the server gone; either way the ask ends now, not in 60 s. */
Test(ask_down, blocking_ask_behind_a_stop_with_two_workers_returns_enotfound)
{
    ac_runtime *rt = runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    for (int round = 0; round < 50; round++) {
        ac_addr srv = spawn_server(cx);
        cr_assert_eq(send_tag(cx, &srv, S_STOP), 0);
        ac_envelope *reply = (ac_envelope *)&reply;
        cr_assert_eq(ac_ask_wait(cx, &srv, new_req(cx, 1), LONG_MS, &reply), AC_ENOTFOUND);
        cr_assert_null(reply);
    }
    cr_assert_eq(ac_runtime_run(rt), 0);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.stopped, 50);
    /* Each request is one dead letter, queued at the death or refused at
     * the send. */
    cr_assert_eq(st.dead_letters, 50);
    cr_assert_eq(atomic_load(&g_dead.n), 50);
    assert_sends_accounted(rt);
    ac_runtime_destroy(rt);
}

/* A request that is no ask's (a plain send, its reply_to nil) is a dead
 * letter as before, and nothing answers it. */
Test(ask_down, plain_send_of_a_request_is_a_dead_letter_and_answers_nobody)
{
    ac_runtime *rt = runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr srv = spawn_server(cx);
    cr_assert_eq(send_tag(cx, &srv, S_FAIL), 0);
    cr_assert_eq(ac_send(cx, &srv, new_req(cx, 1)), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.system_messages, 0, "no answer went anywhere");
    assert_counts(rt, 1);
    ac_runtime_destroy(rt);
}
