/*
 * test_remote.c — the generated ask, reply, blocking ask, monitor and link
 * functions between actors of two nodes of one process (docs/NODES.md):
 * replies cross back decoded by the replier's type, a message sent before
 * a death arrives before its down, and a lost node ends every ask, monitor
 * and link of its actors at once with AC_ENOCONNECTION /
 * AC_REASON_NOCONNECTION.
 */
#include "remote.actor.h"

#include "nodes.h"

#include <criterion/criterion.h>
#include <stdatomic.h>
#include <string.h>

/* What the Askers saw, by index; written by handlers on the worker
 * threads, read by the test once a bounded wait saw `events` move. */
typedef struct seen {
    _Atomic int events;
    int status;               /* of the last continuation */
    char echo[32];
    uint32_t twice;
    int downs, exits, reason, code;
    uint32_t notes;
    /* Atomic: read by the test while later notes may be on their way,
     * carried by ZeroMQ, whose hand-offs ThreadSanitizer does not see. */
    _Atomic uint32_t last_note;
    bool note_after_down;     /* a note came after the down: ordering broken */
} seen;

static seen seen_by[4];

static void event(seen *s)
{
    /* Release: the test's acquire load sees the fields written before. */
    atomic_fetch_add_explicit(&s->events, 1, memory_order_release);
}

static bool wait_events(int index, int n)
{
    for (uint64_t t0 = now_ms(); now_ms() - t0 < WAIT_MS; usleep(1000))
        if (atomic_load_explicit(&seen_by[index].events, memory_order_acquire) >= n)
            return true;
    return false;
}

/* ---- Oracle ------------------------------------------------------------------------ */

int remote_Oracle_on_question(remote_Oracle *self, ac_ctx *cx, const remote_Oracle_question *m)
{
    self->asked++;
    return remote_Oracle_reply_question(cx, &m->reply_to, m->text, 2 * m->n);
}

int remote_Oracle_on_refuse(remote_Oracle *self, ac_ctx *cx, const remote_Oracle_refuse *m)
{
    (void)self;
    return ac_reply_error(cx, &m->reply_to, m->status);
}

int remote_Oracle_on_hold(remote_Oracle *self, ac_ctx *cx, const remote_Oracle_hold *m)
{
    (void)self;
    (void)cx;
    (void)m;
    return 0;
}

int remote_Oracle_on_farewell(remote_Oracle *self, ac_ctx *cx, const remote_Oracle_farewell *m)
{
    (void)self;
    for (uint32_t i = 1; i <= m->count; i++)
        cr_assert_eq(remote_Asker_send_note(cx, m->asker, i), 0);
    return ac_stop_self(cx);
}

int remote_Oracle_on_crash(remote_Oracle *self, ac_ctx *cx, const remote_Oracle_crash *m)
{
    (void)self;
    return ac_fail(cx, m->code);
}

/* ---- Asker ------------------------------------------------------------------------- */

int remote_Asker_on_start(remote_Asker *self, ac_ctx *cx, const remote_Asker_start_args *args)
{
    (void)cx;
    self->index = args->index;
    return 0;
}

static int answered(void *state, ac_ctx *cx, int status, const remote_Oracle_question_reply *r,
                    void *arg)
{
    (void)cx;
    (void)arg;
    seen *s = &seen_by[((remote_Asker *)state)->index];
    s->status = status;
    if (status == 0) {
        snprintf(s->echo, sizeof s->echo, "%.*s", (int)r->echo.len, r->echo.data);
        s->twice = r->twice;
    }
    event(s);
    return 0;
}

static int held(void *state, ac_ctx *cx, int status, const remote_Oracle_hold_reply *r, void *arg)
{
    (void)cx;
    (void)r;
    (void)arg;
    seen *s = &seen_by[((remote_Asker *)state)->index];
    s->status = status;
    event(s);
    return 0;
}

int remote_Asker_on_go(remote_Asker *self, ac_ctx *cx, const remote_Asker_go *m)
{
    (void)self;
    return remote_Oracle_ask_question(cx, m->oracle, ac_string_of("who?"), m->n, 0, answered,
                                      NULL);
}

int remote_Asker_on_go_hold(remote_Asker *self, ac_ctx *cx, const remote_Asker_go_hold *m)
{
    (void)self;
    return remote_Oracle_ask_hold(cx, m->oracle, 1, 60000, held, NULL);
}

