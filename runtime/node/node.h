/*
 * node.h — what the files of the node share (node.c says how it works):
 * its tunables, a peer, the node's state, and the pieces each file offers
 * the others. Private to runtime/node/.
 */
#ifndef AC_NODE_NODE_H
#define AC_NODE_NODE_H

#include "cluster.h"
#include "frame.h"

#include "../core/transport.h"
#include "../services/services.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zmq.h>

#define DEFAULT_HEARTBEAT_MS 200
#define DEFAULT_TIMEOUT_MS 800
#define HANDSHAKE_MS 2000      /* a peer frozen mid-handshake is given up */
#define RECONNECT_MS 100
#define RECONNECT_MAX_MS 1000
#define MAX_BATCH (64u << 20)  /* the ROUTER refuses larger messages */
#define RETRY_MS 10            /* a greeting the link could not take yet */
#define DEFAULT_QUEUE 65536    /* records waiting per peer */
#define DEFAULT_PEER_TABLE 65536 /* records a peer may make a service hold, per table */
#define DEFAULT_QUEUE_BYTES ((uint64_t)64 << 20)  /* their bytes */
/* The file descriptors a peer takes: its DEALER's mailbox and TCP
 * connection, the two PAIRs of its socket monitor, and its own link to our
 * ROUTER; and the node itself (the ROUTER, its listener and monitor, ZAP,
 * ZeroMQ's threads, the eventfd), with room to spare. */
#define FDS_PER_PEER 5u
#define FDS_NODE 24u
#define BATCH_BYTES (64u << 10)  /* a batch closes past this (one big record alone) */
/* A turn of the node's thread takes at most this many batches, or bytes
 * (one batch at least), off the ROUTER before it serves the rest. */
#define RECEIVE_BATCHES 64u
#define RECEIVE_BYTES (4u << 20)

/* ACKs (docs/WIRE.md, "Acknowledgements"): one is due ACK_MS after a
 * batch is taken, or once ACK_BYTES have been taken since the last. */
#define ACK_MS 20
#define ACK_BYTES (256u << 10)
/* Back-pressure across a link (docs/NODES.md, "Back-pressure"): a sender
 * leaves no more batches of records on a link while this many bytes it
 * sent are not acknowledged; a receiver holds its ACKs while an actor that
 * a peer's messages went to is overloaded (up to HOLDS of them a peer). */
#define WINDOW_BYTES (8u << 20)
#define HOLDS 4

/* A batch of records sent and not yet settled: its number, and the
 * peer's `sent` and `bytes_sent` once it had left. */
typedef struct flight {
    uint64_t seq, records, bytes;
} flight;

/* One record of a peer's queue, encoded by the sender's thread. */
typedef struct out_rec {
    struct out_rec *next;
    size_t size;
    bool counted;              /* a send the sender counted (a message, a
                                  program's reply: AC__TRANSMIT_COUNTED) */
    uint8_t bytes[];
} out_rec;

