/*
 * remote.c — the notes of remote.h: written and read by the shape each
 * service gives its sub-ops.
 */
#include "remote.h"

#include <string.h>

static unsigned shape_of(const ac__note_shapes *k, uint8_t op)
{
    return op < k->count ? k->shapes[op] : 0;
}

int ac__note_send(ac_ctx *cx, const ac__note_shapes *k, uint64_t node, const ac__note *n)
{
    unsigned shape = shape_of(k, n->op);
    if (shape == 0)
        return AC_EINVAL;
    uint8_t buf[AC__NOTE_MAX];
    ac_wire_out o = {buf, sizeof buf, 0};
    ac_wire_u8(&o, n->op);
    ac_wire_bytes(&o, n->first.bytes, sizeof n->first.bytes);
    if (shape & AC__NOTE_SECOND)
        ac_wire_bytes(&o, n->second.bytes, sizeof n->second.bytes);
    if (shape & AC__NOTE_REF)
        ac_wire_u64(&o, n->ref);
    if (shape & AC__NOTE_FATE) {
        ac_wire_u32(&o, (uint32_t)n->reason);
        ac_wire_u32(&o, (uint32_t)n->code);
    }
    return ac__transmit(cx, node, k->control_op, buf, o.len, 0);
}

/* Zeros past the end (ac_wire_take), which the caller then refuses. */
static void get_addr(ac_wire_in *in, ac_addr *a)
{
    memcpy(a->bytes, ac_wire_take(in, sizeof a->bytes), sizeof a->bytes);
}

int ac__note_read(ac_ctx *cx, const ac__note_shapes *k, uint64_t from, const uint8_t *body,
                  size_t len, ac__note *n)
{
    memset(n, 0, sizeof *n);
    ac_wire_in in = {body, len, 0, false, 0};
    n->op = ac_wire_get_u8(&in);
    unsigned shape = shape_of(k, n->op);
    get_addr(&in, &n->first);
    if (shape & AC__NOTE_SECOND)
        get_addr(&in, &n->second);
    if (shape & AC__NOTE_REF)
        n->ref = ac_wire_get_u64(&in);
    if (shape & AC__NOTE_FATE) {
        n->reason = (int)ac_wire_get_u32(&in);
        n->code = (int)ac_wire_get_u32(&in);
    }
    if (shape == 0 || in.bad || in.pos != len)
        return AC_EINVAL;
    bool second_theirs = shape & AC__NOTE_SENDER_SECOND;
    const ac_addr *theirs = second_theirs ? &n->second : &n->first;
    const ac_addr *ours = second_theirs ? &n->first : (shape & AC__NOTE_SECOND) ? &n->second : NULL;
    if (!ac__note_from(from, theirs))
        return AC__EFORGED;
    if (ours != NULL && ac__addr_remote(cx, ours))
        return AC_EINVAL;  /* about an actor of a third node */
    return 0;
}

bool ac__note_on_node(const ac__amap_node *x, void *node)
{
    return ac_addr_node(&x->key) == *(const uint64_t *)node;
}
