/*
 * table.c — the services' intrusive hash table (table.h).
 */
#include "table.h"

#include <sodium.h>

#include <stdlib.h>
#include <string.h>

#define INITIAL_BUCKETS 16

/* Doubles the bucket array when the chains average one node. Failing to
 * grow is harmless: the nodes stay where they are. */
static void grow(ac__table *t)
{
    size_t n = (t->mask + 1) * 2;
    ac__tnode **b = calloc(n, sizeof *b);
    if (b == NULL)
        return;
    for (size_t i = 0; i <= t->mask; i++) {
        ac__tnode *p = t->buckets[i];
        while (p) {
            ac__tnode *next = p->next;
            size_t at = (size_t)p->hash & (n - 1);
            p->next = b[at];
            b[at] = p;
            p = next;
        }
    }
    free(t->buckets);
    t->buckets = b;
    t->mask = n - 1;
}

int ac__table_init(ac__table *t)
{
    t->buckets = calloc(INITIAL_BUCKETS, sizeof *t->buckets);
    t->mask = t->buckets ? INITIAL_BUCKETS - 1 : 0;
    t->count = 0;
    return t->buckets ? 0 : AC_ENOMEM;
}

int ac__table_insert(ac__table *t, ac__tnode *n)
{
    if (t->buckets == NULL) {
        t->buckets = calloc(INITIAL_BUCKETS, sizeof *t->buckets);
        if (t->buckets == NULL)
            return AC_ENOMEM;
        t->mask = INITIAL_BUCKETS - 1;
    } else if (t->count > t->mask) {
        grow(t);
    }
    size_t at = (size_t)n->hash & t->mask;
    n->next = t->buckets[at];
    t->buckets[at] = n;
    t->count++;
    return 0;
}

ac__tnode *ac__table_find(const ac__table *t, uint64_t hash, ac__tnode_eq eq,
                          const void *key)
{
    if (t->buckets == NULL)
        return NULL;
    for (ac__tnode *p = t->buckets[(size_t)hash & t->mask]; p; p = p->next)
        if (p->hash == hash && eq(p, key))
            return p;
    return NULL;
}

void ac__table_remove(ac__table *t, ac__tnode *n)
{
    ac__tnode **pp = &t->buckets[(size_t)n->hash & t->mask];
    while (*pp != n)
        pp = &(*pp)->next;
    *pp = n->next;
    t->count--;
}

void ac__table_replace(ac__table *t, ac__tnode *old, ac__tnode *by)
{
    ac__tnode **pp = &t->buckets[(size_t)old->hash & t->mask];
    while (*pp != old)
        pp = &(*pp)->next;
    by->next = old->next;
    *pp = by;
}

void ac__table_each(const ac__table *t, void (*fn)(ac__tnode *, void *), void *arg)
{
    if (t->buckets == NULL)
        return;
    for (size_t i = 0; i <= t->mask; i++) {
        ac__tnode *p = t->buckets[i];
        while (p) {
            ac__tnode *next = p->next;  /* fn may free p */
            fn(p, arg);
            p = next;
        }
    }
}

void ac__table_fini(ac__table *t)
{
    free(t->buckets);
    t->buckets = NULL;
    t->mask = 0;
    t->count = 0;
}

size_t ac__table_longest_chain(const ac__table *t)
{
    size_t longest = 0;
    for (size_t i = 0; t->buckets != NULL && i <= t->mask; i++) {
        size_t n = 0;
        for (const ac__tnode *p = t->buckets[i]; p; p = p->next)
            n++;
        longest = n > longest ? n : longest;
    }
    return longest;
}

size_t ac__table_bucket_of(const ac__table *t, const ac__tnode *n)
{
    return (size_t)n->hash & t->mask;
}

void ac__hash_key_draw(ac__hash_key *k)
{
    _Static_assert(sizeof k->bytes == crypto_shorthash_KEYBYTES, "SipHash's key");
    randombytes_buf(k->bytes, sizeof k->bytes);
}

uint64_t ac__hash_keyed(const ac__hash_key *k, const char *s, size_t len)
{
    unsigned char out[crypto_shorthash_BYTES];
    (void)crypto_shorthash(out, (const unsigned char *)s, len, k->bytes);
    uint64_t h;
    memcpy(&h, out, sizeof h);
    return h;
}

uint64_t ac__hash_name(const char *s, size_t len)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3u;
    }
    return h;
}

static bool same_name(const ac__tnode *n, const void *key)
{
    const ac__tname *x = (const ac__tname *)(const void *)n;  /* node is first */
    const ac__tname *k = key;
    return x->len == k->len && memcmp(x->name, k->name, k->len) == 0;
}

void ac__tname_set(ac__tname *n, const ac__hash_key *k, const char *name, size_t len)
{
    n->name = name;
    n->len = len;
    n->node.hash = ac__hash_keyed(k, name, len);
}

ac__tname *ac__table_find_name(const ac__table *t, const ac__hash_key *hk, const char *name,
                               size_t len)
{
    ac__tname k;
    ac__tname_set(&k, hk, name, len);
    return (ac__tname *)(void *)ac__table_find(t, k.node.hash, same_name, &k);
}

size_t ac__name_len(const char *name)
{
    if (name == NULL)
        return 0;
    size_t n = strnlen(name, AC_NAME_MAX + 1);
    return n > AC_NAME_MAX ? 0 : n;
}
