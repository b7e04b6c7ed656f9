/*
 * remote_pingpong N — bench/README.md ("Two nodes"): the pinger on this
 * node, the ponger on a peer node in a child process; each ping carries the
 * pinger's reference, and the ponger answers it. One message in flight, N
 * round trips; reported: round trips per second.
 */
#include "remote.h"
#include "remote_pingpong.actor.h"

static _Atomic uint64_t pongs_seen;  /* the pinger's count, read by main */
static _Atomic uint64_t pings_seen;  /* the ponger's (in the peer) */
static _Atomic(double) finished_at;
static sem_t finished;

int remote_pingpong_Pinger_on_serve(remote_pingpong_Pinger *self, ac_ctx *cx,
                                    const remote_pingpong_Pinger_serve *m)
{
    self->remaining = m->rounds;
    return remote_pingpong_Ponger_send_ping(cx, m->peer, remote_pingpong_Pinger_ref_self(cx));
}

int remote_pingpong_Pinger_on_pong(remote_pingpong_Pinger *self, ac_ctx *cx,
                                   const remote_pingpong_Pinger_pong *m)
{
    atomic_store_explicit(&pongs_seen, ++self->pongs, memory_order_relaxed);
    if (--self->remaining == 0) {
        atomic_store(&finished_at, bench_now());
        sem_post(&finished);
        return 0;
    }
    return remote_pingpong_Ponger_send_ping(cx, m->from, remote_pingpong_Pinger_ref_self(cx));
}

int remote_pingpong_Ponger_on_ping(remote_pingpong_Ponger *self, ac_ctx *cx,
                                   const remote_pingpong_Ponger_ping *m)
{
    atomic_store_explicit(&pings_seen, ++self->pings, memory_order_relaxed);
    return remote_pingpong_Pinger_send_pong(cx, m->from, remote_pingpong_Ponger_ref_self(cx));
}

/* The peer node: a ponger, its address to the parent, its count at the end. */
static int ponger_node(remote_cluster *c, int in, int out)
{
    ac_runtime *rt = remote_peer_node(c, 0);
    remote_pingpong_Ponger_ref ponger;
    bench_check(remote_pingpong_Ponger_spawn(ac_runtime_ctx(rt), &ponger), "spawn");
    remote_peer_ready(out, &ponger.addr);
    remote_peer_wait_done(in);
    remote_peer_report(out, (uint64_t[4]){atomic_load(&pings_seen)});
    ac_runtime_destroy(rt);
    return 0;
}

int main(int argc, char **argv)
{
    bench_args args = bench_args_parse(argc, argv, 1, "N");
    uint64_t n = args.v[0];
    remote_cluster *c = remote_setup();
    sem_init(&finished, 0, 0);
    remote_msg ready;
    ac_runtime *rt = remote_begin(c, ponger_node, 0, "remote_pingpong", &ready.addr);
    ac_ctx *cx = ac_runtime_ctx(rt);
    remote_pingpong_Pinger_ref pinger;
    bench_check(remote_pingpong_Pinger_spawn(cx, &pinger), "spawn");

    double t0 = bench_now();
    bench_check(remote_pingpong_Pinger_send_serve(cx, pinger,
                                                  remote_pingpong_Ponger_ref_of(ready.addr), n),
                "send");
    remote_wait_done(&finished, &pongs_seen, "remote_pingpong: pongs");
    double secs = atomic_load(&finished_at) - t0;

    remote_msg report;
    long peer_rss;
    remote_finish(c, &report, &peer_rss);
    ac_runtime_destroy(rt);
    uint64_t pongs = atomic_load(&pongs_seen), pings = report.v[0];
    if (pongs != n || pings != n)
        bench_fail("remote_pingpong: the pinger counted %" PRIu64 " pongs, the ponger %" PRIu64
                   " pings, expected %" PRIu64,
                   pongs, pings, n);
    remote_report("remote_pingpong", args.params, secs, (double)n, peer_rss);
    return 0;
}
