/*
 * remote.h — what the two-node benchmarks share (bench/README.md, "Two
 * nodes"): a scratch cluster of two nodes on 127.0.0.1 (fresh keys, free
 * ports, a cluster file in a temporary folder), the peer node run in a
 * child process, a pipe each way between the two processes for the setup
 * (an address, "done"), and bounded waits.
 *
 * The measuring node is "alpha" (this process), the peer "beta" (the
 * child). Nothing is left behind: the child dies with its parent
 * (PR_SET_PDEATHSIG), and the parent, however it ends — a failed check
 * (exit), a signal, its own time limit (alarm) — kills the child and
 * removes the folder. Every wait has a limit.
 */
#ifndef BENCH_REMOTE_H
#define BENCH_REMOTE_H

#include "common.h"

#include <errno.h>
#include <poll.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define REMOTE_WAIT_MS 10000   /* a setup step, or a silence in a measurement */
#define REMOTE_LIMIT_S 300     /* the whole run (alarm) */

enum { ALPHA, BETA };

typedef struct remote_cluster {
    char dir[64];
    char cluster[96];
    char key[2][96];
    char endpoint[2][64];
    pid_t peer;          /* the child, once started; 0 before, -1 once reaped */
    int to_peer, from_peer;  /* this process's ends of the two pipes */
} remote_cluster;

static const char *const remote_names[2] = {"alpha", "beta"};

/* What goes through the pipes: fixed-size records. */
enum { REMOTE_READY = 1, REMOTE_DONE, REMOTE_REPORT };
typedef struct remote_msg {
    uint32_t kind;
    uint32_t pad;
    ac_addr addr;        /* READY: the peer's actor */
    uint64_t v[4];       /* REPORT: the peer's figures, per benchmark */
} remote_msg;

/* The one cluster of this process (static: the cleanup at exit runs
 * after main has returned), and who made it; the cleanup on signals makes
 * only async-signal-safe calls (kill, waitpid, unlink, rmdir). */
static remote_cluster remote_the;
static pid_t remote_owner;

static inline void remote_cleanup_now(void)
{
    remote_cluster *c = &remote_the;
    if (remote_owner == 0 || getpid() != remote_owner)
        return;  /* the child's exit leaves the parent's things alone */
    if (c->peer > 0) {
        kill(c->peer, SIGKILL);  /* also ends a stopped one */
        waitpid(c->peer, NULL, 0);
        c->peer = -1;
    }
    unlink(c->cluster);
    unlink(c->key[ALPHA]);
    unlink(c->key[BETA]);
    rmdir(c->dir);
}

static inline void remote_on_signal(int sig)
{
    static const char late[] = "remote: ran past its time limit\n";
    if (sig == SIGALRM)
        (void)!write(2, late, sizeof late - 1);
    remote_cleanup_now();
    _exit(sig == SIGALRM ? 124 : 128 + sig);
}

/* The folder, two fresh keys, two free ports and the cluster file. */
static inline remote_cluster *remote_setup(void)
{
    remote_cluster *c = &remote_the;
    c->to_peer = c->from_peer = -1;
    snprintf(c->dir, sizeof c->dir, "/tmp/actorc-remote-XXXXXX");
    if (mkdtemp(c->dir) == NULL)
        bench_fail("remote: mkdtemp: %s", strerror(errno));
    snprintf(c->cluster, sizeof c->cluster, "%.63s/cluster", c->dir);
    remote_owner = getpid();
    atexit(remote_cleanup_now);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = remote_on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGALRM, &sa, NULL);
    alarm(REMOTE_LIMIT_S);

    char pub[2][AC_NODE_KEY_LEN + 1];
    int held = -1;
    for (int i = 0; i < 2; i++) {
        snprintf(c->key[i], sizeof c->key[i], "%.63s/%s.key", c->dir, remote_names[i]);
        bench_check(ac_node_keygen(c->key[i], pub[i]), "ac_node_keygen");
        snprintf(c->endpoint[i], sizeof c->endpoint[i], "tcp://127.0.0.1:%d",
                 bench_free_port(i == 0 ? &held : NULL));
    }
    close(held);
    FILE *f = fopen(c->cluster, "w");
    if (f == NULL)
        bench_fail("remote: %s: %s", c->cluster, strerror(errno));
    for (int i = 0; i < 2; i++)
        fprintf(f, "%s %s %s\n", remote_names[i], c->endpoint[i], pub[i]);
    if (fclose(f) != 0)
        bench_fail("remote: %s: %s", c->cluster, strerror(errno));
    return c;
}

