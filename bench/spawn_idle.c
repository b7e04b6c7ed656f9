/* spawn_idle N — bench/README.md. */
#include "common.h"
#include "spawn_idle.actor.h"

/* Counted by handlers running on several workers at once: atomic. */
static uint64_t poked;

int spawn_idle_Idle_on_poke(spawn_idle_Idle *self, ac_ctx *cx, const spawn_idle_Idle_poke *m)
{
    (void)cx;
    self->value = m->value;
    __atomic_fetch_add(&poked, 1, __ATOMIC_RELAXED);
    return 0;
}

int main(int argc, char **argv)
{
    bench_args args = bench_args_parse(argc, argv, 1, "N");
    uint64_t n = args.v[0];
    spawn_idle_Idle_ref *refs = malloc(n * sizeof *refs);
    if (refs == NULL)
        bench_fail("spawn_idle: out of memory");
    /* Touch the array before measuring, so its pages are not counted. */
    for (uint64_t i = 0; i < n; i++)
        refs[i].addr.bytes[0] = 0;

    ac_runtime *rt = bench_runtime();
    ac_ctx *cx = ac_runtime_ctx(rt);
    long before = bench_rss_bytes();
    double t0 = bench_now();
    for (uint64_t i = 0; i < n; i++)
        bench_check(spawn_idle_Idle_spawn(cx, &refs[i]), "spawn");
    double secs = bench_now() - t0;
    long after = bench_rss_bytes();

    /* They are alive: each handles one message. */
    for (uint64_t i = 0; i < n; i++)
        bench_check(spawn_idle_Idle_send_poke(cx, refs[i], i), "send");
    ac_runtime_run(rt);
    ac_runtime_destroy(rt);
    free(refs);
    if (poked != n)
        bench_fail("spawn_idle: %" PRIu64 " of %" PRIu64 " actors answered", poked, n);

    bench_report("spawn_idle", args.params, secs, (double)n);
    fprintf(stderr, "spawn_idle: %.1f bytes per idle actor (RSS growth %ld KiB)\n",
            (double)(after - before) / (double)n, (after - before) / 1024);
    return 0;
}
