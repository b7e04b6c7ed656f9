/*
 * clusternode.c — one node of a test cluster, in a process of its own,
 * driven over stdin and stdout by tests/cluster (test_cluster.c through
 * driver.c, and netns.sh): one command a line, one reply a line, either
 * "ok key=value ..." or "err why".
 *
 *   clusternode NAME CLUSTER_FILE KEY_FILE [TIMEOUT_MS]
 *
 * starts the node NAME of the cluster file (TIMEOUT_MS: ac_node_config's
 * timeout_ms; 0 or absent, the default), spawns STATIONS stations
 * (traffic.actor) and prints "ready node=ID s0=ADDR s1=ADDR" (hex). Then:
 *
 *   burst S ADDR STREAM COUNT  station S sends the next COUNT items of
 *                              STREAM to the station at ADDR
 *   crowd COUNT GROUP          spawns COUNT more stations, members of
 *                              GROUP: first= the number of the first
 *   flood S TO STREAM          station S sends items of STREAM to the
 *                              station at TO (an address), or publishes
 *                              them to group TO (each reaching every
 *                              member), 1,000 a turn, until
 *   unflood S                  (its mail is still read meanwhile)
 *   lag S US                   station S spends US µs on each item from
 *                              now on (a slow consumer)
 *   report S STREAM            what station S received on STREAM, and the
 *                              outcome of all its sends
 *   peer NAME                  what this node knows of its peer NAME
 *   await NAME up|down MS [NODE]  waits up to MS ms for peer NAME to be up
 *                              (down), and up with incarnation NODE (hex) if
 *                              given; at= the CLOCK_MONOTONIC µs it was seen
 *   stats                      the runtime's and the node's counters, and
 *                              handled= the items every station handled
 *   now                        CLOCK_MONOTONIC in µs, for scripts that
 *                              have no such clock
 *   quit                       shuts the runtime down and exits 0
 *
 * and the commands of services.c (asks, names, groups, monitors and links
 * across nodes), listed there. End of input is quit too. A new scenario is
 * one more row of `commands`, its code in a file of its own.
 */
#include "clusternode.h"
#include "traffic.actor.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STATIONS 2      /* spawned at the start; `crowd` adds more */
#define MAX_STATIONS 256
#define MAX_PEERS 16

/* As many as traffic.actor's arrays hold. */
#define STREAMS (sizeof((traffic_Station *)0)->next / sizeof((traffic_Station *)0)->next[0])

static ac_runtime *rt;
/* The items every station has handled: read by `stats` without asking a
 * station, whose mailbox may be long. Relaxed: a count, read alone. */
static _Atomic uint64_t handled;
static traffic_Station_ref stations[MAX_STATIONS];
static size_t n_stations;

/* ---- the station --------------------------------------------------------------- */

/* Sends the next `count` items of stream s to `to`. */
static void send_items(traffic_Station *self, ac_ctx *cx, traffic_Station_ref to, uint32_t s,
                       uint64_t count)
{
    for (uint64_t i = 0; i < count; i++) {
        /* Checked: what reached nobody is counted apart (dead). */
        int rc = traffic_Station_send_item_checked(cx, to, s, self->sent_next[s]);
        /* Only an accepted item takes a number, so that a receiver sees
         * every stream numbered without gaps unless the link lost some. */
        if (rc == 0) {
            self->accepted++;
            self->sent_next[s]++;
        } else if (rc == AC_EFULL) {
            self->full++;
        } else if (rc == AC_ENOTFOUND) {
            self->dead++;
        } else {
            self->other++;
        }
    }
}

int traffic_Station_on_burst(traffic_Station *self, ac_ctx *cx, const traffic_Station_burst *m)
{
    send_items(self, cx, m->station, (uint32_t)(m->stream % STREAMS), m->count);
    return 0;
}

/* A chunk, then the next one after whatever else came meanwhile (an
 * unflood, a report): the station keeps answering while it floods. */
