/*
 * test_cluster.c — three node processes on 127.0.0.1 (driver.h): messages
 * between every pair, in order per sender, and what the others see when
 * one is killed, frozen, restarted, or when a stranger knocks.
 *
 * A scenario is the commands of node/clusternode.c; one that needs more
 * is one more command there (asks, names, groups, monitors and links
 * across nodes: node/services.c, tested in test_services.c).
 */
#include "driver.h"

#include <inttypes.h>
#include <signal.h>

/* One stream per sender (node i's station s) and receiver (node j). */
static int stream_of(int i, int s, int j)
{
    return (i * STATIONS + s) * CLUSTER_MAX + j;
}

/* Every node of the cluster but `lost` waits for `lost` to be down, or up
 * as its incarnation cl.n[lost].node, at once, and each sees it, within
 * limit_ms of t0 (µs) unless limit_ms is 0: what happened to it. The
 * times are printed, for the record. */
static void seen_by_others(int lost, bool up, uint64_t t0, uint64_t limit_ms, const char *what)
{
    const char *name = cl.n[lost].m.name;
    for (int w = 0; w < cl.size; w++)
        if (w != lost)
            node_send(w, "await %s %s %d %016" PRIx64, name, up ? "up" : "down",
                      (int)wait_bound_ms(), cl.n[lost].node);
    for (int w = 0; w < cl.size; w++) {
        if (w == lost)
            continue;
        char r[REPLY_MAX];
        cr_assert(node_reply(w, wait_bound_ms(), r), "%s sees %s %s: %s", cl.n[w].m.name, name,
                  up ? "up" : "down", r);
        uint64_t at = field(r, "at");
        double ms = at > t0 ? (double)(at - t0) / 1000.0 : 0.0;
        fprintf(stderr, "cluster: %s sees %s %s %.1f ms after it was %s\n", cl.n[w].m.name, name,
                up ? "up" : "down", ms, what);
        if (limit_ms > 0)
            cr_assert_lt(ms, (double)limit_ms, "%s sees %s %s after %.1f ms (limit %lu ms)",
                         cl.n[w].m.name, name, up ? "up" : "down", ms, (unsigned long)limit_ms);
    }
}

/* Node i's station 0 sends `count` items of its stream to node j's
 * station 0, and j gets them all, in order. */
static void delivers(int i, int j, uint64_t count)
{
    char r[REPLY_MAX];
    int stream = stream_of(i, 0, j);
    node_cmd(j, r, "report 0 %d", stream);
    uint64_t before = field(r, "got");
    node_cmd(i, r, "burst 0 %s %d %lu", cl.n[j].station[0], stream, (unsigned long)count);
    cr_assert(wait_report(j, 0, stream, "got", before + count, r), "%s gets %s's items: %s",
              cl.n[j].m.name, cl.n[i].m.name, r);
    cr_assert_eq(field(r, "got"), before + count, "%s: %s", cl.n[j].m.name, r);
    cr_assert_eq(field(r, "next"), before + count, "%s: %s", cl.n[j].m.name, r);
    cr_assert_eq(field(r, "violations") + field(r, "gaps"), 0, "%s: %s", cl.n[j].m.name, r);
}

/* Every node of the cluster sees every other up, and has lost none. */
static void all_up_and_none_lost(void)
{
    char r[REPLY_MAX];
    for (int i = 0; i < cl.size; i++) {
        for (int j = 0; j < cl.size; j++) {
            if (j == i)
                continue;
            node_cmd(i, r, "peer %s", cl.n[j].m.name);
            cr_assert_eq(field(r, "up"), 1, "%s sees %s: %s", cl.n[i].m.name, cl.n[j].m.name, r);
            cr_assert_eq(field(r, "losses"), 0, "%s sees %s: %s", cl.n[i].m.name,
                         cl.n[j].m.name, r);
        }
    }
}

/* ---- messages ------------------------------------------------------------------------ */

