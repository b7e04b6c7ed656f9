/*
 * link.c — the peers and our links to them: one CURVE DEALER per
 * peer, its socket monitor, the greeting, and the batches that carry what
 * waits in its queue. All of it runs on the node's thread, under the lock.
 */
#include "node.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

bool ac__node_is_up(const peer *p)
{
    return p->linked && p->greeted && p->node != 0;
}

/* The live peer named `name`, or NULL; under the lock. */
peer *ac__node_find_peer(ac__node *N, const char *name)
{
    for (size_t i = 0; i < N->npeers; i++)
        if (!N->peers[i].removed && strcmp(N->peers[i].id.name, name) == 0)
            return &N->peers[i];
    return NULL;
}

/* Appends a peer; under the lock. */
int ac__node_add_peer(ac__node *N, const ac__cluster_node *id)
{
    if (N->npeers == N->cap) {
        size_t cap = N->cap ? 2 * N->cap : 8;
        peer *bigger = realloc(N->peers, cap * sizeof *bigger);
        if (bigger == NULL)
            return AC_ENOMEM;
        N->peers = bigger;
        N->cap = cap;
    }
    peer *p = &N->peers[N->npeers++];
    memset(p, 0, sizeof *p);
    p->id = *id;
    return 0;
}

/* Discards what waits for p's link (it went down, p was removed, the
 * node stopped): counted in p's drops, and each message and reply in
 * p's `lost`, which ac_stats adds to its dead letters. Counted in the
 * peer, not in a thread's context, so that a queue dropped when the node
 * thread has no context (it could not make one) is counted as well. */
void ac__node_drop_queue(peer *p)
{
    for (out_rec *r = p->q_head, *next; r != NULL; r = next) {
        next = r->next;
        p->lost += r->counted;
        free(r);
    }
    p->drops += p->q_len;
    p->q_head = p->q_tail = NULL;
    p->q_len = 0;
    p->q_bytes = 0;
}

void ac__node_set_int(void *sock, int option, int value)
{
    (void)zmq_setsockopt(sock, option, &value, sizeof value);
}

/* Every socket of the node: no linger (a shutdown never waits on a dead
 * peer), and ZMTP heartbeats, which end a link that stays silent for the
 * timeout (a frozen or cut-off peer) and tell the peer to do the same.
 * ZeroMQ's timeout runs from the first ping left unanswered, which goes
 * out up to one interval after the peer's last word: so that a link is
 * down at most timeout_ms after that word, the interval is taken off. */
void ac__node_common_options(ac__node *N, void *sock)
{
    uint32_t after_ping = N->timeout_ms > N->heartbeat_ms ? N->timeout_ms - N->heartbeat_ms
                                                           : N->timeout_ms;
    ac__node_set_int(sock, ZMQ_LINGER, 0);
    ac__node_set_int(sock, ZMQ_HEARTBEAT_IVL, (int)N->heartbeat_ms);
    ac__node_set_int(sock, ZMQ_HEARTBEAT_TIMEOUT, (int)after_ping);
    ac__node_set_int(sock, ZMQ_HEARTBEAT_TTL, (int)N->timeout_ms);
    ac__node_set_int(sock, ZMQ_HANDSHAKE_IVL, HANDSHAKE_MS);
}

/* Opens a socket monitor for `sock` on a fresh inproc endpoint, returning
 * the PAIR socket its events arrive on, or NULL. */
void *ac__node_monitor_socket(ac__node *N, void *sock, int events)
{
    static _Atomic unsigned long seq;
    char ep[64];
    /* Relaxed: only uniqueness matters. */
    snprintf(ep, sizeof ep, "inproc://actorc-node-monitor-%lu",
             atomic_fetch_add_explicit(&seq, 1, memory_order_relaxed));
    if (zmq_socket_monitor(sock, ep, events) != 0)
        return NULL;
    void *pair = zmq_socket(N->zmq, ZMQ_PAIR);
    if (pair == NULL)
        return NULL;
    ac__node_set_int(pair, ZMQ_LINGER, 0);
    /* No bound on events waiting: ZeroMQ drops a monitor's event that
     * finds the pipe full, and a count made from them would go wrong (a
     * flood of connections outran a bound of 2,000). Before the connect,
     * which sizes the pipe. */
    ac__node_set_int(pair, ZMQ_RCVHWM, 0);
    if (zmq_connect(pair, ep) != 0) {
        zmq_close(pair);
        return NULL;
    }
    return pair;
}

