/*
 * test_ask.c — request/reply through generated code (sample.actor's Bank
 * and Client): replies at the continuation, timeouts, blocking asks from
 * outside actors, replies to dead askers, deferred replies.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "sample.actor.h"
#include "helpers.h"

/* ---- the bank ------------------------------------------------------------------ */

static ac_reply_to held;
static bool holding;
static int release_rc = 1;

int sample_Bank_on_withdraw(sample_Bank *self, ac_ctx *cx, const sample_Bank_withdraw *m)
{
    self->balance = 100 - m->amount.cents;
    sample_Money left = { self->balance, m->amount.currency };
    return sample_Bank_reply_withdraw(cx, &m->reply_to, true, left,
                                      ac_string_of("done"));
}

int sample_Bank_on_hold(sample_Bank *self, ac_ctx *cx, const sample_Bank_hold *m)
{
    (void)self;
    (void)cx;
    held = m->reply_to;  /* answered by a later handler */
    held.id = m->reply_to.id;
    holding = true;
    release_rc = (int)m->n;  /* remembered for the reply */
    return 0;
}

int sample_Bank_on_release(sample_Bank *self, ac_ctx *cx, const sample_Bank_release *m)
{
    (void)self;
    (void)m;
    if (!holding)
        return 0;
    holding = false;
    release_rc = sample_Bank_reply_hold(cx, &held, (uint32_t)release_rc + 1);
    return 0;
}

int sample_Bank_on_silent(sample_Bank *self, ac_ctx *cx, const sample_Bank_silent *m)
{
    (void)self;
    (void)cx;
    (void)m;
    return 0;
}

/* ---- the client ---------------------------------------------------------------- */

static struct answer {
    int calls;
    int status;
    bool reply_null;
    bool ok;
    int64_t cents;
    char currency[16];
    char note[16];
    uint32_t n;
    void *self;
    void *arg;
} answer;

static void *client_state;

static int on_withdrawn(void *self, ac_ctx *cx, int status,
                        const sample_Bank_withdraw_reply *r, void *arg)
{
    (void)cx;
    answer.calls++;
    answer.status = status;
    answer.reply_null = r == NULL;
    answer.self = self;
    answer.arg = arg;
    if (r != NULL) {
        answer.ok = r->ok;
        answer.cents = r->balance.cents;
        snprintf(answer.currency, sizeof answer.currency, "%s", r->balance.currency.data);
        snprintf(answer.note, sizeof answer.note, "%s", r->note.data);
    }
    ((sample_Client *)self)->answers++;
    return 0;
}

static int on_silent(void *self, ac_ctx *cx, int status,
                     const sample_Bank_silent_reply *r, void *arg)
{
    (void)self;
    (void)cx;
    (void)arg;
    answer.calls++;
    answer.status = status;
    answer.reply_null = r == NULL;
    return 0;
}

static int on_held(void *self, ac_ctx *cx, int status,
                   const sample_Bank_hold_reply *r, void *arg)
{
    (void)self;
    (void)cx;
    (void)arg;
    answer.calls++;
    answer.status = status;
    answer.reply_null = r == NULL;
    if (r != NULL)
        answer.n = r->n;
    return 0;
}

static int tag_arg;

int sample_Client_on_go(sample_Client *self, ac_ctx *cx, const sample_Client_go *m)
{
    client_state = self;
    sample_Money amount = { m->cents, ac_string_of("EUR") };
    return sample_Bank_ask_withdraw(cx, m->bank, amount, m->timeout_ms,
                                    on_withdrawn, &tag_arg);
}

int sample_Client_on_go_silent(sample_Client *self, ac_ctx *cx,
                               const sample_Client_go_silent *m)
{
    (void)self;
    return sample_Bank_ask_silent(cx, m->bank, 5, m->timeout_ms, on_silent, NULL);
}

int sample_Client_on_go_hold(sample_Client *self, ac_ctx *cx,
                             const sample_Client_go_hold *m)
{
    (void)self;
    int rc = sample_Bank_ask_hold(cx, m->bank, m->n, 0, on_held, NULL);
    if (rc == 0 && m->then_stop)
        rc = ac_stop_self(cx);
    return rc;
}

/* ---- tests ------------------------------------------------------------------------ */

Test(ask, reply_reaches_the_continuation_with_every_field)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    sample_Bank_ref bank;
    sample_Client_ref client;
    cr_assert_eq(sample_Bank_spawn(cx, &bank), 0);
    cr_assert_eq(sample_Client_spawn(cx, &client), 0);
    cr_assert_eq(sample_Client_send_go(cx, client, bank, 30, 1000), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(answer.calls, 1);
    cr_expect_eq(answer.status, 0);
    cr_expect(!answer.reply_null);
    cr_expect(answer.ok);
    cr_expect_eq(answer.cents, 70);
    cr_expect_str_eq(answer.currency, "EUR");
    cr_expect_str_eq(answer.note, "done");
    cr_expect_eq(answer.self, client_state, "runs with the asker's state");
    cr_expect_eq(answer.arg, &tag_arg);
    cr_expect_eq(((sample_Client *)client_state)->answers, 1);
    /* The timeout was cancelled: time passing changes nothing. */
    cr_expect_eq(ac_runtime_advance(rt, 5000), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_expect_eq(answer.calls, 1);
    ac_runtime_destroy(rt);
}

Test(ask, timeout_arrives_as_etimedout_exactly_once)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    sample_Bank_ref bank;
    sample_Client_ref client;
    cr_assert_eq(sample_Bank_spawn(cx, &bank), 0);
    cr_assert_eq(sample_Client_spawn(cx, &client), 0);
    cr_assert_eq(sample_Client_send_go_silent(cx, client, bank, 50), 0);
    cr_assert_eq(ac_runtime_run(rt), 1, "the ask waits");
    cr_expect_eq(answer.calls, 0);
    ac_runtime_advance(rt, 49);
    cr_assert_eq(ac_runtime_run(rt), 1, "the ask waits");
    cr_expect_eq(answer.calls, 0, "not before its time");
    ac_runtime_advance(rt, 1);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(answer.calls, 1);
    cr_expect_eq(answer.status, AC_ETIMEDOUT);
    cr_expect(answer.reply_null);
    ac_runtime_advance(rt, 1000);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_expect_eq(answer.calls, 1);
    ac_runtime_destroy(rt);
}

