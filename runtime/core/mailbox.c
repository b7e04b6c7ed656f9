/*
 * mailbox.c — an actor's mailbox: an intrusive multi-producer,
 * single-consumer queue (Vyukov), with the "empty" state kept as the low bit
 * of the head pointer, as in Pony's messageq.
 *
 * The bit is what makes scheduling exact: a producer learns from its one
 * atomic exchange whether the queue was marked empty, and if so it, and only
 * it, schedules the actor. The consumer sets the bit only with a CAS that
 * fails if a producer got in first, in which case the actor stays scheduled.
 *
 * The node a pop returns stays in the queue as its new stub until the next
 * pop, which frees it; so the envelope a handler reads is never freed under
 * it. The first stub is not even a word of its own: its link is the
 * actor's `tail` (ac__stub_of). The queue only ever touches a node's link,
 * and that link is written once, by the first push (the only one whose
 * exchange returns the stub), which so moves `tail` itself onto the first
 * node. Until the consumer's first pop, then, `tail` is the stub's link:
 * the stub itself while nothing is linked, the first node once it is. The
 * consumer tells that apart from a tail of its own (a node it popped) by
 * AC__OWN_POPPED, a flag of the owner's plain byte that only it sets, at
 * the first pop: before it, pop reads the link (acquire, pairing with the
 * push's release store of it) and mark-empty compares the head with the
 * stub, not with what `tail` holds. Nobody else writes `tail` at all, and
 * the consumer writes it only once the flag is set, after its acquire load
 * has seen that single store. A node the handler stashed (AC__ENV_STASHED)
 * is not freed when the queue moves past it: the stash holds it, and its
 * link is the queue's until then. Only an actor that has stashed
 * (AC__OWN_STASHES) pays that test: the turn of any other pops with
 * ac__mailbox_pop_at.
 *
 * The consumer's tail in a batch. `tail` sits on the line of `head`, which
 * every push exchanges (actor.h), so a pop that stored it would move that
 * line to the consumer and back at every message. A plain turn pops with
 * ac__mailbox_pop_at instead, which moves a tail the caller keeps (the
 * turn's context: actor.c, turn_loop) and writes nothing to the block;
 * the turn stores it back once, with ac__mailbox_set_tail, before it asks
 * has_next or marks the mailbox empty, and before any rarer path reads
 * `tail` from the block (a death's failed tag and its services' died
 * hooks, a finalize's free, the stash's loop, ac__env_release, a bounded
 * urgent message's has_next: actor.c, sync_tail). That changes no order:
 * `tail` is the consumer's alone (every access to it relaxed), and the
 * only store in it by another thread, the first push's, comes before the
 * first pop, which reads it with acquire (pop_first) and leaves it as it
 * is, so the first pop_at of an actor's life takes the same path. Nothing
 * else reads `tail` while the turn runs: other threads never do, and
 * mark-empty's CAS, which publishes the turn's writes to the next owner
 * (release), comes after the store back.
 *
 * Urgent mail (a message its actor type marks urgent) goes into a second
 * lane, a stack in front of the block (ac__urgent), so that the normal
 * lane's push and pop stay what they were. The sender pushes onto the
 * stack, then sets AC__ACTOR_URGENT in the actor's flags; the one whose
 * fetch_or turned the flag on also pushes a wake-up envelope through the
 * normal lane, which schedules the actor like any message. The owner
 * looks at the flag where it already tests its flags for every message
 * (actor.c: handle), and when it is set takes the whole stack, oldest
 * first, before the message it has in hand. So an urgent message sent
 * before a normal one (by one sender, or in any happens-before order) is
 * handled before it, and the wake-up, once it comes, finds nothing.
 */
#include "mailbox.h"

#include "pool.h"

#define EMPTY_BIT ((uintptr_t)1)

static inline ac__env *with_empty_bit(ac__env *e)
{
    return (ac__env *)((uintptr_t)e | EMPTY_BIT);
}

/* `owned`: the caller holds the actor as if it were running it (the
 * spawner, during the start hook), so pushes must not schedule it; the
 * caller releases it with mark_empty, scheduling it if that fails. */
void ac__mailbox_init(ac__actor *a, bool owned)
{
    ac__env *stub = ac__stub_of(a);
    /* The stub's link is `tail`: it points at the stub until a push links
     * the first node there. */
    atomic_init(&a->tail, stub);  /* AC__OWN_POPPED is clear: a new block */
    atomic_init(&a->head, owned ? stub : with_empty_bit(stub));
}

