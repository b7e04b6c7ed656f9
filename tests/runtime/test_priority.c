/*
 * test_priority.c — urgent messages (`on urgent x(...)`, priority.actor):
 * they overtake the normal mail waiting for an actor, each priority stays
 * FIFO per sender, an urgent message sent before a normal one is handled
 * before it, a bound counts both, and the counters still reconcile.
 */
#include "priority.actor.h"

#include "fixtures.h"
#include "nodes.h"

#include <sched.h>

#define SENDERS 16
#define TRACE_MAX 8192

/* What the Log handled, in order: a note as its seq, an alarm as its seq
 * with ALARM set. Written by the Log's handlers (one at a time), read by
 * the test after ac_runtime_run. */
#define ALARM ((uint64_t)1 << 63)
static _Atomic uint64_t g_order[TRACE_MAX];
static _Atomic uint64_t g_len;
static _Atomic uint64_t g_notes, g_alarms, g_bad;
/* Per sender: the next seq of each priority, and alarms handled. */
static _Atomic uint64_t g_next_note[SENDERS], g_next_alarm[SENDERS];

static void trace(uint64_t v)
{
    uint64_t at = atomic_fetch_add_explicit(&g_len, 1, memory_order_relaxed);
    if (at < TRACE_MAX)
        atomic_store_explicit(&g_order[at], v, memory_order_relaxed);
}

int prio_Log_on_note(prio_Log *self, ac_ctx *cx, const prio_Log_note *m)
{
    (void)self;
    (void)cx;
    trace(m->seq);
    atomic_fetch_add_explicit(&g_notes, 1, memory_order_relaxed);
    if (m->sender >= SENDERS)
        return 0;
    /* FIFO among this sender's notes, and every alarm it sent before
     * this note already handled. */
    uint64_t want = atomic_load_explicit(&g_next_note[m->sender], memory_order_relaxed);
    uint64_t alarms = atomic_load_explicit(&g_next_alarm[m->sender], memory_order_relaxed);
    if (m->seq != want || alarms < m->urgent_before)
        atomic_fetch_add_explicit(&g_bad, 1, memory_order_relaxed);
    atomic_store_explicit(&g_next_note[m->sender], m->seq + 1, memory_order_relaxed);
    return 0;
}

int prio_Log_on_alarm(prio_Log *self, ac_ctx *cx, const prio_Log_alarm *m)
{
    (void)self;
    (void)cx;
    trace(m->seq | ALARM);
    atomic_fetch_add_explicit(&g_alarms, 1, memory_order_relaxed);
    if (m->sender >= SENDERS)
        return 0;
    uint64_t want = atomic_load_explicit(&g_next_alarm[m->sender], memory_order_relaxed);
    if (m->seq != want)
        atomic_fetch_add_explicit(&g_bad, 1, memory_order_relaxed);
    atomic_store_explicit(&g_next_alarm[m->sender], m->seq + 1, memory_order_relaxed);
    return 0;
}

int prio_Log_on_count(prio_Log *self, ac_ctx *cx, const prio_Log_count *m)
{
    (void)self;
    return prio_Log_reply_count(cx, &m->reply_to,
                                atomic_load_explicit(&g_notes, memory_order_relaxed),
                                atomic_load_explicit(&g_alarms, memory_order_relaxed));
}

/* The gate wait_gate holds its worker at; g_holding says it got there. */
static _Atomic int g_gate, g_holding;

int prio_Log_on_wait_gate(prio_Log *self, ac_ctx *cx, const prio_Log_wait_gate *m)
{
    (void)self;
    (void)cx;
    (void)m;
    atomic_store(&g_holding, 1);
    while (!atomic_load(&g_gate))
        sched_yield();
    return 0;
}

/* Picky defers everything until opened (the stash and the urgent lane
 * together: a stashed urgent envelope belongs to the stash, not to the
 * lane that brought it). */
static int picky_take(prio_Picky *self, ac_ctx *cx, uint64_t v)
{
    if (!self->open)
        return ac_stash(cx);
    trace(v);
    return 0;
}

int prio_Picky_on_hold(prio_Picky *self, ac_ctx *cx, const prio_Picky_hold *m)
{
    return picky_take(self, cx, m->seq | ALARM);
}

int prio_Picky_on_later(prio_Picky *self, ac_ctx *cx, const prio_Picky_later *m)
{
    return picky_take(self, cx, m->seq);
}

int prio_Picky_on_open(prio_Picky *self, ac_ctx *cx, const prio_Picky_open *m)
{
    (void)m;
    self->open = true;
    return ac_unstash_all(cx) == 3 ? 0 : AC_EINVAL;
}

