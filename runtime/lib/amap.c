/*
 * amap.c — the services' maps from an address (and a 64-bit discriminator)
 * to intrusive nodes, several per key, on table.h's chained table.
 *
 * Addresses are random, so their first 8 bytes hash well enough as they
 * are (the routing table's identity hash); `extra` separates keys that
 * share an address (a monitor reference on the nil address, a link's end).
 */
#include "amap.h"

#include <string.h>

static uint64_t hash_of(const ac_addr *key, uint64_t extra)
{
    /* A multiplicative mix of `extra`, so keys that differ only there
     * still spread over the buckets. */
    return ac__hash_addr(key) ^ (extra * 0x9E3779B97F4A7C15u);
}

static ac__amap_node *node_of(ac__tnode *n)
{
    return AC__CONTAINER_OF(n, ac__amap_node, link);
}

static bool same_key(const ac__tnode *n, const void *key)
{
    const ac__amap_node *x = AC__CONTAINER_OF(n, const ac__amap_node, link);
    const ac__amap_node *k = key;
    return x->extra == k->extra && ac_addr_eq(&x->key, &k->key);
}

int ac__amap_init(ac__amap *m)
{
    memset(m, 0, sizeof *m);
    return ac__table_init(&m->table);
}

void ac__amap_destroy(ac__amap *m)
{
    ac__table_fini(&m->table);
}

void ac__amap_add(ac__amap *m, ac__amap_node *x)
{
    x->link.hash = hash_of(&x->key, x->extra);
    /* Cannot fail: the bucket array exists since init. */
    (void)ac__table_insert(&m->table, &x->link);
}

ac__amap_node *ac__amap_find(ac__amap *m, const ac_addr *key, uint64_t extra)
{
    ac__amap_node k;
    k.key = *key;
    k.extra = extra;
    ac__tnode *n = ac__table_find(&m->table, hash_of(key, extra), same_key, &k);
    return n ? node_of(n) : NULL;
}

ac__amap_node *ac__amap_find_next(ac__amap_node *x)
{
    for (ac__tnode *n = x->link.next; n != NULL; n = n->next)
        if (n->hash == x->link.hash && same_key(n, x))
            return node_of(n);
    return NULL;
}

void ac__amap_remove(ac__amap *m, ac__amap_node *x)
{
    ac__table_remove(&m->table, &x->link);
}

ac__amap_node *ac__amap_take(ac__amap *m, const ac_addr *key, uint64_t extra)
{
    ac__amap_node *taken = NULL, **tail = &taken, *x;
    while ((x = ac__amap_find(m, key, extra)) != NULL) {
        ac__table_remove(&m->table, &x->link);
        x->next = NULL;
        *tail = x;
        tail = &x->next;
    }
    return taken;
}

typedef struct each_arg {
    void (*fn)(ac__amap_node *, void *);
    void *arg;
} each_arg;

static void each_node(ac__tnode *n, void *p)
{
    each_arg *e = p;
    e->fn(node_of(n), e->arg);
}

void ac__amap_each(ac__amap *m, void (*fn)(ac__amap_node *, void *), void *arg)
{
    each_arg e = {fn, arg};
    ac__table_each(&m->table, each_node, &e);
}

typedef struct select_arg {
    bool (*keep)(const ac__amap_node *, void *);
    void *arg;
    ac__amap_node *found;
} select_arg;

static void select_one(ac__amap_node *x, void *arg)
{
    select_arg *s = arg;
    if (s->keep(x, s->arg)) {
        x->next = s->found;
        s->found = x;
    }
}

ac__amap_node *ac__amap_select(ac__amap *m, bool (*keep)(const ac__amap_node *, void *),
                               void *arg)
{
    select_arg s = {keep, arg, NULL};
    ac__amap_each(m, select_one, &s);
    return s.found;
}
