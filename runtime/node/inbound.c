/*
 * inbound.c — what arrives on the ROUTER: batches from the peer
 * their connection's key names, checked record by record, and messages
 * decoded by their target's own type and sent on.
 */
#include "node.h"

#include <stdlib.h>
#include <string.h>

/* What delivering a batch refused, added to the node's counters once the
 * lock is back, and the first few actors its messages went to. */
typedef struct tally {
    uint64_t malformed, misdirected, forged, over_quota;
    ac_addr to[HOLDS];
    size_t nto;
} tally;

/* Whether the actor at `to` is overloaded (docs/RUNTIME.md,
 * "Back-pressure"); false when it is gone. */
static bool overloaded(ac_ctx *cx, const ac_addr *to)
{
    ac__enter(cx);
    ac__actor *a = ac__lookup(cx, to);
    bool over = a != NULL && ac__overloaded(a);
    ac__leave(cx);
    return over;
}

/* Notes the actor a message went to, once a batch. */
static void note_target(tally *t, const ac_addr *to)
{
    for (size_t i = 0; i < t->nto; i++)
        if (ac_addr_eq(&t->to[i], to))
            return;
    if (t->nto < HOLDS)
        t->to[t->nto++] = *to;
}

/* p holds `to` (overloaded): our ACKs to p wait until it is not. */
static void hold(peer *p, const ac_addr *to)
{
    for (size_t i = 0; i < p->nholds; i++)
        if (ac_addr_eq(&p->holds[i], to))
            return;
    if (p->nholds < HOLDS)
        p->holds[p->nholds++] = *to;
}

bool ac__node_holding(ac__node *N, peer *p)
{
    for (size_t i = 0; i < p->nholds;) {
        if (overloaded(N->cx, &p->holds[i]))
            i++;
        else
            p->holds[i] = p->holds[--p->nholds];
    }
    return p->nholds > 0;
}

/* A message for an actor of this node: decoded by the target's own type,
 * if it is the type the sender encoded for, and sent on as from outside,
 * to the actor found once (online throughout: it cannot be freed
 * meanwhile; if it died, the send makes it a dead letter there). */
static void deliver_msg(ac__node *N, const ac__msg *m, tally *t)
{
    ac_ctx *cx = N->cx;
    if (ac_addr_node(&m->to) != ac_runtime_node(N->rt)) {
        t->misdirected++;
        return;
    }
    ac__enter(cx);
    ac__actor *a = ac__lookup(cx, &m->to);
    const ac_actor_type *type = a ? ac__type(a) : NULL;
    ac_envelope *e = NULL;
    if (type == NULL) {
        ac__refuse(cx, &m->to, NULL, AC_ENOTFOUND);  /* gone, or never was: as ac_send's */
    } else if (type->decode == NULL || ac__type_id(type) != m->type_id ||
               type->decode(cx, m->tag, m->payload, m->len, &e) != 0) {
        t->malformed++;  /* not what the target's type can decode */
    } else {
        (void)ac__send_found(cx, a, &m->to, e);
        note_target(t, &m->to);
    }
    ac__leave(cx);
}

/* The first pass over a batch from peer p, locked: the header, greetings
 * and farewells, every record's framing. True when its messages and
 * control records are to be delivered (by deliver_batch); *up: whether p
 * is up, which control records need. */
