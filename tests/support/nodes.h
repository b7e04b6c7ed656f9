/*
 * nodes.h — what the suites need to run nodes in one test process: a
 * scratch folder, members with fresh keys and free loopback ports, a
 * cluster file, and bounded waits on what the nodes see.
 */
#ifndef TESTS_SUPPORT_NODES_H
#define TESTS_SUPPORT_NODES_H

#include <actorc.h>
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define WAIT_MS 10000

typedef struct node_dir {
    char path[64];
} node_dir;

static inline void make_dir(node_dir *d)
{
    snprintf(d->path, sizeof d->path, "/tmp/actorc-node-XXXXXX");
    cr_assert_not_null(mkdtemp(d->path));
}

static inline void remove_dir(node_dir *d)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d->path);
    cr_assert_eq(system(cmd), 0);
}

/* A TCP port nobody listens on now (the kernel's pick), and not one this
 * process was given before: the kernel may hand a port it just freed out
 * again, and two members of one cluster must not share one. */
static inline int free_port(void)
{
    static int given[256];
    static unsigned ngiven;
    for (;;) {
        int s = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof a;
        cr_assert_eq(bind(s, (struct sockaddr *)&a, sizeof a), 0);
        cr_assert_eq(getsockname(s, (struct sockaddr *)&a, &len), 0);
        close(s);
        int port = ntohs(a.sin_port);
        bool seen = false;
        for (unsigned i = 0; i < ngiven && !seen; i++)
            seen = given[i] == port;
        if (seen)
            continue;
        if (ngiven < sizeof given / sizeof given[0])
            given[ngiven++] = port;  /* a test makes a handful */
        return port;
    }
}

typedef struct member {
    char name[16];
    char key_file[96];
    char endpoint[64];
    char public_key[AC_NODE_KEY_LEN + 1];
} member;

static inline void make_member(node_dir *d, member *m, const char *name)
{
    snprintf(m->name, sizeof m->name, "%s", name);
    snprintf(m->key_file, sizeof m->key_file, "%s/%s.key", d->path, name);
    snprintf(m->endpoint, sizeof m->endpoint, "tcp://127.0.0.1:%d", free_port());
    cr_assert_eq(ac_node_keygen(m->key_file, m->public_key), 0);
}

/* Writes a cluster file of `n` members; returns its path in out. */
static inline void write_cluster(node_dir *d, const char *file, const member *ms, int n, char *out,
                          size_t cap)
{
    snprintf(out, cap, "%s/%s", d->path, file);
    FILE *f = fopen(out, "w");
    cr_assert_not_null(f);
    fprintf(f, "# a test cluster\n");
    for (int i = 0; i < n; i++)
        fprintf(f, "%s  %s  %s   # node %d\n", ms[i].name, ms[i].endpoint, ms[i].public_key, i);
    fclose(f);
}

static inline ac_runtime *start_node(const member *m, const char *cluster)
{
    ac_config c;
    ac_config_init(&c);
    c.workers = 1;
    ac_runtime *rt = NULL;
    cr_assert_eq(ac_runtime_create(&rt, &c), 0);
    /* Actors failed on purpose are not reported (failure.c). */
    ac_runtime_set_failure_hook(rt, ac_failure_quiet, NULL);
    ac_node_config cfg = {.name = m->name, .cluster_file = cluster,
                          .secret_key_file = m->key_file};
    char why[256];
    int rc = ac_node_start(rt, &cfg, why, sizeof why);
    cr_assert_eq(rc, 0, "ac_node_start %s: %s", m->name, why);
    return rt;
}

static inline bool peer_of(ac_runtime *rt, const char *name, ac_peer_info *out)
{
    ac_peer_info all[8];
    size_t n = ac_node_peers(rt, all, 8);
    for (size_t i = 0; i < n && i < 8; i++) {
        if (strcmp(all[i].name, name) == 0) {
            *out = all[i];
            return true;
        }
    }
    return false;
}

static inline uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Polls, every millisecond and for WAIT_MS at most, until `cond` holds:
 * a statement, after which the caller asserts `cond` (the bound only
 * keeps a broken run from hanging). */
#define WAIT_FOR(cond) \
    for (uint64_t t0_ = now_ms(); !(cond) && now_ms() - t0_ < WAIT_MS; usleep(1000))

/* Waits until rt sees `name` up (or down) with node id `node` (0: any). */
static inline bool wait_peer(ac_runtime *rt, const char *name, bool up, uint64_t node)
{
    for (uint64_t t0 = now_ms(); now_ms() - t0 < WAIT_MS;) {
        ac_peer_info p = {0};
        if (peer_of(rt, name, &p) && p.up == up && (node == 0 || p.node == node))
            return true;
        usleep(2000);
    }
    return false;
}

/* Two nodes of one cluster, alpha and beta, each seeing the other up. */
typedef struct pair_of_nodes {
    node_dir d;
    member a, b;
    char cluster[128];
    ac_runtime *ra, *rb;
} pair_of_nodes;

/* Both nodes with `base`'s settings (its name and files are filled in). */
static inline void start_pair_with(pair_of_nodes *p, const ac_node_config *base)
{
    make_dir(&p->d);
    make_member(&p->d, &p->a, "alpha");
    make_member(&p->d, &p->b, "beta");
    write_cluster(&p->d, "cluster", (member[]){p->a, p->b}, 2, p->cluster, sizeof p->cluster);
    ac_runtime **rts[] = {&p->ra, &p->rb};
    const member *ms[] = {&p->a, &p->b};
    for (int i = 0; i < 2; i++) {
        ac_config c;
        ac_config_init(&c);
        c.workers = 1;
        cr_assert_eq(ac_runtime_create(rts[i], &c), 0);
        /* Actors failed on purpose are not reported (failure.c). */
        ac_runtime_set_failure_hook(*rts[i], ac_failure_quiet, NULL);
        ac_node_config cfg = *base;
        cfg.name = ms[i]->name;
        cfg.cluster_file = p->cluster;
        cfg.secret_key_file = ms[i]->key_file;
        char why[256];
        cr_assert_eq(ac_node_start(*rts[i], &cfg, why, sizeof why), 0, "%s", why);
    }
    cr_assert(wait_peer(p->ra, "beta", true, ac_runtime_node(p->rb)), "alpha sees beta up");
    cr_assert(wait_peer(p->rb, "alpha", true, ac_runtime_node(p->ra)), "beta sees alpha up");
}

/* timeout_ms, queue_bound: as in ac_node_config (0: the defaults). Tests
 * about delivery give a long timeout, so that a machine busy with
 * sanitizers cannot make a live link look lost. */
static inline void start_pair(pair_of_nodes *p, uint32_t timeout_ms, uint32_t queue_bound)
{
    ac_node_config base = {.timeout_ms = timeout_ms, .queue_bound = queue_bound};
    start_pair_with(p, &base);
}

/* Either runtime may be gone already (NULL: a test destroyed it). */
static inline void stop_pair(pair_of_nodes *p)
{
    if (p->rb != NULL)
        ac_runtime_destroy(p->rb);
    if (p->ra != NULL)
        ac_runtime_destroy(p->ra);
    remove_dir(&p->d);
}

#endif
