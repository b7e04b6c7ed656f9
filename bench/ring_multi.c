/* ring_multi R K T — bench/README.md. */
#include "ring_common.h"

int main(int argc, char **argv)
{
    bench_args args = bench_args_parse(argc, argv, 3, "R K T   (K divides T)");
    uint64_t r = args.v[0], k = args.v[1], t = args.v[2];
    if (t % k != 0 || k > UINT32_MAX)
        bench_fail("ring_multi: K must divide T");
    ac_runtime *rt = bench_runtime();
    ring_Node_ref *nodes = ring_build(rt, r);
    double secs = ring_play(rt, nodes, r, k, t / k);
    ac_runtime_destroy(rt);
    free(nodes);
    bench_report("ring_multi", args.params, secs, (double)t);
    return 0;
}
