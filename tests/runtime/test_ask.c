/*
 * test_ask.c — request/reply through the raw calls of actorc.h (ac_ask,
 * ac_ask_wait, ac_reply_new, ac_reply, ac_reply_error), with hand-written
 * actor types, so that runtime/ask.c is also run under ThreadSanitizer (the
 * compiler suite's test_ask.c covers the generated wrappers, not under
 * TSan). One `node` type both answers requests and asks other nodes.
 */
#include "fixtures.h"
#include "services/services.h"  /* ac__ask_records, AC__ASK_INDEX_BITS */

#include <pthread.h>
#include <stdint.h>

/* ---- the node actor ----------------------------------------------------------- */

enum {
    T_REQ = 0,      /* payload req: answer as `op` says */
    T_RELEASE = 1,  /* answer every held request with n + 1 */
    T_GO = 2,       /* payload go: ask `count` requests of `target` */
    T_WAIT_IN_HANDLER = 3, /* try ac_ask_wait in a handler (refused) */
    T_FORGE = 4,    /* payload uint32_t: answer held requests with wrong ids */
    T_COUNT
};

enum { OP_ECHO = 0, OP_SILENT = 1, OP_HOLD = 2, OP_ERROR = 3 };

enum { FORGE_IDS = 0, FORGE_CROSSED = 1 };

/* A request: the ac_reply_to first, as the runtime requires. */
typedef struct req {
    ac_reply_to reply_to;
    uint32_t op;
    int32_t code;       /* OP_ERROR: the status to answer with */
    uint64_t n;
} req;

/* A reply's body. */
typedef struct answer {
    uint64_t n;         /* 2n + 1 for an echo, n + 1 for a held request */
    char text[16];
} answer;

enum { THEN_NOTHING = 0, THEN_STOP_SELF = 1, THEN_FAIL = 2 };

typedef struct go {
    ac_addr target;
    uint32_t op;
    int32_t code;
    uint64_t n;         /* the first request's n; then n + 1, ... */
    uint32_t timeout_ms;
    uint32_t count;
    uint32_t slot;      /* the first request's slot in g_slot */
    uint32_t then;
} go;

#define MAX_HELD 128

typedef struct node {
    uint32_t index;
    uint32_t nheld;
    req held[MAX_HELD];
} node;

/* What each asynchronous ask's continuation saw. */
typedef struct slot {
    _Atomic uint32_t calls;
    _Atomic int status;
    _Atomic uint64_t got;       /* the body's n */
    _Atomic bool body_null;
    _Atomic bool text_ok;
    _Atomic uint32_t asker;     /* the index in the state it ran with */
    _Atomic bool in_asker;      /* ac_self was the asker */
    ac_addr asker_addr;         /* set before the ask */
} slot;

#define SLOTS 4096

static slot g_slot[SLOTS];
static _Atomic uint64_t g_calls;        /* continuations run */
static _Atomic uint64_t g_requests;     /* requests handled */
static _Atomic uint64_t g_held;         /* requests held */
static _Atomic int g_ask_rc;            /* the first failing ac_ask's code */
static _Atomic int g_release_rc[MAX_HELD];
static _Atomic uint32_t g_released;
static _Atomic int g_wait_in_handler_rc;
static _Atomic uint64_t g_echo_failed;  /* echo replies ac_reply refused */
static uint64_t g_req_ids[MAX_HELD];    /* the ids of the requests held, in order */
static _Atomic uint64_t g_forged;       /* forged replies sent */

static int on_answer(void *state, ac_ctx *cx, int status, const void *body,
                     void *arg)
{
    const node *self = state;
    slot *s = arg;
    const answer *a = body;
    atomic_store(&s->status, status);
    atomic_store(&s->body_null, a == NULL);
    if (a != NULL) {
        atomic_store(&s->got, a->n);
        atomic_store(&s->text_ok, strcmp(a->text, "answer") == 0);
    }
    atomic_store(&s->asker, self->index);
    atomic_store(&s->in_asker, ac_addr_eq(ac_self(cx), &s->asker_addr));
    atomic_fetch_add(&s->calls, 1);
    atomic_fetch_add(&g_calls, 1);
    return 0;
}

static int answer_with(ac_ctx *cx, const ac_reply_to *to, uint64_t n)
{
    ac_envelope *e = ac_reply_new(cx, to, sizeof(answer));
    if (e == NULL)
        return AC_ENOMEM;
    answer *a = ac_reply_body(e);
    memset(a, 0, sizeof *a);
    a->n = n;
    strcpy(a->text, "answer");
    return ac_reply(cx, to, e);
}

static int handle_req(node *self, ac_ctx *cx, const req *r)
{
    atomic_fetch_add(&g_requests, 1);
    switch (r->op) {
    case OP_ECHO:
        /* A gone asker is the asker's business: count it, live on. */
        if (answer_with(cx, &r->reply_to, 2 * r->n + 1) != 0)
            atomic_fetch_add(&g_echo_failed, 1);
        return 0;
    case OP_HOLD:
        /* Kept whole: the reply comes from a later handler. */
        cr_assert_lt(self->nheld, MAX_HELD);
        g_req_ids[self->nheld] = r->reply_to.id;
        self->held[self->nheld++] = *r;
        atomic_fetch_add(&g_held, 1);
        return 0;
    case OP_ERROR:
        (void)ac_reply_error(cx, &r->reply_to, r->code);
        return 0;
    default:
        return 0;   /* OP_SILENT */
    }
}

