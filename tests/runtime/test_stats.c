/* Counters that reconcile: every user message a send decides on ends in
 * exactly one counter, so that at quiescence (on a runtime that is not a
 * node)
 *
 *     sends + refused == messages + dead_letters + mailbox_drops + stashed
 *
 * (+ node_forwarded on a node) whatever services are in use
 * (docs/RUNTIME.md, "Counters that reconcile"). System messages (down, exit, ask timeouts) are counted
 * apart, in system_messages, and take no part in it. */
#include "fixtures.h"
#include "nodes.h"
#include "remote.actor.h"

#include <stdio.h>

/* ---- Svc: one actor type that drives every service ----------------------- */

enum {
    T_ITEM = 0,   /* counted, nothing else */
    T_REQ = 1,    /* a request: reply now, later (T_LATE) or with an error */
    T_LATE = 2,   /* reply to the request kept by an earlier T_REQ */
    T_ASK = 3,    /* ask msg.to with msg.mode, msg.timeout */
    T_STOP = 4,   /* stop self */
    T_FAIL = 5,   /* fail */
    T_TRAP = 6,   /* trap exits */
    T_LINK = 7,   /* link to msg.to */
    T_UNLINK = 8, /* unlink msg.to */
    T_STASH = 9,  /* stashed until a T_UNSTASH, then counted */
    T_UNSTASH = 10, /* take the stash up again */
    T_COUNT = 11
};

enum { REPLY_NOW = 0, REPLY_LATER = 1, REPLY_ERROR = 2 };

/* One payload for every tag, so that copy needs no per-tag size. */
typedef struct msg {
    ac_reply_to reply_to;  /* T_REQ: first, as a request's payload must be */
    ac_addr to;
    uint32_t mode, timeout;
} msg;

typedef struct svc {
    ac_reply_to kept;
    bool has_kept;
    bool unstashed;
} svc;

static _Atomic uint64_t g_answers;   /* ask continuations that ran */
static _Atomic uint64_t g_timeouts;  /* ... with AC_ETIMEDOUT */

static ac_envelope *make_msg(ac_ctx *cx, uint32_t tag)
{
    ac_envelope *e = ac_envelope_new(cx, tag, sizeof(msg));
    cr_assert_not_null(e);
    memset(ac_envelope_payload(e), 0, sizeof(msg));
    return e;
}

static int on_answer(void *state, ac_ctx *cx, int status, const void *body, void *arg)
{
    (void)state, (void)cx, (void)body, (void)arg;
    atomic_fetch_add(&g_answers, 1);
    if (status == AC_ETIMEDOUT)
        atomic_fetch_add(&g_timeouts, 1);
    return 0;
}

static int svc_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    svc *self = state;
    msg *m = e->tag < AC_TAG_SYSTEM ? ac_envelope_payload(e) : NULL;
    switch (e->tag) {
    case T_ITEM:
        return 0;
    case T_REQ:
        if (m->mode == REPLY_LATER) {
            self->kept = m->reply_to;
            self->has_kept = true;
            return 0;
        }
        if (m->mode == REPLY_ERROR)
            return ac_reply_error(cx, &m->reply_to, AC_EFAILED) == 0 ? 0 : 1;
        return ac_reply(cx, &m->reply_to, ac_reply_new(cx, &m->reply_to, 8)) == 0 ? 0 : 1;
    case T_LATE:
        /* The asker may be gone, or its ask over: that is what is tested. */
        if (self->has_kept) {
            self->has_kept = false;
            (void)ac_reply(cx, &self->kept, ac_reply_new(cx, &self->kept, 8));
        }
        return 0;
    case T_ASK: {
        ac_envelope *r = make_msg(cx, T_REQ);
        ((msg *)ac_envelope_payload(r))->mode = m->mode;
        (void)ac_ask(cx, &m->to, r, m->timeout, on_answer, NULL);
        return 0;
    }
    case T_STOP:
        return ac_stop_self(cx);
    case T_FAIL:
        return 42;
    case T_TRAP:
        return ac_trap_exits(cx, true);
    case T_LINK:
        (void)ac_link(cx, &m->to);
        return 0;
    case T_UNLINK:
        (void)ac_unlink(cx, &m->to);
        return 0;
    case T_STASH:
        return self->unstashed ? 0 : ac_stash(cx);
    case T_UNSTASH:
        self->unstashed = true;
        return ac_unstash_all(cx) >= 0 ? 0 : 1;
    }
    return AC_EBADTAG;  /* down, exit: no hook, counted as unhandled */
}

