/*
 * qsbr.c — quiescent-state-based reclamation of dead actors.
 *
 * A sender may hold a pointer to an actor found in the routing table while
 * that actor dies. So a dead actor is unlinked from the table first, then
 * "retired" with a target: the grace-period counter after an increment. It
 * may be finalized once every participant has either gone offline or
 * announced a quiescent state at or past the target, because a participant
 * only announces between actor turns, never inside a lookup-and-push.
 *
 * Participants are the worker contexts (online while they run, quiescent
 * between turns, offline while parked) and the contexts of other threads
 * (online only for the duration of one runtime call).
 *
 * Finalizing means pushing the actor's "finalize" envelope into its own
 * mailbox: after the grace period no other push can follow it, so when the
 * actor's owner pops it, nothing else references the actor (or, when the
 * mailbox was released empty, freeing it at once: ac__actor_finalize_now,
 * since nobody owns it and no push can come to make anyone). That envelope,
 * allocated at death, also carries the retirement record (which actor, and
 * its target) and links the retire lists, so live actors pay nothing for
 * any of this.
 */
#include "qsbr.h"

#include "mailbox.h"
#include "pool.h"
#include "route.h"
#include "runtime.h"
#include "sched.h"

#include <sched.h>

void ac__qsbr_online(ac_ctx *cx)
{
    uint64_t g = atomic_load_explicit(&cx->rt->gp, memory_order_acquire);
    /* Store-load barrier: our announcement must be visible before we read
     * the routing table; pairs with the one in oldest_reader(). */
    ac__announce_u64(&cx->qs_seen, g);
}

void ac__qsbr_offline(ac_ctx *cx)
{
    /* Release: everything we read in the table happens before a reclaimer
     * that sees us offline frees it. */
    atomic_store_explicit(&cx->qs_seen, 0, memory_order_release);
}

void ac__qsbr_quiescent(ac_ctx *cx)
{
    /* Acquire on gp: pairs with the retirer's acq_rel increment, so our
     * next turn's lookups see the removal that preceded it. Release on the
     * store: our past turns happen before the reclaimer's acquire load. */
    uint64_t g = atomic_load_explicit(&cx->rt->gp, memory_order_acquire);
    atomic_store_explicit(&cx->qs_seen, g, memory_order_release);
}

typedef struct retiree {
    ac__actor *actor;
    uint64_t after;  /* the grace-period target */
} retiree;

static inline retiree *retiree_of(ac__env *e)
{
    return (retiree *)ac_envelope_payload(ac__env_pub(e));
}

/* Retire lists link finalize envelopes through their mailbox link, unused
 * until the push: relaxed, since only the list's owner touches them. */
static inline ac__env *next_of(ac__env *e)
{
    return atomic_load_explicit(&e->next, memory_order_relaxed);
}

static inline void set_next(ac__env *e, ac__env *next)
{
    atomic_store_explicit(&e->next, next, memory_order_relaxed);
}

bool ac__qsbr_retire(ac_ctx *cx, ac__actor *a)
{
    ac__env *e = ac__pool_alloc(cx, sizeof(retiree));
    if (e == NULL)
        return false;
    e->tag = AC__TAG_FINALIZE;
    e->flags = 0;
    retiree_of(e)->actor = a;
    /* No target yet: stamp() draws one for every death since the last,
     * when the list is next reaped or handed over. An increment here, at
     * every death, was a locked RMW on the line that every worker loads
     * after every turn (ac__qsbr_quiescent): in skynet 6 with 2 workers,
     * 71 % of die's samples and the line bouncing between the cores at
     * each of 1.1 million deaths (bench/README.md, "Reclamation"). */
    retiree_of(e)->after = 0;
    set_next(e, NULL);
    if (cx->retired_tail)
        set_next(cx->retired_tail, e);
    else
        cx->retired = e;
    cx->retired_tail = e;
    if (cx->unstamped == NULL)
        cx->unstamped = e;
    return true;
}

/* Gives every retiree not yet stamped one target, the counter after one
 * increment. Each of them was unlinked from the routing table before it
 * was retired, in this thread's program order, so before this increment:
 * acq_rel, so that a reader whose quiescent announcement reads the new
 * value (or a later one: RMWs continue the release sequence) sees those
 * removals, exactly as one increment per death did. The list stays in
 * target order: the unstamped ones are its tail. */
static void stamp(ac_ctx *cx)
{
    if (cx->unstamped == NULL)
        return;
    uint64_t target = atomic_fetch_add_explicit(&cx->rt->gp, 1, memory_order_acq_rel) + 1;
    for (ac__env *e = cx->unstamped; e != NULL; e = next_of(e))
        retiree_of(e)->after = target;
    cx->unstamped = NULL;
}

/* The smallest grace-period value announced by an online participant other
 * than `self`, or UINT64_MAX if none is online. */