static void handle_go(node *self, ac_ctx *cx, const go *g)
{
    for (uint32_t k = 0; k < g->count; k++) {
        ac_envelope *e = ac_envelope_new(cx, T_REQ, sizeof(req));
        cr_assert_not_null(e);
        req *r = ac_envelope_payload(e);
        memset(r, 0, sizeof *r);
        r->op = g->op;
        r->code = g->code;
        r->n = g->n + k;
        slot *s = &g_slot[g->slot + k];
        s->asker_addr = *ac_self(cx);
        int rc = ac_ask(cx, &g->target, e, g->timeout_ms, on_answer, s);
        if (rc != 0) {
            int zero = 0;
            atomic_compare_exchange_strong(&g_ask_rc, &zero, rc);
        }
    }
    (void)self;
}

static int node_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    node *self = state;
    switch (e->tag) {
    case T_REQ:
        return handle_req(self, cx, ac_envelope_payload(e));
    case T_RELEASE:
        for (uint32_t i = 0; i < self->nheld; i++) {
            int rc = answer_with(cx, &self->held[i].reply_to, self->held[i].n + 1);
            atomic_store(&g_release_rc[i], rc);
        }
        atomic_fetch_add(&g_released, self->nheld);
        self->nheld = 0;
        return 0;
    case T_GO: {
        const go *g = ac_envelope_payload(e);
        handle_go(self, cx, g);
        if (g->then == THEN_STOP_SELF)
            return ac_stop_self(cx);
        if (g->then == THEN_FAIL)
            return -77;
        return 0;
    }
    case T_FORGE: {
        /* FORGE_IDS: each held request answered to its own asker under
         * ids its asker never had (other generations of its record,
         * indexes the store has not made, generation 0, the ends of the
         * range); FORGE_CROSSED: each answered with the next one's id,
         * a live ask of another asker. Nothing is released. */
        uint32_t mode = *(const uint32_t *)ac_envelope_payload(e);
        const uint64_t gen = UINT64_C(1) << AC__ASK_INDEX_BITS, index = gen - 1;
        for (uint32_t i = 0; i < self->nheld; i++) {
            ac_reply_to to = self->held[i].reply_to;
            uint64_t id = to.id;
            uint64_t ids[] = {id ^ gen, id + gen, (id & ~index) | index,
                              (id & ~index) | (index >> 1), id & index, 0, UINT64_MAX};
            size_t n = mode == FORGE_IDS ? sizeof ids / sizeof ids[0] : 1;
            if (mode != FORGE_IDS)
                ids[0] = self->held[(i + 1) % self->nheld].reply_to.id;
            for (size_t j = 0; j < n; j++) {
                to.id = ids[j];
                cr_assert_eq(answer_with(cx, &to, 1000), 0);
                atomic_fetch_add(&g_forged, 1);
            }
        }
        return 0;
    }
    case T_WAIT_IN_HANDLER: {
        ac_envelope *r = ac_envelope_new(cx, T_REQ, sizeof(req));
        ac_envelope *reply = NULL;
        cr_assert_not_null(r);
        memset(ac_envelope_payload(r), 0, sizeof(req));
        atomic_store(&g_wait_in_handler_rc,
                     ac_ask_wait(cx, ac_self(cx), r, 10, &reply));
        cr_assert_null(reply);
        return 0;
    }
    }
    return AC_EBADTAG;
}

static int node_start(void *state, ac_ctx *cx, const void *args)
{
    (void)cx;
    node *self = state;
    self->index = args != NULL ? *(const uint32_t *)args : 0;
    return 0;
}

static const char *const node_names[] = {"req", "release", "go", "wait_in_handler", "forge"};

static const ac_actor_type node_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.AskNode",
    .state_size = sizeof(node),
    .state_align = _Alignof(node),
    .dispatch = node_dispatch,
    .on_start = node_start,
    .message_count = T_COUNT,
    .message_names = node_names,
    .mailbox_overflow = AC_OVERFLOW_REJECT,
};

/* ---- helpers ------------------------------------------------------------------ */

static ac_addr spawn_node(ac_ctx *cx, uint32_t index)
{
    ac_addr a;
    cr_assert_eq(ac_spawn(cx, &node_type, &index, &a), 0);
    return a;
}

static void send_go(ac_ctx *cx, const ac_addr *asker, const go *g)
{
    ac_envelope *e = ac_envelope_new(cx, T_GO, sizeof *g);
    cr_assert_not_null(e);
    memcpy(ac_envelope_payload(e), g, sizeof *g);
    cr_assert_eq(ac_send(cx, asker, e), 0);
}

static go go_to(const ac_addr *target, uint32_t op, uint64_t n,
                uint32_t timeout_ms)
{
    go g;
    memset(&g, 0, sizeof g);
    g.target = *target;
    g.op = op;
    g.n = n;
    g.timeout_ms = timeout_ms;
    g.count = 1;
    return g;
}