static ac_envelope *svc_copy(ac_ctx *cx, const ac_envelope *e)
{
    ac_envelope *c = ac_envelope_new(cx, e->tag, sizeof(msg));
    if (c != NULL)
        memcpy(ac_envelope_payload(c), ac_envelope_payload((ac_envelope *)e), sizeof(msg));
    return c;
}

static const char *const svc_names[] = {"item", "req",  "late",   "ask",   "stop",  "fail",
                                        "trap", "link", "unlink", "stash", "unstash"};

static const ac_actor_type svc_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.Svc",
    .state_size = sizeof(svc),
    .state_align = _Alignof(svc),
    .dispatch = svc_dispatch,
    .message_count = T_COUNT,
    .message_names = svc_names,
    .copy = svc_copy,
};

/* ---- helpers ---------------------------------------------------------------- */

static ac_addr spawn_svc(ac_ctx *cx)
{
    ac_addr a;
    cr_assert_eq(ac_spawn(cx, &svc_type, NULL, &a), 0);
    return a;
}

static ac_addr spawn_bounded(ac_ctx *cx, uint32_t bound, uint32_t overflow)
{
    ac_spawn_options o;
    memset(&o, 0, sizeof o);
    o.mailbox_bound = bound;
    o.mailbox_overflow = overflow;
    ac_addr a;
    cr_assert_eq(ac_spawn_opts(cx, &svc_type, NULL, &o, &a), 0);
    return a;
}

static int send_msg(ac_ctx *cx, const ac_addr *to, uint32_t tag)
{
    return ac_send(cx, to, make_msg(cx, tag));
}

static int send_to(ac_ctx *cx, const ac_addr *to, uint32_t tag, const ac_addr *arg)
{
    ac_envelope *e = make_msg(cx, tag);
    ((msg *)ac_envelope_payload(e))->to = *arg;
    return ac_send(cx, to, e);
}

static int send_ask(ac_ctx *cx, const ac_addr *asker, const ac_addr *target, uint32_t mode,
                    uint32_t timeout)
{
    ac_envelope *e = make_msg(cx, T_ASK);
    msg *m = ac_envelope_payload(e);
    m->to = *target;
    m->mode = mode;
    m->timeout = timeout;
    return ac_send(cx, asker, e);
}

static void settle(ac_runtime *rt)
{
    /* Asks still waiting for their timeouts are counted, not errors. */
    cr_assert_geq(ac_runtime_run(rt), 0);
}

/* `ms` of timer time pass: ticks in deterministic mode, else real time
 * with room for the timer thread to fire. */
static void pass(ac_runtime *rt, bool deterministic, uint32_t ms)
{
    if (deterministic) {
        cr_assert_geq(ac_runtime_advance(rt, ms), 0);
    } else {
        struct timespec ts = {0, (long)(ms + 40) * 1000000L};
        nanosleep(&ts, NULL);
    }
    settle(rt);
}

static bool reconciles(const ac_stats *st)
{
    return st->sends + st->refused == st->messages + st->dead_letters + st->mailbox_drops +
                                          st->node_forwarded + st->stashed;
}

#define IDENTITY(st)                                                                    \
    cr_assert(reconciles(&(st)),                                                        \
              "sends %llu + refused %llu != messages %llu + dead_letters %llu + "       \
              "mailbox_drops %llu + node_forwarded %llu + stashed %llu",                \
              (unsigned long long)(st).sends, (unsigned long long)(st).refused,         \
              (unsigned long long)(st).messages, (unsigned long long)(st).dead_letters, \
              (unsigned long long)(st).mailbox_drops, (unsigned long long)(st).node_forwarded, \
              (unsigned long long)(st).stashed)

static ac_stats stats_of(ac_runtime *rt)
{
    ac_stats st;
    ac_runtime_stats(rt, &st);
    return st;
}

/* The difference of two snapshots, for the counters of the identity. */
static ac_stats since(ac_runtime *rt, const ac_stats *before)
{
    ac_stats st = stats_of(rt);
    st.sends -= before->sends;
    st.refused -= before->refused;
    st.messages -= before->messages;
    st.dead_letters -= before->dead_letters;
    st.mailbox_drops -= before->mailbox_drops;
    st.system_messages -= before->system_messages;
    return st;
}

/* ---- the workload: every service at once -------------------------------- */

