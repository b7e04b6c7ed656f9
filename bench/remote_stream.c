/*
 * remote_stream N BYTES [LAG_US] — bench/README.md ("Two nodes"): a sender
 * on a peer node (a child process) streams N messages of BYTES = 64 bytes
 * (a sequence number and 56 bytes of pad) to a receiver on this node, then
 * the count it sent. Reported: messages per second at the receiver, from
 * the `go` sent to the sender until the receiver has the end marker. The
 * sender respects back-pressure: a send refused with AC_EFULL (its peer's
 * queue is full) is counted and tried again a millisecond later. With
 * LAG_US the receiver spends that long on each message (a slow consumer:
 * bench/README.md, "Back-pressure across nodes").
 */
#include "remote.h"
#include "remote_stream.actor.h"

#define PAD 56       /* the message's bytes after its sequence number */
#define CHUNK 1024   /* sends per turn of the sender */

static _Atomic uint64_t items_seen;   /* the receiver's count, read by main */
static _Atomic uint64_t bad_seen, sent_said, refused_said;
static _Atomic(double) finished_at;
static sem_t finished;
static _Atomic uint64_t refusals;     /* the sender's (in the peer) */
static _Atomic int send_error;
static uint64_t lag_us;               /* set before the receiver is spawned */

int remote_stream_Receiver_on_item(remote_stream_Receiver *self, ac_ctx *cx,
                                   const remote_stream_Receiver_item *m)
{
    (void)cx;
    if (lag_us > 0)
        for (double until = bench_now() + (double)lag_us / 1e6; bench_now() < until;)
            ;
    uint8_t mark = (uint8_t)m->seq;
    if (m->seq != self->got || m->pad[0] != mark || m->pad[PAD - 1] != mark)
        self->bad++;
    atomic_store_explicit(&items_seen, ++self->got, memory_order_relaxed);
    return 0;
}

int remote_stream_Receiver_on_end(remote_stream_Receiver *self, ac_ctx *cx,
                                  const remote_stream_Receiver_end *m)
{
    (void)cx;
    atomic_store(&finished_at, bench_now());
    atomic_store(&bad_seen, self->bad);
    atomic_store(&sent_said, m->sent);
    atomic_store(&refused_said, m->refused);
    sem_post(&finished);
    return 0;
}

/* A refused send: counted, and the sender's next turn comes in 1 ms, when
 * the node's thread has made room in the peer's queue. */
static int refused(remote_stream_Sender *self, ac_ctx *cx)
{
    atomic_store_explicit(&refusals, ++self->refused, memory_order_relaxed);
    return remote_stream_Sender_send_more_after(cx, remote_stream_Sender_ref_self(cx), 1, NULL);
}

static int failed(int rc)
{
    atomic_store(&send_error, rc);
    return rc;
}

/* One turn: up to CHUNK messages, then the next turn (a message to itself,
 * so that the turns of a long stream stay short), or the end marker. */
static int pump(remote_stream_Sender *self, ac_ctx *cx)
{
    uint8_t pad[PAD];
    for (unsigned k = 0; k < CHUNK && self->next < self->n; k++) {
        memset(pad, (uint8_t)self->next, sizeof pad);
        int rc = remote_stream_Receiver_send_item(cx, self->to, self->next, pad);
        if (rc == AC_EFULL)
            return refused(self, cx);
        if (rc != 0)
            return failed(rc);
        self->next++;
    }
    if (self->next < self->n)
        return remote_stream_Sender_send_more(cx, remote_stream_Sender_ref_self(cx));
    int rc = remote_stream_Receiver_send_end(cx, self->to, self->next, self->refused);
    if (rc == AC_EFULL)
        return refused(self, cx);
    return rc != 0 ? failed(rc) : 0;
}

int remote_stream_Sender_on_go(remote_stream_Sender *self, ac_ctx *cx,
                               const remote_stream_Sender_go *m)
{
    self->to = m->receiver;
    self->n = m->n;
    return pump(self, cx);
}

