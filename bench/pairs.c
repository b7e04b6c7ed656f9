/* pairs K N — bench/README.md. */
#include "common.h"
#include "pairs.actor.h"

static uint64_t *pongs_counted;  /* one slot per pinger, read after run */

int pairs_Pinger_on_serve(pairs_Pinger *self, ac_ctx *cx, const pairs_Pinger_serve *m)
{
    self->remaining = m->rounds;
    self->id = m->id;
    return pairs_Ponger_send_ping(cx, m->peer, pairs_Pinger_ref_self(cx));
}

int pairs_Pinger_on_pong(pairs_Pinger *self, ac_ctx *cx, const pairs_Pinger_pong *m)
{
    self->pongs++;
    if (--self->remaining == 0) {
        pongs_counted[self->id] = self->pongs;
        return 0;
    }
    return pairs_Ponger_send_ping(cx, m->from, pairs_Pinger_ref_self(cx));
}

int pairs_Ponger_on_ping(pairs_Ponger *self, ac_ctx *cx, const pairs_Ponger_ping *m)
{
    (void)self;
    return pairs_Pinger_send_pong(cx, m->from, pairs_Ponger_ref_self(cx));
}

int main(int argc, char **argv)
{
    bench_args args = bench_args_parse(argc, argv, 2, "K N");
    uint64_t k = args.v[0], n = args.v[1];
    if (k > UINT32_MAX)
        bench_fail("pairs: too many pairs");
    pongs_counted = calloc(k, sizeof *pongs_counted);
    pairs_Pinger_ref *pingers = malloc(k * sizeof *pingers);
    pairs_Ponger_ref *pongers = malloc(k * sizeof *pongers);
    if (pongs_counted == NULL || pingers == NULL || pongers == NULL)
        bench_fail("pairs: out of memory");

    ac_runtime *rt = bench_runtime();
    ac_ctx *cx = ac_runtime_ctx(rt);
    for (uint64_t i = 0; i < k; i++) {
        bench_check(pairs_Pinger_spawn(cx, &pingers[i]), "spawn");
        bench_check(pairs_Ponger_spawn(cx, &pongers[i]), "spawn");
    }
    double t0 = bench_now();
    for (uint64_t i = 0; i < k; i++)
        bench_check(pairs_Pinger_send_serve(cx, pingers[i], pongers[i], (uint32_t)i, n), "send");
    double secs = bench_run_since(rt, t0);
    ac_runtime_destroy(rt);

    for (uint64_t i = 0; i < k; i++)
        if (pongs_counted[i] != n)
            bench_fail("pairs: pinger %" PRIu64 " counted %" PRIu64 " pongs, expected %" PRIu64,
                       i, pongs_counted[i], n);
    free(pongs_counted);
    free(pingers);
    free(pongers);
    bench_report("pairs", args.params, secs, 2.0 * (double)(k * n));
    return 0;
}
