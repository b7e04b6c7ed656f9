/*
 * gate.c — who gets in: the ZAP handler that lets in only the keys
 * of peers, and the ROUTER's monitor that counts the connections refused,
 * for their key or for not speaking ZMTP with CURVE.
 */
#include "node.h"

#include <stdlib.h>
#include <string.h>

/*
 * Counting refusals: one source, the ROUTER's monitor, whose events the
 * node reads all of (its pipe has no bound: an event dropped would be a
 * connection counted wrong). Every connection ZeroMQ accepts ends its
 * handshake one way, told by one event or none:
 *   HANDSHAKE_SUCCEEDED        a peer: nothing to count;
 *   HANDSHAKE_FAILED_AUTH      the ZAP handler refused its key: auth_failures;
 *   HANDSHAKE_FAILED_PROTOCOL  it broke ZMTP or CURVE: protocol_errors;
 *   HANDSHAKE_FAILED_NO_DETAIL it stalled past the handshake timeout (a
 *                              slowloris), or left before the end: the same;
 *   no event                   ZeroMQ refuses a greeting of ZMTP 1.0 or 2.0
 *                              (or bytes that are not ZMTP) and frames it
 *                              cannot decode without telling: the same, found
 *                              at its DISCONNECTED.
 * The ZAP handler counts nothing: it may answer a connection that has
 * already gone (counted here as left) and never see one whose request
 * went with it.
 *
 * Every accepted connection ends with one DISCONNECTED, which carries its
 * fd as ACCEPTED did; the handshake events carry none. The node's ZeroMQ
 * context has one I/O thread, on which a failed handshake's event and
 * its DISCONNECTED are told back to back (ZeroMQ's engine error), so the
 * DISCONNECTED after a failure is that failure's. A connection whose
 * handshake ended well or for its key disconnects later, after other
 * events. So the gate keeps the connections not yet known to be settled
 * and, for each such ending, how many connections had been accepted
 * before it: it is one of those. A DISCONNECTED after no failure is of a
 * connection that either ended so (nothing to count) or failed without
 * telling (a protocol error): it is the latter when no unsettled ending
 * can be its. When one can, it is taken for one of the endings, as it is
 * in a flood of unknown keys; were it a silent failure instead, the
 * connection whose ending it took is counted in its place when it
 * disconnects, so every refusal is counted once, late only when
 * connections that speak no ZMTP arrive while handshakes are under way.
 * An ending is also settled without a DISCONNECTED when as many endings
 * as connections can be theirs.
 */

static bool grow(void **p, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return true;
    size_t bigger = *cap ? 2 * *cap : 16;
    void *q = realloc(*p, bigger * size);
    if (q == NULL)
        return false;
    *p = q;
    *cap = bigger;
    return true;
}

static void drop_conn(ac__gate *g, size_t i)
{
    memmove(&g->conns[i], &g->conns[i + 1], (g->nconns - i - 1) * sizeof *g->conns);
    g->nconns--;
}

static void drop_ended(ac__gate *g, size_t i)
{
    memmove(&g->ended[i], &g->ended[i + 1], (g->nended - i - 1) * sizeof *g->ended);
    g->nended--;
}

/* Settles what the endings decide alone: when the first k endings can
 * only be the k connections accepted before the k-th, those are settled;
 * an ending no connection is left for (its connection failed after a
 * good handshake, or was taken by another's) is dropped. Both lists are
 * in accept order. */
static void settle(ac__gate *g)
{
    size_t j = 0;
    for (size_t i = 0; i < g->nended; i++) {
        while (j < g->nconns && g->conns[j].seq < g->ended[i])
            j++;
        if (j < i + 1) {
            drop_ended(g, i);
            i--;
        } else if (j == i + 1) {
            g->nconns -= j;
            memmove(g->conns, g->conns + j, g->nconns * sizeof *g->conns);
            g->nended -= i + 1;
            memmove(g->ended, g->ended + i + 1, g->nended * sizeof *g->ended);
            i = (size_t)-1;
            j = 0;
        }
    }
}