static bool admit_batch(ac__node *N, peer *p, const uint8_t *buf, size_t len, bool *up)
{
    ac__frame_reader r;
    ac__frame_header h;
    if (!ac__frame_open(&r, buf, len, &h)) {
        N->stats.malformed++;
        return false;
    }
    if (h.to_node != 0 && h.to_node != ac_runtime_node(N->rt)) {
        N->stats.misdirected++;  /* for an earlier incarnation of this node */
        return false;
    }
    if (h.from_node == p->node && h.seq <= p->rx_seq) {
        /* From a connection its sender has replaced, read after one from
         * the new: what our ACKs said we took stays true, and the sender
         * counts this one lost. */
        N->stats.misdirected++;
        return false;
    }
    p->bytes_received += len;
    ac__record rec;
    int got;
    size_t data = 0, acks = 0;
    uint64_t ack_seq = 0, ack_records = 0;
    while ((got = ac__frame_next(&r, &rec)) > 0) {
        char name[AC_NODE_NAME_MAX + 1];
        if (rec.op == AC__OP_MSG || ac__remote_op(N->rt, rec.op)) {
            data++;
            continue;
        }
        if (rec.op == AC__OP_ACK) {
            if (!ac__frame_get_ack(&rec, &ack_seq, &ack_records)) {
                N->stats.malformed++;
                return false;
            }
            acks++;
            continue;
        }
        if (rec.op == AC__OP_BYE && rec.len == 0) {
            /* It removed us: our link goes, and is tried again later, as
             * one it refuses until it adds us back. */
            bool was_up = ac__node_is_up(p);
            ac__node_close_link(p);
            ac__node_drop_queue(p);
            p->linked = p->greet = p->greeted = false;
            p->reopen_at = ac__node_now_ms() + RECONNECT_MAX_MS;
            if (was_up)
                p->losses++;
            continue;
        }
        if (rec.op != AC__OP_HELLO || !ac__frame_get_hello(&rec, name)) {
            N->stats.malformed++;
            return false;
        }
        if (strcmp(name, p->id.name) != 0) {
            N->stats.impostors++;  /* a key of one node, the name of another */
            return false;
        }
        p->greeted = true;
        /* Greet back when it does not know us (it started, or its link to
         * us went down: to_node 0), or when it is a new incarnation (our
         * greeting on a link that came back before this HELLO did went to
         * the one we knew, and the new one dropped it as misdirected). */
        if (h.to_node == 0 || h.from_node != p->node)
            p->greet = p->linked;
        if (h.from_node != p->node) {
            /* What went to the incarnation before is lost unless it said it
             * took it; this one's batches are numbered from its start. */
            if (p->node != 0)
                ac__node_settle_all(p);
            p->node = h.from_node;
            p->incarnations++;
            p->rx_seq = p->rx_records = p->rx_unacked = 0;
            p->ack_at = 0;
            p->nholds = 0;
        }
    }
    if (got < 0) {
        N->stats.malformed++;
        return false;
    }
    if (h.from_node != p->node) {
        if (data > 0)
            N->stats.misdirected++;  /* from an incarnation that did not greet */
        return false;
    }
    /* Taken: its number and records go into our next ACK, due soon unless
     * the batch was only one of its own (ACKs are not acknowledged). */
    p->rx_seq = h.seq;
    p->rx_records += data;
    if (acks < h.records) {
        p->rx_unacked += len;
        if (p->ack_at == 0)
            p->ack_at = ac__node_now_ms() + ACK_MS;
    }
    if (acks > 0)
        ac__node_settle(p, ack_seq, ack_records);
    *up = ac__node_is_up(p);
    p->received += data;
    return data > 0;
}

/* The second pass, unlocked: each message and control record, in order. */
static void deliver_batch(ac__node *N, const uint8_t *buf, size_t len, bool up, tally *t)
{
    ac__frame_reader r;
    ac__frame_header h;
    ac__record rec;
    (void)ac__frame_open(&r, buf, len, &h);  /* admitted: well-formed */
    while (ac__frame_next(&r, &rec) > 0) {
        ac__msg m;
        if (rec.op == AC__OP_MSG) {
            if (ac__frame_get_msg(&rec, &m))
                deliver_msg(N, &m, t);
            else
                t->malformed++;
        } else if (ac__remote_op(N->rt, rec.op)) {
            /* From a peer whose link is down the services have been told
             * it is lost: what it says now would outlive that. */
            int rc = up ? ac__remote_control(N->cx, h.from_node, rec.op, rec.body, rec.len) : 0;
            if (!up)
                t->misdirected++;
            else if (rc == AC__EFORGED)
                t->forged++;
            else if (rc == AC__EQUOTA)
                t->over_quota++;
            else if (rc == AC_EINVAL)
                t->malformed++;
        }
    }
}

