/*
 * test_node_gate.c — every connection a node refuses is counted once:
 * a flood of handshakes with a key nobody listed is N auth_failures and
 * no protocol error; connections that stall in the middle of the greeting
 * (a slowloris) and ones that speak no ZMTP are each one protocol error.
 * The counters come from one place, the ROUTER's monitor. Each test waits
 * on the counters, and reads them only after a last connection whose
 * refusal is counted after everything before it.
 */
#include "fixtures.h"
#include "nodes.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zmq.h>

static ac_node_stats stats_of(ac_runtime *rt)
{
    ac_node_stats s;
    cr_assert_eq(ac_runtime_node_stats(rt, &s), 0);
    return s;
}

/* Waits until the counter at `offset` of rt reaches want. Bounded by
 * progress, not by a total: it gives up only when the counter has not
 * moved for 6 * WAIT_MS, since hundreds of CURVE handshakes under a
 * sanitizer on a loaded machine may take minutes, but never stall. */
static bool wait_count(ac_runtime *rt, size_t offset, uint64_t want)
{
    uint64_t last = 0;
    for (uint64_t t0 = now_ms(); now_ms() - t0 < 6 * WAIT_MS;) {
        ac_node_stats s = stats_of(rt);
        uint64_t now = *(uint64_t *)((char *)&s + offset);
        if (now >= want)
            return true;
        if (now != last) {
            last = now;
            t0 = now_ms();
        }
        usleep(2000);
    }
    return false;
}
#define WAIT_COUNT(rt, field, want) wait_count((rt), offsetof(ac_node_stats, field), (want))

static int port_of(const member *m)
{
    return atoi(strrchr(m->endpoint, ':') + 1);
}

/* The node's side of its connections, from /proc/net/tcp: how many
 * sockets on its port are not listening. Once 0, the node has closed
 * every connection, and told its monitor about each before. */
static int open_on_port(int port)
{
    FILE *f = fopen("/proc/net/tcp", "r");
    cr_assert_not_null(f);
    char line[512];
    int n = 0;
    (void)!fgets(line, sizeof line, f);
    while (fgets(line, sizeof line, f)) {
        unsigned local_port, state;
        if (sscanf(line, " %*d: %*x:%x %*x:%*x %x", &local_port, &state) == 2 &&
            (int)local_port == port && state != 0x0A /* LISTEN */ && state != 0x06 /* TIME_WAIT */)
            n++;
    }
    fclose(f);
    return n;
}

static bool wait_closed(int port)
{
    for (uint64_t t0 = now_ms(); now_ms() - t0 < 6 * WAIT_MS;) {
        if (open_on_port(port) == 0)
            return true;
        usleep(2000);
    }
    return false;
}

/* A CURVE client with a key of its own, which nobody listed, that tries
 * once (no reconnect). */
static void *unknown_client(void *ctx, const member *to)
{
    void *s = zmq_socket(ctx, ZMQ_DEALER);
    cr_assert_not_null(s);
    char pub[41], sec[41];
    cr_assert_eq(zmq_curve_keypair(pub, sec), 0);
    int v = -1;
    cr_assert_eq(zmq_setsockopt(s, ZMQ_RECONNECT_IVL, &v, sizeof v), 0);
    v = 0;
    cr_assert_eq(zmq_setsockopt(s, ZMQ_LINGER, &v, sizeof v), 0);
    cr_assert_eq(zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, to->public_key, 40), 0);
    cr_assert_eq(zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, pub, 40), 0);
    cr_assert_eq(zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, sec, 40), 0);
    cr_assert_eq(zmq_connect(s, to->endpoint), 0);
    return s;
}

/* The last connection of a test: an unknown key, whose refusal the node
 * counts after every event of the connections it closed before. */
static void last_refusal(ac_runtime *rt, const member *m, uint64_t auth_before)
{
    cr_assert(wait_closed(port_of(m)), "the node keeps connections open");
    void *ctx = zmq_ctx_new();
    void *s = unknown_client(ctx, m);
    cr_assert(WAIT_COUNT(rt, auth_failures, auth_before + 1));
    zmq_close(s);
    zmq_ctx_term(ctx);
}

/* A context for n clients (ZeroMQ's default is 1,023 sockets). */
static void *clients_ctx(unsigned n)
{
    void *ctx = zmq_ctx_new();
    cr_assert_not_null(ctx);
    cr_assert_eq(zmq_ctx_set(ctx, ZMQ_MAX_SOCKETS, (int)n + 16), 0);
    return ctx;
}

