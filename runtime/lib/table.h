/*
 * table.h — a small intrusive chained hash table for the services' indexes
 * (names.c, groups.c, and amap.h's address maps): a name to its entry, an
 * address to what it holds.
 *
 * Not concurrent: every table belongs to one service and is used under that
 * service's lock. Nodes are embedded in the caller's records, so a lookup
 * or a removal allocates nothing, and only growing the bucket array can
 * fail (then the table keeps its old array: longer chains, still correct).
 */
#ifndef AC_LIB_TABLE_H
#define AC_LIB_TABLE_H

#include "actorc.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The record an intrusive node is embedded in. */
#define AC__CONTAINER_OF(p, T, member) ((T *)(void *)((char *)(p) - offsetof(T, member)))

typedef struct ac__tnode {
    struct ac__tnode *next;
    uint64_t hash;
} ac__tnode;

typedef struct ac__table {
    ac__tnode **buckets;  /* NULL until the first insert */
    size_t mask;          /* buckets - 1, a power of two minus one */
    size_t count;
} ac__table;

/* Does the node match the key the caller is looking for? */
typedef bool (*ac__tnode_eq)(const ac__tnode *n, const void *key);

/* Makes the bucket array now, so that no later insert can fail. */
int ac__table_init(ac__table *t);
/* Links n (its hash already set). AC_ENOMEM only for the first bucket
 * array; n is not linked then. */
int ac__table_insert(ac__table *t, ac__tnode *n);
ac__tnode *ac__table_find(const ac__table *t, uint64_t hash, ac__tnode_eq eq,
                          const void *key);
/* Unlinks n, which must be in t. */
void ac__table_remove(ac__table *t, ac__tnode *n);
/* Puts by (its hash set equal to old's) where old is, and unlinks old. */
void ac__table_replace(ac__table *t, ac__tnode *old, ac__tnode *by);
/* Calls fn on every node. fn may free the node it is given (when the
 * table is being torn down) but must not insert or remove. */
void ac__table_each(const ac__table *t, void (*fn)(ac__tnode *, void *), void *arg);
/* Frees the bucket array (not the nodes). */
void ac__table_fini(ac__table *t);
/* The longest chain (the tests' view of how well the table spreads). */
size_t ac__table_longest_chain(const ac__table *t);
/* The bucket n is on (or would be on, by its hash). */
size_t ac__table_bucket_of(const ac__table *t, const ac__tnode *n);

/* The key of a table's hash, drawn per runtime (ac__hash_key_draw):
 * names come from programs' input (chat rooms, other nodes), and so do
 * the addresses amap.h's maps are keyed by (a peer node chooses its
 * actors'); with an unkeyed hash anyone could choose keys that share one
 * chain. */
typedef struct ac__hash_key {
    unsigned char bytes[16];
} ac__hash_key;

/* Fills k from the OS's random source. */
void ac__hash_key_draw(ac__hash_key *k);
/* SipHash-2-4 of name[0..len) under k (libsodium's crypto_shorthash). */
uint64_t ac__hash_keyed(const ac__hash_key *k, const char *s, size_t len);

/* A node indexed by name (names.c's entries, groups.c's groups): `name`
 * points at the record's own copy, len bytes. */
typedef struct ac__tname {
    ac__tnode node;
    const char *name;
    size_t len;
} ac__tname;

/* Points n at its name (kept by the caller) and sets its hash under k,
 * the key of the table it goes on. */
void ac__tname_set(ac__tname *n, const ac__hash_key *k, const char *name, size_t len);
/* The node named name[0..len) in a table hashed under k, or NULL. */
ac__tname *ac__table_find_name(const ac__table *t, const ac__hash_key *k, const char *name,
                               size_t len);

/* FNV-1a of a string: the same on every node, hence for what crosses the
 * wire (frame.c's type ids); never for a table's index, where its
 * collisions could be chosen (ac__hash_keyed). */
uint64_t ac__hash_name(const char *s, size_t len);

/* Names and group names: 1..AC_NAME_MAX bytes. Returns the length, or 0
 * when the name is NULL, empty or too long. */
size_t ac__name_len(const char *name);

#endif /* AC_LIB_TABLE_H */