static uint64_t oldest_reader(ac_runtime *rt, const ac_ctx *self)
{
    ac__barrier();
    uint64_t oldest = UINT64_MAX;
    for (unsigned i = 0; i < rt->nslots; i++) {
        ac_ctx *p = &rt->workers[i].cx;
        if (p == self)
            continue;
        uint64_t s = ac__observe_u64(&p->qs_seen);
        if (s != 0 && s < oldest)
            oldest = s;
    }
    pthread_mutex_lock(&rt->ext_lock);
    for (ac_ctx *p = rt->externals; p; p = p->next_external) {
        if (p == self)
            continue;
        uint64_t s = ac__observe_u64(&p->qs_seen);
        if (s != 0 && s < oldest)
            oldest = s;
    }
    pthread_mutex_unlock(&rt->ext_lock);
    return oldest;
}

void ac__qsbr_synchronize(ac_ctx *cx)
{
    /* acq_rel: as in ac__qsbr_retire; our removals precede the new value. */
    uint64_t target = atomic_fetch_add_explicit(&cx->rt->gp, 1, memory_order_acq_rel) + 1;
    while (oldest_reader(cx->rt, cx) < target)
        sched_yield();  /* readers leave at their next quiescent state */
}

bool ac__qsbr_all_offline_externals(ac_runtime *rt)
{
    bool all = true;
    ac__barrier();
    pthread_mutex_lock(&rt->ext_lock);
    for (ac_ctx *p = rt->externals; p; p = p->next_external)
        if (ac__observe_u64(&p->qs_seen) != 0)
            all = false;
    pthread_mutex_unlock(&rt->ext_lock);
    return all;
}

static void finalize(ac_ctx *cx, ac__env *e)
{
    ac__actor *a = retiree_of(e)->actor;
    if (ac__actor_finalize_now(cx, a, e))
        return;  /* released empty: nothing for a last turn to do */
    if (ac__mailbox_push(a, e))
        ac__schedule(cx, a);
}

/* Finalizes the actors of *list whose grace period is over; keeps the rest,
 * *tail the last of them. Returns whether any was finalized. The orphan
 * list mixes the retire lists of several contexts, so it is scanned whole. */
static bool reap(ac_ctx *cx, ac__env **list, ac__env **tail)
{
    uint64_t oldest = oldest_reader(cx->rt, cx);
    bool any = false;
    ac__env *kept = NULL, *kept_tail = NULL;
    for (ac__env *e = *list, *next; e != NULL; e = next) {
        next = next_of(e);
        if (retiree_of(e)->after <= oldest) {
            finalize(cx, e);
            any = true;
            continue;
        }
        set_next(e, NULL);
        if (kept_tail)
            set_next(kept_tail, e);
        else
            kept = e;
        kept_tail = e;
    }
    *list = kept;
    *tail = kept_tail;
    return any;
}

/* Finalizes the due prefix of the context's own list (ac_ctx.retired). */
static void reap_own(ac_ctx *cx)
{
    if (cx->retired == NULL)
        return;
    stamp(cx);
    uint64_t oldest = oldest_reader(cx->rt, cx);
    while (cx->retired && retiree_of(cx->retired)->after <= oldest) {
        ac__env *e = cx->retired;
        cx->retired = next_of(e);
        finalize(cx, e);
    }
    if (cx->retired == NULL)
        cx->retired_tail = NULL;
}

void ac__qsbr_reclaim_tables(ac_ctx *cx)
{
    /* Relaxed: a hint; route.c rechecks under its locks. */
    if (atomic_load_explicit(&cx->rt->route.has_outgrown, memory_order_relaxed))
        ac__route_reclaim(&cx->rt->route, oldest_reader(cx->rt, cx));
}

void ac__qsbr_poll(ac_ctx *cx)
{
    reap_own(cx);
    ac__qsbr_reclaim_tables(cx);
    /* Relaxed: a hint; the list itself is read under its lock. */
    if (atomic_load_explicit(&cx->rt->has_orphans, memory_order_relaxed))
        ac__qsbr_finalize_orphans(cx);
}

/* Prepends the list first..last to the orphans. */
static void add_orphans(ac_runtime *rt, ac__env *first, ac__env *last)
{
    pthread_mutex_lock(&rt->orphan_lock);
    set_next(last, rt->orphans);
    rt->orphans = first;
    atomic_store_explicit(&rt->has_orphans, true, memory_order_relaxed);
    pthread_mutex_unlock(&rt->orphan_lock);
}

bool ac__qsbr_finalize_orphans(ac_ctx *cx)
{
    ac_runtime *rt = cx->rt;
    pthread_mutex_lock(&rt->orphan_lock);
    ac__env *list = rt->orphans;
    rt->orphans = NULL;
    atomic_store_explicit(&rt->has_orphans, false, memory_order_relaxed);
    pthread_mutex_unlock(&rt->orphan_lock);
    if (list == NULL)
        return false;
    ac__env *last;
    bool any = reap(cx, &list, &last);
    if (list)
        add_orphans(rt, list, last);  /* not yet past their grace period */
    return any;
}

void ac__qsbr_orphan(ac_ctx *cx)
{
    if (cx->retired == NULL)
        return;
    stamp(cx);  /* the orphans' reapers compare targets only */
    add_orphans(cx->rt, cx->retired, cx->retired_tail);
    cx->retired = cx->retired_tail = NULL;
}