int ac__node_open_link(ac__node *N, peer *p)
{
    void *d = zmq_socket(N->zmq, ZMQ_DEALER);
    if (d == NULL)
        return AC_ENOMEM;
    ac__node_common_options(N, d);
    /* Immediate: nothing is queued for a link that is not up, so nothing
     * stale is delivered when it comes back. */
    ac__node_set_int(d, ZMQ_IMMEDIATE, 1);
    ac__node_set_int(d, ZMQ_RECONNECT_IVL, RECONNECT_MS);
    ac__node_set_int(d, ZMQ_RECONNECT_IVL_MAX, RECONNECT_MAX_MS);
    zmq_setsockopt(d, ZMQ_CURVE_SERVERKEY, p->id.public_key, AC_NODE_KEY_LEN);
    zmq_setsockopt(d, ZMQ_CURVE_PUBLICKEY, N->public_key, AC_NODE_KEY_LEN);
    zmq_setsockopt(d, ZMQ_CURVE_SECRETKEY, N->secret_key, AC_NODE_KEY_LEN);
    void *m = ac__node_monitor_socket(N, d, ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_DISCONNECTED |
                                ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                                ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                                ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL);
    int rc = m == NULL ? AC_ENOMEM : zmq_connect(d, p->id.endpoint) != 0 ? AC_EINVAL : 0;
    if (rc != 0) {
        if (m != NULL)
            zmq_close(m);
        zmq_close(d);
        return rc;
    }
    p->dealer = d;
    p->monitor = m;
    return 0;
}

void ac__node_close_link(peer *p)
{
    if (p->dealer == NULL)
        return;
    zmq_socket_monitor(p->dealer, NULL, 0);
    zmq_close(p->monitor);
    zmq_close(p->dealer);
    p->dealer = p->monitor = NULL;
}

/* Sends one batch of a single record on p's link: a HELLO, a BYE or an
 * ACK. Numbered as every batch is, but not one to settle: it carries
 * none of the records `sent` counts. */
static bool send_one(ac__node *N, peer *p, ac__frame_op op)
{
    uint8_t buf[AC__FRAME_HEADER_SIZE + AC__RECORD_HEADER_SIZE + 1 + AC_NODE_NAME_MAX];
    ac_wire_out out = {buf, sizeof buf, 0};
    /* Its incarnation, or 0 when it has not greeted us since our link went
     * down (it may have restarted): a HELLO to 0 asks for its greeting. */
    ac__frame_header h = {1, ac_runtime_node(N->rt), p->greeted ? p->node : 0, N->tx_seq + 1};
    ac__frame_put_header(&out, &h);
    if (op == AC__OP_HELLO)
        ac__frame_put_hello(&out, N->name);
    else if (op == AC__OP_ACK)
        ac__frame_put_ack(&out, p->rx_seq, p->rx_records);
    else
        ac__frame_put_empty(&out, op);
    if (zmq_send(p->dealer, buf, out.len, ZMQ_DONTWAIT) != (int)out.len)
        return false;
    N->tx_seq++;
    return true;
}

/* Brings the sockets in line with the peer list; in the thread, locked. A
 * removed peer is told so before its link closes: its own link to us,
 * already through the handshake, would otherwise stay (a ROUTER cannot
 * drop one connection), and its key is refused only from its next one. */
void ac__node_sync_peers(ac__node *N)
{
    size_t kept = 0;
    for (size_t i = 0; i < N->npeers; i++) {
        peer *p = &N->peers[i];
        if (p->removed) {
            ac__node_note_lost(N, p);
            if (p->linked) {
                ac__node_set_int(p->dealer, ZMQ_LINGER, RECONNECT_MS);  /* let the BYE out */
                (void)send_one(N, p, AC__OP_BYE);
            }
            ac__node_close_link(p);
            ac__node_drop_queue(p);
            ac__node_settle_all(p);  /* it will acknowledge nothing more */
            ac__node_count_peer(p, &N->gone);  /* the node's totals keep its traffic */
            free(p->fl);
            continue;
        }
        if (p->dealer == NULL && p->reopen_at == 0 && ac__node_open_link(N, p) != 0)
            p->reopen_at = ac__node_now_ms() + RECONNECT_MAX_MS;  /* tried again then */
        N->peers[kept++] = *p;
    }
    N->npeers = kept;
}

/* Sends our greeting on p's link: its incarnation as we know it, our name.
 * EAGAIN: the pipe is not attached yet; the loop retries. */
void ac__node_greet(ac__node *N, peer *p)
{
    if (send_one(N, p, AC__OP_HELLO))
        p->greet = false;
}

