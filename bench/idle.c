/*
 * idle [SECONDS [TRIALS]] — two figures about a runtime with nothing to do:
 *
 *   idle_cpu: the CPU time a started, idle runtime uses over SECONDS
 *             (default 5), as a percentage of one core (target: < 1 %);
 *   wake:     the median time from a send to a fully parked runtime until
 *             the handler runs, over TRIALS (default 200), in units of a
 *             futex round trip between two threads measured in the same
 *             run (target: at most 2).
 *
 * Output: the standard line for each (for idle_cpu, msgs_per_sec is 0), and
 * a line starting with '#' that states the result in words.
 */
#include "common.h"
#include "idle.actor.h"

#include <linux/futex.h>
#include <sched.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

static _Atomic uint64_t handled_trial;
static _Atomic(double) handled_at;

int idle_Waker_on_wake(idle_Waker *self, ac_ctx *cx, const idle_Waker_wake *m)
{
    (void)self;
    (void)cx;
    atomic_store(&handled_at, bench_now());
    atomic_store(&handled_trial, m->trial);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

/* ---- the futex round trip baseline ----------------------------------------- */

static _Atomic uint32_t ball;  /* 0: main's turn, 1: the echo thread's turn */

static void fwait(uint32_t expected)
{
    while (atomic_load(&ball) == expected)
        syscall(SYS_futex, (uint32_t *)&ball, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

static void fset(uint32_t v)
{
    atomic_store(&ball, v);
    syscall(SYS_futex, (uint32_t *)&ball, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Runs the calling thread on one CPU, so that the two threads of the
 * baseline wake each other across cores, as a parked worker is woken from
 * another core. Without it the kernel may put both on one CPU, and the
 * baseline would be a same-core wake the runtime rarely gets. */
static void pin_to(int cpu)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 2)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu % ncpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void unpin(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    for (long i = 0; i < sysconf(_SC_NPROCESSORS_ONLN) && i < CPU_SETSIZE; i++)
        CPU_SET((int)i, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *echo(void *arg)
{
    size_t n = *(size_t *)arg;
    pin_to(1);
    for (size_t i = 0; i < n; i++) {
        fwait(0);  /* sleeps until main hands it the ball */
        fset(0);
    }
    return NULL;
}

static double futex_round_trip(size_t trials)
{
    double *rt = malloc(trials * sizeof *rt);
    pthread_t th;
    pin_to(0);
    pthread_create(&th, NULL, echo, &trials);
    for (size_t i = 0; i < trials; i++) {
        struct timespec pause = {0, 200000};  /* let the echo thread sleep */
        nanosleep(&pause, NULL);
        double t0 = bench_now();
        fset(1);
        fwait(1);
        rt[i] = bench_now() - t0;
    }
    pthread_join(th, NULL);
    unpin();
    double m = median(rt, trials);
    free(rt);
    return m;
}

int main(int argc, char **argv)
{
    const char *usage = "[SECONDS [TRIALS]]";
    uint64_t seconds = argc > 1 ? bench_arg(argc, argv, 1, usage) : 5;
    uint64_t trials = argc > 2 ? bench_arg(argc, argv, 2, usage) : 200;

    double futex_rt = futex_round_trip(trials);

    ac_runtime *rt = bench_runtime();
    ac_ctx *cx = ac_runtime_ctx(rt);
    idle_Waker_ref waker;
    bench_check(idle_Waker_spawn(cx, &waker), "spawn");

    /* Idle CPU: let the workers park, then measure a quiet stretch. */
    ac_runtime_run(rt);
    double c0 = cpu_seconds(), w0 = bench_now();
    struct timespec quiet = {(time_t)seconds, 0};
    nanosleep(&quiet, NULL);
    double cpu = cpu_seconds() - c0, wall = bench_now() - w0;
    double percent = 100.0 * cpu / wall;

    /* Wake latency: from a send into a fully parked runtime to the handler. */
    double *lat = malloc(trials * sizeof *lat);
    for (uint64_t i = 1; i <= trials; i++) {
        ac_runtime_run(rt);
        struct timespec settle = {0, 2000000};  /* past the spinning phase */
        nanosleep(&settle, NULL);
        double t0 = bench_now();
        bench_check(idle_Waker_send_wake(cx, waker, i), "send");
        /* Sleep rather than spin: on two cores a spinning main thread
         * would compete with the worker it just woke. */
        do
            nanosleep(&settle, NULL);
        while (atomic_load(&handled_trial) != i);
        lat[i - 1] = atomic_load(&handled_at) - t0;
    }
    double wake = median(lat, trials);
    free(lat);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    unsigned workers = ac_runtime_workers(rt);
    ac_runtime_destroy(rt);
    if (st.messages != trials)
        bench_fail("idle: %" PRIu64 " of %" PRIu64 " wake-ups handled", st.messages, trials);

    char params[32];
    snprintf(params, sizeof params, "%" PRIu64, seconds);
    bench_report("idle_cpu", params, cpu, 0);
    snprintf(params, sizeof params, "%" PRIu64, trials);
    bench_report("wake", params, wake, 1.0);
    printf("# idle: %.3f %% of one core over %.1f s (%u workers, target < 1 %%)\n",
           percent, wall, workers);
    printf("# wake: median %.1f us = %.2f futex round trips of %.1f us (target <= 2)\n",
           wake * 1e6, wake / futex_rt, futex_rt * 1e6);
    return 0;
}
