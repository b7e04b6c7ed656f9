/*
 * node.c — the node service: this runtime as one node of a cluster, linked
 * to the others over ZeroMQ with CURVE (actorc.h, docs/NODES.md).
 *
 * One thread per node owns every socket (ZeroMQ sockets are not
 * thread-safe): a ROUTER bound on the node's endpoint, where the other
 * nodes' links arrive, a DEALER per peer, our link to it, and the ZAP
 * handler that decides who may connect. Other threads never touch a
 * socket: they change the peer list under `lock` and wake the thread
 * through an eventfd, which it polls beside the sockets.
 *
 * Every link is a CURVE connection: the ROUTER is a CURVE server with the
 * node's secret key, each DEALER a CURVE client that knows its peer's
 * public key. Without a ZAP handler CURVE lets any key in, so the node
 * answers ZAP itself: a key the peer list names is allowed, with that
 * peer's name as the connection's User-Id; any other is refused and
 * counted. A DEALER's socket monitor says when its handshake succeeded
 * (then it greets the peer: a HELLO batch with the node's name and
 * incarnation) and when it disconnected (ZMTP heartbeats end a silent link
 * within the timeout); the ROUTER's monitor counts connections that failed
 * the handshake. A greeting is believed only if the name it carries is the
 * User-Id its key was allowed as.
 *
 * A peer is up while our link to it is connected and it has greeted us.
 */
#include "services.h"

#include "../lib/cluster.h"
#include "../lib/frame.h"

#include <errno.h>
#include <sodium.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#define DEFAULT_HEARTBEAT_MS 200
#define DEFAULT_TIMEOUT_MS 800
#define HANDSHAKE_MS 2000      /* a peer frozen mid-handshake is given up */
#define RECONNECT_MS 100
#define RECONNECT_MAX_MS 1000
#define MAX_BATCH (64u << 20)  /* the ROUTER refuses larger messages */
#define RETRY_MS 10            /* a greeting the link could not take yet */
#define DEFAULT_QUEUE 65536    /* records waiting per peer */
#define BATCH_BYTES (64u << 10)  /* a batch closes past this (one big record alone) */

/* One record of a peer's queue, encoded by the sender's thread. */
typedef struct out_rec {
    struct out_rec *next;
    size_t size;
    uint8_t bytes[];
} out_rec;

typedef struct peer {
    ac__cluster_node id;
    void *dealer;              /* our link to it; NULL until the thread opens it */
    void *monitor;             /* PAIR: the dealer's socket events */
    bool removed;              /* ac_node_remove_peer: the thread closes it */
    bool linked;               /* the dealer's handshake succeeded since it last disconnected */
    bool greet;                /* a HELLO is due on the dealer */
    uint64_t node;             /* its incarnation, from its HELLO; 0: none yet */
    uint64_t reopen_at;        /* when to open the link anew (ms); 0: not due */
    struct out_rec *q_head, *q_tail;  /* encoded records waiting for the link */
    size_t q_len;
    uint64_t incarnations, connects, losses;
    uint64_t sent, received, bytes_sent, bytes_received, batches, drops, refused;
} peer;

/* What the thread polls: these, then each peer's link monitor. */
enum { POLL_WAKE, POLL_ROUTER, POLL_ZAP, POLL_ROUTER_EVENTS, POLL_PEERS };

typedef struct ac__node {
    ac_runtime *rt;
    pthread_mutex_t lock;      /* guards the peer list and the counters */
    bool started, stopping;
    char name[AC_NODE_NAME_MAX + 1];
    char endpoint[AC_NODE_ENDPOINT_MAX + 1];
    char public_key[AC_NODE_KEY_LEN + 1];
    char secret_key[AC_NODE_KEY_LEN + 1];
    uint32_t heartbeat_ms, timeout_ms, queue_bound;
    ac_ctx *cx;                /* the thread's context: delivers what arrives */
    void *zmq;
    void *router, *router_monitor, *zap;
    int wake;                  /* eventfd: the peer list changed, or stop */
    pthread_t thread;
    peer *peers;
    size_t npeers, cap;
    zmq_pollitem_t *items;     /* the thread's */
    size_t items_cap;
    int *pending;              /* the thread's: accepted connections not yet
                                  through their handshake (their fds) */
    size_t npending, pending_cap;
    ac_node_stats stats;
} ac__node;

/* libzmq is not built for ThreadSanitizer: the hand-off of every message
 * between a socket's thread and ZeroMQ's I/O threads goes through its own
 * lock-free queues, which TSan cannot see, so it would report each one as
 * a race — and suppressing a report costs a symbolized stack, per message.
 * So TSan ignores the calls libzmq makes, and those of libsodium (CURVE
 * decrypts into a message's buffer on the I/O thread), to the functions it
 * intercepts (malloc, memcpy, mutexes): what the two libraries do among
 * themselves is invisible to it, as their own code is. The runtime's calls
 * are still seen, and so is every race in its code. */
