/*
 * amap.h — the services' side tables: intrusive nodes keyed by an address
 * and a 64-bit discriminator, several nodes per key allowed, on the chained
 * table of table.h. Unlocked: each service holds its own lock around its
 * maps.
 *
 * Only one node of a key is on the table (its head); the others hang off
 * it on a doubly linked list of their own. However many records one actor
 * holds under one key (a watcher's monitors, an owner's timers, a member's
 * groups), the table's chains hold one node per key, and adding or
 * removing a record is O(1) expected.
 *
 * Keys are hashed with SipHash under a key each map draws when it is
 * made: an address is random only when this runtime made it, and a peer
 * node chooses the addresses of its actors and its monitor references,
 * which become keys here (its watchers, link ends, askers), so with the
 * address's own bytes as the hash it could put all of them on one chain.
 */
#ifndef AC_LIB_AMAP_H
#define AC_LIB_AMAP_H

#include "table.h"

#include <stdint.h>

typedef struct ac__amap_node {
    ac__tnode link;                  /* in the table while the key's head;
                                        link.hash is the key's */
    uint64_t extra;
    ac_addr key;
    /* The key's nodes, newest first: prev is NULL for the head. */
    struct ac__amap_node *prev, *same;
    struct ac__amap_node *next;      /* the lists ac__amap_take and _select return */
} ac__amap_node;

typedef struct ac__amap {
    ac__table table;                 /* the heads, one per key */
    ac__hash_key key;                /* of the keys' hash, drawn at init */
} ac__amap;

/* Makes the bucket array up front, so that adding never fails, and draws
 * the map's hash key. */
int ac__amap_init(ac__amap *m);
/* A 64-bit digest of an address under m's key, for an `extra` made from
 * an address (links' pairs): one a peer cannot aim at another's. */
uint64_t ac__amap_digest(const ac__amap *m, const ac_addr *a);
void ac__amap_destroy(ac__amap *m);         /* the nodes are the caller's */
/* Links x (its key and extra set) as the newest of its key. */
void ac__amap_add(ac__amap *m, ac__amap_node *x);
/* The newest node of the key, or NULL. */
ac__amap_node *ac__amap_find(ac__amap *m, const ac_addr *key, uint64_t extra);
/* The next older node of x's key, or NULL. Removing x does not change it,
 * so a walk may remove the node it stands on. */
ac__amap_node *ac__amap_find_next(ac__amap_node *x);
void ac__amap_remove(ac__amap *m, ac__amap_node *x);
/* Unlinks every node with this key; returns them linked through `next`,
 * newest first. */
ac__amap_node *ac__amap_take(ac__amap *m, const ac_addr *key, uint64_t extra);
/* Calls fn on every node; fn may free the node (tearing down). */
void ac__amap_each(ac__amap *m, void (*fn)(ac__amap_node *, void *), void *arg);
/* The nodes `keep` says yes to, linked through `next` (still on the map). */
ac__amap_node *ac__amap_select(ac__amap *m, bool (*keep)(const ac__amap_node *, void *),
                               void *arg);

#endif /* AC_LIB_AMAP_H */