int remote_Asker_on_watch(remote_Asker *self, ac_ctx *cx, const remote_Asker_watch *m)
{
    (void)self;
    return ac_monitor(cx, ac_self(cx), &m->oracle.addr, NULL);
}

int remote_Asker_on_bind(remote_Asker *self, ac_ctx *cx, const remote_Asker_bind *m)
{
    (void)self;
    if (m->trap)
        cr_assert_eq(ac_trap_exits(cx, true), 0);
    int rc = ac_link(cx, &m->oracle.addr);
    event(&seen_by[self->index]);
    return rc;
}

int remote_Asker_on_note(remote_Asker *self, ac_ctx *cx, const remote_Asker_note *m)
{
    (void)cx;
    seen *s = &seen_by[self->index];
    if (s->downs > 0)
        s->note_after_down = true;
    s->notes++;
    atomic_store_explicit(&s->last_note, m->seq, memory_order_relaxed);
    event(s);
    return 0;
}

int remote_Asker_on_down(remote_Asker *self, ac_ctx *cx, const ac_down *m)
{
    (void)cx;
    seen *s = &seen_by[self->index];
    s->downs++;
    s->reason = m->reason;
    s->code = m->code;
    event(s);
    return 0;
}

int remote_Asker_on_exit(remote_Asker *self, ac_ctx *cx, const ac_exit *m)
{
    (void)cx;
    seen *s = &seen_by[self->index];
    s->exits++;
    s->reason = m->reason;
    s->code = m->code;
    event(s);
    return 0;
}

/* ---- the tests ----------------------------------------------------------------------- */

static pair_of_nodes nodes;

/* alpha runs the Askers, beta the Oracles; long timeouts so that only the
 * tests that stop a node see one lost. */
static void setup(void)
{
    memset(seen_by, 0, sizeof seen_by);
    start_pair(&nodes, 10000, 0);
}

static void teardown(void)
{
    stop_pair(&nodes);
}

static remote_Oracle_ref oracle_on_beta(void)
{
    remote_Oracle_ref o;
    cr_assert_eq(remote_Oracle_spawn(ac_runtime_ctx(nodes.rb), &o), 0);
    return o;
}

static remote_Asker_ref asker_on_alpha(uint32_t index)
{
    remote_Asker_ref a;
    cr_assert_eq(remote_Asker_spawn(ac_runtime_ctx(nodes.ra), &a, index), 0);
    return a;
}

/* Returns once every record alpha's node sent beta before has been
 * handled there (a monitor or link made by an Asker is in place): a
 * blocking ask from alpha's main travels behind them on the same link,
 * and its answer comes back after. */
static void sync_with_beta(remote_Oracle_ref o)
{
    ac_ctx *cx = ac_runtime_ctx(nodes.ra);
    remote_Oracle_question_reply *r = NULL;
    cr_assert_eq(remote_Oracle_ask_question_wait(cx, o, ac_string_of("sync"), 0, WAIT_MS, &r), 0);
    ac_reply_free(cx, r);
}

/* beta leaves the cluster: its runtime is destroyed, alpha sees the link
 * close. */
static void lose_beta(void)
{
    ac_runtime_destroy(nodes.rb);
    nodes.rb = NULL;
    cr_assert(wait_peer(nodes.ra, "beta", false, 0), "alpha sees beta lost");
}

/* Each test runs between setup and teardown (spelt out: the ThreadSanitizer
 * stand-in for Criterion has no suite fixtures). */
#define REMOTE_TEST(name)                                                       \
    static void name##_body(void);                                              \
    Test(remote, name, .timeout = 60)                                           \
    {                                                                           \
        setup();                                                                \
        name##_body();                                                          \
        teardown();                                                             \
    }                                                                           \
    static void name##_body(void)

REMOTE_TEST(an_ask_from_an_actor_gets_the_reply_of_another_node_decoded)
{
    remote_Oracle_ref o = oracle_on_beta();
    remote_Asker_ref a = asker_on_alpha(0);
    cr_assert_eq(remote_Asker_send_go(ac_runtime_ctx(nodes.ra), a, o, 21), 0);
    cr_assert(wait_events(0, 1), "the continuation ran");
    cr_assert_eq(seen_by[0].status, 0);
    cr_assert_str_eq(seen_by[0].echo, "who?");
    cr_assert_eq(seen_by[0].twice, 42);
}

