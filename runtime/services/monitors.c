/*
 * monitors.c — monitors: a watcher gets one `down` message per monitor when
 * the target is gone (Erlang's monitor/2, CAF's monitor).
 *
 * One record per monitor, on three maps under one lock: by target (the
 * death of a target fires its monitors), by watcher (the death of a
 * watcher drops its monitors, so dead watchers leave nothing behind) and
 * by reference (ac_demonitor). Monitors are not on the send path; one lock
 * keeps the three maps consistent without ordering rules between shards.
 * The race with the target's death is closed by ac__service_target.
 *
 * A reference is a capability too: SipHash-2-4 of a counter under a key
 * the runtime draws (so it cannot be guessed from others), never 0 and
 * never that of a monitor still held, and only its watcher may take it
 * back (the actor whose handler runs, or the thread that made the inbox):
 * anyone else hears AC_ENOTFOUND, as for a reference that never was.
 *
 * After ac_demonitor returns no `down` of that monitor arrives (OTP's
 * demonitor(Ref, [flush])). A monitor that fires does not leave the maps:
 * its down is queued *under the lock*, marked for screening, and the
 * record stays (fired) on the watcher's and the reference's maps until
 * the watcher takes the down off its queue (screen, below). A demonitor
 * either comes first (the record is live: no down is ever sent) or finds
 * the fired record and removes it, and the down, when taken, finds no
 * record and is dropped, counted in `unhandled`. A watcher's death frees
 * what it still holds, fired or not.
 *
 * Across nodes (docs/NODES.md) both nodes keep a record: the watcher's
 * node one whose target is remote, the target's node one whose watcher is
 * remote, keyed by reference under the watcher's address (references are
 * numbered by the watcher's node). The watcher's node asks (ADD), takes
 * back (DEL), and hears of the death (DOWN) in MONITOR control records,
 * sent in order behind whatever the target sent before it died; a lost
 * node fires every monitor of its actors with AC_REASON_NOCONNECTION and
 * drops those its actors held here.
 */
#include "remote.h"
#include "services.h"

#include "../lib/amap.h"
#include "../lib/quota.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct monitor {
    ac__amap_node by_target;   /* key: target */
    ac__amap_node by_watcher;  /* key: watcher */
    ac__amap_node by_ref;      /* key: nil address (a remote watcher's
                                  address), extra: the reference */
    bool fired;                /* its down is queued for its (local)
                                  watcher; off the target's map */
} monitor;

/* MONITOR control records (remote.h): the watcher's node asks (ADD) and
 * takes back (DEL), the target's node tells of the death (DOWN). */
enum { MON_ADD = 1, MON_DEL = 2, MON_DOWN = 3 };
static const uint8_t shapes[] = {
    [MON_ADD] = AC__NOTE_SECOND | AC__NOTE_REF,  /* watcher (theirs), target */
    [MON_DEL] = AC__NOTE_REF,                    /* watcher (theirs) */
    [MON_DOWN] = AC__NOTE_SECOND | AC__NOTE_REF | AC__NOTE_FATE |
                 AC__NOTE_SENDER_SECOND,          /* watcher, target (theirs) */
};
static const ac__note_shapes notes = {AC__OP_MONITOR, shapes, sizeof shapes};

static int control(ac_ctx *cx, void *state, uint64_t from, const uint8_t *body, size_t len);
static void node_lost(ac_ctx *cx, void *state, uint64_t node);
static const ac__remote_role role = {
    .op = AC__OP_MONITOR, .control = control, .node_lost = node_lost};

typedef struct ac__monitors {
    pthread_mutex_t lock;
    ac__amap by_target, by_watcher, by_ref;
    uint64_t made;             /* references made: what is hashed */
    ac__hash_key key;          /* the hash's */
    ac__quota peers;           /* monitors of remote watchers, by their node */
} ac__monitors;

static const ac_addr nil_addr;

static ac__monitors *monitors_of(ac_ctx *cx)
{
    return ac__service_state(ac_ctx_runtime(cx), AC__SERVICE_monitors);
}