/* A request envelope for ac_ask_wait. */
static ac_envelope *new_req(ac_ctx *cx, uint32_t op, uint64_t n)
{
    ac_envelope *e = ac_envelope_new(cx, T_REQ, sizeof(req));
    cr_assert_not_null(e);
    req *r = ac_envelope_payload(e);
    memset(r, 0, sizeof *r);
    r->op = op;
    r->n = n;
    return e;
}

static int send_forge(ac_ctx *cx, const ac_addr *to, uint32_t mode)
{
    ac_envelope *e = ac_envelope_new(cx, T_FORGE, sizeof mode);
    cr_assert_not_null(e);
    memcpy(ac_envelope_payload(e), &mode, sizeof mode);
    return ac_send(cx, to, e);
}

static uint64_t dead_letters(ac_runtime *rt)
{
    ac_stats st;
    ac_runtime_stats(rt, &st);
    return st.dead_letters;
}

static int64_t ms_since(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)(now.tv_sec - t0->tv_sec) * 1000 +
           (now.tv_nsec - t0->tv_nsec) / 1000000;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

/* ---- asynchronous asks ----------------------------------------------------------- */

Test(ask, reply_reaches_the_continuation_exactly_once_with_its_body)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr server = spawn_node(cx, 1), asker = spawn_node(cx, 2);
    go g = go_to(&server, OP_ECHO, 20, 1000);
    send_go(cx, &asker, &g);
    cr_assert_eq(ac_runtime_run(rt), 0);
    slot *s = &g_slot[0];
    cr_assert_eq(atomic_load(&s->calls), 1);
    cr_assert_eq(atomic_load(&s->status), 0);
    cr_assert(!atomic_load(&s->body_null));
    cr_assert_eq(atomic_load(&s->got), 41);
    cr_assert(atomic_load(&s->text_ok));
    cr_assert_eq(atomic_load(&s->asker), 2, "runs with the asker's state");
    cr_assert(atomic_load(&s->in_asker), "runs as one of the asker's turns");
    /* The timeout was cancelled: time passing changes nothing. */
    cr_assert_eq(ac_runtime_advance(rt, 5000), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(atomic_load(&g_calls), 1);
    cr_assert_eq(dead_letters(rt), 0);
    ac_runtime_destroy(rt);
}

Test(ask, reply_without_a_timeout_reaches_the_continuation)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr server = spawn_node(cx, 1), asker = spawn_node(cx, 2);
    go g = go_to(&server, OP_ECHO, 3, 0);
    send_go(cx, &asker, &g);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(atomic_load(&g_slot[0].calls), 1);
    cr_assert_eq(atomic_load(&g_slot[0].got), 7);
    ac_runtime_destroy(rt);
}

Test(ask, timeout_arrives_as_etimedout_exactly_once)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr server = spawn_node(cx, 1), asker = spawn_node(cx, 2);
    go g = go_to(&server, OP_SILENT, 0, 50);
    send_go(cx, &asker, &g);
    cr_assert_eq(ac_runtime_run(rt), 1, "one ask waits for its reply");
    cr_assert_eq(atomic_load(&g_requests), 1);
    cr_assert_eq(atomic_load(&g_calls), 0);
    ac_runtime_advance(rt, 49);
    cr_assert_eq(ac_runtime_run(rt), 1, "still waiting");
    cr_assert_eq(atomic_load(&g_calls), 0, "not before its time");
    ac_runtime_advance(rt, 1);
    cr_assert_eq(ac_runtime_run(rt), 0, "answered by its timeout");
    slot *s = &g_slot[0];
    cr_assert_eq(atomic_load(&s->calls), 1);
    cr_assert_eq(atomic_load(&s->status), AC_ETIMEDOUT);
    cr_assert(atomic_load(&s->body_null));
    cr_assert_eq(atomic_load(&s->asker), 2);
    ac_runtime_advance(rt, 10000);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(atomic_load(&g_calls), 1, "exactly once");
    cr_assert_eq(dead_letters(rt), 0, "a timeout is not a dead letter");
    ac_runtime_destroy(rt);
}

Test(ask, timeout_arrives_as_etimedout_exactly_once_with_workers)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr server = spawn_node(cx, 1), asker = spawn_node(cx, 2);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    go g = go_to(&server, OP_SILENT, 0, 20);
    send_go(cx, &asker, &g);
    cr_assert(wait_for(&g_calls, 1));
    cr_assert_geq(ms_since(&t0), 20, "never earlier than asked");
    sleep_ms(50);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(atomic_load(&g_calls), 1, "exactly once");
    cr_assert_eq(atomic_load(&g_slot[0].status), AC_ETIMEDOUT);
    cr_assert(atomic_load(&g_slot[0].body_null));
    ac_runtime_destroy(rt);
}

Test(ask, error_reply_reaches_the_continuation_as_its_status)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr server = spawn_node(cx, 1), asker = spawn_node(cx, 2);
    go g = go_to(&server, OP_ERROR, 0, 1000);
    g.code = -1234;
    send_go(cx, &asker, &g);
    cr_assert_eq(ac_runtime_run(rt), 0);
    slot *s = &g_slot[0];
    cr_assert_eq(atomic_load(&s->calls), 1);
    cr_assert_eq(atomic_load(&s->status), -1234);
    cr_assert(atomic_load(&s->body_null));
    ac_runtime_advance(rt, 5000);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(atomic_load(&g_calls), 1, "the timeout was cancelled");
    ac_runtime_destroy(rt);
}

