/*
 * test_mute.c — back-pressure (runtime/core/mute.c): senders to an
 * overloaded actor are muted, so the queue in front of a slow consumer
 * stays bounded; every message still arrives, in order; cycles finish; a
 * dying overloaded actor releases its mutees; sends from outside actors
 * are not muted.
 */
#include "fixtures.h"

#include <stdlib.h>

/* Items each producer handler sends before it sends itself `more`. */
#define K 16
/* The runtime's default batch (ac_config.batch). */
#define BATCH 64
#define MAX_P 64
#define MAX_C 8

enum { P_START = 0, P_MORE = 1 };
enum { C_ITEM = 0 };

typedef struct start_msg {
    ac_addr to[MAX_C];
    uint32_t nto;
    uint32_t id;
    uint64_t count;
} start_msg;

typedef struct producer {
    start_msg job;
    uint64_t sent;
} producer;

typedef struct item_msg {
    uint32_t producer;
    uint64_t seq;
} item_msg;

typedef struct consumer {
    uint64_t next_seq[MAX_P];
    uint64_t received;
} consumer;

/* Sent (counted before each send) and received by any consumer: their
 * difference, read by a consumer, is at least what is queued. */
static _Atomic uint64_t g_sent, g_received, g_disorder, g_max_inflight, g_done_producers;
/* Consumers spin this many rounds a message, to be slower than the
 * producers on any core. */
static unsigned g_work = 200;

static int send_more(ac_ctx *cx, uint32_t tag)
{
    ac_envelope *e = ac_envelope_new(cx, tag, 0);
    if (e == NULL)
        return AC_ENOMEM;
    return ac_send(cx, ac_self(cx), e);
}

static int produce(producer *p, ac_ctx *cx)
{
    uint64_t end = p->sent + K < p->job.count ? p->sent + K : p->job.count;
    for (; p->sent < end; p->sent++) {
        ac_envelope *e = ac_envelope_new(cx, C_ITEM, sizeof(item_msg));
        if (e == NULL)
            return AC_ENOMEM;
        item_msg *m = ac_envelope_payload(e);
        m->producer = p->job.id;
        m->seq = p->sent;
        /* Relaxed: a figure a consumer compares, not a publication. */
        atomic_fetch_add_explicit(&g_sent, 1, memory_order_relaxed);
        int rc = ac_send(cx, &p->job.to[p->sent % p->job.nto], e);
        if (rc != 0)
            return rc;
    }
    if (p->sent < p->job.count)
        return send_more(cx, P_MORE);
    atomic_fetch_add_explicit(&g_done_producers, 1, memory_order_relaxed);
    return 0;
}

static int producer_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    producer *p = state;
    if (e->tag == P_START)
        memcpy(&p->job, ac_envelope_payload(e), sizeof p->job);
    return produce(p, cx);
}

static const ac_actor_type producer_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.MuteProducer",
    .state_size = sizeof(producer),
    .state_align = _Alignof(producer),
    .dispatch = producer_dispatch,
    .message_count = 2,
};

/* Stops itself after this many items (0: never). */
static uint64_t g_stop_after;

static int consumer_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    consumer *c = state;
    const item_msg *m = ac_envelope_payload(e);
    for (volatile unsigned i = 0; i < g_work; i++) {
    }
    if (c->next_seq[m->producer] > m->seq)
        atomic_fetch_add_explicit(&g_disorder, 1, memory_order_relaxed);
    c->next_seq[m->producer] = m->seq + 1;
    c->received++;
    uint64_t got = atomic_fetch_add_explicit(&g_received, 1, memory_order_relaxed) + 1;
    uint64_t inflight = atomic_load_explicit(&g_sent, memory_order_relaxed) - got;
    uint64_t max = atomic_load_explicit(&g_max_inflight, memory_order_relaxed);
    while (inflight > max &&
           !atomic_compare_exchange_weak_explicit(&g_max_inflight, &max, inflight,
                                                  memory_order_relaxed, memory_order_relaxed)) {
    }
    if (g_stop_after != 0 && c->received == g_stop_after)
        return ac_stop_self(cx);
    return 0;
}

static const ac_actor_type consumer_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.MuteConsumer",
    .state_size = sizeof(consumer),
    .state_align = _Alignof(consumer),
    .dispatch = consumer_dispatch,
    .message_count = 1,
};