static void on_event(ac__node *N, uint16_t event, int fd)
{
    ac__gate *g = &N->gate;
    bool failed_last = g->failed_last;
    g->failed_last = false;
    switch (event) {
    case ZMQ_EVENT_ACCEPTED:
        /* A record of this fd still here is of a connection ZeroMQ ended
         * without a DISCONNECTED (the socket's own close): the fd is new. */
        for (size_t i = 0; i < g->nconns; i++)
            if (g->conns[i].fd == fd)
                drop_conn(g, i--);
        if (grow((void **)&g->conns, &g->conns_cap, g->nconns, sizeof *g->conns))
            g->conns[g->nconns++] = (ac__gate_conn){fd, g->accepts};
        g->accepts++;  /* unrecorded (out of memory), it disconnects unseen */
        return;
    case ZMQ_EVENT_HANDSHAKE_FAILED_AUTH:
    case ZMQ_EVENT_HANDSHAKE_SUCCEEDED:
        if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
            N->stats.auth_failures++;
        if (grow((void **)&g->ended, &g->ended_cap, g->nended, sizeof *g->ended))
            g->ended[g->nended++] = g->accepts;
        settle(g);
        return;
    case ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL:
    case ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL:
        N->stats.protocol_errors++;
        g->failed_last = true;
        return;
    case ZMQ_EVENT_DISCONNECTED:
        break;
    default:
        return;
    }
    size_t at = g->nconns;
    for (size_t i = 0; i < g->nconns && at == g->nconns; i++)
        if (g->conns[i].fd == fd)
            at = i;
    if (at == g->nconns)
        return;  /* settled already: a peer's link, or a refused key, ends */
    uint64_t seq = g->conns[at].seq;
    drop_conn(g, at);
    if (!failed_last) {
        size_t e = 0;
        while (e < g->nended && g->ended[e] <= seq)
            e++;
        if (e == g->nended)
            N->stats.protocol_errors++;  /* no ending can be its: a silent failure */
        else
            drop_ended(g, e);
    }
    settle(g);
}

void ac__node_router_event(ac__node *N)
{
    uint16_t event;
    uint32_t value;
    while (ac__node_read_event(N->router_monitor, &event, &value))
        on_event(N, event, (int)value);
}

void ac__node_gate_fini(ac__gate *g)
{
    free(g->conns);
    free(g->ended);
}

/* Receives one frame of a ZAP request into buf (cap bytes); its length, or
 * -1 (the first frame: none is waiting). */
static int zap_part(void *zap, void *buf, size_t cap, bool *more)
{
    int n = zmq_recv(zap, buf, cap, ZMQ_DONTWAIT);
    int m = 0;
    size_t m_len = sizeof m;
    zmq_getsockopt(zap, ZMQ_RCVMORE, &m, &m_len);
    *more = m != 0;
    return n < 0 ? -1 : (n > (int)cap ? (int)cap : n);
}

/* Answers one ZAP request (ZeroMQ RFC 27): a CURVE client whose key names a
 * peer is let in, with the peer's name as its User-Id; anyone else not
 * (counted by the monitor, when its connection hears it). False: none
 * was waiting. */
static bool serve_one(ac__node *N)
{
    char version[8], request_id[256], ignored[256], mechanism[16];
    uint8_t key[32];
    bool more = true;
    int id_len = -1, mech_len = -1, key_len = -1;
    if (zap_part(N->zap, version, sizeof version, &more) < 0)
        return false;
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
    const char *status = who ? "200" : "400";
    const char *text = who ? "OK" : "unknown key";
    const char *user = who ? who->id.name : "";
    zmq_send(N->zap, "1.0", 3, ZMQ_SNDMORE);
    zmq_send(N->zap, request_id, id_len > 0 ? (size_t)id_len : 0, ZMQ_SNDMORE);
    zmq_send(N->zap, status, 3, ZMQ_SNDMORE);
    zmq_send(N->zap, text, strlen(text), ZMQ_SNDMORE);
    zmq_send(N->zap, user, strlen(user), ZMQ_SNDMORE);
    zmq_send(N->zap, "", 0, 0);
    return true;
}

/* Every request waiting: a flood of handshakes is answered before their
 * handshake timeout, not one a turn of the node's thread. */
void ac__node_serve_zap(ac__node *N)
{
    while (serve_one(N))
        ;
}