Test(cluster, every_node_reaches_every_other, .timeout = 120, .fini = cluster_down)
{
    cluster_up(3, LONG_TIMEOUT_MS);
    enum { N = 100 };
    char r[REPLY_MAX];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            if (j != i)
                node_cmd(i, r, "burst 0 %s %d %d", cl.n[j].station[0], stream_of(i, 0, j), N);
    for (int j = 0; j < 3; j++) {
        for (int i = 0; i < 3; i++) {
            if (i == j)
                continue;
            cr_assert(wait_report(j, 0, stream_of(i, 0, j), "got", N, r), "%s gets %s's: %s",
                      cl.n[j].m.name, cl.n[i].m.name, r);
            cr_assert_eq(field(r, "next"), N, "%s: %s", cl.n[j].m.name, r);
        }
        cr_assert_eq(field(r, "total"), 2 * N, "%s: %s", cl.n[j].m.name, r);
        cr_assert_eq(field(r, "violations") + field(r, "gaps"), 0, "%s: %s", cl.n[j].m.name, r);
    }
    for (int i = 0; i < 3; i++) {
        node_cmd(i, r, "report 0 0");
        cr_assert_eq(field(r, "accepted"), 2 * N, "%s: %s", cl.n[i].m.name, r);
        cr_assert_eq(field(r, "full") + field(r, "dead") + field(r, "other"), 0, "%s", r);
        for (int j = 0; j < 3; j++) {
            if (j == i)
                continue;
            node_cmd(i, r, "peer %s", cl.n[j].m.name);
            cr_assert_geq(field(r, "sent"), N, "%s to %s: %s", cl.n[i].m.name, cl.n[j].m.name, r);
            cr_assert_geq(field(r, "received"), N, "%s from %s: %s", cl.n[i].m.name,
                          cl.n[j].m.name, r);
        }
    }
    cluster_stop();
}

/* Six senders (two stations a node) send to both other nodes at once, in
 * rounds; each receiver sees each of its four streams complete and in the
 * order it was sent. */
Test(cluster, each_senders_items_arrive_in_order_while_all_send_at_once, .timeout = 180,
     .fini = cluster_down)
{
    cluster_up(3, LONG_TIMEOUT_MS);
    enum { N = 2000, ROUNDS = 3 };
    char r[REPLY_MAX];
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < 3; i++)
            for (int s = 0; s < STATIONS; s++)
                for (int j = 0; j < 3; j++)
                    if (j != i)
                        node_send(i, "burst %d %s %d %d", s, cl.n[j].station[0],
                                  stream_of(i, s, j), N);
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < STATIONS * 2; k++)
                cr_assert(node_reply(i, 0, r), "%s: %s", cl.n[i].m.name, r);
    }
    for (int j = 0; j < 3; j++) {
        for (int i = 0; i < 3; i++) {
            for (int s = 0; s < STATIONS && i != j; s++) {
                int stream = stream_of(i, s, j);
                cr_assert(wait_report(j, 0, stream, "got", ROUNDS * N, r),
                          "%s gets stream %d: %s", cl.n[j].m.name, stream, r);
                cr_assert_eq(field(r, "got"), ROUNDS * N, "%s: %s", cl.n[j].m.name, r);
                cr_assert_eq(field(r, "next"), ROUNDS * N, "%s: %s", cl.n[j].m.name, r);
            }
        }
        cr_assert_eq(field(r, "violations"), 0, "in order at %s: %s", cl.n[j].m.name, r);
        cr_assert_eq(field(r, "gaps"), 0, "nothing lost at %s: %s", cl.n[j].m.name, r);
        cr_assert_eq(field(r, "total"), 2 * STATIONS * ROUNDS * N, "%s: %s", cl.n[j].m.name, r);
    }
    for (int i = 0; i < 3; i++) {
        for (int s = 0; s < STATIONS; s++) {
            node_cmd(i, r, "report %d 0", s);
            cr_assert_eq(field(r, "accepted"), 2 * ROUNDS * N, "%s: %s", cl.n[i].m.name, r);
            cr_assert_eq(field(r, "full") + field(r, "dead") + field(r, "other"), 0, "%s", r);
        }
    }
    all_up_and_none_lost();
    cluster_stop();
}