typedef struct peer {
    ac__cluster_node id;
    void *dealer;              /* our link to it; NULL until the thread opens it */
    void *monitor;             /* PAIR: the dealer's socket events */
    bool removed;              /* ac_node_remove_peer: the thread closes it */
    bool linked;               /* the dealer's handshake succeeded since it last disconnected */
    bool greet;                /* a HELLO is due on the dealer */
    bool greeted;              /* it greeted us since our link last went
                                  down: `node` is its incarnation now */
    bool sent_now;             /* a record went out from a sender's thread
                                  since the node thread's last turn */
    uint64_t node;             /* its incarnation, from its HELLO; 0: none yet */
    uint64_t told_node;        /* the incarnation the services were told is
                                  up (ac__node_reconcile); 0: none */
    uint64_t reopen_at;        /* when to open the link anew (ms); 0: not due */
    struct out_rec *q_head, *q_tail;  /* encoded records waiting for the link */
    size_t q_len;
    uint64_t q_bytes;          /* the records' sizes, added up */
    uint64_t incarnations, connects, losses;
    uint64_t sent, received, bytes_sent, bytes_received, batches, drops, refused;
    uint64_t forwarded;        /* of `sent`, the counted sends (out_rec.counted) */
    uint64_t lost;             /* of `drops`, the messages and replies: dead
                                  letters, counted here whatever thread drops
                                  them (at shutdown there may be none) */
    /* What it acknowledged of ours (docs/WIRE.md, "Acknowledgements"). */
    flight *fl;                /* the batches of records not settled, oldest first */
    size_t fl_head, fl_len, fl_cap;
    uint64_t settled, settled_bytes;  /* `sent` and `bytes_sent` up to the
                                         last batch settled */
    uint64_t acked;            /* records taken, as its last ACK said */
    uint64_t lost_in_flight;   /* of `sent`, records it never took */
    /* What we acknowledge of its: from its incarnation `node`. */
    uint64_t rx_seq;           /* the number of its last batch we took */
    uint64_t rx_records;       /* the records we took */
    uint64_t rx_unacked;       /* bytes taken since our last ACK */
    uint64_t ack_at;           /* when an ACK is due (ms); 0: none */
    ac_addr holds[HOLDS];      /* overloaded actors its messages went to: our
                                  ACKs wait while any of them stays so */
    size_t nholds;
} peer;

/* A peer incarnation came up or went, for the roles' node_up/node_lost. */
typedef struct node_event {
    uint64_t node;
    bool up;
} node_event;

/* A connection the ROUTER accepted whose handshake is not known to have
 * ended (gate.c). */
typedef struct ac__gate_conn {
    int fd;
    uint64_t seq;              /* its place in the order of accepts */
} ac__gate_conn;

/* What the ROUTER's monitor has said that is not settled yet: the
 * connections in accept order, and the handshakes that ended well or for
 * their key (which its events do not say the fd of), each by the number
 * of accepts before it: only those connections can be its. */
typedef struct ac__gate {
    ac__gate_conn *conns;
    size_t nconns, conns_cap;
    uint64_t *ended;
    size_t nended, ended_cap;
    uint64_t accepts;
    bool failed_last;          /* the last event was a failed handshake, whose
                                  connection's disconnect comes next */
} ac__gate;

/* What the thread polls: these, then each peer's link monitor. */
enum { POLL_WAKE, POLL_ROUTER, POLL_ZAP, POLL_ROUTER_EVENTS, POLL_PEERS };

typedef struct ac__node {
    ac_runtime *rt;
    pthread_mutex_t lock;      /* guards the peer list and the counters */
    bool started, stopping;
    char name[AC_NODE_NAME_MAX + 1];
    char endpoint[AC_NODE_ENDPOINT_MAX + 1];
    char public_key[AC_NODE_KEY_LEN + 1];
    char secret_key[AC_NODE_KEY_LEN + 1];
    uint32_t heartbeat_ms, timeout_ms, queue_bound, peer_table_max;
    uint64_t queue_bytes;
    ac_ctx *cx;                /* the thread's context: delivers what arrives */
    void *zmq;
    void *router, *router_monitor, *zap;
    int wake;                  /* eventfd: the peer list changed, or stop */
    pthread_t thread;
    peer *peers;
    size_t npeers, cap;
    zmq_pollitem_t *items;     /* the thread's */
    size_t items_cap;
    ac__gate gate;             /* the thread's: the connections its handshakes
                                  have not settled (gate.c) */
    node_event *events;        /* the thread's: to tell the services, unlocked */
    size_t nevents, events_cap;
    uint64_t tx_seq;           /* the number of our last batch, to any peer:
                                  one count for all, so that a peer removed
                                  and added again goes on numbering past
                                  what its other end took (under the lock) */
    ac_node_stats stats;
    ac_stats gone;             /* node_* counters of the peers removed since */
} ac__node;

/* node.c: adds p's counters into the node_* fields of *out; under the lock. */
void ac__node_count_peer(const peer *p, ac_stats *out);