/* P producers, C consumers (spawned with copts, which may be NULL) on rt,
 * destroyed at the end; producer i sends its M items round-robin to all
 * consumers (so FIFO per consumer and producer still holds with the
 * stride), from main. */
static void run_fanin_on(ac_runtime *rt, const ac_spawn_options *copts, unsigned np,
                         unsigned nc, uint64_t m, ac_stats *st)
{
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr cons[MAX_C];
    for (unsigned i = 0; i < nc; i++)
        cr_assert_eq(ac_spawn_opts(cx, &consumer_type, NULL, copts, &cons[i]), 0);
    for (unsigned i = 0; i < np; i++) {
        ac_addr p;
        cr_assert_eq(ac_spawn(cx, &producer_type, NULL, &p), 0);
        ac_envelope *e = ac_envelope_new(cx, P_START, sizeof(start_msg));
        cr_assert_not_null(e);
        start_msg *s = ac_envelope_payload(e);
        memset(s, 0, sizeof *s);
        memcpy(s->to, cons, nc * sizeof *cons);
        s->nto = nc;
        s->id = i;
        s->count = m;
        cr_assert_eq(ac_send(cx, &p, e), 0);
    }
    ac_runtime_run(rt);
    ac_runtime_stats(rt, st);
    ac_runtime_destroy(rt);
}

static void run_fanin(int workers, unsigned np, unsigned nc, uint64_t m, ac_stats *st)
{
    run_fanin_on(make_runtime(workers), NULL, np, nc, m, st);
}

/* The design's bound (runtime/README.md, "Back-pressure"), in
 * deterministic mode, where it is exact: the consumer is overloaded from
 * its first turn that uses up its batch with mail left; from then on a
 * producer's turn ends after the handler that sent to it, which sends at
 * most K. When the consumer keeps up again (a turn finds its mailbox
 * empty) it unmutes the P producers: the first runs a whole turn (BATCH
 * handlers of K) and its first send scheduled the consumer next (the LIFO
 * slot), whose turn marks it overloaded again, so the others each add one
 * handler's K. So at most BATCH * K + P * K are queued, plus the
 * consumer's own batch in hand. With workers the bound also needs the
 * consumer's turns to end while the producers run (not a thing a unit
 * test may assume), so there the test checks delivery only. */
static uint64_t design_bound(unsigned np)
{
    return (uint64_t)BATCH * K + (uint64_t)np * K + BATCH;
}

static void check_bounded(int workers)
{
    const unsigned np = 8;
    const uint64_t m = 40000;  /* 320,000 in all: far over the bound */
    ac_stats st;
    run_fanin(workers, np, 1, m, &st);
    cr_assert_eq(atomic_load(&g_received), np * m, "every message arrives");
    cr_assert_eq(atomic_load(&g_disorder), 0, "in order");
    cr_assert_eq(atomic_load(&g_done_producers), np);
    cr_assert_eq(st.messages, st.sends);
    if (workers == 0) {
        uint64_t bound = design_bound(np);
        cr_assert_leq(atomic_load(&g_max_inflight), bound, "queued %lu, bound %lu",
                      (unsigned long)atomic_load(&g_max_inflight), (unsigned long)bound);
        cr_assert_gt(st.muted, 0);
    }
}

Test(mute, a_slow_consumer_keeps_its_queue_bounded_deterministic, .timeout = 60)
{
    check_bounded(0);
}

/* With the per-type counters on, an unbounded consumer gets a mailbox
 * count with no limit (actor.c, ac__spawn_actor): it is still unbounded,
 * so its senders are muted as without the counters, and the same bound
 * holds. */
Test(mute, an_observed_unbounded_consumer_still_mutes_its_senders, .timeout = 60)
{
    const unsigned np = 8;
    const uint64_t m = 40000;
    ac_stats st;
    run_fanin_on(make_typed_runtime(0, true), NULL, np, 1, m, &st);
    cr_assert_eq(atomic_load(&g_received), np * m);
    cr_assert_eq(atomic_load(&g_disorder), 0);
    cr_assert_gt(st.muted, 0);
    cr_assert_leq(atomic_load(&g_max_inflight), design_bound(np));
}

/* A bounded mailbox keeps its own policy, its senders are not muted, at
 * any bound: also at 2^32 - 1, which the per-type counters' count-only
 * bound once was, and which was taken for it (muted). */
