/*
 * names.c — the registry of names (ac_register, ac_whereis, ...).
 *
 * One mutex guards two indexes of the same entries: by name (table.h), for
 * registration and lookup, and by holder address (amap), so that an actor's
 * death frees its names without a scan. Names are not on the send path,
 * and every critical section is a hash lookup and a few pointer writes, so
 * a plain mutex costs less than anything cleverer would save.
 *
 * Against a registration racing with the holder's death, registration
 * follows the services protocol (core/service.c): under the lock,
 * ac__service_target either refuses a dying actor or guarantees that the
 * death's cleanup (died, below) runs after we unlock and finds the name.
 *
 * A name on another node (ac_whereis_on) is asked of that node's registry
 * in a NAME control record; the answer comes back to the asking thread's
 * inbox as a reply envelope (its status, then the address).
 */
#include "remote.h"
#include "services.h"

#include "../lib/amap.h"

#include <pthread.h>

#include <stdlib.h>
#include <string.h>

typedef struct entry {
    ac__tname by_name;      /* in names->by_name; points at name */
    ac__amap_node by_addr;  /* in names->by_addr, keyed by the holder */
    ac__actor *actor;       /* the holder: tells a restarted actor at the
                               same address from the one that died */
    char name[];
} entry;

struct ac__names {
    pthread_mutex_t lock;
    ac__table by_name;
    ac__hash_key key;       /* by_name's: names may come from anyone */
    ac__amap by_addr;
};

static struct ac__names *names_of(ac_ctx *cx)
{
    return ac__service_state(ac_ctx_runtime(cx), AC__SERVICE_names);
}

static entry *find(struct ac__names *t, const char *name, size_t len)
{
    ac__tname *n = ac__table_find_name(&t->by_name, &t->key, name, len);
    return n ? AC__CONTAINER_OF(n, entry, by_name) : NULL;
}

static entry *entry_new(const struct ac__names *t, const char *name, size_t len)
{
    entry *e = malloc(sizeof *e + len + 1);
    if (e == NULL)
        return NULL;
    memcpy(e->name, name, len);
    e->name[len] = '\0';
    ac__tname_set(&e->by_name, &t->key, e->name, len);
    e->by_addr.extra = 0;
    return e;
}

/* Under the lock: records e for actor a. */
static int add(struct ac__names *t, entry *e, ac__actor *a)
{
    int rc = ac__table_insert(&t->by_name, &e->by_name.node);
    if (rc != 0)
        return rc;
    e->actor = a;
    e->by_addr.key = a->addr;
    ac__amap_add(&t->by_addr, &e->by_addr);
    return 0;
}

/* Under the lock. */
static void drop(struct ac__names *t, entry *e)
{
    ac__table_remove(&t->by_name, &e->by_name.node);
    ac__amap_remove(&t->by_addr, &e->by_addr);
}

static int control(ac_ctx *cx, void *state, uint64_t from, const uint8_t *body, size_t len);
static const ac__remote_role role = {.op = AC__OP_NAME, .control = control};

static int init(ac_runtime *rt, void **state)
{
    struct ac__names *t = calloc(1, sizeof *t);
    if (t == NULL)
        return AC_ENOMEM;
    if (ac__amap_init(&t->by_addr) != 0) {
        free(t);
        return AC_ENOMEM;
    }
    ac__hash_key_draw(&t->key);
    pthread_mutex_init(&t->lock, NULL);
    *state = t;
    return ac__remote_register(rt, &role, t);
}

static void free_entry(ac__tnode *n, void *arg)
{
    (void)arg;
    free(AC__CONTAINER_OF(n, entry, by_name.node));
}

