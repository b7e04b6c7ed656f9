/*
 * bank — accounts under a supervisor, transfers with asks and timeouts, and
 * a failing account restarted at the address it had.
 *
 * main starts a one-for-one supervisor with three accounts, and a teller,
 * which serves one transfer at a time (busy, it postpones the others).
 * It asks the teller (a blocking ask) to make transfers: one that works,
 * one refused for lack of funds, one that times out because the account
 * does not answer. Then an account fails: the supervisor restarts it at the
 * same address, and the next ask to that address is answered by the new
 * instance. Every figure is checked.
 *
 *   usage: bank        (AC_WORKERS=n picks the number of worker threads)
 */
#include "bank.actor.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The teller's asks of an account. One that is answered must not time out
 * on a loaded machine (a sanitizer build, a busy CI host), so it is given
 * seconds; only the frozen account's ask waits that long. */
#define ASK_TIMEOUT_MS 2000
/* main's blocking asks: a teller's transfer is two asks of its own. */
#define MAIN_ASK_MS (3 * ASK_TIMEOUT_MS)

/* ---- Account ------------------------------------------------------------- */

int bank_Account_hook_start(bank_Account *self, ac_ctx *cx AC_UNUSED,
                            const bank_Account_start_args *args)
{
    self->balance = args->opening;
    return 0;
}

int bank_Account_on_deposit(bank_Account *self, ac_ctx *cx, const bank_Account_deposit *m)
{
    if (self->frozen)
        return 0;  /* no answer: the asker's timeout will tell it */
    self->balance += m->amount.cents;
    return bank_Account_reply_deposit(cx, &m->reply_to, (bank_Money){self->balance});
}

int bank_Account_on_withdraw(bank_Account *self, ac_ctx *cx, const bank_Account_withdraw *m)
{
    if (self->frozen)
        return 0;
    bool ok = m->amount.cents > 0 && m->amount.cents <= self->balance;
    if (ok)
        self->balance -= m->amount.cents;
    return bank_Account_reply_withdraw(cx, &m->reply_to, ok, (bank_Money){self->balance});
}

int bank_Account_on_balance(bank_Account *self, ac_ctx *cx, const bank_Account_balance *m)
{
    return bank_Account_reply_balance(cx, &m->reply_to, (bank_Money){self->balance});
}

int bank_Account_on_freeze(bank_Account *self, ac_ctx *cx AC_UNUSED,
                           const bank_Account_freeze *m)
{
    self->frozen = m->frozen;
    return 0;
}

int bank_Account_on_crash(bank_Account *self AC_UNUSED, ac_ctx *cx,
                          const bank_Account_crash *m)
{
    return ac_fail(cx, m->code);
}

/* ---- Teller --------------------------------------------------------------- */

/* The transfer in hand is in the teller's state; the asker's reply_to,
 * which a state cannot hold, goes from ask to ask in the context each
 * carries inline (copied into the pending ask: nothing to allocate or free). */

static int finish(bank_Teller *self, ac_ctx *cx, const ac_reply_to *asker, bool ok, int status)
{
    if (ok)
        self->done++;
    else if (status == AC_ETIMEDOUT)
        self->timed_out++;
    else
        self->refused++;
    int rc = bank_Teller_become(self, cx, bank_Teller_BEHAVIOUR_default);
    if (rc != 0)
        return rc;  /* (the transfers that waited come next, in order) */
    /* The asker may have given up waiting: that reply is a dead letter,
     * counted, and not this teller's failure (the call returns 0). */
    return bank_Teller_reply_transfer(cx, asker, ok, status);
}

static int deposited(bank_Teller *self, ac_ctx *cx, int status,
                     const bank_Account_deposit_reply *reply AC_UNUSED, void *asker)
{
    /* The money left the payer but did not reach the payee: put it back. */
    if (status != 0)
        (void)bank_Account_send_deposit(cx, self->payer, self->amount);
    return finish(self, cx, asker, status == 0, status);
}

static int withdrawn(bank_Teller *self, ac_ctx *cx, int status,
                     const bank_Account_withdraw_reply *reply, void *asker)
{
    if (status == 0 && !reply->ok)
        status = AC_EINVAL;
    if (status == 0)
        status = bank_Teller_ask_Account_deposit(cx, self->payee, self->amount, ASK_TIMEOUT_MS,
                                                 deposited, asker, sizeof(ac_reply_to));
    return status == 0 ? 0 : finish(self, cx, asker, false, status);
}