/* Starts the peer: a child process that runs peer_main(c, in, out) with
 * its ends of the pipes and exits with what it returns. Call it before
 * this process creates a runtime (a fork copies only the calling thread). */
static inline void remote_start_peer(remote_cluster *c, int (*peer_main)(remote_cluster *c, int in, int out))
{
    int down[2], up[2];
    if (pipe(down) != 0 || pipe(up) != 0)
        bench_fail("remote: pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        bench_fail("remote: fork: %s", strerror(errno));
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(1);  /* the parent died before the line above */
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGALRM, SIG_DFL);
        close(down[1]);
        close(up[0]);
        exit(peer_main(c, down[0], up[1]));
    }
    close(down[0]);
    close(up[1]);
    c->peer = pid;
    c->to_peer = down[1];
    c->from_peer = up[0];
}

static inline void remote_send(int fd, const remote_msg *m)
{
    const char *p = (const char *)m;
    for (size_t done = 0; done < sizeof *m;) {
        ssize_t n = write(fd, p + done, sizeof *m - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            bench_fail("remote: the other process is gone (write: %s)", strerror(errno));
        done += (size_t)n;
    }
}

/* One record within timeout_ms; false on timeout or end of file. */
static inline bool remote_recv(int fd, remote_msg *m, int timeout_ms)
{
    char *p = (char *)m;
    double deadline = bench_now() + timeout_ms * 1e-3;
    for (size_t done = 0; done < sizeof *m;) {
        int left = (int)((deadline - bench_now()) * 1e3);
        struct pollfd pfd = {fd, POLLIN, 0};
        int r = left > 0 ? poll(&pfd, 1, left) : 0;
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        ssize_t n = read(fd, p + done, sizeof *m - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        done += (size_t)n;
    }
    return true;
}

/* A runtime (AC_WORKERS as for every benchmark) that is node `self`;
 * timeout_ms as in ac_node_config (0: the default), the heartbeat a
 * quarter of it, as with the defaults. */
static inline ac_runtime *remote_node(const remote_cluster *c, int self, uint32_t timeout_ms)
{
    ac_runtime *rt = bench_runtime();
    ac_node_config cfg = {.name = remote_names[self], .cluster_file = c->cluster,
                          .secret_key_file = c->key[self], .timeout_ms = timeout_ms,
                          .heartbeat_ms = timeout_ms / 4};
    char why[256];
    int rc = ac_node_start(rt, &cfg, why, sizeof why);
    if (rc != 0)
        bench_fail("remote: ac_node_start %s: %s (%s)", remote_names[self], why, ac_strerror(rc));
    return rt;
}

/* The other node as rt sees it; false when it is not a peer. */
static inline bool remote_peer_info(ac_runtime *rt, int other, ac_peer_info *out)
{
    ac_peer_info all[2];
    size_t n = ac_node_peers(rt, all, 2);
    for (size_t i = 0; i < n && i < 2; i++) {
        if (strcmp(all[i].name, remote_names[other]) == 0) {
            *out = all[i];
            return true;
        }
    }
    return false;
}

/* Waits until rt sees the other node up. */
static inline void remote_wait_up(ac_runtime *rt, int other)
{
    for (double t0 = bench_now(); bench_now() - t0 < REMOTE_WAIT_MS * 1e-3;) {
        ac_peer_info p;
        if (remote_peer_info(rt, other, &p) && p.up)
            return;
        usleep(1000);
    }
    bench_fail("remote: %s did not come up within %d ms", remote_names[other], REMOTE_WAIT_MS);
}

/* The peer's side of remote_begin: its node (beta), up with alpha ... */
static inline ac_runtime *remote_peer_node(const remote_cluster *c, uint32_t timeout_ms)
{
    ac_runtime *rt = remote_node(c, BETA, timeout_ms);
    remote_wait_up(rt, ALPHA);
    return rt;
}

/* ... then the address of its actor, to the measuring node. */
static inline void remote_peer_ready(int out, const ac_addr *actor)
{
    remote_msg m = {.kind = REMOTE_READY, .addr = *actor};
    remote_send(out, &m);
}

/* The measuring node's start: the peer process (running peer_main), then
 * this node (alpha), both up, and the address of the peer's actor, which
 * the peer passes back. */
static inline ac_runtime *remote_begin(remote_cluster *c,
                                       int (*peer_main)(remote_cluster *c, int in, int out),
                                       uint32_t timeout_ms, const char *bench, ac_addr *actor)
{
    remote_start_peer(c, peer_main);
    ac_runtime *rt = remote_node(c, ALPHA, timeout_ms);
    remote_wait_up(rt, BETA);
    remote_msg ready;
    if (!remote_recv(c->from_peer, &ready, REMOTE_WAIT_MS) || ready.kind != REMOTE_READY)
        bench_fail("%s: the peer did not say where its actor is", bench);
    *actor = ready.addr;
    return rt;
}

/* VmHWM of a process, in kB (0 when it cannot be read). */
static inline long remote_peak_rss_kb(pid_t pid)
{
    char path[64], line[128];
    long kb = 0;
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

/* The state letter of /proc/PID/stat ('?' when there is no such process). */
static inline char remote_proc_state(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return '?';
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *close_paren = strrchr(buf, ')');
    return close_paren && close_paren[1] == ' ' ? close_paren[2] : '?';
}

/* Waits (bounded) for the child to exit; returns its wait status. */
static inline int remote_reap(remote_cluster *c)
{
    int status = 0;
    for (double t0 = bench_now(); bench_now() - t0 < REMOTE_WAIT_MS * 1e-3; usleep(1000)) {
        pid_t r = waitpid(c->peer, &status, WNOHANG);
        if (r == c->peer) {
            c->peer = -1;
            return status;
        }
        if (r < 0)
            bench_fail("remote: waitpid: %s", strerror(errno));
    }
    bench_fail("remote: the peer process did not exit within %d ms", REMOTE_WAIT_MS);
}

/* The peer's side of the usual end: waits for DONE from the parent (its
 * end of the pipe closing ends the peer), then reports `v`. */
static inline void remote_peer_wait_done(int in)
{
    remote_msg m;
    if (!remote_recv(in, &m, REMOTE_LIMIT_S * 1000) || m.kind != REMOTE_DONE)
        exit(1);
}

static inline void remote_peer_report(int out, const uint64_t v[4])
{
    remote_msg m;
    memset(&m, 0, sizeof m);
    m.kind = REMOTE_REPORT;
    memcpy(m.v, v, sizeof m.v);
    remote_send(out, &m);
}

/* The parent's: asks for the peer's report, then for its exit. */
static inline void remote_finish(remote_cluster *c, remote_msg *report, long *peer_rss_kb)
{
    *peer_rss_kb = remote_peak_rss_kb(c->peer);
    remote_msg m;
    memset(&m, 0, sizeof m);
    m.kind = REMOTE_DONE;
    remote_send(c->to_peer, &m);
    if (!remote_recv(c->from_peer, report, REMOTE_WAIT_MS) || report->kind != REMOTE_REPORT)
        bench_fail("remote: no report from the peer");
    int status = remote_reap(c);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        bench_fail("remote: the peer process failed (wait status %d)", status);
}

/* Waits for `done` to be posted by a handler, as long as `progress` (a
 * count the handlers advance) moves: REMOTE_WAIT_MS without a change fails
 * the run, naming `what`. */
static inline void remote_wait_done(sem_t *done, _Atomic uint64_t *progress, const char *what)
{
    uint64_t last = atomic_load(progress);
    double moved = bench_now();
    for (;;) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100 * 1000 * 1000;
        if (ts.tv_nsec >= 1000 * 1000 * 1000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000 * 1000 * 1000;
        }
        if (sem_timedwait(done, &ts) == 0)
            return;
        uint64_t now = atomic_load(progress);
        if (now != last) {
            last = now;
            moved = bench_now();
        } else if (bench_now() - moved > REMOTE_WAIT_MS * 1e-3) {
            bench_fail("remote: %s: stuck at %" PRIu64 " for %d ms", what, now, REMOTE_WAIT_MS);
        }
    }
}

/* The output line; peak_rss_kb is the larger of the two nodes'. */
static inline void remote_report(const char *name, const char *params, double seconds,
                                 double messages, long peer_rss_kb)
{
    long own = bench_peak_rss_kb();
    bench_report_rss(name, params, seconds, messages, own > peer_rss_kb ? own : peer_rss_kb);
}

#endif
