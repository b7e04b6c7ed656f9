/*
 * node_gate.c — who gets in: the ZAP handler that lets in only the keys
 * of peers, and the ROUTER's monitor that counts connections refused for
 * not speaking ZMTP with CURVE.
 */
#include "node.h"

#include <stdlib.h>
#include <string.h>

/* One event of the ROUTER's monitor. Connections whose handshake fails
 * for their key are counted by the ZAP handler; the others that fail — a
 * peer that does not speak ZMTP with CURVE — often end without a handshake
 * event at all, so the accepted connections still waiting for theirs are
 * tracked by fd, and one that disconnects while waiting is counted. (The
 * handshake events carry no fd: each settles the oldest waiting one,
 * which can misattribute between simultaneous handshakes but never
 * miscounts them.) */
void ac__node_router_event(ac__node *N)
{
    uint16_t event;
    uint32_t value;
    if (!ac__node_read_event(N->router_monitor, &event, &value))
        return;
    int fd = (int)value;
    if (event == ZMQ_EVENT_ACCEPTED) {
        if (N->npending == N->pending_cap) {
            size_t cap = N->pending_cap ? 2 * N->pending_cap : 16;
            int *bigger = realloc(N->pending, cap * sizeof *bigger);
            if (bigger == NULL)
                return;  /* uncounted if it fails: nothing else is lost */
            N->pending = bigger;
            N->pending_cap = cap;
        }
        N->pending[N->npending++] = fd;
        return;
    }
    if (event == ZMQ_EVENT_DISCONNECTED) {
        for (size_t i = 0; i < N->npending; i++) {
            if (N->pending[i] == fd) {
                memmove(&N->pending[i], &N->pending[i + 1], (N->npending - i - 1) * sizeof *N->pending);
                N->npending--;
                N->stats.protocol_errors++;
                return;
            }
        }
        return;
    }
    /* A handshake ended, one way or the other. */
    if (N->npending > 0) {
        memmove(&N->pending[0], &N->pending[1], (N->npending - 1) * sizeof *N->pending);
        N->npending--;
    }
    if (event & (ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL))
        N->stats.protocol_errors++;
}

/* Receives one frame of a ZAP request into buf (cap bytes); its length, or
 * -1. */
static int zap_part(void *zap, void *buf, size_t cap, bool *more)
{
    int n = zmq_recv(zap, buf, cap, 0);
    int m = 0;
    size_t m_len = sizeof m;
    zmq_getsockopt(zap, ZMQ_RCVMORE, &m, &m_len);
    *more = m != 0;
    return n < 0 ? -1 : (n > (int)cap ? (int)cap : n);
}

/* Answers one ZAP request (ZeroMQ RFC 27): a CURVE client whose key names a
 * peer is let in, with the peer's name as its User-Id; anyone else not. */
void ac__node_serve_zap(ac__node *N)
{
    char version[8], request_id[256], ignored[256], mechanism[16];
    uint8_t key[32];
    bool more = true;
    int id_len = -1, mech_len = -1, key_len = -1;
    if (zap_part(N->zap, version, sizeof version, &more) < 0)
        return;
    if (more)
        id_len = zap_part(N->zap, request_id, sizeof request_id, &more);
    for (int i = 0; i < 3 && more; i++)  /* domain, address, routing id */
        (void)zap_part(N->zap, ignored, sizeof ignored, &more);
    if (more)
        mech_len = zap_part(N->zap, mechanism, sizeof mechanism, &more);
    if (more)
        key_len = zap_part(N->zap, key, sizeof key, &more);
    while (more)
        (void)zap_part(N->zap, ignored, sizeof ignored, &more);

    const peer *who = NULL;
    if (mech_len == 5 && memcmp(mechanism, "CURVE", 5) == 0 && key_len == 32) {
        char z85[AC_NODE_KEY_LEN + 1];
        zmq_z85_encode(z85, key, sizeof key);
        for (size_t i = 0; i < N->npeers && who == NULL; i++)
            if (!N->peers[i].removed && strcmp(N->peers[i].id.public_key, z85) == 0)
                who = &N->peers[i];
    }
    if (who == NULL)
        N->stats.auth_failures++;
    const char *status = who ? "200" : "400";
    const char *text = who ? "OK" : "unknown key";
    const char *user = who ? who->id.name : "";
    zmq_send(N->zap, "1.0", 3, ZMQ_SNDMORE);
    zmq_send(N->zap, request_id, id_len > 0 ? (size_t)id_len : 0, ZMQ_SNDMORE);
    zmq_send(N->zap, status, 3, ZMQ_SNDMORE);
    zmq_send(N->zap, text, strlen(text), ZMQ_SNDMORE);
    zmq_send(N->zap, user, strlen(user), ZMQ_SNDMORE);
    zmq_send(N->zap, "", 0, 0);
}
