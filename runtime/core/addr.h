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
    /* The lanes its addresses fall in (ac__addr_stream_lanes): the top
     * AC__ADDR_LANE_BITS bits of bytes 0-7, little-endian, range over
     * [lane_first, lane_first + lane_count); all of them when lane_count
     * is 0. */
    uint8_t lane_first, lane_count;
    uint8_t buf[1024];
} ac__addr_stream;

/* The bits of a lane: as many as the routing table's shard bits, which
 * route.h checks, so that a lane is a shard. */
#define AC__ADDR_LANE_BITS 6

void ac__addr_stream_init(ac__addr_stream *s, uint64_t node);
/* Restricts the stream to `count` lanes from `first` (first + count <=
 * 1 << AC__ADDR_LANE_BITS; count 0 or all of them: no restriction). A
 * worker's spawns then land in its own shards of the routing table, whose
 * locks and slots stay in its cache (runtime/README.md, "Routing"). */
void ac__addr_stream_lanes(ac__addr_stream *s, unsigned first, unsigned count);
void ac__addr_next(ac__addr_stream *s, ac_addr *out);

#endif /* AC_CORE_ADDR_H */