int bank_Teller_on_transfer(bank_Teller *self, ac_ctx *cx, const bank_Teller_transfer *m)
{
    int rc = bank_Teller_become(self, cx, bank_Teller_BEHAVIOUR_busy);
    if (rc != 0)
        return rc;
    self->payer = m->payer;
    self->payee = m->payee;
    self->amount = m->amount;
    rc = bank_Teller_ask_Account_withdraw(cx, m->payer, m->amount, ASK_TIMEOUT_MS, withdrawn,
                                              &m->reply_to, sizeof m->reply_to);
    return rc == 0 ? 0 : finish(self, cx, &m->reply_to, false, rc);
}

/* ---- main ----------------------------------------------------------------- */

static int failures;

static void check(bool ok, const char *what)
{
    printf("  %-58s %s\n", what, ok ? "ok" : "WRONG");
    if (!ok)
        failures++;
}

/* The balance, or -1 when no answer came within timeout_ms. */
static int64_t balance_within(ac_ctx *cx, bank_Account_ref a, int timeout_ms)
{
    bank_Account_balance_reply *r;
    if (bank_Account_ask_balance_wait(cx, a, timeout_ms, &r) != 0)
        return -1;
    int64_t cents = r->balance.cents;
    ac_reply_free(cx, r);
    return cents;
}

static int64_t balance_of(ac_ctx *cx, bank_Account_ref a)
{
    return balance_within(cx, a, MAIN_ASK_MS);
}

/* The balance of an account being restarted: until it is back at its
 * address (up to 5 s), an ask to it fails at once with AC_ENOTFOUND, and
 * so does one queued behind the crash (the runtime answers a request its
 * target died with, instead of leaving the ask to its timeout). So the
 * tries are bounded in time, not counted: at least 5 s of them (a loaded
 * machine may run the supervisor's restart, or answer a try, later). */
static int64_t balance_once_up(ac_ctx *cx, bank_Account_ref a)
{
    int64_t cents = balance_within(cx, a, 100);
    for (int ms = 0; ms < 5000 && cents < 0; ms++) {
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
        cents = balance_within(cx, a, 100);
    }
    return cents;
}

static int transfer_money(ac_ctx *cx, bank_Teller_ref teller, bank_Account_ref from,
                          bank_Account_ref to, int64_t cents, bool *ok)
{
    bank_Teller_transfer_reply *r;
    int rc = bank_Teller_ask_transfer_wait(cx, teller, from, to, (bank_Money){cents},
                                           MAIN_ASK_MS, &r);
    if (rc != 0)
        return rc;
    *ok = r->ok;
    rc = r->status;
    ac_reply_free(cx, r);
    return rc;
}