int traffic_Station_on_flood(traffic_Station *self, ac_ctx *cx, const traffic_Station_flood *m)
{
    if (self->unflooded)
        return 0;
    uint32_t s = (uint32_t)(m->stream % STREAMS);
    if (m->topic.len == 0) {
        send_items(self, cx, m->station, s, m->chunk);
        return traffic_Station_send_flood(cx, (traffic_Station_ref){*ac_self(cx)}, m->station,
                                          m->topic, m->stream, m->chunk);
    }
    char group[64];
    snprintf(group, sizeof group, "%.*s", (int)m->topic.len, m->topic.data);
    for (uint64_t i = 0; i < m->chunk; i++) {
        /* Numbered as a burst's items are: only those that reached a
         * member (here, the members of a node whose queue took them). */
        if (traffic_Station_publish_item(cx, group, s, self->sent_next[s]) > 0) {
            self->accepted++;
            self->sent_next[s]++;
        } else {
            self->full++;
        }
    }
    return traffic_Station_send_flood(cx, (traffic_Station_ref){*ac_self(cx)}, m->station,
                                      m->topic, m->stream, m->chunk);
}

int traffic_Station_on_lag(traffic_Station *self, ac_ctx *cx, const traffic_Station_lag *m)
{
    (void)cx;
    self->lag_us = m->us;
    return 0;
}

int traffic_Station_on_unflood(traffic_Station *self, ac_ctx *cx, const traffic_Station_unflood *m)
{
    (void)cx;
    (void)m;
    self->unflooded = true;
    return 0;
}

int traffic_Station_on_item(traffic_Station *self, ac_ctx *cx, const traffic_Station_item *m)
{
    (void)cx;
    if (self->lag_us > 0)
        for (uint64_t until = now_us() + self->lag_us; now_us() < until;)
            ;
    atomic_fetch_add_explicit(&handled, 1, memory_order_relaxed);
    self->total++;
    if (m->stream >= STREAMS) {
        self->violations++;
        return 0;
    }
    uint32_t s = m->stream;
    self->got[s]++;
    if (m->seq < self->next[s]) {
        self->violations++;
        return 0;
    }
    self->gaps += m->seq - self->next[s];
    self->next[s] = m->seq + 1;
    return 0;
}

int traffic_Station_on_report(traffic_Station *self, ac_ctx *cx, const traffic_Station_report *m)
{
    uint32_t s = (uint32_t)(m->stream % STREAMS);
    return traffic_Station_reply_report(cx, &m->reply_to, self->got[s], self->next[s],
                                        self->violations, self->gaps, self->total,
                                        self->accepted, self->full, self->dead, self->other);
}

/* ---- helpers -------------------------------------------------------------------- */

ac_ctx *main_ctx(void)
{
    return ac_runtime_ctx(rt);
}

uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

bool parse_addr(const char *hex, ac_addr *out)
{
    if (strlen(hex) != 2 * sizeof out->bytes)
        return false;
    for (size_t i = 0; i < sizeof out->bytes; i++) {
        int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        out->bytes[i] = (uint8_t)(hi << 4 | lo);
    }
    return true;
}

static bool parse_station(const char *arg, traffic_Station_ref *out)
{
    char *end;
    unsigned long i = strtoul(arg, &end, 10);
    if (*arg == '\0' || *end != '\0' || i >= n_stations)
        return false;
    *out = stations[i];
    return true;
}

static bool find_peer(const char *name, ac_peer_info *out)
{
    ac_peer_info all[MAX_PEERS];
    size_t n = ac_node_peers(rt, all, MAX_PEERS);
    for (size_t i = 0; i < n && i < MAX_PEERS; i++) {
        if (strcmp(all[i].name, name) == 0) {
            *out = all[i];
            return true;
        }
    }
    return false;
}

/* ---- the commands ---------------------------------------------------------------- */

