/*
 * remote_down kill|stop TIMEOUT_MS — bench/README.md ("Two nodes"): how
 * long after the peer node's process gets SIGKILL (kill) or SIGSTOP (stop:
 * frozen, its sockets stay open) this node notices. Both nodes run with
 * ac_node_config.timeout_ms = TIMEOUT_MS (800 is the default) and a
 * heartbeat of a quarter of it. Reported: seconds from the signal to the
 * notice; msgs_per_sec is 0.
 *
 * What is timed for now is the peer going down: ac_node_peers shows the
 * peer not `up`, polled every millisecond. Monitors across nodes (a `down`
 * with AC_REASON_NOCONNECTION for a watched actor there) are being built;
 * until then the line is named remote_peer_down_MODE, and once they are in,
 * this program will watch the actor it is given (the peer's Watched) and
 * print remote_down_MODE.
 *
 * Verified: the peer was up before the signal and went down once after it
 * (one loss), and its process is then a zombie (kill) or stopped (stop);
 * a stopped peer is killed at the end.
 */
#include "remote.h"
#include "remote_down.actor.h"

int remote_down_Watched_on_poke(remote_down_Watched *self, ac_ctx *cx,
                                const remote_down_Watched_poke *m)
{
    (void)self;
    (void)cx;
    (void)m;
    return 0;
}

static uint32_t timeout_ms;

/* The peer node: the watched actor, its address to the parent; then it
 * waits for the signal (or for the parent to go). */
static int watched_node(remote_cluster *c, int in, int out)
{
    ac_runtime *rt = remote_node(c, BETA, timeout_ms);
    remote_wait_up(rt, ALPHA);
    remote_down_Watched_ref watched;
    bench_check(remote_down_Watched_spawn(ac_runtime_ctx(rt), &watched), "spawn");
    remote_msg m = {.kind = REMOTE_READY, .addr = watched.addr};
    remote_send(out, &m);
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
    remote_start_peer(c, watched_node);
    ac_runtime *rt = remote_node(c, ALPHA, timeout_ms);
    remote_wait_up(rt, BETA);
    remote_msg ready;
    if (!remote_recv(c->from_peer, &ready, REMOTE_WAIT_MS) || ready.kind != REMOTE_READY)
        bench_fail("remote_down: the peer did not say where its actor is");
    long peer_rss = remote_peak_rss_kb(c->peer);
    char before = remote_proc_state(c->peer);
    if (before != 'S' && before != 'R')
        bench_fail("remote_down: the peer's process is in state %c before the signal", before);
    ac_peer_info p = {0};
    if (!remote_peer_info(rt, BETA, &p) || !p.up || p.losses != 0)
        bench_fail("remote_down: the peer is not up before the signal");

    double t0 = bench_now(), t1 = 0;
    if (kill(c->peer, kill_mode ? SIGKILL : SIGSTOP) != 0)
        bench_fail("remote_down: kill: %s", strerror(errno));
    /* The notice must come within the timeout, a heartbeat and a margin. */
    double limit = t0 + (timeout_ms * 1.25 + 5000) * 1e-3;
    while ((t1 = bench_now()) < limit) {
        if (remote_peer_info(rt, BETA, &p) && !p.up)
            break;
        usleep(1000);
    }
    if (p.up)
        bench_fail("remote_down: the peer still up %.3f s after the signal", t1 - t0);
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

    char params[24];
    snprintf(params, sizeof params, "%" PRIu32, timeout_ms);
    remote_report(kill_mode ? "remote_peer_down_kill" : "remote_peer_down_stop", params, t1 - t0,
                  0, peer_rss);
    return 0;
}
