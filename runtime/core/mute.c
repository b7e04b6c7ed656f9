/*
 * mute.c — back-pressure by muting, after Pony's: an actor whose turn used
 * up its batch with mail still queued is overloaded; an actor whose
 * handler sends to an overloaded one ends its turn after that handler and
 * is muted: it is not scheduled again (its mail still queues) until the
 * overloaded actor has a turn that does not use up its batch, or dies.
 * Design and the argument for it: runtime/README.md, "Back-pressure".
 *
 * The send path pays one relaxed load of the target's flags, on the line
 * the push touches anyway, and a branch; everything else happens here, at
 * the end of a turn, and only for actors that are or meet an overloaded
 * one.
 *
 * The registry maps an overloaded actor to the actors muted on it, chained
 * through their next_runnable link (a muted actor is in no run queue, so
 * the link is free). One mutex guards it and every clear of OVERLOADED:
 * a sender is registered only if, under the lock, its target is still
 * overloaded and alive, and a target clears the flag and takes its
 * mutees under the same lock, so a registration either comes before the
 * take (and is taken) or sees the flag clear (and is refused): no mutee
 * is left behind. Each is taken once, by one release, and scheduled
 * once; while muted it stays owned (its mailbox is not marked empty), so
 * no send schedules it meanwhile.
 *
 * No deadlock. Under the lock these hold: an actor with mutees is
 * overloaded (a registration needs the flag, and the clear takes them);
 * a muted actor is not overloaded (a turn cut short by a mute did not use
 * up its batch, so it released its own mutees and cleared its flag
 * before it registered; one that did use it up is overloaded and not
 * muted); an overloaded actor is runnable (its last turn ended with mail
 * left and it was requeued, or it is running). So a muted actor waits
 * for a runnable one, never for another muted one: no cycle of waits.
 * That one's senders are muted, so its queue shrinks, and it either
 * keeps up, and unmutes them, or dies, and unmutes them.
 */
#include "mute.h"

#include "sched.h"

#include <stdlib.h>
#include <string.h>

typedef struct ac__mute_group {
    ac__actor *target;
    ac__actor *first, *last;        /* muted on target, via next_runnable */
    struct ac__mute_group *next;    /* the bucket's chain, or the spares' */
} ac__mute_group;

static bool mute_disabled(void)
{
    const char *v = getenv("AC_MUTE");
    return v != NULL && strcmp(v, "0") == 0;
}

void ac__mute_init(ac_runtime *rt)
{
    pthread_mutex_init(&rt->mute_lock, NULL);
    memset(rt->mute_groups, 0, sizeof rt->mute_groups);
    rt->mute_spare = NULL;
    /* Seeded mode runs turns of one message (explore.c): "used up its
     * batch" would hold for any actor with two messages queued. */
    rt->mute_off = mute_disabled() || rt->seeded != NULL;
}

void ac__mute_fini(ac_runtime *rt)
{
    for (unsigned i = 0; i < AC__MUTE_BUCKETS; i++) {
        for (ac__mute_group *g = rt->mute_groups[i], *next; g != NULL; g = next) {
            next = g->next;
            free(g);
        }
    }
    for (ac__mute_group *g = rt->mute_spare, *next; g != NULL; g = next) {
        next = g->next;
        free(g);
    }
    pthread_mutex_destroy(&rt->mute_lock);
}

static unsigned bucket_of(const ac__actor *a)
{
    uintptr_t p = (uintptr_t)a;
    return (unsigned)((p >> 4) ^ (p >> 10)) % AC__MUTE_BUCKETS;
}

void ac__mute_note(ac_ctx *cx, ac__actor *to)
{
    ac__actor *s = cx->current;
    /* Outside any actor (main, a thread's inbox, a timer), a self-send,
     * a second overloaded target in one turn, or a runtime without
     * muting: the send just queues. */
    if (s == NULL || s == to || cx->mute_on != NULL || cx->rt->mute_off)
        return;
    /* An overloaded sender is muted too, unlike Pony's (here a producer
     * that sends itself `more` uses up its batch, so it looks overloaded
     * and would never be muted): its turn, cut short, does not use up its
     * batch, so it gives up its own overload, and its mutees, before it
     * is muted (ac__mute_turn_end). */
    if (ac__flags(s) & AC__ACTOR_DEAD)
        return;
    cx->mute_on = to;
    s->oflags |= AC__OWN_MUTING;  /* s is running here: its owner */
}

