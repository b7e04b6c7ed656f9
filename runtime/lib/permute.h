/*
 * permute.h — a keyed permutation of the 64-bit integers: numbers that
 * must be unique (they come from a counter) and must not be guessable
 * from one another (a monitor's reference).
 */
#ifndef AC_LIB_PERMUTE_H
#define AC_LIB_PERMUTE_H

#include "table.h"

#include <stdint.h>

/* The image of x under the permutation that key k chooses: distinct x
 * give distinct results, and without k the next result cannot be told
 * from the last ones. */
uint64_t ac__permute64(const ac__hash_key *k, uint64_t x);

#endif /* AC_LIB_PERMUTE_H */
