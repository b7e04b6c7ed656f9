/*
 * cluster — three nodes of one actor system, as three processes on this
 * machine (docs/NODES.md):
 *
 *   1. node a (this process) makes keys and a cluster file, and starts
 *      nodes b and c (this program again, `cluster node NAME DIR`);
 *   2. it finds the greeter of each by name on its node and asks it a
 *      question: the ask and its reply cross nodes;
 *   3. it publishes one chat line to the "chat" group, whose members live
 *      on all three nodes (one frame per node), and asks each greeter
 *      again how many lines it heard;
 *   4. it monitors c's greeter, kills c with SIGKILL and times the down
 *      (AC_REASON_NOCONNECTION);
 *   5. it starts c again: a new incarnation, which rejoins by itself, and
 *      is asked again;
 *   6. it stops b and c and checks everything it saw.
 *
 *   usage: cluster             the demo (make cluster-demo)
 *          cluster node NAME DIR   one node of DIR/cluster (started by the demo)
 */
#include "cluster.actor.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WAIT_MS 10000

static const char *const node_names[] = {"a", "b", "c"};

/* ---- Greeter ------------------------------------------------------------------ */

int cluster_Greeter_hook_start(cluster_Greeter *self, ac_ctx *cx,
                               const cluster_Greeter_start_args *args)
{
    size_t n = args->node.len < sizeof self->node - 1 ? args->node.len : sizeof self->node - 1;
    memcpy(self->node, args->node.data, n);
    int rc = ac_register(cx, "greeter", ac_self(cx));
    return rc != 0 ? rc : ac_group_join(cx, "chat", ac_self(cx));
}

int cluster_Greeter_on_hello(cluster_Greeter *self, ac_ctx *cx, const cluster_Greeter_hello *m)
{
    printf("[%s] hello from %.*s\n", (const char *)self->node, (int)m->from.len, m->from.data);
    fflush(stdout);
    return cluster_Greeter_reply_hello(cx, &m->reply_to, ac_string_of((const char *)self->node),
                                       self->heard);
}

int cluster_Greeter_on_say(cluster_Greeter *self, ac_ctx *cx AC_UNUSED,
                           const cluster_Greeter_say *m)
{
    self->heard++;
    printf("[%s] %.*s says: %.*s\n", (const char *)self->node, (int)m->from.len, m->from.data,
           (int)m->text.len, m->text.data);
    fflush(stdout);
    return 0;
}

/* ---- one node ---------------------------------------------------------------------- */

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static ac_runtime *start_node(const char *name, const char *dir)
{
    char cluster[512], key[512], why[256];
    snprintf(cluster, sizeof cluster, "%s/cluster", dir);
    snprintf(key, sizeof key, "%s/%s.key", dir, name);
    ac_runtime *rt = NULL;
    if (ac_runtime_create(&rt, NULL) != 0)
        return NULL;
    ac_node_config cfg = {.name = name, .cluster_file = cluster, .secret_key_file = key};
    int rc = ac_node_start(rt, &cfg, why, sizeof why);
    cluster_Greeter_ref g;
    if (rc == 0)
        rc = cluster_Greeter_spawn(ac_runtime_ctx(rt), &g, ac_string_of(name));
    if (rc != 0) {
        fprintf(stderr, "cluster: node %s: %s\n", name, rc == AC_EINVAL ? why : ac_strerror(rc));
        ac_runtime_destroy(rt);
        return NULL;
    }
    return rt;
}

static volatile sig_atomic_t stop_requested;

static void on_term(int sig)
{
    (void)sig;
    stop_requested = 1;
}

/* `cluster node NAME DIR`: a node that serves until SIGTERM, or until the
 * demo that started it is gone. */
static int run_node(const char *name, const char *dir)
{
    pid_t demo = getppid();
    signal(SIGTERM, on_term);
    ac_runtime *rt = start_node(name, dir);
    if (rt == NULL)
        return 1;
    while (!stop_requested && getppid() == demo)
        usleep(10000);
    ac_runtime_destroy(rt);
    return 0;
}

/* ---- the demo: node a ----------------------------------------------------------------- */

static const char *self_path;
static char dir[64];

/* A loopback port nobody listens on, held open in *fd until the caller
 * closes it: the three are drawn while all are held, so no two are one. */
