/* inject A M — bench/README.md. */
#include "common.h"
#include "inject.actor.h"

static inject_Worker_ref *workers; /* read-only while the actors run */
static uint64_t n_workers;
/* Written by each worker's report (its own slot), read by main after. */
static uint64_t *got_next, *got_bad, *got_acc;

int inject_Worker_on_init(inject_Worker *self, ac_ctx *cx, const inject_Worker_init *m)
{
    (void)cx;
    self->id = m->id;
    return 0;
}

int inject_Worker_on_work(inject_Worker *self, ac_ctx *cx, const inject_Worker_work *m)
{
    (void)cx;
    if (m->x != self->next)
        self->bad++;
    self->next++;
    self->acc += m->x * m->x;
    return 0;
}

int inject_Worker_on_report(inject_Worker *self, ac_ctx *cx, const inject_Worker_report *m)
{
    (void)cx;
    (void)m;
    got_next[self->id] = self->next;
    got_bad[self->id] = self->bad;
    got_acc[self->id] = self->acc;
    return 0;
}

/* The load, the same from either side: round-robin over the workers, M
 * rounds, each worker's numbers 0 .. M-1 in order. */
static int send_all(ac_ctx *cx, uint64_t m)
{
    for (uint64_t x = 0; x < m; x++)
        for (uint64_t a = 0; a < n_workers; a++) {
            int rc = inject_Worker_send_work(cx, workers[a], x);
            if (rc != 0)
                return rc;
        }
    return 0;
}

int inject_Driver_on_drive(inject_Driver *self, ac_ctx *cx, const inject_Driver_drive *m)
{
    (void)self;
    return send_all(cx, m->m);
}

/* One run in a fresh runtime: the seconds from the first send until every
 * worker has handled its M, then the check. */
static double run_once(uint64_t m, int from_handler)
{
    ac_runtime *rt = bench_runtime();
    ac_ctx *cx = ac_runtime_ctx(rt);
    for (uint64_t a = 0; a < n_workers; a++) {
        bench_check(inject_Worker_spawn(cx, &workers[a]), "spawn");
        bench_check(inject_Worker_send_init(cx, workers[a], (uint32_t)a), "send");
    }
    inject_Driver_ref driver;
    bench_check(inject_Driver_spawn(cx, &driver), "spawn");
    ac_runtime_run(rt);

    double t0 = bench_now();
    if (from_handler)
        bench_check(inject_Driver_send_drive(cx, driver, m), "send");
    else
        bench_check(send_all(cx, m), "send");
    double secs = bench_run_since(rt, t0);

    for (uint64_t a = 0; a < n_workers; a++)
        bench_check(inject_Worker_send_report(cx, workers[a]), "send");
    ac_runtime_run(rt);
    ac_runtime_destroy(rt);
    /* sum of x^2 for x < m (fits: m < 2^20 here, and mod 2^64 anyway) */
    uint64_t want = 0;
    for (uint64_t x = 0; x < m; x++)
        want += x * x;
    for (uint64_t a = 0; a < n_workers; a++)
        if (got_next[a] != m || got_bad[a] != 0 || got_acc[a] != want)
            bench_fail("inject: worker %" PRIu64 " (%s) handled %" PRIu64 " of %" PRIu64
                       ", %" PRIu64 " out of order, sum %" PRIu64 " (want %" PRIu64 ")",
                       a, from_handler ? "from a handler" : "from outside", got_next[a], m,
                       got_bad[a], got_acc[a], want);
    return secs;
}

int main(int argc, char **argv)
{
    bench_args args = bench_args_parse(argc, argv, 2, "A M");
    uint64_t a = args.v[0], m = args.v[1];
    if (a > UINT32_MAX)
        bench_fail("inject: too many actors");
    n_workers = a;
    workers = malloc(a * sizeof *workers);
    got_next = calloc(a, sizeof *got_next);
    got_bad = calloc(a, sizeof *got_bad);
    got_acc = calloc(a, sizeof *got_acc);
    if (workers == NULL || got_next == NULL || got_bad == NULL || got_acc == NULL)
        bench_fail("inject: out of memory");

    double handler = run_once(m, 1);
    double outside = run_once(m, 0);
    /* The same load from a handler, for the cost of an outside send
     * against a handler's (a comment line: compare.sh reads it). */
    printf("# inject_handler %s %.6f %.0f %ld outside/handler %.2f\n", args.params, handler,
           (double)(a * m) / handler, bench_peak_rss_kb(), outside / handler);
    bench_report("inject", args.params, outside, (double)(a * m));
    free(workers);
    free(got_next);
    free(got_bad);
    free(got_acc);
    return 0;
}