static int init(ac_runtime *rt, void **state)
{
    ac__monitors *M = calloc(1, sizeof *M);
    if (M == NULL)
        return AC_ENOMEM;
    if (ac__amap_init(&M->by_target) != 0 || ac__amap_init(&M->by_watcher) != 0 ||
        ac__amap_init(&M->by_ref) != 0) {
        ac__amap_destroy(&M->by_target);
        ac__amap_destroy(&M->by_watcher);
        free(M);
        return AC_ENOMEM;
    }
    ac__hash_key_draw(&M->key);
    pthread_mutex_init(&M->lock, NULL);
    *state = M;
    return ac__remote_register(rt, &role, M);
}

static void free_monitor(ac__amap_node *x, void *arg)
{
    (void)arg;
    free(AC__CONTAINER_OF(x, monitor, by_ref));
}

static void fini(void *state)
{
    ac__monitors *M = state;
    /* Every record is on the by-reference map exactly once. */
    ac__amap_each(&M->by_ref, free_monitor, NULL);
    ac__amap_destroy(&M->by_target);
    ac__amap_destroy(&M->by_watcher);
    ac__amap_destroy(&M->by_ref);
    ac__quota_fini(&M->peers);
    pthread_mutex_destroy(&M->lock);
    free(M);
}

/* A fresh reference; locked. Never 0, which callers may use for none, and
 * never one held now, so that each names one monitor (a repeat of an
 * older one is as likely as guessing it: 2^-64 a pair). A keyed hash
 * costs one SipHash; a keyed permutation of the counter would have made
 * repeats impossible, but four rounds of it cost 130 ns a monitor. */
static uint64_t new_ref(ac__monitors *M)
{
    for (;;) {
        uint64_t n = ++M->made;
        char in[sizeof n];
        memcpy(in, &n, sizeof n);
        uint64_t r = ac__hash_keyed(&M->key, in, sizeof in);
        if (r != 0 && ac__amap_find(&M->by_ref, &nil_addr, r) == NULL)
            return r;
    }
}

/* Sends a down to a local watcher, marked to be screened when taken. */
static int send_down(ac_ctx *cx, const ac_addr *watcher, const ac_addr *who,
                     uint64_t ref, const ac__death *d)
{
    ac__env *e = ac__system_envelope(cx, AC_TAG_DOWN, sizeof(ac__down_note));
    if (e == NULL)
        return AC_ENOMEM;
    e->flags |= AC__ENV_SCREEN;
    ac__down_note *n = ac_envelope_payload(ac__env_pub(e));
    n->down.who = *who;
    n->down.ref = ref;
    n->down.reason = d->reason;
    n->down.code = d->code;
    /* A failure's tag, for its supervisor's report. */
    n->tag = d->tag;
    n->pad = 0;
    /* A watcher that is gone gets nothing, and that is no dead letter. */
    (void)ac__send_system(cx, watcher, e);
    return 0;
}

static void add(ac__monitors *M, monitor *m, const ac_addr *watcher, const ac_addr *target,
                const ac_addr *ref_key, uint64_t ref)
{
    m->fired = false;
    m->by_target.key = *target;
    m->by_target.extra = 0;
    m->by_watcher.key = *watcher;
    m->by_watcher.extra = 0;
    m->by_ref.key = *ref_key;
    m->by_ref.extra = ref;
    ac__amap_add(&M->by_target, &m->by_target);
    ac__amap_add(&M->by_watcher, &m->by_watcher);
    ac__amap_add(&M->by_ref, &m->by_ref);
}

static void unlink_all(ac__monitors *M, monitor *m)
{
    if (!m->fired)
        ac__amap_remove(&M->by_target, &m->by_target);
    ac__amap_remove(&M->by_watcher, &m->by_watcher);
    ac__amap_remove(&M->by_ref, &m->by_ref);
    /* A remote watcher's monitor is keyed by its address (remote_add). */
    if (!ac_addr_eq(&m->by_ref.key, &nil_addr))
        ac__quota_give(&M->peers, ac_addr_node(&m->by_ref.key));
}

/* The monitor of a local watcher fires: off the target's map (the caller
 * took it off, or it was never on it) and marked fired, its down queued
 * before the lock is released, so that a demonitor finds either the live
 * monitor or the fired one with its down already queued. Locked, online.
 * Out of memory for the down, the monitor is dropped. */