/* ---- losing a node ------------------------------------------------------------------- */

/* kill -9: the others see it down at once (its connections close, long
 * before the link timeout); started again, it is a new incarnation the
 * links find by themselves, and what is sent to an address of the old one
 * is a dead letter, never delivered to the new. */
Test(cluster, a_killed_node_is_seen_down_at_once_and_comes_back_as_a_new_incarnation,
     .timeout = 120, .fini = cluster_down)
{
    cluster_up(3, LONG_TIMEOUT_MS);
    char r[REPLY_MAX], old_station[sizeof cl.n[2].station[0]];
    uint64_t old = cl.n[2].node;
    memcpy(old_station, cl.n[2].station[0], sizeof old_station);

    uint64_t t0 = now_us();
    node_signal(2, SIGKILL);
    seen_by_others(2, false, t0, AT_ONCE_MS, "killed");
    node_cmd(0, r, "peer gamma");
    cr_assert_eq(field(r, "up"), 0, "%s", r);
    cr_assert_eq(field(r, "losses"), 1, "%s", r);

    uint64_t fresh = node_start(2);
    cr_assert_neq(fresh, old, "a new incarnation");
    seen_by_others(2, true, now_us(), 0, "restarted");
    for (int w = 0; w < 2; w++) {
        node_cmd(w, r, "peer gamma");
        cr_assert_eq(field_hex(r, "node"), fresh, "%s knows the new one: %s", cl.n[w].m.name, r);
        cr_assert_eq(field(r, "incarnations"), 2, "%s: %s", cl.n[w].m.name, r);
        node_cmd(2, r, "await %s up %d", cl.n[w].m.name, WAIT_MS);
    }

    node_cmd(0, r, "stats");
    uint64_t dead = field(r, "dead_letters");
    node_cmd(0, r, "burst 0 %s 1 1", old_station);
    node_cmd(0, r, "report 0 0");
    cr_assert_eq(field(r, "dead"), 1, "to the old incarnation: %s", r);
    cr_assert_eq(field(r, "accepted"), 0, "%s", r);
    node_cmd(0, r, "stats");
    cr_assert_eq(field(r, "dead_letters"), dead + 1, "counted: %s", r);
    node_cmd(0, r, "burst 0 %s 1 1", cl.n[2].station[0]);
    cr_assert(wait_report(2, 0, 1, "got", 1, r), "the new one is reached: %s", r);
    cr_assert_eq(field(r, "total"), 1, "and got nothing sent to the old one: %s", r);
    cr_assert_eq(field(r, "next"), 1, "%s", r);
    delivers(1, 2, 10);
    delivers(2, 0, 10);
    cluster_stop();
}

/* SIGSTOP: a frozen node says nothing, and is seen down when the link
 * timeout runs out; SIGCONT: the same incarnation is back, and messages
 * flow again. */
Test(cluster, a_frozen_node_is_seen_down_and_back_when_it_resumes, .timeout = 120,
     .fini = cluster_down)
{
    cluster_up(3, LONG_TIMEOUT_MS);
    uint64_t t0 = now_us();
    node_signal(2, SIGSTOP);
    seen_by_others(2, false, t0, 0, "stopped");
    node_signal(2, SIGCONT);
    seen_by_others(2, true, now_us(), 0, "continued");
    char r[REPLY_MAX];
    for (int w = 0; w < 2; w++) {
        node_cmd(w, r, "peer gamma");
        cr_assert_eq(field_hex(r, "node"), cl.n[2].node, "the same incarnation: %s", r);
        cr_assert_eq(field(r, "incarnations"), 1, "%s", r);
        cr_assert_eq(field(r, "losses"), 1, "%s", r);
        node_cmd(2, r, "await %s up %d", cl.n[w].m.name, WAIT_MS);
    }
    delivers(0, 2, 10);
    delivers(2, 1, 10);
    cluster_stop();
}

/* gamma restarts while alpha is frozen: when alpha resumes, its link to the
 * new gamma may come back before the new gamma's greeting reaches it, so
 * that alpha's own greeting names the gamma it knew; both must still learn
 * each other. The order is a race, so a few rounds. */