/* Every third message urgent, each priority numbered from 0. */
int prio_Sender_on_go(prio_Sender *self, ac_ctx *cx, const prio_Sender_go *m)
{
    (void)self;
    uint64_t notes = 0, alarms = 0;
    for (uint32_t i = 0; i < m->n; i++) {
        int rc = i % 3 == 0 ? prio_Log_send_alarm(cx, m->log, m->id, alarms++)
                            : prio_Log_send_note(cx, m->log, m->id, notes++, alarms);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* The counters reconcile, and the wake-ups counted nowhere. */
static void assert_reconciles(ac_runtime *rt, uint64_t messages)
{
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.sends + st.refused,
                 st.messages + st.dead_letters + st.mailbox_drops + st.node_forwarded);
    cr_assert_eq(st.messages, messages);
    cr_assert_eq(st.system_messages, 0);
}

static uint64_t traced(uint64_t i)
{
    return atomic_load_explicit(&g_order[i], memory_order_relaxed);
}

Test(priority, urgent_mail_overtakes_a_backlog, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    prio_Log_ref log;
    cr_assert_eq(prio_Log_spawn(cx, &log), 0);
    for (uint64_t i = 0; i < 100; i++)
        cr_assert_eq(prio_Log_send_note(cx, log, SENDERS, i, 0), 0);
    for (uint64_t i = 0; i < 5; i++)
        cr_assert_eq(prio_Log_send_alarm(cx, log, SENDERS, i), 0);
    for (uint64_t i = 100; i < 200; i++)
        cr_assert_eq(prio_Log_send_note(cx, log, SENDERS, i, 0), 0);
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&g_len), 205);
    for (uint64_t i = 0; i < 5; i++)
        cr_assert_eq(traced(i), i | ALARM, "position %lu", (unsigned long)i);
    for (uint64_t i = 0; i < 200; i++)
        cr_assert_eq(traced(5 + i), i, "position %lu", (unsigned long)(5 + i));
    assert_reconciles(rt, 205);
    ac_runtime_destroy(rt);
}

Test(priority, urgent_mail_wakes_an_idle_actor, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    prio_Log_ref log;
    cr_assert_eq(prio_Log_spawn(cx, &log), 0);
    for (uint64_t round = 0; round < 3; round++) {
        cr_assert_eq(prio_Log_send_alarm(cx, log, 0, round), 0);
        ac_runtime_run(rt);
        cr_assert_eq(atomic_load(&g_alarms), round + 1);
    }
    cr_assert_eq(atomic_load(&g_bad), 0);
    assert_reconciles(rt, 3);
    ac_runtime_destroy(rt);
}

/* A blocking ask of an urgent request is answered before the backlog. */
Test(priority, an_urgent_ask_is_answered_ahead_of_the_backlog, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    prio_Log_ref log;
    cr_assert_eq(prio_Log_spawn(cx, &log), 0);
    for (uint64_t i = 0; i < 50; i++)
        cr_assert_eq(prio_Log_send_note(cx, log, SENDERS, i, 0), 0);
    ac_envelope *reply = NULL;
    cr_assert_eq(ac_ask_wait_typed(cx, &log.addr, &prio_Log_type,
                                   ac_envelope_new(cx, prio_Log_TAG_count,
                                                   sizeof(prio_Log_count)),
                                   AC_FOREVER, &reply), 0);
    const prio_Log_count_reply *r = ac_reply_body(reply);
    cr_assert_eq(r->notes, 0);
    ac_envelope_free(cx, reply);
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&g_notes), 50);
    ac_runtime_destroy(rt);
}

static void run_senders(int workers)
{
    enum { PER_SENDER = 6000 };
    ac_runtime *rt = make_runtime(workers);
    ac_ctx *cx = ac_runtime_ctx(rt);
    prio_Log_ref log;
    cr_assert_eq(prio_Log_spawn(cx, &log), 0);
    for (uint32_t s = 0; s < SENDERS; s++) {
        prio_Sender_ref sender;
        cr_assert_eq(prio_Sender_spawn(cx, &sender), 0);
        cr_assert_eq(prio_Sender_send_go(cx, sender, log, s, PER_SENDER), 0);
    }
    ac_runtime_run(rt);
    uint64_t alarms = (PER_SENDER + 2) / 3;
    cr_assert_eq(atomic_load(&g_bad), 0);
    cr_assert_eq(atomic_load(&g_alarms), SENDERS * alarms);
    cr_assert_eq(atomic_load(&g_notes), SENDERS * (PER_SENDER - alarms));
    for (uint32_t s = 0; s < SENDERS; s++) {
        cr_assert_eq(atomic_load(&g_next_alarm[s]), alarms);
        cr_assert_eq(atomic_load(&g_next_note[s]), PER_SENDER - alarms);
    }
    assert_reconciles(rt, SENDERS * (PER_SENDER + 1));
    ac_runtime_destroy(rt);
}

