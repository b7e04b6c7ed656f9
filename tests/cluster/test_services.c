/*
 * test_services.c — asks, names, groups, monitors and links between actors
 * of three node processes on 127.0.0.1 (driver.h; the commands are
 * node/services.c's): what test_remote.c checks between two runtimes of
 * one process, across real processes, with nodes killed (-9) and frozen
 * (SIGSTOP) under their feet.
 */
#include "driver.h"

#include <inttypes.h>
#include <signal.h>

#define ADDR_HEX (2 * sizeof(ac_addr) + 1)

/* Spawns an Oracle on node i (registered as `name` unless NULL) and
 * returns its index there; its address into addr. */
static int oracle_on(int i, const char *name, char addr[ADDR_HEX])
{
    char r[REPLY_MAX];
    node_cmd(i, r, "oracle %s", name ? name : "");
    field_word(r, "addr", addr, ADDR_HEX);
    return (int)field(r, "o");
}

/* The same for a Watcher (a member of `group` unless NULL). */
static int watcher_on(int i, const char *group, char addr[ADDR_HEX])
{
    char r[REPLY_MAX];
    node_cmd(i, r, "watcher %s", group ? group : "");
    field_word(r, "addr", addr, ADDR_HEX);
    return (int)field(r, "w");
}

/* Milliseconds from t0 (µs, the test's clock) to the `key` of reply (µs,
 * the node's: both CLOCK_MONOTONIC of one machine), which must be later. */
static double ms_after(const char *reply, const char *key, uint64_t t0)
{
    uint64_t at = field(reply, key);
    cr_assert_gt(at, t0, "%s after the signal: %s", key, reply);
    return at > t0 ? (double)(at - t0) / 1000.0 : 0.0;
}

/* ---- asks ---------------------------------------------------------------------------- */

/* Each node's Watcher asks the Oracle of the next node from its handler,
 * and each node's main asks the Oracle of the one before with ask_wait:
 * every reply comes back with its fields intact. */
Test(cluster, asks_from_an_actor_and_from_main_get_the_other_nodes_replies, .timeout = 120,
     .fini = cluster_down)
{
    cluster_up(3, LONG_TIMEOUT_MS);
    char oracle[3][ADDR_HEX] = {{0}}, watcher[ADDR_HEX] = {0};
    int w[3] = {0};
    for (int i = 0; i < 3; i++) {
        oracle_on(i, NULL, oracle[i]);
        w[i] = watcher_on(i, NULL, watcher);
    }
    char r[REPLY_MAX], word[64];
    for (int i = 0; i < 3; i++) {
        int j = (i + 1) % 3;
        for (uint32_t n = 1; n <= 5; n++) {
            char text[32];
            snprintf(text, sizeof text, "%s-asks-%s-%u", cl.n[i].m.name, cl.n[j].m.name, n);
            node_cmd(i, r, "ask %d %s %s %u", w[i], oracle[j], text, 1000 * n + (uint32_t)i);
            cr_assert_eq(field_int(r, "status"), 0, "%s: %s", cl.n[i].m.name, r);
            cr_assert_str_eq(field_word(r, "echo", word, sizeof word), text, "%s", r);
            cr_assert_eq(field(r, "twice"), 2 * (1000 * n + (uint64_t)i), "%s", r);
        }
    }
    for (int i = 0; i < 3; i++) {
        int j = (i + 2) % 3;
        for (uint32_t n = 0; n < 20; n++) {
            char text[32];
            snprintf(text, sizeof text, "main-of-%s-%u", cl.n[i].m.name, n);
            node_cmd(i, r, "askwait %s %s %u", oracle[j], text, n);
            cr_assert_eq(field_int(r, "rc"), 0, "%s asks %s: %s", cl.n[i].m.name,
                         cl.n[j].m.name, r);
            cr_assert_str_eq(field_word(r, "echo", word, sizeof word), text, "%s", r);
            cr_assert_eq(field(r, "twice"), 2 * (uint64_t)n, "%s", r);
        }
    }
    cluster_stop();
}

/* ---- names --------------------------------------------------------------------------- */

