/*
 * common.h — what every benchmark program shares: argument parsing, the
 * clock, peak RSS, and the one-line report (bench/README.md).
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <actorc.h>

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline long bench_peak_rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* The current (not peak) resident set, in bytes. */
static inline long bench_rss_bytes(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return resident * 4096;
}

__attribute__((noreturn, format(printf, 1, 2)))
static inline void bench_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

/* argv[i] as a positive integer, or the usage message and exit status 2. */
static inline uint64_t bench_arg(int argc, char **argv, int i, const char *usage)
{
    if (i >= argc)
        goto bad;
    char *end;
    unsigned long long v = strtoull(argv[i], &end, 10);
    if (*argv[i] == '\0' || *argv[i] == '-' || *end != '\0' || v == 0)
        goto bad;
    return (uint64_t)v;
bad:
    fprintf(stderr, "usage: %s %s\n", argv[0], usage);
    exit(2);
}

/* A benchmark's arguments, argv[1..n] as positive integers (bench_arg),
 * and the report's params field: them joined by 'x' ("1000x10000000"). */
#define BENCH_MAX_ARGS 4
typedef struct bench_args {
    uint64_t v[BENCH_MAX_ARGS];
    char params[BENCH_MAX_ARGS * 21];  /* 20 digits and an 'x' or the NUL each */
} bench_args;

static inline bench_args bench_args_parse(int argc, char **argv, int n, const char *usage)
{
    bench_args a = {{0}, ""};
    size_t at = 0;
    for (int i = 0; i < n && i < BENCH_MAX_ARGS; i++) {
        a.v[i] = bench_arg(argc, argv, i + 1, usage);
        at += (size_t)snprintf(a.params + at, sizeof a.params - at, "%s%" PRIu64,
                               i ? "x" : "", a.v[i]);
    }
    return a;
}

/* Runs rt until it is idle and returns the seconds since t0 (bench_now):
 * the timed span ends when the last message has been handled. */
static inline double bench_run_since(ac_runtime *rt, double t0)
{
    ac_runtime_run(rt);
    return bench_now() - t0;
}

/* A TCP port on 127.0.0.1 that nobody listens on now (the kernel's pick).
 * `keep` (may be NULL) holds its socket open, so that ports drawn while it
 * is held all differ; the caller closes it. */
static inline int bench_free_port(int *keep)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(s, (struct sockaddr *)&a, &len) != 0)
        bench_fail("bench: no free port on 127.0.0.1: %s", strerror(errno));
    if (keep != NULL)
        *keep = s;
    else
        close(s);
    return ntohs(a.sin_port);
}

static inline void bench_check(int rc, const char *what)
{
    if (rc != 0)
        bench_fail("%s: %s", what, ac_strerror(rc));
}

static inline ac_runtime *bench_runtime(void)
{
    ac_runtime *rt;
    bench_check(ac_runtime_create(&rt, NULL), "ac_runtime_create (check AC_WORKERS)");
    return rt;
}

/* The one output line, with the peak RSS given (bench_report: this
 * process's). */
static inline void bench_report_rss(const char *name, const char *params, double seconds,
                                    double messages, long peak_rss_kb)
{
    printf("%s %s %.6f %.0f %ld\n", name, params, seconds,
           seconds > 0 ? messages / seconds : 0.0, peak_rss_kb);
    fflush(stdout);
}

static inline void bench_report(const char *name, const char *params, double seconds,
                                double messages)
{
    bench_report_rss(name, params, seconds, messages, bench_peak_rss_kb());
}

#endif
