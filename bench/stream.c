/* stream N — bench/README.md. */
#include "common.h"
#include "stream.actor.h"

/* Written by the consumer's last handler, read by main after the run. */
static uint64_t received, disorder;

int stream_Producer_on_go(stream_Producer *self, ac_ctx *cx, const stream_Producer_go *m)
{
    (void)self;
    /* All N in this one turn: the pattern measured is a producer that
     * does not yield (unlike fanin's, which sends in chunks). */
    for (uint64_t i = 0; i < m->count; i++) {
        int rc = stream_Consumer_send_item(cx, m->consumer, i);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int stream_Consumer_on_expect(stream_Consumer *self, ac_ctx *cx, const stream_Consumer_expect *m)
{
    (void)cx;
    self->expected = m->total;
    return 0;
}

int stream_Consumer_on_item(stream_Consumer *self, ac_ctx *cx, const stream_Consumer_item *m)
{
    (void)cx;
    if (m->seq != self->received)
        self->disorder++;
    if (++self->received == self->expected) {
        received = self->received;
        disorder = self->disorder;
    }
    return 0;
}

int main(int argc, char **argv)
{
    bench_args args = bench_args_parse(argc, argv, 1, "N");
    uint64_t n = args.v[0];
    ac_runtime *rt = bench_runtime();
    ac_ctx *cx = ac_runtime_ctx(rt);
    stream_Producer_ref producer;
    stream_Consumer_ref consumer;
    bench_check(stream_Producer_spawn(cx, &producer), "spawn");
    bench_check(stream_Consumer_spawn(cx, &consumer), "spawn");
    bench_check(stream_Consumer_send_expect(cx, consumer, n), "send");
    ac_runtime_run(rt);

    double t0 = bench_now();
    bench_check(stream_Producer_send_go(cx, producer, consumer, n), "send");
    double secs = bench_run_since(rt, t0);
    ac_runtime_destroy(rt);

    if (received != n || disorder != 0)
        bench_fail("stream: received %" PRIu64 " of %" PRIu64 ", %" PRIu64 " out of order",
                   received, n, disorder);
    bench_report("stream", args.params, secs, (double)n);
    return 0;
}