REMOTE_TEST(a_blocking_ask_from_main_gets_the_reply_of_another_node)
{
    remote_Oracle_ref o = oracle_on_beta();
    ac_ctx *cx = ac_runtime_ctx(nodes.ra);
    for (uint32_t i = 0; i < 50; i++) {
        remote_Oracle_question_reply *r = NULL;
        cr_assert_eq(remote_Oracle_ask_question_wait(cx, o, ac_string_of("again"), i, 5000, &r), 0);
        cr_assert_eq(r->twice, 2 * i);
        cr_assert_eq(r->echo.len, 5);
        cr_assert_eq(memcmp(r->echo.data, "again", 5), 0);
        ac_reply_free(cx, r);
    }
}

REMOTE_TEST(an_error_reply_crosses_as_its_status)
{
    remote_Oracle_ref o = oracle_on_beta();
    remote_Oracle_refuse_reply *r = NULL;
    cr_assert_eq(remote_Oracle_ask_refuse_wait(ac_runtime_ctx(nodes.ra), o, AC_EFULL, 5000, &r),
                 AC_EFULL);
    cr_assert_null(r);
}

REMOTE_TEST(pending_asks_fail_at_once_when_the_node_is_lost)
{
    remote_Oracle_ref o = oracle_on_beta();
    remote_Asker_ref a = asker_on_alpha(0);
    cr_assert_eq(remote_Asker_send_go_hold(ac_runtime_ctx(nodes.ra), a, o), 0);
    /* The hold arrived (so the ask is pending there) before beta goes. */
    ac_peer_info p = {0};
    for (uint64_t t0 = now_ms(); now_ms() - t0 < WAIT_MS; usleep(1000))
        if (peer_of(nodes.rb, "alpha", &p) && p.received >= 1)
            break;
    uint64_t t0 = now_ms();
    lose_beta();
    cr_assert(wait_events(0, 1), "the continuation ran");
    cr_assert_eq(seen_by[0].status, AC_ENOCONNECTION);
    cr_assert_lt(now_ms() - t0, 30000, "long before the ask's 60 s timeout");
}

REMOTE_TEST(a_monitor_of_a_remote_actor_fires_after_its_last_messages)
{
    remote_Oracle_ref o = oracle_on_beta();
    remote_Asker_ref a = asker_on_alpha(1);
    ac_ctx *cx = ac_runtime_ctx(nodes.ra);
    cr_assert_eq(remote_Asker_send_watch(cx, a, o), 0);
    /* The monitor is made before the farewell, in that order on one link. */
    cr_assert_eq(remote_Asker_send_note(cx, a, 0), 0);
    cr_assert(wait_events(1, 1), "the first note came");
    sync_with_beta(o);  /* and the monitor reached beta */
    enum { COUNT = 200 };
    cr_assert_eq(remote_Oracle_send_farewell(ac_runtime_ctx(nodes.rb), o, a, COUNT), 0);
    cr_assert(wait_events(1, 2 + COUNT), "the notes and the down came");
    cr_assert_eq(seen_by[1].downs, 1);
    cr_assert_eq(seen_by[1].reason, AC_REASON_NORMAL);
    cr_assert_eq(seen_by[1].notes, COUNT + 1, "every note before the down");
    cr_assert_eq(atomic_load_explicit(&seen_by[1].last_note, memory_order_relaxed), COUNT);
    cr_assert_not(seen_by[1].note_after_down);
}

REMOTE_TEST(a_monitor_of_a_failed_remote_actor_carries_its_code)
{
    remote_Oracle_ref o = oracle_on_beta();
    remote_Asker_ref a = asker_on_alpha(1);
    ac_ctx *cx = ac_runtime_ctx(nodes.ra);
    cr_assert_eq(remote_Asker_send_watch(cx, a, o), 0);
    cr_assert_eq(remote_Asker_send_note(cx, a, 0), 0);
    cr_assert(wait_events(1, 1), "the watch was handled");
    sync_with_beta(o);
    cr_assert_eq(remote_Oracle_send_crash(ac_runtime_ctx(nodes.rb), o, 7), 0);
    cr_assert(wait_events(1, 2), "the down came");
    cr_assert_eq(seen_by[1].reason, AC_REASON_FAILED);
    cr_assert_eq(seen_by[1].code, 7);
}

