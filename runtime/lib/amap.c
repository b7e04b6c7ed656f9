/*
 * amap.c — the services' maps from an address (and a 64-bit discriminator)
 * to intrusive nodes, several per key, on table.h's chained table: the
 * newest node of a key stands on the table for all of them, the others on
 * its list (amap.h).
 *
 * The hash is SipHash-2-4 of the address and the discriminator under the
 * map's own key (amap.h says why: a peer node chooses addresses that
 * become keys here). It costs about 300 instructions a key, on calls
 * that take a mutex anyway, and none of these maps is on the send path,
 * which keeps the routing table's identity hash: only this runtime's own
 * addresses are ever inserted there.
 */
#include "amap.h"

#include <string.h>

static uint64_t hash_of(const ac__amap *m, const ac_addr *key, uint64_t extra)
{
    /* The whole key, all 40 bytes: a peer may choose any of them, so a
     * part left out would be a part it could vary without moving the
     * hash. */
    unsigned char buf[sizeof key->bytes + sizeof extra];
    memcpy(buf, key->bytes, sizeof key->bytes);
    memcpy(buf + sizeof key->bytes, &extra, sizeof extra);
    return ac__hash_keyed(&m->key, (const char *)buf, sizeof buf);
}

uint64_t ac__amap_digest(const ac__amap *m, const ac_addr *a)
{
    return ac__hash_keyed(&m->key, (const char *)a->bytes, sizeof a->bytes);
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
    ac__hash_key_draw(&m->key);
    return ac__table_init(&m->table);
}

void ac__amap_destroy(ac__amap *m)
{
    ac__table_fini(&m->table);
}

void ac__amap_add(ac__amap *m, ac__amap_node *x)
{
    x->link.hash = hash_of(m, &x->key, x->extra);
    x->prev = NULL;
    ac__tnode *h = ac__table_find(&m->table, x->link.hash, same_key, x);
    if (h == NULL) {
        x->same = NULL;
        /* Cannot fail: the bucket array exists since init. */
        (void)ac__table_insert(&m->table, &x->link);
        return;
    }
    /* x becomes the key's head, in the old head's place on its chain:
     * newest first, as when every node of a key was on the chain. */
    ac__amap_node *old = node_of(h);
    ac__table_replace(&m->table, h, &x->link);
    x->same = old;
    old->prev = x;
}

ac__amap_node *ac__amap_find(ac__amap *m, const ac_addr *key, uint64_t extra)
{
    ac__amap_node k;
    k.key = *key;
    k.extra = extra;
    ac__tnode *n = ac__table_find(&m->table, hash_of(m, key, extra), same_key, &k);
    return n ? node_of(n) : NULL;
}

ac__amap_node *ac__amap_find_next(ac__amap_node *x)
{
    return x->same;
}

void ac__amap_remove(ac__amap *m, ac__amap_node *x)
{
    if (x->prev != NULL) {  /* not the head: off its key's list, no table walk */
        x->prev->same = x->same;
        if (x->same != NULL)
            x->same->prev = x->prev;
        return;
    }
    if (x->same == NULL) {
        ac__table_remove(&m->table, &x->link);
        return;
    }
    ac__amap_node *heir = x->same;  /* the next older becomes the head */
    heir->prev = NULL;
    heir->link.hash = x->link.hash;
    ac__table_replace(&m->table, &x->link, &heir->link);
}

ac__amap_node *ac__amap_take(ac__amap *m, const ac_addr *key, uint64_t extra)
{
    ac__amap_node *head = ac__amap_find(m, key, extra);
    if (head == NULL)
        return NULL;
    ac__table_remove(&m->table, &head->link);
    for (ac__amap_node *x = head; x != NULL; x = x->same)
        x->next = x->same;
    return head;
}

typedef struct each_arg {
    void (*fn)(ac__amap_node *, void *);
    void *arg;
} each_arg;

static void each_node(ac__tnode *n, void *p)
{
    each_arg *e = p;
    for (ac__amap_node *x = node_of(n), *older; x != NULL; x = older) {
        older = x->same;  /* fn may free x */
        e->fn(x, e->arg);
    }
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