Test(mute, a_consumer_bounded_at_the_largest_bound_keeps_its_policy, .timeout = 60)
{
    const unsigned np = 8;
    const uint64_t m = 40000;
    ac_spawn_options o = {.mailbox_bound = UINT32_MAX, .mailbox_overflow = AC_OVERFLOW_REJECT};
    ac_stats st;
    run_fanin_on(make_runtime(0), &o, np, 1, m, &st);
    cr_assert_eq(atomic_load(&g_received), np * m);
    cr_assert_eq(atomic_load(&g_disorder), 0);
    cr_assert_eq(st.muted, 0);
    cr_assert_eq(st.mailbox_drops, 0);
}

Test(mute, a_slow_consumer_delivers_everything_in_order_two_workers, .timeout = 60)
{
    check_bounded(2);
}

/* Many producers, several consumers, 2 workers: exact counts (a lost
 * unmute hangs the test, a double schedule breaks the counts, the order
 * or, under the sanitizers, the memory). */
Test(mute, many_producers_and_consumers_deliver_exactly, .timeout = 120)
{
    g_work = 50;
    const unsigned np = 32, nc = 4;
    const uint64_t m = 6000;
    ac_stats st;
    run_fanin(2, np, nc, m, &st);
    cr_assert_eq(atomic_load(&g_received), np * m);
    cr_assert_eq(atomic_load(&g_disorder), 0);
    cr_assert_eq(atomic_load(&g_done_producers), np);
    cr_assert_eq(st.messages, st.sends);
    cr_assert_eq(st.dead_letters, 0);
}

/* ---- a cycle: A floods B, B answers every item to A ---------------------- */

/* A_SETUP carries the state; A_GO starts a flood. Every setup is sent
 * before any go, so no item reaches a peer before its setup. */
enum { A_SETUP = 0, A_ITEM = 1, A_GO = 2 };

typedef struct peer {
    ac_addr other;
    uint64_t sent, received, count;
    bool flood;                 /* sends K items a handler until count */
} peer;

static _Atomic uint64_t g_peers_done;

static int peer_send(ac_ctx *cx, const ac_addr *to, uint32_t tag)
{
    ac_envelope *e = ac_envelope_new(cx, tag, 0);
    if (e == NULL)
        return AC_ENOMEM;
    return ac_send(cx, to, e);
}

static int peer_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    peer *p = state;
    if (e->tag == A_SETUP) {
        memcpy(p, ac_envelope_payload(e), sizeof *p);
        return 0;
    } else if (e->tag == A_ITEM) {
        for (volatile unsigned i = 0; i < g_work; i++) {
        }
        /* An answer for every item: the consumer sends to its producer,
         * which is muted on it. */
        if (++p->received == p->count)
            atomic_fetch_add_explicit(&g_peers_done, 1, memory_order_relaxed);
        if (!p->flood) {
            int rc = peer_send(cx, &p->other, A_ITEM);
            if (rc != 0)
                return rc;
        }
    }
    if (p->flood && p->sent < p->count) {
        for (unsigned i = 0; i < K && p->sent < p->count; i++, p->sent++) {
            int rc = peer_send(cx, &p->other, A_ITEM);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}

static const ac_actor_type peer_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.MutePeer",
    .state_size = sizeof(peer),
    .state_align = _Alignof(peer),
    .dispatch = peer_dispatch,
    .message_count = 3,
};

/* Both flood (each item received makes a handler that sends K more until
 * count), or A floods and B answers each item. */
static void run_cycle(int workers, bool both)
{
    ac_runtime *rt = make_runtime(workers);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a, b;
    cr_assert_eq(ac_spawn(cx, &peer_type, NULL, &a), 0);
    cr_assert_eq(ac_spawn(cx, &peer_type, NULL, &b), 0);
    const uint64_t n = 50000;
    peer pa = {.other = b, .count = n, .flood = true};
    peer pb = {.other = a, .count = n, .flood = both};
    ac_envelope *e = ac_envelope_new(cx, A_SETUP, sizeof pa);
    memcpy(ac_envelope_payload(e), &pa, sizeof pa);
    cr_assert_eq(ac_send(cx, &a, e), 0);
    e = ac_envelope_new(cx, A_SETUP, sizeof pb);
    memcpy(ac_envelope_payload(e), &pb, sizeof pb);
    cr_assert_eq(ac_send(cx, &b, e), 0);
    cr_assert_eq(peer_send(cx, &a, A_GO), 0);
    cr_assert_eq(peer_send(cx, &b, A_GO), 0);
    ac_runtime_run(rt);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    ac_runtime_destroy(rt);
    cr_assert_eq(atomic_load(&g_peers_done), 2,
                 "both received all %lu: done %lu, sends %lu messages %lu muted %lu",
                 (unsigned long)n, (unsigned long)atomic_load(&g_peers_done),
                 (unsigned long)st.sends, (unsigned long)st.messages, (unsigned long)st.muted);
    cr_assert_eq(st.messages, st.sends);
}