/* Room for n connections, both ends, in this process. */
static unsigned room_for(unsigned n)
{
    struct rlimit r;
    cr_assert_eq(getrlimit(RLIMIT_NOFILE, &r), 0);
    rlim_t want = 4 * (rlim_t)n + 256;
    if (r.rlim_cur < want) {
        r.rlim_cur = r.rlim_max < want ? r.rlim_max : want;
        (void)setrlimit(RLIMIT_NOFILE, &r);
    }
    return r.rlim_cur >= want ? n : (unsigned)((r.rlim_cur - 256) / 4);
}

typedef struct lone {
    node_dir d;
    member a;
    char cluster[128];
    ac_runtime *rt;
} lone;

static void open_lone(lone *l)
{
    make_dir(&l->d);
    make_member(&l->d, &l->a, "alpha");
    write_cluster(&l->d, "cluster", &l->a, 1, l->cluster, sizeof l->cluster);
    l->rt = start_node(&l->a, l->cluster);
}

static void close_lone(lone *l)
{
    ac_runtime_destroy(l->rt);
    remove_dir(&l->d);
}

Test(node_gate, a_flood_of_unknown_keys_is_counted_once_each, .timeout = 300)
{
    unsigned n = room_for(400);
    lone l;
    open_lone(&l);
    void *ctx = clients_ctx(n);
    void **clients = calloc(n, sizeof *clients);
    cr_assert_not_null(clients);
    for (unsigned i = 0; i < n; i++)
        clients[i] = unknown_client(ctx, &l.a);
    cr_assert(WAIT_COUNT(l.rt, auth_failures, n), "%llu of %u refused",
              (unsigned long long)stats_of(l.rt).auth_failures, n);
    for (unsigned i = 0; i < n; i++)
        zmq_close(clients[i]);
    zmq_ctx_term(ctx);
    free(clients);
    last_refusal(l.rt, &l.a, n);
    ac_node_stats s = stats_of(l.rt);
    cr_expect_eq(s.auth_failures, n + 1);
    cr_expect_eq(s.protocol_errors, 0, "%llu", (unsigned long long)s.protocol_errors);
    close_lone(&l);
}

/* Connections that send part of a greeting and stall, until the node's
 * handshake timeout ends them; and connections that speak something else. */
static void raw_connections(ac_runtime *rt, const member *m, unsigned n, const char *bytes,
                            size_t len)
{
    int *fds = calloc(n, sizeof *fds);
    cr_assert_not_null(fds);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port_of(m)),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    for (unsigned i = 0; i < n; i++) {
        fds[i] = socket(AF_INET, SOCK_STREAM, 0);
        cr_assert_geq(fds[i], 0);
        cr_assert_eq(connect(fds[i], (struct sockaddr *)&to, sizeof to), 0);
        cr_assert_eq(write(fds[i], bytes, len), (ssize_t)len);
    }
    cr_assert(WAIT_COUNT(rt, protocol_errors, n), "%llu of %u counted",
              (unsigned long long)stats_of(rt).protocol_errors, n);
    for (unsigned i = 0; i < n; i++)
        close(fds[i]);
    free(fds);
}

Test(node_gate, a_slowloris_is_one_protocol_error_a_connection, .timeout = 300)
{
    unsigned n = room_for(200);
    lone l;
    open_lone(&l);
    /* Half of ZMTP's signature: the node waits for the rest until its
     * handshake timeout. */
    static const uint8_t half[] = {0xff, 0, 0, 0, 0};
    raw_connections(l.rt, &l.a, n, (const char *)half, sizeof half);
    last_refusal(l.rt, &l.a, 0);
    ac_node_stats s = stats_of(l.rt);
    cr_expect_eq(s.protocol_errors, n);
    cr_expect_eq(s.auth_failures, 1);
    close_lone(&l);
}

Test(node_gate, garbage_and_unknown_keys_together_are_each_counted_once, .timeout = 300)
{
    unsigned n = room_for(200);
    lone l;
    open_lone(&l);
    void *ctx = clients_ctx(n);
    void **clients = calloc(n, sizeof *clients);
    cr_assert_not_null(clients);
    for (unsigned i = 0; i < n; i++)
        clients[i] = unknown_client(ctx, &l.a);
    static const char junk[] = "GET / HTTP/1.1\r\nHost: alpha\r\n\r\n";
    raw_connections(l.rt, &l.a, n, junk, sizeof junk - 1);
    cr_assert(WAIT_COUNT(l.rt, auth_failures, n));
    for (unsigned i = 0; i < n; i++)
        zmq_close(clients[i]);
    zmq_ctx_term(ctx);
    free(clients);
    last_refusal(l.rt, &l.a, n);
    ac_node_stats s = stats_of(l.rt);
    cr_expect_eq(s.auth_failures, n + 1);
    cr_expect_eq(s.protocol_errors, n, "%llu", (unsigned long long)s.protocol_errors);
    close_lone(&l);
}