/* A name on beta is found from alpha's and gamma's main, and its holder
 * answers an ask from main and one from an actor; a name nobody holds
 * there, or one held only on another node, is AC_ENOTFOUND. */
Test(cluster, a_name_on_another_node_is_found_from_main_and_its_holder_answers, .timeout = 120,
     .fini = cluster_down)
{
    cluster_up(3, LONG_TIMEOUT_MS);
    char db[ADDR_HEX] = {0}, found[ADDR_HEX] = {0}, watcher[ADDR_HEX] = {0}, word[64];
    oracle_on(1, "db", db);
    char r[REPLY_MAX];
    for (int i = 0; i < 3; i += 2) {
        node_cmd(i, r, "whereis beta db");
        cr_assert_eq(field_int(r, "rc"), 0, "%s finds beta's db: %s", cl.n[i].m.name, r);
        cr_assert_str_eq(field_word(r, "addr", found, sizeof found), db, "%s", r);
        node_cmd(i, r, "askwait %s by-name 21", found);
        cr_assert_eq(field_int(r, "rc"), 0, "%s", r);
        cr_assert_str_eq(field_word(r, "echo", word, sizeof word), "by-name", "%s", r);
        cr_assert_eq(field(r, "twice"), 42, "%s", r);
        int w = watcher_on(i, NULL, watcher);
        node_cmd(i, r, "ask %d %s from-an-actor 7", w, found);
        cr_assert_eq(field_int(r, "status"), 0, "%s", r);
        cr_assert_eq(field(r, "twice"), 14, "%s", r);

        node_cmd(i, r, "whereis beta nobody");
        cr_assert_eq(field_int(r, "rc"), AC_ENOTFOUND, "an unknown name: %s", r);
    }
    /* Names are per node: gamma's registry knows nothing of beta's db. */
    node_cmd(0, r, "whereis gamma db");
    cr_assert_eq(field_int(r, "rc"), AC_ENOTFOUND, "%s", r);
    cluster_stop();
}

/* ---- groups -------------------------------------------------------------------------- */

/* Waits until node i sees `want` members of `group`. */
static bool wait_members(int i, const char *group, uint64_t want, char reply[REPLY_MAX])
{
    for (uint64_t t0 = now_ms();; usleep(1000)) {
        node_cmd(i, reply, "members %s", group);
        if (field(reply, "n") == want)
            return true;
        if (now_ms() - t0 >= WAIT_MS)
            return false;
    }
}

/* Two members on each node: every node sees all six; a publish from each
 * node in turn reaches every member exactly once (the count it returns is
 * all six) with one record to each other node; a killed node's members
 * leave the others' view, and a publish then reaches the four left. */
Test(cluster, a_group_spans_three_nodes_and_a_publish_reaches_every_member_once,
     .timeout = 120, .fini = cluster_down)
{
    enum { PER_NODE = 2, ALL = 3 * PER_NODE };
    cluster_up(3, LONG_TIMEOUT_MS);
    char addr[ADDR_HEX] = {0}, r[REPLY_MAX];
    int w[3][PER_NODE] = {{0}};
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < PER_NODE; k++)
            w[i][k] = watcher_on(i, "room", addr);
    for (int i = 0; i < 3; i++)
        cr_assert(wait_members(i, "room", ALL, r), "%s sees all members: %s", cl.n[i].m.name, r);

    for (int p = 0; p < 3; p++) {
        uint64_t sent[3] = {0};
        for (int j = 0; j < 3; j++) {
            if (j == p)
                continue;
            node_cmd(p, r, "peer %s", cl.n[j].m.name);
            sent[j] = field(r, "sent");
        }
        uint32_t seq = (uint32_t)p + 1;
        node_cmd(p, r, "publish room %u", seq);
        cr_assert_eq(field(r, "reached"), ALL, "%s's publish: %s", cl.n[p].m.name, r);
        for (int i = 0; i < 3; i++) {
            for (int k = 0; k < PER_NODE; k++) {
                cr_assert(wait_seen(i, w[i][k], "notes", seq, r), "%s's member %d: %s",
                          cl.n[i].m.name, k, r);
                cr_assert_eq(field(r, "notes"), seq, "once each: %s", r);
                cr_assert_eq(field(r, "last_note"), seq, "%s", r);
                cr_assert_eq(field(r, "disorder"), 0, "%s", r);
            }
        }
        for (int j = 0; j < 3; j++) {
            if (j == p)
                continue;
            node_cmd(p, r, "peer %s", cl.n[j].m.name);
            cr_assert_eq(field(r, "sent") - sent[j], 1, "one record from %s to %s: %s",
                         cl.n[p].m.name, cl.n[j].m.name, r);
        }
    }
    /* Nothing came twice late: every member still has one note a publish. */
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < PER_NODE; k++) {
            node_cmd(i, r, "seen %d", w[i][k]);
            cr_assert_eq(field(r, "notes"), 3, "%s's member %d: %s", cl.n[i].m.name, k, r);
        }

    node_signal(2, SIGKILL);
    for (int i = 0; i < 2; i++)
        cr_assert(wait_members(i, "room", ALL - PER_NODE, r), "%s drops gamma's members: %s",
                  cl.n[i].m.name, r);
    node_cmd(0, r, "publish room 4");
    cr_assert_eq(field(r, "reached"), ALL - PER_NODE, "%s", r);
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < PER_NODE; k++) {
            cr_assert(wait_seen(i, w[i][k], "notes", 4, r), "%s", r);
            cr_assert_eq(field(r, "last_note"), 4, "%s", r);
        }
    cluster_stop();
}

