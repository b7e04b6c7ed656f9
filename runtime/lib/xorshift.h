/*
 * xorshift.h — Marsaglia's xorshift64: a cheap, statistically fair enough
 * choice among peers (a victim to steal from, a worker of a random router),
 * never a secret (addresses come from addr.c's ChaCha20 stream).
 */
#ifndef AC_LIB_XORSHIFT_H
#define AC_LIB_XORSHIFT_H

#include <stdint.h>

/* The next value of the state *s, which must not be 0. */
static inline uint64_t ac__xorshift64(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

#endif /* AC_LIB_XORSHIFT_H */