Test(mute, a_consumer_that_answers_its_muted_producer_finishes, .timeout = 60)
{
    run_cycle(0, false);
}

Test(mute, a_consumer_that_answers_its_muted_producer_finishes_two_workers, .timeout = 60)
{
    run_cycle(2, false);
}

Test(mute, two_actors_flooding_each_other_finish, .timeout = 60)
{
    run_cycle(0, true);
}

Test(mute, two_actors_flooding_each_other_finish_two_workers, .timeout = 60)
{
    run_cycle(2, true);
}

/* ---- death and outside sends ---------------------------------------------- */

/* The consumer stops itself while its producers are muted on it: they
 * run again, and what they send from then on are dead letters. A lost
 * release would leave them muted, and the counts short. */
static void check_dying(int workers)
{
    const unsigned np = 8;
    const uint64_t m = 20000;
    g_stop_after = 30000;
    ac_stats st;
    run_fanin(workers, np, 1, m, &st);
    cr_assert_eq(atomic_load(&g_done_producers), np, "every producer ran to its end");
    cr_assert_eq(atomic_load(&g_received), g_stop_after);
    if (workers == 0)
        cr_assert_gt(st.muted, 0);  /* it was overloaded when it stopped */
    cr_assert_eq(st.sends + st.refused, np * m + np * (m / K));  /* items and mores */
    cr_assert_eq(st.messages + st.dead_letters, st.sends + st.refused);
}

Test(mute, an_overloaded_actor_that_stops_releases_its_mutees, .timeout = 60)
{
    check_dying(0);
}

Test(mute, an_overloaded_actor_that_stops_releases_its_mutees_two_workers, .timeout = 60)
{
    check_dying(2);
}

Test(mute, sends_from_outside_actors_are_never_muted, .timeout = 60)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr c;
    cr_assert_eq(ac_spawn(cx, &consumer_type, NULL, &c), 0);
    const uint64_t n = 100000;
    for (uint64_t i = 0; i < n; i++) {
        ac_envelope *e = ac_envelope_new(cx, C_ITEM, sizeof(item_msg));
        item_msg *mm = ac_envelope_payload(e);
        mm->producer = 0;
        mm->seq = i;
        atomic_fetch_add_explicit(&g_sent, 1, memory_order_relaxed);
        cr_assert_eq(ac_send(cx, &c, e), 0);  /* never refused, never waits */
    }
    ac_runtime_run(rt);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    ac_runtime_destroy(rt);
    cr_assert_eq(atomic_load(&g_received), n);
    cr_assert_eq(atomic_load(&g_disorder), 0);
    cr_assert_eq(st.muted, 0);
}

/* Seeded mode runs one message a turn and does not mute; it still runs
 * the fan-in to its end. */
Test(mute, seeded_mode_runs_the_fanin_unmuted, .timeout = 60)
{
    ac_runtime *rt = make_seeded_runtime(42);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr c, p;
    cr_assert_eq(ac_spawn(cx, &consumer_type, NULL, &c), 0);
    cr_assert_eq(ac_spawn(cx, &producer_type, NULL, &p), 0);
    ac_envelope *e = ac_envelope_new(cx, P_START, sizeof(start_msg));
    start_msg *s = ac_envelope_payload(e);
    memset(s, 0, sizeof *s);
    s->to[0] = c;
    s->nto = 1;
    s->count = 2000;
    cr_assert_eq(ac_send(cx, &p, e), 0);
    ac_runtime_run(rt);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    ac_runtime_destroy(rt);
    cr_assert_eq(atomic_load(&g_received), 2000);
    cr_assert_eq(atomic_load(&g_disorder), 0);
    cr_assert_eq(st.muted, 0);
}