#if defined(__SANITIZE_THREAD__)
#define NODE_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define NODE_TSAN 1
#endif
#endif
#ifdef NODE_TSAN
const char *__tsan_default_suppressions(void);
const char *__tsan_default_suppressions(void)
{
    return "called_from_lib:libzmq.so\ncalled_from_lib:libsodium.so\n";
}
#endif

static void wake(ac__node *N);

static ac__node *node_of(ac_runtime *rt)
{
    return ac__service_state(rt, AC__SERVICE_node);
}

static void say(char *why, size_t why_len, const char *fmt, const char *a, const char *b)
{
    if (why != NULL && why_len > 0)
        snprintf(why, why_len, fmt, a, b);
}

/* ---- keys ------------------------------------------------------------------- */

/* Reads the Z85 secret key of `path` (its first line that is not a comment).
 * A file others may read is refused, as ssh refuses such a key. */
static int read_secret(const char *path, char key[AC_NODE_KEY_LEN + 1], const char **why)
{
    *why = "cannot read the secret key file";
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return AC_EINVAL;
    struct stat st;
    char buf[512];
    ssize_t n = -1;
    if (fstat(fd, &st) == 0) {
        if (st.st_mode & 077)
            *why = "the secret key file may be read by others (chmod 600 it)";
        else
            n = read(fd, buf, sizeof buf - 1);
    }
    close(fd);
    if (n < 0)
        return AC_EINVAL;
    buf[n] = '\0';
    int rc = AC_EINVAL;
    *why = "the secret key file holds no Z85 key";
    char *save = NULL;
    for (char *line = strtok_r(buf, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        line[strcspn(line, "\r")] = '\0';
        if (line[0] == '#' || line[0] == '\0')
            continue;
        const char *bad;
        if (ac__cluster_check_key(line, &bad) == 0) {
            memcpy(key, line, AC_NODE_KEY_LEN + 1);
            rc = 0;
        }
        break;
    }
    sodium_memzero(buf, sizeof buf);
    return rc;
}

int ac_node_keygen(const char *secret_file, char public_key[AC_NODE_KEY_LEN + 1])
{
    if (secret_file == NULL || public_key == NULL)
        return AC_EINVAL;
    char secret[AC_NODE_KEY_LEN + 1];
    if (zmq_curve_keypair(public_key, secret) != 0)
        return AC_EINVAL;  /* a libzmq without CURVE */
    int fd = open(secret_file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    int rc = 0;
    if (fd < 0) {
        rc = errno == EEXIST ? AC_EEXIST : AC_EINVAL;
    } else {
        char line[AC_NODE_KEY_LEN + 2];
        memcpy(line, secret, AC_NODE_KEY_LEN);
        line[AC_NODE_KEY_LEN] = '\n';
        if (write(fd, line, sizeof line - 1) != (ssize_t)(sizeof line - 1))
            rc = AC_EINVAL;
        sodium_memzero(line, sizeof line);
        if (close(fd) != 0)
            rc = AC_EINVAL;
        if (rc != 0)
            unlink(secret_file);
    }
    sodium_memzero(secret, sizeof secret);
    return rc;
}

int ac_node_public_key(const char *secret_file, char public_key[AC_NODE_KEY_LEN + 1])
{
    if (secret_file == NULL || public_key == NULL)
        return AC_EINVAL;
    char secret[AC_NODE_KEY_LEN + 1];
    const char *why;
    int rc = read_secret(secret_file, secret, &why);
    if (rc == 0 && zmq_curve_public(public_key, secret) != 0)
        rc = AC_EINVAL;
    sodium_memzero(secret, sizeof secret);
    return rc;
}

/* ---- peers ------------------------------------------------------------------- */

static bool is_up(const peer *p)
{
    return p->linked && p->node != 0;
}

/* The live peer named `name`, or NULL; under the lock. */
static peer *find_peer(ac__node *N, const char *name)
{
    for (size_t i = 0; i < N->npeers; i++)
        if (!N->peers[i].removed && strcmp(N->peers[i].id.name, name) == 0)
            return &N->peers[i];
    return NULL;
}

/* Appends a peer; under the lock. */
static int add_peer(ac__node *N, const ac__cluster_node *id)
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

/* Discards what waits for p's link (it went down, or p was removed):
 * counted in p's drops. */
static void drop_queue(peer *p)
{
    for (out_rec *r = p->q_head, *next; r != NULL; r = next) {
        next = r->next;
        free(r);
    }
    p->drops += p->q_len;
    p->q_head = p->q_tail = NULL;
    p->q_len = 0;
}

static void set_int(void *sock, int option, int value)
{
    (void)zmq_setsockopt(sock, option, &value, sizeof value);
}

/* Every socket of the node: no linger (a shutdown never waits on a dead
 * peer), and ZMTP heartbeats, which end a link that stays silent for the
 * timeout (a frozen or cut-off peer) and tell the peer to do the same. */
static void common_options(ac__node *N, void *sock)
{
    set_int(sock, ZMQ_LINGER, 0);
    set_int(sock, ZMQ_HEARTBEAT_IVL, (int)N->heartbeat_ms);
    set_int(sock, ZMQ_HEARTBEAT_TIMEOUT, (int)N->timeout_ms);
    set_int(sock, ZMQ_HEARTBEAT_TTL, (int)N->timeout_ms);
    set_int(sock, ZMQ_HANDSHAKE_IVL, HANDSHAKE_MS);
}

/* Opens a socket monitor for `sock` on a fresh inproc endpoint, returning
 * the PAIR socket its events arrive on, or NULL. */
static void *monitor(ac__node *N, void *sock, int events)
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
    set_int(pair, ZMQ_LINGER, 0);
    if (zmq_connect(pair, ep) != 0) {
        zmq_close(pair);
        return NULL;
    }
    return pair;
}

/* Our link to p: a CURVE client that knows p's public key. Failing (out of
 * memory, a bad endpoint) leaves p down; the next change retries. */
static void open_link(ac__node *N, peer *p)
{
    void *d = zmq_socket(N->zmq, ZMQ_DEALER);
    if (d == NULL)
        return;
    common_options(N, d);
    /* Immediate: nothing is queued for a link that is not up, so nothing
     * stale is delivered when it comes back. */
    set_int(d, ZMQ_IMMEDIATE, 1);
    set_int(d, ZMQ_RECONNECT_IVL, RECONNECT_MS);
    set_int(d, ZMQ_RECONNECT_IVL_MAX, RECONNECT_MAX_MS);
    zmq_setsockopt(d, ZMQ_CURVE_SERVERKEY, p->id.public_key, AC_NODE_KEY_LEN);
    zmq_setsockopt(d, ZMQ_CURVE_PUBLICKEY, N->public_key, AC_NODE_KEY_LEN);
    zmq_setsockopt(d, ZMQ_CURVE_SECRETKEY, N->secret_key, AC_NODE_KEY_LEN);
    void *m = monitor(N, d, ZMQ_EVENT_HANDSHAKE_SUCCEEDED | ZMQ_EVENT_DISCONNECTED |
                                ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                                ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                                ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL);
    if (m == NULL || zmq_connect(d, p->id.endpoint) != 0) {
        if (m != NULL)
            zmq_close(m);
        zmq_close(d);
        return;
    }
    p->dealer = d;
    p->monitor = m;
}

static void close_link(peer *p)
{
    if (p->dealer == NULL)
        return;
    zmq_socket_monitor(p->dealer, NULL, 0);
    zmq_close(p->monitor);
    zmq_close(p->dealer);
    p->dealer = p->monitor = NULL;
}

/* Sends one batch of a single record on p's link. */
static bool send_one(ac__node *N, peer *p, ac__frame_op op)
{
    uint8_t buf[AC__FRAME_HEADER_SIZE + AC__RECORD_HEADER_SIZE + 1 + AC_NODE_NAME_MAX];
    ac_wire_out out = {buf, sizeof buf, 0};
    ac__frame_header h = {1, ac_runtime_node(N->rt), p->node};
    ac__frame_put_header(&out, &h);
    if (op == AC__OP_HELLO)
        ac__frame_put_hello(&out, N->name);
    else
        ac__frame_put_empty(&out, op);
    return zmq_send(p->dealer, buf, out.len, ZMQ_DONTWAIT) == (int)out.len;
}

/* Brings the sockets in line with the peer list; in the thread, locked. A
 * removed peer is told so before its link closes: its own link to us,
 * already through the handshake, would otherwise stay (a ROUTER cannot
 * drop one connection), and its key is refused only from its next one. */
static void sync_peers(ac__node *N)
{
    size_t kept = 0;
    for (size_t i = 0; i < N->npeers; i++) {
        peer *p = &N->peers[i];
        if (p->removed) {
            if (p->linked) {
                set_int(p->dealer, ZMQ_LINGER, RECONNECT_MS);  /* let the BYE out */
                (void)send_one(N, p, AC__OP_BYE);
            }
            close_link(p);
            drop_queue(p);
            continue;
        }
        if (p->dealer == NULL)
            open_link(N, p);
        N->peers[kept++] = *p;
    }
    N->npeers = kept;
}

/* ---- the thread's work ----------------------------------------------------------- */

/* Sends our greeting on p's link: its incarnation as we know it, our name.
 * EAGAIN: the pipe is not attached yet; the loop retries. */
static void greet(ac__node *N, peer *p)
{
    if (send_one(N, p, AC__OP_HELLO))
        p->greet = false;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* One event of p's socket monitor. A handshake the peer refused (it does
 * not know our key yet) is not retried by ZeroMQ: the link is opened anew
 * a little later, as a reconnect would be. */
static void link_event(peer *p)
{
    if (p->monitor == NULL)
        return;  /* closed since the poll (a BYE) */
    uint8_t ev[6];
    int n = zmq_recv(p->monitor, ev, sizeof ev, ZMQ_DONTWAIT);
    int more = 0;
    size_t more_len = sizeof more;
    zmq_getsockopt(p->monitor, ZMQ_RCVMORE, &more, &more_len);
    if (more) {
        char endpoint[AC_NODE_ENDPOINT_MAX + 1];
        (void)zmq_recv(p->monitor, endpoint, sizeof endpoint, ZMQ_DONTWAIT);
    }
    if (n < 2)
        return;
    uint16_t event = (uint16_t)(ev[0] | ev[1] << 8);
    bool was_up = is_up(p);
    if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED) {
        p->linked = true;
        p->greet = true;
        p->connects++;
    } else if (event == ZMQ_EVENT_DISCONNECTED) {
        p->linked = false;
        p->greet = false;
        drop_queue(p);  /* what it had not taken is lost with the link */
    } else if (event & (ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                        ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)) {
        p->reopen_at = now_ms() + RECONNECT_MAX_MS;
    }
    if (was_up && !is_up(p))
        p->losses++;
}