Test(cluster, a_node_restarted_while_a_peer_is_frozen_is_linked_both_ways, .timeout = 120,
     .fini = cluster_down)
{
    cluster_up(3, LONG_TIMEOUT_MS);
    char r[REPLY_MAX];
    for (int round = 0; round < 4; round++) {
        node_signal(2, SIGKILL);
        for (int w = 0; w < 2; w++)
            node_cmd(w, r, "await gamma down %d", WAIT_MS);
        node_signal(0, SIGSTOP);
        uint64_t fresh = node_start(2);
        usleep(300 * 1000);  /* far less than the silence beta allows alpha */
        node_signal(0, SIGCONT);
        for (int w = 0; w < 2; w++) {
            node_cmd(w, r, "await gamma up %d %016" PRIx64, WAIT_MS, fresh);
            node_cmd(2, r, "await %s up %d", cl.n[w].m.name, WAIT_MS);
        }
    }
    delivers(0, 2, 10);
    delivers(2, 0, 10);
    cluster_stop();
}

/* ---- a busy peer ---------------------------------------------------------------------- */

/* An Oracle (node/services.c) spawned on node i: its address into addr. */
static void oracle_on(int i, char addr[2 * sizeof(ac_addr) + 1])
{
    char r[REPLY_MAX];
    node_cmd(i, r, "oracle");
    field_word(r, "addr", addr, 2 * sizeof(ac_addr) + 1);
}

/* Node 0 asks the Oracle at addr from main, and gets its answer. */
static void answered(const char *oracle, const char *text)
{
    char r[REPLY_MAX], word[64];
    node_cmd(0, r, "askwait %s %s 21", oracle, text);
    cr_assert_eq(field_int(r, "rc"), 0, "alpha's ask of gamma's Oracle: %s", r);
    cr_assert_str_eq(field_word(r, "echo", word, sizeof word), text, "%s", r);
}

/* beta streams at full speed into alpha — a flood of publishes to a group
 * whose members are on alpha, so that each record is many deliveries
 * there and alpha's ROUTER never runs dry — and does not stop until the
 * end: meanwhile alpha answers asks through gamma, sees gamma killed (-9)
 * and started again, and is seen by the new gamma. Each is an event that
 * must happen while the flood goes on (an endless one: a node thread that
 * only read its ROUTER would never get to them), not within a time. */
Test(cluster, a_node_flooded_by_one_peer_still_serves_the_others, .timeout = 180,
     .fini = cluster_down)
{
    cluster_up(3, LONG_TIMEOUT_MS);
    enum { FLOOD = 31, CROWD = 32 };
    char r[REPLY_MAX], oracle[2 * sizeof(ac_addr) + 1];
    oracle_on(2, oracle);
    node_cmd(0, r, "crowd %d flood", CROWD);
    int crowd = (int)field(r, "first");
    for (int s = 0; s < STATIONS; s++)  /* from both of beta's workers, a stream each */
        node_cmd(1, r, "flood %d flood %d", s, FLOOD - s);
    cr_assert(wait_report(0, crowd, FLOOD, "got", 1, r), "the flood reaches alpha: %s", r);
    uint64_t before = field(r, "got");

    answered(oracle, "during-the-flood");
    node_signal(2, SIGKILL);
    node_cmd(0, r, "await gamma down %d", WAIT_MS);
    uint64_t fresh = node_start(2);
    node_cmd(0, r, "await gamma up %d %016" PRIx64, WAIT_MS, fresh);
    node_cmd(2, r, "await alpha up %d", WAIT_MS);
    oracle_on(2, oracle);
    answered(oracle, "to-the-new-gamma");

    node_cmd(0, r, "report %d %d", crowd, FLOOD);
    cr_assert_gt(field(r, "got"), before, "the flood went on meanwhile: %s", r);
    cr_assert_eq(field(r, "violations") + field(r, "gaps"), 0, "%s", r);
    for (int s = 0; s < STATIONS; s++)
        node_cmd(1, r, "unflood %d", s);
    cluster_stop();
}

