/*
 * monitor.c — monitors: a watcher gets one `down` message per monitor when
 * the target is gone (Erlang's monitor/2, CAF's monitor).
 *
 * One record per monitor, on three maps under one lock: by target (the
 * death of a target fires its monitors), by watcher (the death of a
 * watcher drops its monitors, so dead watchers leave nothing behind) and
 * by reference (ac_demonitor). Monitors are not on the send path; one lock
 * keeps the three maps consistent without ordering rules between shards.
 * The race with the target's death is closed by ac__service_target.
 */
#include "internal.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct monitor {
    ac__amap_node by_target;   /* key: target */
    ac__amap_node by_watcher;  /* key: watcher */
    ac__amap_node by_ref;      /* key: nil address, extra: the reference */
} monitor;

static const ac_addr nil_addr;

int ac__monitors_init(ac_runtime *rt)
{
    pthread_mutex_init(&rt->monitor_lock, NULL);
    rt->next_ref = 0;
    if (ac__amap_init(&rt->mon_by_target) != 0)
        return AC_ENOMEM;
    if (ac__amap_init(&rt->mon_by_watcher) != 0 || ac__amap_init(&rt->mon_by_ref) != 0) {
        ac__amap_destroy(&rt->mon_by_target);
        ac__amap_destroy(&rt->mon_by_watcher);
        return AC_ENOMEM;
    }
    return 0;
}

static void free_monitor(ac__amap_node *x, void *arg)
{
    (void)arg;
    free(AC__CONTAINER_OF(x, monitor, by_ref));
}

void ac__monitors_fini(ac_runtime *rt)
{
    /* Every record is on the by-reference map exactly once. */
    ac__amap_each(&rt->mon_by_ref, free_monitor, NULL);
    ac__amap_destroy(&rt->mon_by_target);
    ac__amap_destroy(&rt->mon_by_watcher);
    ac__amap_destroy(&rt->mon_by_ref);
    pthread_mutex_destroy(&rt->monitor_lock);
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
    ac_runtime *rt = cx->rt;
    ac__enter(cx);
    pthread_mutex_lock(&rt->monitor_lock);
    uint64_t r = ++rt->next_ref;
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
        ac__amap_add(&rt->mon_by_target, &m->by_target);
        ac__amap_add(&rt->mon_by_watcher, &m->by_watcher);
        ac__amap_add(&rt->mon_by_ref, &m->by_ref);
    }
    pthread_mutex_unlock(&rt->monitor_lock);
    if (!target_alive)
        free(m);
    if (rc == 0 && !target_alive)
        rc = send_down(cx, watcher, target, r, AC_REASON_NOPROC, 0);
    ac__leave(cx);
    if (rc == 0 && ref != NULL)
        *ref = r;
    return rc;
}

static void unlink_all(ac_runtime *rt, monitor *m)
{
    ac__amap_remove(&rt->mon_by_target, &m->by_target);
    ac__amap_remove(&rt->mon_by_watcher, &m->by_watcher);
    ac__amap_remove(&rt->mon_by_ref, &m->by_ref);
}

int ac_demonitor(ac_ctx *cx, uint64_t ref)
{
    if (cx == NULL)
        return AC_EINVAL;
    ac_runtime *rt = cx->rt;
    pthread_mutex_lock(&rt->monitor_lock);
    ac__amap_node *x = ac__amap_find(&rt->mon_by_ref, &nil_addr, ref);
    monitor *m = x ? AC__CONTAINER_OF(x, monitor, by_ref) : NULL;
    if (m)
        unlink_all(rt, m);
    pthread_mutex_unlock(&rt->monitor_lock);
    free(m);
    return m ? 0 : AC_ENOTFOUND;
}

void ac__monitors_died(ac_ctx *cx, ac__actor *a, int reason, int code)
{
    ac_runtime *rt = cx->rt;
    pthread_mutex_lock(&rt->monitor_lock);
    ac__amap_node *fire = ac__amap_take(&rt->mon_by_target, &a->addr, 0);
    for (ac__amap_node *x = fire; x != NULL; x = x->next) {
        monitor *m = AC__CONTAINER_OF(x, monitor, by_target);
        ac__amap_remove(&rt->mon_by_watcher, &m->by_watcher);
        ac__amap_remove(&rt->mon_by_ref, &m->by_ref);
    }
    /* Its own monitors of others die with it. */
    ac__amap_node *drop = ac__amap_take(&rt->mon_by_watcher, &a->addr, 0);
    for (ac__amap_node *x = drop; x != NULL; x = x->next) {
        monitor *m = AC__CONTAINER_OF(x, monitor, by_watcher);
        ac__amap_remove(&rt->mon_by_target, &m->by_target);
        ac__amap_remove(&rt->mon_by_ref, &m->by_ref);
    }
    pthread_mutex_unlock(&rt->monitor_lock);

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