/* One event of the ROUTER's monitor. Connections whose handshake fails
 * for their key are counted by the ZAP handler; the others that fail — a
 * peer that does not speak ZMTP with CURVE — often end without a handshake
 * event at all, so the accepted connections still waiting for theirs are
 * tracked by fd, and one that disconnects while waiting is counted. (The
 * handshake events carry no fd: each settles the oldest waiting one,
 * which can misattribute between simultaneous handshakes but never
 * miscounts them.) */
static void router_event(ac__node *N)
{
    uint8_t ev[6];
    int n = zmq_recv(N->router_monitor, ev, sizeof ev, ZMQ_DONTWAIT);
    int more = 0;
    size_t more_len = sizeof more;
    zmq_getsockopt(N->router_monitor, ZMQ_RCVMORE, &more, &more_len);
    if (more) {
        char endpoint[AC_NODE_ENDPOINT_MAX + 1];
        (void)zmq_recv(N->router_monitor, endpoint, sizeof endpoint, ZMQ_DONTWAIT);
    }
    if (n < 6)
        return;
    uint16_t event = (uint16_t)(ev[0] | ev[1] << 8);
    int fd = (int)((uint32_t)ev[2] | (uint32_t)ev[3] << 8 | (uint32_t)ev[4] << 16 |
                   (uint32_t)ev[5] << 24);
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
static void serve_zap(ac__node *N)
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
            bool was_up = is_up(p);
            close_link(p);
            drop_queue(p);
            p->linked = p->greet = false;
            p->reopen_at = now_ms() + RECONNECT_MAX_MS;
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

/* Sends what waits for p's link, in batches of up to BATCH_BYTES (a larger
 * record alone), each built straight into the message ZeroMQ takes. Stops
 * at the first batch the link cannot take now (the loop retries). */
static void flush(ac__node *N, peer *p)
{
    while (p->q_head != NULL) {
        size_t size = AC__FRAME_HEADER_SIZE, count = 0;
        for (out_rec *r = p->q_head; r != NULL && count < UINT16_MAX; r = r->next) {
            if (count > 0 && size + r->size > BATCH_BYTES)
                break;
            size += r->size;
            count++;
        }
        zmq_msg_t msg;
        if (zmq_msg_init_size(&msg, size) != 0)
            return;
        uint8_t *at = zmq_msg_data(&msg);
        ac_wire_out out = {at, AC__FRAME_HEADER_SIZE, 0};
        ac__frame_header h = {(uint16_t)count, ac_runtime_node(N->rt), p->node};
        ac__frame_put_header(&out, &h);
        at += AC__FRAME_HEADER_SIZE;
        out_rec *r = p->q_head;
        for (size_t i = 0; i < count; i++, r = r->next) {
            memcpy(at, r->bytes, r->size);
            at += r->size;
        }
        if (zmq_msg_send(&msg, p->dealer, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&msg);
            return;
        }
        for (size_t i = 0; i < count; i++) {
            out_rec *sent = p->q_head;
            p->q_head = sent->next;
            free(sent);
        }
        if (p->q_head == NULL)
            p->q_tail = NULL;
        p->q_len -= count;
        p->sent += count;
        p->bytes_sent += size;
        p->batches++;
    }
}

/* The up peer whose incarnation `node` is; under the lock. */
static peer *peer_at(ac__node *N, uint64_t node)
{
    for (size_t i = 0; i < N->npeers; i++)
        if (!N->peers[i].removed && N->peers[i].node == node && is_up(&N->peers[i]))
            return &N->peers[i];
    return NULL;
}

/* The forward hook: a send to an actor of another node, on the sender's
 * thread. The message is encoded here, with the target's type, and queued
 * for the node's thread. */
static bool forward(ac_ctx *cx, void *state, const ac_addr *to, const ac_actor_type *type,
                    ac__env *e, int *rc)
{
    ac__node *N = state;
    uint64_t node = ac_addr_node(to);
    pthread_mutex_lock(&N->lock);
    bool known = N->started && !N->stopping && peer_at(N, node) != NULL;
    pthread_mutex_unlock(&N->lock);
    if (!known)
        return false;  /* a node we have no link to: a dead letter */
    if (type == NULL || type->encode == NULL) {
        ac_envelope_free(cx, ac__env_pub(e));
        *rc = AC_EINVAL;  /* without its type a message cannot be encoded */
        return true;
    }
    const ac_envelope *pub = ac__env_pub(e);
    long need = type->encode(pub, NULL, 0);
    out_rec *r = need >= 0 ? malloc(sizeof *r + AC__MSG_HEAD_SIZE + (size_t)need) : NULL;
    if (r == NULL) {
        ac_envelope_free(cx, ac__env_pub(e));
        *rc = need < 0 ? (int)need : AC_ENOMEM;
        return true;
    }
    ac_wire_out head = {r->bytes, AC__MSG_HEAD_SIZE, 0};
    ac__frame_put_msg_head(&head, to, pub->tag, ac__frame_type_id(type), (size_t)need);
    (void)type->encode(pub, r->bytes + AC__MSG_HEAD_SIZE, (size_t)need);
    r->size = AC__MSG_HEAD_SIZE + (size_t)need;
    r->next = NULL;

    pthread_mutex_lock(&N->lock);
    peer *p = peer_at(N, node);
    *rc = p == NULL ? AC_ENOTFOUND : p->q_len >= N->queue_bound ? AC_EFULL : 0;
    if (*rc == 0) {
        if (p->q_tail)
            p->q_tail->next = r;
        else
            p->q_head = r;
        p->q_tail = r;
        if (p->q_len++ == 0)
            wake(N);
        r = NULL;
    } else if (p != NULL) {
        p->refused++;
    }
    pthread_mutex_unlock(&N->lock);
    free(r);
    if (*rc != 0)
        ac__dead_letter(cx, to, e, *rc);  /* the link went down, or is full */
    ac_envelope_free(cx, ac__env_pub(e));
    return true;
}

/* Takes every batch waiting on the ROUTER. */
static void receive(ac__node *N)
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
        peer *p = user ? find_peer(N, user) : NULL;
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

/* The poll set has room for every peer, or for as many as it could grow
 * to (the others wait for a later change). */
static size_t poll_set(ac__node *N)
{
    size_t n = POLL_PEERS + N->npeers;
    if (n > N->items_cap) {
        zmq_pollitem_t *bigger = realloc(N->items, n * sizeof *bigger);
        if (bigger == NULL)
            return N->items_cap;
        N->items = bigger;
        N->items_cap = n;
    }
    return n;
}

static void *node_main(void *arg)
{
    ac__node *N = arg;
    N->cx = ac_runtime_ctx(N->rt);  /* this thread's; NULL: out of memory */
    pthread_mutex_lock(&N->lock);
    if (N->cx == NULL)
        N->stopping = true;
    while (!N->stopping) {
        sync_peers(N);
        size_t n = poll_set(N);
        zmq_pollitem_t *items = N->items;
        bool retry = false;
        items[POLL_WAKE] = (zmq_pollitem_t){NULL, N->wake, ZMQ_POLLIN, 0};
        items[POLL_ROUTER] = (zmq_pollitem_t){N->router, 0, ZMQ_POLLIN, 0};
        items[POLL_ZAP] = (zmq_pollitem_t){N->zap, 0, ZMQ_POLLIN, 0};
        items[POLL_ROUTER_EVENTS] = (zmq_pollitem_t){N->router_monitor, 0, ZMQ_POLLIN, 0};
        uint64_t now = now_ms(), due = UINT64_MAX;
        for (size_t i = POLL_PEERS; i < n; i++) {
            peer *p = &N->peers[i - POLL_PEERS];
            items[i] = (zmq_pollitem_t){p->monitor, -1, p->monitor ? ZMQ_POLLIN : 0, 0};
            retry |= p->greet || (p->q_head != NULL && p->linked);
            if (p->reopen_at != 0 && p->reopen_at < due)
                due = p->reopen_at;
        }
        long timeout = retry ? RETRY_MS : -1;
        if (due != UINT64_MAX) {
            long until = due > now ? (long)(due - now) : 0;
            timeout = timeout < 0 || until < timeout ? until : timeout;
        }
        /* Unlocked while waiting: others may append peers (the indices
         * polled stay theirs) or mark them removed, never move a socket. */
        pthread_mutex_unlock(&N->lock);
        int rc = zmq_poll(items, (int)n, timeout);
        pthread_mutex_lock(&N->lock);
        if (rc < 0 && errno != EINTR)
            break;
        if (items[POLL_WAKE].revents) {
            uint64_t v;
            (void)!read(N->wake, &v, sizeof v);
        }
        if (items[POLL_ZAP].revents)
            serve_zap(N);
        if (items[POLL_ROUTER_EVENTS].revents)
            router_event(N);
        if (items[POLL_ROUTER].revents)
            receive(N);
        for (size_t i = POLL_PEERS; i < n; i++) {
            peer *p = &N->peers[i - POLL_PEERS];
            if (items[i].revents)
                link_event(p);
            if (p->reopen_at != 0 && p->reopen_at <= now_ms()) {
                p->reopen_at = 0;
                close_link(p);
                open_link(N, p);
            }
            if (p->greet && p->dealer)
                greet(N, p);
            if (p->q_head != NULL && is_up(p))
                flush(N, p);
        }
    }
    for (size_t i = 0; i < N->npeers; i++) {
        close_link(&N->peers[i]);
        drop_queue(&N->peers[i]);
    }
    pthread_mutex_unlock(&N->lock);
    return NULL;
}

/* ---- starting and stopping ------------------------------------------------------- */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    for (size_t got; buf != NULL && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap && cap < (16u << 20)) {
            char *bigger = realloc(buf, cap * 2);
            if (bigger == NULL) {
                free(buf);
                buf = NULL;
            } else {
                buf = bigger;
                cap *= 2;
            }
        } else if (n == cap) {
            break;  /* larger than any cluster file should be */
        }
    }
    fclose(f);
    *len = n;
    return buf;
}

