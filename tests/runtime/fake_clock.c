/*
 * fake_clock.c — CLOCK_MONOTONIC as a test sets it (fake_clock.h).
 */
#include "fake_clock.h"

#include <stdatomic.h>
#include <time.h>

int __real_clock_gettime(clockid_t id, struct timespec *ts);
int __wrap_clock_gettime(clockid_t id, struct timespec *ts);

/* The frozen instant in ns; 0: not frozen. Relaxed: a time carries no
 * data; a reader that sees the change late reads one more real (or
 * frozen) time, as it would had it read a moment earlier. */
static _Atomic uint64_t frozen;

int __wrap_clock_gettime(clockid_t id, struct timespec *ts)
{
    uint64_t ns = atomic_load_explicit(&frozen, memory_order_relaxed);
    if (ns == 0 || id != CLOCK_MONOTONIC)
        return __real_clock_gettime(id, ts);
    ts->tv_sec = (time_t)(ns / 1000000000u);
    ts->tv_nsec = (long)(ns % 1000000000u);
    return 0;
}

void clock_freeze(uint64_t ns)
{
    atomic_store_explicit(&frozen, ns, memory_order_relaxed);
}

void clock_thaw(void)
{
    atomic_store_explicit(&frozen, 0, memory_order_relaxed);
}