static void workload(int workers)
{
    bool det = workers == 0;
    atomic_store(&g_answers, 0);
    atomic_store(&g_timeouts, 0);
    ac_runtime *rt = make_runtime(workers);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_svc(cx), b = spawn_svc(cx), c = spawn_svc(cx);

    /* Plain sends. */
    for (int i = 0; i < 10; i++)
        cr_assert_eq(send_msg(cx, &a, T_ITEM), 0);

    /* Names: to a holder, and to nobody. */
    cr_assert_eq(ac_register(cx, "stats.b", &b), 0);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(ac_send_named(cx, "stats.b", make_msg(cx, T_ITEM)), 0);
    cr_assert_eq(ac_send_named(cx, "stats.nobody", make_msg(cx, T_ITEM)), AC_ENOTFOUND);

    /* Groups: one publish, three sends. */
    cr_assert_eq(ac_group_join(cx, "stats.g", &a), 0);
    cr_assert_eq(ac_group_join(cx, "stats.g", &b), 0);
    cr_assert_eq(ac_group_join(cx, "stats.g", &c), 0);
    cr_assert_eq(ac_group_publish(cx, "stats.g", &svc_type, make_msg(cx, T_ITEM)), 3);

    /* Routers: each message is handled by the router, then by a worker;
     * a broadcast by every worker. */
    ac_router_options ro;
    memset(&ro, 0, sizeof ro);
    ro.type = &svc_type;
    ro.workers = 3;
    ro.strategy = AC_ROUTE_ROUND_ROBIN;
    ac_addr rr, rb;
    cr_assert_eq(ac_router_spawn(cx, &ro, &rr), 0);
    ro.strategy = AC_ROUTE_BROADCAST;
    cr_assert_eq(ac_router_spawn(cx, &ro, &rb), 0);
    for (int i = 0; i < 6; i++)
        cr_assert_eq(send_msg(cx, &rr, T_ITEM), 0);
    cr_assert_eq(send_msg(cx, &rb, T_ITEM), 0);
    settle(rt);

    /* Bounded mailboxes, each policy, filled before they can run. */
    ac_addr rej = spawn_bounded(cx, 2, AC_OVERFLOW_REJECT);
    ac_addr newest = spawn_bounded(cx, 2, AC_OVERFLOW_DROP_NEWEST);
    ac_addr oldest = spawn_bounded(cx, 2, AC_OVERFLOW_DROP_OLDEST);
    if (det) {
        for (int i = 0; i < 5; i++) {
            cr_assert_eq(send_msg(cx, &rej, T_ITEM), i < 2 ? 0 : AC_EFULL);
            cr_assert_eq(send_msg(cx, &newest, T_ITEM), 0);
            cr_assert_eq(send_msg(cx, &oldest, T_ITEM), 0);
        }
    } else {
        for (int i = 0; i < 200; i++) {
            (void)send_msg(cx, &rej, T_ITEM);
            cr_assert_eq(send_msg(cx, &newest, T_ITEM), 0);
            cr_assert_eq(send_msg(cx, &oldest, T_ITEM), 0);
        }
    }
    settle(rt);

    /* Stashes: one taken up again (its messages handled once), one held at
     * quiescence (counted in stashed), one whose actor stops holding it
     * (dead letters). */
    ac_addr s1 = spawn_svc(cx), s2 = spawn_svc(cx), s3 = spawn_svc(cx);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(send_msg(cx, &s1, T_STASH), 0);
        cr_assert_eq(send_msg(cx, &s2, T_STASH), 0);
        cr_assert_eq(send_msg(cx, &s3, T_STASH), 0);
    }
    cr_assert_eq(send_msg(cx, &s1, T_UNSTASH), 0);
    cr_assert_eq(send_msg(cx, &s3, T_STOP), 0);
    settle(rt);
    ac_stats held = stats_of(rt);
    cr_assert_eq(held.stashed, 3, "s2's three");
    IDENTITY(held);

    /* A dead actor: sends to it, and the messages queued behind its stop. */
    ac_addr d = spawn_svc(cx);
    cr_assert_eq(send_msg(cx, &d, T_STOP), 0);
    for (int i = 0; i < 3; i++)
        (void)send_msg(cx, &d, T_ITEM);  /* dropped by d, or refused */
    settle(rt);
    cr_assert_eq(send_msg(cx, &d, T_ITEM), 0, "a dead letter, not the sender's failure");
    cr_assert_eq(ac_send_checked(cx, &d, NULL, make_msg(cx, T_ITEM)), AC_ENOTFOUND);

    /* A killed actor's queue. */
    ac_addr k = spawn_svc(cx);
    for (int i = 0; i < 4; i++)
        (void)send_msg(cx, &k, T_ITEM);
    cr_assert_eq(ac_kill(cx, &k), 0);
    settle(rt);

    /* Timers: a one-shot, an interval cancelled after some beats, and a
     * one-shot to the dead actor. */
    ac_timer_id every;
    cr_assert_eq(ac_timer_after(cx, &a, 5, make_msg(cx, T_ITEM), NULL), 0);
    cr_assert_eq(ac_timer_after(cx, &d, 5, make_msg(cx, T_ITEM), NULL), 0);
    cr_assert_eq(ac_timer_every(cx, &b, 10, &svc_type, make_msg(cx, T_ITEM), &every), 0);
    pass(rt, det, 35);
    cr_assert_eq(ac_timer_cancel(cx, every), 0);
    settle(rt);

    /* Asks: answered, answered with an error, timed out then answered
     * late, and a reply to an asker that died meanwhile. */
    cr_assert_eq(send_ask(cx, &a, &b, REPLY_NOW, 0), 0);
    cr_assert_eq(send_ask(cx, &a, &c, REPLY_ERROR, 0), 0);
    settle(rt);
    cr_assert_eq(send_ask(cx, &a, &b, REPLY_LATER, 5), 0);
    settle(rt);
    pass(rt, det, 5);
    /* With workers the timer thread fires the timeout when a loaded
     * machine lets it, which may be past pass()'s sleep: the late reply
     * must follow the timeout, so wait for it to have run. */
    if (!det)
        cr_assert(wait_for(&g_timeouts, 1));
    cr_assert_eq(send_msg(cx, &b, T_LATE), 0);  /* the ask is over: a dead letter */
    settle(rt);
    ac_addr e = spawn_svc(cx);
    cr_assert_eq(send_ask(cx, &e, &c, REPLY_LATER, 0), 0);
    settle(rt);
    cr_assert_eq(send_msg(cx, &e, T_STOP), 0);
    settle(rt);
    cr_assert_eq(send_msg(cx, &c, T_LATE), 0);  /* to a dead asker: refused */
    settle(rt);
    cr_assert_eq(atomic_load(&g_answers), 3);
    cr_assert_eq(atomic_load(&g_timeouts), 1);

    /* Blocking asks from this thread: one times out, its late reply is
     * then taken (a dead letter) by the next one, which gets its own. */
    ac_envelope *reply = NULL;
    ac_envelope *req = make_msg(cx, T_REQ);
    ((msg *)ac_envelope_payload(req))->mode = REPLY_LATER;
    cr_assert_eq(ac_ask_wait(cx, &b, req, det ? AC_FOREVER : 20, &reply), AC_ETIMEDOUT);
    cr_assert_eq(send_msg(cx, &b, T_LATE), 0);
    settle(rt);
    req = make_msg(cx, T_REQ);
    cr_assert_eq(ac_ask_wait(cx, &b, req, AC_FOREVER, &reply), 0);
    ac_envelope_free(cx, reply);

    /* Monitors: an inbox and an actor (without a down hook) watch c. */
    ac_inbox *ib;
    cr_assert_eq(ac_inbox_create(cx, &ib), 0);
    cr_assert_eq(ac_monitor(cx, ac_inbox_addr(ib), &c, NULL), 0);
    cr_assert_eq(ac_monitor(cx, &a, &c, NULL), 0);
    cr_assert_eq(ac_stop(cx, &c), 0);
    settle(rt);
    ac_envelope *got = NULL;
    cr_assert_eq(ac_inbox_recv(cx, ib, AC_TAG_DOWN, det ? 0 : 5000, &got), 0);
    ac_envelope_free(cx, got);

    /* Inboxes: messages received, and some left at its destruction. */
    for (int i = 0; i < 5; i++)
        cr_assert_eq(send_msg(cx, ac_inbox_addr(ib), T_ITEM), 0);
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(ac_inbox_recv(cx, ib, T_ITEM, 5000, &got), 0);
        ac_envelope_free(cx, got);
    }
    ac_inbox_destroy(cx, ib);

    /* Links: one side traps exits (an exit message), one does not (killed
     * with its queue). */
    ac_addr f = spawn_svc(cx), g = spawn_svc(cx), h = spawn_svc(cx), i = spawn_svc(cx);
    cr_assert_eq(send_msg(cx, &f, T_TRAP), 0);
    cr_assert_eq(send_to(cx, &f, T_LINK, &g), 0);
    cr_assert_eq(send_to(cx, &h, T_LINK, &i), 0);
    settle(rt);
    cr_assert_eq(send_msg(cx, &g, T_FAIL), 0);
    cr_assert_eq(send_msg(cx, &i, T_FAIL), 0);
    settle(rt);
    (void)send_msg(cx, &h, T_ITEM);  /* h killed: refused */

    /* Supervisors: a child that fails and is restarted at its address. */
    ac_child_spec child;
    memset(&child, 0, sizeof child);
    child.type = &svc_type;
    child.restart = AC_RESTART_PERMANENT;
    ac_supervisor_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.strategy = AC_ONE_FOR_ONE;
    spec.max_restarts = 5;
    spec.within_ms = 1000;
    spec.children = &child;
    spec.nchildren = 1;
    ac_addr sup, kid;
    cr_assert_eq(ac_supervisor_start(cx, &spec, &sup, &kid), 0);
    cr_assert_eq(send_msg(cx, &kid, T_ITEM), 0);
    cr_assert_eq(send_msg(cx, &kid, T_FAIL), 0);
    settle(rt);
    if (!det) {
        struct timespec ts = {0, 50 * 1000000L};
        nanosleep(&ts, NULL);  /* the restart, if it waits */
        settle(rt);
    }
    (void)send_msg(cx, &kid, T_ITEM);
    settle(rt);

    ac_stats st = stats_of(rt);
    IDENTITY(st);
    cr_assert_gt(st.system_messages, 0, "downs, exits, a timeout");
    cr_assert_gt(st.refused, 0);
    cr_assert_gt(st.mailbox_drops, 0);
    cr_assert_geq(st.dead_letters, 5, "the inbox's three, two late replies");

    /* Shutdown stops what is left, and the identity still holds. */
    cr_assert_eq(ac_runtime_shutdown(rt), 0);
    st = stats_of(rt);
    IDENTITY(st);
    ac_runtime_destroy(rt);
}

