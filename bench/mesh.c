/* mesh A T H — bench/README.md. */
#include "common.h"
#include "mesh.actor.h"

static mesh_Node_ref *nodes; /* read-only while the actors run */
static uint32_t n_nodes;
/* Written by each node's report (its own slot), read by main after. */
static uint64_t *got_received, *got_finished;

/* xorshift32, the same in the peers: every implementation draws the same
 * kind of random peer (the paths differ with the schedule; the totals do
 * not). */
static uint32_t next_peer(mesh_Node *self)
{
    uint32_t x = self->rng;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    self->rng = x;
    return x % n_nodes;
}

int mesh_Node_on_launch(mesh_Node *self, ac_ctx *cx, const mesh_Node_launch *m)
{
    self->id = m->id;
    self->rng = m->id * 2654435761u + 1u;
    if (self->rng == 0)
        self->rng = 1;
    for (uint32_t t = 0; t < m->tokens; t++) {
        int rc = mesh_Node_send_token(cx, nodes[next_peer(self)], m->hops - 1);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int mesh_Node_on_token(mesh_Node *self, ac_ctx *cx, const mesh_Node_token *m)
{
    self->received++;
    if (m->left == 0) {
        self->finished++;
        return 0;
    }
    return mesh_Node_send_token(cx, nodes[next_peer(self)], m->left - 1);
}

int mesh_Node_on_report(mesh_Node *self, ac_ctx *cx, const mesh_Node_report *m)
{
    (void)cx;
    (void)m;
    got_received[self->id] = self->received;
    got_finished[self->id] = self->finished;
    return 0;
}

int main(int argc, char **argv)
{
    bench_args args = bench_args_parse(argc, argv, 3, "A T H");
    uint64_t a = args.v[0], t = args.v[1], h = args.v[2];
    if (a > UINT32_MAX || t > UINT32_MAX || h > UINT32_MAX)
        bench_fail("mesh: arguments too large");
    n_nodes = (uint32_t)a;
    nodes = malloc(a * sizeof *nodes);
    got_received = calloc(a, sizeof *got_received);
    got_finished = calloc(a, sizeof *got_finished);
    if (nodes == NULL || got_received == NULL || got_finished == NULL)
        bench_fail("mesh: out of memory");

    ac_runtime *rt = bench_runtime();
    ac_ctx *cx = ac_runtime_ctx(rt);
    for (uint64_t i = 0; i < a; i++)
        bench_check(mesh_Node_spawn(cx, &nodes[i]), "spawn");

    double t0 = bench_now();
    for (uint64_t i = 0; i < a; i++)
        bench_check(mesh_Node_send_launch(cx, nodes[i], (uint32_t)i, (uint32_t)t, (uint32_t)h),
                    "send");
    double secs = bench_run_since(rt, t0);

    for (uint64_t i = 0; i < a; i++)
        bench_check(mesh_Node_send_report(cx, nodes[i]), "send");
    ac_runtime_run(rt);
    ac_runtime_destroy(rt);
    uint64_t received = 0, finished = 0;
    for (uint64_t i = 0; i < a; i++) {
        received += got_received[i];
        finished += got_finished[i];
    }
    if (received != a * t * h || finished != a * t)
        bench_fail("mesh: %" PRIu64 " messages received (want %" PRIu64 "), %" PRIu64
                   " tokens finished (want %" PRIu64 ")",
                   received, a * t * h, finished, a * t);
    bench_report("mesh", args.params, secs, (double)(a * t * h));
    free(nodes);
    free(got_received);
    free(got_finished);
    return 0;
}