static void fire(ac_ctx *cx, ac__monitors *M, monitor *m, const ac_addr *who, const ac__death *d)
{
    m->fired = true;
    if (send_down(cx, &m->by_watcher.key, who, m->by_ref.extra, d) != 0) {
        unlink_all(M, m);
        free(m);
    }
}

/* The monitor `ref` of a local watcher, live or fired, or NULL; locked.
 * The one lookup that live_ref, ac_demonitor and screen each refine. */
static monitor *local_ref(ac__monitors *M, uint64_t ref)
{
    ac__amap_node *x = ac__amap_find(&M->by_ref, &nil_addr, ref);
    return x ? AC__CONTAINER_OF(x, monitor, by_ref) : NULL;
}

/* The live monitor `ref` of `target` (local watcher), or NULL; locked. */
static monitor *live_ref(ac__monitors *M, uint64_t ref, const ac_addr *target)
{
    monitor *m = local_ref(M, ref);
    if (m == NULL || m->fired || !ac_addr_eq(&m->by_target.key, target))
        return NULL;
    return m;
}

/* A monitor of `target` whose target's node answered (MON_DOWN) or could
 * not be told: it fires, if it is still live. */
static void fire_ref(ac_ctx *cx, ac__monitors *M, uint64_t ref, const ac_addr *target,
                     int reason, int code)
{
    ac__enter(cx);
    pthread_mutex_lock(&M->lock);
    monitor *m = live_ref(M, ref, target);
    if (m != NULL) {
        ac__amap_remove(&M->by_target, &m->by_target);
        ac__death d = {reason, code, AC__NO_TAG};  /* told elsewhere: no tag */
        fire(cx, M, m, target, &d);
    }
    pthread_mutex_unlock(&M->lock);
    ac__leave(cx);
}

/* Removes the monitor `ref` under `ref_key` if it is still there: true
 * for the one caller that did (and so acts on it). */
static bool take_ref(ac__monitors *M, const ac_addr *ref_key, uint64_t ref, monitor *out)
{
    pthread_mutex_lock(&M->lock);
    ac__amap_node *x = ac__amap_find(&M->by_ref, ref_key, ref);
    monitor *m = x ? AC__CONTAINER_OF(x, monitor, by_ref) : NULL;
    if (m != NULL)
        unlink_all(M, m);
    pthread_mutex_unlock(&M->lock);
    if (m != NULL) {
        *out = *m;
        free(m);
    }
    return m != NULL;
}

/* A MONITOR record to `to_node`: `op`, the watcher, the target (ADD,
 * DOWN), the reference, and for DOWN the reason and code. */
static int transmit(ac_ctx *cx, uint64_t to_node, uint8_t op, const ac_addr *watcher,
                    const ac_addr *target, uint64_t ref, int reason, int code)
{
    ac__note n = {op, *watcher, op != MON_DEL ? *target : nil_addr, ref, reason, code};
    return ac__note_send(cx, &notes, to_node, &n);
}

int ac_monitor(ac_ctx *cx, const ac_addr *watcher, const ac_addr *target,
               uint64_t *ref)
{
    if (cx == NULL || watcher == NULL || target == NULL)
        return AC_EINVAL;
    monitor *m = malloc(sizeof *m);
    if (m == NULL)
        return AC_ENOMEM;
    ac__monitors *M = monitors_of(cx);
    bool remote = ac__addr_remote(cx, target);
    ac__enter(cx);
    pthread_mutex_lock(&M->lock);
    uint64_t r = new_ref(M);
    int rc = 0;
    if (ac__service_target(cx, watcher) == NULL) {
        rc = AC_ENOTFOUND;
        free(m);
    } else if (remote || ac__service_target(cx, target) != NULL) {
        add(M, m, watcher, target, &nil_addr, r);
    } else {
        /* Gone already: fired at once, and screened as any down. */
        add(M, m, watcher, target, &nil_addr, r);
        ac__amap_remove(&M->by_target, &m->by_target);
        fire(cx, M, m, target, &(ac__death){AC_REASON_NOPROC, 0, AC__NO_TAG});
    }
    pthread_mutex_unlock(&M->lock);
    ac__leave(cx);
    /* The target's node records its half, or answers NOPROC; if it
     * cannot be told (not up), the monitor fires here. */
    if (rc == 0 && remote &&
        transmit(cx, ac_addr_node(target), MON_ADD, watcher, target, r, 0, 0) != 0)
        fire_ref(cx, M, r, target, AC_REASON_NOCONNECTION, 0);
    if (rc == 0 && ref != NULL)
        *ref = r;
    return rc;
}

