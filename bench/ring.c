/* ring R T — bench/README.md. */
#include "ring_common.h"

int main(int argc, char **argv)
{
    bench_args args = bench_args_parse(argc, argv, 2, "R T");
    uint64_t r = args.v[0], t = args.v[1];
    ac_runtime *rt = bench_runtime();
    ring_Node_ref *nodes = ring_build(rt, r);
    double secs = ring_play(rt, nodes, r, 1, t);
    ac_runtime_destroy(rt);
    free(nodes);
    bench_report("ring", args.params, secs, (double)t);
    return 0;
}
