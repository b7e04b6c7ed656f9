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
 */
#include "services.h"

#include "../lib/amap.h"

#include <pthread.h>

#include <stdlib.h>
#include <string.h>

typedef struct member {
    ac__amap_node by_addr;       /* keyed by the member's address */
    struct member *prev, *next;  /* on its group's list, in join order */
    struct group *g;
    ac__actor *actor;            /* tells a restarted actor from the dead one */
} member;

typedef struct group {
    ac__tname by_name;  /* points at name */
    member *first, *last;
    size_t count;
    char name[];
} group;

struct ac__groups {
    pthread_mutex_t lock;
    ac__table by_name;
    ac__amap by_addr;
};

static struct ac__groups *groups_of(ac_ctx *cx)
{
    return ac__service_state(ac_ctx_runtime(cx), AC__SERVICE_groups);
}

static group *find(struct ac__groups *t, const char *name, size_t len)
{
    ac__tname *n = ac__table_find_name(&t->by_name, name, len);
    return n ? AC__CONTAINER_OF(n, group, by_name) : NULL;
}

/* The membership of `who` in g, if any. */
static member *membership(struct ac__groups *t, group *g, const ac_addr *who)
{
    for (ac__amap_node *x = ac__amap_find(&t->by_addr, who, 0); x; x = ac__amap_find_next(x)) {
        member *m = AC__CONTAINER_OF(x, member, by_addr);
        if (m->g == g)
            return m;
    }
    return NULL;
}

/* Under the lock. Returns the group if this was its last member: it is
 * unlinked too, and the caller frees both. */
static group *unlink_member(struct ac__groups *t, member *m)
{
    group *g = m->g;
    ac__amap_remove(&t->by_addr, &m->by_addr);
    *(m->prev ? &m->prev->next : &g->first) = m->next;
    *(m->next ? &m->next->prev : &g->last) = m->prev;
    if (--g->count > 0)
        return NULL;
    ac__table_remove(&t->by_name, &g->by_name.node);
    return g;
}

static int init(ac_runtime *rt, void **state)
{
    (void)rt;
    struct ac__groups *t = calloc(1, sizeof *t);
    if (t == NULL)
        return AC_ENOMEM;
    if (ac__amap_init(&t->by_addr) != 0) {
        free(t);
        return AC_ENOMEM;
    }
    pthread_mutex_init(&t->lock, NULL);
    *state = t;
    return 0;
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
    pthread_mutex_destroy(&t->lock);
    free(t);
}

/* Under the lock: the membership of a (live) in the group, creating the
 * group from *spare_g and the membership from *spare_m as needed; a spare
 * that is used is set to NULL. */
static int join(struct ac__groups *t, const char *name, size_t len, ac__actor *a,
                group **spare_g, member **spare_m)
{
    group *g = find(t, name, len);
    if (g != NULL) {
        member *m = membership(t, g, &a->addr);
        if (m != NULL) {
            m->actor = a;  /* idempotent; a restarted actor takes it over */
            return 0;
        }
    } else {
        g = *spare_g;
        int rc = ac__table_insert(&t->by_name, &g->by_name.node);
        if (rc != 0)
            return rc;
        *spare_g = NULL;
    }
    member *m = *spare_m;
    *spare_m = NULL;
    m->g = g;
    m->actor = a;
    m->by_addr.key = a->addr;
    m->by_addr.extra = 0;
    ac__amap_add(&t->by_addr, &m->by_addr);
    m->next = NULL;
    m->prev = g->last;
    *(g->last ? &g->last->next : &g->first) = m;
    g->last = m;
    g->count++;
    return 0;
}

int ac_group_join(ac_ctx *cx, const char *group_name, const ac_addr *who)
{
    size_t len = ac__name_len(group_name);
    if (cx == NULL || who == NULL || len == 0)
        return AC_EINVAL;
    struct ac__groups *t = groups_of(cx);
    /* Allocated outside the lock; freed if not needed. */
    group *g = calloc(1, sizeof *g + len + 1);
    member *m = malloc(sizeof *m);
    int rc = AC_ENOMEM;
    if (g != NULL && m != NULL) {
        memcpy(g->name, group_name, len);
        ac__tname_set(&g->by_name, g->name, len);
        ac__enter(cx);  /* ac__service_target reads the routing table */
        pthread_mutex_lock(&t->lock);
        ac__actor *a = ac__service_target(cx, who);
        rc = a ? join(t, group_name, len, a, &g, &m) : AC_ENOTFOUND;
        pthread_mutex_unlock(&t->lock);
        ac__leave(cx);
    }
    free(g);
    free(m);
    return rc;
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
    if (m != NULL)
        emptied = unlink_member(t, m);
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
    struct ac__groups *t = groups_of(cx);
    target on_stack[PUBLISH_ON_STACK], *to = on_stack;
    size_t n = 0;
    pthread_mutex_lock(&t->lock);
    group *g = find(t, group_name, len);
    if (g != NULL && g->count > PUBLISH_ON_STACK)
        to = malloc(g->count * sizeof *to);
    if (g != NULL && to != NULL) {
        for (member *m = g->first; m != NULL; m = m->next)
            to[n++].addr = m->by_addr.key;
    }
    pthread_mutex_unlock(&t->lock);
    int rc = 0;
    if (to == NULL)
        rc = AC_ENOMEM;
    else if (n > 1 && type->copy == NULL)
        rc = AC_EINVAL;
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
            rc += ac_send(cx, &to[i].addr, to[i].e) == 0;
    }
    if (to != on_stack)
        free(to);
    return rc;
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

static void died(ac_ctx *cx, void *state, ac__actor *a, int reason, int code)
{
    (void)cx;
    (void)reason;
    (void)code;
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

const ac__service ac__groups_service = {
    .name = "groups",
    .init = init,
    .fini = fini,
    .died = died,
};
