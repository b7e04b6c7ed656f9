/*
 * addr.h — a context's stream of fresh addresses: random bytes (ChaCha20
 * keyed from libsodium, so a spawn needs no system call) around the node id
 * of the runtime that makes them (actorc.h, AC_ADDR_NODE_OFFSET).
 */
#ifndef AC_CORE_ADDR_H
#define AC_CORE_ADDR_H

#include "actorc.h"

#include <stdint.h>

typedef struct ac__addr_stream {
    uint8_t node[8];    /* the node id, little-endian: bytes 8-15 of each address */
    uint8_t key[32];
    uint64_t nonce;
    uint32_t pos;
    /* 64 addresses' 24 random bytes each: 24 ChaCha20 blocks, no block
     * cut at a refill (addr.c). */
    uint8_t buf[64 * (sizeof(ac_addr) - 8)];
} ac__addr_stream;

void ac__addr_stream_init(ac__addr_stream *s, uint64_t node);
void ac__addr_next(ac__addr_stream *s, ac_addr *out);

#endif /* AC_CORE_ADDR_H */
