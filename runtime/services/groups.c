/*
 * groups.c — process groups (ac_group_join, ac_group_publish, ...).
 *
 * One mutex guards the groups (by name, table.h) and the memberships, each
 * on its group's list and on an index by member address (amap), so that a
 * death removes an actor from all its groups without a scan. A group
 * exists while it has members: it is created by the first join and freed
 * with its last member.
 *
 * Publishing copies the member addresses under the lock and sends after
 * unlocking: a send may wake a worker, and nothing slow runs under the
 * lock. A member that dies in between gets a dead letter, as any send to a
 * dead actor would; it is not counted as reached.
 *
 * A join racing with the member's death follows the services protocol
 * (core/service.c), as in names.c.
 *
 * Across nodes (docs/NODES.md), as Erlang's pg: each node owns its local
 * members and tells every node up of each join and leave (GROUP control
 * records, sent under the lock so that they leave in the order they were
 * made), and a node that comes up of all of them; the others' members are
 * kept here as members without an actor, and dropped with their node. A
 * publish sends one record to each node with members, which copies it to
 * its own.
 */
#include "remote.h"
#include "services.h"

#include "../lib/amap.h"
#include "../lib/quota.h"

#include <pthread.h>

#include <stdlib.h>
#include <string.h>

typedef struct member {
    ac__amap_node by_addr;       /* keyed by the member's address */
    ac__amap_node by_pair;       /* keyed by the address and the group */
    struct member *prev, *next;  /* on its group's list, in join order */
    struct group *g;
    ac__actor *actor;            /* tells a restarted actor from the dead one;
                                    NULL: a member of another node */
} member;

/* GROUP control records: a sub-op byte, then its fields. */
enum { GRP_JOIN = 1, GRP_LEAVE = 2, GRP_GONE = 3, GRP_PUBLISH = 4 };

#define NODES_ON_STACK 32

typedef struct group {
    ac__tname by_name;  /* points at name */
    member *first, *last;
    size_t count;
    char name[];
} group;

struct ac__groups {
    pthread_mutex_t lock;
    ac__table by_name;
    ac__hash_key key;       /* by_name's: group names may come from anyone */
    ac__amap by_addr;       /* an actor's memberships, for its death */
    ac__amap by_pair;       /* one membership, for a join or a leave */
    ac__quota peers;        /* members of other nodes, by their node */
};

static struct ac__groups *groups_of(ac_ctx *cx)
{
    return ac__service_state(ac_ctx_runtime(cx), AC__SERVICE_groups);
}

static group *find(struct ac__groups *t, const char *name, size_t len)
{
    ac__tname *n = ac__table_find_name(&t->by_name, &t->key, name, len);
    return n ? AC__CONTAINER_OF(n, group, by_name) : NULL;
}

/* by_pair's discriminator: the group's block, which outlives its
 * memberships. */
static uint64_t pair_of(const group *g)
{
    return (uint64_t)(uintptr_t)g;
}

/* The membership of `who` in g, if any: one lookup, however many groups
 * `who` is in (a walk of its memberships made joining N groups O(N²)). */
static member *membership(struct ac__groups *t, group *g, const ac_addr *who)
{
    ac__amap_node *x = ac__amap_find(&t->by_pair, who, pair_of(g));
    return x ? AC__CONTAINER_OF(x, member, by_pair) : NULL;
}

/* The head of a GROUP record: op, the group's name (u8 length, bytes),
 * the member for JOIN, LEAVE and GONE (GONE has no name). */
static void put_head(ac_wire_out *o, uint8_t op, const char *name, size_t len,
                     const ac_addr *who)
{
    ac_wire_u8(o, op);
    if (op != GRP_GONE) {
        ac_wire_u8(o, (uint8_t)len);
        ac_wire_bytes(o, name, len);
    }
    if (who != NULL)
        ac_wire_bytes(o, who->bytes, sizeof who->bytes);
}

/* Tells `node` (0: every node up) of a membership change; under the lock,
 * so that changes leave in the order they were made. */
