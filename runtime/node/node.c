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
 * A peer is up while our link to it is connected and it has greeted us
 * since that link last went down (it may have restarted meanwhile: until
 * it says, sends to it are dead letters here). A greeting to an unknown
 * incarnation (0) asks for one back, so a peer whose own link to us never
 * dropped still greets again.
 *
 * This file holds the thread's loop, the transport's hooks (core/transport.h:
 * sends to other nodes and the services' control records), starting and
 * stopping, and the API; link.c the links,
 * gate.c who gets in, inbound.c what arrives, keys.c the
 * keys, node.h what they share.
 */
#include "node.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

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
/* Default visibility whatever the build's: TSan's runtime looks the hook
 * up among the program's dynamic symbols. */
__attribute__((visibility("default"))) const char *__tsan_default_suppressions(void);
__attribute__((visibility("default"))) const char *__tsan_default_suppressions(void)
{
    return "called_from_lib:libzmq.so\ncalled_from_lib:libsodium.so\n";
}
#endif

static void wake(ac__node *N);

static ac__node *node_of(ac_runtime *rt)
{
    return ac__service_state(rt, AC__SERVICE_node);
}

/* Writes the reason a call failed into the caller's why[0..why_len). */
__attribute__((format(printf, 3, 4)))
static void say(char *why, size_t why_len, const char *fmt, ...)
{
    if (why == NULL || why_len == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_len, fmt, ap);
    va_end(ap);
}

/* The record of e for `to`, encoded with `type`: NULL with *rc set when
 * there is no codec (AC_EINVAL) or no memory. */
static out_rec *encode_record(const ac_addr *to, const ac_actor_type *type, ac__env *e, int *rc)
{
    if (type == NULL || type->encode == NULL) {
        *rc = AC_EINVAL;  /* without its type a message cannot be encoded */
        return NULL;
    }
    const ac_envelope *pub = ac__env_pub(e);
    long need = type->encode(pub, NULL, 0);
    out_rec *r = need >= 0 ? malloc(sizeof *r + AC__MSG_HEAD_SIZE + (size_t)need) : NULL;
    if (r == NULL) {
        *rc = need < 0 ? (int)need : AC_ENOMEM;
        return NULL;
    }
    ac_wire_out head = {r->bytes, AC__MSG_HEAD_SIZE, 0};
    ac__frame_put_msg_head(&head, to, pub->tag, ac__type_id(type), (size_t)need);
    (void)type->encode(pub, r->bytes + AC__MSG_HEAD_SIZE, (size_t)need);
    r->size = AC__MSG_HEAD_SIZE + (size_t)need;
    r->counted = true;
    r->next = NULL;
    return r;
}

/* Queues r for p's link, locked: sent at once, from the calling thread,
 * when nothing waits before it; else behind what waits (the thread sends
 * those in batches), waking the thread when the queue was empty. The
 * sender may use the socket because every use of a DEALER, the node
 * thread's too, is under the lock, which is the full barrier ZeroMQ asks
 * of a socket that changes threads; this spares a message the hand-off to
 * the node's thread when the link keeps up (runtime/README.md, "Nodes"). */
static void enqueue(ac__node *N, peer *p, out_rec *r)
{
    /* Once per turn of the node thread: a stream of sends after the first
     * waits for it, and leaves in batches. */
    if (p->q_head == NULL && !p->sent_now && ac__node_send_now(N, p, r)) {
        p->sent_now = true;
        free(r);
        return;
    }
    if (p->q_tail)
        p->q_tail->next = r;
    else
        p->q_head = r;
    p->q_tail = r;
    p->q_bytes += r->size;
    if (p->q_len++ == 0)
        wake(N);
}

/* Whether r finds no room in p's queue: it holds queue_bound records, or r
 * would take it past queue_bytes (a record larger than that is taken
 * alone, when nothing waits, so that every message a send can make can
 * leave). */
static bool queue_full(const ac__node *N, const peer *p, const out_rec *r)
{
    return p->q_len >= N->queue_bound ||
           (p->q_len > 0 && r != NULL && p->q_bytes + r->size > N->queue_bytes);
}

/* Queues r (taken in every case; NULL: only asks whether the node is up)
 * for node `node` in one critical section: AC_ENOTFOUND when it is not up,
 * AC_EFULL (counted in the peer's `refused`) when `bounded` and its queue
 * has no room for it, else 0. */
static int submit(ac__node *N, uint64_t node, out_rec *r, bool bounded)
{
    pthread_mutex_lock(&N->lock);
    peer *p = N->started && !N->stopping ? ac__node_peer_at(N, node) : NULL;
    int rc = p == NULL ? AC_ENOTFOUND : bounded && queue_full(N, p, r) ? AC_EFULL : 0;
    if (rc == 0 && r != NULL)
        enqueue(N, p, r);
    else if (rc == AC_EFULL)
        p->refused++;
    pthread_mutex_unlock(&N->lock);
    if (rc != 0)
        free(r);
    return rc;
}

/* The forward hook: a send to an actor of another node, on the sender's
 * thread. The message is encoded here, outside the lock; a send to a node
 * that is not up (so only a dead letter) pays for an encoding it did not
 * need. */
static bool forward(ac_ctx *cx, void *state, const ac_addr *to, const ac_actor_type *type,
                    ac__env *e, int *rc)
{
    out_rec *r = encode_record(to, type, e, rc);
    int queued = submit(state, ac_addr_node(to), r, r != NULL);
    if (queued == AC_ENOTFOUND)
        return false;  /* a node we have no link to: a dead letter */
    if (r != NULL)
        *rc = queued;  /* else the encoding's error */
    if (queued == AC_EFULL)
        ac__dead_letter(cx, to, e, AC_EFULL);  /* counted as a full mailbox is */
    ac_envelope_free(cx, ac__env_pub(e));
    return true;
}

/* The transmit hook: a service's control record, queued behind the
 * messages already waiting for that node, past the queue's bound unless
 * AC__TRANSMIT_BOUNDED (runtime control is never refused while the link
 * is up). */
static int transmit(ac_ctx *cx, void *state, uint64_t node, uint8_t op, const uint8_t *body,
                    size_t len, unsigned how)
{
    (void)cx;
    if (len > MAX_BATCH - AC__FRAME_HEADER_SIZE - AC__RECORD_HEADER_SIZE)
        return AC_EINVAL;
    out_rec *r = malloc(sizeof *r + AC__RECORD_HEADER_SIZE + len);
    if (r == NULL)
        return AC_ENOMEM;
    ac_wire_out head = {r->bytes, AC__RECORD_HEADER_SIZE, 0};
    ac__frame_put_record_head(&head, op, len);
    memcpy(r->bytes + AC__RECORD_HEADER_SIZE, body, len);
    r->size = AC__RECORD_HEADER_SIZE + len;
    r->counted = how & AC__TRANSMIT_COUNTED;
    r->next = NULL;
    return submit(state, node, r, how & AC__TRANSMIT_BOUNDED);
}

static size_t nodes_up(void *state, uint64_t *out, size_t max)
{
    ac__node *N = state;
    size_t n = 0;
    pthread_mutex_lock(&N->lock);
    for (size_t i = 0; i < N->npeers; i++) {
        const peer *p = &N->peers[i];
        if (p->removed || !ac__node_is_up(p))
            continue;
        if (n < max)
            out[n] = p->node;
        n++;
    }
    pthread_mutex_unlock(&N->lock);
    return n;
}

static uint64_t node_named(void *state, const char *name)
{
    ac__node *N = state;
    pthread_mutex_lock(&N->lock);
    peer *p = N->started ? ac__node_find_peer(N, name) : NULL;
    uint64_t node = p != NULL && ac__node_is_up(p) ? p->node : 0;
    pthread_mutex_unlock(&N->lock);
    return node;
}

void ac__node_tell(ac__node *N)
{
    while (N->nevents > 0) {
        /* Taken off the list before the lock drops: a service's send may
         * not reach this list, but the thread's next step may. */
        node_event ev = N->events[0];
        memmove(N->events, N->events + 1, --N->nevents * sizeof *N->events);
        pthread_mutex_unlock(&N->lock);
        if (ev.up)
            ac__remote_node_up(N->cx, ev.node);
        else
            ac__remote_node_lost(N->cx, ev.node);
        pthread_mutex_lock(&N->lock);
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
        ac__node_sync_peers(N);
        size_t n = poll_set(N);
        zmq_pollitem_t *items = N->items;
        bool retry = false;
        items[POLL_WAKE] = (zmq_pollitem_t){NULL, N->wake, ZMQ_POLLIN, 0};
        items[POLL_ROUTER] = (zmq_pollitem_t){N->router, 0, ZMQ_POLLIN, 0};
        items[POLL_ZAP] = (zmq_pollitem_t){N->zap, 0, ZMQ_POLLIN, 0};
        items[POLL_ROUTER_EVENTS] = (zmq_pollitem_t){N->router_monitor, 0, ZMQ_POLLIN, 0};
        uint64_t now = ac__node_now_ms(), due = UINT64_MAX;
        for (size_t i = POLL_PEERS; i < n; i++) {
            peer *p = &N->peers[i - POLL_PEERS];
            items[i] = (zmq_pollitem_t){p->monitor, -1, p->monitor ? ZMQ_POLLIN : 0, 0};
            retry |= p->greet || (p->q_head != NULL && p->linked && ac__node_window_open(p));
            if (p->reopen_at != 0 && p->reopen_at < due)
                due = p->reopen_at;
            uint64_t ack = ac__node_ack(N, p, now);
            if (ack < due)
                due = ack;
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
            ac__node_serve_zap(N);
        if (items[POLL_ROUTER_EVENTS].revents)
            ac__node_router_event(N);
        if (items[POLL_ROUTER].revents)
            ac__node_receive(N);
        for (size_t i = POLL_PEERS; i < n; i++) {
            peer *p = &N->peers[i - POLL_PEERS];
            if (items[i].revents)
                ac__node_link_event(p);
            if (p->reopen_at != 0 && p->reopen_at <= ac__node_now_ms()) {
                p->reopen_at = 0;
                ac__node_close_link(p);
                if (ac__node_open_link(N, p) != 0)
                    p->reopen_at = ac__node_now_ms() + RECONNECT_MAX_MS;
            }
            if (p->greet && p->dealer)
                ac__node_greet(N, p);
            if (p->q_head != NULL && !p->greet && ac__node_is_up(p))
                ac__node_flush(N, p);  /* our greeting first on a new link */
            p->sent_now = false;
        }
        ac__node_reconcile(N);
        ac__node_tell(N);
    }
    for (size_t i = 0; i < N->npeers; i++) {
        ac__node_close_link(&N->peers[i]);
        ac__node_drop_queue(&N->peers[i]);
    }
    pthread_mutex_unlock(&N->lock);
    return NULL;
}

/* Reads the cluster file and this node's key, checking that they agree. */
static int configure(ac__node *N, const ac_node_config *cfg, char *why, size_t why_len)
{
    const char *bad;
    if (cfg->name == NULL || ac__cluster_check_name(cfg->name, &bad) != 0) {
        say(why, why_len, "node name: %s", cfg->name ? bad : "missing");
        return AC_EINVAL;
    }
    if (cfg->cluster_file == NULL || cfg->secret_key_file == NULL) {
        say(why, why_len, "a node needs a cluster file and a secret key file");
        return AC_EINVAL;
    }
    snprintf(N->name, sizeof N->name, "%s", cfg->name);
    N->heartbeat_ms = cfg->heartbeat_ms ? cfg->heartbeat_ms : DEFAULT_HEARTBEAT_MS;
    N->timeout_ms = cfg->timeout_ms ? cfg->timeout_ms : DEFAULT_TIMEOUT_MS;
    N->queue_bound = cfg->queue_bound ? cfg->queue_bound : DEFAULT_QUEUE;
    N->queue_bytes = cfg->queue_bytes ? cfg->queue_bytes : DEFAULT_QUEUE_BYTES;
    N->peer_table_max = cfg->peer_table_max ? cfg->peer_table_max : DEFAULT_PEER_TABLE;
    if (ac__node_read_secret(cfg->secret_key_file, N->secret_key, &bad) != 0) {
        say(why, why_len, "%s: %s", cfg->secret_key_file, bad);
        return AC_EINVAL;
    }
    if (zmq_curve_public(N->public_key, N->secret_key) != 0) {
        say(why, why_len, "%s: %s", cfg->secret_key_file, "not a CURVE secret key");
        return AC_EINVAL;
    }
    size_t len = 0;
    char *text;
    int read_rc = ac__node_read_cluster(cfg->cluster_file, &text, &len, &bad);
    if (read_rc != 0) {
        say(why, why_len, "%s: %s", cfg->cluster_file, bad);
        return read_rc;
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
            rc = ac__node_add_peer(N, &nodes[i]);
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

/* The descriptors this process has open now (0 when it cannot tell). */
static size_t fds_open(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return 0;
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += e->d_name[0] != '.';
    closedir(d);
    return n > 0 ? n - 1 : 0;  /* not the one reading them */
}

/* Whether the process may open `more` descriptors beside those it has,
 * raising its soft limit (RLIMIT_NOFILE) as far as the hard one when it
 * must; *limit: the limit that holds. A link that finds none left would
 * otherwise fail without a word: libzmq retries the connection for ever. */
static bool fds_room(size_t more, rlim_t *limit)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
        *limit = RLIM_INFINITY;
        return true;  /* nothing to go by: opening the sockets tells */
    }
    rlim_t need = (rlim_t)(fds_open() + more);
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            (void)getrlimit(RLIMIT_NOFILE, &rl);
    }
    *limit = rl.rlim_cur;
    return rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need;
}

/* ZeroMQ's sockets in a context are capped at ZMQ_MAX_SOCKETS, 1,023 by
 * default, and a node takes three a peer: past ~340 peers the others
 * would never be linked. The cap goes as far as descriptors may (the hard
 * limit, within ZeroMQ's own ZMQ_SOCKET_LIMIT); it must be set before the
 * first socket. */
static void raise_socket_cap(void *zmq)
{
    struct rlimit rl;
    int most = zmq_ctx_get(zmq, ZMQ_SOCKET_LIMIT), cap = zmq_ctx_get(zmq, ZMQ_MAX_SOCKETS);
    if (most <= 0 || getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return;
    int want = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > (rlim_t)most ? most : (int)rl.rlim_max;
    if (want > cap)
        (void)zmq_ctx_set(zmq, ZMQ_MAX_SOCKETS, want);
}

/* The ZAP handler and the ROUTER, bound before the thread starts, so a
 * bind error is the caller's. */
static int open_sockets(ac__node *N, char *why, size_t why_len)
{
    if ((N->zmq = zmq_ctx_new()) == NULL) {
        say(why, why_len, "cannot make a ZeroMQ context");
        return AC_ENOMEM;
    }
    raise_socket_cap(N->zmq);
    N->zap = zmq_socket(N->zmq, ZMQ_REP);
    N->router = zmq_socket(N->zmq, ZMQ_ROUTER);
    if (N->zap == NULL || N->router == NULL) {
        say(why, why_len, "cannot make the node's sockets");
        return AC_ENOMEM;
    }
    ac__node_set_int(N->zap, ZMQ_LINGER, 0);
    if (zmq_bind(N->zap, "inproc://zeromq.zap.01") != 0) {
        say(why, why_len, "cannot install the ZAP handler");
        return AC_EINVAL;
    }
    ac__node_common_options(N, N->router);
    ac__node_set_int(N->router, ZMQ_CURVE_SERVER, 1);
    zmq_setsockopt(N->router, ZMQ_CURVE_SECRETKEY, N->secret_key, AC_NODE_KEY_LEN);
    zmq_setsockopt(N->router, ZMQ_ZAP_DOMAIN, "actorc", 6);
    int64_t max = MAX_BATCH;
    zmq_setsockopt(N->router, ZMQ_MAXMSGSIZE, &max, sizeof max);
    N->router_monitor = ac__node_monitor_socket(N, N->router,
                                ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED |
                                ZMQ_EVENT_HANDSHAKE_SUCCEEDED |
                                ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                                ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                                ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL);
    if (N->router_monitor == NULL) {
        say(why, why_len, "cannot monitor the node's socket");
        return AC_ENOMEM;
    }
    if (zmq_bind(N->router, N->endpoint) != 0) {
        say(why, why_len, "cannot listen on %s: %s", N->endpoint, zmq_strerror(zmq_errno()));
        return AC_EINVAL;
    }
    N->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (N->wake < 0) {
        say(why, why_len, "cannot make the node's eventfd");
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

/* Closes every link and forgets the peers (before close_sockets, whose
 * zmq_ctx_term waits for every socket). */
static void forget_peers(ac__node *N)
{
    for (size_t i = 0; i < N->npeers; i++) {
        ac__node_close_link(&N->peers[i]);
        ac__node_drop_queue(&N->peers[i]);
        free(N->peers[i].fl);
    }
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
        say(why, why_len, "%s", N->started ? "the runtime is a node already" : "the runtime is shutting down");
    if (rc == 0)
        rc = configure(N, cfg, why, why_len);
    rlim_t limit;
    if (rc == 0 && !fds_room(FDS_NODE + N->npeers * FDS_PER_PEER, &limit)) {
        say(why, why_len,
            "%zu peers take about %zu file descriptors, more than this process may open "
            "(RLIMIT_NOFILE %llu)",
            N->npeers, (size_t)(FDS_NODE + N->npeers * FDS_PER_PEER), (unsigned long long)limit);
        rc = AC_ENOMEM;
    }
    if (rc == 0)
        rc = open_sockets(N, why, why_len);
    /* Each link opened here, so that one that cannot be is the caller's
     * error, not a peer silently never linked. */
    for (size_t i = 0; rc == 0 && i < N->npeers; i++) {
        rc = ac__node_open_link(N, &N->peers[i]);
        if (rc != 0)
            say(why, why_len, "cannot open a link to '%s' (peer %zu of %zu): %s",
                N->peers[i].id.name, i + 1, N->npeers,
                rc == AC_ENOMEM ? zmq_strerror(zmq_errno()) : "its endpoint is refused");
    }
    if (rc == 0 && poll_set(N) < POLL_PEERS + N->npeers) {
        say(why, why_len, "out of memory");
        rc = AC_ENOMEM;
    }
    if (rc == 0 && pthread_create(&N->thread, NULL, node_main, N) != 0) {
        say(why, why_len, "cannot start the node's thread");
        rc = AC_ENOMEM;
    }
    if (rc == 0) {
        N->started = true;
    } else if (rc != AC_ESTATE) {
        forget_peers(N);
        close_sockets(N);
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
    rlim_t limit;
    if (rc == 0 && !fds_room(FDS_PER_PEER, &limit))
        rc = AC_ENOMEM;  /* no descriptors for its link */
    if (rc == 0)
        rc = ac__node_add_peer(N, &id);
    /* Its link opened here, not by the thread: one that cannot be is this
     * call's error. The thread polls only the links it saw before it
     * waited, and the lock hands the new ones over. */
    if (rc == 0 && (rc = ac__node_open_link(N, &N->peers[N->npeers - 1])) != 0)
        N->npeers--;  /* never polled: the thread takes the count under the lock */
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
    peer *p = rc == 0 ? ac__node_find_peer(N, name) : NULL;
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
            o->up = ac__node_is_up(p);
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
            o->queued_bytes = p->q_bytes;
            o->in_flight = p->sent - p->settled;
            o->lost = p->lost_in_flight;
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

void ac__node_count_peer(const peer *p, ac_stats *out)
{
    out->node_sent += p->sent;
    out->node_received += p->received;
    out->node_bytes_sent += p->bytes_sent;
    out->node_bytes_received += p->bytes_received;
    out->node_batches += p->batches;
    out->node_drops += p->drops;
    out->node_refused += p->refused;
    out->node_reconnects += p->connects > 1 ? p->connects - 1 : 0;
    out->node_forwarded += p->forwarded;
    out->dead_letters += p->lost;
    out->node_lost += p->lost_in_flight;
}

/* The node's totals into *out: every peer's, those removed since, and its
 * own counters; under the lock. */
static void count_node(const ac__node *N, ac_stats *out)
{
    for (size_t i = 0; i < N->npeers; i++)
        ac__node_count_peer(&N->peers[i], out);
    out->node_sent += N->gone.node_sent;
    out->node_received += N->gone.node_received;
    out->node_bytes_sent += N->gone.node_bytes_sent;
    out->node_bytes_received += N->gone.node_bytes_received;
    out->node_batches += N->gone.node_batches;
    out->node_drops += N->gone.node_drops;
    out->node_refused += N->gone.node_refused;
    out->node_reconnects += N->gone.node_reconnects;
    out->node_forwarded += N->gone.node_forwarded;
    out->dead_letters += N->gone.dead_letters;
    out->node_lost += N->gone.node_lost;
    out->node_malformed += N->stats.malformed;
    out->node_auth_failures += N->stats.auth_failures;
}

/* The stats hook: ac_runtime_stats. */
static void add_stats(void *state, ac_stats *out)
{
    ac__node *N = state;
    pthread_mutex_lock(&N->lock);
    count_node(N, out);
    pthread_mutex_unlock(&N->lock);
}

/* AC_STATS=1: a line per peer, then the node's totals and what it
 * refused. */
static void print_stats(void *state, FILE *f)
{
    ac__node *N = state;
    pthread_mutex_lock(&N->lock);
    if (!N->started) {
        pthread_mutex_unlock(&N->lock);
        return;
    }
    for (size_t i = 0; i < N->npeers; i++) {
        const peer *p = &N->peers[i];
        if (p->removed)
            continue;
        fprintf(f,
                "actorc stats peer %s up %d sent %" PRIu64 " received %" PRIu64
                " bytes_sent %" PRIu64 " bytes_received %" PRIu64 " batches %" PRIu64
                " queued %zu queued_bytes %" PRIu64 " drops %" PRIu64 " refused %" PRIu64
                " in_flight %" PRIu64 " lost %" PRIu64 " connects %" PRIu64
                " losses %" PRIu64 " incarnations %" PRIu64 "\n",
                p->id.name, ac__node_is_up(p), p->sent, p->received, p->bytes_sent,
                p->bytes_received, p->batches, p->q_len, p->q_bytes, p->drops, p->refused,
                p->sent - p->settled, p->lost_in_flight, p->connects,
                p->losses, p->incarnations);
    }
    ac_stats t;
    memset(&t, 0, sizeof t);
    count_node(N, &t);
    const ac_node_stats *s = &N->stats;
    fprintf(f,
            "actorc stats node %s sent %" PRIu64 " received %" PRIu64 " forwarded %" PRIu64
            " bytes_sent %" PRIu64 " bytes_received %" PRIu64 " batches %" PRIu64
            " drops %" PRIu64 " refused %" PRIu64 " lost %" PRIu64 " reconnects %" PRIu64
            " malformed %" PRIu64 " auth_failures %" PRIu64
            " protocol_errors %" PRIu64 " impostors %" PRIu64 " misdirected %" PRIu64
            " forged %" PRIu64 " over_quota %" PRIu64 "\n",
            N->name, t.node_sent, t.node_received, t.node_forwarded, t.node_bytes_sent,
            t.node_bytes_received, t.node_batches, t.node_drops, t.node_refused, t.node_lost,
            t.node_reconnects, s->malformed,
            s->auth_failures, s->protocol_errors, s->impostors, s->misdirected, s->forged,
            s->over_quota);
    pthread_mutex_unlock(&N->lock);
}

/* Set once by ac_node_start, before the node's thread delivers anything. */
static uint32_t peer_quota(void *state)
{
    const ac__node *N = state;
    return N->peer_table_max;
}

static const ac__transport transport = {
    .forward = forward,
    .transmit = transmit,
    .nodes_up = nodes_up,
    .node_named = node_named,
    .peer_quota = peer_quota,
};

/* Every runtime is ready to be a node: the transport is set now, and
 * finds no node up until ac_node_start. */
static int init(ac_runtime *rt, void **state)
{
    ac__node *N = calloc(1, sizeof *N);
    if (N == NULL)
        return AC_ENOMEM;
    N->rt = rt;
    N->wake = -1;
    pthread_mutex_init(&N->lock, NULL);
    *state = N;
    ac__transport_set(rt, &transport, N);
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
    ac__node_gate_fini(&N->gate);
    free(N->events);
    sodium_memzero(N->secret_key, sizeof N->secret_key);
    pthread_mutex_destroy(&N->lock);
    free(N);
}

const ac__service ac__node_service = {
    .name = "node",
    .init = init,
    .shutdown = leave,
    .fini = fini,
    .stats = add_stats,
    .print_stats = print_stats,
};