int ac_demonitor(ac_ctx *cx, uint64_t ref)
{
    if (cx == NULL)
        return AC_EINVAL;
    ac__monitors *M = monitors_of(cx);
    ac__enter(cx);
    pthread_mutex_lock(&M->lock);
    monitor *m = local_ref(M, ref);
    /* Only its watcher may take it back; to anyone else it does not
     * exist, so that trying references tells nothing. */
    if (m != NULL && !ac__acts_for(cx, &m->by_watcher.key))
        m = NULL;
    if (m != NULL)
        unlink_all(M, m);
    pthread_mutex_unlock(&M->lock);
    ac__leave(cx);
    if (m == NULL)
        return AC_ENOTFOUND;
    /* A live monitor of a remote target: its node drops its half. A fired
     * one's down is queued here and is dropped when taken (screen). */
    if (!m->fired && ac__addr_remote(cx, &m->by_target.key))
        (void)transmit(cx, ac_addr_node(&m->by_target.key), MON_DEL, &m->by_watcher.key,
                       &m->by_target.key, ref, 0, 0);
    free(m);
    return 0;
}

/* A down is taken by its watcher: it passes if its monitor is still
 * there, fired, and the watcher's; the record goes with it. */
static int screen(ac_ctx *cx, void *state, ac__actor *a, const ac__env *e)
{
    (void)cx;
    ac__monitors *M = state;
    const ac_down *d = ac_envelope_payload(ac__env_pub((ac__env *)e));
    pthread_mutex_lock(&M->lock);
    monitor *m = local_ref(M, d->ref);
    if (m != NULL && (!m->fired || !ac_addr_eq(&m->by_watcher.key, &a->addr)))
        m = NULL;
    if (m != NULL)
        unlink_all(M, m);
    pthread_mutex_unlock(&M->lock);
    free(m);
    return m != NULL ? AC__SCREEN_PASS : AC__SCREEN_VOID;
}

static void died(ac_ctx *cx, void *state, ac__actor *a, const ac__death *d)
{
    ac__monitors *M = state;
    ac__amap_node *far = NULL;  /* monitors of remote watchers, by by_target.next */
    pthread_mutex_lock(&M->lock);
    /* Its monitors fire: a local watcher's down is queued under the lock
     * (fire); a remote watcher's node is told after it. The downs go out
     * in the order the monitors were found, one per monitor. */
    ac__amap_node *found = ac__amap_take(&M->by_target, &a->addr, 0);
    for (ac__amap_node *x = found, *next; x != NULL; x = next) {
        next = x->next;
        monitor *m = AC__CONTAINER_OF(x, monitor, by_target);
        if (ac__addr_remote(cx, &m->by_watcher.key)) {
            m->fired = true;  /* off the target's map already */
            unlink_all(M, m);
            x->next = far;
            far = x;
        } else {
            fire(cx, M, m, &a->addr, d);
        }
    }
    /* Its own monitors of others die with it, fired or not. */
    ac__amap_node *drop = ac__amap_take(&M->by_watcher, &a->addr, 0);
    for (ac__amap_node *x = drop; x != NULL; x = x->next) {
        monitor *m = AC__CONTAINER_OF(x, monitor, by_watcher);
        if (!m->fired)
            ac__amap_remove(&M->by_target, &m->by_target);
        ac__amap_remove(&M->by_ref, &m->by_ref);
    }
    pthread_mutex_unlock(&M->lock);

    /* Outside the lock: the node's queue. */
    for (ac__amap_node *x = far, *next; x != NULL; x = next) {
        next = x->next;
        monitor *m = AC__CONTAINER_OF(x, monitor, by_target);
        const ac_addr *w = &m->by_watcher.key;
        (void)transmit(cx, ac_addr_node(w), MON_DOWN, w, &a->addr, m->by_ref.extra, d->reason, d->code);
        free(m);
    }
    for (ac__amap_node *x = drop, *next; x != NULL; x = next) {
        next = x->next;
        monitor *m = AC__CONTAINER_OF(x, monitor, by_watcher);
        if (!m->fired && ac__addr_remote(cx, &m->by_target.key))
            (void)transmit(cx, ac_addr_node(&m->by_target.key), MON_DEL, &a->addr,
                           &m->by_target.key, m->by_ref.extra, 0, 0);
        free(m);
    }
}

