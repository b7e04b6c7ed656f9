/* ring R T — bench/README.md. */
#include "ring_common.h"

int main(int argc, char **argv)
{
    const char *usage = "R T";
    uint64_t r = bench_arg(argc, argv, 1, usage), t = bench_arg(argc, argv, 2, usage);
    ac_runtime *rt = bench_runtime();
    ring_Node_ref *nodes = ring_build(rt, r);
    double secs = ring_play(rt, nodes, r, 1, t);
    ac_runtime_destroy(rt);
    free(nodes);
    char params[64];
    snprintf(params, sizeof params, "%" PRIu64 "x%" PRIu64, r, t);
    bench_report("ring", params, secs, (double)t);
    return 0;
}