/* Reads the cluster file and this node's key, checking that they agree. */
static int configure(ac__node *N, const ac_node_config *cfg, char *why, size_t why_len)
{
    const char *bad;
    if (cfg->name == NULL || ac__cluster_check_name(cfg->name, &bad) != 0) {
        say(why, why_len, "%s%s", "node name: ", cfg->name ? bad : "missing");
        return AC_EINVAL;
    }
    if (cfg->cluster_file == NULL || cfg->secret_key_file == NULL) {
        say(why, why_len, "%s%s", "a node needs a cluster file and a secret key file", "");
        return AC_EINVAL;
    }
    snprintf(N->name, sizeof N->name, "%s", cfg->name);
    N->heartbeat_ms = cfg->heartbeat_ms ? cfg->heartbeat_ms : DEFAULT_HEARTBEAT_MS;
    N->timeout_ms = cfg->timeout_ms ? cfg->timeout_ms : DEFAULT_TIMEOUT_MS;
    N->queue_bound = cfg->queue_bound ? cfg->queue_bound : DEFAULT_QUEUE;
    if (read_secret(cfg->secret_key_file, N->secret_key, &bad) != 0) {
        say(why, why_len, "%s: %s", cfg->secret_key_file, bad);
        return AC_EINVAL;
    }
    if (zmq_curve_public(N->public_key, N->secret_key) != 0) {
        say(why, why_len, "%s: %s", cfg->secret_key_file, "not a CURVE secret key");
        return AC_EINVAL;
    }
    size_t len = 0;
    char *text = slurp(cfg->cluster_file, &len);
    if (text == NULL) {
        say(why, why_len, "%s: %s", cfg->cluster_file, strerror(errno ? errno : ENOMEM));
        return AC_EINVAL;
    }
    ac__cluster_node *nodes;
    size_t count;
    char detail[160];
    int rc = ac__cluster_parse(text, len, &nodes, &count, detail, sizeof detail);
    free(text);
    if (rc != 0) {
        say(why, why_len, "%s: %s", cfg->cluster_file, rc == AC_ENOMEM ? "out of memory" : detail);
        return rc;
    }
    const ac__cluster_node *self = NULL;
    for (size_t i = 0; i < count && rc == 0; i++) {
        if (strcmp(nodes[i].name, N->name) == 0)
            self = &nodes[i];
        else
            rc = add_peer(N, &nodes[i]);
    }
    if (rc == 0 && self == NULL) {
        say(why, why_len, "%s does not list node '%s'", cfg->cluster_file, N->name);
        rc = AC_EINVAL;
    } else if (rc == 0 && strcmp(self->public_key, N->public_key) != 0) {
        say(why, why_len, "%s is not the secret key of '%s' in the cluster file",
            cfg->secret_key_file, N->name);
        rc = AC_EINVAL;
    } else if (rc == 0) {
        memcpy(N->endpoint, self->endpoint, sizeof N->endpoint);
    }
    free(nodes);
    return rc;
}