/* ---- what a link loses ------------------------------------------------------------------ */

/* alpha floods a station of beta's while beta is frozen until its link is
 * declared down, and thawed: what was in
 * flight on the link that dropped — in libzmq's pipe and the sockets'
 * buffers — is either taken by beta after all (its ACKs say so) or
 * counted lost by alpha, so that at rest every record alpha sent is one
 * beta received or one alpha counts lost, and every item alpha's station
 * had accepted is one beta's station got, or one of alpha's drops (its
 * queue when the link went) or of its losses. */
Test(cluster, what_a_dropped_link_had_in_flight_is_counted, .timeout = 180,
     .fini = cluster_down)
{
    cluster_up(2, 0);
    enum { STREAM = 30 };
    char r[REPLY_MAX], a[REPLY_MAX], b[REPLY_MAX];
    int sink = 0;
    node_cmd(0, r, "flood 0 %s %d", cl.n[1].station[sink], STREAM);
    cr_assert(wait_report(1, sink, STREAM, "got", 1, r), "the flood reaches beta: %s", r);

    node_signal(1, SIGSTOP);
    node_cmd(0, r, "await beta down %d", WAIT_MS);
    node_signal(1, SIGCONT);
    node_cmd(0, r, "await beta up %d", WAIT_MS);
    node_cmd(1, r, "await alpha up %d", WAIT_MS);
    node_cmd(1, r, "report %d %d", sink, STREAM);
    cr_assert(wait_report(1, sink, STREAM, "got", field(r, "got") + 1, r),
              "the flood goes on: %s", r);
    node_cmd(0, r, "unflood 0");

    /* At rest: nothing queued, nothing left unacknowledged. */
    bool rest = false;
    for (uint64_t t0 = now_ms(); !rest && now_ms() - t0 < WAIT_MS; usleep(10000)) {
        node_cmd(0, a, "peer beta");
        rest = field(a, "queued") == 0 && field(a, "in_flight") == 0;
    }
    cr_assert(rest, "alpha's link to beta comes to rest: %s", a);
    node_cmd(1, b, "peer alpha");
    fprintf(stderr, "cluster: alpha sent %lu records, beta received %lu, alpha lost %lu in flight "
            "and dropped %lu queued\n", (unsigned long)field(a, "sent"),
            (unsigned long)field(b, "received"), (unsigned long)field(a, "lost"),
            (unsigned long)field(a, "drops"));
    cr_assert_eq(field(a, "sent"), field(b, "received") + field(a, "lost"),
                 "sent = received + lost in flight: %s / %s", a, b);
    node_cmd(0, r, "report 0 %d", STREAM);
    uint64_t accepted = field(r, "accepted"), dropped = field(a, "drops");
    uint64_t lost = field(a, "lost");
    cr_assert_geq(accepted, dropped + lost, "%s / %s", r, a);
    cr_assert(wait_report(1, sink, STREAM, "got", accepted - dropped - lost, r), "%s", r);
    cr_assert_eq(field(r, "got"), accepted - dropped - lost,
                 "every accepted item got, dropped or lost: %s / %s", r, a);
    cr_assert_eq(field(r, "violations"), 0, "%s", r);
    cluster_stop();
}

/* ---- back-pressure ----------------------------------------------------------------------- */

/* alpha floods a station of beta's that takes 50 µs an item, twenty times
 * slower than alpha sends. The station is overloaded, so beta holds its
 * ACKs to alpha, whose window (8 MiB unacknowledged) then closes and whose
 * queue fills: its sends past that are refused (AC_EFULL, counted), and
 * what beta has taken but the station has not handled stays within about
 * one window of items (61 bytes each on the wire), however long the flood
 * lasts, instead of growing by the producer's rate. Watched until the
 * station has handled 20,000 items: an event, not a time. */