Test(stats, identity_with_every_service_deterministic, .timeout = 60)
{
    workload(0);
}

Test(stats, identity_with_every_service_two_workers, .timeout = 60)
{
    workload(2);
}

/* ---- each case alone, with its exact figures -------------------------------- */

/* Five sends to a mailbox bounded at two, under one overflow policy: two
 * are handled, three dropped; `accepted` of the five return 0 (counted in
 * sends), the others AC_EFULL (refused). */
static void overflow_case(uint32_t policy, int accepted)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_bounded(cx, 2, policy);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(send_msg(cx, &a, T_ITEM), i < accepted ? 0 : AC_EFULL);
    settle(rt);
    ac_stats st = stats_of(rt);
    cr_assert_eq(st.sends, (uint64_t)accepted);
    cr_assert_eq(st.refused, (uint64_t)(5 - accepted));
    cr_assert_eq(st.messages, 2);
    cr_assert_eq(st.mailbox_drops, 3);
    IDENTITY(st);
    ac_runtime_destroy(rt);
}

Test(stats, drop_newest_is_a_send_and_a_drop, .timeout = 30)
{
    overflow_case(AC_OVERFLOW_DROP_NEWEST, 5);
}

Test(stats, drop_oldest_is_a_send_then_a_drop, .timeout = 30)
{
    overflow_case(AC_OVERFLOW_DROP_OLDEST, 5);
}

