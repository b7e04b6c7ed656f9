/* skynet D — bench/README.md. */
#include "common.h"
#include "skynet.actor.h"

static uint64_t root_sum;   /* written by the root's last handler */
static bool root_done;

static int report(skynet_Node *self, ac_ctx *cx, uint64_t value)
{
    if (self->is_root) {
        root_sum = value;
        root_done = true;
    } else {
        int rc = skynet_Node_send_result(cx, self->parent, value);
        if (rc != 0)
            return rc;
    }
    return ac_stop_self(cx);
}

int skynet_Node_on_start_node(skynet_Node *self, ac_ctx *cx,
                              const skynet_Node_start_node *m)
{
    self->parent = m->parent;
    self->is_root = m->is_root;
    if (m->depth == 0)
        return report(self, cx, m->num);
    self->pending = 10;
    for (uint64_t i = 0; i < 10; i++) {
        skynet_Node_ref child;
        int rc = skynet_Node_spawn(cx, &child);
        if (rc == 0)
            rc = skynet_Node_send_start_node(cx, child, skynet_Node_ref_self(cx),
                                             m->num * 10 + i, m->depth - 1, false);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int skynet_Node_on_result(skynet_Node *self, ac_ctx *cx, const skynet_Node_result *m)
{
    self->sum += m->value;
    if (--self->pending == 0)
        return report(self, cx, self->sum);
    return 0;
}

int main(int argc, char **argv)
{
    bench_args args = bench_args_parse(argc, argv, 1, "D   (1..9)");
    uint64_t d = args.v[0];
    if (d > 9)
        bench_fail("skynet: depth must be at most 9");
    uint64_t leaves = 1, actors = 0;
    for (uint64_t i = 0; i <= d; i++, leaves *= 10)
        actors += leaves;
    leaves /= 10;

    ac_runtime *rt = bench_runtime();
    ac_ctx *cx = ac_runtime_ctx(rt);
    double t0 = bench_now();
    skynet_Node_ref root;
    skynet_Node_ref nobody = {{{0}}};
    bench_check(skynet_Node_spawn(cx, &root), "spawn");
    bench_check(skynet_Node_send_start_node(cx, root, nobody, 0, (uint32_t)d, true), "send");
    double secs = bench_run_since(rt, t0);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    ac_runtime_destroy(rt);

    uint64_t want = leaves * (leaves - 1) / 2;
    if (!root_done || root_sum != want)
        bench_fail("skynet: sum %" PRIu64 ", expected %" PRIu64, root_sum, want);
    if (st.spawned != actors || st.stopped != actors)
        bench_fail("skynet: %" PRIu64 " spawned, %" PRIu64 " stopped, expected %" PRIu64,
                   st.spawned, st.stopped, actors);
    /* One spawn (start_node) and one reply per actor. */
    bench_report("skynet", args.params, secs, 2.0 * (double)actors);
    fprintf(stderr, "skynet: %" PRIu64 " actors, %.0f bytes of peak RSS per actor\n",
            actors, (double)bench_peak_rss_kb() * 1024.0 / (double)actors);
    return 0;
}