/* No message lost, none reordered within its priority and sender, and no
 * note handled before an alarm its sender sent first. */
Test(priority, many_senders_mixing_priorities_deterministic, .timeout = 60)
{
    run_senders(0);
}

Test(priority, many_senders_mixing_priorities_two_workers, .timeout = 60)
{
    run_senders(2);
}

static prio_Log_ref spawn_bounded(ac_ctx *cx, uint32_t bound, uint32_t overflow)
{
    ac_spawn_options o = {0};
    o.mailbox_bound = bound;
    o.mailbox_overflow = overflow;
    prio_Log_ref log;
    cr_assert_eq(prio_Log_spawn_opts(cx, &o, &log), 0);
    return log;
}

Test(priority, a_bound_counts_both_priorities, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    prio_Log_ref log = spawn_bounded(cx, 3, AC_OVERFLOW_REJECT);
    cr_assert_eq(prio_Log_send_note(cx, log, SENDERS, 0, 0), 0);
    cr_assert_eq(prio_Log_send_alarm(cx, log, SENDERS, 0), 0);
    cr_assert_eq(prio_Log_send_note(cx, log, SENDERS, 1, 0), 0);
    cr_assert_eq(prio_Log_send_alarm(cx, log, SENDERS, 1), AC_EFULL);
    cr_assert_eq(prio_Log_send_note(cx, log, SENDERS, 2, 0), AC_EFULL);
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&g_len), 3, "traced %llu: %llx %llx", (unsigned long long)atomic_load(&g_len), (unsigned long long)traced(0), (unsigned long long)traced(1));
    cr_assert_eq(traced(0), 0 | ALARM);
    cr_assert_eq(traced(1), 0);
    cr_assert_eq(traced(2), 1);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.mailbox_drops, 2);
    assert_reconciles(rt, 3);
    /* Handled, they make room again, in both lanes. */
    cr_assert_eq(prio_Log_send_alarm(cx, log, SENDERS, 1), 0);
    cr_assert_eq(prio_Log_send_alarm(cx, log, SENDERS, 2), 0);
    cr_assert_eq(prio_Log_send_note(cx, log, SENDERS, 2, 0), 0);
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&g_len), 6);
    assert_reconciles(rt, 6);
    ac_runtime_destroy(rt);
}

/* Drop-oldest sheds the oldest normal message while one waits, and the
 * oldest urgent one only when no normal one does. */
Test(priority, drop_oldest_sheds_normal_mail_first, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    prio_Log_ref log = spawn_bounded(cx, 2, AC_OVERFLOW_DROP_OLDEST);
    cr_assert_eq(prio_Log_send_note(cx, log, SENDERS, 0, 0), 0);
    cr_assert_eq(prio_Log_send_alarm(cx, log, SENDERS, 0), 0);
    cr_assert_eq(prio_Log_send_alarm(cx, log, SENDERS, 1), 0);
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&g_len), 2);
    cr_assert_eq(traced(0), 0 | ALARM);
    cr_assert_eq(traced(1), 1 | ALARM);
    for (uint64_t i = 2; i < 5; i++)
        cr_assert_eq(prio_Log_send_alarm(cx, log, SENDERS, i), 0);
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&g_len), 4);
    cr_assert_eq(traced(2), 3 | ALARM);
    cr_assert_eq(traced(3), 4 | ALARM);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.mailbox_drops, 2);
    assert_reconciles(rt, 4);
    ac_runtime_destroy(rt);
}

/* An urgent message overtakes a queued stop too (system messages keep
 * their place in the normal lane); one that reaches a killed actor is a
 * dead letter, and the counters reconcile either way. */