Test(stats, reject_is_refused_and_a_drop, .timeout = 30)
{
    overflow_case(AC_OVERFLOW_REJECT, 2);
}

Test(stats, send_to_a_dead_actor_is_refused, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_svc(cx);
    cr_assert_eq(ac_stop(cx, &a), 0);
    settle(rt);
    /* Refused at routing and counted so whether the send says so or not. */
    cr_assert_eq(send_msg(cx, &a, T_ITEM), 0);
    cr_assert_eq(ac_send_checked(cx, &a, NULL, make_msg(cx, T_ITEM)), AC_ENOTFOUND);
    ac_stats st = stats_of(rt);
    cr_assert_eq(st.sends, 0);
    cr_assert_eq(st.refused, 2);
    cr_assert_eq(st.dead_letters, 2);
    cr_assert_eq(st.messages, 0);
    cr_assert_eq(st.system_messages, 0, "a stop is counted nowhere");
    IDENTITY(st);
    ac_runtime_destroy(rt);
}

Test(stats, send_named_to_nobody_is_refused, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    cr_assert_eq(ac_send_named(cx, "stats.nobody", make_msg(cx, T_ITEM)), AC_ENOTFOUND);
    ac_stats st = stats_of(rt);
    cr_assert_eq(st.sends, 0);
    cr_assert_eq(st.refused, 1);
    cr_assert_eq(st.dead_letters, 1);
    IDENTITY(st);
    ac_runtime_destroy(rt);
}

