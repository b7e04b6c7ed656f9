/*
 * transport.h — the one interface between the runtime and other nodes.
 *
 * Two sides meet here, and neither names the other:
 *
 *  - a transport (the node, runtime/node/) carries what crosses nodes. It
 *    fills one struct ac__transport and hands it to the runtime from its
 *    service's init (ac__transport_set); the core then sends another
 *    node's address to its forward hook, and the services reach other
 *    nodes through its transmit hook, without a walk of the service table
 *    (SQLite's VFS, nginx's ngx_event_actions: one typed pointer). A
 *    runtime has no transport until one is set: sends to other nodes are
 *    dead letters, control records find no node up.
 *  - a service that keeps state about actors of other nodes (monitors,
 *    links, groups, names, asks) registers a role from its own init
 *    (ac__remote_register): the op of its control records, handed to its
 *    control hook as they arrive, and what it does when a node comes up or
 *    is lost. The transport hands records and node events to the runtime
 *    (ac__remote_control, ac__remote_node_up/lost), which finds the role by
 *    op. Adding a node-aware service is writing its file and an op below.
 *
 * services/remote.h has the record most roles exchange and the checks a
 * record about actors gets; docs/WIRE.md, "Control records", their bytes.
 */
#ifndef AC_CORE_TRANSPORT_H
#define AC_CORE_TRANSPORT_H

#include "actor.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The op of each role's control records, fixed by the wire (docs/WIRE.md,
 * "Control records"). The transport's own records take other numbers
 * below AC__OPS (node/frame.h checks that they do not meet these). */
#define AC__CONTROL_OPS(X)                                                    \
    X(REPLY, 4)   /* ask.c: a reply to an asker of the receiver */            \
    X(LINK, 5)    /* links.c */                                               \
    X(MONITOR, 6) /* monitors.c */                                            \
    X(NAME, 7)    /* names.c */                                               \
    X(GROUP, 8)   /* groups.c */

enum ac__control_op {
#define AC__CONTROL_OP(name, n) AC__OP_##name = n,
    AC__CONTROL_OPS(AC__CONTROL_OP)
#undef AC__CONTROL_OP
};
#define AC__CONTROL_OP_BIT(name, n) | (1u << (n))
#define AC__CONTROL_OP_MASK (0u AC__CONTROL_OPS(AC__CONTROL_OP_BIT))
/* Every op is below this (one byte of a record's header). */
#define AC__OPS 32u
#define AC__ROLES_MAX 8u

/* A control hook's verdict on a record about an actor that does not live
 * on the node that sent it (a forged down, exit or reply). */
#define AC__EFORGED (-1000)
/* Its verdict on a record that would make this node hold more for its
 * peer than the peer's quota of that table (ac__peer_quota). */
#define AC__EQUOTA (-1001)

/* How ac__transmit queues a record. */
enum {
    /* It carries a user's message (a group's publish, an answer a peer
     * asked for): refused with AC_EFULL past the queue's bound, as a
     * message is. Runtime control is never refused for a full queue. */
    AC__TRANSMIT_BOUNDED = 1u << 0,
    /* It is a send the caller counted (a program's reply): it ends in
     * node_forwarded when it leaves, or as a dead letter when lost. */
    AC__TRANSMIT_COUNTED = 1u << 1,
};

typedef struct ac__transport {
    /* A send to an address of another node (no actor of this runtime has
     * it, and its node id is not this runtime's): true when the transport
     * took the message (e consumed, *rc the send's result), false to leave
     * it a dead letter. `type` is the target's when the sender knows it
     * (ac_send_typed), else NULL. */
    bool (*forward)(ac_ctx *cx, void *state, const ac_addr *to, const ac_actor_type *type,
                    ac__env *e, int *rc);
    /* Queues a control record of `op` (body: len bytes) for node `node`,
     * in order with the messages; `how`: AC__TRANSMIT_*. AC_ENOTFOUND
     * when that node is not up, AC_EFULL, AC_EINVAL (too long), AC_ENOMEM. */
    int (*transmit)(ac_ctx *cx, void *state, uint64_t node, uint8_t op, const uint8_t *body,
                    size_t len, unsigned how);
    /* How many nodes are up, and their ids (up to max); the id of the one
     * named `name`, 0 unless it is up. */
    size_t (*nodes_up)(void *state, uint64_t *out, size_t max);
    uint64_t (*node_named)(void *state, const char *name);
    /* The most records one peer node's control records may make a role
     * hold in one of its tables (ac_node_config.peer_table_max). */
    uint32_t (*peer_quota)(void *state);
} ac__transport;