Test(ask, reply_error_refuses_a_non_negative_status)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_reply_to to = {spawn_node(cx, 0), 1};
    cr_assert_eq(ac_reply_error(cx, &to, 0), AC_EINVAL);
    cr_assert_eq(ac_reply_error(cx, &to, 5), AC_EINVAL);
    cr_assert_eq(ac_reply_error(cx, NULL, -1), AC_EINVAL);
    ac_runtime_destroy(rt);
}

Test(ask, deferred_reply_from_a_later_handler_reaches_the_continuation)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr server = spawn_node(cx, 1), asker = spawn_node(cx, 2);
    go g = go_to(&server, OP_HOLD, 9, 1000);
    send_go(cx, &asker, &g);
    cr_assert_eq(ac_runtime_run(rt), 1, "one ask waits for its reply");
    cr_assert_eq(atomic_load(&g_held), 1);
    cr_assert_eq(atomic_load(&g_calls), 0, "no answer yet");
    cr_assert_eq(send_tag(cx, &server, T_RELEASE), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(atomic_load(&g_release_rc[0]), 0);
    slot *s = &g_slot[0];
    cr_assert_eq(atomic_load(&s->calls), 1);
    cr_assert_eq(atomic_load(&s->status), 0);
    cr_assert_eq(atomic_load(&s->got), 10);
    ac_runtime_advance(rt, 5000);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(atomic_load(&g_calls), 1);
    ac_runtime_destroy(rt);
}

Test(ask, late_reply_after_a_timeout_is_a_counted_dead_letter)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr server = spawn_node(cx, 1), asker = spawn_node(cx, 2);
    go g = go_to(&server, OP_HOLD, 9, 10);
    send_go(cx, &asker, &g);
    cr_assert_eq(ac_runtime_run(rt), 1, "one ask waits for its reply");
    ac_runtime_advance(rt, 10);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(atomic_load(&g_slot[0].status), AC_ETIMEDOUT);
    uint64_t before = dead_letters(rt);
    cr_assert_eq(send_tag(cx, &server, T_RELEASE), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(atomic_load(&g_release_rc[0]), 0,
                 "the asker lives: the reply is delivered, then dropped");
    cr_assert_eq(dead_letters(rt), before + 1);
    cr_assert_eq(atomic_load(&g_calls), 1, "it never reaches the continuation");
    ac_runtime_destroy(rt);
}

/* What the dead-letter hook saw of replies. */
static _Atomic uint64_t g_dead_replies;
static ac_addr g_dead_reply_to;

static void count_dead_replies(ac_ctx *cx, const ac_addr *to,
                               const ac_envelope *e, int reason, void *arg)
{
    (void)cx;
    (void)arg;
    if (e->tag == AC_TAG_REPLY && reason == AC_ENOTFOUND) {
        g_dead_reply_to = *to;
        atomic_fetch_add(&g_dead_replies, 1);
    }
}