Test(stats, messages_queued_behind_a_stop_are_dead_letters, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_svc(cx);
    cr_assert_eq(send_msg(cx, &a, T_STOP), 0);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(send_msg(cx, &a, T_ITEM), 0);
    settle(rt);
    ac_stats st = stats_of(rt);
    cr_assert_eq(st.sends, 4);
    cr_assert_eq(st.messages, 1);
    cr_assert_eq(st.dead_letters, 3);
    IDENTITY(st);
    ac_runtime_destroy(rt);
}

Test(stats, a_killed_actors_queue_is_dead_letters, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_svc(cx);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(send_msg(cx, &a, T_ITEM), 0);
    cr_assert_eq(ac_kill(cx, &a), 0);
    settle(rt);
    ac_stats st = stats_of(rt);
    cr_assert_eq(st.sends, 4);
    cr_assert_eq(st.messages, 0);
    cr_assert_eq(st.dead_letters, 4);
    cr_assert_eq(st.killed, 1);
    IDENTITY(st);
    ac_runtime_destroy(rt);
}

Test(stats, a_reply_to_a_dead_asker_is_refused, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr asker = spawn_svc(cx), replier = spawn_svc(cx);
    cr_assert_eq(send_ask(cx, &asker, &replier, REPLY_LATER, 0), 0);
    cr_assert_eq(send_msg(cx, &asker, T_STOP), 0);
    settle(rt);
    ac_stats before = stats_of(rt);
    cr_assert_eq(send_msg(cx, &replier, T_LATE), 0);
    settle(rt);
    ac_stats st = since(rt, &before);
    cr_assert_eq(st.sends, 1, "T_LATE");
    cr_assert_eq(st.messages, 1, "T_LATE handled");
    cr_assert_eq(st.refused, 1, "the reply");
    cr_assert_eq(st.dead_letters, 1, "the reply");
    st = stats_of(rt);
    IDENTITY(st);
    ac_runtime_destroy(rt);
}

Test(stats, replies_are_messages_timeouts_system_messages, .timeout = 30)
{
    atomic_store(&g_answers, 0);
    atomic_store(&g_timeouts, 0);
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr asker = spawn_svc(cx), replier = spawn_svc(cx);
    /* Answered: T_ASK, the request, the reply: three sends, three
     * messages. */
    cr_assert_eq(send_ask(cx, &asker, &replier, REPLY_NOW, 0), 0);
    settle(rt);
    ac_stats st = stats_of(rt);
    cr_assert_eq(st.sends, 3);
    cr_assert_eq(st.messages, 3);
    cr_assert_eq(st.system_messages, 0);
    /* Timed out, then answered late: the timeout is a system message, the
     * late reply a send and a dead letter. */
    ac_stats before = st;
    cr_assert_eq(send_ask(cx, &asker, &replier, REPLY_LATER, 5), 0);
    settle(rt);
    cr_assert_geq(ac_runtime_advance(rt, 5), 1);
    settle(rt);
    cr_assert_eq(send_msg(cx, &replier, T_LATE), 0);
    settle(rt);
    st = since(rt, &before);
    cr_assert_eq(atomic_load(&g_timeouts), 1);
    cr_assert_eq(st.system_messages, 1, "the timeout");
    cr_assert_eq(st.sends, 4, "T_ASK, the request, T_LATE, the reply");
    cr_assert_eq(st.messages, 3, "T_ASK, the request, T_LATE");
    cr_assert_eq(st.dead_letters, 1, "the late reply");
    st = stats_of(rt);
    IDENTITY(st);
    ac_runtime_destroy(rt);
}

/* Spawns w and t; `watcher` (NULL: w) monitors t, w traps exits and links
 * to t, so t's failure sends one down and one exit. Counts three sends. */
static void watch_and_link(ac_runtime *rt, const ac_addr *watcher,
                           ac_addr *w, ac_addr *t, uint64_t *ref)
{
    ac_ctx *cx = ac_runtime_ctx(rt);
    *w = spawn_svc(cx);
    *t = spawn_svc(cx);
    cr_assert_eq(ac_monitor(cx, watcher ? watcher : w, t, ref), 0);
    cr_assert_eq(send_msg(cx, w, T_TRAP), 0);
    cr_assert_eq(send_to(cx, w, T_LINK, t), 0);
    settle(rt);
}