/* ---- monitors ------------------------------------------------------------------------ */

/* alpha's Watcher monitors two Oracles on gamma, beta's one; gamma gets
 * `sig`: every monitor fires once with AC_REASON_NOCONNECTION, within
 * limit_ms of the signal unless it is 0 (the times are printed, for the
 * record). */
static void monitors_see_gamma_lost(int sig, const char *what, uint64_t limit_ms)
{
    cluster_up(3, LONG_TIMEOUT_MS);
    char o[2][ADDR_HEX] = {{0}}, addr[ADDR_HEX] = {0}, r[REPLY_MAX];
    for (int k = 0; k < 2; k++)
        oracle_on(2, NULL, o[k]);
    int wa = watcher_on(0, NULL, addr), wb = watcher_on(1, NULL, addr);
    node_cmd(0, r, "watch %d %s", wa, o[0]);
    node_cmd(0, r, "watch %d %s", wa, o[1]);
    node_cmd(1, r, "watch %d %s", wb, o[0]);

    uint64_t t0 = now_us();
    node_signal(2, sig);
    const int watcher[2] = {wa, wb}, downs[2] = {2, 1};
    for (int i = 0; i < 2; i++) {
        cr_assert(wait_seen(i, watcher[i], "downs", (uint64_t)downs[i], r), "%s's downs: %s",
                  cl.n[i].m.name, r);
        cr_assert_eq(field(r, "downs"), (uint64_t)downs[i], "one a monitor: %s", r);
        cr_assert_eq(field_int(r, "down_reason"), AC_REASON_NOCONNECTION, "%s", r);
        cr_assert_eq(field_int(r, "down_code"), 0, "%s", r);
        double ms = ms_after(r, "down_at", t0);
        fprintf(stderr, "cluster: %s's monitor of gamma's oracle down %.1f ms after %s\n",
                cl.n[i].m.name, ms, what);
        if (limit_ms > 0)
            cr_assert_lt(ms, (double)limit_ms, "%s: down after %.1f ms", cl.n[i].m.name, ms);
    }
}

/* At once: by the closed connections, not the link timeout. */
Test(cluster, monitors_of_a_killed_nodes_actor_fire_at_once_with_noconnection, .timeout = 120,
     .fini = cluster_down)
{
    monitors_see_gamma_lost(SIGKILL, "kill -9", AT_ONCE_MS);
    cluster_stop();
}

/* When the link timeout runs out. */
Test(cluster, monitors_of_a_frozen_nodes_actor_fire_with_noconnection, .timeout = 120,
     .fini = cluster_down)
{
    monitors_see_gamma_lost(SIGSTOP, "SIGSTOP", 0);
    node_signal(2, SIGCONT);  /* so that it can quit as the others do */
    char r[REPLY_MAX];
    node_cmd(0, r, "await gamma up %d", WAIT_MS);
    cluster_stop();
}

