/*
 * frame.c — node batches (frame.h; the format is in docs/WIRE.md).
 */
#include "frame.h"

#include <string.h>

void ac__frame_put_header(ac_wire_out *out, const ac__frame_header *h)
{
    ac_wire_u32(out, AC__FRAME_MAGIC);
    ac_wire_u16(out, AC__FRAME_VERSION);
    ac_wire_u16(out, h->records);
    ac_wire_u64(out, h->from_node);
    ac_wire_u64(out, h->to_node);
    ac_wire_u64(out, h->seq);
}

void ac__frame_put_hello(ac_wire_out *out, const char *name)
{
    size_t n = strlen(name);
    ac_wire_u32(out, (uint32_t)(1 + 1 + n));  /* op, length, name */
    ac_wire_u8(out, AC__OP_HELLO);
    ac_wire_u8(out, (uint8_t)n);
    ac_wire_bytes(out, name, n);
}

void ac__frame_put_record_head(ac_wire_out *out, uint8_t op, size_t len)
{
    ac_wire_u32(out, (uint32_t)(1 + len));
    ac_wire_u8(out, op);
}

void ac__frame_put_empty(ac_wire_out *out, ac__frame_op op)
{
    ac__frame_put_record_head(out, (uint8_t)op, 0);
}

void ac__frame_put_msg_head(ac_wire_out *out, const ac_addr *to, uint32_t tag,
                            uint64_t type_id, size_t len)
{
    ac_wire_u32(out, (uint32_t)(AC__MSG_HEAD_SIZE - 4 + len));
    ac_wire_u8(out, AC__OP_MSG);
    ac_wire_bytes(out, to->bytes, sizeof to->bytes);
    ac_wire_u32(out, tag);
    ac_wire_u64(out, type_id);
}

bool ac__frame_get_msg(const ac__record *rec, ac__msg *m)
{
    if (rec->op != AC__OP_MSG || rec->len < AC__MSG_HEAD_SIZE - AC__RECORD_HEADER_SIZE)
        return false;
    ac_wire_in in = {rec->body, rec->len, 0, false, 0};
    memcpy(m->to.bytes, ac_wire_take(&in, sizeof m->to.bytes), sizeof m->to.bytes);
    m->tag = ac_wire_get_u32(&in);
    m->type_id = ac_wire_get_u64(&in);
    m->payload = rec->body + in.pos;
    m->len = rec->len - in.pos;
    return !in.bad && m->tag < AC_TAG_SYSTEM;
}

bool ac__frame_open(ac__frame_reader *r, const uint8_t *buf, size_t len, ac__frame_header *h)
{
    memset(r, 0, sizeof *r);
    r->in.p = buf;
    r->in.len = len;
    uint32_t magic = ac_wire_get_u32(&r->in);
    uint16_t version = ac_wire_get_u16(&r->in);
    h->records = ac_wire_get_u16(&r->in);
    h->from_node = ac_wire_get_u64(&r->in);
    h->to_node = ac_wire_get_u64(&r->in);
    h->seq = ac_wire_get_u64(&r->in);
    r->left = h->records;
    return !r->in.bad && magic == AC__FRAME_MAGIC && version == AC__FRAME_VERSION &&
           h->from_node != 0 && h->seq != 0;
}

int ac__frame_next(ac__frame_reader *r, ac__record *rec)
{
    if (r->left == 0)
        return r->in.pos == r->in.len ? 0 : -1;
    uint32_t len = ac_wire_get_u32(&r->in);
    rec->op = ac_wire_get_u8(&r->in);
    if (r->in.bad || len < 1 || len - 1 > r->in.len - r->in.pos)
        return -1;
    rec->len = len - 1;
    rec->body = r->in.p + r->in.pos;  /* inside the input: checked above */
    r->in.pos += rec->len;
    r->left--;
    return 1;
}

bool ac__frame_get_hello(const ac__record *rec, char name[AC_NODE_NAME_MAX + 1])
{
    if (rec->op != AC__OP_HELLO || rec->len < 1)
        return false;
    size_t n = rec->body[0];
    if (n == 0 || n > AC_NODE_NAME_MAX || rec->len != 1 + n ||
        memchr(rec->body + 1, '\0', n) != NULL)
        return false;
    memcpy(name, rec->body + 1, n);
    name[n] = '\0';
    return true;
}

void ac__frame_put_ack(ac_wire_out *out, uint64_t seq, uint64_t records)
{
    ac__frame_put_record_head(out, AC__OP_ACK, AC__ACK_BODY_SIZE);
    ac_wire_u64(out, seq);
    ac_wire_u64(out, records);
}

bool ac__frame_get_ack(const ac__record *rec, uint64_t *seq, uint64_t *records)
{
    if (rec->op != AC__OP_ACK || rec->len != AC__ACK_BODY_SIZE)
        return false;
    ac_wire_in in = {rec->body, rec->len, 0, false, 0};
    *seq = ac_wire_get_u64(&in);
    *records = ac_wire_get_u64(&in);
    return !in.bad;
}