static void tell(ac_ctx *cx, uint64_t node, uint8_t op, const char *name, size_t len,
                 const ac_addr *who)
{
    uint8_t buf[1 + 1 + AC_NAME_MAX + 32];
    ac_wire_out o = {buf, sizeof buf, 0};
    put_head(&o, op, name, len, who);
    uint64_t on_stack[NODES_ON_STACK], *nodes = on_stack;
    size_t n = 1;
    if (node != 0) {
        nodes[0] = node;
    } else {
        n = ac__nodes_up(cx, nodes, NODES_ON_STACK);
        if (n > NODES_ON_STACK && (nodes = malloc(n * sizeof *nodes)) != NULL)
            n = ac__nodes_up(cx, nodes, n);
        else if (n > NODES_ON_STACK)
            n = 0, nodes = on_stack;  /* out of memory: they resync when they come back */
    }
    for (size_t i = 0; i < n; i++)
        (void)ac__transmit(cx, nodes[i], AC__OP_GROUP, buf, o.len, 0);
    if (nodes != on_stack)
        free(nodes);
}

/* Under the lock. Returns the group if this was its last member: it is
 * unlinked too, and the caller frees both. */
static group *unlink_member(struct ac__groups *t, member *m)
{
    group *g = m->g;
    ac__amap_remove(&t->by_addr, &m->by_addr);
    ac__amap_remove(&t->by_pair, &m->by_pair);
    if (m->actor == NULL)
        ac__quota_give(&t->peers, ac_addr_node(&m->by_addr.key));
    *(m->prev ? &m->prev->next : &g->first) = m->next;
    *(m->next ? &m->next->prev : &g->last) = m->prev;
    if (--g->count > 0)
        return NULL;
    ac__table_remove(&t->by_name, &g->by_name.node);
    return g;
}

static int control(ac_ctx *cx, void *state, uint64_t from, const uint8_t *body, size_t len);
static void node_up(ac_ctx *cx, void *state, uint64_t node);
static void node_lost(ac_ctx *cx, void *state, uint64_t node);
static const ac__remote_role role = {
    .op = AC__OP_GROUP, .control = control, .node_up = node_up, .node_lost = node_lost};

static int init(ac_runtime *rt, void **state)
{
    struct ac__groups *t = calloc(1, sizeof *t);
    if (t == NULL)
        return AC_ENOMEM;
    if (ac__amap_init(&t->by_addr) != 0 || ac__amap_init(&t->by_pair) != 0) {
        ac__amap_destroy(&t->by_addr);
        free(t);
        return AC_ENOMEM;
    }
    ac__hash_key_draw(&t->key);
    pthread_mutex_init(&t->lock, NULL);
    *state = t;
    return ac__remote_register(rt, &role, t);
}

static void free_group(ac__tnode *n, void *arg)
{
    (void)arg;
    group *g = AC__CONTAINER_OF(n, group, by_name.node);
    for (member *m = g->first, *next; m != NULL; m = next) {
        next = m->next;
        free(m);
    }
    free(g);
}