/* The ZAP handler and the ROUTER, bound before the thread starts, so a
 * bind error is the caller's. */
static int open_sockets(ac__node *N, char *why, size_t why_len)
{
    if ((N->zmq = zmq_ctx_new()) == NULL) {
        say(why, why_len, "%s%s", "cannot make a ZeroMQ context", "");
        return AC_ENOMEM;
    }
    N->zap = zmq_socket(N->zmq, ZMQ_REP);
    N->router = zmq_socket(N->zmq, ZMQ_ROUTER);
    if (N->zap == NULL || N->router == NULL) {
        say(why, why_len, "%s%s", "cannot make the node's sockets", "");
        return AC_ENOMEM;
    }
    set_int(N->zap, ZMQ_LINGER, 0);
    if (zmq_bind(N->zap, "inproc://zeromq.zap.01") != 0) {
        say(why, why_len, "%s%s", "cannot install the ZAP handler", "");
        return AC_EINVAL;
    }
    common_options(N, N->router);
    set_int(N->router, ZMQ_CURVE_SERVER, 1);
    zmq_setsockopt(N->router, ZMQ_CURVE_SECRETKEY, N->secret_key, AC_NODE_KEY_LEN);
    zmq_setsockopt(N->router, ZMQ_ZAP_DOMAIN, "actorc", 6);
    int64_t max = MAX_BATCH;
    zmq_setsockopt(N->router, ZMQ_MAXMSGSIZE, &max, sizeof max);
    N->router_monitor = monitor(N, N->router,
                                ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED |
                                ZMQ_EVENT_HANDSHAKE_SUCCEEDED |
                                ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                                ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                                ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL);
    if (N->router_monitor == NULL) {
        say(why, why_len, "%s%s", "cannot monitor the node's socket", "");
        return AC_ENOMEM;
    }
    if (zmq_bind(N->router, N->endpoint) != 0) {
        say(why, why_len, "cannot listen on %s: %s", N->endpoint, zmq_strerror(zmq_errno()));
        return AC_EINVAL;
    }
    N->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (N->wake < 0) {
        say(why, why_len, "%s%s", "cannot make the node's eventfd", "");
        return AC_ENOMEM;
    }
    return 0;
}