Test(stats, downs_and_exits_are_system_messages, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr w, t;
    watch_and_link(rt, NULL, &w, &t, NULL);
    cr_assert_eq(send_msg(cx, &t, T_FAIL), 0);
    settle(rt);
    ac_stats st = stats_of(rt);
    cr_assert_eq(st.sends, 3);
    cr_assert_eq(st.messages, 3);
    cr_assert_eq(st.system_messages, 2, "a down and an exit");
    cr_assert_eq(st.unhandled, 2);
    IDENTITY(st);
    ac_runtime_destroy(rt);
}

Test(stats, downs_and_exits_withdrawn_once_queued_are_unhandled, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_inbox *ib;
    cr_assert_eq(ac_inbox_create(cx, &ib), 0);
    ac_addr w, t;
    uint64_t ref;
    watch_and_link(rt, ac_inbox_addr(ib), &w, &t, &ref);
    /* t fails first (it is runnable first): its down waits in the inbox,
     * its exit in w's mailbox behind the unlink. */
    cr_assert_eq(send_msg(cx, &t, T_FAIL), 0);
    cr_assert_eq(send_to(cx, &w, T_UNLINK, &t), 0);
    settle(rt);
    cr_assert_eq(ac_demonitor(cx, ref), 0);
    ac_envelope *got;
    cr_assert_eq(ac_inbox_recv(cx, ib, AC_ANY_TAG, 0, &got), AC_ETIMEDOUT);
    ac_inbox_destroy(cx, ib);
    ac_stats st = stats_of(rt);
    cr_assert_eq(st.sends, 4);
    cr_assert_eq(st.messages, 4);
    cr_assert_eq(st.system_messages, 2, "a down and an exit, both withdrawn");
    cr_assert_eq(st.unhandled, 2);
    IDENTITY(st);
    ac_runtime_destroy(rt);
}

Test(stats, an_inbox_counts_what_it_takes_and_what_it_drops, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_inbox *ib;
    cr_assert_eq(ac_inbox_create(cx, &ib), 0);
    ac_addr t = spawn_svc(cx);
    cr_assert_eq(ac_monitor(cx, ac_inbox_addr(ib), &t, NULL), 0);
    cr_assert_eq(ac_stop(cx, &t), 0);
    settle(rt);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(send_msg(cx, ac_inbox_addr(ib), T_ITEM), 0);
    ac_envelope *got;
    cr_assert_eq(ac_inbox_recv(cx, ib, AC_ANY_TAG, 0, &got), 0);
    cr_assert_eq(got->tag, AC_TAG_DOWN);
    ac_envelope_free(cx, got);
    cr_assert_eq(ac_inbox_recv(cx, ib, AC_ANY_TAG, 0, &got), 0);
    ac_envelope_free(cx, got);
    ac_inbox_destroy(cx, ib);
    ac_stats st = stats_of(rt);
    cr_assert_eq(st.sends, 3);
    cr_assert_eq(st.messages, 1);
    cr_assert_eq(st.system_messages, 1);
    cr_assert_eq(st.dead_letters, 2);
    IDENTITY(st);
    ac_runtime_destroy(rt);
}

/* ---- two nodes on loopback ------------------------------------------------------ */

/* The Oracle and Asker handlers are test_remote.c's. alpha's Asker asks
 * beta's Oracle, which then sends it notes and stops; a last message
 * finds it gone. A message that leaves a node is counted there in
 * node_forwarded; on the node it reaches, the node thread sends it on,
 * so it counts there as a send or as refused. The Oracle's reply to an
 * asker of alpha is a send of beta's and leaves in its node_forwarded,
 * as a message does (it was in no counter of beta's). */