static bool cmd_burst(char **argv, int argc, char *reply, size_t cap)
{
    traffic_Station_ref from, to;
    if (argc != 4 || !parse_station(argv[0], &from) || !parse_addr(argv[1], &to.addr)) {
        snprintf(reply, cap, "usage: burst STATION ADDR STREAM COUNT");
        return false;
    }
    uint32_t stream = (uint32_t)strtoul(argv[2], NULL, 10);
    uint64_t count = strtoull(argv[3], NULL, 10);
    if (stream >= STREAMS) {
        snprintf(reply, cap, "a stream is 0..%zu", STREAMS - 1);
        return false;
    }
    int rc = traffic_Station_send_burst(ac_runtime_ctx(rt), from, to, stream, count);
    snprintf(reply, cap, "rc=%d", rc);
    return rc == 0;
}

static bool cmd_crowd(char **argv, int argc, char *reply, size_t cap)
{
    unsigned long count = argc == 2 ? strtoul(argv[0], NULL, 10) : 0;
    if (argc != 2 || count == 0 || count > MAX_STATIONS - n_stations) {
        snprintf(reply, cap, "usage: crowd COUNT GROUP (at most %zu more)",
                 MAX_STATIONS - n_stations);
        return false;
    }
    ac_ctx *cx = ac_runtime_ctx(rt);
    size_t first = n_stations;
    for (unsigned long i = 0; i < count; i++) {
        traffic_Station_ref *s = &stations[n_stations];
        int rc = traffic_Station_spawn(cx, s);
        if (rc == 0)
            rc = ac_group_join(cx, argv[1], &s->addr);
        if (rc != 0) {
            snprintf(reply, cap, "station %zu: %d", n_stations, rc);
            return false;
        }
        n_stations++;
    }
    snprintf(reply, cap, "first=%zu", first);
    return true;
}

static bool cmd_flood(char **argv, int argc, char *reply, size_t cap)
{
    traffic_Station_ref from, to = {{{0}}};
    if (argc != 3 || !parse_station(argv[0], &from)) {
        snprintf(reply, cap, "usage: flood STATION ADDR|GROUP STREAM");
        return false;
    }
    bool send = parse_addr(argv[1], &to.addr);
    uint32_t stream = (uint32_t)strtoul(argv[2], NULL, 10);
    if (stream >= STREAMS) {
        snprintf(reply, cap, "a stream is 0..%zu", STREAMS - 1);
        return false;
    }
    int rc = traffic_Station_send_flood(ac_runtime_ctx(rt), from, to,
                                        ac_string_of(send ? "" : argv[1]), stream, 1000);
    snprintf(reply, cap, "rc=%d", rc);
    return rc == 0;
}

static bool cmd_unflood(char **argv, int argc, char *reply, size_t cap)
{
    traffic_Station_ref at;
    if (argc != 1 || !parse_station(argv[0], &at)) {
        snprintf(reply, cap, "usage: unflood STATION");
        return false;
    }
    int rc = traffic_Station_send_unflood(ac_runtime_ctx(rt), at);
    snprintf(reply, cap, "rc=%d", rc);
    return rc == 0;
}

static bool cmd_lag(char **argv, int argc, char *reply, size_t cap)
{
    traffic_Station_ref at;
    if (argc != 2 || !parse_station(argv[0], &at)) {
        snprintf(reply, cap, "usage: lag STATION US");
        return false;
    }
    int rc = traffic_Station_send_lag(ac_runtime_ctx(rt), at, (uint32_t)strtoul(argv[1], NULL, 10));
    snprintf(reply, cap, "rc=%d", rc);
    return rc == 0;
}

