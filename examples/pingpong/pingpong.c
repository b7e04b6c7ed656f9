/*
 * pingpong — the classic Erlang benchmark: a Pinger serves a ball to a
 * Ponger, which returns it, N times. Prints one line with the rate.
 *
 *   usage: pingpong [ROUND_TRIPS]     (default 1000000; AC_WORKERS=n to pick
 *                                      the number of worker threads)
 */
#include "pingpong.actor.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The Pinger reports here when the last ball comes back; main reads it
 * after ac_runtime_run has returned, which makes every write of the
 * handlers visible (docs/RUNTIME.md, "Running"): no synchronisation. */
static uint64_t finished_round_trips;

int pingpong_Pinger_on_serve(pingpong_Pinger *self, ac_ctx *cx,
                             const pingpong_Pinger_serve *m)
{
    self->remaining = m->rounds;
    self->round_trips = 0;
    if (self->remaining == 0)
        return 0;
    return pingpong_Ponger_send_ping(cx, m->peer, pingpong_Pinger_ref_self(cx), 1);
}

int pingpong_Pinger_on_pong(pingpong_Pinger *self, ac_ctx *cx,
                            const pingpong_Pinger_pong *m)
{
    self->round_trips++;
    if (--self->remaining == 0) {
        finished_round_trips = self->round_trips;
        return 0;
    }
    return pingpong_Ponger_send_ping(cx, m->from, pingpong_Pinger_ref_self(cx), m->n + 1);
}

int pingpong_Ponger_on_ping(pingpong_Ponger *self AC_UNUSED, ac_ctx *cx,
                            const pingpong_Ponger_ping *m)
{
    /* A Pinger gone before its ball comes back is a dead letter, not a
     * failure of this Ponger. */
    return pingpong_Pinger_send_pong(cx, m->from, pingpong_Ponger_ref_self(cx), m->n);
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int fail(const char *what, int rc)
{
    fprintf(stderr, "pingpong: %s: %s\n", what, ac_strerror(rc));
    return 1;
}

int main(int argc, char **argv)
{
    uint64_t rounds = 1000000;
    if (argc > 2 || (argc == 2 && (argv[1][0] < '0' || argv[1][0] > '9'))) {
        fprintf(stderr, "usage: pingpong [ROUND_TRIPS]\n");
        return 2;
    }
    if (argc == 2) {
        char *end;
        rounds = strtoull(argv[1], &end, 10);
        if (*end != '\0') {
            fprintf(stderr, "pingpong: not a number: %s\n", argv[1]);
            return 2;
        }
    }

    ac_config cfg;
    ac_config_init(&cfg);
    ac_runtime *rt;
    int rc = ac_runtime_create(&rt, &cfg);
    if (rc != 0)
        return fail("cannot start the runtime (check AC_WORKERS)", rc);
    ac_ctx *cx = ac_runtime_ctx(rt);

    pingpong_Pinger_ref pinger;
    pingpong_Ponger_ref ponger;
    if ((rc = pingpong_Pinger_spawn(cx, &pinger)) != 0 ||
        (rc = pingpong_Ponger_spawn(cx, &ponger)) != 0)
        return fail("spawn", rc);

    double start = now_seconds();
    if ((rc = pingpong_Pinger_send_serve(cx, pinger, ponger, rounds)) != 0)
        return fail("send", rc);
    ac_runtime_run(rt);
    double elapsed = now_seconds() - start;

    ac_stats st;
    ac_runtime_stats(rt, &st);
    unsigned workers = ac_runtime_workers(rt);
    ac_runtime_destroy(rt);

    if (finished_round_trips != rounds) {
        fprintf(stderr, "pingpong: expected %" PRIu64 " round trips, counted %" PRIu64 "\n",
                rounds, finished_round_trips);
        return 1;
    }
    printf("pingpong: %" PRIu64 " round trips in %.3f s: %.2f million round trips/s "
           "(%u workers; %" PRIu64 " messages, %" PRIu64 " steals, %" PRIu64 " parks)\n",
           rounds, elapsed, elapsed > 0 ? (double)rounds / elapsed / 1e6 : 0.0,
           workers, st.messages, st.steals, st.parks);
    return 0;
}