/* An Oracle on gamma sends N numbered notes to alpha's Watcher and stops:
 * the down is AC_REASON_NORMAL and comes after all N, in order. */
Test(cluster, a_remote_actor_that_stops_is_down_normal_after_every_message_it_sent,
     .timeout = 120, .fini = cluster_down)
{
    enum { N = 2000 };
    cluster_up(3, LONG_TIMEOUT_MS);
    char o[ADDR_HEX] = {0}, watcher[ADDR_HEX] = {0}, r[REPLY_MAX];
    int oi = oracle_on(2, NULL, o);
    int w = watcher_on(0, NULL, watcher);
    node_cmd(0, r, "watch %d %s", w, o);
    node_cmd(2, r, "farewell %d %s %d", oi, watcher, N);
    cr_assert(wait_seen(0, w, "downs", 1, r), "the down came: %s", r);
    cr_assert_eq(field(r, "downs"), 1, "%s", r);
    cr_assert_eq(field_int(r, "down_reason"), AC_REASON_NORMAL, "%s", r);
    cr_assert_eq(field(r, "notes"), N, "every note before the down: %s", r);
    cr_assert_eq(field(r, "last_note"), N, "%s", r);
    cr_assert_eq(field(r, "disorder"), 0, "in order: %s", r);
    cr_assert_eq(field(r, "after_down"), 0, "%s", r);
    cluster_stop();
}

/* ---- links and pending asks ---------------------------------------------------------- */

/* alpha's first Watcher (trapping exits) is linked to an Oracle on gamma,
 * its second waits on an ask gamma never answers (timeout 60 s); gamma is
 * killed: the exit comes with AC_REASON_NOCONNECTION and the ask ends with
 * AC_ENOCONNECTION, each at once (by the closed connections, long before
 * the link timeout or the ask's). */
Test(cluster, a_link_and_a_pending_ask_to_a_killed_node_end_at_once_with_noconnection,
     .timeout = 120, .fini = cluster_down)
{
    enum { HOLD_MS = 60000 };
    cluster_up(3, LONG_TIMEOUT_MS);
    char o[2][ADDR_HEX] = {{0}}, addr[ADDR_HEX] = {0}, r[REPLY_MAX];
    for (int k = 0; k < 2; k++)
        oracle_on(2, NULL, o[k]);
    int linked = watcher_on(0, NULL, addr), asking = watcher_on(0, NULL, addr);
    node_cmd(0, r, "bind %d %s", linked, o[0]);
    node_cmd(0, r, "hold %d %s %d", asking, o[1], HOLD_MS);
    node_cmd(0, r, "seen %d", asking);
    cr_assert_eq(field(r, "holds"), 0, "the ask is pending: %s", r);

    uint64_t t0 = now_us();
    node_signal(2, SIGKILL);
    cr_assert(wait_seen(0, linked, "exits", 1, r), "the exit came: %s", r);
    cr_assert_eq(field(r, "exits"), 1, "%s", r);
    cr_assert_eq(field_int(r, "exit_reason"), AC_REASON_NOCONNECTION, "%s", r);
    double exit_ms = ms_after(r, "exit_at", t0);
    cr_assert(wait_seen(0, asking, "holds", 1, r), "the ask ended: %s", r);
    cr_assert_eq(field(r, "holds"), 1, "%s", r);
    cr_assert_eq(field_int(r, "hold_status"), AC_ENOCONNECTION, "%s", r);
    double ask_ms = ms_after(r, "hold_at", t0);
    fprintf(stderr, "cluster: alpha's link to gamma exits %.1f ms, its pending ask ends %.1f ms "
                    "after kill -9\n", exit_ms, ask_ms);
    cr_assert_lt(exit_ms, (double)AT_ONCE_MS, "exit after %.1f ms", exit_ms);
    cr_assert_lt(ask_ms, (double)AT_ONCE_MS, "the ask ended after %.1f ms", ask_ms);
    cluster_stop();
}