Test(cluster, a_slow_receiver_holds_back_a_remote_producer, .timeout = 180,
     .fini = cluster_down)
{
    cluster_up(2, LONG_TIMEOUT_MS);
    enum { STREAM = 29, HANDLED = 20000, BOUND = 2 * (8 << 20) / 61 };
    char r[REPLY_MAX], b[REPLY_MAX];
    node_cmd(1, r, "lag 0 50");
    node_cmd(0, r, "flood 0 %s %d", cl.n[1].station[0], STREAM);
    uint64_t most = 0, handled = 0;
    for (uint64_t t0 = now_ms(); handled < HANDLED && now_ms() - t0 < 60000; usleep(20000)) {
        node_cmd(1, r, "stats");
        node_cmd(1, b, "peer alpha");
        handled = field(r, "handled");
        uint64_t taken = field(b, "received");
        uint64_t backlog = taken > handled ? taken - handled : 0;
        most = backlog > most ? backlog : most;
        cr_assert_leq(backlog, BOUND, "beta has taken %lu items its station has not handled "
                      "(%lu handled)", (unsigned long)backlog, (unsigned long)handled);
    }
    cr_assert_geq(handled, HANDLED, "the station works through the flood");
    node_cmd(0, r, "report 0 %d", STREAM);
    cr_assert_gt(field(r, "full"), 0, "alpha's sends past its queue are refused: %s", r);
    fprintf(stderr, "cluster: at most %lu items waited for beta's slow station\n",
            (unsigned long)most);
    node_cmd(0, r, "unflood 0");
    cluster_stop();
}

/* ---- strangers ----------------------------------------------------------------------- */

/* A fourth node whose key no member's file lists: every member refuses it
 * at the handshake and counts it, and the cluster goes on as before. */
Test(cluster, a_node_with_an_unknown_key_is_refused_and_the_others_go_on, .timeout = 120,
     .fini = cluster_down)
{
    cluster_up(3, LONG_TIMEOUT_MS);
    node_start_outsider();
    char r[REPLY_MAX];
    for (int i = 0; i < 3; i++)
        cr_assert(wait_stat(i, "auth_failures", 1, r), "%s refuses delta: %s", cl.n[i].m.name, r);
    for (int i = 0; i < 3; i++) {
        node_cmd(3, r, "peer %s", cl.n[i].m.name);
        cr_assert_eq(field(r, "up"), 0, "delta is let in by %s: %s", cl.n[i].m.name, r);
        node_send(i, "peer delta");
        cr_assert_not(node_reply(i, 0, r), "%s knows no delta: %s", cl.n[i].m.name, r);
    }
    all_up_and_none_lost();
    delivers(0, 1, 10);
    delivers(1, 2, 10);
    node_quit(3);
    cluster_stop();
}

/* Connects to node i's port on loopback and writes `len` bytes. */
static int write_to_port(int i, const char *bytes, size_t len)
{
    int port = atoi(strrchr(cl.n[i].m.endpoint, ':') + 1);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    cr_assert_eq(connect(s, (struct sockaddr *)&to, sizeof to), 0);
    cr_assert_eq(write(s, bytes, len), (ssize_t)len);
    return s;
}

/* Bytes that are not ZMTP on a node's port, and a ZMTP signature followed
 * by junk (which waits for the handshake's time limit): each connection is
 * refused and counted, and the node's links are not touched. */
Test(cluster, clients_speaking_garbage_are_refused_and_the_node_goes_on, .timeout = 120,
     .fini = cluster_down)
{
    cluster_up(3, LONG_TIMEOUT_MS);
    static const char http[] = "GET / HTTP/1.1\r\nHost: alpha\r\n\r\n";
    static const char zmtp[] = "\xff\0\0\0\0\0\0\0\x01\x7f\x03\x01NOT A MECHANISM\0\0\0\0";
    int s1 = write_to_port(0, http, sizeof http);
    int s2 = write_to_port(0, zmtp, sizeof zmtp);
    char r[REPLY_MAX];
    bool counted = wait_stat(0, "protocol_errors", 2, r);
    close(s1);
    close(s2);
    cr_assert(counted, "alpha counts both: %s", r);
    all_up_and_none_lost();
    delivers(1, 0, 10);
    delivers(0, 2, 10);
    cluster_stop();
}
