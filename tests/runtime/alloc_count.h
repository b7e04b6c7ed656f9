#ifndef TESTS_RUNTIME_ALLOC_COUNT_H
#define TESTS_RUNTIME_ALLOC_COUNT_H

#include <stdbool.h>
#include <stdint.h>

/* Heap allocations made so far by any code linked into the test binary. */
uint64_t alloc_count(void);

/* From now on, the n-th allocation fails (returns NULL), and with
 * `forever` every one after it too; n = 0 fails none. Returns how many
 * failed since the previous call. */
uint64_t alloc_fail_from(uint64_t n, bool forever);

#endif