static void fini(void *state)
{
    struct ac__groups *t = state;
    ac__table_each(&t->by_name, free_group, NULL);
    ac__table_fini(&t->by_name);
    ac__amap_destroy(&t->by_addr);
    ac__amap_destroy(&t->by_pair);
    ac__quota_fini(&t->peers);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

/* Under the lock: the membership of a (live) in the group, creating the
 * group from *spare_g and the membership from *spare_m as needed; a spare
 * that is used is set to NULL. A new member of another node (a NULL)
 * takes one of its node's `quota`: AC__EQUOTA past it. */
static int join(struct ac__groups *t, const char *name, size_t len, const ac_addr *who,
                ac__actor *a, uint32_t quota, group **spare_g, member **spare_m)
{
    group *g = find(t, name, len);
    member *m = g ? membership(t, g, who) : NULL;
    if (m != NULL) {
        m->actor = a;  /* idempotent; a restarted actor takes it over */
        return 0;
    }
    if (a == NULL && !ac__quota_take(&t->peers, ac_addr_node(who), quota))
        return AC__EQUOTA;
    if (g == NULL) {
        g = *spare_g;
        int rc = ac__table_insert(&t->by_name, &g->by_name.node);
        if (rc != 0) {
            if (a == NULL)
                ac__quota_give(&t->peers, ac_addr_node(who));
            return rc;
        }
        *spare_g = NULL;
    }
    m = *spare_m;
    *spare_m = NULL;
    m->g = g;
    m->actor = a;
    m->by_addr.key = *who;
    m->by_addr.extra = 0;
    ac__amap_add(&t->by_addr, &m->by_addr);
    m->by_pair.key = *who;
    m->by_pair.extra = pair_of(g);
    ac__amap_add(&t->by_pair, &m->by_pair);
    m->next = NULL;
    m->prev = g->last;
    *(g->last ? &g->last->next : &g->first) = m;
    g->last = m;
    g->count++;
    return 0;
}

/* Joins `who` to the group, allocating outside the lock: an actor of this
 * node (cx set: it must be alive, and every node up is told), or another
 * node's member (cx NULL), within its node's `quota`. */
static int join_new(struct ac__groups *t, ac_ctx *cx, const char *name, size_t len,
                    const ac_addr *who, uint32_t quota)
{
    group *g = calloc(1, sizeof *g + len + 1);
    member *m = malloc(sizeof *m);
    int rc = AC_ENOMEM;
    if (g != NULL && m != NULL) {
        memcpy(g->name, name, len);
        ac__tname_set(&g->by_name, &t->key, g->name, len);
        if (cx != NULL)
            ac__enter(cx);  /* ac__service_target reads the routing table */
        pthread_mutex_lock(&t->lock);
        ac__actor *a = cx != NULL ? ac__service_target(cx, who) : NULL;
        rc = cx != NULL && a == NULL ? AC_ENOTFOUND : join(t, name, len, who, a, quota, &g, &m);
        if (rc == 0 && cx != NULL)
            tell(cx, 0, GRP_JOIN, name, len, who);
        pthread_mutex_unlock(&t->lock);
        if (cx != NULL)
            ac__leave(cx);
    }
    free(g);
    free(m);
    return rc;
}

int ac_group_join(ac_ctx *cx, const char *group_name, const ac_addr *who)
{
    size_t len = ac__name_len(group_name);
    if (cx == NULL || who == NULL || len == 0)
        return AC_EINVAL;
    return join_new(groups_of(cx), cx, group_name, len, who, 0);
}

int ac_group_leave(ac_ctx *cx, const char *group_name, const ac_addr *who)
{
    size_t len = ac__name_len(group_name);
    if (cx == NULL || who == NULL || len == 0)
        return AC_EINVAL;
    struct ac__groups *t = groups_of(cx);
    group *emptied = NULL;
    pthread_mutex_lock(&t->lock);
    group *g = find(t, group_name, len);
    member *m = g ? membership(t, g, who) : NULL;
    if (m != NULL && m->actor == NULL)
        m = NULL;  /* another node's member: its node says when it leaves */
    if (m != NULL) {
        emptied = unlink_member(t, m);
        tell(cx, 0, GRP_LEAVE, group_name, len, who);
    }
    pthread_mutex_unlock(&t->lock);
    free(m);
    free(emptied);
    return m != NULL ? 0 : AC_ENOTFOUND;
}

#define PUBLISH_ON_STACK 16

typedef struct target {
    ac_addr addr;
    ac_envelope *e;
} target;

/* Another node with members in a group being published to. */
typedef struct node_count {
    uint64_t node;
    int members;
} node_count;

/* Counts a member of another node in nodes[0..n): 1 when its node is new
 * there (an entry is added), else 0. */
static size_t count_node(node_count *nodes, size_t n, const ac_addr *who)
{
    for (size_t i = 0; i < n; i++) {
        if (nodes[i].node == ac_addr_node(who)) {
            nodes[i].members++;
            return 0;
        }
    }
    nodes[n] = (node_count){ac_addr_node(who), 1};
    return 1;
}

/* One PUBLISH record to each node of `nodes`: the members it reaches. */
static int publish_remote(ac_ctx *cx, const char *name, size_t len, const ac_actor_type *type,
                          ac_envelope *e, const node_count *nodes, size_t n)
{
    long need = type->encode ? type->encode(e, NULL, 0) : AC_EINVAL;
    size_t head = 1 + 1 + len + 4 + 8;
    uint8_t *buf = need >= 0 ? malloc(head + (size_t)need) : NULL;
    if (buf == NULL)
        return 0;
    ac_wire_out o = {buf, head, 0};
    put_head(&o, GRP_PUBLISH, name, len, NULL);
    ac_wire_u32(&o, e->tag);
    ac_wire_u64(&o, ac__type_id(type));
    (void)type->encode(e, buf + head, (size_t)need);
    int reached = 0;
    for (size_t i = 0; i < n; i++)
        if (ac__transmit(cx, nodes[i].node, AC__OP_GROUP, buf, head + (size_t)need,
                         AC__TRANSMIT_BOUNDED) == 0)
            reached += nodes[i].members;
    free(buf);
    return reached;
}

/* e to the group's members here of its `type`, and (`everywhere`) one
 * record to each other node with members, whose node does the same; the
 * number of members reached. */
static int publish(ac_ctx *cx, struct ac__groups *t, const char *group_name, size_t len,
                   const ac_actor_type *type, ac_envelope *e, bool everywhere)
{
    target on_stack[PUBLISH_ON_STACK], *to = on_stack;
    node_count nodes_on_stack[PUBLISH_ON_STACK], *nodes = nodes_on_stack;
    size_t n = 0, nnodes = 0;
    pthread_mutex_lock(&t->lock);
    group *g = find(t, group_name, len);
    if (g != NULL && g->count > PUBLISH_ON_STACK) {
        to = malloc(g->count * sizeof *to);
        nodes = malloc(g->count * sizeof *nodes);
    }
    if (g != NULL && to != NULL && nodes != NULL) {
        for (member *m = g->first; m != NULL; m = m->next) {
            /* A member of another type would read e with its own
             * layout: the message is not for it. */
            if (m->actor != NULL && ac__type(m->actor) == type)
                to[n++].addr = m->by_addr.key;
            else if (everywhere)
                nnodes += count_node(nodes, nnodes, &m->by_addr.key);
        }
    }
    pthread_mutex_unlock(&t->lock);
    int rc = 0, remote = 0;
    if (to == NULL || nodes == NULL)
        rc = AC_ENOMEM;
    else if (n > 1 && type->copy == NULL)
        rc = AC_EINVAL;
    if (rc == 0 && nnodes > 0)
        remote = publish_remote(cx, group_name, len, type, e, nodes, nnodes);
    /* Every copy is made before the first send: all members get the
     * message, or (out of memory) none does. */
    for (size_t i = 0; rc == 0 && i + 1 < n; i++) {
        to[i].e = type->copy(cx, e);
        if (to[i].e == NULL) {
            while (i-- > 0)
                ac_envelope_free(cx, to[i].e);
            rc = AC_ENOMEM;
        }
    }
    if (rc != 0 || n == 0) {
        ac_envelope_free(cx, e);
    } else {
        to[n - 1].e = e;
        for (size_t i = 0; i < n; i++)
            rc += ac_send_checked(cx, &to[i].addr, NULL, to[i].e) == 0;
    }
    if (to != on_stack)
        free(to);
    if (nodes != nodes_on_stack)
        free(nodes);
    return rc < 0 ? rc : rc + remote;
}

int ac_group_publish(ac_ctx *cx, const char *group_name, const ac_actor_type *type,
                     ac_envelope *e)
{
    if (cx == NULL || e == NULL)
        return AC_EINVAL;
    size_t len = ac__name_len(group_name);
    if (len == 0 || type == NULL || e->tag >= AC_TAG_SYSTEM) {
        ac_envelope_free(cx, e);
        return AC_EINVAL;
    }
    return publish(cx, groups_of(cx), group_name, len, type, e, true);
}

size_t ac_group_members(ac_ctx *cx, const char *group_name, ac_addr *out, size_t max)
{
    size_t len = ac__name_len(group_name);
    if (cx == NULL || len == 0 || (out == NULL && max != 0))
        return 0;
    struct ac__groups *t = groups_of(cx);
    size_t n = 0;
    pthread_mutex_lock(&t->lock);
    group *g = find(t, group_name, len);
    if (g != NULL) {
        for (member *m = g->first; m != NULL && n < max; m = m->next)
            out[n++] = m->by_addr.key;
        n = g->count;
    }
    pthread_mutex_unlock(&t->lock);
    return n;
}

typedef struct listing {
    ac_group_entry *out;
    size_t max, n;
} listing;

static void list_one(ac__tnode *node, void *arg)
{
    listing *l = arg;
    const group *g = AC__CONTAINER_OF(node, group, by_name.node);
    if (l->n < l->max) {
        memcpy(l->out[l->n].name, g->name, g->by_name.len + 1);
        l->out[l->n].members = g->count;
    }
    l->n++;
}

size_t ac_groups(ac_ctx *cx, ac_group_entry *out, size_t max)
{
    if (cx == NULL || (out == NULL && max != 0))
        return 0;
    struct ac__groups *t = groups_of(cx);
    listing l = {out, max, 0};
    pthread_mutex_lock(&t->lock);
    ac__table_each(&t->by_name, list_one, &l);
    pthread_mutex_unlock(&t->lock);
    return l.n;
}

static void died(ac_ctx *cx, void *state, ac__actor *a, const ac__death *d)
{
    (void)d;
    struct ac__groups *t = state;
    member *dead = NULL;   /* unlinked, chained through next */
    ac__tnode *emptied = NULL; /* groups unlinked, chained by by_name.node.next */
    pthread_mutex_lock(&t->lock);
    ac__amap_node *x = ac__amap_find(&t->by_addr, &a->addr, 0);
    while (x != NULL) {
        ac__amap_node *next = ac__amap_find_next(x);
        member *m = AC__CONTAINER_OF(x, member, by_addr);
        if (m->actor == a) {  /* not a successor's, restarted at this address */
            group *g = unlink_member(t, m);
            if (g != NULL) {
                g->by_name.node.next = emptied;
                emptied = &g->by_name.node;
            }
            m->next = dead;
            dead = m;
        }
        x = next;
    }
    if (dead != NULL)
        tell(cx, 0, GRP_GONE, NULL, 0, &a->addr);
    pthread_mutex_unlock(&t->lock);
    while (dead != NULL) {  /* free() outside the lock */
        member *next = dead->next;
        free(dead);
        dead = next;
    }
    while (emptied != NULL) {
        ac__tnode *next = emptied->next;
        free(AC__CONTAINER_OF(emptied, group, by_name.node));
        emptied = next;
    }
}

/* ---- across nodes ------------------------------------------------------------------- */

/* Members being dropped, unlinked under the lock and freed after it: the
 * members chained through `next`, emptied groups by by_name.node.next. */
typedef struct sweep {
    struct ac__groups *t;
    member *dead;
    ac__tnode *emptied;
} sweep;

static void sweep_one(sweep *w, member *m)
{
    group *g = unlink_member(w->t, m);
    if (g != NULL) {
        g->by_name.node.next = w->emptied;
        w->emptied = &g->by_name.node;
    }
    m->next = w->dead;
    w->dead = m;
}

/* Another node's member (no actor here) of node *arg. */
static bool of_node(const ac__amap_node *x, void *arg)
{
    const member *m = AC__CONTAINER_OF(x, member, by_addr);
    return m->actor == NULL && ac_addr_node(&x->key) == *(const uint64_t *)arg;
}

static void sweep_free(sweep *w)
{
    while (w->dead != NULL) {
        member *next = w->dead->next;
        free(w->dead);
        w->dead = next;
    }
    while (w->emptied != NULL) {
        ac__tnode *next = w->emptied->next;
        free(AC__CONTAINER_OF(w->emptied, group, by_name.node));
        w->emptied = next;
    }
}

/* A publish from another node: decoded once by the type of a local member
 * it was encoded for, and copied to each local member. */
static int remote_publish(ac_ctx *cx, struct ac__groups *t, const char *name, size_t len,
                          uint32_t tag, uint64_t type_id, const uint8_t *payload, size_t plen)
{
    const ac_actor_type *type = NULL;
    pthread_mutex_lock(&t->lock);
    group *g = find(t, name, len);
    for (member *m = g ? g->first : NULL; m != NULL && type == NULL; m = m->next)
        if (m->actor != NULL && ac__type_id(ac__type(m->actor)) == type_id)
            type = ac__type(m->actor);  /* static: outlives the member */
    pthread_mutex_unlock(&t->lock);
    if (type == NULL)
        return 0;  /* nobody here any more (they left meanwhile) */
    ac_envelope *e = NULL;
    if (type->decode == NULL || type->decode(cx, tag, payload, plen, &e) != 0)
        return AC_EINVAL;
    /* Local members only: every member of another node is its node's. */
    (void)publish(cx, t, name, len, type, e, false);
    return 0;
}

/* A GROUP record from node `from`: each member it names lives there. */
static int control(ac_ctx *cx, void *state, uint64_t from, const uint8_t *body, size_t len)
{
    struct ac__groups *t = state;
    ac_wire_in in = {body, len, 0, false, 0};
    uint8_t op = ac_wire_get_u8(&in);
    size_t nlen = op == GRP_GONE ? 0 : ac_wire_get_u8(&in);
    const char *name = (const char *)ac_wire_take(&in, nlen);
    if (op == GRP_PUBLISH) {
        uint32_t tag = ac_wire_get_u32(&in);
        uint64_t type_id = ac_wire_get_u64(&in);
        if (in.bad || nlen == 0 || memchr(name, '\0', nlen) != NULL || tag >= AC_TAG_SYSTEM)
            return AC_EINVAL;
        return remote_publish(cx, t, name, nlen, tag, type_id, body + in.pos, len - in.pos);
    }
    ac_addr who;
    memcpy(who.bytes, ac_wire_take(&in, sizeof who.bytes), sizeof who.bytes);
    if (in.bad || in.pos != len || op < GRP_JOIN || op > GRP_GONE ||
        (op != GRP_GONE && (nlen == 0 || memchr(name, '\0', nlen) != NULL)))
        return AC_EINVAL;
    if (!ac__note_from(from, &who))
        return AC__EFORGED;
    if (op == GRP_JOIN) {
        /* Out of memory: not seen here. Past its quota: not seen here,
         * and counted. */
        int rc = join_new(t, NULL, name, nlen, &who, ac__peer_quota(cx));
        return rc == AC__EQUOTA ? rc : 0;
    }
    sweep w = {t, NULL, NULL};
    pthread_mutex_lock(&t->lock);
    group *g = op == GRP_LEAVE ? find(t, name, nlen) : NULL;
    member *m = g ? membership(t, g, &who) : NULL;
    if (m != NULL && m->actor == NULL)
        sweep_one(&w, m);
    for (ac__amap_node *x = op == GRP_GONE ? ac__amap_find(&t->by_addr, &who, 0) : NULL, *next;
         x != NULL; x = next) {
        next = ac__amap_find_next(x);
        member *mm = AC__CONTAINER_OF(x, member, by_addr);
        if (mm->actor == NULL)
            sweep_one(&w, mm);
    }
    pthread_mutex_unlock(&t->lock);
    sweep_free(&w);
    return 0;
}

typedef struct sync_walk {
    ac_ctx *cx;
    uint64_t node;
} sync_walk;

static void sync_group(ac__tnode *n, void *arg)
{
    sync_walk *s = arg;
    group *g = AC__CONTAINER_OF(n, group, by_name.node);
    for (member *m = g->first; m != NULL; m = m->next)
        if (m->actor != NULL)
            tell(s->cx, s->node, GRP_JOIN, g->name, g->by_name.len, &m->by_addr.key);
}

/* A node came up: it hears of every local member (as pg's sync). */
static void node_up(ac_ctx *cx, void *state, uint64_t node)
{
    struct ac__groups *t = state;
    sync_walk s = {cx, node};
    pthread_mutex_lock(&t->lock);
    ac__table_each(&t->by_name, sync_group, &s);
    pthread_mutex_unlock(&t->lock);
}

/* A node is gone: so are its members. Selected first (through their
 * index's `next`), then unlinked: a walk must not unlink what it walks. */
static void node_lost(ac_ctx *cx, void *state, uint64_t node)
{
    (void)cx;
    struct ac__groups *t = state;
    sweep w = {t, NULL, NULL};
    pthread_mutex_lock(&t->lock);
    for (ac__amap_node *x = ac__amap_select(&t->by_addr, of_node, &node); x != NULL; x = x->next)
        sweep_one(&w, AC__CONTAINER_OF(x, member, by_addr));
    pthread_mutex_unlock(&t->lock);
    sweep_free(&w);
}

const ac__service ac__groups_service = {
    .name = "groups",
    .init = init,
    .fini = fini,
    .died = died,
};
