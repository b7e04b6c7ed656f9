/*
 * inbox.c — addresses for threads that are not actors.
 *
 * An inbox is an actor block (so the routing table, monitors and sends
 * treat it like any actor) that is never scheduled: a push that finds its
 * mailbox marked empty wakes the receiving thread through a futex instead.
 * The receiver consumes with the intrusive form of Vyukov's queue, in which
 * a popped node leaves the queue at once (the stub is pushed back when the
 * last node goes), so the envelope it returns is the caller's to keep —
 * which is also what lets a selective receive set messages aside.
 *
 * Sleeping without a lost wake-up: the receiver reads the futex word, then
 * marks the mailbox empty with a CAS that fails if a producer got in; a
 * producer whose exchange finds the mark bumps the word and wakes. Either
 * the receiver's CAS fails, or the producer's exchange comes after it and
 * changes the word the receiver waits on.
 */
#include "inbox.h"

#include "mailbox.h"
#include "pool.h"
#include "qsbr.h"
#include "route.h"
#include "runtime.h"
#include "sched.h"
#include "service.h"

#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define EMPTY_BIT ((uintptr_t)1)

typedef struct inbox_state {
    /* The queue's stub, pushed back whenever the last node leaves (take):
     * a whole link of its own, since `tail` can be an actor's first stub
     * only while it is never pushed again (mailbox.c). */
    _Atomic(ac__env *) stub;
    _Atomic uint32_t seq;    /* futex word: bumped by each waking push */
    bool armed;              /* the receiver has marked the mailbox empty */
    ac__env *saved, *saved_tail;  /* set aside by selective receives */
    const ac_ctx *owner;     /* the context (thread) that made it */
} inbox_state;

static int inbox_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    (void)state;
    (void)cx;
    (void)e;
    return AC_EBADTAG;  /* never scheduled: nothing dispatches to it */
}

static const ac_actor_type inbox_type = {
    .abi = AC_ABI_VERSION,
    .name = "actorc.Inbox",
    .state_size = sizeof(inbox_state),
    .state_align = _Alignof(inbox_state),
    .dispatch = inbox_dispatch,
    .mailbox_overflow = AC_OVERFLOW_REJECT,
};

static inline ac__actor *actor_of(ac_inbox *ib) { return (ac__actor *)(void *)ib; }
static inline inbox_state *state_of(ac__actor *a) { return (inbox_state *)(void *)a->state; }

static ac__env *inbox_stub(ac__actor *a)
{
    return (ac__env *)(void *)&state_of(a)->stub;
}

/* Frees the inbox's block: the node its tail may still hold first, then
 * the tail put back on the actor's own stub, which is what ac__actor_free
 * takes for "nothing left". */
static void inbox_free(ac_ctx *cx, ac__actor *a)
{
    /* Relaxed: no producer is left (never published, or past the grace
     * period of ac_inbox_destroy). */
    ac__env *tail = atomic_load_explicit(&a->tail, memory_order_relaxed);
    if (tail != inbox_stub(a))
        ac__pool_free(cx, tail);
    atomic_store_explicit(&a->tail, ac__stub_of(a), memory_order_relaxed);
    ac__actor_free(cx, a);
}

int ac_inbox_create(ac_ctx *cx, ac_inbox **out)
{
    if (cx == NULL || out == NULL)
        return AC_EINVAL;
    *out = NULL;
    /* As a spawn: shutdown's stop walk has passed or is passing, and an
     * inbox made now would be one it never stops. Relaxed for the same
     * reason as there (actor.c). */
    if (atomic_load_explicit(&cx->rt->stopping, memory_order_relaxed))
        return AC_ESHUTDOWN;
    ac__actor *a = ac__actor_new(cx, &inbox_type, AC__ATTR_INBOX);
    if (a == NULL)
        return AC_ENOMEM;
    atomic_init(&state_of(a)->seq, 0);
    /* Marked empty from the start: the first push wakes the receiver. */
    ac__mailbox_init_stub(a, inbox_stub(a));
    state_of(a)->armed = true;
    state_of(a)->owner = cx;
    ac__addr_next(&cx->addrs, &a->addr);
    ac__enter(cx);
    int rc = ac__route_insert(&cx->rt->route, a);
    ac__leave(cx);
    if (rc != 0) {
        inbox_free(cx, a);
        return rc;
    }
    *out = (ac_inbox *)(void *)a;
    return 0;
}

