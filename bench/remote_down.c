/*
 * remote_down kill|stop TIMEOUT_MS — bench/README.md ("Two nodes"): how
 * long after the peer node's process gets SIGKILL (kill) or SIGSTOP (stop:
 * frozen, its sockets stay open) this node notices. Both nodes run with
 * ac_node_config.timeout_ms = TIMEOUT_MS (800 is the default) and a
 * heartbeat of a quarter of it. A watcher on this node monitors an actor
 * of the peer (ac_monitor); reported: seconds from the signal until the
 * watcher's handler has its `down`; msgs_per_sec is 0.
 *
 * Verified: no down before the signal; then exactly one, for the watched
 * actor and its monitor, with AC_REASON_NOCONNECTION; the peer is then
 * down (one loss) and its process a zombie (kill) or stopped (stop); a
 * stopped peer is killed at the end.
 */
#include "remote.h"
#include "remote_down.actor.h"

static sem_t poked;  /* in the peer, for its main */

int remote_down_Watched_on_poke(remote_down_Watched *self, ac_ctx *cx,
                                const remote_down_Watched_poke *m)
{
    (void)self;
    (void)cx;
    (void)m;
    sem_post(&poked);
    return 0;
}

static _Atomic uint64_t downs;
static _Atomic(double) down_at;
static _Atomic int32_t down_reason;
static _Atomic uint64_t down_ref;
static ac_addr down_who;  /* read by main after got_down */
static sem_t got_down;

int remote_down_Watcher_on_down(remote_down_Watcher *self, ac_ctx *cx, const ac_down *m)
{
    (void)self;
    (void)cx;
    double now = bench_now();
    if (atomic_load(&downs) == 0) {
        atomic_store(&down_at, now);
        atomic_store(&down_reason, m->reason);
        atomic_store(&down_ref, m->ref);
        down_who = m->who;
    }
    atomic_fetch_add(&downs, 1);
    sem_post(&got_down);
    return 0;
}

static uint32_t timeout_ms;

/* The peer node: the watched actor, its address to the parent, word that
 * it was poked; then it waits for the signal (or for the parent to go). */
static int watched_node(remote_cluster *c, int in, int out)
{
    sem_init(&poked, 0, 0);
    ac_runtime *rt = remote_peer_node(c, timeout_ms);
    remote_down_Watched_ref watched;
    bench_check(remote_down_Watched_spawn(ac_runtime_ctx(rt), &watched), "spawn");
    remote_peer_ready(out, &watched.addr);
    struct timespec limit;
    clock_gettime(CLOCK_REALTIME, &limit);
    limit.tv_sec += REMOTE_WAIT_MS / 1000;
    while (sem_timedwait(&poked, &limit) != 0)
        if (errno != EINTR)
            return 1;
    remote_peer_report(out, (uint64_t[4]){1});
    remote_peer_wait_done(in);
    ac_runtime_destroy(rt);
    return 0;
}

/* Waits (bounded) for the peer's process to reach one of `states`. */
static char wait_state(pid_t pid, const char *states)
{
    char st = remote_proc_state(pid);
    for (int i = 0; i < 5000 && strchr(states, st) == NULL; i++) {
        usleep(1000);
        st = remote_proc_state(pid);
    }
    return st;
}

int main(int argc, char **argv)
{
    const char *usage = "kill|stop TIMEOUT_MS (800: the default)";
    bool kill_mode = argc > 1 && strcmp(argv[1], "kill") == 0;
    if (argc != 3 || (!kill_mode && strcmp(argv[1], "stop") != 0))
        bench_fail("usage: %s %s", argv[0], usage);
    uint64_t t = bench_arg(argc, argv, 2, usage);
    if (t < 4 || t > 60000)
        bench_fail("remote_down: TIMEOUT_MS from 4 to 60000");
    timeout_ms = (uint32_t)t;

    remote_cluster *c = remote_setup();
    remote_msg ready;
    ac_runtime *rt = remote_begin(c, watched_node, timeout_ms, "remote_down", &ready.addr);
    long peer_rss = remote_peak_rss_kb(c->peer);
    char before = remote_proc_state(c->peer);
    if (before != 'S' && before != 'R')
        bench_fail("remote_down: the peer's process is in state %c before the signal", before);
    ac_peer_info p = {0};
    if (!remote_peer_info(rt, BETA, &p) || !p.up || p.losses != 0)
        bench_fail("remote_down: the peer is not up before the signal");
    sem_init(&got_down, 0, 0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    remote_down_Watcher_ref watcher;
    bench_check(remote_down_Watcher_spawn(cx, &watcher), "spawn");
    uint64_t ref = 0;
    bench_check(ac_monitor(cx, &watcher.addr, &ready.addr, &ref), "ac_monitor");
    /* A poke after the monitor travels behind it: once the peer has
     * handled it, the monitor is in place there too. */
    bench_check(remote_down_Watched_send_poke(cx, remote_down_Watched_ref_of(ready.addr)), "send");
    remote_msg report;
    if (!remote_recv(c->from_peer, &report, REMOTE_WAIT_MS) || report.kind != REMOTE_REPORT)
        bench_fail("remote_down: the watched actor was not poked");
    if (atomic_load(&downs) != 0)
        bench_fail("remote_down: a down (reason %d) before the signal", (int)atomic_load(&down_reason));

    double t0 = bench_now();
    if (kill(c->peer, kill_mode ? SIGKILL : SIGSTOP) != 0)
        bench_fail("remote_down: kill: %s", strerror(errno));
    /* The down must come within the timeout, a heartbeat and a margin. */
    struct timespec limit;
    clock_gettime(CLOCK_REALTIME, &limit);
    limit.tv_sec += (time_t)(timeout_ms * 5 / 4 / 1000 + 5);
    while (sem_timedwait(&got_down, &limit) != 0)
        if (errno != EINTR)
            bench_fail("remote_down: no down within 1.25 TIMEOUT_MS + 5 s of the signal");
    double t1 = atomic_load(&down_at);
    if (atomic_load(&down_reason) != AC_REASON_NOCONNECTION || atomic_load(&down_ref) != ref ||
        !ac_addr_eq(&down_who, &ready.addr))
        bench_fail("remote_down: the down is not the monitor's with AC_REASON_NOCONNECTION"
                   " (reason %d)", (int)atomic_load(&down_reason));
    if (!remote_peer_info(rt, BETA, &p) || p.up)
        bench_fail("remote_down: the peer is still up after its down");
    char after = wait_state(c->peer, kill_mode ? "Z" : "Tt");
    if (strchr(kill_mode ? "Z" : "Tt", after) == NULL)
        bench_fail("remote_down: the peer's process is in state %c after the notice", after);
    if (p.losses != 1)
        bench_fail("remote_down: %" PRIu64 " losses of the peer, expected 1", p.losses);
    if (!kill_mode)
        kill(c->peer, SIGKILL);
    int status = remote_reap(c);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
        bench_fail("remote_down: the peer's process ended with wait status %d", status);
    ac_runtime_destroy(rt);
    if (atomic_load(&downs) != 1)
        bench_fail("remote_down: %" PRIu64 " downs, expected 1", atomic_load(&downs));

    char params[24];
    snprintf(params, sizeof params, "%" PRIu32, timeout_ms);
    remote_report(kill_mode ? "remote_down_kill" : "remote_down_stop", params, t1 - t0, 0, peer_rss);
    return 0;
}