Test(stats, identity_on_two_nodes, .timeout = 60)
{
    pair_of_nodes p;
    start_pair(&p, 10000, 0);
    ac_ctx *ca = ac_runtime_ctx(p.ra), *cb = ac_runtime_ctx(p.rb);
    remote_Asker_ref asker;
    remote_Oracle_ref oracle;
    cr_assert_eq(remote_Asker_spawn(ca, &asker, 3), 0);
    cr_assert_eq(remote_Oracle_spawn(cb, &oracle), 0);
    cr_assert_eq(remote_Asker_send_go(ca, asker, oracle, 21), 0);
    /* The ask's request comes from the Asker, farewell from this thread:
     * no order between them, so farewell waits for the reply. */
    for (uint64_t t0 = now_ms(); stats_of(p.ra).messages < 2 && now_ms() - t0 < WAIT_MS;)
        usleep(1000);
    cr_assert_eq(stats_of(p.ra).messages, 2, "go and its reply");
    cr_assert_eq(remote_Oracle_send_farewell(ca, oracle, asker, 5), 0);
    cr_assert_eq(remote_Oracle_send_question(ca, oracle, ac_string_of("late"), 1), 0);

    /* alpha: go, the reply and five notes handled; beta: the last
     * message refused or dropped. Then the links are quiet, and both
     * reconcile. */
    ac_stats sa = {0}, sb = {0};
    bool done = false;
    for (uint64_t t0 = now_ms(); !done && now_ms() - t0 < WAIT_MS; usleep(1000)) {
        cr_assert_eq(ac_runtime_run(p.ra), 0);
        cr_assert_eq(ac_runtime_run(p.rb), 0);
        sa = stats_of(p.ra);
        sb = stats_of(p.rb);
        done = sa.messages == 7 && sb.dead_letters == 1 && reconciles(&sa) && reconciles(&sb);
    }
    IDENTITY(sa);
    IDENTITY(sb);
    cr_assert_eq(sa.messages, 7, "go, the reply, five notes");
    cr_assert_eq(sa.sends, 10, "go, the request, the reply, farewell, late, five notes");
    cr_assert_eq(sa.node_forwarded, 3, "the request, farewell, late");
    cr_assert_eq(sb.messages, 2, "the request, farewell");
    cr_assert_eq(sb.node_forwarded, 6, "the reply, the notes");
    cr_assert_eq(sb.dead_letters, 1, "late");
    cr_assert_eq(sb.sends + sb.refused, 9, "the request, farewell, late, the reply, five notes");
    stop_pair(&p);
}

/* The replies beta's link still held when alpha went are lost with it:
 * counted sends of beta's, so they must end as its dead letters (in its
 * peer's queue, whichever thread drops it), or beta's counters would not
 * reconcile. alpha asks many questions and goes while beta answers: each
 * reply left, was lost in the queue, or found alpha down. How many were
 * queued when the link went is the race's to say, so the pair is played
 * again (up to ROUNDS times) until some were. */
static uint64_t ask_then_go(void)
{
    pair_of_nodes p;
    start_pair(&p, 10000, 0);
    ac_ctx *ca = ac_runtime_ctx(p.ra);
    remote_Asker_ref asker;
    remote_Oracle_ref oracle;
    cr_assert_eq(remote_Asker_spawn(ca, &asker, 0), 0);
    cr_assert_eq(remote_Oracle_spawn(ac_runtime_ctx(p.rb), &oracle), 0);
    enum { ASKS = 5000 };
    for (uint32_t i = 0; i < ASKS; i++)
        cr_assert_eq(remote_Asker_send_go(ca, asker, oracle, i), 0);
    for (uint64_t t0 = now_ms(); stats_of(p.rb).messages < ASKS / 10 && now_ms() - t0 < WAIT_MS;)
        usleep(100);
    ac_runtime_destroy(p.ra);
    p.ra = NULL;
    cr_assert(wait_peer(p.rb, "alpha", false, 0));
    ac_stats sb = {0};
    bool done = false;
    for (uint64_t t0 = now_ms(); !done && now_ms() - t0 < WAIT_MS; usleep(1000)) {
        cr_assert_eq(ac_runtime_run(p.rb), 0);
        sb = stats_of(p.rb);
        done = reconciles(&sb);
    }
    IDENTITY(sb);
    cr_assert_gt(sb.messages, 0, "beta answered");
    ac_peer_info pa = {0};
    cr_assert(peer_of(p.rb, "alpha", &pa));
    cr_log_info("beta: %llu questions, %llu replies forwarded, %llu records lost with the link",
                (unsigned long long)sb.messages, (unsigned long long)sb.node_forwarded,
                (unsigned long long)pa.drops);
    stop_pair(&p);
    return pa.drops;
}

Test(stats, replies_lost_with_a_link_are_dead_letters, .timeout = 120)
{
    enum { ROUNDS = 4 };
    uint64_t lost = 0;
    for (int round = 0; round < ROUNDS && lost == 0; round++)
        lost = ask_then_go();
    cr_log_info("records lost with the link in the last round: %llu", (unsigned long long)lost);
}