static int free_port(int *fd)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    int port = -1;
    if (s >= 0 && bind(s, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(s, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    *fd = s;
    return port;
}

/* Keys for the three nodes and the cluster file naming them. */
static int make_cluster(void)
{
    snprintf(dir, sizeof dir, "/tmp/actorc-cluster-XXXXXX");
    if (mkdtemp(dir) == NULL)
        return -1;
    char path[128];
    snprintf(path, sizeof path, "%s/cluster", dir);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    fprintf(f, "# name  endpoint  public key\n");
    int fds[3] = {-1, -1, -1}, rc = 0;
    for (int i = 0; i < 3 && rc == 0; i++) {
        char key[128], pub[AC_NODE_KEY_LEN + 1];
        snprintf(key, sizeof key, "%s/%s.key", dir, node_names[i]);
        int port = free_port(&fds[i]);
        if (port < 0 || ac_node_keygen(key, pub) != 0)
            rc = -1;
        else
            fprintf(f, "%s tcp://127.0.0.1:%d %s\n", node_names[i], port, pub);
    }
    for (int i = 0; i < 3; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    return fclose(f) != 0 ? -1 : rc;
}

static pid_t spawn_node(const char *name)
{
    pid_t pid = fork();
    if (pid == 0) {
        execl(self_path, self_path, "node", name, dir, (char *)NULL);
        _exit(127);
    }
    return pid;
}

static ac_peer_info peer(ac_runtime *rt, const char *name)
{
    ac_peer_info all[4], none = {0};
    size_t n = ac_node_peers(rt, all, 4);
    for (size_t i = 0; i < n && i < 4; i++)
        if (strcmp(all[i].name, name) == 0)
            return all[i];
    return none;
}

/* Waits until `name` is up with an incarnation other than `not`. */
static bool wait_up(ac_runtime *rt, const char *name, uint64_t not)
{
    for (uint64_t t0 = now_ms(); now_ms() - t0 < WAIT_MS; usleep(2000)) {
        ac_peer_info p = peer(rt, name);
        if (p.up && p.node != not)
            return true;
    }
    return false;
}

/* Finds the greeter of `node` by name there and asks it who it is. */
static bool greet(ac_ctx *cx, const char *node, cluster_Greeter_ref *out, uint32_t *heard)
{
    cluster_Greeter_ref g;
    int rc = ac_whereis_on(cx, node, "greeter", 5000, &g.addr);
    cluster_Greeter_hello_reply *r = NULL;
    if (rc == 0)
        rc = cluster_Greeter_ask_hello_wait(cx, g, ac_string_of("a"), 5000, &r);
    if (rc != 0) {
        fprintf(stderr, "cluster: asking node %s's greeter: %s\n", node, ac_strerror(rc));
        return false;
    }
    printf("a: node %s's greeter answered from node %.*s (heard %u)\n", node, (int)r->node.len,
           r->node.data, r->heard);
    bool ok = r->node.len == strlen(node) && memcmp(r->node.data, node, r->node.len) == 0;
    if (heard != NULL)
        *heard = r->heard;
    ac_reply_free(cx, r);
    if (out != NULL)
        *out = g;
    return ok;
}

static bool wait_members(ac_ctx *cx, size_t n)
{
    for (uint64_t t0 = now_ms(); now_ms() - t0 < WAIT_MS; usleep(2000))
        if (ac_group_members(cx, "chat", NULL, 0) == n)
            return true;
    return false;
}

static int demo(void)
{
    if (make_cluster() != 0) {
        fprintf(stderr, "cluster: cannot make the keys and cluster file in /tmp\n");
        return 1;
    }
    ac_runtime *rt = start_node("a", dir);
    if (rt == NULL)
        return 1;
    ac_ctx *cx = ac_runtime_ctx(rt);
    pid_t pids[3] = {0, spawn_node("b"), spawn_node("c")};
    bool ok = wait_up(rt, "b", 0) && wait_up(rt, "c", 0);
    printf("a: nodes b and c are up\n");

    /* 2. an ask across nodes, to each greeter found by name */
    cluster_Greeter_ref on_c;
    ok = ok && greet(cx, "b", NULL, NULL) && greet(cx, "c", &on_c, NULL);

    /* 3. one line to the group, whose three members live on three nodes */
    ok = ok && wait_members(cx, 3);
    int reached = ok ? cluster_Greeter_publish_say(cx, "chat", ac_string_of("a"),
                                                   ac_string_of("hello, everyone")) : 0;
    printf("a: the chat line reached %d members\n", reached);
    ok = ok && reached == 3;
    /* Asked after the line, on the same links: each has heard it by then. */
    uint32_t heard_b = 0, heard_c = 0;
    ok = ok && greet(cx, "b", NULL, &heard_b) && greet(cx, "c", NULL, &heard_c) &&
         heard_b == 1 && heard_c == 1;

    /* 4. c is killed: the monitor of its greeter fires, noconnection */
    ac_inbox *ib = NULL;
    ok = ok && ac_inbox_create(cx, &ib) == 0 && ac_monitor(cx, ac_inbox_addr(ib), &on_c.addr, NULL) == 0;
    uint64_t old_c = peer(rt, "c").node, t0 = now_ms();
    if (ok)
        kill(pids[2], SIGKILL);
    waitpid(pids[2], NULL, 0);
    ac_envelope *e = NULL;
    ok = ok && ac_inbox_recv(cx, ib, AC_TAG_DOWN, WAIT_MS, &e) == 0;
    if (ok) {
        const ac_down *d = ac_envelope_payload(e);
        printf("a: node c killed; down for its greeter after %llu ms (reason %s)\n",
               (unsigned long long)(now_ms() - t0),
               d->reason == AC_REASON_NOCONNECTION ? "noconnection" : "other");
        ok = d->reason == AC_REASON_NOCONNECTION;
        ac_envelope_free(cx, e);
    }
    ok = ok && wait_members(cx, 2);
    printf("a: the chat group has %zu members\n", ac_group_members(cx, "chat", NULL, 0));

    /* 5. c again: a new incarnation, back in the group by itself */
    pids[2] = spawn_node("c");
    ok = ok && wait_up(rt, "c", old_c);
    printf("a: node c is back (a new incarnation: %s)\n", peer(rt, "c").node != old_c ? "yes" : "no");
    uint32_t heard = 99;
    ok = ok && greet(cx, "c", NULL, &heard) && heard == 0 && wait_members(cx, 3);

    /* 6. done */
    if (ib != NULL)
        ac_inbox_destroy(cx, ib);
    for (int i = 1; i < 3; i++) {
        kill(pids[i], SIGTERM);
        waitpid(pids[i], NULL, 0);
    }
    ac_runtime_destroy(rt);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        ok = false;
    printf("cluster: %s\n", ok ? "ok" : "FAILED");
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    self_path = argv[0];
    if (argc == 4 && strcmp(argv[1], "node") == 0)
        return run_node(argv[2], argv[3]);
    if (argc != 1) {
        fprintf(stderr, "usage: cluster\n       cluster node NAME DIR\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    return demo();
}