static void fini(void *state)
{
    struct ac__names *t = state;
    ac__table_each(&t->by_name, free_entry, NULL);
    ac__table_fini(&t->by_name);
    ac__amap_destroy(&t->by_addr);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

int ac_register(ac_ctx *cx, const char *name, const ac_addr *who)
{
    size_t len = ac__name_len(name);
    if (cx == NULL || who == NULL || len == 0)
        return AC_EINVAL;
    struct ac__names *t = names_of(cx);
    entry *e = entry_new(t, name, len);  /* outside the lock */
    if (e == NULL)
        return AC_ENOMEM;
    int rc;
    ac__enter(cx);  /* ac__service_target reads the routing table */
    pthread_mutex_lock(&t->lock);
    ac__actor *a;
    if (find(t, name, len) != NULL)
        rc = AC_EEXIST;
    else if ((a = ac__service_target(cx, who)) == NULL)
        rc = AC_ENOTFOUND;
    else
        rc = add(t, e, a);
    pthread_mutex_unlock(&t->lock);
    ac__leave(cx);
    if (rc != 0)
        free(e);
    return rc;
}

/* Spawn-time registration (ac_spawn_options.name), before the actor is
 * published: AC_EEXIST if taken, AC_EINVAL for a bad name. */
static int claim(ac_ctx *cx, void *state, ac__actor *a, const ac_spawn_options *o)
{
    if (o->name == NULL)
        return 0;
    const char *name = o->name;
    size_t len = ac__name_len(name);
    if (len == 0)
        return AC_EINVAL;
    struct ac__names *t = state;
    entry *e = entry_new(t, name, len);
    if (e == NULL)
        return AC_ENOMEM;
    int rc;
    pthread_mutex_lock(&t->lock);
    if (find(t, name, len) != NULL)
        rc = AC_EEXIST;
    else if (!ac__service_alive(cx, a))  /* sets services_used: see top */
        rc = AC_ENOTFOUND;
    else
        rc = add(t, e, a);
    pthread_mutex_unlock(&t->lock);
    if (rc != 0)
        free(e);
    return rc;
}

/* Undoes a claim whose spawn failed before the actor existed. */
static void unclaim(ac_ctx *cx, void *state, ac__actor *a, const ac_spawn_options *o)
{
    (void)cx;
    size_t len = o->name ? ac__name_len(o->name) : 0;
    if (len == 0)
        return;
    const char *name = o->name;
    struct ac__names *t = state;
    pthread_mutex_lock(&t->lock);
    entry *e = find(t, name, len);
    if (e != NULL && e->actor == a)  /* only our own claim, not a winner's */
        drop(t, e);
    else
        e = NULL;
    pthread_mutex_unlock(&t->lock);
    free(e);
}

int ac_unregister(ac_ctx *cx, const char *name)
{
    size_t len = ac__name_len(name);
    if (cx == NULL || len == 0)
        return AC_EINVAL;
    struct ac__names *t = names_of(cx);
    pthread_mutex_lock(&t->lock);
    entry *e = find(t, name, len);
    if (e != NULL)
        drop(t, e);
    pthread_mutex_unlock(&t->lock);
    if (e == NULL)
        return AC_ENOTFOUND;
    free(e);
    return 0;
}

int ac_whereis(ac_ctx *cx, const char *name, ac_addr *out)
{
    size_t len = ac__name_len(name);
    if (cx == NULL || out == NULL || len == 0)
        return AC_EINVAL;
    struct ac__names *t = names_of(cx);
    pthread_mutex_lock(&t->lock);
    entry *e = find(t, name, len);
    if (e != NULL)
        *out = e->by_addr.key;
    pthread_mutex_unlock(&t->lock);
    return e != NULL ? 0 : AC_ENOTFOUND;
}

int ac_send_named(ac_ctx *cx, const char *name, ac_envelope *e)
{
    if (cx == NULL || e == NULL)
        return AC_EINVAL;
    ac_addr to;
    int rc = ac_whereis(cx, name, &to);
    if (rc == 0)
        return ac_send(cx, &to, e);
    if (rc == AC_ENOTFOUND) {
        /* A send to nobody, like ac_send's: counted, and shown to the
         * dead-letter hook with the nil address. */
        ac_addr nil;
        memset(&nil, 0, sizeof nil);
        ac__refuse(cx, &nil, ac__env_of(e), AC_ENOTFOUND);
    }
    ac_envelope_free(cx, e);
    return rc;
}

typedef struct listing {
    ac_name_entry *out;
    size_t max, n;
} listing;

static void list_one(ac__tnode *n, void *arg)
{
    listing *l = arg;
    const entry *e = AC__CONTAINER_OF(n, entry, by_name.node);
    if (l->n < l->max) {
        memcpy(l->out[l->n].name, e->name, e->by_name.len + 1);
        l->out[l->n].addr = e->by_addr.key;
    }
    l->n++;
}

size_t ac_registered(ac_ctx *cx, ac_name_entry *out, size_t max)
{
    if (cx == NULL || (out == NULL && max != 0))
        return 0;
    struct ac__names *t = names_of(cx);
    listing l = {out, max, 0};
    pthread_mutex_lock(&t->lock);
    ac__table_each(&t->by_name, list_one, &l);
    pthread_mutex_unlock(&t->lock);
    return l.n;
}

static void died(ac_ctx *cx, void *state, ac__actor *a, const ac__death *d)
{
    (void)cx;
    (void)d;
    struct ac__names *t = state;
    ac__tnode *freed = NULL;  /* unlinked entries, chained by by_name.node.next */
    pthread_mutex_lock(&t->lock);
    /* Names held at this address by this actor, not by a successor that a
     * supervisor restarted there. */
    ac__amap_node *x = ac__amap_find(&t->by_addr, &a->addr, 0);
    while (x != NULL) {
        ac__amap_node *next = ac__amap_find_next(x);
        entry *e = AC__CONTAINER_OF(x, entry, by_addr);
        if (e->actor == a) {
            drop(t, e);
            e->by_name.node.next = freed;
            freed = &e->by_name.node;
        }
        x = next;
    }
    pthread_mutex_unlock(&t->lock);
    while (freed != NULL) {  /* free() outside the lock */
        ac__tnode *next = freed->next;
        free(AC__CONTAINER_OF(freed, entry, by_name.node));
        freed = next;
    }
}

/* ---- across nodes ------------------------------------------------------------------- */

/* NAME control records: a sub-op byte, the asking inbox, then the name
 * (u8 length, bytes) of WHEREIS, or the status and address of IS. */
enum { NAME_WHEREIS = 1, NAME_IS = 2 };

int ac_whereis_on(ac_ctx *cx, const char *node, const char *name, int timeout_ms, ac_addr *out)
{
    size_t len = ac__name_len(name);
    if (cx == NULL || node == NULL || out == NULL || len == 0)
        return AC_EINVAL;
    if (ac__current(cx) != NULL)
        return AC_ESTATE;  /* a worker must not block */
    uint64_t id = ac__node_named(cx, node);
    if (id == 0)
        return AC_ENOCONNECTION;
    ac_inbox *ib;
    int rc = ac_inbox_create(cx, &ib);
    if (rc != 0)
        return rc;
    uint8_t buf[1 + 32 + 1 + AC_NAME_MAX];
    ac_wire_out o = {buf, sizeof buf, 0};
    ac_wire_u8(&o, NAME_WHEREIS);
    ac_wire_bytes(&o, ac_inbox_addr(ib)->bytes, 32);
    ac_wire_u8(&o, (uint8_t)len);
    ac_wire_bytes(&o, name, len);
    rc = ac__transmit(cx, id, AC__OP_NAME, buf, o.len, 0);
    ac_envelope *e = NULL;
    if (rc == AC_ENOTFOUND)
        rc = AC_ENOCONNECTION;  /* lost since */
    else if (rc == 0)
        rc = ac_inbox_recv(cx, ib, AC_TAG_REPLY, timeout_ms, &e);
    if (rc == 0) {
        rc = ((const ac_reply_head *)ac_envelope_payload(e))->status;
        if (rc == 0)
            memcpy(out, ac_reply_body(e), sizeof *out);
        ac_envelope_free(cx, e);
    }
    ac_inbox_destroy(cx, ib);
    return rc;
}

/* A NAME record from node `from`: a question to answer, or an answer for
 * an inbox of ours (about an actor of `from`). */
static int control(ac_ctx *cx, void *state, uint64_t from, const uint8_t *body, size_t len)
{
    (void)state;
    ac_wire_in in = {body, len, 0, false, 0};
    uint8_t op = ac_wire_get_u8(&in);
    ac_reply_to to = {{{0}}, 0};
    memcpy(to.to.bytes, ac_wire_take(&in, 32), 32);
    if (op == NAME_WHEREIS) {
        size_t n = ac_wire_get_u8(&in);
        const char *name = (const char *)ac_wire_take(&in, n);
        if (in.bad || in.pos != len || n == 0 || memchr(name, '\0', n) != NULL)
            return AC_EINVAL;
        if (!ac__note_from(from, &to.to))
            return AC__EFORGED;
        char cname[AC_NAME_MAX + 1];
        memcpy(cname, name, n);
        cname[n] = '\0';
        ac_addr found;
        memset(&found, 0, sizeof found);
        int rc = ac_whereis(cx, cname, &found);
        uint8_t buf[1 + 32 + 4 + 32];
        ac_wire_out o = {buf, sizeof buf, 0};
        ac_wire_u8(&o, NAME_IS);
        ac_wire_bytes(&o, to.to.bytes, 32);
        ac_wire_u32(&o, (uint32_t)rc);
        ac_wire_bytes(&o, found.bytes, 32);
        /* Bounded, as a message is: a peer that asks faster than it reads
         * its answers cannot grow its queue here without end (refused
         * answers are counted in its `refused`; its asks time out). */
        (void)ac__transmit(cx, from, AC__OP_NAME, buf, o.len, AC__TRANSMIT_BOUNDED);
        return 0;
    }
    int32_t status = (int32_t)ac_wire_get_u32(&in);
    ac_addr found;
    memcpy(found.bytes, ac_wire_take(&in, 32), 32);
    if (in.bad || in.pos != len || op != NAME_IS || status > 0 || ac__addr_remote(cx, &to.to))
        return AC_EINVAL;
    if (status == 0 && !ac__note_from(from, &found))
        return AC__EFORGED;  /* a name of its registry holds one of its actors */
    ac_envelope *e = ac_reply_new(cx, &to, sizeof found);
    if (e == NULL)
        return 0;
    ((ac_reply_head *)ac_envelope_payload(e))->status = status;
    memcpy(ac_reply_body(e), &found, sizeof found);
    (void)ac_reply(cx, &to, e);  /* the inbox may be gone: a timed-out ask */
    return 0;
}

const ac__service ac__names_service = {
    .name = "names",
    .init = init,
    .fini = fini,
    .claim = claim,
    .unclaim = unclaim,
    .died = died,
};