bool ac__node_read_event(void *monitor, uint16_t *event, uint32_t *value)
{
    uint8_t ev[6];
    int n = zmq_recv(monitor, ev, sizeof ev, ZMQ_DONTWAIT);
    int more = 0;
    size_t more_len = sizeof more;
    zmq_getsockopt(monitor, ZMQ_RCVMORE, &more, &more_len);
    if (more) {  /* the endpoint, which we do not need */
        char endpoint[AC_NODE_ENDPOINT_MAX + 1];
        (void)zmq_recv(monitor, endpoint, sizeof endpoint, ZMQ_DONTWAIT);
    }
    if (n < 6)
        return false;
    *event = (uint16_t)(ev[0] | ev[1] << 8);
    *value = (uint32_t)ev[2] | (uint32_t)ev[3] << 8 | (uint32_t)ev[4] << 16 |
             (uint32_t)ev[5] << 24;
    return true;
}

uint64_t ac__node_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* One event of p's socket monitor. A handshake the peer refused (it does
 * not know our key yet) is not retried by ZeroMQ: the link is opened anew
 * a little later, as a reconnect would be. */
void ac__node_link_event(peer *p)
{
    if (p->monitor == NULL)
        return;  /* closed since the poll (a BYE) */
    uint16_t event;
    uint32_t value;
    if (!ac__node_read_event(p->monitor, &event, &value))
        return;
    bool was_up = ac__node_is_up(p);
    if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
        p->linked = true;
        p->greet = true;
        p->connects++;
        if (p->rx_seq != 0)
            p->ack_at = ac__node_now_ms();  /* our last ACK may have gone with the link */
    } else if (event == ZMQ_EVENT_DISCONNECTED) {
        p->linked = false;
        p->greet = false;
        p->greeted = false;  /* until it greets again, it may have restarted */
        ac__node_drop_queue(p);  /* what it had not taken is lost with the link */
    } else if (event & (ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                        ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)) {
        p->reopen_at = ac__node_now_ms() + RECONNECT_MAX_MS;
    }
    if (was_up && !ac__node_is_up(p))
        p->losses++;
}

/* Sends the `count` records from `first` on as one batch of `size` bytes,
 * built straight into the message ZeroMQ takes; counted when it left, false
 * when the link cannot take it now. */
static bool fly_room(peer *p);

