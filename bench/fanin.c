/* fanin P M — bench/README.md. */
#include "common.h"
#include "fanin.actor.h"

/* Written only by the consumer's handlers (one at a time, each seeing the
 * last one's writes), read by main after ac_runtime_run. */
static uint64_t *next_seq;
static uint64_t received, disorder;

/* Sends per producer turn before it yields (see fanin.actor). */
#define CHUNK 256

static int send_chunk(fanin_Producer *self, ac_ctx *cx)
{
    uint64_t end = self->sent + CHUNK < self->count ? self->sent + CHUNK : self->count;
    for (; self->sent < end; self->sent++) {
        int rc = fanin_Consumer_send_item(cx, self->consumer, self->id, self->sent);
        if (rc != 0)
            return rc;
    }
    if (self->sent < self->count)
        return fanin_Producer_send_more(cx, fanin_Producer_ref_self(cx));
    return 0;
}

int fanin_Producer_on_produce(fanin_Producer *self, ac_ctx *cx,
                              const fanin_Producer_produce *m)
{
    self->consumer = m->consumer;
    self->id = m->id;
    self->count = m->count;
    return send_chunk(self, cx);
}

int fanin_Producer_on_more(fanin_Producer *self, ac_ctx *cx, const fanin_Producer_more *m)
{
    (void)m;
    return send_chunk(self, cx);
}

int fanin_Consumer_on_expect(fanin_Consumer *self, ac_ctx *cx,
                             const fanin_Consumer_expect *m)
{
    (void)cx;
    self->expected = m->total;
    return 0;
}

int fanin_Consumer_on_item(fanin_Consumer *self, ac_ctx *cx,
                           const fanin_Consumer_item *m)
{
    (void)cx;
    if (next_seq[m->producer]++ != m->seq)
        self->disorder++;
    if (++self->received == self->expected) {
        received = self->received;
        disorder = self->disorder;
    }
    return 0;
}

int main(int argc, char **argv)
{
    bench_args args = bench_args_parse(argc, argv, 2, "P M");
    uint64_t p = args.v[0], m = args.v[1];
    if (p > UINT32_MAX)
        bench_fail("fanin: too many producers");
    next_seq = calloc(p, sizeof *next_seq);
    fanin_Producer_ref *producers = malloc(p * sizeof *producers);
    if (next_seq == NULL || producers == NULL)
        bench_fail("fanin: out of memory");

    ac_runtime *rt = bench_runtime();
    ac_ctx *cx = ac_runtime_ctx(rt);
    fanin_Consumer_ref consumer;
    bench_check(fanin_Consumer_spawn(cx, &consumer), "spawn");
    for (uint64_t i = 0; i < p; i++)
        bench_check(fanin_Producer_spawn(cx, &producers[i]), "spawn");
    bench_check(fanin_Consumer_send_expect(cx, consumer, p * m), "send");
    ac_runtime_run(rt);

    double t0 = bench_now();
    for (uint64_t i = 0; i < p; i++)
        bench_check(fanin_Producer_send_produce(cx, producers[i], consumer, (uint32_t)i, m),
                    "send");
    double secs = bench_run_since(rt, t0);
    ac_runtime_destroy(rt);

    if (received != p * m || disorder != 0)
        bench_fail("fanin: received %" PRIu64 " of %" PRIu64 ", %" PRIu64 " out of order",
                   received, p * m, disorder);
    free(next_seq);
    free(producers);
    bench_report("fanin", args.params, secs, (double)(p * m));
    return 0;
}
