/*
 * test_stash.c — ac_stash / ac_unstash_all, the generated forward, and
 * typed asks with an inline context (tests/runtime/stash.actor), in the
 * deterministic mode and on workers (also under ThreadSanitizer).
 *
 * The banking case is the workload of issue 13: an account in "reply
 * mode" (its transfer's credit not yet answered) stashes every transfer
 * and balance ask that comes meanwhile, and takes them up again once the
 * payee answers. Its whole protocol is the four handlers below; the
 * hand-written version it replaces kept a queue of ~70 lines.
 */
#include "alloc_count.h"
#include "fixtures.h"
#include "stash.actor.h"

#include <pthread.h>
#include <stdatomic.h>

/* ---- Account ---------------------------------------------------------------- */

static _Atomic uint64_t g_stashes;  /* messages an account deferred */

/* What a transfer's continuation needs: who asked, and how much. */
typedef struct pending {
    ac_reply_to asker;
    int64_t amount;
} pending;

_Static_assert(sizeof(pending) <= AC_ASK_CONTEXT_MAX, "fits the ask");

int stash_Account_on_start(stash_Account *self, ac_ctx *cx, const stash_Account_start_args *args)
{
    (void)cx;
    self->balance = args->opening;
    return 0;
}

static int credited(stash_Account *self, ac_ctx *cx, int status,
                    const stash_Account_credit_reply *reply, void *ctx)
{
    const pending *p = ctx;
    (void)reply;
    if (status != 0)
        self->balance += p->amount;  /* the payee never had it */
    self->busy = false;
    int rc = ac_unstash_all(cx);
    if (rc < 0)
        return rc;
    return stash_Account_reply_transfer(cx, &p->asker, status == 0);
}

int stash_Account_on_transfer(stash_Account *self, ac_ctx *cx, const stash_Account_transfer *m)
{
    if (self->busy) {
        self->stashed++;
        atomic_fetch_add(&g_stashes, 1);
        return ac_stash(cx);
    }
    if (m->amount > self->balance)
        return stash_Account_reply_transfer(cx, &m->reply_to, false);
    self->balance -= m->amount;
    self->busy = true;
    pending p = {m->reply_to, m->amount};
    return stash_Account_ask_Account_credit(cx, m->payee, m->amount, 0, credited, &p, sizeof p);
}

int stash_Account_on_credit(stash_Account *self, ac_ctx *cx, const stash_Account_credit *m)
{
    self->balance += m->amount;  /* never stashed: two accounts paying each other */
    return stash_Account_reply_credit(cx, &m->reply_to);
}

int stash_Account_on_balance(stash_Account *self, ac_ctx *cx, const stash_Account_balance *m)
{
    if (!ac_addr_is_nil(&self->delegate.addr))
        return stash_Account_forward_balance(cx, self->delegate, m);
    if (self->busy) {
        self->stashed++;
        atomic_fetch_add(&g_stashes, 1);
        return ac_stash(cx);
    }
    return stash_Account_reply_balance(cx, &m->reply_to, self->balance);
}

int stash_Account_on_delegate(stash_Account *self, ac_ctx *cx, const stash_Account_delegate *m)
{
    (void)cx;
    self->delegate = m->target;
    return 0;
}

/* ---- Client ------------------------------------------------------------------- */

static _Atomic uint64_t g_ok, g_refused, g_answered, g_bad_context;

static int transferred(stash_Client *self, ac_ctx *cx, int status,
                       const stash_Account_transfer_reply *reply, void *ctx)
{
    (void)cx;
    (void)ctx;
    self->answered++;
    if (status == 0 && reply->ok)
        atomic_fetch_add(&g_ok, 1);
    else
        atomic_fetch_add(&g_refused, 1);
    atomic_fetch_add(&g_answered, 1);
    return 0;
}

