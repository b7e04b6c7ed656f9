/* ask C R [W] — bench/README.md. */
#include "common.h"
#include "ask.actor.h"

static ask_Teller_ref teller;
/* The teller's accounts: only the teller's turns touch them (one actor, one
 * turn at a time), main reads them after the run. */
static uint64_t *balances;
/* Written by each client's report (its own slot), read by main after. */
static uint64_t *got_last, *got_bad, *got_mix;
/* A client's work on each reply: W steps of xorshift64 (0: none), a job
 * whose result main checks. Set before any client runs. */
static uint64_t work;

static uint64_t churn(uint64_t x, uint64_t steps)
{
    for (uint64_t i = 0; i < steps; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    return x;
}

int ask_Teller_on_deposit(ask_Teller *self, ac_ctx *cx, const ask_Teller_deposit *m)
{
    self->served++;
    balances[m->account] += m->amount;
    return ask_Teller_reply_deposit(cx, &m->reply_to, balances[m->account]);
}

static int ask_next(ask_Client *self, ac_ctx *cx);

/* The k-th deposit (amount k) must leave k(k+1)/2: a reply that is not the
 * running sum counts as bad. */
static int on_balance(void *state, ac_ctx *cx, int status, const ask_Teller_deposit_reply *r,
                      void *arg)
{
    (void)arg;
    ask_Client *self = state;
    if (status != 0)
        return status;
    uint64_t k = self->sent;
    if (r->balance != k * (k + 1) / 2)
        self->bad++;
    self->last = r->balance;
    self->mix = churn(self->mix, work);
    return ask_next(self, cx);
}

static int ask_next(ask_Client *self, ac_ctx *cx)
{
    if (self->sent == self->requests)
        return 0;
    self->sent++;
    return ask_Teller_ask_deposit(cx, teller, self->id, self->sent, 0, on_balance, NULL);
}

int ask_Client_on_launch(ask_Client *self, ac_ctx *cx, const ask_Client_launch *m)
{
    self->id = m->id;
    self->requests = m->requests;
    self->mix = 1;
    return ask_next(self, cx);
}

int ask_Client_on_report(ask_Client *self, ac_ctx *cx, const ask_Client_report *m)
{
    (void)cx;
    (void)m;
    got_last[self->id] = self->last;
    got_bad[self->id] = self->bad;
    got_mix[self->id] = self->mix;
    return 0;
}

int main(int argc, char **argv)
{
    bench_args args = bench_args_parse(argc, argv, argc > 3 ? 3 : 2, "C R [W]");
    uint64_t c = args.v[0], r = args.v[1];
    work = args.v[2];
    if (c > UINT32_MAX || r > UINT32_MAX)
        bench_fail("ask: arguments too large");
    ask_Client_ref *clients = malloc(c * sizeof *clients);
    balances = calloc(c, sizeof *balances);
    got_last = calloc(c, sizeof *got_last);
    got_bad = calloc(c, sizeof *got_bad);
    got_mix = calloc(c, sizeof *got_mix);
    if (clients == NULL || balances == NULL || got_last == NULL || got_bad == NULL ||
        got_mix == NULL)
        bench_fail("ask: out of memory");

    ac_runtime *rt = bench_runtime();
    ac_ctx *cx = ac_runtime_ctx(rt);
    bench_check(ask_Teller_spawn(cx, &teller), "spawn");
    for (uint64_t i = 0; i < c; i++)
        bench_check(ask_Client_spawn(cx, &clients[i]), "spawn");

    double t0 = bench_now();
    for (uint64_t i = 0; i < c; i++)
        bench_check(ask_Client_send_launch(cx, clients[i], (uint32_t)i, (uint32_t)r), "send");
    double secs = bench_run_since(rt, t0);

    for (uint64_t i = 0; i < c; i++)
        bench_check(ask_Client_send_report(cx, clients[i]), "send");
    ac_runtime_run(rt);
    ac_runtime_destroy(rt);
    uint64_t want = r * (r + 1) / 2, bad = 0, short_ = 0, total = 0;
    uint64_t mix = 1;
    for (uint64_t k = 0; k < r; k++)
        mix = churn(mix, work);
    for (uint64_t i = 0; i < c; i++) {
        bad += got_bad[i];
        short_ += got_last[i] != want || balances[i] != want || got_mix[i] != mix;
        total += balances[i];
    }
    if (bad != 0 || short_ != 0)
        bench_fail("ask: %" PRIu64 " replies not the running sum, %" PRIu64
                   " accounts not at %" PRIu64 " or with the wrong work (total %" PRIu64 ")",
                   bad, short_, want, total);
    bench_report("ask", args.params, secs, (double)(c * r));
    free(clients);
    free(balances);
    free(got_last);
    free(got_bad);
    free(got_mix);
    return 0;
}
