#ifndef TESTS_RUNTIME_ALLOC_COUNT_H
#define TESTS_RUNTIME_ALLOC_COUNT_H

#include <stdint.h>

/* Heap allocations made so far by any code linked into the test binary. */
uint64_t alloc_count(void);

#endif
