/*
 * wire.c — the primitives of the wire format (docs/WIRE.md) that the
 * generated codecs call: little-endian scalars, an output that counts what
 * it cannot store, and an input that fails closed.
 */
#include "actorc.h"

#include <string.h>

size_t ac_wire_align(size_t at, size_t align)
{
    return (at + align - 1) & ~(align - 1);
}

void ac_wire_grow(size_t *at, size_t align, size_t count, size_t size)
{
    if (*at > AC_MAX_PAYLOAD)
        return;
    if (count > AC_MAX_PAYLOAD / size) {
        *at = AC_MAX_PAYLOAD + 1;
        return;
    }
    *at = ac_wire_align(*at, align) + count * size;
}

void ac_wire_bytes(ac_wire_out *o, const void *src, size_t n)
{
    if (n > 0 && o->len <= o->cap && n <= o->cap - o->len)
        memcpy(o->p + o->len, src, n);
    o->len += n;
}

void ac_wire_u8(ac_wire_out *o, uint8_t v)
{
    ac_wire_bytes(o, &v, 1);
}

void ac_wire_u16(ac_wire_out *o, uint16_t v)
{
    uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    ac_wire_bytes(o, b, 2);
}

void ac_wire_u32(ac_wire_out *o, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    ac_wire_bytes(o, b, 4);
}

void ac_wire_u64(ac_wire_out *o, uint64_t v)
{
    ac_wire_u32(o, (uint32_t)v);
    ac_wire_u32(o, (uint32_t)(v >> 32));
}

void ac_wire_f32(ac_wire_out *o, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    ac_wire_u32(o, u);
}

void ac_wire_f64(ac_wire_out *o, double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    ac_wire_u64(o, u);
}

const uint8_t *ac_wire_take(ac_wire_in *in, size_t n)
{
    static const uint8_t zeros[32];
    if (in->bad || n > in->len - in->pos) {
        in->bad = true;
        return zeros;
    }
    if (n == 0)
        return zeros;
    const uint8_t *p = in->p + in->pos;
    in->pos += n;
    return p;
}

uint8_t ac_wire_get_u8(ac_wire_in *in)
{
    return ac_wire_take(in, 1)[0];
}

uint16_t ac_wire_get_u16(ac_wire_in *in)
{
    const uint8_t *b = ac_wire_take(in, 2);
    return (uint16_t)(b[0] | b[1] << 8);
}

uint32_t ac_wire_get_u32(ac_wire_in *in)
{
    const uint8_t *b = ac_wire_take(in, 4);
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

uint64_t ac_wire_get_u64(ac_wire_in *in)
{
    uint64_t lo = ac_wire_get_u32(in);
    return lo | (uint64_t)ac_wire_get_u32(in) << 32;
}

float ac_wire_get_f32(ac_wire_in *in)
{
    uint32_t u = ac_wire_get_u32(in);
    float v;
    memcpy(&v, &u, 4);
    return v;
}

double ac_wire_get_f64(ac_wire_in *in)
{
    uint64_t u = ac_wire_get_u64(in);
    double v;
    memcpy(&v, &u, 8);
    return v;
}

void ac_wire_check_bool(ac_wire_in *in)
{
    if (ac_wire_get_u8(in) > 1)
        in->bad = true;
}

uint32_t ac_wire_get_count(ac_wire_in *in)
{
    uint32_t n = ac_wire_get_u32(in);
    if (n > in->len - in->pos) {
        in->bad = true;
        return 0;
    }
    return n;
}
