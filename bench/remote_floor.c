/*
 * remote_floor N — the engine's floor under remote_pingpong (bench/README.md,
 * "Two nodes"): N round trips of a 64-byte message between two processes
 * over bare libzmq, as the nodes' links are made (a DEALER to a ROUTER
 * over TCP on 127.0.0.1, CURVE), with no runtime, no node thread and no
 * actor: what remote_pingpong would measure if the runtime cost nothing.
 * Reported: round trips per second. Verified: every reply carries the
 * sequence number of the request it answers.
 */
#include "remote.h"

#include <zmq.h>

/* The echo: answers each request with itself, N times, then exits. */
static int echo(const char *endpoint, const char *secret, uint64_t n)
{
    void *ctx = zmq_ctx_new();
    void *router = zmq_socket(ctx, ZMQ_ROUTER);
    int one = 1;
    if (zmq_setsockopt(router, ZMQ_CURVE_SERVER, &one, sizeof one) != 0 ||
        zmq_setsockopt(router, ZMQ_CURVE_SECRETKEY, secret, AC_NODE_KEY_LEN) != 0 ||
        zmq_bind(router, endpoint) != 0)
        return 1;
    for (uint64_t i = 0; i < n; i++) {
        zmq_msg_t id, body;
        zmq_msg_init(&id);
        zmq_msg_init(&body);
        if (zmq_msg_recv(&id, router, 0) < 0 || zmq_msg_recv(&body, router, 0) < 0 ||
            zmq_msg_send(&id, router, ZMQ_SNDMORE) < 0 || zmq_msg_send(&body, router, 0) < 0)
            return 1;
    }
    int linger = 1000;
    zmq_setsockopt(router, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close(router);
    zmq_ctx_term(ctx);
    return 0;
}

int main(int argc, char **argv)
{
    bench_args args = bench_args_parse(argc, argv, 1, "N");
    uint64_t n = args.v[0];
    char server_public[AC_NODE_KEY_LEN + 1], server_secret[AC_NODE_KEY_LEN + 1];
    char client_public[AC_NODE_KEY_LEN + 1], client_secret[AC_NODE_KEY_LEN + 1];
    if (zmq_curve_keypair(server_public, server_secret) != 0 ||
        zmq_curve_keypair(client_public, client_secret) != 0)
        bench_fail("remote_floor: zmq_curve_keypair: %s", zmq_strerror(zmq_errno()));
    char endpoint[64];
    snprintf(endpoint, sizeof endpoint, "tcp://127.0.0.1:%d", bench_free_port(NULL));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        bench_fail("remote_floor: fork: %s", strerror(errno));
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        _exit(echo(endpoint, server_secret, n + 1));
    }
    alarm(REMOTE_LIMIT_S);  /* the echo dies with us */

    void *ctx = zmq_ctx_new();
    void *dealer = zmq_socket(ctx, ZMQ_DEALER);
    int wait_ms = REMOTE_WAIT_MS;
    zmq_setsockopt(dealer, ZMQ_RCVTIMEO, &wait_ms, sizeof wait_ms);
    zmq_setsockopt(dealer, ZMQ_CURVE_SERVERKEY, server_public, AC_NODE_KEY_LEN);
    zmq_setsockopt(dealer, ZMQ_CURVE_PUBLICKEY, client_public, AC_NODE_KEY_LEN);
    zmq_setsockopt(dealer, ZMQ_CURVE_SECRETKEY, client_secret, AC_NODE_KEY_LEN);
    if (zmq_connect(dealer, endpoint) != 0)
        bench_fail("remote_floor: zmq_connect: %s", zmq_strerror(zmq_errno()));
    uint8_t buf[64] = {0};
    double t0 = 0;
    uint64_t wrong = 0;
    /* Round trip 0 waits for the link (the echo binds after the fork). */
    for (uint64_t i = 0; i <= n; i++) {
        if (i == 1)
            t0 = bench_now();
        memcpy(buf, &i, sizeof i);
        uint64_t back = ~i;
        if (zmq_send(dealer, buf, sizeof buf, 0) != (int)sizeof buf ||
            zmq_recv(dealer, buf, sizeof buf, 0) != (int)sizeof buf)
            bench_fail("remote_floor: round trip %" PRIu64 ": %s", i, zmq_strerror(zmq_errno()));
        memcpy(&back, buf, sizeof back);
        wrong += back != i;
    }
    double secs = bench_now() - t0;
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        bench_fail("remote_floor: the echo process failed (wait status %d)", status);
    zmq_close(dealer);
    zmq_ctx_term(ctx);
    if (wrong != 0)
        bench_fail("remote_floor: %" PRIu64 " replies did not answer their request", wrong);
    bench_report("remote_floor", args.params, secs, (double)n);  /* this process's RSS */
    return 0;
}