REMOTE_TEST(a_monitor_of_a_dead_remote_address_is_noproc)
{
    remote_Oracle_ref o = oracle_on_beta();
    cr_assert_eq(ac_kill(ac_runtime_ctx(nodes.rb), &o.addr), 0);
    ac_runtime_run(nodes.rb);
    remote_Asker_ref a = asker_on_alpha(2);
    cr_assert_eq(remote_Asker_send_watch(ac_runtime_ctx(nodes.ra), a, o), 0);
    cr_assert(wait_events(2, 1), "the down came");
    cr_assert_eq(seen_by[2].reason, AC_REASON_NOPROC);
}

REMOTE_TEST(monitors_of_a_lost_node_fire_with_noconnection)
{
    remote_Oracle_ref o1 = oracle_on_beta(), o2 = oracle_on_beta();
    remote_Asker_ref a = asker_on_alpha(3);
    ac_ctx *cx = ac_runtime_ctx(nodes.ra);
    cr_assert_eq(remote_Asker_send_watch(cx, a, o1), 0);
    cr_assert_eq(remote_Asker_send_watch(cx, a, o2), 0);
    /* Whether beta heard of them or not, alpha's monitors fire. */
    lose_beta();
    cr_assert(wait_events(3, 2), "two downs");
    cr_assert_eq(seen_by[3].downs, 2);
    cr_assert_eq(seen_by[3].reason, AC_REASON_NOCONNECTION);
}

REMOTE_TEST(a_link_to_a_failing_remote_actor_brings_an_exit_to_a_trapper)
{
    remote_Oracle_ref o = oracle_on_beta();
    remote_Asker_ref a = asker_on_alpha(0);
    cr_assert_eq(remote_Asker_send_bind(ac_runtime_ctx(nodes.ra), a, o, true), 0);
    cr_assert(wait_events(0, 1), "linked");
    sync_with_beta(o);  /* the link's other half is on beta */
    cr_assert_eq(remote_Oracle_send_crash(ac_runtime_ctx(nodes.rb), o, 9), 0);
    cr_assert(wait_events(0, 2), "the exit came");
    cr_assert_eq(seen_by[0].exits, 1);
    cr_assert_eq(seen_by[0].reason, AC_REASON_FAILED);
    cr_assert_eq(seen_by[0].code, 9);
}

REMOTE_TEST(a_linked_actor_dies_with_its_remote_partner)
{
    remote_Oracle_ref o = oracle_on_beta();
    remote_Asker_ref a = asker_on_alpha(1);
    ac_ctx *cx = ac_runtime_ctx(nodes.ra);
    cr_assert_eq(remote_Asker_send_bind(cx, a, o, false), 0);
    cr_assert(wait_events(1, 1), "linked");
    sync_with_beta(o);
    /* The Oracle watches nothing; an inbox on alpha monitors the Asker. */
    ac_inbox *ib;
    cr_assert_eq(ac_inbox_create(cx, &ib), 0);
    cr_assert_eq(ac_monitor(cx, ac_inbox_addr(ib), &a.addr, NULL), 0);
    cr_assert_eq(remote_Oracle_send_crash(ac_runtime_ctx(nodes.rb), o, 5), 0);
    ac_envelope *e = NULL;
    cr_assert_eq(ac_inbox_recv(cx, ib, AC_TAG_DOWN, WAIT_MS, &e), 0);
    const ac_down *d = ac_envelope_payload(e);
    cr_assert_eq(d->reason, AC_REASON_KILLED);
    cr_assert_eq(d->code, 5);
    ac_envelope_free(cx, e);
    ac_inbox_destroy(cx, ib);
}

REMOTE_TEST(links_to_a_lost_node_end_with_noconnection)
{
    remote_Oracle_ref o = oracle_on_beta();
    remote_Asker_ref a = asker_on_alpha(2);
    cr_assert_eq(remote_Asker_send_bind(ac_runtime_ctx(nodes.ra), a, o, true), 0);
    cr_assert(wait_events(2, 1), "linked");
    lose_beta();  /* alpha's half ends whether beta heard of it or not */
    cr_assert(wait_events(2, 2), "the exit came");
    cr_assert_eq(seen_by[2].reason, AC_REASON_NOCONNECTION);
}

