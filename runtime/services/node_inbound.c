/*
 * node_inbound.c — what arrives on the ROUTER: batches from the peer
 * their connection's key names, checked record by record, and messages
 * decoded by their target's own type and sent on.
 */
#include "node.h"

#include <stdlib.h>
#include <string.h>

/* A message for an actor of this node: decoded by the target's own type,
 * if it is the type the sender encoded for, and sent on as from outside. */
static void deliver_msg(ac__node *N, const ac__msg *m)
{
    ac_ctx *cx = N->cx;
    if (ac_addr_node(&m->to) != ac_runtime_node(N->rt)) {
        N->stats.misdirected++;
        return;
    }
    ac__enter(cx);
    ac__actor *a = ac__lookup(cx, &m->to);
    const ac_actor_type *type = a ? a->type : NULL;  /* static: outlives a */
    ac__leave(cx);
    if (type == NULL) {
        ac__dead_letter(cx, &m->to, NULL, AC_ENOTFOUND);  /* gone, or never was */
        return;
    }
    ac_envelope *e = NULL;
    if (type->decode == NULL || ac__frame_type_id(type) != m->type_id ||
        type->decode(cx, m->tag, m->payload, m->len, &e) != 0) {
        N->stats.malformed++;  /* not what the target's type can decode */
        return;
    }
    (void)ac_send(cx, &m->to, e);  /* a dead letter there if it died meanwhile */
}

/* A batch from the peer whose key the connection authenticated with. */
static void handle_batch(ac__node *N, peer *p, const uint8_t *buf, size_t len)
{
    ac__frame_reader r;
    ac__frame_header h;
    if (!ac__frame_open(&r, buf, len, &h)) {
        N->stats.malformed++;
        return;
    }
    if (h.to_node != 0 && h.to_node != ac_runtime_node(N->rt)) {
        N->stats.misdirected++;  /* for an earlier incarnation of this node */
        return;
    }
    p->bytes_received += len;
    ac__record rec;
    int got;
    while ((got = ac__frame_next(&r, &rec)) > 0) {
        char name[AC_NODE_NAME_MAX + 1];
        ac__msg m;
        if (rec.op == AC__OP_MSG) {
            if (h.from_node != p->node) {
                N->stats.misdirected++;  /* from an incarnation that did not greet */
            } else if (!ac__frame_get_msg(&rec, &m)) {
                N->stats.malformed++;
            } else {
                p->received++;
                deliver_msg(N, &m);
            }
            continue;
        }
        if (rec.op == AC__OP_BYE && rec.len == 0) {
            /* It removed us: our link goes, and is tried again later, as
             * one it refuses until it adds us back. */
            bool was_up = ac__node_is_up(p);
            ac__node_close_link(p);
            ac__node_drop_queue(p);
            p->linked = p->greet = false;
            p->reopen_at = ac__node_now_ms() + RECONNECT_MAX_MS;
            if (was_up)
                p->losses++;
            continue;
        }
        if (rec.op != AC__OP_HELLO || !ac__frame_get_hello(&rec, name)) {
            N->stats.malformed++;
            return;
        }
        if (strcmp(name, p->id.name) != 0) {
            N->stats.impostors++;  /* a key of one node, the name of another */
            return;
        }
        if (h.from_node != p->node) {
            p->node = h.from_node;
            p->incarnations++;
        }
    }
    if (got < 0)
        N->stats.malformed++;
}

/* Takes every batch waiting on the ROUTER. */
void ac__node_receive(ac__node *N)
{
    for (;;) {
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
        if (p != NULL)
            handle_batch(N, p, zmq_msg_data(&body), zmq_msg_size(&body));
        else if (ok)
            N->stats.misdirected++;  /* from a node removed since it connected */
        else
            N->stats.malformed++;
        zmq_msg_close(&body);
        zmq_msg_close(&rid);
    }
}