Test(ask, reply_to_a_dead_asker_is_a_counted_dead_letter)
{
    ac_runtime *rt = make_runtime(0);
    ac_runtime_set_dead_letter_hook(rt, count_dead_replies, NULL);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr server = spawn_node(cx, 1), asker = spawn_node(cx, 2);
    go g = go_to(&server, OP_HOLD, 9, 0);
    send_go(cx, &asker, &g);
    cr_assert_eq(ac_runtime_run(rt), 1, "one ask waits for its reply");
    cr_assert_eq(atomic_load(&g_held), 1);
    cr_assert_eq(ac_stop(cx, &asker), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    uint64_t before = dead_letters(rt);
    cr_assert_eq(send_tag(cx, &server, T_RELEASE), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(atomic_load(&g_release_rc[0]), 0, "a dead letter, not the replier's failure");
    cr_assert_eq(dead_letters(rt), before + 1);
    cr_assert_eq(atomic_load(&g_dead_replies), 1);
    cr_assert(ac_addr_eq(&g_dead_reply_to, &asker));
    cr_assert_eq(atomic_load(&g_calls), 0);
    ac_runtime_destroy(rt);
}

static void asker_dies_with_asks_pending(uint32_t then)
{
    enum { N = 5 };
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr server = spawn_node(cx, 1), asker = spawn_node(cx, 2);
    /* Half the asks with a timeout (a timer the death must cancel), half
     * without (a record only the death frees). */
    go g = go_to(&server, OP_HOLD, 0, 100);
    g.count = N;
    send_go(cx, &asker, &g);
    go g2 = go_to(&server, OP_HOLD, 100, 0);
    g2.count = N;
    g2.slot = N;
    g2.then = then;
    send_go(cx, &asker, &g2);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(atomic_load(&g_ask_rc), 0);
    cr_assert_eq(atomic_load(&g_held), 2 * N);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.stopped + st.failed, 1, "the asker is gone");
    /* Its timeouts never come ... */
    ac_runtime_advance(rt, 1000);
    cr_assert_eq(ac_runtime_run(rt), 0);
    /* ... and its replies are dead letters. */
    uint64_t before = dead_letters(rt);
    cr_assert_eq(send_tag(cx, &server, T_RELEASE), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(atomic_load(&g_released), 2 * N);
    for (int i = 0; i < 2 * N; i++)
        cr_assert_eq(atomic_load(&g_release_rc[i]), 0);
    cr_assert_eq(dead_letters(rt), before + 2 * N);
    cr_assert_eq(atomic_load(&g_calls), 0, "its continuations never run");
    /* The pending records went with it: another asker can have every
     * record made so far pending at once, with none new (and
     * AddressSanitizer's leak check sees the rest when the runtime is
     * freed). */
    size_t made = ac__ask_records(rt);
    cr_assert_geq(made, 2 * N);
    cr_assert_leq(made, MAX_HELD - 2 * N);
    ac_addr again = spawn_node(cx, 3);
    go g3 = go_to(&server, OP_HOLD, 200, 0);
    g3.count = (uint32_t)made;
    g3.slot = 2 * N;
    send_go(cx, &again, &g3);
    cr_assert_eq(ac_runtime_run(rt), (int)made, "the new asker's asks are the only ones pending");
    /* Exactly: both askers' turns and the death ran on the one
     * deterministic worker, so all the records are on its list. */
    cr_assert_eq(ac__ask_records(rt), made, "the dead asker's records were reused");
    cr_assert_eq(send_tag(cx, &server, T_RELEASE), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(atomic_load(&g_calls), made);
    for (size_t i = 0; i < made; i++)
        cr_assert_eq(atomic_load(&g_slot[2 * N + i].got), 200 + (uint64_t)i + 1);
    ac_runtime_destroy(rt);
}

Test(ask, asker_that_stops_with_asks_pending_leaks_nothing_and_its_continuations_never_run)
{
    asker_dies_with_asks_pending(THEN_STOP_SELF);
}

Test(ask, asker_that_fails_with_asks_pending_leaks_nothing_and_its_continuations_never_run)
{
    asker_dies_with_asks_pending(THEN_FAIL);
}

Test(ask, asker_that_dies_while_replies_race_in_never_runs_a_continuation)
{
    enum { N = 200 };
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr server = spawn_node(cx, 1), asker = spawn_node(cx, 2);
    /* The replies come back while the asker is still asking: they are
     * dropped with its mailbox when it stops, or refused once it is gone.
     * The asks' timeout is far beyond the asker's life, however long a
     * loaded machine stretches it: none may fire. */
    go g = go_to(&server, OP_ECHO, 0, 60000);
    g.count = N;
    g.then = THEN_STOP_SELF;
    send_go(cx, &asker, &g);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(atomic_load(&g_ask_rc), 0, "%s", ac_strerror(atomic_load(&g_ask_rc)));
    cr_assert_eq(atomic_load(&g_requests), N, "%lu", (unsigned long)atomic_load(&g_requests));
    cr_assert_eq(atomic_load(&g_calls), 0);
    cr_assert_eq(dead_letters(rt), N, "every reply counted once (%lu refused)",
                 (unsigned long)atomic_load(&g_echo_failed));
    ac_runtime_destroy(rt);
}

Test(ask, replies_with_stale_or_forged_ids_are_dead_letters_and_the_ask_still_completes)
{
    enum { N = 3 };
    ac_runtime *rt = make_runtime(0);
    ac_runtime_set_dead_letter_hook(rt, count_dead_replies, NULL);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr server = spawn_node(cx, 1), asker = spawn_node(cx, 2);
    go g = go_to(&server, OP_HOLD, 10, 0);
    g.count = N;
    send_go(cx, &asker, &g);
    cr_assert_eq(ac_runtime_run(rt), N);
    uint64_t before = dead_letters(rt);
    cr_assert_eq(send_forge(cx, &server, FORGE_IDS), 0);
    cr_assert_eq(ac_runtime_run(rt), N, "still pending: no forged reply answered one");
    cr_assert_eq(atomic_load(&g_forged), 7 * N);
    cr_assert_eq(atomic_load(&g_calls), 0);
    cr_assert_eq(dead_letters(rt) - before, 7 * N, "each counted as a stale reply is");
    cr_assert_eq(atomic_load(&g_dead_replies), 7 * N);
    cr_assert(ac_addr_eq(&g_dead_reply_to, &asker));
    /* The genuine replies still find their asks, once each. */
    cr_assert_eq(send_tag(cx, &server, T_RELEASE), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(atomic_load(&g_calls), N);
    for (uint32_t i = 0; i < N; i++) {
        cr_assert_eq(atomic_load(&g_slot[i].calls), 1, "ask %u", i);
        cr_assert_eq(atomic_load(&g_slot[i].got), 10 + (uint64_t)i + 1, "ask %u", i);
    }
    cr_assert_eq(dead_letters(rt) - before, 7 * N);
    ac_runtime_destroy(rt);
}

Test(ask, a_reply_under_another_askers_live_id_is_a_dead_letter_for_both)
{
    enum { N = 4 };
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr server = spawn_node(cx, 1);
    /* N askers, one ask each, all held: each id is live, each another's. */
    for (uint32_t i = 0; i < N; i++) {
        ac_addr asker = spawn_node(cx, 10 + i);
        go g = go_to(&server, OP_HOLD, 100 * i, 0);
        g.slot = i;
        send_go(cx, &asker, &g);
    }
    cr_assert_eq(ac_runtime_run(rt), N);
    uint64_t before = dead_letters(rt);
    cr_assert_eq(send_forge(cx, &server, FORGE_CROSSED), 0);
    cr_assert_eq(ac_runtime_run(rt), N, "each ask still pending");
    cr_assert_eq(atomic_load(&g_calls), 0);
    cr_assert_eq(dead_letters(rt) - before, N);
    cr_assert_eq(send_tag(cx, &server, T_RELEASE), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    for (uint32_t i = 0; i < N; i++) {
        cr_assert_eq(atomic_load(&g_slot[i].calls), 1, "ask %u", i);
        cr_assert_eq(atomic_load(&g_slot[i].asker), 10 + i, "ask %u ran in its own asker", i);
        cr_assert_eq(atomic_load(&g_slot[i].got), 100 * (uint64_t)i + 1, "ask %u", i);
    }
    ac_runtime_destroy(rt);
}

Test(ask, a_late_reply_never_reaches_the_later_ask_that_reuses_its_record)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr server = spawn_node(cx, 1), asker = spawn_node(cx, 2);
    go g = go_to(&server, OP_HOLD, 5, 10);
    send_go(cx, &asker, &g);
    cr_assert_eq(ac_runtime_run(rt), 1);
    ac_runtime_advance(rt, 10);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(atomic_load(&g_slot[0].status), AC_ETIMEDOUT);
    /* The next ask takes the record the timeout freed: same index, a
     * later generation. */
    go g2 = go_to(&server, OP_HOLD, 50, 0);
    g2.slot = 1;
    send_go(cx, &asker, &g2);
    cr_assert_eq(ac_runtime_run(rt), 1);
    const uint64_t index = (UINT64_C(1) << AC__ASK_INDEX_BITS) - 1;
    cr_assert_eq(g_req_ids[0] & index, g_req_ids[1] & index, "the record was reused");
    cr_assert_neq(g_req_ids[0], g_req_ids[1]);
    uint64_t before = dead_letters(rt);
    /* Both answered: the first (stale) reply first. */
    cr_assert_eq(send_tag(cx, &server, T_RELEASE), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(dead_letters(rt) - before, 1, "the late reply is a dead letter");
    cr_assert_eq(atomic_load(&g_slot[0].calls), 1, "the timed-out ask ran once");
    cr_assert_eq(atomic_load(&g_slot[1].calls), 1);
    cr_assert_eq(atomic_load(&g_slot[1].status), 0);
    cr_assert_eq(atomic_load(&g_slot[1].got), 51, "its own reply, not the late one (6)");
    cr_assert_eq(atomic_load(&g_calls), 2);
    ac_runtime_destroy(rt);
}

Test(ask, ask_outside_a_handler_is_refused_and_frees_the_request)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr server = spawn_node(cx, 1);
    cr_assert_eq(ac_ask(cx, &server, new_req(cx, OP_ECHO, 1), 0, on_answer,
                        &g_slot[0]), AC_ESTATE);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(atomic_load(&g_requests), 0);
    ac_runtime_destroy(rt);
}

Test(ask, ask_of_a_dead_address_fails_and_its_continuation_never_runs)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr gone = spawn_node(cx, 1), asker = spawn_node(cx, 2);
    cr_assert_eq(ac_stop(cx, &gone), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    go g = go_to(&gone, OP_ECHO, 0, 50);
    send_go(cx, &asker, &g);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(atomic_load(&g_ask_rc), AC_ENOTFOUND);
    ac_runtime_advance(rt, 1000);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(atomic_load(&g_calls), 0, "no timeout for an ask never made");
    ac_runtime_destroy(rt);
}

/* ---- blocking asks ------------------------------------------------------------------ */

Test(ask, blocking_ask_from_main_with_two_workers_gets_its_reply)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr server = spawn_node(cx, 1);
    for (uint64_t n = 0; n < 10; n++) {
        ac_envelope *reply = NULL;
        cr_assert_eq(ac_ask_wait(cx, &server, new_req(cx, OP_ECHO, n), 5000,
                                 &reply), 0);
        cr_assert_not_null(reply);
        cr_assert_eq(reply->tag, AC_TAG_REPLY);
        const answer *a = ac_reply_body(reply);
        cr_assert_eq(a->n, 2 * n + 1);
        cr_assert_str_eq(a->text, "answer");
        if (n % 2 == 0)
            ac_envelope_free(cx, reply);
        else
            ac_reply_free(cx, a);   /* by its body, as generated code does */
    }
    ac_runtime_destroy(rt);
}

Test(ask, blocking_ask_in_deterministic_mode_runs_the_runtime_until_the_reply)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr server = spawn_node(cx, 1);
    ac_envelope *reply = NULL;
    cr_assert_eq(ac_ask_wait(cx, &server, new_req(cx, OP_ECHO, 4), AC_FOREVER,
                             &reply), 0);
    cr_assert_eq(((const answer *)ac_reply_body(reply))->n, 9);
    ac_envelope_free(cx, reply);
    ac_runtime_destroy(rt);
}

Test(ask, blocking_ask_times_out)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr server = spawn_node(cx, 1);
    ac_envelope *reply = (ac_envelope *)&reply;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    cr_assert_eq(ac_ask_wait(cx, &server, new_req(cx, OP_SILENT, 0), 30, &reply),
                 AC_ETIMEDOUT);
    cr_assert_geq(ms_since(&t0), 30, "never earlier than asked");
    cr_assert_null(reply);
    /* The ask ends at its timeout, not when the server handled the
     * request: on a loaded machine that may come later. */
    cr_assert_geq(ac_runtime_run(rt), 0);
    cr_assert_eq(atomic_load(&g_requests), 1);
    ac_runtime_destroy(rt);
}

Test(ask, blocking_ask_in_deterministic_mode_times_out_when_nothing_is_left_to_run)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr server = spawn_node(cx, 1);
    ac_envelope *reply = NULL;
    cr_assert_eq(ac_ask_wait(cx, &server, new_req(cx, OP_SILENT, 0), AC_FOREVER,
                             &reply), AC_ETIMEDOUT);
    cr_assert_null(reply);
    ac_runtime_destroy(rt);
}