/* ---- names and groups ------------------------------------------------------------------ */

REMOTE_TEST(a_name_on_another_node_is_found_and_its_holder_answers)
{
    remote_Oracle_ref o = oracle_on_beta();
    cr_assert_eq(ac_register(ac_runtime_ctx(nodes.rb), "oracle", &o.addr), 0);
    ac_ctx *cx = ac_runtime_ctx(nodes.ra);
    remote_Oracle_ref found;
    cr_assert_eq(ac_whereis_on(cx, "beta", "oracle", 5000, &found.addr), 0);
    cr_assert(ac_addr_eq(&found.addr, &o.addr));
    remote_Oracle_question_reply *r = NULL;
    cr_assert_eq(remote_Oracle_ask_question_wait(cx, found, ac_string_of("hi"), 4, 5000, &r), 0);
    cr_assert_eq(r->twice, 8);
    ac_reply_free(cx, r);
    cr_assert_eq(ac_whereis_on(cx, "beta", "nobody", 5000, &found.addr), AC_ENOTFOUND);
    cr_assert_eq(ac_whereis_on(cx, "gamma", "oracle", 5000, &found.addr), AC_ENOCONNECTION);
}

static bool wait_members(ac_runtime *rt, const char *group, size_t n)
{
    ac_ctx *cx = ac_runtime_ctx(rt);
    for (uint64_t t0 = now_ms(); now_ms() - t0 < WAIT_MS; usleep(1000))
        if (ac_group_members(cx, group, NULL, 0) == n)
            return true;
    return false;
}

/* pg's model: each node owns its members and every node sees them all; a
 * publish reaches the other node's members in one record. */
REMOTE_TEST(a_group_spans_nodes_and_a_publish_crosses_once_per_node)
{
    ac_ctx *ca = ac_runtime_ctx(nodes.ra), *cb = ac_runtime_ctx(nodes.rb);
    remote_Asker_ref a[3];
    for (uint32_t i = 0; i < 3; i++) {
        a[i] = asker_on_alpha(i);
        cr_assert_eq(ac_group_join(ca, "room", &a[i].addr), 0);
    }
    remote_Asker_ref b;
    cr_assert_eq(remote_Asker_spawn(cb, &b, 3), 0);
    cr_assert_eq(ac_group_join(cb, "room", &b.addr), 0);
    cr_assert(wait_members(nodes.rb, "room", 4), "beta sees alpha's three members and its own");
    cr_assert(wait_members(nodes.ra, "room", 4), "and alpha beta's");

    ac_peer_info before = {0}, after = {0};
    cr_assert(peer_of(nodes.ra, "beta", &before));
    cr_assert_eq(remote_Asker_publish_note(cb, "room", 7), 4, "four members reached");
    for (uint32_t i = 0; i < 3; i++)
        cr_assert(wait_events(i, 1), "alpha's member %u got it", i);
    ac_runtime_run(nodes.rb);
    cr_assert(wait_events(3, 1));
    for (uint32_t i = 0; i < 4; i++) {
        cr_assert_eq(seen_by[i].notes, 1);
        cr_assert_eq(atomic_load_explicit(&seen_by[i].last_note, memory_order_relaxed), 7);
    }
    cr_assert(peer_of(nodes.ra, "beta", &after));
    cr_assert_eq(after.received - before.received, 1, "one record for three members");

    /* A member that dies leaves the group on both nodes. */
    cr_assert_eq(ac_kill(ca, &a[0].addr), 0);
    cr_assert(wait_members(nodes.rb, "room", 3));
    cr_assert_eq(ac_group_leave(ca, "room", &a[1].addr), 0);
    cr_assert(wait_members(nodes.rb, "room", 2));
    /* And a lost node's members leave with it. */
    lose_beta();
    cr_assert(wait_members(nodes.ra, "room", 1), "only alpha's own member is left");
}