int stash_Client_on_go(stash_Client *self, ac_ctx *cx, const stash_Client_go *m)
{
    (void)self;
    uint32_t len = m->accounts.len;
    for (uint32_t i = 0; i < m->n; i++) {
        int rc = stash_Client_ask_Account_transfer(cx, m->accounts.data[i % len],
                                                   m->accounts.data[(i + 1) % len],
                                                   m->amount, 0, transferred, NULL, 0);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* A context as large as an ask holds: its number and a pattern made from
 * it, checked when the answer comes. */
typedef struct poll_ctx {
    uint32_t i;
    uint8_t pattern[AC_ASK_CONTEXT_MAX - 4];
} poll_ctx;

static uint8_t pattern_at(uint32_t i, size_t k)
{
    return (uint8_t)(i * 31u + k * 7u + 1u);
}

static int polled(stash_Client *self, ac_ctx *cx, int status,
                  const stash_Account_balance_reply *reply, void *ctx)
{
    (void)cx;
    (void)reply;
    self->answered++;
    if (ctx != NULL) {
        const poll_ctx *c = ctx;
        for (size_t k = 0; k < sizeof c->pattern; k++)
            if (c->pattern[k] != pattern_at(c->i, k))
                atomic_fetch_add(&g_bad_context, 1);
        /* Aligned as the runtime says, so any C type fits. */
        if ((uintptr_t)ctx % 16 != 0)
            atomic_fetch_add(&g_bad_context, 1);
    }
    if (status != 0)
        atomic_fetch_add(&g_bad_context, 1);
    atomic_fetch_add(&g_answered, 1);
    return 0;
}

int stash_Client_on_poll(stash_Client *self, ac_ctx *cx, const stash_Client_poll *m)
{
    (void)self;
    for (uint32_t i = 0; i < m->n; i++) {
        poll_ctx c;
        c.i = i;
        for (size_t k = 0; k < sizeof c.pattern; k++)
            c.pattern[k] = pattern_at(i, k);
        int rc = m->with_context
                     ? stash_Client_ask_Account_balance(cx, m->account, 0, polled, &c, sizeof c)
                     : stash_Client_ask_Account_balance(cx, m->account, 0, polled, NULL, 0);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* ---- Gate --------------------------------------------------------------------- */

static _Atomic int g_last_stash_rc;

int stash_Gate_on_start(stash_Gate *self, ac_ctx *cx, const stash_Gate_start_args *args)
{
    (void)self;
    return args->capacity ? ac_stash_capacity(cx, args->capacity) : 0;
}

int stash_Gate_on_item(stash_Gate *self, ac_ctx *cx, const stash_Gate_item *m)
{
    if (m->n > self->open_to) {
        atomic_store(&g_last_stash_rc, ac_stash(cx));
        return 0;  /* a full stash is seen, and the item dropped on purpose */
    }
    note_handled(m->n);
    return 0;
}

int stash_Gate_on_open(stash_Gate *self, ac_ctx *cx, const stash_Gate_open *m)
{
    self->open_to = m->upto;
    int n = ac_unstash_all(cx);
    return n < 0 ? n : 0;
}

int stash_Gate_on_stash_and_fail(stash_Gate *self, ac_ctx *cx, const stash_Gate_stash_and_fail *m)
{
    (void)self;
    int rc = ac_stash(cx);
    return rc != 0 ? rc : m->code;
}

/* ---- helpers ------------------------------------------------------------------ */

static int64_t balance_of(ac_ctx *cx, stash_Account_ref a)
{
    stash_Account_balance_reply *r = NULL;
    cr_assert_eq(stash_Account_ask_balance_wait(cx, a, AC_FOREVER, &r), 0);
    int64_t b = r->balance;
    ac_reply_free(cx, r);
    return b;
}

/* ---- the order -------------------------------------------------------------- */

/* Stashed items come up oldest first and before newer mail; one not yet
 * welcome goes back to the stash, and keeps its place among the rest. */
Test(stash, unstash_all_replays_in_order_before_newer_mail)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    stash_Gate_ref g;
    cr_assert_eq(stash_Gate_spawn(cx, &g, 0), 0);
    for (uint32_t n = 1; n <= 6; n++)
        cr_assert_eq(stash_Gate_send_item(cx, g, n), 0);
    cr_assert_eq(stash_Gate_send_open(cx, g, 3), 0);
    cr_assert_eq(stash_Gate_send_item(cx, g, 7), 0);   /* newer than the stash */
    cr_assert_eq(stash_Gate_send_open(cx, g, 10), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    /* 1..6 stashed; open(3): 1, 2, 3 handled, 4..6 stashed again; 7
     * (after them in the mailbox) stashed after them; open(10): 4..7. */
    expect_handled((const uint32_t[]){1, 2, 3, 4, 5, 6, 7}, 7);
    ac_stats s;
    ac_runtime_stats(rt, &s);
    cr_expect_eq(s.stashed, 0);
    cr_expect_eq(s.dead_letters, 0);
    /* Seven items and two opens, each counted once, however often stashed. */
    cr_expect_eq(s.messages, 9);
    assert_sends_accounted(rt);
    ac_runtime_destroy(rt);
}

/* An actor's first stash in the middle of a turn, with mail behind it:
 * the turn leaves the path of actors that never stashed (whose pop frees
 * every node it moves past) for the stash's, so the stashed item, still
 * the mailbox's stub, survives the pops after it (under ASan: no use
 * after free), comes up in order, and every message counts once. */
Test(stash, first_stash_in_mid_turn_keeps_what_follows)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    stash_Gate_ref g;
    cr_assert_eq(stash_Gate_spawn(cx, &g, 0), 0);
    cr_assert_eq(stash_Gate_send_open(cx, g, 2), 0);   /* nothing to take up yet */
    const uint32_t items[] = {1, 2, 4, 3, 2};
    for (uint32_t i = 0; i < 5; i++)
        cr_assert_eq(stash_Gate_send_item(cx, g, items[i]), 0);
    cr_assert_eq(stash_Gate_send_open(cx, g, 10), 0);
    cr_assert_eq(stash_Gate_send_item(cx, g, 5), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    /* 1, 2 on the plain path; 4 the first stash, 3 stashed behind it, 2
     * handled after both; open(10) takes 4 and 3 up before 5. */
    expect_handled((const uint32_t[]){1, 2, 2, 4, 3, 5}, 6);
    ac_stats s;
    ac_runtime_stats(rt, &s);
    cr_expect_eq(s.stashed, 0);
    cr_expect_eq(s.dead_letters, 0);
    cr_expect_eq(s.messages, 8);  /* six items, two opens */
    assert_sends_accounted(rt);
    ac_runtime_destroy(rt);
}

/* A full stash is an error the handler sees, counted; the stash still
 * holds what it held. */
/* ---- Sieve: the first stash racing with producers -------------------------- */

/* A plain turn keeps its mailbox's tail in its context and stores it in
 * the block once; its first ac_stash moves the turn onto the stash's
 * loop, which takes the tail from the block (actor.c, turn_loop), while
 * producers on other threads push and the workers mark the mailbox empty
 * between turns. Every item must be handled for good exactly once. */
enum { SIEVES = 16, SIEVE_PRODUCERS = 4, SIEVE_EACH = 1500 };

static uint8_t g_sieve_stashed[SIEVES][SIEVE_PRODUCERS * SIEVE_EACH];
static uint8_t g_sieve_handled[SIEVES][SIEVE_PRODUCERS * SIEVE_EACH];
static _Atomic uint64_t g_sieve_stashes, g_sieve_wrong;

int stash_Sieve_on_start(stash_Sieve *self, ac_ctx *cx AC_UNUSED,
                         const stash_Sieve_start_args *args)
{
    self->index = args->index;
    return 0;
}

int stash_Sieve_on_item(stash_Sieve *self, ac_ctx *cx, const stash_Sieve_item *m)
{
    if (m->producer >= SIEVE_PRODUCERS || m->seq >= SIEVE_EACH) {
        atomic_fetch_add(&g_sieve_wrong, 1);
        return 0;
    }
    /* Only this sieve touches its row: its turns are ordered. */
    uint32_t n = m->producer * SIEVE_EACH + m->seq;
    if (m->seq % 3 == 0 && !g_sieve_stashed[self->index][n]) {
        g_sieve_stashed[self->index][n] = 1;
        self->held++;
        atomic_fetch_add(&g_sieve_stashes, 1);
        return ac_stash(cx);
    }
    g_sieve_handled[self->index][n]++;
    if (self->held >= 8) {
        self->held = 0;
        int rc = ac_unstash_all(cx);
        return rc < 0 ? rc : 0;
    }
    return 0;
}

int stash_Sieve_on_flush(stash_Sieve *self, ac_ctx *cx, const stash_Sieve_flush *m AC_UNUSED)
{
    self->held = 0;
    int rc = ac_unstash_all(cx);
    return rc < 0 ? rc : 0;
}

typedef struct sieve_producer {
    ac_runtime *rt;
    stash_Sieve_ref *sieves;
    uint32_t id;
    int rc;
} sieve_producer;

static void *sieve_produce(void *p)
{
    sieve_producer *pr = p;
    ac_ctx *cx = ac_runtime_ctx(pr->rt);
    for (uint32_t i = 0; i < SIEVE_EACH && pr->rc == 0; i++)
        for (uint32_t s = 0; s < SIEVES && pr->rc == 0; s++)
            pr->rc = stash_Sieve_send_item(cx, pr->sieves[s], pr->id, i);
    return NULL;
}

Test(stash, first_stashes_race_with_producers_on_workers, .timeout = 120)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    stash_Sieve_ref sieves[SIEVES];
    for (uint32_t s = 0; s < SIEVES; s++)
        cr_assert_eq(stash_Sieve_spawn(cx, &sieves[s], s), 0);
    sieve_producer prs[SIEVE_PRODUCERS];
    pthread_t th[SIEVE_PRODUCERS];
    for (uint32_t i = 0; i < SIEVE_PRODUCERS; i++) {
        prs[i] = (sieve_producer){.rt = rt, .sieves = sieves, .id = i};
        cr_assert_eq(pthread_create(&th[i], NULL, sieve_produce, &prs[i]), 0);
    }
    for (uint32_t i = 0; i < SIEVE_PRODUCERS; i++) {
        pthread_join(th[i], NULL);
        cr_assert_eq(prs[i].rc, 0, "%s", ac_strerror(prs[i].rc));
    }
    for (uint32_t s = 0; s < SIEVES; s++)
        cr_assert_eq(stash_Sieve_send_flush(cx, sieves[s]), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(atomic_load(&g_sieve_wrong), 0);
    /* Every third item of every producer, once, in each sieve. */
    cr_assert_eq(atomic_load(&g_sieve_stashes),
                 (uint64_t)SIEVES * SIEVE_PRODUCERS * (SIEVE_EACH / 3));
    uint64_t missing = 0, twice = 0;
    for (uint32_t s = 0; s < SIEVES; s++)
        for (uint32_t n = 0; n < SIEVE_PRODUCERS * SIEVE_EACH; n++) {
            missing += g_sieve_handled[s][n] == 0;
            twice += g_sieve_handled[s][n] > 1;
        }
    cr_assert_eq(missing, 0, "every item handled");
    cr_assert_eq(twice, 0, "none handled twice");
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.messages, (uint64_t)SIEVES * (SIEVE_PRODUCERS * SIEVE_EACH + 1));
    ac_runtime_destroy(rt);
}

Test(stash, overflow_is_refused_and_counted)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    stash_Gate_ref g;
    cr_assert_eq(stash_Gate_spawn(cx, &g, 2), 0);
    for (uint32_t n = 1; n <= 3; n++)
        cr_assert_eq(stash_Gate_send_item(cx, g, n), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_expect_eq(atomic_load(&g_last_stash_rc), AC_EFULL);
    ac_stats s;
    ac_runtime_stats(rt, &s);
    cr_expect_eq(s.stash_overflows, 1);
    cr_expect_eq(s.stashed, 2);
    assert_sends_accounted(rt);   /* item 3 was handled (and dropped by its handler) */
    cr_assert_eq(stash_Gate_send_open(cx, g, 10), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    expect_handled((const uint32_t[]){1, 2}, 2);
    ac_runtime_destroy(rt);
}

/* What a stopped actor held in its stash is dead letters, shown to the
 * hook; so is a message stashed by the handler that then failed. */
Test(stash, a_dead_actors_stash_is_dead_letters)
{
    ac_runtime *rt = make_runtime(0);
    dead_count dead = {{stash_Gate_TAG_item, stash_Gate_TAG_stash_and_fail}, 2, 0};
    ac_runtime_set_dead_letter_hook(rt, count_dead_letters, &dead);
    ac_ctx *cx = ac_runtime_ctx(rt);
    stash_Gate_ref g, f;
    cr_assert_eq(stash_Gate_spawn(cx, &g, 0), 0);
    cr_assert_eq(stash_Gate_spawn(cx, &f, 0), 0);
    for (uint32_t n = 1; n <= 3; n++) {
        cr_assert_eq(stash_Gate_send_item(cx, g, n), 0);
        cr_assert_eq(stash_Gate_send_item(cx, f, n), 0);
    }
    cr_assert_eq(stash_Gate_send_stash_and_fail(cx, f, -77), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    ac_stats s;
    ac_runtime_stats(rt, &s);
    cr_expect_eq(s.failed, 1);
    cr_expect_eq(s.stashed, 3);   /* g's; f's four went with it */
    cr_expect_eq(atomic_load(&dead.n), 4);
    assert_sends_accounted(rt);
    cr_assert_eq(ac_stop(cx, &g.addr), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    ac_runtime_stats(rt, &s);
    cr_expect_eq(s.stashed, 0);
    cr_expect_eq(atomic_load(&dead.n), 7);
    cr_expect_eq(s.dead_letters, 7);
    cr_expect_eq(handled_count(), 0);
    assert_sends_accounted(rt);
    ac_runtime_destroy(rt);
}

/* Only a user message's handler stashes: main and a start hook cannot. */
Test(stash, refused_outside_a_handler)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    cr_expect_eq(ac_stash(cx), AC_ESTATE);
    cr_expect_eq(ac_unstash_all(cx), AC_ESTATE);
    cr_expect_eq(ac_stash_capacity(cx, 4), AC_ESTATE);
    cr_expect_eq(ac_stash(NULL), AC_EINVAL);
    ac_runtime_destroy(rt);
}

/* ---- banking: stash with reply addresses intact, typed asks --------------- */

static void bank(int workers, uint32_t accounts, uint32_t transfers)
{
    ac_runtime *rt = make_runtime(workers);
    ac_ctx *cx = ac_runtime_ctx(rt);
    stash_Account_ref acc[16];
    cr_assert_leq(accounts, 16);
    for (uint32_t i = 0; i < accounts; i++)
        cr_assert_eq(stash_Account_spawn(cx, &acc[i], 1000), 0);
    stash_Client_ref c[2];
    for (int k = 0; k < 2; k++) {
        cr_assert_eq(stash_Client_spawn(cx, &c[k]), 0);
        stash_Account_ref_seq seq = {acc, accounts};
        cr_assert_eq(stash_Client_send_go(cx, c[k], seq, transfers, 10), 0);
    }
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_expect_eq(atomic_load(&g_answered), 2 * transfers);
    cr_expect_eq(atomic_load(&g_ok) + atomic_load(&g_refused), 2 * transfers);
    int64_t total = 0;
    for (uint32_t i = 0; i < accounts; i++)
        total += balance_of(cx, acc[i]);
    cr_expect_eq(total, 1000 * (int64_t)accounts, "money made or lost: %lld",
                 (long long)total);
    /* The repliers may still be ending their turns: quiescence first. */
    cr_assert_eq(ac_runtime_run(rt), 0);
    ac_stats s;
    ac_runtime_stats(rt, &s);
    cr_expect_eq(s.stashed, 0);
    cr_expect_eq(s.dead_letters, 0);
    assert_sends_accounted(rt);
    ac_runtime_destroy(rt);
}

Test(stash, banking_deterministic)
{
    bank(0, 4, 500);
    /* The clients' asks all arrive while the accounts wait for credits. */
    cr_expect_gt(atomic_load(&g_stashes), 0);
    cr_expect_gt(atomic_load(&g_ok), 0);
}

Test(stash, banking_on_workers)
{
    bank(2, 8, 2000);
}

/* ---- forward ---------------------------------------------------------------- */

/* A balance ask to A, forwarded by A to B, then by B to C, is answered
 * by C, to the asker: its reply_to went along. */
Test(stash, forward_keeps_the_askers_reply_to)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    stash_Account_ref a, b, c;
    cr_assert_eq(stash_Account_spawn(cx, &a, 1), 0);
    cr_assert_eq(stash_Account_spawn(cx, &b, 2), 0);
    cr_assert_eq(stash_Account_spawn(cx, &c, 3), 0);
    cr_assert_eq(stash_Account_send_delegate(cx, a, b), 0);
    cr_assert_eq(stash_Account_send_delegate(cx, b, c), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_expect_eq(balance_of(cx, a), 3);
    cr_expect_eq(balance_of(cx, b), 3);
    cr_assert_eq(ac_runtime_run(rt), 0);
    assert_sends_accounted(rt);
    ac_runtime_destroy(rt);
}

/* A balance ask forwarded to an account that is gone is answered at once
 * with AC_ENOTFOUND (ac_forward_typed marks the request with its asker),
 * long before the ask's 60 s: before, the forwarded request was a silent
 * dead letter and the asker waited them out. */
Test(stash, forward_to_a_gone_target_answers_the_asker_at_once)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    stash_Account_ref a, b;
    cr_assert_eq(stash_Account_spawn(cx, &a, 1), 0);
    cr_assert_eq(stash_Account_spawn(cx, &b, 2), 0);
    cr_assert_eq(stash_Account_send_delegate(cx, a, b), 0);
    cr_assert_eq(ac_stop(cx, &b.addr), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    stash_Account_balance_reply *r = (stash_Account_balance_reply *)&r;
    cr_assert_eq(stash_Account_ask_balance_wait(cx, a, 60000, &r), AC_ENOTFOUND);
    cr_assert_null(r);
    cr_assert_eq(ac_runtime_run(rt), 0);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.dead_letters, 1, "the forwarded request, once");
    assert_sends_accounted(rt);
    ac_runtime_destroy(rt);
}

/* ---- typed asks with an inline context ------------------------------------------ */

static uint64_t allocs_of_polls(ac_runtime *rt, stash_Client_ref c, stash_Account_ref a,
                                uint32_t n, bool with_context)
{
    ac_ctx *cx = ac_runtime_ctx(rt);
    uint64_t before = alloc_count();
    cr_assert_eq(stash_Client_send_poll(cx, c, a, n, with_context), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    return alloc_count() - before;
}

/* The context round-trips whole, and costs no allocation: asks with a
 * full context make exactly as many as asks without one (the pending
 * record, nothing more). */
Test(stash, inline_context_round_trips_without_allocating)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    stash_Account_ref a;
    stash_Client_ref c;
    cr_assert_eq(stash_Account_spawn(cx, &a, 5), 0);
    cr_assert_eq(stash_Client_spawn(cx, &c), 0);
    /* Warm the pools and tables up to 200 asks in flight. */
    (void)allocs_of_polls(rt, c, a, 200, true);
    (void)allocs_of_polls(rt, c, a, 200, false);
    uint64_t with = allocs_of_polls(rt, c, a, 200, true);
    uint64_t without = allocs_of_polls(rt, c, a, 200, false);
    cr_expect_eq(with, without, "%llu allocations with a context, %llu without",
                 (unsigned long long)with, (unsigned long long)without);
    cr_expect_leq(with, 200, "more than the pending record per ask: %llu",
                  (unsigned long long)with);
    cr_expect_eq(atomic_load(&g_answered), 800);
    cr_expect_eq(atomic_load(&g_bad_context), 0);
    ac_runtime_destroy(rt);
}

/* A typed ask is an actor's: main gets AC_ESTATE. */
Test(stash, typed_ask_outside_an_actor)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    stash_Account_ref a;
    cr_assert_eq(stash_Account_spawn(cx, &a, 5), 0);
    cr_expect_eq(stash_Client_ask_Account_balance(cx, a, 0, polled, NULL, 0), AC_ESTATE);
    ac_runtime_destroy(rt);
}