Test(ask, blocking_ask_gets_an_error_reply_as_its_result)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr server = spawn_node(cx, 1);
    ac_envelope *e = new_req(cx, OP_ERROR, 0);
    ((req *)ac_envelope_payload(e))->code = AC_EFULL;
    ac_envelope *reply = NULL;
    cr_assert_eq(ac_ask_wait(cx, &server, e, 5000, &reply), AC_EFULL);
    cr_assert_null(reply);
    ac_runtime_destroy(rt);
}

Test(ask, blocking_ask_of_a_dead_address_fails_at_once)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr gone = spawn_node(cx, 1);
    cr_assert_eq(ac_stop(cx, &gone), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    ac_envelope *reply = NULL;
    cr_assert_eq(ac_ask_wait(cx, &gone, new_req(cx, OP_ECHO, 0), AC_FOREVER,
                             &reply), AC_ENOTFOUND);
    cr_assert_null(reply);
    ac_runtime_destroy(rt);
}

Test(ask, blocking_ask_in_a_handler_is_refused)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_node(cx, 1);
    cr_assert_eq(send_tag(cx, &a, T_WAIT_IN_HANDLER), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(atomic_load(&g_wait_in_handler_rc), AC_ESTATE);
    cr_assert_eq(atomic_load(&g_requests), 0, "the request was not sent");
    ac_runtime_destroy(rt);
}