/* Closes what open_sockets made (the thread is not running). */
static void close_sockets(ac__node *N)
{
    if (N->router_monitor) {
        zmq_socket_monitor(N->router, NULL, 0);
        zmq_close(N->router_monitor);
    }
    if (N->router)
        zmq_close(N->router);
    if (N->zap)
        zmq_close(N->zap);
    if (N->zmq)
        zmq_ctx_term(N->zmq);
    if (N->wake >= 0)
        close(N->wake);
    N->router_monitor = N->router = N->zap = N->zmq = NULL;
    N->wake = -1;
}

static void forget_peers(ac__node *N)
{
    for (size_t i = 0; i < N->npeers; i++)
        drop_queue(&N->peers[i]);
    free(N->peers);
    N->peers = NULL;
    N->npeers = N->cap = 0;
}

int ac_node_start(ac_runtime *rt, const ac_node_config *cfg, char *why, size_t why_len)
{
    if (why != NULL && why_len > 0)
        why[0] = '\0';
    if (rt == NULL || cfg == NULL)
        return AC_EINVAL;
    ac__node *N = node_of(rt);
    pthread_mutex_lock(&N->lock);
    int rc = N->started || N->stopping ? AC_ESTATE : 0;
    if (rc != 0)
        say(why, why_len, "%s%s", N->started ? "the runtime is a node already" : "the runtime is shutting down", "");
    if (rc == 0)
        rc = configure(N, cfg, why, why_len);
    if (rc == 0)
        rc = open_sockets(N, why, why_len);
    if (rc == 0 && poll_set(N) < POLL_PEERS + N->npeers) {
        say(why, why_len, "%s%s", "out of memory", "");
        rc = AC_ENOMEM;
    }
    if (rc == 0 && pthread_create(&N->thread, NULL, node_main, N) != 0) {
        say(why, why_len, "%s%s", "cannot start the node's thread", "");
        rc = AC_ENOMEM;
    }
    if (rc == 0) {
        N->started = true;
    } else if (rc != AC_ESTATE) {
        close_sockets(N);
        forget_peers(N);
        sodium_memzero(N->secret_key, sizeof N->secret_key);
    }
    pthread_mutex_unlock(&N->lock);
    return rc;
}