int main(void)
{
    ac_runtime *rt;
    int rc = ac_runtime_create(&rt, NULL);
    if (rc != 0) {
        fprintf(stderr, "bank: cannot start the runtime: %s\n", ac_strerror(rc));
        return 1;
    }
    ac_ctx *cx = ac_runtime_ctx(rt);

    /* A supervision tree: three accounts under a one-for-one supervisor
     * (at most 3 restarts in 60 s, each account restarted whatever ended
     * it), which is itself the child of the bank's top supervisor: if the
     * accounts' supervisor gives up, the top one restarts it and all its
     * accounts, at the same addresses. */
    bank_Account_start_args opening[3] = {{10000}, {5000}, {0}};
    ac_child_spec kids[3];
    for (int i = 0; i < 3; i++)
        kids[i] = (ac_child_spec){.type = &bank_Account_type, .args = &opening[i],
                                  .args_size = sizeof opening[i],
                                  .restart = AC_RESTART_PERMANENT};
    /* A window of 60 s: the four failures below must fall in one window
     * however slowly a loaded machine runs them. */
    ac_supervisor_spec accounts = {.strategy = AC_ONE_FOR_ONE, .max_restarts = 3,
                                   .within_ms = 60000, .children = kids, .nchildren = 3};
    ac_child_spec top_kids[1] = {{.restart = AC_RESTART_PERMANENT, .name = "accounts",
                                  .supervisor = &accounts}};
    ac_supervisor_spec top = {.strategy = AC_ONE_FOR_ONE, .max_restarts = 1, .within_ms = 60000,
                              .children = top_kids, .nchildren = 1, .name = "bank"};
    ac_addr root, sup, addrs[3];
    if ((rc = ac_supervisor_start(cx, &top, &root, &sup)) != 0 ||
        (rc = ac_supervisor_which_children(cx, &sup, addrs, 3)) != 3) {
        fprintf(stderr, "bank: supervisor: %s\n", ac_strerror(rc < 0 ? rc : AC_ESTATE));
        return 1;
    }
    bank_Account_ref alice = {addrs[0]}, bob = {addrs[1]}, carol = {addrs[2]};
    bank_Teller_ref teller;
    if ((rc = bank_Teller_spawn(cx, &teller)) != 0) {
        fprintf(stderr, "bank: teller: %s\n", ac_strerror(rc));
        return 1;
    }

    printf("bank: three accounts under a supervisor under the bank's, one teller\n");
    bool ok = false;
    rc = transfer_money(cx, teller, alice, bob, 2500, &ok);
    check(rc == 0 && ok, "alice pays bob 25.00");
    check(balance_of(cx, alice) == 7500 && balance_of(cx, bob) == 7500,
          "alice has 75.00, bob 75.00");

    rc = transfer_money(cx, teller, carol, alice, 100, &ok);
    check(rc == AC_EINVAL && !ok, "carol cannot pay 1.00 from an empty account");

    bank_Account_send_freeze(cx, bob, true);
    rc = transfer_money(cx, teller, bob, carol, 1000, &ok);
    check(rc == AC_ETIMEDOUT && !ok, "a frozen account times the teller's ask out");
    bank_Account_send_freeze(cx, bob, false);
    check(balance_of(cx, bob) == 7500 && balance_of(cx, carol) == 0,
          "and no money moved");

    printf("bank: bob's account fails\n");
    uint64_t ref;
    ac_inbox *ib;
    if (ac_inbox_create(cx, &ib) != 0 || ac_monitor(cx, ac_inbox_addr(ib), &sup, &ref) != 0)
        return 1;
    bank_Account_send_crash(cx, bob, 7);
    /* The supervisor restarts it at the same address: asks to that address
     * reach the new instance, which opened again with 50.00. */
    check(balance_once_up(cx, bob) == 5000, "restarted at its address, opened again at 50.00");
    rc = transfer_money(cx, teller, alice, bob, 500, &ok);
    check(rc == 0 && ok, "alice pays the restarted bob 5.00");
    check(balance_of(cx, bob) == 5500, "bob has 55.00");
    ac_envelope *e;
    check(ac_inbox_recv(cx, ib, AC_TAG_DOWN, 0, &e) == AC_ETIMEDOUT,
          "the supervisor itself is still up");

    printf("bank: the accounts' supervisor gives up\n");
    /* With bob's, three more failures in 60 s are one more than it may
     * restart: it ends the other accounts and fails, and the bank's
     * supervisor restarts it, and with it every account, at the addresses
     * they had. */
    for (int i = 0; i < 3; i++) {
        bank_Account_send_crash(cx, carol, 7);
        (void)balance_once_up(cx, carol);
    }
    check(ac_inbox_recv(cx, ib, AC_TAG_DOWN, 10000, &e) == 0, "it failed");
    ac_envelope_free(cx, e);
    check(balance_once_up(cx, bob) == 5000 && balance_of(cx, alice) == 10000,
          "restarted whole: bob 50.00, alice 100.00 again");
    ac_addr found;
    check(ac_whereis(cx, "accounts", &found) == 0 && ac_addr_eq(&found, &sup),
          "under its name and its address");

    ac_stats st;
    ac_runtime_run(rt);
    ac_runtime_stats(rt, &st);
    printf("bank: %" PRIu64 " messages, %" PRIu64 " failed, %" PRIu64 " dead letters\n",
           st.messages, st.failed, st.dead_letters);
    check(st.failed == 5, "five failures: four crashes and the supervisor that gave up");
    ac_inbox_destroy(cx, ib);
    ac_runtime_destroy(rt);
    if (failures) {
        fprintf(stderr, "bank: %d checks failed\n", failures);
        return 1;
    }
    printf("bank: ok\n");
    return 0;
}