static bool cmd_report(char **argv, int argc, char *reply, size_t cap)
{
    traffic_Station_ref at;
    if (argc != 2 || !parse_station(argv[0], &at)) {
        snprintf(reply, cap, "usage: report STATION STREAM");
        return false;
    }
    ac_ctx *cx = ac_runtime_ctx(rt);
    traffic_Station_report_reply *r = NULL;
    int rc = traffic_Station_ask_report_wait(cx, at, (uint32_t)strtoul(argv[1], NULL, 10), ASK_MS,
                                             &r);
    if (rc != 0) {
        snprintf(reply, cap, "ask: %d", rc);
        return false;
    }
    snprintf(reply, cap,
             "got=%" PRIu64 " next=%" PRIu64 " violations=%" PRIu64 " gaps=%" PRIu64
             " total=%" PRIu64 " accepted=%" PRIu64 " full=%" PRIu64 " dead=%" PRIu64
             " other=%" PRIu64,
             r->got, r->next, r->violations, r->gaps, r->total, r->accepted, r->full, r->dead,
             r->other);
    ac_reply_free(cx, r);
    return true;
}

static bool cmd_peer(char **argv, int argc, char *reply, size_t cap)
{
    ac_peer_info p;
    if (argc != 1 || !find_peer(argv[0], &p)) {
        snprintf(reply, cap, "no peer '%s'", argc == 1 ? argv[0] : "");
        return false;
    }
    snprintf(reply, cap,
             "up=%d node=%016" PRIx64 " incarnations=%" PRIu64 " connects=%" PRIu64
             " losses=%" PRIu64 " sent=%" PRIu64 " received=%" PRIu64 " bytes_sent=%" PRIu64
             " bytes_received=%" PRIu64 " batches=%" PRIu64 " queued=%" PRIu64 " drops=%" PRIu64
             " refused=%" PRIu64 " queued_bytes=%" PRIu64 " in_flight=%" PRIu64 " lost=%" PRIu64,
             p.up, p.node, p.incarnations, p.connects, p.losses, p.sent, p.received, p.bytes_sent,
             p.bytes_received, p.batches, p.queued, p.drops, p.refused, p.queued_bytes,
             p.in_flight, p.lost);
    return true;
}

static bool cmd_await(char **argv, int argc, char *reply, size_t cap)
{
    bool up = argc >= 3 && strcmp(argv[1], "up") == 0;
    if (argc < 3 || argc > 4 || (!up && strcmp(argv[1], "down") != 0)) {
        snprintf(reply, cap, "usage: await NAME up|down MS [NODE]");
        return false;
    }
    /* A link that came back is up before the peer's greeting says which
     * incarnation it reached: one that restarted is awaited by its id. */
    uint64_t node = argc == 4 ? strtoull(argv[3], NULL, 16) : 0;
    uint64_t t0 = now_us(), limit = strtoull(argv[2], NULL, 10) * 1000u;
    for (;;) {
        uint64_t t = now_us();
        ac_peer_info p;
        if (!find_peer(argv[0], &p)) {
            snprintf(reply, cap, "no peer '%s'", argv[0]);
            return false;
        }
        if (p.up == up && (!up || node == 0 || p.node == node)) {
            snprintf(reply, cap, "at=%" PRIu64 " waited_ms=%" PRIu64, t, (t - t0) / 1000u);
            return true;
        }
        if (t - t0 >= limit) {
            snprintf(reply, cap, "timeout: %s still %s (node=%016" PRIx64 ") after %s ms", argv[0],
                     p.up ? "up" : "down", p.node, argv[2]);
            return false;
        }
        usleep(1000);
    }
}

static bool cmd_stats(char **argv, int argc, char *reply, size_t cap)
{
    (void)argv;
    (void)argc;
    ac_stats s;
    ac_node_stats n;
    ac_runtime_stats(rt, &s);
    if (ac_runtime_node_stats(rt, &n) != 0) {
        snprintf(reply, cap, "not a node");
        return false;
    }
    snprintf(reply, cap,
             "dead_letters=%" PRIu64 " sends=%" PRIu64 " messages=%" PRIu64
             " mailbox_drops=%" PRIu64 " auth_failures=%" PRIu64 " protocol_errors=%" PRIu64
             " malformed=%" PRIu64 " impostors=%" PRIu64 " misdirected=%" PRIu64
             " handled=%" PRIu64,
             s.dead_letters, s.sends, s.messages, s.mailbox_drops, n.auth_failures,
             n.protocol_errors, n.malformed, n.impostors, n.misdirected,
             atomic_load_explicit(&handled, memory_order_relaxed));
    return true;
}

