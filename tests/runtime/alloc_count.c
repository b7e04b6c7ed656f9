/*
 * alloc_count.c — counts heap allocations made by the test binary, through
 * the linker's --wrap (tests/build.mk), so a test can prove that a code
 * path allocates nothing.
 */
#include "alloc_count.h"

#include <stdatomic.h>
#include <stddef.h>

static _Atomic uint64_t allocations;

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
#define COUNT() atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed)

void *__wrap_malloc(size_t size) { COUNT(); return __real_malloc(size); }
void *__wrap_calloc(size_t n, size_t size) { COUNT(); return __real_calloc(n, size); }
void *__wrap_realloc(void *p, size_t size) { COUNT(); return __real_realloc(p, size); }
void *__wrap_aligned_alloc(size_t align, size_t size)
{
    COUNT();
    return __real_aligned_alloc(align, size);
}
int __wrap_posix_memalign(void **out, size_t align, size_t size)
{
    COUNT();
    return __real_posix_memalign(out, align, size);
}

uint64_t alloc_count(void)
{
    return atomic_load_explicit(&allocations, memory_order_relaxed);
}
