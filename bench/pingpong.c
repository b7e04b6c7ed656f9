/* pingpong N — bench/README.md. */
#include "common.h"
#include "pingpong.actor.h"

static uint64_t pongs_counted;  /* written by the pinger, read after run */

int pingpong_Pinger_on_serve(pingpong_Pinger *self, ac_ctx *cx,
                             const pingpong_Pinger_serve *m)
{
    self->remaining = m->rounds;
    return pingpong_Ponger_send_ping(cx, m->peer, pingpong_Pinger_ref_self(cx));
}

int pingpong_Pinger_on_pong(pingpong_Pinger *self, ac_ctx *cx,
                            const pingpong_Pinger_pong *m)
{
    self->pongs++;
    if (--self->remaining == 0) {
        pongs_counted = self->pongs;
        return 0;
    }
    return pingpong_Ponger_send_ping(cx, m->from, pingpong_Pinger_ref_self(cx));
}

int pingpong_Ponger_on_ping(pingpong_Ponger *self, ac_ctx *cx,
                            const pingpong_Ponger_ping *m)
{
    (void)self;
    return pingpong_Pinger_send_pong(cx, m->from, pingpong_Ponger_ref_self(cx));
}

int main(int argc, char **argv)
{
    bench_args args = bench_args_parse(argc, argv, 1, "N");
    uint64_t n = args.v[0];
    ac_runtime *rt = bench_runtime();
    ac_ctx *cx = ac_runtime_ctx(rt);
    pingpong_Pinger_ref pinger;
    pingpong_Ponger_ref ponger;
    bench_check(pingpong_Pinger_spawn(cx, &pinger), "spawn");
    bench_check(pingpong_Ponger_spawn(cx, &ponger), "spawn");

    double t0 = bench_now();
    bench_check(pingpong_Pinger_send_serve(cx, pinger, ponger, n), "send");
    double secs = bench_run_since(rt, t0);
    ac_runtime_destroy(rt);

    if (pongs_counted != n)
        bench_fail("pingpong: counted %" PRIu64 " pongs, expected %" PRIu64, pongs_counted, n);
    bench_report("pingpong", args.params, secs, 2.0 * (double)n);
    return 0;
}