void ac__mailbox_init_stub(ac__actor *a, ac__env *stub)
{
    atomic_init(&stub->next, NULL);
    atomic_init(&a->tail, stub);
    /* tail is a node of the queue, never its own link */
    a->oflags |= AC__OWN_POPPED;
    atomic_init(&a->head, with_empty_bit(stub));
}

/* The first pop: `tail` is the stub's link. Out of line, once an actor. */
#if defined(__GNUC__)
__attribute__((noinline, cold))
#endif
static ac__env *pop_first(ac__actor *a)
{
    /* Acquire: pairs with the first push's release store of the stub's
     * link, which is `tail`; it stays our tail (the first node, popped). */
    ac__env *next = atomic_load_explicit(&a->tail, memory_order_acquire);
    if (next == ac__stub_of(a))
        return NULL;  /* empty, or the first producer is between its steps */
    a->oflags |= AC__OWN_POPPED;  /* the consumer's own: a plain or */
    return next;
}

bool ac__mailbox_push(ac__actor *a, ac__env *e)
{
    /* Relaxed: e is published to the consumer by the release store of
     * prev->next below. */
    atomic_store_explicit(&e->next, NULL, memory_order_relaxed);
    /* acq_rel: acquire pairs with the consumer's release CAS in
     * mark_empty, so whoever this push makes schedule the actor sees the
     * writes of its previous turn; release orders our payload writes. */
    ac__env *prev = atomic_exchange_explicit(&a->head, e, memory_order_acq_rel);
    bool was_empty = ((uintptr_t)prev & EMPTY_BIT) != 0;
    prev = (ac__env *)((uintptr_t)prev & ~EMPTY_BIT);
    /* Release: the consumer's acquire load of prev->next sees e whole. */
    atomic_store_explicit(&prev->next, e, memory_order_release);
    return was_empty;
}

/* The pop of an actor that has stashed (the plain turn pops with
 * ac__mailbox_pop_at): it may have stashed the node the pop moves past. */
ac__env *ac__mailbox_pop(ac_ctx *cx, ac__actor *a)
{
    if (__builtin_expect(!(a->oflags & AC__OWN_POPPED), 0))
        return pop_first(a);
    /* Relaxed: the consumer's own (see the top of the file). */
    ac__env *tail = atomic_load_explicit(&a->tail, memory_order_relaxed);
    /* Acquire: pairs with the producer's release store of prev->next. */
    ac__env *next = atomic_load_explicit(&tail->next, memory_order_acquire);
    if (next == NULL)
        return NULL;  /* empty, or a producer is between its two steps */
    atomic_store_explicit(&a->tail, next, memory_order_relaxed);
    /* Past the stub, tail is a whole envelope. A stashed envelope is the
     * stash's now (stash.c). */
    if (!(tail->flags & AC__ENV_STASHED))
        ac__pool_free(cx, tail);
    return next;
}

ac__env *ac__mailbox_pop_at(ac_ctx *cx, ac__actor *a, ac__env **at)
{
    ac__env *tail = *at;
    if (__builtin_expect(tail == NULL, 0)) {
        /* Before the first pop: a->tail is the stub's link, and stays
         * the first node (our tail) once it is taken. */
        ac__env *first = pop_first(a);
        if (first != NULL)
            *at = first;
        return first;
    }
    /* Acquire: pairs with the producer's release store of prev->next. */
    ac__env *next = atomic_load_explicit(&tail->next, memory_order_acquire);
    if (next == NULL)
        return NULL;  /* empty, or a producer is between its two steps */
    *at = next;
    ac__pool_free(cx, tail);  /* a plain pop: nothing here was stashed */
    return next;
}

ac__env *ac__mailbox_tail(ac__actor *a)
{
    /* Relaxed: the consumer's own. */
    return (a->oflags & AC__OWN_POPPED) ? atomic_load_explicit(&a->tail, memory_order_relaxed)
                                        : NULL;
}

void ac__mailbox_set_tail(ac__actor *a, ac__env *tail)
{
    /* Relaxed: the consumer's own; NULL: no first pop yet, and a->tail is
     * still the stub's link, which only the first push writes. */
    if (tail != NULL)
        atomic_store_explicit(&a->tail, tail, memory_order_relaxed);
}

