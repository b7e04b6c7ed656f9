/*
 * actor.h — an actor's control block and what happens to it: spawning,
 * delivery, one turn, death.
 *
 * Ownership in one paragraph: an actor is owned by whoever runs it. It is
 * runnable exactly when its mailbox is marked non-empty, and the sender whose
 * push made the mailbox non-empty is the one that schedules it (mailbox.c).
 * Senders reach actors through the routing table without locks; an actor
 * that dies is unlinked from the table and freed only after a grace period
 * (qsbr.c), by a last "finalize" envelope pushed through its own mailbox, so
 * the scheduler's single-owner rule also covers its destruction.
 */
#ifndef AC_CORE_ACTOR_H
#define AC_CORE_ACTOR_H

#include "envelope.h"

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Flags other threads read or write, hence atomic: KILLED (ac_kill),
 * URGENT (an urgent sender), DEAD (read by services, routers, the mute
 * registry), TRAP_EXITS (read by a linked actor's death). The owner reads
 * them for every message (handle_one); a send reads none of them. */
enum {
    AC__ACTOR_DEAD = 1u << 0,           /* stopped or failed; draining */
    AC__ACTOR_KILLED = 1u << 1,         /* ac_kill: die before the next message */
    AC__ACTOR_TRAP_EXITS = 1u << 2,     /* linked deaths arrive as messages */
    /* Urgent mail waits in the actor's second lane (mailbox.c): set by
     * the sender that pushed it, cleared by the owner as it takes them. */
    AC__ACTOR_URGENT = 1u << 3
};

/* What every send reads besides `head` and `addr`, in the low bits of the
 * word that holds the actor's type (ac__actor.typew), on head's line:
 * MARKED, fixed at the spawn, says the actor is bounded or has urgent
 * messages (send_marked's attributes); OVERLOADED (back-pressure, mute.c):
 * its last turn used up its batch with mail still queued, set and cleared
 * by its owner only (cleared under the mute lock), read by senders. */
enum {
    AC__TYPEW_OVERLOADED = 1u << 0,
    AC__TYPEW_MARKED = 1u << 1,
    AC__TYPEW_BITS = 3u
};

/* Flags only the actor's owner (whoever runs it, or its spawner during
 * its start hook) reads and writes: a plain byte, ordered between owners
 * by the mailbox's hand-over (mailbox.c), so setting one is a plain or,
 * not a locked RMW. */
enum {
    AC__OWN_STOP_REQUESTED = 1u << 0,   /* ac_stop_self in this handler */
    AC__OWN_FAIL_REQUESTED = 1u << 1,   /* ac_fail in this handler */
    AC__OWN_REPLAY = 1u << 2,           /* the stash holds messages that go
                                           before the mailbox (ac_unstash_all) */
    /* It has a stash (ac_stash, ac_stash_capacity), for the rest of its
     * life: only its turns pay for the stash (actor.c: turn), and only its
     * death looks one up (stash.c); the others take the plain path, whose
     * pop frees every node it moves past. */
    AC__OWN_STASHES = 1u << 3,
    /* A handler of this turn sent to an overloaded actor (ac_ctx.mute_on
     * says which): the turn ends after that handler and the actor may be
     * muted (mute.c). */
    AC__OWN_MUTING = 1u << 4,
    /* Set by the pop that moves past the initial stub (mailbox.c), so
     * that it and mark-empty tell the stub's link apart from a tail the
     * consumer wrote. */
    AC__OWN_POPPED = 1u << 5,
    /* The owner's copy of AC__ACTOR_DEAD, set with it (die), so that the
     * test after every handler reads this byte alone. */
    AC__OWN_DEAD = 1u << 6,
    /* It has asked (ac_ask): the ask service keeps a book of its pending
     * asks (ask.c), which its death looks up; set once. */
    AC__OWN_ASKS = 1u << 7
};

/* Attributes are fixed before the actor is published and never change. */
enum {
    AC__ATTR_BOUNDED = 1u << 0,         /* an ac__bound precedes the block */
    AC__ATTR_INBOX = 1u << 1,           /* a thread's inbox (inbox.c) */
    AC__ATTR_SUPERVISED = 1u << 2,      /* a supervisor's child: shutdown's stop
                                           walk leaves it to its supervisor */
    AC__ATTR_URGENT = 1u << 3           /* its type has urgent messages: an
                                           ac__urgent precedes the block */
};

/* Attributes that send a send down send_marked (actor.c). */
#define AC__ATTR_MARKED (AC__ATTR_BOUNDED | AC__ATTR_URGENT)

/* An actor's control block, followed by its state in the same block. Every
 * byte counts (an idle actor with 8 bytes of state costs at most 96 bytes
 * with its table slot: a 72-byte control block and its state in an 80-byte
 * pool block, and the slot at the table's load; runtime/README.md, "The
 * control block"): what only a dead actor needs lives in its finalize
 * envelope (qsbr.c), what only some actors need sits in front of the block
 * (ac__bound) or in the services' own tables, and the mailbox's initial
 * stub has no word of its own: its link is `tail` itself (mailbox.c).
 *
 * The order is the cache lines': a block is 16-byte aligned, so it spans
 * two lines, and only offsets [0,16) are always on `head`'s, which every
 * send writes, and only [64,72) (with the state's first bytes, which a
 * handler may write for every message) always on the other one. What the
 * owner reads for every message (the flags) is in [64,72); what it writes
 * to the block for every message is nothing (a turn keeps its tail in its
 * context and stores it back once: actor.c, turn_loop); what it reads
 * from [0,64) it reads once a turn (`typew`, `tail`). What a sender reads
 * for every send is `head`, `typew` (the send's two flag bits) and `addr`
 * (the table's check), in that order from 0: all on head's line for a
 * block at 0 or 16 modulo 64, all but the end of `addr` for one at 32. */
typedef struct ac__actor {
    _Atomic(ac__env *) head;        /* mailbox: producers exchange here */
    /* The actor's type (ac__type) | AC__TYPEW_*. */
    _Atomic uintptr_t typew;
    ac_addr addr;
    /* mailbox: consumer side; until the first pop (AC__OWN_POPPED clear)
     * also the initial stub's link, which the first push stores
     * (mailbox.c). In a turn, the turn's own copy is ahead of it. */
    _Atomic(ac__env *) tail;
    struct ac__actor *next_runnable; /* injection queue link */
    _Atomic uint8_t flags;          /* AC__ACTOR_* */
    uint8_t oflags;                 /* AC__OWN_*: the owner's alone */
    uint8_t attrs;
    uint8_t klass;                  /* pool class of this block (pool.h) */
    int exit_code;
    /* 8-aligned: a state that needs 16 gets 8 bytes of padding in front of
     * the block (actor.c, prefix_size). */
    alignas(8) unsigned char state[];
} ac__actor;

_Static_assert(offsetof(ac__env, next) == 0, "the stub is an envelope's link");
_Static_assert(offsetof(ac__actor, tail) % _Alignof(ac__env) == 0, "the stub is aligned");
_Static_assert(offsetof(ac__actor, state) == 72, "control block size");
/* Two addresses 64 bytes apart are never on one line: the flags never
 * share head's, whatever the block's alignment (16). */
_Static_assert(offsetof(ac__actor, flags) >= offsetof(ac__actor, head) + 64 &&
                   offsetof(ac__actor, oflags) >= offsetof(ac__actor, head) + 64,
               "the owner's per-message flags are off head's line");
_Static_assert(offsetof(ac__actor, typew) < 16, "a send's flag bits are on head's line");
_Static_assert(_Alignof(ac_actor_type) > AC__TYPEW_BITS, "a type's address has the bits free");

/* A bounded mailbox's counters, just in front of its actor's block. */
typedef struct ac__bound {
    _Atomic uint32_t len;   /* admitted messages not yet handled or shed */
    _Atomic uint32_t shed;  /* drop-oldest: how many to drop at the head */
    uint32_t limit;         /* 0: none, a count for the per-type counters */
    uint32_t overflow;      /* ac_overflow */
} ac__bound;

_Static_assert(sizeof(ac__bound) == 16, "keeps the block 16-byte aligned");

static inline ac__bound *ac__bound_of(ac__actor *a)
{
    return (ac__bound *)(void *)((unsigned char *)a - sizeof(ac__bound));
}

/* The lane of urgent mail of an actor whose type has urgent messages, in
 * front of its bound if it has one (mailbox.c). Producers push onto `top`
 * (a stack: a push is one CAS); the owner takes the whole stack at once
 * and reverses it, so each sender's urgent messages stay in order. */
typedef struct ac__urgent {
    _Atomic(ac__env *) top;
    void *unused;           /* keeps the block 16-byte aligned */
} ac__urgent;

_Static_assert(sizeof(ac__urgent) == 16, "keeps the block 16-byte aligned");

static inline ac__urgent *ac__urgent_of(ac__actor *a)
{
    size_t off = sizeof(ac__urgent) +
                 ((a->attrs & AC__ATTR_BOUNDED) ? sizeof(ac__bound) : 0);
    return (ac__urgent *)(void *)((unsigned char *)a - off);
}

static inline const ac_actor_type *ac__type(const ac__actor *a)
{
    /* Relaxed: the type is fixed before the actor is published (the
     * table's insert releases it, every lookup acquires); the bits that
     * change are masked off. The cast drops const: atomic_load takes a
     * pointer to non-const in C11. */
    uintptr_t w = atomic_load_explicit(&((ac__actor *)a)->typew, memory_order_relaxed);
    return (const ac_actor_type *)(w & ~(uintptr_t)AC__TYPEW_BITS);
}

static inline bool ac__overloaded(ac__actor *a)
{
    /* Relaxed: a hint for senders; mute.c re-reads it under its lock. */
    return atomic_load_explicit(&a->typew, memory_order_relaxed) & AC__TYPEW_OVERLOADED;
}

/* Whether e, a user message to a, is urgent by a's type. */
static inline bool ac__is_urgent(const ac__actor *a, const ac__env *e)
{
    const ac_actor_type *t = ac__type(a);
    return (a->attrs & AC__ATTR_URGENT) && e->tag < t->message_count &&
           t->message_priority[e->tag] != AC_PRIORITY_NORMAL;
}

static inline unsigned ac__flags(ac__actor *a)
{
    /* Relaxed: the owner reads its own writes; a KILLED or an URGENT set
     * by another thread is also announced by a message (actor.c: the kill
     * envelope; mailbox.c: the urgent wake-up), which orders it. */
    return atomic_load_explicit(&a->flags, memory_order_relaxed);
}

static inline void ac__set_flags(ac__actor *a, unsigned f)
{
    /* Relaxed: see ac__flags; an RMW, so that a bit another thread sets
     * meanwhile is kept. DEAD is set with seq_cst in actor.c. */
    atomic_fetch_or_explicit(&a->flags, (uint8_t)f, memory_order_relaxed);
}

static inline void ac__clear_flags(ac__actor *a, unsigned f)
{
    /* Relaxed: as ac__set_flags. */
    atomic_fetch_and_explicit(&a->flags, (uint8_t)~f, memory_order_relaxed);
}

/* The ask service keeps a book of a's pending asks (services/ask.c),
 * which its death looks up: marked by a's first ask, on a's thread (its
 * owner's byte), and read by its death, on the same thread. */
static inline void ac__mark_asker(ac__actor *a)
{
    a->oflags |= AC__OWN_ASKS;
}

static inline bool ac__has_asked(const ac__actor *a)
{
    return (a->oflags & AC__OWN_ASKS) != 0;
}

/* The initial stub of an actor's mailbox: a node whose link is `tail`
 * (mailbox.c says why that is safe). Only its link is ever touched. */
static inline ac__env *ac__stub_of(ac__actor *a)
{
    return (ac__env *)(void *)&a->tail;
}

/* Calls from threads that are not workers are read-side critical sections
 * of their own (qsbr.c); every runtime call that looks an address up is
 * bracketed by these. */
void ac__enter(ac_ctx *cx);
void ac__leave(ac_ctx *cx);

/* How a turn ended: the actor is still owned by the caller unless FREED. */
typedef enum ac__turn {
    AC__TURN_MORE,     /* the batch ran out: run it again, after the others */
    AC__TURN_DRAINED,  /* its mailbox looked empty: ac__turn_release it */
    AC__TURN_FREED,    /* it got its finalize envelope and is gone */
    AC__TURN_MUTED     /* it sent to an overloaded actor and is muted: the
                          mute registry holds it and schedules it again
                          (mute.c); the caller drops it */
} ac__turn;
ac__turn ac__actor_turn(ac_ctx *cx, ac__actor *a, unsigned batch, unsigned *handled);
/* Gives up a drained actor: true if it is now unscheduled, false if a
 * message arrived and the caller must keep running it. */
bool ac__turn_release(ac__actor *a);

/* A zeroed actor block of `type` with `attrs` (AC__ATTR_*), its mailbox
 * not yet initialised; ac__actor_free gives it back. */
ac__actor *ac__actor_new(ac_ctx *cx, const ac_actor_type *type, unsigned attrs);
void ac__actor_free(ac_ctx *cx, ac__actor *a);
/* Past its grace period, with its finalize envelope `fin` in hand: frees
 * the actor at once if nothing is left for a turn to do (its mailbox
 * released empty, no urgent lane to drain), and returns whether it did;
 * else the caller pushes `fin` and the actor's last turn frees it. */
bool ac__actor_finalize_now(ac_ctx *cx, ac__actor *a, ac__env *fin);

/* Spawns an actor; at `addr` when given (a supervisor starting a child at
 * the address drawn for it when its tree started), else at a fresh random
 * one; `attrs` may add AC__ATTR_SUPERVISED and AC__SPAWN_HELD. */
int ac__spawn_actor(ac_ctx *cx, const ac_actor_type *type, const void *args,
                    const ac_spawn_options *opts, const ac_addr *addr, unsigned attrs,
                    ac_addr *out);
/* For ac__spawn_actor's `attrs` only, never an actor's: a spawn that
 * succeeds leaves the actor to its spawner, unscheduled (what is sent to
 * it, by its start hook too, waits in its mailbox), until the spawner
 * calls ac__spawn_release with its address. A supervisor holds a child
 * so: it monitors it before the child can run, and so fail, unwatched. */
#define AC__SPAWN_HELD (1u << 7)
void ac__spawn_release(ac_ctx *cx, const ac_addr *addr);
/* A fresh random address of this node for an actor spawned later at it
 * (ac__spawn_actor's `addr`): a supervision tree draws all of its
 * addresses when its top starts, so that every restart keeps them. */
void ac__addr_fresh(ac_ctx *cx, ac_addr *out);

/* The live actor at `addr`, or NULL; the caller is between ac__enter and
 * ac__leave. */
ac__actor *ac__lookup(ac_ctx *cx, const ac_addr *addr);
/* The actor whose handler is running on this context, or NULL. */
ac__actor *ac__current(const ac_ctx *cx);
/* The user message whose handling (dispatch and what follows it: the
 * death it may cause) is under way on this context, or NULL: in a start
 * hook, an ask continuation, a down or exit hook. */
ac__env *ac__handling(const ac_ctx *cx);
/* Pushes e into a's mailbox, scheduling a (or waking its inbox's thread)
 * when the push made it non-empty. Consumes e. */
int ac__deliver(ac_ctx *cx, ac__actor *a, ac__env *e);
/* A runtime message with this system tag and payload size, flags clear
 * (NULL when out of memory); ac__stop_envelope is the stop one. */
ac__env *ac__system_envelope(ac_ctx *cx, uint32_t tag, size_t size);
ac__env *ac__stop_envelope(ac_ctx *cx);
/* Sends a runtime message (AC_TAG_DOWN, AC_TAG_EXIT, AC_TAG_REPLY, stop):
 * allowed during shutdown, outside any mailbox bound, and not counted as a
 * dead letter when nobody is there. Consumes e. */
int ac__send_system(ac_ctx *cx, const ac_addr *to, ac__env *e);
/* The same for a runtime message a program sends (a reply), counted as a
 * send, and as a dead letter when nobody is there. Consumes e. */
int ac__send_counted(ac_ctx *cx, const ac_addr *to, ac__env *e);
/* Counts a message that reached no handler and shows it to the dead-letter
 * hook; the caller frees it. NULL: a message that never became an envelope
 * here (one from another node for an actor that is gone), counted only. */
void ac__dead_letter(ac_ctx *cx, const ac_addr *to, ac__env *e, int reason);
/* A user send (or a reply) refused where it was routed: counted in
 * `refused`, and as the dead letter (AC_ENOTFOUND) or full mailbox
 * (AC_EFULL) `reason` names, so that sends + refused stays equal to what
 * ends as messages, dead letters and mailbox drops. The caller frees e. */
void ac__refuse(ac_ctx *cx, const ac_addr *to, ac__env *e, int reason);

/* No tag: ac__death.tag of a death that is no failure. */
#define AC__NO_TAG 0xFFFFFFFFu
/* Reports a failed actor to the runtime's failure hook (failure.c):
 * `action` is an ac_failure_action, `supervisor` NULL when it has none. */
void ac__failure_report(ac_ctx *cx, const ac_addr *who, const ac_actor_type *type,
                        uint32_t tag, int code, unsigned action, const ac_addr *supervisor);
/* Counts a send that a service took to carry elsewhere (a reply a node's
 * queue took for an asker of another node): in `sends`; it ends there in
 * `node_forwarded`, or as a dead letter if the queue is lost. */
void ac__count_sent(ac_ctx *cx);
/* Counts a message taken out of a queue other than by an actor's turn (an
 * inbox's receive, a blocking ask): in `messages` if it was counted as a
 * send (a user tag, a reply a program sent), else in `system_messages`. */
void ac__count_taken(ac_ctx *cx, const ac__env *e);
/* A service's deliver hook returns this when it counted the message as a
 * dead letter instead of handling it (a reply to an ask that is over), so
 * the turn counts nothing more. Positive: no error code is. */
#define AC__DEAD_LETTERED 1
/* ac_inbox_recv without counting what it takes: for a caller that counts
 * it itself, as a message or as a dead letter (a blocking ask's late
 * reply). */
int ac__inbox_take(ac_ctx *cx, ac_inbox *ib, uint32_t tag, int timeout_ms,
                   ac_envelope **out);
/* Ends `a` (not running) from outside: killed (ac_kill) or by a link. */
int ac__kill(ac_ctx *cx, ac__actor *a, int reason, int code);

#endif /* AC_CORE_ACTOR_H */
