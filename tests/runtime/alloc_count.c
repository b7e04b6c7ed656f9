/*
 * alloc_count.c — counts heap allocations made by the test binary, through
 * the linker's --wrap (tests/build.mk), so a test can prove that a code
 * path allocates nothing; and fails chosen ones, so a test can prove that
 * every allocation failure of a workload is survivable.
 */
#include "alloc_count.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

static _Atomic uint64_t allocations;
/* Allocation number fail_at (counted from the arming) fails, and with
 * fail_forever every later one too; 0: none fails. Relaxed throughout:
 * the tests that arm it run the runtime deterministically, on one thread. */
static _Atomic uint64_t fail_at, armed_at, failures;
static _Atomic bool fail_forever;

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void *__real_aligned_alloc(size_t align, size_t size);
int __real_posix_memalign(void **out, size_t align, size_t size);

void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
void *__wrap_aligned_alloc(size_t align, size_t size);
int __wrap_posix_memalign(void **out, size_t align, size_t size);

/* Relaxed: a counter read after the threads that bump it have synchronised
 * with the reader (ac_runtime_run). */
/* Counts one allocation; true when it is to fail. */
static bool count(void)
{
    uint64_t n = atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed) + 1;
    uint64_t at = atomic_load_explicit(&fail_at, memory_order_relaxed);
    if (at == 0)
        return false;
    uint64_t nth = n - atomic_load_explicit(&armed_at, memory_order_relaxed);
    if (nth == at || (nth > at && atomic_load_explicit(&fail_forever, memory_order_relaxed))) {
        atomic_fetch_add_explicit(&failures, 1, memory_order_relaxed);
        return true;
    }
    return false;
}

void *__wrap_malloc(size_t size) { return count() ? NULL : __real_malloc(size); }
void *__wrap_calloc(size_t n, size_t size) { return count() ? NULL : __real_calloc(n, size); }
void *__wrap_realloc(void *p, size_t size) { return count() ? NULL : __real_realloc(p, size); }
void *__wrap_aligned_alloc(size_t align, size_t size)
{
    return count() ? NULL : __real_aligned_alloc(align, size);
}
int __wrap_posix_memalign(void **out, size_t align, size_t size)
{
    return count() ? ENOMEM : __real_posix_memalign(out, align, size);
}

uint64_t alloc_fail_from(uint64_t n, bool forever)
{
    uint64_t made = atomic_exchange_explicit(&failures, 0, memory_order_relaxed);
    atomic_store_explicit(&fail_at, 0, memory_order_relaxed);
    atomic_store_explicit(&armed_at, atomic_load_explicit(&allocations, memory_order_relaxed),
                          memory_order_relaxed);
    atomic_store_explicit(&fail_forever, forever, memory_order_relaxed);
    atomic_store_explicit(&fail_at, n, memory_order_relaxed);
    return made;
}

uint64_t alloc_count(void)
{
    return atomic_load_explicit(&allocations, memory_order_relaxed);
}