/* keys.c: the Z85 secret key of `path`; AC_EINVAL with a reason. */
int ac__node_read_secret(const char *path, char key[AC_NODE_KEY_LEN + 1], const char **why);
/* keys.c: the cluster file at `path`, whole, in a new buffer (*text,
 * *len; free() it); AC_EINVAL with a reason, AC_ENOMEM. */
int ac__node_read_cluster(const char *path, char **text, size_t *len, const char **why);

/* link.c: peers and our links to them; the thread's, under the lock
 * (add_peer and find_peer: anyone's, under the lock). */
uint64_t ac__node_now_ms(void);
bool ac__node_is_up(const peer *p);
peer *ac__node_find_peer(ac__node *N, const char *name);
peer *ac__node_peer_at(ac__node *N, uint64_t node);
int ac__node_add_peer(ac__node *N, const ac__cluster_node *id);
void ac__node_drop_queue(peer *p);
void ac__node_set_int(void *sock, int option, int value);
void ac__node_common_options(ac__node *N, void *sock);
void *ac__node_monitor_socket(ac__node *N, void *sock, int events);
/* Our link to p: a CURVE client that knows p's public key, and its
 * monitor. AC_ENOMEM when a socket cannot be had (no descriptor left, or
 * ZeroMQ's socket limit), AC_EINVAL when its endpoint is refused; p stays
 * without a link then. Under the lock, on the node's thread, or on
 * another before the link is polled (ac_node_start, ac_node_add_peer). */
int ac__node_open_link(ac__node *N, peer *p);
void ac__node_close_link(peer *p);
void ac__node_sync_peers(ac__node *N);
void ac__node_greet(ac__node *N, peer *p);
void ac__node_link_event(peer *p);
/* One event of a socket monitor (its number, and its value: an fd for
 * connection events); false when there was none. */
bool ac__node_read_event(void *monitor, uint16_t *event, uint32_t *value);
void ac__node_flush(ac__node *N, peer *p);
/* Sends r alone in a batch on p's link now, if the link takes it without
 * waiting (any thread, under the lock); false: it did not. */
bool ac__node_send_now(ac__node *N, peer *p, const out_rec *r);
/* p acknowledged its batches up to `seq`, and `records` records taken in
 * all: what was sent up to there and not taken is lost. */
void ac__node_settle(peer *p, uint64_t seq, uint64_t records);
/* Nothing more will be acknowledged of what was sent to p (it restarted,
 * was removed, or this node stops): whatever is not settled is lost. */
void ac__node_settle_all(peer *p);
/* Sends p our ACK when one is due and the link takes it; the time it is
 * due (UINT64_MAX: none, or not before the link is up). While p holds
 * actors that are still overloaded, none is sent: the time to look again. */
uint64_t ac__node_ack(ac__node *N, peer *p, uint64_t now);
/* Whether p's link may take more batches of records: what it has not
 * acknowledged is under the window. */
bool ac__node_window_open(const peer *p);
/* inbound.c: drops the actors p holds that are no longer overloaded
 * (gone, or kept up); whether any is left. The thread's, locked. */
bool ac__node_holding(ac__node *N, peer *p);
/* Notes every peer incarnation that came up or went since the services
 * were last told (peer.told_node), for ac__node_tell. */
void ac__node_reconcile(ac__node *N);
void ac__node_note_lost(ac__node *N, peer *p);
/* Tells the services what ac__node_reconcile noted: called locked, drops
 * the lock while they run (they send, and may transmit). */
void ac__node_tell(ac__node *N);

/* gate.c: who gets in. Each takes all that is waiting. */
void ac__node_router_event(ac__node *N);
void ac__node_serve_zap(ac__node *N);
void ac__node_gate_fini(ac__gate *g);

/* inbound.c: the batches waiting on the ROUTER, a turn's share of
 * them, taken and handled; called locked, it drops the lock while records
 * are delivered. */
void ac__node_receive(ac__node *N);

#endif /* AC_NODE_NODE_H */