/* What a node-aware service registers (see the top of this file). Each
 * hook runs on the transport's thread, online; `control` gets the records
 * of `op` from node incarnation `from` (the transport checked that the
 * link authenticated as it) in the order they were sent. It returns 0,
 * AC_EINVAL for a malformed body, AC__EFORGED or AC__EQUOTA, which the
 * transport counts. node_up: `node` came up (its link is through and it
 * greeted us); node_lost: it is gone (its link went down, it was removed,
 * or it came back as a new incarnation), after every record it sent. */
typedef struct ac__remote_role {
    uint8_t op;
    int (*control)(ac_ctx *cx, void *state, uint64_t from, const uint8_t *body, size_t len);
    void (*node_up)(ac_ctx *cx, void *state, uint64_t node);
    void (*node_lost)(ac_ctx *cx, void *state, uint64_t node);
} ac__remote_role;

/* What both ends call a type: the FNV-1a hash of its name ("module.Actor"),
 * so a message is decoded only by the type it was encoded for. */
uint64_t ac__type_id(const ac_actor_type *type);

/* ---- for a service that speaks across nodes ------------------------------------ */

/* From a service's init: `role` (static) with `state` for rt. AC_EEXIST
 * when its op is taken, AC_EINVAL when it is no control op, AC_ENOMEM
 * past AC__ROLES_MAX. */
int ac__remote_register(ac_runtime *rt, const ac__remote_role *role, void *state);
/* Whether `addr` names an actor of another node. */
bool ac__addr_remote(ac_ctx *cx, const ac_addr *addr);
/* See ac__transport.transmit; AC_ENOTFOUND without a transport. */
int ac__transmit(ac_ctx *cx, uint64_t node, uint8_t op, const uint8_t *body, size_t len,
                 unsigned how);
/* The incarnation of the node named `name` while it is up, else 0. */
uint64_t ac__node_named(ac_ctx *cx, const char *name);
/* The nodes up now; 0 when this is no node. */
size_t ac__nodes_up(ac_ctx *cx, uint64_t *out, size_t max);
/* A peer's quota in each table; UINT32_MAX when this is no node. */
uint32_t ac__peer_quota(ac_ctx *cx);

/* ---- for the transport ------------------------------------------------------------ */

/* From the transport's service init: the runtime's one transport. */
void ac__transport_set(ac_runtime *rt, const ac__transport *t, void *state);
/* A control record of `op` from node `from`, handed to its role
 * (AC_EINVAL when no role has that op). */
int ac__remote_control(ac_ctx *cx, uint64_t from, uint8_t op, const uint8_t *body, size_t len);
/* Whether a role takes records of `op`. */
bool ac__remote_op(ac_runtime *rt, uint8_t op);
/* Node `node` came up, or is gone: every role hears it, in the order they
 * registered. */
void ac__remote_node_up(ac_ctx *cx, uint64_t node);
void ac__remote_node_lost(ac_ctx *cx, uint64_t node);
/* For the transport's thread: while held, an actor that a send of this
 * context makes runnable stays with it instead of going to the workers,
 * and ac__run_held runs one turn of each on this thread, handing to the
 * workers whatever has more to do. A message that arrives for an idle
 * actor is then handled without waking a worker: one thread hand-off less
 * (runtime/README.md, "Nodes"). Not in deterministic mode. */
void ac__hold_runnable(ac_ctx *cx, bool on);
void ac__run_held(ac_ctx *cx);
/* A message decoded for the actor at `to`, which the transport found
 * with `a` (ac__lookup, online) so as to decode it by a's type: sent
 * as ac_send would, without looking the actor up again. */
int ac__send_found(ac_ctx *cx, ac__actor *a, const ac_addr *to, ac_envelope *e);

#endif /* AC_CORE_TRANSPORT_H */
