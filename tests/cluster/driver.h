/*
 * driver.h — the cluster suite's nodes: clusternode processes (node/
 * clusternode.c) on 127.0.0.1, with fresh keys and ports the kernel picked,
 * spoken to one line at a time. Every wait is bounded, and every process a
 * test started is gone when it ends, passed or failed: cluster_down is the
 * tests' .fini and an atexit handler (the TSan runner has no fixtures), and
 * each node dies with the test process (PR_SET_PDEATHSIG) should the test
 * itself be killed.
 */
#ifndef TESTS_CLUSTER_DRIVER_H
#define TESTS_CLUSTER_DRIVER_H

#include "nodes.h"

#include <sys/types.h>

#define CLUSTER_MAX 4
#define STATIONS 2      /* as clusternode spawns */
#define REPLY_MAX 1024
/* The link timeout (ac_node_config.timeout_ms) the tests give their
 * nodes (cluster_up): long, so that no live node, however slowly a loaded
 * machine or a sanitizer runs it, stays silent that long and is declared
 * lost. A frozen node is seen down after about that long; a killed one at
 * once, by its closed connections: seen in under AT_ONCE_MS, the loss was
 * not the timeout's, which never fires sooner than the timeout less a
 * heartbeat (200 ms). How soon a loss is seen is not asserted here (a
 * loaded machine decides it): the guarantee, a second with the
 * default timeout (800 ms), is netns.sh's, outside make test. */
#define LONG_TIMEOUT_MS 10000
#define AT_ONCE_MS (LONG_TIMEOUT_MS - 200)

typedef struct cnode {
    member m;                   /* name, key file, endpoint, public key */
    const char *cluster_file;   /* the file it was started with */
    pid_t pid;                  /* 0: not running */
    int to, from;               /* its stdin, its stdout */
    char buf[4096];             /* what it wrote that is not read yet */
    size_t len;
    uint64_t node;              /* its incarnation, from its ready line */
    char station[STATIONS][2 * sizeof(ac_addr) + 1];  /* their addresses */
} cnode;

typedef struct cluster {
    node_dir d;
    bool have_dir;
    char file[128];             /* the cluster file of its first `size` nodes */
    char outsiders[128];        /* the same and the node past them, for that one */
    int size;
    uint32_t timeout_ms;        /* what every node is given (0: the default) */
    cnode n[CLUSTER_MAX];
} cluster;

extern cluster cl;

/* Starts nodes 0..size-1 (alpha, beta, gamma...) of one cluster file and
 * waits until each sees every other up. timeout_ms as in ac_node_config
 * (LONG_TIMEOUT_MS); every wait of the driver's allows that much more, for
 * a loss the timeout finds. */
void cluster_up(int size, uint32_t timeout_ms);
/* Kills and reaps every node still running and removes the files. */
void cluster_down(void);
/* Quits every node still running, each of which must exit 0 (a sanitizer
 * report in a node fails the test here), then cluster_down. */
void cluster_stop(void);

/* Starts node i (again) with its key and its cluster file, waits for its
 * ready line, and returns its new incarnation. */
uint64_t node_start(int i);
/* The node past the cluster (index `size`): its key is in no file but the
 * one it is started with, which lists it beside the others. */
void node_start_outsider(void);
/* Sends signal sig to node i; SIGKILL also reaps it. */
void node_signal(int i, int sig);
/* Asks node i to quit; it must exit 0 within the wait. */
void node_quit(int i);

/* One command: node_send writes it, node_reply reads the answer (within
 * `wait_ms`, and WAIT_MS more) into reply and returns whether it began with
 * "ok". Sending to several nodes before reading their replies lets them
 * work at once. node_cmd is both, and fails the test unless the answer is
 * "ok". */
void node_send(int i, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool node_reply(int i, uint64_t wait_ms, char reply[REPLY_MAX]);
void node_cmd(int i, char reply[REPLY_MAX], const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The value of key= in a reply (decimal; field_hex: hex); fails the test
 * if the reply has no such key. */
uint64_t field(const char *reply, const char *key);
uint64_t field_hex(const char *reply, const char *key);
/* The same for a signed value (a status, a reason), and for a word, copied
 * into out (up to its next blank). */
int64_t field_int(const char *reply, const char *key);
const char *field_word(const char *reply, const char *key, char *out, size_t cap);

/* WAIT_MS and the nodes' link timeout: the bound of every wait below. */
uint64_t wait_bound_ms(void);

/* Asks station `station` of node i for stream `stream` until key= reaches at
 * least `want` (within wait_bound_ms()); the last reply is left in reply. */
bool wait_report(int i, int station, int stream, const char *key, uint64_t want,
                 char reply[REPLY_MAX]);
/* Asks node i for its stats until key= reaches at least `want`. */
bool wait_stat(int i, const char *key, uint64_t want, char reply[REPLY_MAX]);
/* Asks node i what its Watcher w saw (`seen`) until key= reaches at least
 * `want` (within wait_bound_ms()); the last reply is left in reply. */
bool wait_seen(int i, int w, const char *key, uint64_t want, char reply[REPLY_MAX]);

/* CLOCK_MONOTONIC in µs, the clock of clusternode's at= fields. */
uint64_t now_us(void);

#endif
