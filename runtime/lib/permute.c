/*
 * permute.c — a keyed permutation of 64-bit integers: a balanced Feistel
 * network on two 32-bit halves whose round function is SipHash-2-4 under
 * the key (ac__hash_keyed, libsodium's crypto_shorthash).
 *
 * Why a Feistel network: a counter run through it gives numbers that are
 * distinct for as long as the counter does not wrap (each round is
 * invertible whatever the round function is), where a keyed hash of the
 * counter alone could collide after 2^32 of them. Four rounds with a
 * pseudorandom round function make a pseudorandom permutation (Luby and
 * Rackoff): seeing some outputs tells nothing useful about the others.
 */
#include "permute.h"

#include <string.h>

enum { ROUNDS = 4 };

uint64_t ac__permute64(const ac__hash_key *k, uint64_t x)
{
    uint32_t left = (uint32_t)(x >> 32), right = (uint32_t)x;
    for (unsigned r = 0; r < ROUNDS; r++) {
        /* The round number is hashed with the half, so the rounds differ
         * under one key. */
        char in[5];
        in[0] = (char)r;
        memcpy(in + 1, &right, sizeof right);
        uint32_t f = (uint32_t)ac__hash_keyed(k, in, sizeof in);
        uint32_t next = left ^ f;
        left = right;
        right = next;
    }
    return (uint64_t)left << 32 | right;
}