bool ac__mailbox_has_next(ac__actor *a)
{
    /* Acquire, both: as in pop. */
    if (!(a->oflags & AC__OWN_POPPED))
        return atomic_load_explicit(&a->tail, memory_order_acquire) != ac__stub_of(a);
    ac__env *tail = atomic_load_explicit(&a->tail, memory_order_relaxed);
    return atomic_load_explicit(&tail->next, memory_order_acquire) != NULL;
}

bool ac__mailbox_released_empty(ac__actor *a)
{
    /* Acquire: pairs with mark_empty's release CAS, so the owner's last
     * turn (what it left in tail, the stash's gifts) happens before the
     * caller frees the actor. Once the bit is set no push can clear it
     * any more (the caller's grace period is over), so the tail is
     * nobody's and stays as it is. */
    ac__env *head = atomic_load_explicit(&a->head, memory_order_acquire);
    return ((uintptr_t)head & EMPTY_BIT) != 0;
}

bool ac__mailbox_mark_empty(ac__actor *a)
{
    /* Relaxed: the consumer's own. */
    ac__env *tail = atomic_load_explicit(&a->tail, memory_order_relaxed);
    /* Relaxed: only a hint; the CAS below decides. */
    ac__env *head = atomic_load_explicit(&a->head, memory_order_relaxed);
    /* Before the first pop the last node taken is the stub: `tail` is its
     * link, and a node linked there is still to be taken. Tested only when
     * the head matches, which is what it would wrongly confirm. */
    if (head != tail || (__builtin_expect(!(a->oflags & AC__OWN_POPPED), 0) && tail != ac__stub_of(a)))
        return false;  /* a producer has exchanged in a newer node */
    /* Release on success: the next turn, on whichever worker a producer
     * schedules it, sees this turn's writes (see push). Acquire on failure:
     * we go on to consume what the winning producer pushed. */
    return atomic_compare_exchange_strong_explicit(
        &a->head, &head, with_empty_bit(tail), memory_order_acq_rel,
        memory_order_acquire);
}

bool ac__mailbox_push_urgent(ac__actor *a, ac__env *e)
{
    ac__urgent *u = ac__urgent_of(a);
    /* Relaxed: the CAS below reads the current top again before it
     * links; a stale value only costs a retry. No ABA: the owner never
     * pops one node, it takes them all, so whenever top equals `top`
     * again, e->next == top is still the right link. */
    ac__env *top = atomic_load_explicit(&u->top, memory_order_relaxed);
    do {
        atomic_store_explicit(&e->next, top, memory_order_relaxed);
        /* Release: the owner's acquire exchange in take_urgent sees e
         * and its payload (and, through the release sequence of these
         * CASes, every node below it). */
    } while (!atomic_compare_exchange_weak_explicit(&u->top, &top, e, memory_order_release,
                                                   memory_order_relaxed));
    /* acq_rel: release, so that an owner whose flag read (or clear) sees
     * this set also sees the push above; acquire, so that if the owner's
     * clear came first we read it and send the wake-up. Either the
     * owner's take after its clear finds e, or the flag is still set
     * when it looks again (take_urgent's comment). */
    unsigned old = atomic_fetch_or_explicit(&a->flags, (uint8_t)AC__ACTOR_URGENT,
                                            memory_order_acq_rel);
    return !(old & AC__ACTOR_URGENT);
}

ac__env *ac__mailbox_take_urgent(ac__actor *a)
{
    ac__urgent *u = ac__urgent_of(a);
    /* acq_rel: a sender pushes and then sets the flag; we clear it and
     * then take. If our clear comes after a set in the flag's order, it
     * synchronises with it and the exchange below sees that push; if it
     * comes before, the set leaves the flag on (and its sender pushed a
     * wake-up), so the message is taken at the next look. */
    atomic_fetch_and_explicit(&a->flags, (uint8_t)~AC__ACTOR_URGENT, memory_order_acq_rel);
    /* Acquire: pairs with the pushes' release CASes. */
    ac__env *top = atomic_exchange_explicit(&u->top, NULL, memory_order_acquire);
    ac__env *fifo = NULL;
    while (top != NULL) {
        /* Relaxed: made visible by the exchange's acquire. */
        ac__env *below = atomic_load_explicit(&top->next, memory_order_relaxed);
        atomic_store_explicit(&top->next, fifo, memory_order_relaxed);
        fifo = top;
        top = below;
    }
    return fifo;
}
