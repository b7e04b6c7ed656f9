/*
 * frame.h — the node protocol's batches (docs/WIRE.md, "Node frames"): one
 * ZeroMQ message from one node to another, a header and a run of records.
 * Encoding into a buffer and a parser that fails closed, on the wire
 * primitives of actorc.h; only the node includes it.
 */
#ifndef AC_NODE_FRAME_H
#define AC_NODE_FRAME_H

#include "../core/transport.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AC__FRAME_MAGIC 0x314E4341u  /* "ACN1" little-endian */
#define AC__FRAME_VERSION 2u
#define AC__FRAME_HEADER_SIZE 32u
#define AC__RECORD_HEADER_SIZE 5u    /* u32 length (of what follows it), u8 op */

/* The transport's own records; the services' control records take the
 * ops of core/transport.h. */
typedef enum ac__frame_op {
    AC__OP_HELLO = 1, /* the sender's name: first record on every new link */
    AC__OP_BYE = 2,   /* the sender removed the receiver from its peers */
    AC__OP_MSG = 3,   /* a message for an actor of the receiver */
    AC__OP_ACK = 9    /* the batches the sender took from the receiver */
} ac__frame_op;
_Static_assert((((1u << AC__OP_HELLO) | (1u << AC__OP_BYE) | (1u << AC__OP_MSG) |
                 (1u << AC__OP_ACK)) & AC__CONTROL_OP_MASK) == 0 &&
                   AC__OP_ACK < AC__OPS,
               "a record op of the transport is a service's control op");

/* An ACK's body: the last batch taken (u64 seq) and the records taken,
 * all told, from the receiver's incarnation. */
#define AC__ACK_BODY_SIZE 16u

/* A MSG record: the record header, the target's address, the tag and the
 * target type's id, then the message as its type's codec encodes it. */
#define AC__MSG_HEAD_SIZE (AC__RECORD_HEADER_SIZE + 32u + 4u + 8u)

typedef struct ac__msg {
    ac_addr to;
    uint32_t tag;
    uint64_t type_id;        /* ac__type_id of the target's type */
    const uint8_t *payload;
    size_t len;
} ac__msg;

typedef struct ac__frame_header {
    uint16_t records;
    uint64_t from_node;  /* the sender's incarnation (ac_runtime_node) */
    uint64_t to_node;    /* the receiver's, as the sender knows it; 0: not yet */
    uint64_t seq;        /* the batch's number among all the sender's batches
                            to the receiver (from 1; 0 in none) */
} ac__frame_header;

/* One record of a parsed batch: its op and body (length bytes). */
typedef struct ac__record {
    uint8_t op;
    const uint8_t *body;
    uint32_t len;
} ac__record;

/* A batch being read. */
typedef struct ac__frame_reader {
    ac_wire_in in;
    uint16_t left;       /* records still to read */
} ac__frame_reader;

/* Writes a header into out (AC__FRAME_HEADER_SIZE bytes). */
void ac__frame_put_header(ac_wire_out *out, const ac__frame_header *h);
/* A HELLO record carrying `name` (1..AC_NODE_NAME_MAX bytes). */
void ac__frame_put_hello(ac_wire_out *out, const char *name);
/* The header of a record whose body (len bytes) follows it. */
void ac__frame_put_record_head(ac_wire_out *out, uint8_t op, size_t len);
/* A record without a body. */
void ac__frame_put_empty(ac_wire_out *out, ac__frame_op op);
/* The head of a MSG record whose encoded message has `len` bytes (they
 * follow it). */
void ac__frame_put_msg_head(ac_wire_out *out, const ac_addr *to, uint32_t tag,
                            uint64_t type_id, size_t len);

/* Starts reading buf[0..len): the header, checked (magic, version); false
 * when it is not a batch of this protocol. */
bool ac__frame_open(ac__frame_reader *r, const uint8_t *buf, size_t len, ac__frame_header *h);
/* The next record: 1, 0 at the end of a well-formed batch, or -1 when
 * the batch is malformed (a length past its end, a record count that does
 * not match, bytes after the last record). */
int ac__frame_next(ac__frame_reader *r, ac__record *rec);
/* The fields of a MSG record; false when malformed. */
bool ac__frame_get_msg(const ac__record *rec, ac__msg *m);
/* The name in a HELLO body, copied with its NUL; false when malformed. */
bool ac__frame_get_hello(const ac__record *rec, char name[AC_NODE_NAME_MAX + 1]);
/* An ACK record. */
void ac__frame_put_ack(ac_wire_out *out, uint64_t seq, uint64_t records);
/* The fields of an ACK record; false when malformed. */
bool ac__frame_get_ack(const ac__record *rec, uint64_t *seq, uint64_t *records);

#endif /* AC_NODE_FRAME_H */