/* ---- across nodes ------------------------------------------------------------------- */

/* Another node's watcher monitors an actor of ours (ADD): recorded if it
 * lives, else answered at once with a NOPROC down; refused past its
 * node's quota, answered with a NOCONNECTION down (this node will not
 * keep it, as if the link had gone). */
static int remote_add(ac_ctx *cx, ac__monitors *M, uint64_t from, const ac_addr *watcher,
                      const ac_addr *target, uint64_t ref)
{
    uint32_t quota = ac__peer_quota(cx);
    monitor *m = malloc(sizeof *m);
    if (m == NULL)
        return AC_ENOMEM;
    ac__enter(cx);
    pthread_mutex_lock(&M->lock);
    bool alive = ac__service_target(cx, target) != NULL;
    bool kept = alive && ac__quota_take(&M->peers, from, quota);
    if (kept)
        add(M, m, watcher, target, watcher, ref);
    pthread_mutex_unlock(&M->lock);
    ac__leave(cx);
    if (kept)
        return 0;
    free(m);
    (void)transmit(cx, from, MON_DOWN, watcher, target, ref,
                   alive ? AC_REASON_NOCONNECTION : AC_REASON_NOPROC, 0);
    return alive ? AC__EQUOTA : 0;
}

/* A MONITOR record from node `from`; each names an actor that must live
 * there (the watcher of ADD and DEL, the dead of DOWN). */
static int control(ac_ctx *cx, void *state, uint64_t from, const uint8_t *body, size_t len)
{
    ac__monitors *M = state;
    ac__note n;
    int rc = ac__note_read(cx, &notes, from, body, len, &n);
    if (rc != 0)
        return rc;
    monitor m;
    switch (n.op) {
    case MON_ADD:
        return remote_add(cx, M, from, &n.first, &n.second, n.ref);
    case MON_DEL:
        (void)take_ref(M, &n.first, n.ref, &m);
        return 0;
    default:
        /* Unless gone already: taken back here, or fired by a node loss. */
        fire_ref(cx, M, n.ref, &n.second, n.reason, n.code);
        return 0;
    }
}

/* A live monitor whose target or watcher lives on node *arg (a fired one
 * has nothing more to do with that node). */
static bool on_node(const ac__amap_node *x, void *arg)
{
    const monitor *m = AC__CONTAINER_OF(x, monitor, by_ref);
    uint64_t node = *(const uint64_t *)arg;
    return !m->fired &&
           (ac_addr_node(&m->by_target.key) == node || ac_addr_node(&m->by_watcher.key) == node);
}

/* Node `node` is gone: monitors of its actors fire with NOCONNECTION,
 * those its actors held of ours are dropped. */
static void node_lost(ac_ctx *cx, void *state, uint64_t node)
{
    ac__monitors *M = state;
    ac__enter(cx);
    pthread_mutex_lock(&M->lock);
    ac__amap_node *found = ac__amap_select(&M->by_ref, on_node, &node);
    for (ac__amap_node *x = found, *next; x != NULL; x = next) {
        next = x->next;
        monitor *m = AC__CONTAINER_OF(x, monitor, by_ref);
        if (ac_addr_node(&m->by_target.key) == node) {
            ac__amap_remove(&M->by_target, &m->by_target);
            fire(cx, M, m, &m->by_target.key,
                 &(ac__death){AC_REASON_NOCONNECTION, 0, AC__NO_TAG});
        } else {
            unlink_all(M, m);
            free(m);
        }
    }
    pthread_mutex_unlock(&M->lock);
    ac__leave(cx);
}

const ac__service ac__monitors_service = {
    .name = "monitors",
    .init = init,
    .fini = fini,
    .died = died,
    .screens = AC_TAG_DOWN,
    .screen = screen,
};
