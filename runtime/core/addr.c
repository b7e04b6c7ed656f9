/*
 * addr.c — actor addresses: 32 bytes, 24 of them from a per-context
 * ChaCha20 stream, 8 the node id of the runtime.
 *
 * Each context draws a 256-bit key from the operating system once
 * (randombytes_buf) and then expands it with crypto_stream_chacha20, 1.5 KiB
 * (64 addresses) at a time under an incrementing nonce. The stream is as
 * unpredictable as the key, and a spawn costs two copies instead of a
 * system call. An address takes 24 bytes of the stream, not 32: the node
 * id overwrote the other 8, so a quarter of every refill was thrown away
 * (27 instructions a spawn, callgrind on skynet). Each stream byte still
 * goes into one address and never into a second one, so the addresses
 * are exactly as independent and as unpredictable as before; only less
 * keystream is wasted. Bytes 0-7 stay random, since the routing table hashes by them
 * (route.c); bytes 8-15 say which runtime, and which incarnation of it,
 * the actor lives on, so an address outlives neither its node's process
 * nor a restart of it; the other 192 bits are what makes an address
 * unguessable.
 */
#include "addr.h"

#include <sodium.h>
#include <string.h>

void ac__addr_stream_init(ac__addr_stream *s, uint64_t node)
{
    for (unsigned i = 0; i < sizeof s->node; i++)
        s->node[i] = (uint8_t)(node >> (8 * i));
    randombytes_buf(s->key, sizeof s->key);
    s->nonce = 0;
    s->pos = sizeof s->buf;  /* empty: the first use refills */
}

static void refill(ac__addr_stream *s)
{
    unsigned char nonce[crypto_stream_chacha20_NONCEBYTES];
    _Static_assert(sizeof nonce == sizeof s->nonce, "64-bit ChaCha20 nonce");
    memcpy(nonce, &s->nonce, sizeof nonce);
    s->nonce++;
    crypto_stream_chacha20(s->buf, sizeof s->buf, nonce, s->key);
    s->pos = 0;
}

/* The stream's bytes an address takes: all but the node id's. */
#define RANDOM_BYTES (sizeof(ac_addr) - sizeof(((ac__addr_stream *)0)->node))
_Static_assert(AC_ADDR_NODE_OFFSET == 8 && RANDOM_BYTES == 24,
               "bytes 0-7 and 16-31 random, 8-15 the node id");
_Static_assert(sizeof(((ac__addr_stream *)0)->buf) % RANDOM_BYTES == 0,
               "a refill holds whole addresses");
_Static_assert(sizeof(((ac__addr_stream *)0)->buf) % 64 == 0,
               "a refill is whole ChaCha20 blocks: no keystream cut off");

void ac__addr_next(ac__addr_stream *s, ac_addr *out)
{
    if (s->pos == sizeof s->buf)
        refill(s);
    const uint8_t *r = s->buf + s->pos;
    s->pos += (uint32_t)RANDOM_BYTES;
    memcpy(out->bytes, r, AC_ADDR_NODE_OFFSET);
    memcpy(out->bytes + AC_ADDR_NODE_OFFSET, s->node, sizeof s->node);
    memcpy(out->bytes + AC_ADDR_NODE_OFFSET + sizeof s->node, r + AC_ADDR_NODE_OFFSET,
           RANDOM_BYTES - AC_ADDR_NODE_OFFSET);
}

uint64_t ac_addr_node(const ac_addr *a)
{
    if (a == NULL)
        return 0;  /* nil's node */
    /* Little-endian bytes: one load where the host is little-endian (the
     * byte loop cost ~60 instructions, and every ask and reply asks
     * whether its address is remote). */
    uint64_t node;
    memcpy(&node, a->bytes + AC_ADDR_NODE_OFFSET, sizeof node);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    node = __builtin_bswap64(node);
#endif
    return node;
}

/* NULL stands for no address: equal only to NULL, and nil. */
bool ac_addr_eq(const ac_addr *a, const ac_addr *b)
{
    if (a == NULL || b == NULL)
        return a == b;
    return memcmp(a->bytes, b->bytes, sizeof a->bytes) == 0;
}

bool ac_addr_is_nil(const ac_addr *a)
{
    static const ac_addr nil;
    return a == NULL || ac_addr_eq(a, &nil);
}

char *ac_addr_format(const ac_addr *a, char *buf, size_t nbytes)
{
    static const char hex[] = "0123456789abcdef";
    if (a == NULL || buf == NULL)
        return NULL;
    if (nbytes < 1 || nbytes > sizeof a->bytes)
        nbytes = sizeof a->bytes;
    for (size_t i = 0; i < nbytes; i++) {
        buf[2 * i] = hex[a->bytes[i] >> 4];
        buf[2 * i + 1] = hex[a->bytes[i] & 15];
    }
    buf[2 * nbytes] = '\0';
    return buf;
}