/* A node that comes up later hears of the members that joined before. */
REMOTE_TEST(members_that_joined_before_a_node_came_up_are_synced_to_it)
{
    ac_ctx *ca = ac_runtime_ctx(nodes.ra);
    remote_Asker_ref a = asker_on_alpha(0);
    cr_assert_eq(ac_group_join(ca, "early", &a.addr), 0);
    cr_assert(wait_members(nodes.rb, "early", 1));
    /* beta restarts: a new incarnation, which knows nobody at first. */
    uint64_t old = ac_runtime_node(nodes.rb);
    ac_runtime_destroy(nodes.rb);
    nodes.rb = start_node(&nodes.b, nodes.cluster);
    cr_assert_neq(ac_runtime_node(nodes.rb), old);
    cr_assert(wait_peer(nodes.ra, "beta", true, ac_runtime_node(nodes.rb)));
    cr_assert(wait_members(nodes.rb, "early", 1), "the new beta learnt alpha's member");
    cr_assert_eq(remote_Asker_publish_note(ac_runtime_ctx(nodes.rb), "early", 3), 1);
    cr_assert(wait_events(0, 1));
    cr_assert_eq(atomic_load_explicit(&seen_by[0].last_note, memory_order_relaxed), 3);
}

/* ---- timers ------------------------------------------------------------------------------ */

REMOTE_TEST(send_after_and_send_every_reach_an_actor_of_another_node)
{
    remote_Asker_ref b;
    cr_assert_eq(remote_Asker_spawn(ac_runtime_ctx(nodes.rb), &b, 0), 0);
    ac_ctx *cx = ac_runtime_ctx(nodes.ra);
    ac_timer_id once = 0, beat = 0;
    cr_assert_eq(remote_Asker_send_note_after(cx, b, 10, 1, &once), 0);
    cr_assert_neq(once, 0);
    cr_assert(wait_events(0, 1), "the one-shot crossed");
    cr_assert_eq(atomic_load_explicit(&seen_by[0].last_note, memory_order_relaxed), 1);
    cr_assert_eq(remote_Asker_send_note_every(cx, b, 5, 2, &beat), 0);
    cr_assert(wait_events(0, 4), "three beats crossed");
    cr_assert_eq(ac_timer_cancel(cx, beat), 0);
}

/* ---- a node that is not up ------------------------------------------------------------ */

REMOTE_TEST(monitors_and_links_of_actors_of_a_node_that_is_not_up_fail_at_once)
{
    remote_Oracle_ref o = oracle_on_beta();
    lose_beta();
    ac_ctx *cx = ac_runtime_ctx(nodes.ra);
    ac_inbox *ib;
    cr_assert_eq(ac_inbox_create(cx, &ib), 0);
    uint64_t ref = 0;
    cr_assert_eq(ac_monitor(cx, ac_inbox_addr(ib), &o.addr, &ref), 0);
    ac_envelope *e = NULL;
    cr_assert_eq(ac_inbox_recv(cx, ib, AC_TAG_DOWN, WAIT_MS, &e), 0);
    const ac_down *d = ac_envelope_payload(e);
    cr_assert_eq(d->reason, AC_REASON_NOCONNECTION);
    cr_assert_eq(d->ref, ref);
    ac_envelope_free(cx, e);
    ac_inbox_destroy(cx, ib);

    /* A link: the Asker's bind handler sees AC_ENOCONNECTION and fails. */
    remote_Asker_ref a = asker_on_alpha(0);
    cr_assert_eq(ac_inbox_create(cx, &ib), 0);
    cr_assert_eq(ac_monitor(cx, ac_inbox_addr(ib), &a.addr, NULL), 0);
    cr_assert_eq(remote_Asker_send_bind(cx, a, o, false), 0);
    cr_assert_eq(ac_inbox_recv(cx, ib, AC_TAG_DOWN, WAIT_MS, &e), 0);
    d = ac_envelope_payload(e);
    cr_assert_eq(d->reason, AC_REASON_FAILED);
    cr_assert_eq(d->code, AC_ENOCONNECTION);
    ac_envelope_free(cx, e);
    ac_inbox_destroy(cx, ib);

    /* An ask: refused at the send, a dead letter (its node is not up). */
    remote_Oracle_question_reply *r = NULL;
    cr_assert_eq(remote_Oracle_ask_question_wait(cx, o, ac_string_of("?"), 1, 1000, &r),
                 AC_ENOTFOUND);
}