const ac_addr *ac_inbox_addr(const ac_inbox *ib)
{
    return ib ? &((const ac__actor *)(const void *)ib)->addr : NULL;
}

const ac_ctx *ac__inbox_owner(ac__actor *a)
{
    return state_of(a)->owner;
}

void ac__inbox_wake(ac_ctx *cx, ac__actor *a)
{
    (void)cx;
    inbox_state *s = state_of(a);
    /* Release: the receiver that sees the new value sees our push. */
    atomic_fetch_add_explicit(&s->seq, 1, memory_order_release);
    syscall(SYS_futex, (uint32_t *)&s->seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Takes the oldest message out of the queue, or NULL when it is empty or a
 * producer is between its exchange and its link (the caller retries). */
static ac__env *take(ac__actor *a)
{
    ac__env *stub = inbox_stub(a);
    /* Relaxed, every access to tail here: the receiver's own. */
    ac__env *tail = atomic_load_explicit(&a->tail, memory_order_relaxed);
    /* Acquire: pairs with the producer's release store of the link. */
    ac__env *next = atomic_load_explicit(&tail->next, memory_order_acquire);
    if (tail == stub) {
        if (next == NULL)
            return NULL;
        atomic_store_explicit(&a->tail, next, memory_order_relaxed);
        tail = next;
        next = atomic_load_explicit(&next->next, memory_order_acquire);
    }
    if (next != NULL) {
        atomic_store_explicit(&a->tail, next, memory_order_relaxed);
        return tail;
    }
    /* tail is the last node: put the stub behind it so it can leave. */
    ac__env *head = atomic_load_explicit(&a->head, memory_order_acquire);
    if ((ac__env *)((uintptr_t)head & ~EMPTY_BIT) != tail)
        return NULL;  /* a producer is mid-push */
    (void)ac__mailbox_push(a, stub);  /* never marked here: tail is queued */
    next = atomic_load_explicit(&tail->next, memory_order_acquire);
    if (next != NULL) {
        atomic_store_explicit(&a->tail, next, memory_order_relaxed);
        return tail;
    }
    return NULL;
}

/* Marks the mailbox empty, if it is: true means a push will wake us. */
static bool arm(ac__actor *a)
{
    inbox_state *s = state_of(a);
    if (s->armed)
        return true;
    /* The queue is empty only as the stub alone (take never leaves a node
     * behind once head reaches it): then a->tail is the stub and head is
     * too, unless a producer has exchanged in a node since, which makes
     * the CAS fail. */
    s->armed = ac__mailbox_mark_empty(a);
    return s->armed;
}

static void set_aside(inbox_state *s, ac__env *e)
{
    atomic_store_explicit(&e->next, NULL, memory_order_relaxed);
    if (s->saved_tail)
        atomic_store_explicit(&s->saved_tail->next, e, memory_order_relaxed);
    else
        s->saved = e;
    s->saved_tail = e;
}

/* The first message set aside earlier that matches `tag`, unlinked. */
static ac__env *from_saved(inbox_state *s, uint32_t tag)
{
    ac__env *prev = NULL;
    for (ac__env *e = s->saved; e != NULL;
         prev = e, e = atomic_load_explicit(&e->next, memory_order_relaxed)) {
        if (tag != AC_ANY_TAG && e->tag != tag)
            continue;
        ac__env *next = atomic_load_explicit(&e->next, memory_order_relaxed);
        if (prev)
            atomic_store_explicit(&prev->next, next, memory_order_relaxed);
        else
            s->saved = next;
        if (s->saved_tail == e)
            s->saved_tail = prev;
        return e;
    }
    return NULL;
}

/* Drains the queue into the saved list until a match: the match, or NULL
 * when nothing (more) is queued. */
static ac__env *take_match(ac_ctx *cx, ac__actor *a, uint32_t tag)
{
    inbox_state *s = state_of(a);
    for (;;) {
        ac__env *e = take(a);
        if (e == NULL) {
            /* A producer between its two steps finishes within a few
             * instructions: wait for it rather than sleep past it. */
            ac__env *head = atomic_load_explicit(&a->head, memory_order_acquire);
            /* Relaxed: the receiver's own tail. */
            if (!s->armed && (ac__env *)((uintptr_t)head & ~EMPTY_BIT) !=
                                 atomic_load_explicit(&a->tail, memory_order_relaxed)) {
                sched_yield();
                continue;
            }
            return NULL;
        }
        s->armed = false;  /* a push came, so the mark is gone */
        if (e->tag >= AC__TAG_STOP) {
            ac__pool_free(cx, e);  /* shutdown's stop, a kill: not for us */
            continue;
        }
        if (tag == AC_ANY_TAG || e->tag == tag)
            return e;
        set_aside(s, e);
    }
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_on(inbox_state *s, uint32_t seen, int64_t left_ms)
{
    struct timespec ts, *tp = NULL;
    if (left_ms >= 0) {
        ts.tv_sec = left_ms / 1000;
        ts.tv_nsec = (left_ms % 1000) * 1000000;
        tp = &ts;
    }
    syscall(SYS_futex, (uint32_t *)&s->seq, FUTEX_WAIT_PRIVATE, seen, tp, NULL, 0);
}

int ac__inbox_take(ac_ctx *cx, ac_inbox *ib, uint32_t tag, int timeout_ms,
                   ac_envelope **out)
{
    if (cx == NULL || ib == NULL || out == NULL)
        return AC_EINVAL;
    *out = NULL;
    if (cx->current != NULL)
        return AC_ESTATE;
    ac__actor *a = actor_of(ib);
    inbox_state *s = state_of(a);
    bool deterministic = cx->rt->nworkers == 0;
    int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
    ac__env *e;
again:
    e = from_saved(s, tag);
    while (e == NULL && (e = take_match(cx, a, tag)) == NULL) {
        if (deterministic) {
            if (ac__run_here(cx->rt, false) == 0 && (e = take_match(cx, a, tag)) == NULL)
                return AC_ETIMEDOUT;
            continue;
        }
        /* Acquire: pairs with the waking producer's release increment. */
        uint32_t seen = atomic_load_explicit(&s->seq, memory_order_acquire);
        if (!arm(a))
            continue;  /* a message arrived meanwhile */
        int64_t left = deadline < 0 ? -1 : deadline - now_ms();
        if (deadline >= 0 && left <= 0)
            return AC_ETIMEDOUT;
        sleep_on(s, seen, left);
    }
    /* Screened as it reaches the caller, not as it was queued or set
     * aside: the thread may have taken its monitor back in between. */
    if ((e->flags & AC__ENV_SCREEN) && ac__services_screen(cx, a, e) != AC__SCREEN_PASS) {
        AC__COUNT(cx, system_messages, 1);
        AC__COUNT(cx, unhandled, 1);  /* withdrawn: it reaches no one */
        ac__pool_free(cx, e);
        goto again;
    }
    *out = ac__env_pub(e);
    return 0;
}

int ac_inbox_recv(ac_ctx *cx, ac_inbox *ib, uint32_t tag, int timeout_ms,
                  ac_envelope **out)
{
    int rc = ac__inbox_take(cx, ib, tag, timeout_ms, out);
    if (rc == 0)
        ac__count_taken(cx, ac__env_of(*out));
    return rc;
}

void ac_inbox_destroy(ac_ctx *cx, ac_inbox *ib)
{
    if (cx == NULL || ib == NULL)
        return;
    ac__actor *a = actor_of(ib);
    inbox_state *s = state_of(a);
    /* seq_cst: the services' Dekker pair (service.c), as in die(). */
    atomic_fetch_or_explicit(&a->flags, (uint8_t)AC__ACTOR_DEAD, memory_order_seq_cst);
    a->oflags |= AC__OWN_DEAD;
    ac__enter(cx);
    ac__route_remove(&cx->rt->route, a);
    if (atomic_load_explicit(&cx->rt->services_used, memory_order_seq_cst)) {
        ac__death d = {AC_REASON_NORMAL, 0, AC__NO_TAG};
        ac__services_died(cx, a, &d);
    }
    ac__leave(cx);
    /* Senders that found it before the removal finish their pushes. */
    ac__qsbr_synchronize(cx);
    for (ac__env *e; (e = from_saved(s, AC_ANY_TAG)) != NULL || (e = take(a)) != NULL;) {
        if (e->tag < AC_TAG_SYSTEM || (e->flags & AC__ENV_COUNTED))
            ac__dead_letter(cx, &a->addr, e, AC_ENOTFOUND);  /* sent, so counted */
        ac__pool_free(cx, e);
    }
    inbox_free(cx, a);
}