Test(ask, blocking_ask_from_main_gets_the_reply)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    sample_Bank_ref bank;
    cr_assert_eq(sample_Bank_spawn(cx, &bank), 0);
    sample_Money amount = { 25, ac_string_of("CHF") };
    sample_Bank_withdraw_reply *r = NULL;
    cr_assert_eq(sample_Bank_ask_withdraw_wait(cx, bank, amount, AC_FOREVER, &r), 0);
    cr_assert_not_null(r);
    cr_expect(r->ok);
    cr_expect_eq(r->balance.cents, 75);
    cr_expect_eq(r->balance.currency.len, 3);
    cr_expect_str_eq(r->balance.currency.data, "CHF");
    cr_expect_str_eq(r->note.data, "done");
    ac_reply_free(cx, r);
    /* Again, on the same thread's inbox. */
    cr_assert_eq(sample_Bank_ask_withdraw_wait(cx, bank, amount, 1000, &r), 0);
    cr_expect_eq(r->balance.cents, 75);
    ac_reply_free(cx, r);
    ac_runtime_destroy(rt);
}

Test(ask, blocking_ask_times_out_with_workers)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    sample_Bank_ref bank;
    cr_assert_eq(sample_Bank_spawn(cx, &bank), 0);
    sample_Bank_silent_reply *r = (sample_Bank_silent_reply *)&r;
    cr_expect_eq(sample_Bank_ask_silent_wait(cx, bank, 1, 50, &r), AC_ETIMEDOUT);
    cr_expect_null(r);
    ac_runtime_destroy(rt);
}

/* A reply that comes after its blocking ask gave up is dropped by id (and
 * counted); the next ask gets its own reply. */
Test(ask, late_reply_of_a_timed_out_blocking_ask_is_dropped)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    sample_Bank_ref bank;
    cr_assert_eq(sample_Bank_spawn(cx, &bank), 0);
    sample_Bank_hold_reply *h = NULL;
    /* Deterministic: nothing left to run and no reply is a timeout. */
    cr_expect_eq(sample_Bank_ask_hold_wait(cx, bank, 7, 10, &h), AC_ETIMEDOUT);
    cr_assert_eq(sample_Bank_send_release(cx, bank), 0);  /* the late reply */
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_expect_eq(release_rc, 0);
    ac_stats before, after;
    ac_runtime_stats(rt, &before);
    sample_Money amount = { 1, ac_string_of("EUR") };
    sample_Bank_withdraw_reply *r = NULL;
    cr_assert_eq(sample_Bank_ask_withdraw_wait(cx, bank, amount, AC_FOREVER, &r), 0);
    cr_expect_eq(r->balance.cents, 99);
    ac_reply_free(cx, r);
    ac_runtime_stats(rt, &after);
    cr_expect_eq(after.dead_letters, before.dead_letters + 1);
    ac_runtime_destroy(rt);
}

Test(ask, reply_to_a_dead_asker_is_a_counted_dead_letter)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    sample_Bank_ref bank;
    sample_Client_ref client;
    cr_assert_eq(sample_Bank_spawn(cx, &bank), 0);
    cr_assert_eq(sample_Client_spawn(cx, &client), 0);
    cr_assert_eq(sample_Client_send_go_hold(cx, client, bank, 3, true), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert(holding);
    ac_stats before, after;
    ac_runtime_stats(rt, &before);
    cr_assert_eq(sample_Bank_send_release(cx, bank), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_expect_eq(release_rc, 0, "a dead letter, not the replier's failure");
    ac_runtime_stats(rt, &after);
    cr_expect_eq(after.dead_letters, before.dead_letters + 1);
    cr_expect_eq(answer.calls, 0, "the continuation died with its actor");
    ac_runtime_destroy(rt);
}

Test(ask, deferred_reply_from_a_later_handler)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    sample_Bank_ref bank;
    sample_Client_ref client;
    cr_assert_eq(sample_Bank_spawn(cx, &bank), 0);
    cr_assert_eq(sample_Client_spawn(cx, &client), 0);
    cr_assert_eq(sample_Client_send_go_hold(cx, client, bank, 41, false), 0);
    cr_assert_eq(ac_runtime_run(rt), 1, "the ask waits");
    cr_expect_eq(answer.calls, 0);
    cr_assert_eq(sample_Bank_send_release(cx, bank), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_expect_eq(release_rc, 0);
    cr_assert_eq(answer.calls, 1);
    cr_expect_eq(answer.status, 0);
    cr_expect_eq(answer.n, 42);
    ac_runtime_destroy(rt);
}

Test(ask, ask_outside_a_handler_is_refused)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    sample_Bank_ref bank;
    cr_assert_eq(sample_Bank_spawn(cx, &bank), 0);
    cr_expect_eq(sample_Bank_ask_silent(cx, bank, 1, 0, on_silent, NULL), AC_ESTATE);
    ac_runtime_destroy(rt);
}
