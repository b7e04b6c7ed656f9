/* broker P N — bench/README.md. */
#include "common.h"
#include "broker.actor.h"

static broker_Broker_ref the_broker;
static broker_Worker_ref *workers; /* read-only while the actors run */
static uint64_t target;
/* Written by the reports (each worker its own slot), read by main after. */
static uint64_t *got_met, *got_hellos, *got_stopped;
static uint64_t got_meetings, got_broker_stopped;

int broker_Broker_on_want(broker_Broker *self, ac_ctx *cx, const broker_Broker_want *m)
{
    /* Once the meetings are held, whoever comes back is sent home: nobody is
     * left waiting for a partner who will not come. */
    if (self->meetings == target) {
        self->stopped++;
        return broker_Worker_send_done(cx, workers[m->id]);
    }
    if (!self->has_waiting) {
        self->waiting = m->id;
        self->has_waiting = 1;
        return 0;
    }
    self->has_waiting = 0;
    self->meetings++;
    int rc = broker_Worker_send_paired(cx, workers[self->waiting], m->id);
    if (rc != 0)
        return rc;
    return broker_Worker_send_paired(cx, workers[m->id], self->waiting);
}

int broker_Broker_on_report(broker_Broker *self, ac_ctx *cx, const broker_Broker_report *m)
{
    (void)cx;
    (void)m;
    got_meetings = self->meetings;
    got_broker_stopped = self->stopped;
    return 0;
}

int broker_Worker_on_launch(broker_Worker *self, ac_ctx *cx, const broker_Worker_launch *m)
{
    self->id = m->id;
    return broker_Broker_send_want(cx, the_broker, self->id);
}

int broker_Worker_on_paired(broker_Worker *self, ac_ctx *cx, const broker_Worker_paired *m)
{
    self->met++;
    return broker_Worker_send_hello(cx, workers[m->partner], self->id);
}

int broker_Worker_on_hello(broker_Worker *self, ac_ctx *cx, const broker_Worker_hello *m)
{
    (void)m;
    self->hellos++;
    return broker_Broker_send_want(cx, the_broker, self->id);
}

int broker_Worker_on_done(broker_Worker *self, ac_ctx *cx, const broker_Worker_done *m)
{
    (void)cx;
    (void)m;
    self->stopped++;
    return 0;
}

int broker_Worker_on_report(broker_Worker *self, ac_ctx *cx, const broker_Worker_report *m)
{
    (void)cx;
    (void)m;
    got_met[self->id] = self->met;
    got_hellos[self->id] = self->hellos;
    got_stopped[self->id] = self->stopped;
    return 0;
}

int main(int argc, char **argv)
{
    bench_args args = bench_args_parse(argc, argv, 2, "P N");
    uint64_t p = args.v[0], n = args.v[1];
    if (p > UINT32_MAX || p < 2)
        bench_fail("broker: P must be 2 or more");
    target = p * n / 2;
    workers = malloc(p * sizeof *workers);
    got_met = calloc(p, sizeof *got_met);
    got_hellos = calloc(p, sizeof *got_hellos);
    got_stopped = calloc(p, sizeof *got_stopped);
    if (workers == NULL || got_met == NULL || got_hellos == NULL || got_stopped == NULL)
        bench_fail("broker: out of memory");

    ac_runtime *rt = bench_runtime();
    ac_ctx *cx = ac_runtime_ctx(rt);
    bench_check(broker_Broker_spawn(cx, &the_broker), "spawn");
    for (uint64_t i = 0; i < p; i++)
        bench_check(broker_Worker_spawn(cx, &workers[i]), "spawn");

    double t0 = bench_now();
    for (uint64_t i = 0; i < p; i++)
        bench_check(broker_Worker_send_launch(cx, workers[i], (uint32_t)i), "send");
    double secs = bench_run_since(rt, t0);

    bench_check(broker_Broker_send_report(cx, the_broker), "send");
    for (uint64_t i = 0; i < p; i++)
        bench_check(broker_Worker_send_report(cx, workers[i]), "send");
    ac_runtime_run(rt);
    ac_runtime_destroy(rt);
    uint64_t met = 0, hellos = 0, stopped = 0;
    for (uint64_t i = 0; i < p; i++) {
        met += got_met[i];
        hellos += got_hellos[i];
        stopped += got_stopped[i];
    }
    if (got_meetings != target || met != 2 * target || hellos != 2 * target || stopped != p ||
        got_broker_stopped != p)
        bench_fail("broker: %" PRIu64 " meetings (want %" PRIu64 "), %" PRIu64 " paired and %" PRIu64
                   " greeted (want %" PRIu64 " each), %" PRIu64 " workers sent home (want %" PRIu64 ")",
                   got_meetings, target, met, hellos, 2 * target, stopped, p);
    bench_report("broker", args.params, secs, (double)target);
    free(workers);
    free(got_met);
    free(got_hellos);
    free(got_stopped);
    return 0;
}