/* Wakes the thread to look at the peer list again. */
static void wake(ac__node *N)
{
    uint64_t one = 1;
    (void)!write(N->wake, &one, sizeof one);
}

int ac_node_add_peer(ac_runtime *rt, const char *name, const char *endpoint,
                     const char *public_key)
{
    if (rt == NULL || name == NULL || endpoint == NULL || public_key == NULL)
        return AC_EINVAL;
    ac__cluster_node id;
    const char *bad;
    if (ac__cluster_check_name(name, &bad) != 0 || ac__cluster_check_endpoint(endpoint, &bad) != 0 ||
        ac__cluster_check_key(public_key, &bad) != 0)
        return AC_EINVAL;
    snprintf(id.name, sizeof id.name, "%s", name);
    snprintf(id.endpoint, sizeof id.endpoint, "%s", endpoint);
    snprintf(id.public_key, sizeof id.public_key, "%s", public_key);
    ac__node *N = node_of(rt);
    pthread_mutex_lock(&N->lock);
    int rc = N->started && !N->stopping ? 0 : AC_ESTATE;
    if (rc == 0 && (strcmp(name, N->name) == 0 || strcmp(endpoint, N->endpoint) == 0 ||
                    strcmp(public_key, N->public_key) == 0))
        rc = AC_EEXIST;
    for (size_t i = 0; i < N->npeers && rc == 0; i++) {
        const peer *p = &N->peers[i];
        if (!p->removed && (strcmp(p->id.name, name) == 0 || strcmp(p->id.endpoint, endpoint) == 0 ||
                            strcmp(p->id.public_key, public_key) == 0))
            rc = AC_EEXIST;
    }
    if (rc == 0)
        rc = add_peer(N, &id);
    if (rc == 0)
        wake(N);
    pthread_mutex_unlock(&N->lock);
    return rc;
}