static bool cmd_now(char **argv, int argc, char *reply, size_t cap)
{
    (void)argv;
    (void)argc;
    snprintf(reply, cap, "at=%" PRIu64, now_us());
    return true;
}

static const struct command {
    const char *name;
    command_fn run;
} commands[] = {
    {"burst", cmd_burst}, {"crowd", cmd_crowd}, {"flood", cmd_flood},
    {"unflood", cmd_unflood}, {"lag", cmd_lag}, {"report", cmd_report}, {"peer", cmd_peer},
    {"await", cmd_await}, {"stats", cmd_stats},   {"now", cmd_now},
    /* services.c */
    {"oracle", cmd_oracle},     {"watcher", cmd_watcher}, {"ask", cmd_ask},
    {"askwait", cmd_askwait},   {"whereis", cmd_whereis}, {"members", cmd_members},
    {"publish", cmd_publish},   {"watch", cmd_watch},     {"bind", cmd_bind},
    {"hold", cmd_hold},         {"farewell", cmd_farewell}, {"seen", cmd_seen},
};

/* ---- main ------------------------------------------------------------------------- */

static int start(char **argv, int argc)
{
    ac_config c;
    ac_config_init(&c);
    c.workers = 2;
    if (ac_runtime_create(&rt, &c) != 0) {
        fprintf(stderr, "clusternode: ac_runtime_create failed\n");
        return 1;
    }
    ac_runtime_set_failure_hook(rt, ac_failure_quiet, NULL);  /* failed on purpose */
    ac_node_config cfg = {.name = argv[1], .cluster_file = argv[2], .secret_key_file = argv[3],
                          .timeout_ms = argc > 4 ? (uint32_t)strtoul(argv[4], NULL, 10) : 0};
    char why[256];
    if (ac_node_start(rt, &cfg, why, sizeof why) != 0) {
        fprintf(stderr, "clusternode %s: %s\n", argv[1], why);
        return 1;
    }
    printf("ready node=%016" PRIx64, ac_runtime_node(rt));
    for (int i = 0; i < STATIONS; i++, n_stations++) {
        char hex[2 * sizeof(ac_addr) + 1];
        if (traffic_Station_spawn(ac_runtime_ctx(rt), &stations[i]) != 0) {
            fprintf(stderr, "clusternode %s: a station could not be spawned\n", argv[1]);
            return 1;
        }
        printf(" s%d=%s", i, ac_addr_format(&stations[i].addr, hex, sizeof(ac_addr)));
    }
    printf("\n");
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4 || argc > 5) {
        fprintf(stderr, "usage: clusternode NAME CLUSTER_FILE KEY_FILE [TIMEOUT_MS]\n");
        return 2;
    }
    if (start(argv, argc) != 0) {
        ac_runtime_destroy(rt);
        return 1;
    }
    char line[1024];
    while (fgets(line, sizeof line, stdin) != NULL) {
        char *words[8];
        int n = 0;
        for (char *w = strtok(line, " \t\r\n"); w != NULL && n < 8; w = strtok(NULL, " \t\r\n"))
            words[n++] = w;
        if (n == 0)
            continue;
        if (strcmp(words[0], "quit") == 0)
            break;
        char reply[768] = "unknown command";
        bool ok = false;
        for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
            if (strcmp(words[0], commands[i].name) == 0)
                ok = commands[i].run(words + 1, n - 1, reply, sizeof reply);
        printf("%s %s\n", ok ? "ok" : "err", reply);
        fflush(stdout);
    }
    ac_runtime_destroy(rt);
    printf("ok bye\n");
    fflush(stdout);
    return 0;
}