/* The live peer whose incarnation `node` is, up or not; under the lock. */
static peer *sender(ac__node *N, uint64_t node)
{
    for (size_t i = 0; i < N->npeers; i++)
        if (!N->peers[i].removed && N->peers[i].node == node)
            return &N->peers[i];
    return NULL;
}

/* Takes the batches waiting on the ROUTER, up to a turn's share: a peer
 * that keeps the ROUTER full (one streaming at full speed is enough) must
 * not keep the thread from its other duties — answering ZAP, reading the
 * links' monitors, flushing the queues, telling the services. What is left
 * is not missed: zmq_poll is level-triggered for ZeroMQ sockets (it reads
 * each socket's ZMQ_EVENTS before it waits, not only the edge of its
 * ZMQ_FD), so the next poll returns at once while a batch waits. */
void ac__node_receive(ac__node *N)
{
    size_t bytes = 0;
    for (unsigned batches = 0; batches < RECEIVE_BATCHES && bytes < RECEIVE_BYTES; batches++) {
        zmq_msg_t rid, body;
        zmq_msg_init(&rid);
        if (zmq_msg_recv(&rid, N->router, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&rid);
            return;
        }
        zmq_msg_init(&body);
        bool ok = zmq_msg_more(&rid) && zmq_msg_recv(&body, N->router, ZMQ_DONTWAIT) >= 0;
        bool extra = ok && zmq_msg_more(&body);
        while (extra) {  /* one batch per message: the rest is malformed */
            zmq_msg_t skip;
            zmq_msg_init(&skip);
            extra = zmq_msg_recv(&skip, N->router, ZMQ_DONTWAIT) >= 0 && zmq_msg_more(&skip);
            zmq_msg_close(&skip);
            ok = false;
        }
        const char *user = ok ? zmq_msg_gets(&body, "User-Id") : NULL;
        peer *p = user ? ac__node_find_peer(N, user) : NULL;
        bool up = false;
        if (p == NULL && ok)
            N->stats.misdirected++;  /* from a node removed since it connected */
        else if (p == NULL)
            N->stats.malformed++;
        else if (admit_batch(N, p, zmq_msg_data(&body), zmq_msg_size(&body), &up)) {
            /* p is not used past this point: the peer list may grow (and
             * move) while the lock is down. */
            uint64_t from = p->node;
            tally t = {.nto = 0};
            pthread_mutex_unlock(&N->lock);
            ac__hold_runnable(N->cx, true);
            deliver_batch(N, zmq_msg_data(&body), zmq_msg_size(&body), up, &t);
            ac__hold_runnable(N->cx, false);
            ac__run_held(N->cx);
            /* Back-pressure: an actor its messages went to that is
             * overloaded now (its turns use up their batch) holds our ACKs
             * to the sender, so that it sends no more than its window past
             * them (docs/NODES.md, "Back-pressure"). Looked at after the
             * turns just run, unlocked as deliveries are. */
            size_t over = 0;
            for (size_t i = 0; i < t.nto; i++)
                if (overloaded(N->cx, &t.to[i]))
                    t.to[over++] = t.to[i];
            pthread_mutex_lock(&N->lock);
            N->stats.malformed += t.malformed;
            N->stats.misdirected += t.misdirected;
            N->stats.forged += t.forged;
            N->stats.over_quota += t.over_quota;
            p = over > 0 ? sender(N, from) : NULL;
            for (size_t i = 0; p != NULL && i < over; i++)
                hold(p, &t.to[i]);
        }
        bytes += zmq_msg_size(&body);
        zmq_msg_close(&body);
        zmq_msg_close(&rid);
    }
}