Test(ask, late_reply_to_a_blocking_ask_that_timed_out_is_a_counted_dead_letter)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr server = spawn_node(cx, 1);
    ac_envelope *reply = NULL;
    cr_assert_eq(ac_ask_wait(cx, &server, new_req(cx, OP_HOLD, 5), 10, &reply),
                 AC_ETIMEDOUT);
    cr_assert_eq(atomic_load(&g_held), 1);
    uint64_t before = dead_letters(rt);
    /* The held request is answered now, to an ask that is over. */
    cr_assert_eq(send_tag(cx, &server, T_RELEASE), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(atomic_load(&g_release_rc[0]), 0, "delivered to the inbox");
    /* The next ask gets its own reply, never the late one. */
    cr_assert_eq(ac_ask_wait(cx, &server, new_req(cx, OP_ECHO, 7), AC_FOREVER,
                             &reply), 0);
    cr_assert_eq(((const answer *)ac_reply_body(reply))->n, 15);
    ac_envelope_free(cx, reply);
    cr_assert_eq(dead_letters(rt), before + 1);
    ac_runtime_destroy(rt);
}

/* A thread that releases the server's held requests once it holds one. */
typedef struct releaser {
    ac_runtime *rt;
    ac_addr server;
} releaser;

static void *release_when_held(void *p)
{
    releaser *r = p;
    ac_ctx *cx = ac_runtime_ctx(r->rt);
    cr_assert(wait_for(&g_held, 1));
    cr_assert_eq(send_tag(cx, &r->server, T_RELEASE), 0);
    return NULL;
}

Test(ask, deferred_reply_reaches_a_blocking_ask)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    releaser r = {rt, spawn_node(cx, 1)};
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, release_when_held, &r), 0);
    ac_envelope *reply = NULL;
    int rc = ac_ask_wait(cx, &r.server, new_req(cx, OP_HOLD, 41), 10000, &reply);
    pthread_join(t, NULL);
    cr_assert_eq(rc, 0);
    cr_assert_eq(((const answer *)ac_reply_body(reply))->n, 42);
    ac_envelope_free(cx, reply);
    ac_runtime_destroy(rt);
}

/* ---- many asks at once ---------------------------------------------------------------- */

enum { ASK_THREADS = 4, ASKS_PER_THREAD = 2000 };

typedef struct asker_thread {
    ac_runtime *rt;
    ac_addr server;
    uint64_t base;
    uint64_t answered;
    uint64_t wrong;
    int first_rc;
} asker_thread;

static void *ask_many(void *p)
{
    asker_thread *t = p;
    ac_ctx *cx = ac_runtime_ctx(t->rt);
    for (uint64_t i = 0; i < ASKS_PER_THREAD; i++) {
        uint64_t n = t->base + i;
        ac_envelope *reply = NULL;
        int rc = ac_ask_wait(cx, &t->server, new_req(cx, OP_ECHO, n), 30000,
                             &reply);
        if (rc != 0) {
            if (t->first_rc == 0)
                t->first_rc = rc;
            continue;
        }
        const answer *a = ac_reply_body(reply);
        if (a->n == 2 * n + 1)
            t->answered++;
        else
            t->wrong++;
        ac_envelope_free(cx, reply);
    }
    return NULL;
}

