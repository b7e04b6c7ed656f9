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
 */
#include "services.h"

#include "../lib/amap.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct monitor {
    ac__amap_node by_target;   /* key: target */
    ac__amap_node by_watcher;  /* key: watcher */
    ac__amap_node by_ref;      /* key: nil address, extra: the reference */
} monitor;

typedef struct ac__monitors {
    pthread_mutex_t lock;
    ac__amap by_target, by_watcher, by_ref;
    uint64_t next_ref;
} ac__monitors;

static const ac_addr nil_addr;

static ac__monitors *monitors_of(ac_ctx *cx)
{
    return ac__service_state(ac_ctx_runtime(cx), AC__SERVICE_monitors);
}

static int init(ac_runtime *rt, void **state)
{
    (void)rt;
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
    pthread_mutex_init(&M->lock, NULL);
    *state = M;
    return 0;
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
    pthread_mutex_destroy(&M->lock);
    free(M);
}

static int send_down(ac_ctx *cx, const ac_addr *watcher, const ac_addr *who,
                     uint64_t ref, int reason, int code)
{
    ac__env *e = ac__system_envelope(cx, AC_TAG_DOWN, sizeof(ac_down));
    if (e == NULL)
        return AC_ENOMEM;
    ac_down *d = ac_envelope_payload(ac__env_pub(e));
    d->who = *who;
    d->ref = ref;
    d->reason = reason;
    d->code = code;
    /* A watcher that is gone gets nothing, and that is no dead letter. */
    (void)ac__send_system(cx, watcher, e);
    return 0;
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
    ac__enter(cx);
    pthread_mutex_lock(&M->lock);
    uint64_t r = ++M->next_ref;
    int rc = 0;
    bool target_alive = false;
    if (ac__service_target(cx, watcher) == NULL) {
        rc = AC_ENOTFOUND;
    } else if (ac__service_target(cx, target) != NULL) {
        target_alive = true;
        m->by_target.key = *target;
        m->by_target.extra = 0;
        m->by_watcher.key = *watcher;
        m->by_watcher.extra = 0;
        m->by_ref.key = nil_addr;
        m->by_ref.extra = r;
        ac__amap_add(&M->by_target, &m->by_target);
        ac__amap_add(&M->by_watcher, &m->by_watcher);
        ac__amap_add(&M->by_ref, &m->by_ref);
    }
    pthread_mutex_unlock(&M->lock);
    if (!target_alive)
        free(m);
    if (rc == 0 && !target_alive)
        rc = send_down(cx, watcher, target, r, AC_REASON_NOPROC, 0);
    ac__leave(cx);
    if (rc == 0 && ref != NULL)
        *ref = r;
    return rc;
}

static void unlink_all(ac__monitors *M, monitor *m)
{
    ac__amap_remove(&M->by_target, &m->by_target);
    ac__amap_remove(&M->by_watcher, &m->by_watcher);
    ac__amap_remove(&M->by_ref, &m->by_ref);
}

int ac_demonitor(ac_ctx *cx, uint64_t ref)
{
    if (cx == NULL)
        return AC_EINVAL;
    ac__monitors *M = monitors_of(cx);
    pthread_mutex_lock(&M->lock);
    ac__amap_node *x = ac__amap_find(&M->by_ref, &nil_addr, ref);
    monitor *m = x ? AC__CONTAINER_OF(x, monitor, by_ref) : NULL;
    if (m)
        unlink_all(M, m);
    pthread_mutex_unlock(&M->lock);
    free(m);
    return m ? 0 : AC_ENOTFOUND;
}

static void died(ac_ctx *cx, void *state, ac__actor *a, int reason, int code)
{
    ac__monitors *M = state;
    pthread_mutex_lock(&M->lock);
    ac__amap_node *fire = ac__amap_take(&M->by_target, &a->addr, 0);
    for (ac__amap_node *x = fire; x != NULL; x = x->next) {
        monitor *m = AC__CONTAINER_OF(x, monitor, by_target);
        ac__amap_remove(&M->by_watcher, &m->by_watcher);
        ac__amap_remove(&M->by_ref, &m->by_ref);
    }
    /* Its own monitors of others die with it. */
    ac__amap_node *drop = ac__amap_take(&M->by_watcher, &a->addr, 0);
    for (ac__amap_node *x = drop; x != NULL; x = x->next) {
        monitor *m = AC__CONTAINER_OF(x, monitor, by_watcher);
        ac__amap_remove(&M->by_target, &m->by_target);
        ac__amap_remove(&M->by_ref, &m->by_ref);
    }
    pthread_mutex_unlock(&M->lock);

    /* Outside the lock: a send may schedule, and a watcher's handler may
     * monitor again. The downs go out in the order the monitors were
     * found; each watcher gets one per monitor. */
    for (ac__amap_node *x = fire, *next; x != NULL; x = next) {
        next = x->next;
        monitor *m = AC__CONTAINER_OF(x, monitor, by_target);
        (void)send_down(cx, &m->by_watcher.key, &a->addr, m->by_ref.extra, reason, code);
        free(m);
    }
    for (ac__amap_node *x = drop, *next; x != NULL; x = next) {
        next = x->next;
        free(AC__CONTAINER_OF(x, monitor, by_watcher));
    }
}

const ac__service ac__monitors_service = {
    .name = "monitors",
    .init = init,
    .fini = fini,
    .died = died,
};
