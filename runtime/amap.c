/*
 * amap.c — a chained hash map of intrusive nodes keyed by an address (and a
 * 64-bit discriminator), for the services' side tables (monitors, links,
 * names, groups, timers). Not concurrent: each service guards its maps with
 * its own lock. Several nodes may share a key (an actor's many monitors).
 *
 * Addresses are random, so their first 8 bytes hash well enough as they
 * are (the routing table's identity hash); `extra` separates keys that
 * share an address (a monitor reference, a group's name hash).
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define MIN_BUCKETS 16

static uint64_t hash_of(const ac_addr *key, uint64_t extra)
{
    uint64_t h;
    memcpy(&h, key->bytes, sizeof h);
    /* A multiplicative mix of `extra`, so keys that differ only there
     * (references on a nil address) still spread over the buckets. */
    return h ^ (extra * 0x9E3779B97F4A7C15u);
}

int ac__amap_init(ac__amap *m)
{
    m->buckets = calloc(MIN_BUCKETS, sizeof *m->buckets);
    if (m->buckets == NULL)
        return AC_ENOMEM;
    m->mask = MIN_BUCKETS - 1;
    m->count = 0;
    return 0;
}

void ac__amap_destroy(ac__amap *m)
{
    free(m->buckets);
    m->buckets = NULL;
}

static void grow(ac__amap *m)
{
    size_t n = (m->mask + 1) * 2;
    ac__amap_node **b = calloc(n, sizeof *b);
    if (b == NULL)
        return;  /* longer chains, still correct */
    for (size_t i = 0; i <= m->mask; i++) {
        ac__amap_node *x = m->buckets[i], *next;
        for (; x != NULL; x = next) {
            next = x->next;
            size_t j = hash_of(&x->key, x->extra) & (n - 1);
            x->next = b[j];
            b[j] = x;
        }
    }
    free(m->buckets);
    m->buckets = b;
    m->mask = n - 1;
}

void ac__amap_add(ac__amap *m, ac__amap_node *x)
{
    if (m->count >= m->mask + 1)
        grow(m);
    size_t i = hash_of(&x->key, x->extra) & m->mask;
    x->next = m->buckets[i];
    m->buckets[i] = x;
    m->count++;
}

ac__amap_node *ac__amap_find(ac__amap *m, const ac_addr *key, uint64_t extra)
{
    ac__amap_node *x = m->buckets[hash_of(key, extra) & m->mask];
    for (; x != NULL; x = x->next)
        if (x->extra == extra && ac_addr_eq(&x->key, key))
            return x;
    return NULL;
}

ac__amap_node *ac__amap_find_next(ac__amap_node *x)
{
    for (ac__amap_node *y = x->next; y != NULL; y = y->next)
        if (y->extra == x->extra && ac_addr_eq(&y->key, &x->key))
            return y;
    return NULL;
}

void ac__amap_remove(ac__amap *m, ac__amap_node *x)
{
    ac__amap_node **link = &m->buckets[hash_of(&x->key, x->extra) & m->mask];
    while (*link != NULL && *link != x)
        link = &(*link)->next;
    if (*link == x) {
        *link = x->next;
        m->count--;
    }
}

ac__amap_node *ac__amap_take(ac__amap *m, const ac_addr *key, uint64_t extra)
{
    ac__amap_node **link = &m->buckets[hash_of(key, extra) & m->mask];
    ac__amap_node *taken = NULL, **tail = &taken;
    while (*link != NULL) {
        ac__amap_node *x = *link;
        if (x->extra == extra && ac_addr_eq(&x->key, key)) {
            *link = x->next;
            m->count--;
            x->next = NULL;
            *tail = x;
            tail = &x->next;
        } else {
            link = &x->next;
        }
    }
    return taken;
}