Test(priority, urgent_mail_overtakes_a_stop_and_dies_with_a_kill, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    prio_Log_ref log;
    cr_assert_eq(prio_Log_spawn(cx, &log), 0);
    cr_assert_eq(ac_stop(cx, &log.addr), 0);
    cr_assert_eq(prio_Log_send_alarm(cx, log, SENDERS, 0), 0);
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&g_alarms), 1);
    cr_assert_eq(prio_Log_send_alarm_checked(cx, log, SENDERS, 1), AC_ENOTFOUND);

    cr_assert_eq(prio_Log_spawn(cx, &log), 0);
    cr_assert_eq(prio_Log_send_note(cx, log, SENDERS, 0, 0), 0);
    cr_assert_eq(ac_kill(cx, &log.addr), 0);
    cr_assert_eq(prio_Log_send_alarm(cx, log, SENDERS, 2), 0);
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&g_alarms), 1);
    cr_assert_eq(atomic_load(&g_notes), 0);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    /* The refused send, the note and the alarm the kill dropped. */
    cr_assert_eq(st.dead_letters, 3, "%lu", (unsigned long)st.dead_letters);
    cr_assert_eq(st.refused, 1);
    assert_reconciles(rt, 1);
    ac_runtime_destroy(rt);
}

/* The priority crosses nodes: alpha sends notes, an alarm and one note
 * more to a Log on beta that is held in a handler. Once beta's node thread
 * has counted the last note as its send, it has pushed the alarm (it sends
 * in order, and counts a send before pushing it): the gate opens and the
 * alarm goes first. */
Test(priority, urgent_mail_from_another_node_overtakes, .timeout = 60)
{
    enum { NOTES = 40 };
    pair_of_nodes p;
    start_pair(&p, 30000, 0);
    ac_ctx *ca = ac_runtime_ctx(p.ra), *cb = ac_runtime_ctx(p.rb);
    prio_Log_ref log;
    cr_assert_eq(prio_Log_spawn(cb, &log), 0);
    cr_assert_eq(prio_Log_send_wait_gate(cb, log), 0);
    while (!atomic_load(&g_holding))
        sched_yield();
    for (uint64_t i = 0; i < NOTES; i++)
        cr_assert_eq(prio_Log_send_note(ca, log, SENDERS, i, 0), 0);
    cr_assert_eq(prio_Log_send_alarm(ca, log, SENDERS, 0), 0);
    cr_assert_eq(prio_Log_send_note(ca, log, SENDERS, NOTES, 0), 0);
    ac_stats st = {0};
    for (uint64_t t0 = now_ms(); st.sends < NOTES + 3 && now_ms() - t0 < WAIT_MS;) {
        usleep(1000);
        ac_runtime_stats(p.rb, &st);
    }
    cr_assert_eq(st.sends, NOTES + 3, "beta's node thread sent them all on");
    atomic_store(&g_gate, 1);
    for (uint64_t t0 = now_ms(); atomic_load(&g_len) < NOTES + 2 && now_ms() - t0 < WAIT_MS;)
        usleep(1000);
    cr_assert_eq(atomic_load(&g_len), NOTES + 2);
    cr_assert_eq(traced(0), 0 | ALARM);
    for (uint64_t i = 0; i <= NOTES; i++)
        cr_assert_eq(traced(1 + i), i);
    stop_pair(&p);
}

Test(priority, stashed_urgent_mail_comes_back_in_the_order_it_was_handled, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    prio_Picky_ref p;
    cr_assert_eq(prio_Picky_spawn(cx, &p), 0);
    cr_assert_eq(prio_Picky_send_later(cx, p, 1), 0);
    cr_assert_eq(prio_Picky_send_hold(cx, p, 2), 0);
    cr_assert_eq(prio_Picky_send_later(cx, p, 3), 0);
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&g_len), 0, "all three stashed");
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.stashed, 3);
    cr_assert_eq(prio_Picky_send_open(cx, p), 0);
    ac_runtime_run(rt);
    /* The urgent one was handled (and stashed) first, so it comes back
     * first. */
    cr_assert_eq(atomic_load(&g_len), 3, "traced %llu: %llx %llx", (unsigned long long)atomic_load(&g_len), (unsigned long long)traced(0), (unsigned long long)traced(1));
    cr_assert_eq(traced(0), 2 | ALARM);
    cr_assert_eq(traced(1), 1);
    cr_assert_eq(traced(2), 3);
    assert_reconciles(rt, 4);

    /* A stashed urgent message of an actor that stops is a dead letter,
     * freed once (ASan sees a double free or a leak otherwise). */
    prio_Picky_ref q;
    cr_assert_eq(prio_Picky_spawn(cx, &q), 0);
    cr_assert_eq(prio_Picky_send_hold(cx, q, 9), 0);
    ac_runtime_run(rt);
    cr_assert_eq(ac_stop(cx, &q.addr), 0);
    ac_runtime_run(rt);
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.stashed, 0);
    cr_assert_eq(st.dead_letters, 1);
    assert_reconciles(rt, 4);
    cr_assert_eq(ac_runtime_destroy(rt), 0);
}