/* Registers s as muted on t, if t is still overloaded and alive. */
static bool mute(ac_ctx *cx, ac__actor *s, ac__actor *t)
{
    ac_runtime *rt = cx->rt;
    bool muted = false;
    pthread_mutex_lock(&rt->mute_lock);
    /* Relaxed: OVERLOADED is cleared only under this lock; DEAD is set
     * before ac__mute_died takes it. */
    if (ac__overloaded(t) && !(ac__flags(t) & AC__ACTOR_DEAD)) {
        ac__mute_group **link = &rt->mute_groups[bucket_of(t)];
        ac__mute_group *g = *link;
        while (g != NULL && g->target != t)
            g = g->next;
        if (g == NULL) {
            if ((g = rt->mute_spare) != NULL)
                rt->mute_spare = g->next;
            else
                g = malloc(sizeof *g);  /* out of memory: s is not muted */
            if (g != NULL) {
                g->target = t;
                g->first = g->last = NULL;
                g->next = *link;
                *link = g;
            }
        }
        if (g != NULL) {
            s->next_runnable = NULL;
            *(g->first ? &g->last->next_runnable : &g->first) = s;
            g->last = s;
            muted = true;
        }
    }
    pthread_mutex_unlock(&rt->mute_lock);
    if (muted)
        AC__COUNT(cx, muted, 1);
    return muted;
}

/* t is overloaded no more (or dead): clears the flag and schedules its
 * mutees, each once. */

static void release(ac_ctx *cx, ac__actor *t)
{
    ac_runtime *rt = cx->rt;
    ac__actor *m = NULL;
    pthread_mutex_lock(&rt->mute_lock);
    /* Relaxed: under the lock that registrations read it under. */
    atomic_fetch_and_explicit(&t->typew, ~(uintptr_t)AC__TYPEW_OVERLOADED,
                              memory_order_relaxed);
    for (ac__mute_group **link = &rt->mute_groups[bucket_of(t)]; *link != NULL;
         link = &(*link)->next) {
        ac__mute_group *g = *link;
        if (g->target == t) {
            m = g->first;
            *link = g->next;
            g->next = rt->mute_spare;
            rt->mute_spare = g;
            break;
        }
    }
    pthread_mutex_unlock(&rt->mute_lock);
    /* Ours now, each still owned and with mail (it was muted only with
     * mail left): scheduling hands it on. The link first: scheduling
     * reuses it. */
    for (ac__actor *next; m != NULL; m = next) {
        next = m->next_runnable;
        ac__schedule(cx, m);
    }
}

ac__turn ac__mute_turn_end(ac_ctx *cx, ac__actor *a, ac__turn end, unsigned n, unsigned batch)
{
    ac__actor *t = cx->mute_on;
    cx->mute_on = NULL;
    if (end == AC__TURN_FREED)
        return end;  /* a is gone; a dead actor notes nothing */
    unsigned f = ac__flags(a);
    bool overloaded = ac__overloaded(a);
    a->oflags &= (uint8_t)~AC__OWN_MUTING;
    /* Dead: die() called ac__mute_died in this actor's own turn (its
     * handler's stop or failure, or the kill's envelope), which cleared
     * OVERLOADED and released the mutees; only a live actor's turn end,
     * below, sets the flag, and mute() registers none on a dead one, so
     * nothing is left to release. (A turn that freed its actor returned
     * above: there the release in ac__mute_died is the only one.) */
    if (f & AC__ACTOR_DEAD)
        return end;
    if (n == batch && end == AC__TURN_MORE) {
        /* Relaxed: its senders read a hint; a registration re-reads it
         * under the lock. Never muted now (see the header). */
        if (!overloaded)
            atomic_fetch_or_explicit(&a->typew, (uintptr_t)AC__TYPEW_OVERLOADED,
                                     memory_order_relaxed);
        return end;
    }
    /* Keeping up: a turn that did not use up its batch. Also one that
     * stopped at a push under way (a node half linked): the scheduler may
     * release such an actor empty once the push is done, and an actor
     * released empty while overloaded would hold its mutees for ever
     * (nobody else schedules it). A turn cut short by a mute gives up its
     * overload whatever is queued (the header's invariant). */
    if (overloaded)
        release(cx, a);
    /* Muted only with mail left: one with none has nothing to hold back,
     * and its next message schedules it as usual. */
    if (t != NULL && end == AC__TURN_MORE && mute(cx, a, t))
        return AC__TURN_MUTED;
    return end;
}

void ac__mute_died(ac_ctx *cx, ac__actor *a)
{
    if (ac__overloaded(a))
        release(cx, a);
}