int remote_stream_Sender_on_more(remote_stream_Sender *self, ac_ctx *cx,
                                 const remote_stream_Sender_more *m)
{
    (void)m;
    return pump(self, cx);
}

/* The peer node: the sender; at the end its refusals and what its node
 * counted for the link to alpha (sent, refused, drops). */
static int sender_node(remote_cluster *c, int in, int out)
{
    ac_runtime *rt = remote_peer_node(c, 0);
    remote_stream_Sender_ref sender;
    bench_check(remote_stream_Sender_spawn(ac_runtime_ctx(rt), &sender), "spawn");
    remote_peer_ready(out, &sender.addr);
    remote_peer_wait_done(in);
    ac_peer_info p;
    if (!remote_peer_info(rt, ALPHA, &p))
        return 1;
    if (atomic_load(&send_error) != 0)
        fprintf(stderr, "remote_stream: the sender's send failed: %s\n",
                ac_strerror(atomic_load(&send_error)));
    remote_peer_report(out, (uint64_t[4]){atomic_load(&refusals), p.sent, p.refused, p.drops});
    ac_runtime_destroy(rt);
    return 0;
}

int main(int argc, char **argv)
{
    const char *usage = "N BYTES [LAG_US] (BYTES = 64: 8 of sequence number, 56 of pad)";
    uint64_t n = bench_arg(argc, argv, 1, usage);
    if (bench_arg(argc, argv, 2, usage) != 8 + PAD)
        bench_fail("remote_stream: messages are %d bytes (the IDL's u64 and u8[%d])", 8 + PAD, PAD);
    lag_us = argc > 3 ? bench_arg(argc, argv, 3, usage) : 0;
    remote_cluster *c = remote_setup();
    sem_init(&finished, 0, 0);
    remote_msg ready;
    ac_runtime *rt = remote_begin(c, sender_node, 0, "remote_stream", &ready.addr);
    ac_ctx *cx = ac_runtime_ctx(rt);
    remote_stream_Receiver_ref receiver;
    bench_check(remote_stream_Receiver_spawn(cx, &receiver), "spawn");

    double t0 = bench_now();
    bench_check(remote_stream_Sender_send_go(cx, remote_stream_Sender_ref_of(ready.addr),
                                             receiver, n),
                "send");
    remote_wait_done(&finished, &items_seen, "remote_stream: messages received");
    double secs = atomic_load(&finished_at) - t0;

    remote_msg report;
    long peer_rss;
    remote_finish(c, &report, &peer_rss);
    ac_runtime_destroy(rt);
    uint64_t got = atomic_load(&items_seen), sent = atomic_load(&sent_said);
    uint64_t bad = atomic_load(&bad_seen), said = atomic_load(&refused_said);
    uint64_t counted = report.v[0], link_sent = report.v[1], link_refused = report.v[2],
             link_drops = report.v[3];
    if (got != n || sent != n || bad != 0)
        bench_fail("remote_stream: received %" PRIu64 ", the sender sent %" PRIu64
                   ", expected %" PRIu64 "; %" PRIu64 " out of order or altered",
                   got, sent, n, bad);
    if (said != counted || link_refused != counted || link_sent != n + 1 || link_drops != 0)
        bench_fail("remote_stream: the sender counted %" PRIu64 " refusals (%" PRIu64
                   " in its end marker), its node %" PRIu64 " refused, %" PRIu64
                   " sent (expected %" PRIu64 "), %" PRIu64 " dropped",
                   counted, said, link_refused, link_sent, n + 1, link_drops);
    char params[64];
    if (lag_us > 0)
        snprintf(params, sizeof params, "%" PRIu64 "x%dx%" PRIu64, n, 8 + PAD, lag_us);
    else
        snprintf(params, sizeof params, "%" PRIu64 "x%d", n, 8 + PAD);
    remote_report("remote_stream", params, secs, (double)n, peer_rss);
    return 0;
}
