/* ring_multi R K T — bench/README.md. */
#include "ring_common.h"

int main(int argc, char **argv)
{
    const char *usage = "R K T   (K divides T)";
    uint64_t r = bench_arg(argc, argv, 1, usage), k = bench_arg(argc, argv, 2, usage),
             t = bench_arg(argc, argv, 3, usage);
    if (t % k != 0 || k > UINT32_MAX)
        bench_fail("ring_multi: K must divide T");
    ac_runtime *rt = bench_runtime();
    ring_Node_ref *nodes = ring_build(rt, r);
    double secs = ring_play(rt, nodes, r, k, t / k);
    ac_runtime_destroy(rt);
    free(nodes);
    char params[96];
    snprintf(params, sizeof params, "%" PRIu64 "x%" PRIu64 "x%" PRIu64, r, k, t);
    bench_report("ring_multi", params, secs, (double)t);
    return 0;
}
