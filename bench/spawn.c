/* spawn N — bench/README.md. */
#include "common.h"
#include "spawn.actor.h"

static spawn_Spawner_ref spawner;
static uint64_t got_done, got_sum; /* written by the report, read by main */

int spawn_Spawner_on_launch(spawn_Spawner *self, ac_ctx *cx, const spawn_Spawner_launch *m)
{
    (void)self;
    for (uint64_t i = 1; i <= m->n; i++) {
        spawn_Child_ref child;
        int rc = spawn_Child_spawn(cx, &child);
        if (rc != 0)
            return rc;
        rc = spawn_Child_send_work(cx, child, i);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int spawn_Spawner_on_done(spawn_Spawner *self, ac_ctx *cx, const spawn_Spawner_done *m)
{
    (void)cx;
    self->done++;
    self->sum += m->x;
    return 0;
}

int spawn_Spawner_on_report(spawn_Spawner *self, ac_ctx *cx, const spawn_Spawner_report *m)
{
    (void)cx;
    (void)m;
    got_done = self->done;
    got_sum = self->sum;
    return 0;
}

int spawn_Child_on_work(spawn_Child *self, ac_ctx *cx, const spawn_Child_work *m)
{
    (void)self;
    int rc = spawn_Spawner_send_done(cx, spawner, m->x);
    if (rc != 0)
        return rc;
    return ac_stop_self(cx);
}

int main(int argc, char **argv)
{
    bench_args args = bench_args_parse(argc, argv, 1, "N");
    uint64_t n = args.v[0];
    ac_runtime *rt = bench_runtime();
    ac_ctx *cx = ac_runtime_ctx(rt);
    bench_check(spawn_Spawner_spawn(cx, &spawner), "spawn");

    double t0 = bench_now();
    bench_check(spawn_Spawner_send_launch(cx, spawner, n), "send");
    double secs = bench_run_since(rt, t0);

    bench_check(spawn_Spawner_send_report(cx, spawner), "send");
    ac_runtime_run(rt);
    ac_runtime_destroy(rt);
    if (got_done != n || got_sum != n * (n + 1) / 2)
        bench_fail("spawn: %" PRIu64 " children answered (want %" PRIu64 "), sum %" PRIu64
                   " (want %" PRIu64 ")",
                   got_done, n, got_sum, n * (n + 1) / 2);
    bench_report("spawn", args.params, secs, (double)n);
    return 0;
}