Test(ask, four_threads_of_blocking_asks_are_each_answered_exactly_once)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    /* Two servers, so that replies come from both workers at once. */
    ac_addr servers[2] = {spawn_node(cx, 1), spawn_node(cx, 2)};
    pthread_t th[ASK_THREADS];
    asker_thread t[ASK_THREADS];
    for (int i = 0; i < ASK_THREADS; i++) {
        t[i] = (asker_thread){rt, servers[i % 2], (uint64_t)i * 1000000, 0, 0, 0};
        cr_assert_eq(pthread_create(&th[i], NULL, ask_many, &t[i]), 0);
    }
    for (int i = 0; i < ASK_THREADS; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < ASK_THREADS; i++) {
        cr_assert_eq(t[i].first_rc, 0, "thread %d: %s", i, ac_strerror(t[i].first_rc));
        cr_assert_eq(t[i].wrong, 0, "thread %d got another ask's reply", i);
        cr_assert_eq(t[i].answered, ASKS_PER_THREAD, "thread %d", i);
    }
    cr_assert_eq(atomic_load(&g_requests), ASK_THREADS * ASKS_PER_THREAD);
    cr_assert_eq(dead_letters(rt), 0);
    ac_runtime_destroy(rt);
}

Test(ask, a_thousand_actors_asking_each_other_are_each_answered_exactly_once)
{
    enum { N = 1000 };
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    static ac_addr nodes[N];
    for (uint32_t i = 0; i < N; i++)
        nodes[i] = spawn_node(cx, i);
    /* Each asks the next one; half with a timeout, half without. */
    for (uint32_t i = 0; i < N; i++) {
        go g = go_to(&nodes[(i + 1) % N], OP_ECHO, i, i % 2 ? 60000 : 0);
        g.slot = i;
        send_go(cx, &nodes[i], &g);
    }
    cr_assert(wait_for(&g_calls, N));
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(atomic_load(&g_ask_rc), 0);
    cr_assert_eq(atomic_load(&g_calls), N);
    for (uint32_t i = 0; i < N; i++) {
        slot *s = &g_slot[i];
        cr_assert_eq(atomic_load(&s->calls), 1, "ask %u", i);
        cr_assert_eq(atomic_load(&s->status), 0, "ask %u", i);
        cr_assert_eq(atomic_load(&s->got), 2 * (uint64_t)i + 1, "ask %u", i);
        cr_assert_eq(atomic_load(&s->asker), i, "ask %u ran in its asker", i);
        cr_assert(atomic_load(&s->in_asker), "ask %u", i);
    }
    cr_assert_eq(dead_letters(rt), 0);
    ac_runtime_destroy(rt);
}

Test(ask, many_asks_from_one_actor_are_each_answered_exactly_once)
{
    enum { N = 2000 };
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr server = spawn_node(cx, 1), asker = spawn_node(cx, 2);
    go g = go_to(&server, OP_ECHO, 0, 60000);
    g.count = N;
    send_go(cx, &asker, &g);
    cr_assert(wait_for(&g_calls, N));
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(atomic_load(&g_calls), N);
    for (uint32_t i = 0; i < N; i++) {
        cr_assert_eq(atomic_load(&g_slot[i].calls), 1, "ask %u", i);
        cr_assert_eq(atomic_load(&g_slot[i].got), 2 * (uint64_t)i + 1);
    }
    ac_runtime_destroy(rt);
}

Test(ask, many_asks_pending_at_once_from_one_actor_each_run_once_and_their_records_are_reused)
{
    enum { N = MAX_HELD, ROUNDS = 3, WORKERS = 2 };
    ac_runtime *rt = make_runtime(WORKERS);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr server = spawn_node(cx, 1), asker = spawn_node(cx, 2);
    size_t made = 0;
    for (uint32_t round = 0; round < ROUNDS; round++) {
        go g = go_to(&server, OP_HOLD, 1000 * round, round % 2 ? 60000 : 0);
        g.count = N;
        g.slot = round * N;
        send_go(cx, &asker, &g);
        cr_assert_eq(ac_runtime_run(rt), N, "round %u: all pending at once", round);
        cr_assert_eq(send_tag(cx, &server, T_RELEASE), 0);
        cr_assert_eq(ac_runtime_run(rt), 0);
        cr_assert_eq(atomic_load(&g_calls), (uint64_t)(round + 1) * N);
        for (uint32_t i = 0; i < N; i++) {
            slot *s = &g_slot[round * N + i];
            cr_assert_eq(atomic_load(&s->calls), 1, "round %u ask %u", round, i);
            cr_assert_eq(atomic_load(&s->got), 1000 * (uint64_t)round + i + 1);
            cr_assert(atomic_load(&s->in_asker));
        }
        /* Freed records wait on the contexts' lists (each keeps fewer
         * than 64) or the store's stash: a later round finds them. */
        if (round == 0)
            made = ac__ask_records(rt);
        else
            cr_assert_leq(ac__ask_records(rt), made + 64 * (WORKERS + 1),
                          "round %u: %zu records, %zu after the first", round,
                          ac__ask_records(rt), made);
    }
    cr_assert_eq(dead_letters(rt), 0);
    ac_runtime_destroy(rt);
}