static bool send_batch(ac__node *N, peer *p, const out_rec *first, size_t count, size_t size)
{
    zmq_msg_t msg;
    if (zmq_msg_init_size(&msg, size) != 0)
        return false;
    uint8_t *at = zmq_msg_data(&msg);
    ac_wire_out out = {at, AC__FRAME_HEADER_SIZE, 0};
    ac__frame_header h = {(uint16_t)count, ac_runtime_node(N->rt), p->node, N->tx_seq + 1};
    ac__frame_put_header(&out, &h);
    at += AC__FRAME_HEADER_SIZE;
    const out_rec *r = first;
    uint64_t msgs = 0;  /* the counted sends among the records: ac_stats.node_forwarded */
    for (size_t i = 0; i < count; i++, r = r->next) {
        memcpy(at, r->bytes, r->size);
        at += r->size;
        msgs += r->counted;
    }
    /* Room to note it first: a batch sent is one to settle. */
    if (!fly_room(p) || zmq_msg_send(&msg, p->dealer, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close(&msg);
        return false;
    }
    N->tx_seq++;
    p->sent += count;
    p->forwarded += msgs;
    p->bytes_sent += size;
    p->batches++;
    flight *f = &p->fl[(p->fl_head + p->fl_len++) % p->fl_cap];
    *f = (flight){N->tx_seq, p->sent, p->bytes_sent};
    return true;
}

/* Whether p's list of batches in flight has room for one more, growing
 * it if need be. */
static bool fly_room(peer *p)
{
    if (p->fl_len < p->fl_cap)
        return true;
    size_t cap = p->fl_cap ? 2 * p->fl_cap : 64;
    flight *bigger = malloc(cap * sizeof *bigger);
    if (bigger == NULL)
        return false;
    for (size_t i = 0; i < p->fl_len; i++)
        bigger[i] = p->fl[(p->fl_head + i) % p->fl_cap];
    free(p->fl);
    p->fl = bigger;
    p->fl_cap = cap;
    p->fl_head = 0;
    return true;
}

void ac__node_settle(peer *p, uint64_t seq, uint64_t records)
{
    if (records < p->acked)
        return;  /* an earlier ACK that a later one overtook */
    uint64_t upto = p->settled, upto_bytes = p->settled_bytes;
    while (p->fl_len > 0 && p->fl[p->fl_head].seq <= seq) {
        upto = p->fl[p->fl_head].records;
        upto_bytes = p->fl[p->fl_head].bytes;
        p->fl_head = (p->fl_head + 1) % p->fl_cap;
        p->fl_len--;
    }
    uint64_t sent = upto - p->settled, took = records - p->acked;
    p->lost_in_flight += took < sent ? sent - took : 0;
    p->settled = upto;
    p->settled_bytes = upto_bytes;
    p->acked = records;
}

void ac__node_settle_all(peer *p)
{
    p->lost_in_flight += p->sent - p->settled;
    p->settled = p->sent;
    p->settled_bytes = p->bytes_sent;
    p->fl_head = p->fl_len = 0;
    p->acked = 0;  /* a new incarnation counts from 0 */
}

bool ac__node_window_open(const peer *p)
{
    return p->bytes_sent - p->settled_bytes < WINDOW_BYTES;
}

uint64_t ac__node_ack(ac__node *N, peer *p, uint64_t now)
{
    if (p->ack_at == 0 || p->dealer == NULL || p->greet || !ac__node_is_up(p))
        return UINT64_MAX;
    if (ac__node_holding(N, p))
        return now + RETRY_MS;  /* back-pressure: looked at again then */
    if ((now >= p->ack_at || p->rx_unacked >= ACK_BYTES) && send_one(N, p, AC__OP_ACK)) {
        p->ack_at = 0;
        p->rx_unacked = 0;
        return UINT64_MAX;
    }
    return now >= p->ack_at ? now + RETRY_MS : p->ack_at;  /* the link could not take it now */
}

/* Sends what waits for p's link, in batches of up to BATCH_BYTES (a larger
 * record alone), while its window is open. Stops at the first batch the
 * link cannot take now (the loop retries) or when the window closes (an
 * ACK opens it: the ROUTER wakes the loop). */
void ac__node_flush(ac__node *N, peer *p)
{
    while (p->q_head != NULL && ac__node_window_open(p)) {
        size_t size = AC__FRAME_HEADER_SIZE, count = 0;
        for (out_rec *r = p->q_head; r != NULL && count < UINT16_MAX; r = r->next) {
            if (count > 0 && size + r->size > BATCH_BYTES)
                break;
            size += r->size;
            count++;
        }
        if (!send_batch(N, p, p->q_head, count, size))
            return;
        for (size_t i = 0; i < count; i++) {
            out_rec *sent = p->q_head;
            p->q_head = sent->next;
            p->q_bytes -= sent->size;
            free(sent);
        }
        if (p->q_head == NULL)
            p->q_tail = NULL;
        p->q_len -= count;
    }
}

bool ac__node_send_now(ac__node *N, peer *p, const out_rec *r)
{
    if (p->dealer == NULL || p->greet || !ac__node_is_up(p) || !ac__node_window_open(p))
        return false;  /* our greeting goes first on a new link */
    return send_batch(N, p, r, 1, AC__FRAME_HEADER_SIZE + r->size);
}

/* The up peer whose incarnation `node` is; under the lock. */
peer *ac__node_peer_at(ac__node *N, uint64_t node)
{
    for (size_t i = 0; i < N->npeers; i++)
        if (!N->peers[i].removed && N->peers[i].node == node && ac__node_is_up(&N->peers[i]))
            return &N->peers[i];
    return NULL;
}

/* Appends an event; false when out of memory (the next reconcile tries
 * again, since it compares state, not transitions). */
static bool note(ac__node *N, uint64_t node, bool up)
{
    if (N->nevents == N->events_cap) {
        size_t cap = N->events_cap ? 2 * N->events_cap : 8;
        node_event *bigger = realloc(N->events, cap * sizeof *bigger);
        if (bigger == NULL)
            return false;
        N->events = bigger;
        N->events_cap = cap;
    }
    N->events[N->nevents++] = (node_event){node, up};
    return true;
}

void ac__node_note_lost(ac__node *N, peer *p)
{
    if (p->told_node != 0 && note(N, p->told_node, false))
        p->told_node = 0;
}

void ac__node_reconcile(ac__node *N)
{
    for (size_t i = 0; i < N->npeers; i++) {
        peer *p = &N->peers[i];
        uint64_t now = ac__node_is_up(p) && !p->removed ? p->node : 0;
        if (p->told_node == now)
            continue;
        ac__node_note_lost(N, p);  /* down, or replaced by a new incarnation */
        if (p->told_node == 0 && now != 0 && note(N, now, true))
            p->told_node = now;
    }
}
