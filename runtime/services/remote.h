/*
 * remote.h — what the services that keep state about actors of other
 * nodes share (core/transport.h says how their records travel).
 *
 * Most of what they say to a peer is a note about one or two actors: a
 * sub-op, an address, maybe a second, maybe a reference, maybe the facts
 * of a death (a monitor's ADD, DEL and DOWN, a link's ADD, DEL and EXIT;
 * docs/WIRE.md, "Control records"). Each service lists the shape of each
 * of its sub-ops once, and this file writes and reads them and makes the
 * checks every record about actors gets: an actor the record says is its
 * sender's must live on the node that sent it (else the record is
 * forged), and an actor it says is ours must live here (else it is
 * malformed: about a third node). CAF's BASP has one monitor/down pair
 * for all remote liveness; this is that pair's codec, shared.
 */
#ifndef AC_SERVICES_REMOTE_H
#define AC_SERVICES_REMOTE_H

#include "../core/service.h"
#include "../core/transport.h"

#include "../lib/amap.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A sub-op's shape: which fields follow its first address, and which
 * address names the sender's actor. */
enum {
    AC__NOTE_SECOND = 1u << 0,  /* a second address */
    AC__NOTE_REF = 1u << 1,     /* a u64 reference */
    AC__NOTE_FATE = 1u << 2,    /* a death's reason and code (u32 each) */
    /* The second address, not the first, names the sender's actor (the
     * first then names ours). Else the first is the sender's, and the
     * second, when there is one, ours. */
    AC__NOTE_SENDER_SECOND = 1u << 3,
};

typedef struct ac__note {
    uint8_t op;                /* the service's sub-op: an index of its shapes */
    ac_addr first, second;
    uint64_t ref;
    int reason, code;
} ac__note;

/* A service's shapes: shapes[op] for each sub-op op in 1 .. count - 1
 * (0: no such sub-op). */
typedef struct ac__note_shapes {
    uint8_t control_op;        /* its records' op (transport.h) */
    const uint8_t *shapes;
    size_t count;
} ac__note_shapes;

/* The most bytes a note takes. */
#define AC__NOTE_MAX (1u + 32u + 32u + 8u + 4u + 4u)

/* Sends n to node `node` (runtime control: never refused for a full
 * queue). As ac__transmit; AC_EINVAL for a sub-op of no shape. */
int ac__note_send(ac_ctx *cx, const ac__note_shapes *k, uint64_t node, const ac__note *n);
/* Reads a note from node `from` into *n: AC_EINVAL when it is malformed
 * (a sub-op of no shape, a field missing or one too many, an actor it says
 * is ours that is not), AC__EFORGED when the actor it says is the
 * sender's does not live on `from`. */
int ac__note_read(ac_ctx *cx, const ac__note_shapes *k, uint64_t from, const uint8_t *body,
                  size_t len, ac__note *n);
/* Whether a record from node `from` that says `addr` is one of its actors
 * is believed. */
static inline bool ac__note_from(uint64_t from, const ac_addr *addr)
{
    return ac_addr_node(addr) == from;
}
/* For ac__amap_select: the records whose key is an actor of node *(const
 * uint64_t *)node (a node-lost sweep). */
bool ac__note_on_node(const ac__amap_node *x, void *node);

#endif /* AC_SERVICES_REMOTE_H */