int ac_node_remove_peer(ac_runtime *rt, const char *name)
{
    if (rt == NULL || name == NULL)
        return AC_EINVAL;
    ac__node *N = node_of(rt);
    pthread_mutex_lock(&N->lock);
    int rc = N->started && !N->stopping ? 0 : AC_ESTATE;
    peer *p = rc == 0 ? find_peer(N, name) : NULL;
    if (rc == 0 && p == NULL)
        rc = AC_ENOTFOUND;
    if (p != NULL) {
        p->removed = true;  /* its key stops being accepted now */
        wake(N);
    }
    pthread_mutex_unlock(&N->lock);
    return rc;
}

size_t ac_node_peers(ac_runtime *rt, ac_peer_info *out, size_t max)
{
    if (rt == NULL || (out == NULL && max != 0))
        return 0;
    ac__node *N = node_of(rt);
    size_t n = 0;
    pthread_mutex_lock(&N->lock);
    for (size_t i = 0; i < N->npeers; i++) {
        const peer *p = &N->peers[i];
        if (p->removed)
            continue;
        if (n < max) {
            ac_peer_info *o = &out[n];
            memset(o, 0, sizeof *o);
            memcpy(o->name, p->id.name, sizeof o->name);
            memcpy(o->endpoint, p->id.endpoint, sizeof o->endpoint);
            o->up = is_up(p);
            o->node = p->node;
            o->incarnations = p->incarnations;
            o->connects = p->connects;
            o->losses = p->losses;
            o->sent = p->sent;
            o->received = p->received;
            o->bytes_sent = p->bytes_sent;
            o->bytes_received = p->bytes_received;
            o->batches = p->batches;
            o->queued = p->q_len;
            o->drops = p->drops;
            o->refused = p->refused;
        }
        n++;
    }
    pthread_mutex_unlock(&N->lock);
    return n;
}

int ac_runtime_node_stats(ac_runtime *rt, ac_node_stats *out)
{
    if (rt == NULL || out == NULL)
        return AC_EINVAL;
    ac__node *N = node_of(rt);
    pthread_mutex_lock(&N->lock);
    int rc = N->started ? 0 : AC_ESTATE;
    *out = N->stats;
    pthread_mutex_unlock(&N->lock);
    return rc;
}

/* ---- the service row ------------------------------------------------------------- */

static int init(ac_runtime *rt, void **state)
{
    ac__node *N = calloc(1, sizeof *N);
    if (N == NULL)
        return AC_ENOMEM;
    N->rt = rt;
    N->wake = -1;
    pthread_mutex_init(&N->lock, NULL);
    *state = N;
    return 0;
}

/* The node leaves the cluster first at shutdown: its peers see it go as a
 * closed link, and nothing arrives from them any more. */
static void leave(ac_ctx *cx, void *state)
{
    (void)cx;
    ac__node *N = state;
    pthread_mutex_lock(&N->lock);
    bool running = N->started && !N->stopping;
    N->stopping = true;
    if (running)
        wake(N);
    pthread_mutex_unlock(&N->lock);
    if (running) {
        pthread_join(N->thread, NULL);
        close_sockets(N);
    }
}

static void fini(void *state)
{
    ac__node *N = state;
    forget_peers(N);
    free(N->items);
    free(N->pending);
    sodium_memzero(N->secret_key, sizeof N->secret_key);
    pthread_mutex_destroy(&N->lock);
    free(N);
}

const ac__service ac__node_service = {
    .name = "node",
    .init = init,
    .shutdown = leave,
    .fini = fini,
    .forward = forward,
};
