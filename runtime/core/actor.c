/*
 * actor.c — spawning, sending, stopping, and one turn of an actor.
 */
#include "actor.h"

#include "explore.h"
#include "inbox.h"
#include "mailbox.h"
#include "mute.h"
#include "observe.h"
#include "pool.h"
#include "qsbr.h"
#include "route.h"
#include "runtime.h"
#include "sched.h"
#include "service.h"
#include "stash.h"
#include "trace.h"
#include "typestats.h"

#include <stdlib.h>
#include <string.h>

_Static_assert(AC__POOL_CLASSES < AC__CLASS_HUGE && AC__CLASS_HUGE <= UINT8_MAX,
               "an actor's pool class fits its klass");
_Static_assert(_Alignof(ac__actor) == 8, "prefix_size pads a state aligned to 16");

/* Calls from threads that are not workers are read-side critical sections
 * of their own (workers are online for as long as they run). */
void ac__enter(ac_ctx *cx)
{
    if (cx->worker == NULL && cx->depth++ == 0)
        ac__qsbr_online(cx);
}

void ac__leave(ac_ctx *cx)
{
    if (cx->worker == NULL && --cx->depth == 0) {
        /* An external thread never polls: its retired actors (a start hook
         * that failed) go where the workers reap them, and a worker is
         * woken to do it, since parked workers would not notice. */
        bool retired = cx->retired != NULL;
        if (retired)
            ac__qsbr_orphan(cx);
        ac__qsbr_offline(cx);
        if (retired)
            ac__notify_work(cx->rt);
        /* Spawning from outside grows the table with no worker awake to
         * free what it outgrew. The hint is read here, not only in the
         * call, so that an outside send pays a load, not two calls
         * (issue 14: a send from outside within 2x a handler's).
         * Relaxed: a hint; route.c rechecks under its locks. */
        if (atomic_load_explicit(&cx->rt->route.has_outgrown, memory_order_relaxed))
            ac__qsbr_reclaim_tables(cx);
    }
}

/* Bytes in front of the control block: the urgent lane, a bound's
 * counters, and padding
 * that puts a strictly aligned state on its boundary (the state sits 72
 * bytes into the block, 8-aligned in a 16-aligned pool block: a state
 * that needs 16 gets 8 bytes in front). Both are fixed by the type and the
 * attributes, so ac__actor_free finds the allocation's start again. */
static size_t prefix_size(const ac_actor_type *type, unsigned attrs)
{
    size_t pre = (attrs & AC__ATTR_BOUNDED) ? sizeof(ac__bound) : 0;
    if (attrs & AC__ATTR_URGENT)
        pre += sizeof(ac__urgent);
    size_t align = type->state_align;
    if (align > _Alignof(ac__actor)) {
        size_t state_at = pre + offsetof(ac__actor, state);
        pre += (align - state_at % align) % align;
    }
    return pre;
}

ac__actor *ac__actor_new(ac_ctx *cx, const ac_actor_type *type, unsigned attrs)
{
    size_t pre = prefix_size(type, attrs);
    size_t size = pre + offsetof(ac__actor, state) + type->state_size;
    unsigned char *base;
    uint16_t klass;
    if (type->state_align > 16) {
        /* Pool blocks are 16-byte aligned: stricter states get their own. */
        void *p = NULL;
        if (posix_memalign(&p, type->state_align, size) != 0)
            return NULL;
        base = p;
        klass = AC__CLASS_HUGE;
    } else {
        base = ac__block_alloc(cx, size, &klass);
        if (base == NULL)
            return NULL;
    }
    memset(base, 0, size);
    ac__actor *a = (ac__actor *)(void *)(base + pre);
    /* Before the actor is published: the table's insert releases it. */
    atomic_init(&a->typew, (uintptr_t)type | ((attrs & AC__ATTR_MARKED) ? AC__TYPEW_MARKED : 0));
    a->klass = (uint8_t)klass;
    a->attrs = (uint8_t)attrs;
    atomic_init(&a->flags, 0);
    if (attrs & AC__ATTR_URGENT)
        atomic_init(&ac__urgent_of(a)->top, NULL);
    return a;
}

void ac__actor_free(ac_ctx *cx, ac__actor *a)
{
    /* A stash gave back what it held at the death (stash.c). Relaxed: the
     * caller owns the actor (its last turn, or a reaper past
     * ac__mailbox_released_empty's acquire). Before the first pop the
     * tail is the stub (its link, were a node linked there, would have been
     * popped: the mailbox is drained); an inbox puts it back (inbox.c). */
    ac__env *tail = atomic_load_explicit(&a->tail, memory_order_relaxed);
    if (tail != ac__stub_of(a))
        ac__pool_free(cx, tail);
    if (a->attrs & AC__ATTR_URGENT) {
        /* Nothing waits here once the finalize envelope was taken (the
         * turn takes the lane first); an actor that never ran may hold
         * some (a spawn undone). */
        for (ac__env *u = ac__mailbox_take_urgent(a), *next; u != NULL; u = next) {
            /* Relaxed: ours since the take. */
            next = atomic_load_explicit(&u->next, memory_order_relaxed);
            ac__pool_free(cx, u);
        }
    }
    unsigned char *base = (unsigned char *)a - prefix_size(ac__type(a), a->attrs);
    ac__block_free(cx, base, a->klass);
}

bool ac__actor_finalize_now(ac_ctx *cx, ac__actor *a, ac__env *fin)
{
    /* An urgent lane may hold mail that must end as dead letters, which
     * the finalize turn sees to (handle): that path stays. So does an
     * observed runtime's, whose trace and per-type counters record the
     * finalize turn (docs/RUNTIME.md, "Tracing"). */
    if (cx->observe != 0 || (a->attrs & AC__ATTR_URGENT) || !ac__mailbox_released_empty(a))
        return false;
    /* What the finalize turn would have done, less the push, the
     * schedule and the turn: its mailbox holds nothing to handle. */
    ac__pool_free(cx, fin);
    ac__actor_free(cx, a);
    return true;
}

void ac__dead_letter(ac_ctx *cx, const ac_addr *to, ac__env *e, int reason)
{
    if (reason == AC_EFULL)
        AC__COUNT(cx, mailbox_drops, 1);
    else
        AC__COUNT(cx, dead_letters, 1);
    ac_dead_letter_fn hook = cx->rt->dead_letter_fn;
    if (hook && e != NULL)
        hook(cx, to, ac__env_pub(e), reason, cx->rt->dead_letter_arg);
    /* An ask's request that no actor will handle: its asker is told now,
     * as CAF's request_receiver_down and gen_server:call's monitor tell
     * theirs, instead of waiting out its timeout (or for ever). A full
     * mailbox's drop is not its target's death: not answered. */
    if (e != NULL && reason == AC_ENOTFOUND && (e->flags & AC__ENV_ASKED))
        ac__services_unanswered(cx, e);
}

void ac__refuse(ac_ctx *cx, const ac_addr *to, ac__env *e, int reason)
{
    AC__COUNT(cx, refused, 1);
    ac__dead_letter(cx, to, e, reason);
}

void ac__count_sent(ac_ctx *cx)
{
    AC__COUNT(cx, sends, 1);
}

/* Whether e was counted as a send, so that it must end as a message or a
 * dead letter: user tags always, runtime tags only as a program's reply. */
static inline bool counted_env(const ac__env *e)
{
    return e->tag < AC_TAG_SYSTEM || (e->flags & AC__ENV_COUNTED);
}

void ac__count_taken(ac_ctx *cx, const ac__env *e)
{
    if (counted_env(e))
        AC__COUNT(cx, messages, 1);
    else
        AC__COUNT(cx, system_messages, 1);
}

/* The tag of what the running actor is handling, for a failure's report:
 * the envelope a pop returns stays the mailbox's tail (its stub) until the
 * next pop (mailbox.c), so no store on the path of a message records it;
 * before any pop the tail is the initial stub, and the actor is in its
 * start hook. Read on the failure path only. */
static uint32_t tag_handled(ac__actor *a)
{
    /* Relaxed: the owner's own, past its first pop (mailbox.c). */
    return !(a->oflags & AC__OWN_POPPED) ? AC_TAG_START
                      : atomic_load_explicit(&a->tail, memory_order_relaxed)->tag;
}

/* The running turn's tail (ac_ctx.tail), stored back into a's block for
 * a path that reads it there; a no-op unless a's plain loop is under way
 * on cx (turn_loop: cx->tail is NULL outside one, and a spawn sets it
 * aside for the start hook of the actor it spawns). */
static inline void sync_tail(ac_ctx *cx, ac__actor *a)
{
    if (cx->tail != NULL && cx->current == a)
        ac__mailbox_set_tail(a, cx->tail);
}

/* A death, for the trace and the type's counters. */
static void observe_death(ac_ctx *cx, const ac__actor *a, int reason, int code)
{
    if (cx->observe & AC__OBS_TRACE) {
        unsigned kind = reason == AC_REASON_NORMAL   ? AC__EV_STOP
                        : reason == AC_REASON_FAILED ? AC__EV_FAIL
                                                     : AC__EV_KILL;
        ac__trace_event(cx, kind, ac__now_ns(), 0, ac__type(a), ac__addr_short(&a->addr),
                        (uint32_t)code);
    }
    if ((cx->observe & AC__OBS_TYPES) && reason == AC_REASON_FAILED)
        ac__typestats_failed(cx, ac__type(a));
}

/* The actor stops (reason normal), fails or is killed. Its remaining
 * messages are dropped as they are popped; it is freed once its grace
 * period is over. */
static void die(ac_ctx *cx, ac__actor *a, int reason, int code)
{
    /* seq_cst: the death is announced before services_used is read; pairs
     * with ac__service_alive, which sets services_used and then reads the
     * flag (a Dekker pair: one of the two sees the other; service.c). */
    atomic_fetch_or_explicit(&a->flags, (uint8_t)AC__ACTOR_DEAD, memory_order_seq_cst);
    a->oflags |= AC__OWN_DEAD;
    a->exit_code = code;
    /* The failed tag (tag_handled) and the services' died hooks (the
     * stash's ac__env_release) read the tail from the block. */
    sync_tail(cx, a);
    if (reason == AC_REASON_NORMAL && ac__type(a)->on_stop) {
        ac__actor *caller = cx->current;
        cx->current = a;
        ac__type(a)->on_stop(a->state, cx);
        cx->current = caller;
    }
    ac__route_remove(&cx->rt->route, a);
    if (reason == AC_REASON_NORMAL)
        AC__COUNT(cx, stopped, 1);
    else if (reason == AC_REASON_FAILED)
        AC__COUNT(cx, failed, 1);
    else
        AC__COUNT(cx, killed, 1);
    if (cx->observe)
        observe_death(cx, a, reason, code);
    /* A supervised child's failure is its supervisor's to report
     * (services/supervisors.c), from the tag its died hook hears. */
    uint32_t tag = reason == AC_REASON_FAILED ? tag_handled(a) : AC__NO_TAG;
    if (reason == AC_REASON_FAILED && !(a->attrs & AC__ATTR_SUPERVISED))
        ac__failure_report(cx, &a->addr, ac__type(a), tag, code, AC_FAILURE_UNSUPERVISED, NULL);
    /* Its senders wait for it no more. */
    ac__mute_died(cx, a);
    /* What it stashed becomes dead letters before anyone hears of the
     * death (links, monitors). */
    ac__stash_died(cx, a);
    if (atomic_load_explicit(&cx->rt->services_used, memory_order_seq_cst)) {
        ac__death d = {reason, code, tag};
        ac__services_died(cx, a, &d);
    }
    /* Out of memory for its finalize envelope, the actor is never freed:
     * it keeps draining whatever still reaches it, counted as dead
     * letters, rather than risk a sender touching freed memory. */
    (void)ac__qsbr_retire(cx, a);
}

static int exit_code_of(const ac__actor *a, int rc)
{
    if (rc != 0)
        return rc;
    return a->exit_code != 0 ? a->exit_code : AC_EFAILED;
}

/* The turn's own path (handle, handle_one, handle_live, after_handler) is
 * inlined into it, and the urgent lane's walk is not: that walk calls handle_one
 * itself, and with the recursion left to the compiler the common path went
 * out of line (bench/README.md, "The hot path", has the cost). */
#if defined(__GNUC__)
#define TURN_INLINE inline __attribute__((always_inline))
#define TURN_COLD __attribute__((noinline, cold))
#else
#define TURN_INLINE inline
#define TURN_COLD
#endif

/* Returns the owner's flags the handler left (the turn learns from them
 * whether it took a stash up again: AC__OWN_REPLAY). One byte, the
 * owner's: DEAD's copy is there too. */
static TURN_INLINE unsigned after_handler(ac_ctx *cx, ac__actor *a, int rc)
{
    unsigned f = a->oflags;
    if (f & AC__OWN_DEAD)
        return f;
    if (rc != 0 || (f & AC__OWN_FAIL_REQUESTED))
        die(cx, a, AC_REASON_FAILED, exit_code_of(a, rc));
    else if (f & AC__OWN_STOP_REQUESTED)
        die(cx, a, AC_REASON_NORMAL, 0);
    /* KILLED waits for its envelope, already queued: it carries the code. */
    return f;
}

/* A bounded type or option: what the actor's bound will be. */
static void bound_of(const ac_actor_type *type, const ac_spawn_options *o,
                     uint32_t *limit, uint32_t *overflow)
{
    *limit = type->mailbox_bound;
    *overflow = type->mailbox_overflow;
    if (o && o->mailbox_bound) {
        *limit = o->mailbox_bound;
        *overflow = o->mailbox_overflow;
    }
}

int ac_spawn(ac_ctx *cx, const ac_actor_type *type, const void *args, ac_addr *out)
{
    return ac__spawn_actor(cx, type, args, NULL, NULL, 0, out);
}

int ac_spawn_opts(ac_ctx *cx, const ac_actor_type *type, const void *args,
                  const ac_spawn_options *opts, ac_addr *out)
{
    return ac__spawn_actor(cx, type, args, opts, NULL, 0, out);
}

int ac__spawn_actor(ac_ctx *cx, const ac_actor_type *type, const void *args,
                    const ac_spawn_options *opts, const ac_addr *addr, unsigned attrs,
                    ac_addr *out)
{
    if (cx == NULL || type == NULL || out == NULL || type->dispatch == NULL)
        return AC_EINVAL;
    if (type->abi != AC_ABI_VERSION)
        return AC_EINVAL;
    uint32_t limit, overflow;
    bound_of(type, opts, &limit, &overflow);
    if (overflow > AC_OVERFLOW_DROP_OLDEST)
        return AC_EINVAL;
    ac_runtime *rt = cx->rt;
    /* Per-type counters read the mailbox's length from a bound's count
     * (typestats.c): an unbounded actor gets the count with limit 0, no
     * limit at all (bound_admit). */
    bool counted = limit != 0 || (rt->observe & AC__OBS_TYPES);
    /* Relaxed: a spawn racing with the start of shutdown is stopped by it
     * either way; the flag only refuses work once shutdown is known. */
    if (atomic_load_explicit(&rt->stopping, memory_order_relaxed))
        return AC_ESHUTDOWN;
    unsigned at = (counted ? AC__ATTR_BOUNDED : 0) | (attrs & AC__ATTR_SUPERVISED) |
                  (type->message_priority ? AC__ATTR_URGENT : 0);
    ac__actor *a = ac__actor_new(cx, type, at);
    if (a == NULL)
        return AC_ENOMEM;
    if (counted) {
        ac__bound *b = ac__bound_of(a);
        atomic_init(&b->len, 0);
        atomic_init(&b->shed, 0);
        b->limit = limit;
        b->overflow = overflow;
    }
    /* A plain spawn: a fresh address, no options, no start hook, not held.
     * Until this call returns the address, nobody but the runtime can know
     * it (it is a capability, drawn here), so no program's send can reach
     * the actor, and nothing runs on its behalf here: the spawner need not
     * own it. Its mailbox starts released empty, as mark_empty would leave
     * it, and the spawn ends at the insert, without the owner's hand-over
     * (a CAS on its head) or the start hook's set-up (skynet: every actor).
     * Shutdown's stop or kill may still find it in the table
     * (ac__route_each): that push schedules it like any other, which is
     * why nothing below the insert touches the actor but to read its
     * address and type, fixed before the insert, and why it cannot be
     * freed under us: this context stays online until ac__leave. */
    bool plain = addr == NULL && opts == NULL && type->on_start == NULL &&
                 !(attrs & AC__SPAWN_HELD);
    /* Otherwise the spawner owns the actor until its start hook has run:
     * messages sent to it meanwhile queue up without scheduling it. */
    ac__mailbox_init(a, !plain);
    if (addr)
        a->addr = *addr;
    else
        ac__addr_next(&cx->addrs, &a->addr);

    ac__enter(cx);
    /* What the options ask of the services is taken before the actor is
     * reachable (a name), and what needs it reachable (a link) after. */
    int rc = opts ? ac__services_claim(cx, a, opts) : 0;
    if (rc == 0 && (rc = ac__route_insert(&rt->route, a)) != 0 && opts)
        ac__services_unclaim(cx, a, opts);
    if (rc != 0) {
        ac__leave(cx);
        ac__actor_free(cx, a);
        return rc;
    }
    AC__COUNT(cx, spawned, 1);
    if (cx->observe & AC__OBS_TRACE)
        ac__trace_event(cx, AC__EV_SPAWN, ac__now_ns(), 0, type, ac__addr_short(&a->addr), 0);
    if (plain) {
        *out = a->addr;
        ac__leave(cx);
        return 0;
    }
    ac__actor *caller = cx->current;
    ac__env *caller_env = cx->handling;  /* a spawn from a handler */
    ac__env *caller_tail = cx->tail;     /* its plain turn's (sync_tail) */
    cx->current = a;
    cx->handling = NULL;
    cx->tail = NULL;
    if (opts)
        rc = ac__services_attach(cx, a, opts);
    if (rc == 0 && type->on_start) {
        rc = type->on_start(a->state, cx, args);
        if (rc == 0 && (a->oflags & AC__OWN_FAIL_REQUESTED))
            rc = exit_code_of(a, 0);
    }
    if (rc != 0 && !(a->oflags & AC__OWN_DEAD))
        die(cx, a, AC_REASON_FAILED, rc);
    else
        (void)after_handler(cx, a, 0);
    /* A start hook's send to an overloaded actor does not mute the new
     * actor, which is in no turn (mute.c): forgotten. */
    if (a->oflags & AC__OWN_MUTING) {
        a->oflags &= (uint8_t)~AC__OWN_MUTING;
        cx->mute_on = NULL;
    }
    cx->current = caller;
    cx->handling = caller_env;
    cx->tail = caller_tail;
    /* Hand the actor to the scheduler: run it if messages arrived during
     * the start hook (or, if it died there, to drop them). */
    if (rc == 0)
        *out = a->addr;
    if (rc != 0 || !(attrs & AC__SPAWN_HELD)) {
        if (!ac__mailbox_mark_empty(a))
            ac__schedule(cx, a);
    }
    ac__leave(cx);
    return rc;
}

void ac__spawn_release(ac_ctx *cx, const ac_addr *addr)
{
    ac__enter(cx);
    /* Held, it has not run: nothing can have ended it or taken it out of
     * the table (a stop or a kill only queues an envelope), so it is there. */
    ac__actor *a = ac__route_lookup(&cx->rt->route, addr);
    if (a != NULL && !ac__mailbox_mark_empty(a))
        ac__schedule(cx, a);
    ac__leave(cx);
}

int ac__deliver(ac_ctx *cx, ac__actor *a, ac__env *e)
{
    if (ac__mailbox_push(a, e)) {
        if (a->attrs & AC__ATTR_INBOX)
            ac__inbox_wake(cx, a);
        else
            ac__schedule(cx, a);
    }
    return 0;
}

/* A bounded mailbox admits a message, or refuses it (the caller has freed
 * nothing yet). Senders count messages in; the actor counts them out as it
 * handles them (handle), so the count can briefly exceed what is really
 * queued, never fall short of it. */
static int bound_admit(ac_ctx *cx, ac__actor *a, ac__env *e)
{
    ac__bound *b = ac__bound_of(a);
    /* Relaxed: a counter, not a publication; the push publishes e. */
    uint32_t n = atomic_fetch_add_explicit(&b->len, 1, memory_order_relaxed);
    /* Limit 0: only counted, for the per-type counters (ac__spawn_actor). */
    if (n < b->limit || b->limit == 0) {
        e->flags |= AC__ENV_BOUNDED;
        return 0;
    }
    if (b->overflow == AC_OVERFLOW_DROP_OLDEST) {
        atomic_fetch_add_explicit(&b->shed, 1, memory_order_relaxed);
        e->flags |= AC__ENV_BOUNDED;
        return 0;
    }
    atomic_fetch_sub_explicit(&b->len, 1, memory_order_relaxed);
    bool reject = b->overflow == AC_OVERFLOW_REJECT;
    if (reject) {
        ac__refuse(cx, &a->addr, e, AC_EFULL);
    } else {
        /* Drop-newest: the send returns 0, so it counts as a send that
         * ended as a mailbox drop. */
        AC__COUNT(cx, sends, 1);
        ac__dead_letter(cx, &a->addr, e, AC_EFULL);
    }
    ac__pool_free(cx, e);
    return reject ? AC_EFULL : 1;
}

/* How a send is made: a runtime message (uncounted, outside bounds), and
 * whether a target that is gone is the caller's error. Constants at every
 * call, so the choice costs the path of an accepted send nothing. */
enum { SEND_USER = 0, SEND_SYSTEM = 1, SEND_CHECKED = 2 };

/* A user send to a bounded actor, or to one with urgent messages: one
 * attribute test on the plain path sends both here. The bound counts
 * urgent mail too. Kept out of line: inlined, it made send_env keep the
 * attributes in a register for it, one instruction more on every send
 * (callgrind, ring). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int send_marked(ac_ctx *cx, ac__actor *a, ac__env *e)
{
    bool urgent = ac__is_urgent(a, e);
    /* The wake-up is taken before anything is counted or pushed, so that
     * running out of memory leaves nothing half done. */
    ac__env *wake = NULL;
    if (urgent && (wake = ac__system_envelope(cx, AC__TAG_URGENT, 0)) == NULL) {
        ac__pool_free(cx, e);
        return AC_ENOMEM;
    }
    if (a->attrs & AC__ATTR_BOUNDED) {
        int rc = bound_admit(cx, a, e);
        if (rc != 0) {
            if (wake != NULL)
                ac__pool_free(cx, wake);
            return rc > 0 ? 0 : rc;  /* dropped as the policy says, counted */
        }
    }
    AC__COUNT(cx, sends, 1);
    /* A bounded mailbox keeps its own policy; an unbounded one with
     * urgent messages, or with the count and no limit that per-type
     * counters give it (ac__spawn_actor), mutes its senders as any other
     * (mute.c). */
    if (ac__overloaded(a) &&
        (!(a->attrs & AC__ATTR_BOUNDED) || ac__bound_of(a)->limit == 0))
        ac__mute_note(cx, a);
    if (cx->observe & AC__OBS_TRACE)
        ac__trace_send(cx, e);  /* as in send_env */
    if (!urgent)
        return ac__deliver(cx, a, e);
    if (ac__mailbox_push_urgent(a, e))
        return ac__deliver(cx, a, wake);
    ac__pool_free(cx, wake);  /* the wake-up of an earlier push covers it */
    return 0;
}

/* No actor of this runtime at `to`. An address of another node goes to the
 * transport (transport.h: the node); whatever nobody takes is a dead
 * letter: AC_ENOTFOUND for a checked or runtime send, else 0 (a dead letter
 * is not the sender's failure: `return m_B_send_x(...)` in a handler must
 * not fail its actor because B stopped first, as Erlang's `Pid ! Msg` to a
 * dead process does nothing to the sender). Off the path of a local send,
 * which finds its actor. */
static int send_elsewhere(ac_ctx *cx, const ac_addr *to, ac__env *e, unsigned how,
                          const ac_actor_type *type)
{
    bool system = how & SEND_SYSTEM;
    int rc;
    if (!system && ac_addr_node(to) != cx->rt->node &&
        ac__transport_forward(cx, to, type, e, &rc)) {
        /* The node counted a full queue as a mailbox drop; an encoding
         * error never reached routing and is counted nowhere, as an
         * AC_EINVAL is. */
        if (rc == 0)
            AC__COUNT(cx, sends, 1);
        else if (rc == AC_EFULL)
            AC__COUNT(cx, refused, 1);
        return rc;
    }
    if (!system) {
        /* A checked send tells its caller (an ask's own send: it returns
         * AC_ENOTFOUND and its continuation never runs), so its request
         * needs no answer as well. */
        if (how & SEND_CHECKED)
            e->flags &= (uint16_t)~AC__ENV_ASKED;
        ac__refuse(cx, to, e, AC_ENOTFOUND);
    }
    ac__pool_free(cx, e);
    return how != SEND_USER ? AC_ENOTFOUND : 0;
}

/* `type`: the target's, when the sender knows it (a remote target's
 * message travels encoded with its codec), else NULL. `slow`, a constant
 * at each of the two calls below: a thread that is not a worker (it
 * enters and leaves, and it is refused once shutdown closes), or one that
 * traces its sends. A worker that traces nothing runs the copy without
 * either, so tracing costs its sends nothing (runtime/README.md,
 * "Watching turns"). */
/* The send of e to `a`, the actor the lookup found at `to` (a == NULL:
 * none). Online when `slow`. */
static TURN_INLINE int send_to(ac_ctx *cx, ac__actor *a, const ac_addr *to, ac__env *e,
                               unsigned how, const ac_actor_type *type, bool slow)
{
    if (a == NULL)
        return send_elsewhere(cx, to, e, how, type);
    bool system = how & SEND_SYSTEM;
    /* One relaxed load, on the line the push touches anyway: MARKED is
     * fixed before the actor is published, which the lookup's acquire
     * sees; OVERLOADED (back-pressure, mute.c) is a hint, which mute.c
     * re-reads under its lock. */
    uintptr_t w = atomic_load_explicit(&a->typew, memory_order_relaxed);
    if (!system && (w & AC__TYPEW_MARKED))
        return send_marked(cx, a, e);
    if (!system) {
        AC__COUNT(cx, sends, 1);
        if (__builtin_expect(w & AC__TYPEW_OVERLOADED, 0))
            ac__mute_note(cx, a);
    }
    /* Before the push: after it, e may be handled and freed. */
    if (slow && (cx->observe & AC__OBS_TRACE))
        ac__trace_send(cx, e);
    /* Seeded mode keeps it in flight (explore.c); only the slow copy
     * looks, and every context of a seeded runtime takes it. */
    if (slow && cx->rt->seeded != NULL && ac__explore_hold(cx, to, e, system))
        return 0;
    return ac__deliver(cx, a, e);
}

/* Whether an outside send must be refused: shutdown closed the runtime.
 * Relaxed: shutdown waits for every external context to go offline after
 * setting the flag, so a send that misses it is still handled. */
static inline bool closed_to(const ac_ctx *cx, unsigned how)
{
    return !(how & SEND_SYSTEM) && cx->worker == NULL &&
           atomic_load_explicit(&cx->rt->closing, memory_order_relaxed);
}

static TURN_INLINE int send_env_body(ac_ctx *cx, const ac_addr *to, ac__env *e, unsigned how,
                                     const ac_actor_type *type, bool slow)
{
    if (slow)
        ac__enter(cx);
    int rc;
    if (slow && closed_to(cx, how)) {
        ac__pool_free(cx, e);
        rc = AC_ESHUTDOWN;
    } else {
        rc = send_to(cx, ac__route_find(&cx->rt->route, to), to, e, how, type, slow);
    }
    if (slow)
        ac__leave(cx);
    return rc;
}

#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int send_env_slow(ac_ctx *cx, const ac_addr *to, ac__env *e, unsigned how,
                         const ac_actor_type *type)
{
    return send_env_body(cx, to, e, how, type, true);
}

static int send_env(ac_ctx *cx, const ac_addr *to, ac__env *e, unsigned how,
                    const ac_actor_type *type)
{
    /* The test ac__enter made of cx->worker, made of a word that also
     * says whether sends are traced. */
    if (__builtin_expect(cx->send_slow, 0))
        return send_env_slow(cx, to, e, how, type);
    return send_env_body(cx, to, e, how, type, false);
}

/* A user's send: its arguments checked, then sent. A target that is gone
 * is counted and shown as a dead letter either way; only a checked send
 * returns AC_ENOTFOUND for it. */
static inline int send_user(ac_ctx *cx, const ac_addr *to, ac_envelope *e,
                            const ac_actor_type *type, unsigned how)
{
    if (e == NULL)
        return AC_EINVAL;
    if (cx == NULL)
        return AC_EINVAL;  /* cannot even return e to a pool */
    if (to == NULL) {
        ac_envelope_free(cx, e);
        return AC_EINVAL;
    }
    if (e->tag >= AC_TAG_SYSTEM) {
        ac_envelope_free(cx, e);
        return AC_EINVAL;  /* system tags are not for users */
    }
    return send_env(cx, to, ac__env_of(e), how, type);
}

int ac_send(ac_ctx *cx, const ac_addr *to, ac_envelope *e)
{
    return send_user(cx, to, e, NULL, SEND_USER);
}

int ac_send_typed(ac_ctx *cx, const ac_addr *to, const ac_actor_type *type, ac_envelope *e)
{
    return send_user(cx, to, e, type, SEND_USER);
}

int ac_send_checked(ac_ctx *cx, const ac_addr *to, const ac_actor_type *type, ac_envelope *e)
{
    return send_user(cx, to, e, type, SEND_CHECKED);
}

int ac__send_system(ac_ctx *cx, const ac_addr *to, ac__env *e)
{
    return send_env(cx, to, e, SEND_SYSTEM, NULL);
}

int ac__send_found(ac_ctx *cx, ac__actor *a, const ac_addr *to, ac_envelope *e)
{
    /* As ac_send, slow copy (an outside thread's): online already, the
     * lookup done by the caller in the same online stretch. */
    ac__enter(cx);
    int rc;
    if (closed_to(cx, SEND_USER)) {
        ac__pool_free(cx, ac__env_of(e));
        rc = AC_ESHUTDOWN;
    } else {
        rc = send_to(cx, a, to, ac__env_of(e), SEND_USER, NULL, true);
    }
    ac__leave(cx);
    return rc;
}

int ac__send_counted(ac_ctx *cx, const ac_addr *to, ac__env *e)
{
    ac__enter(cx);
    ac__actor *a = ac__route_lookup(&cx->rt->route, to);
    int rc;
    if (a == NULL) {
        ac__refuse(cx, to, e, AC_ENOTFOUND);
        ac__pool_free(cx, e);
        rc = AC_ENOTFOUND;
    } else {
        AC__COUNT(cx, sends, 1);
        e->flags |= AC__ENV_COUNTED;  /* it ends as a message or a dead letter */
        rc = ac__deliver(cx, a, e);
    }
    ac__leave(cx);
    return rc;
}

void ac__addr_fresh(ac_ctx *cx, ac_addr *out)
{
    ac__addr_next(&cx->addrs, out);
}

ac__actor *ac__lookup(ac_ctx *cx, const ac_addr *addr)
{
    return ac__route_lookup(&cx->rt->route, addr);
}

ac__actor *ac__current(const ac_ctx *cx)
{
    return cx->current;
}

ac__env *ac__handling(const ac_ctx *cx)
{
    return cx->handling;
}

void ac__env_release(ac_ctx *cx, ac__actor *a, ac__env *e)
{
    sync_tail(cx, a);
    /* Relaxed: the owner's own (mailbox.c). */
    if (e != atomic_load_explicit(&a->tail, memory_order_relaxed))
        ac__pool_free(cx, e);
}

ac__env *ac__system_envelope(ac_ctx *cx, uint32_t tag, size_t size)
{
    ac__env *e = ac__pool_alloc(cx, size);
    if (e != NULL) {
        e->tag = tag;
        e->flags = 0;
    }
    return e;
}

ac__env *ac__stop_envelope(ac_ctx *cx)
{
    return ac__system_envelope(cx, AC__TAG_STOP, 0);
}

int ac_stop(ac_ctx *cx, const ac_addr *to)
{
    if (cx == NULL || to == NULL)
        return AC_EINVAL;
    ac__env *e = ac__stop_envelope(cx);
    if (e == NULL)
        return AC_ENOMEM;
    return send_env(cx, to, e, SEND_SYSTEM, NULL);
}

typedef struct kill_note {
    int reason, code;
} kill_note;

int ac__kill(ac_ctx *cx, ac__actor *a, int reason, int code)
{
    ac__env *e = ac__system_envelope(cx, AC__TAG_KILL, sizeof(kill_note));
    if (e == NULL)
        return AC_ENOMEM;
    /* The reason travels in the envelope: the flag only makes the actor
     * drop what is queued in front of it. Of two kills, the first to
     * arrive decides. */
    kill_note *k = ac_envelope_payload(ac__env_pub(e));
    k->reason = reason;
    k->code = code;
    ac__set_flags(a, AC__ACTOR_KILLED);
    return ac__deliver(cx, a, e);
}

int ac_kill(ac_ctx *cx, const ac_addr *to)
{
    if (cx == NULL || to == NULL)
        return AC_EINVAL;
    ac__enter(cx);
    ac__actor *a = ac__route_lookup(&cx->rt->route, to);
    int rc = a ? ac__kill(cx, a, AC_REASON_KILLED, 0) : AC_ENOTFOUND;
    ac__leave(cx);
    return rc;
}

int ac_trap_exits(ac_ctx *cx, bool on)
{
    if (cx == NULL || cx->current == NULL)
        return AC_ESTATE;
    if (on)
        ac__set_flags(cx->current, AC__ACTOR_TRAP_EXITS);
    else
        ac__clear_flags(cx->current, AC__ACTOR_TRAP_EXITS);
    return 0;
}

int ac_stop_self(ac_ctx *cx)
{
    if (cx == NULL || cx->current == NULL)
        return AC_ESTATE;
    cx->current->oflags |= AC__OWN_STOP_REQUESTED;  /* the owner's own */
    return 0;
}

int ac_fail(ac_ctx *cx, int code)
{
    if (cx == NULL || cx->current == NULL)
        return AC_ESTATE;
    cx->current->oflags |= AC__OWN_FAIL_REQUESTED;
    cx->current->exit_code = code != 0 ? code : AC_EFAILED;
    return 0;
}

const ac_addr *ac_self(const ac_ctx *cx)
{
    return cx && cx->current ? &cx->current->addr : NULL;
}

ac_runtime *ac_ctx_runtime(const ac_ctx *cx)
{
    return cx ? cx->rt : NULL;
}

/* A bounded actor counts a message out; under drop-oldest it drops the
 * oldest while senders have asked it to. Returns true to drop `e`. An
 * urgent message is shed only when no normal one waits behind it in the
 * normal lane: normal mail goes first. */
static bool bound_release(ac_ctx *cx, ac__actor *a, ac__env *e, bool urgent)
{
    ac__bound *b = ac__bound_of(a);
    atomic_fetch_sub_explicit(&b->len, 1, memory_order_relaxed);
    uint32_t shed = atomic_load_explicit(&b->shed, memory_order_relaxed);
    if (urgent && shed > 0) {
        sync_tail(cx, a);  /* has_next reads it from the block */
        if (ac__mailbox_has_next(a))
            return false;
    }
    while (shed > 0) {
        if (atomic_compare_exchange_weak_explicit(&b->shed, &shed, shed - 1,
                                                  memory_order_relaxed,
                                                  memory_order_relaxed)) {
            ac__dead_letter(cx, &a->addr, e, AC_EFULL);
            return true;
        }
    }
    return false;
}

/* A system message reaches the actor's dispatch; without a hook for it,
 * the dispatch says AC_EBADTAG and the message is counted, not fatal.
 * Counted here rather than in handle(), off the path of user messages: a
 * reply a program sent as a message (it was counted as a send), the rest
 * as system messages. */
static int dispatch_system(ac_ctx *cx, ac__actor *a, ac__env *e)
{
    int rc;
    int verdict = (e->flags & AC__ENV_SCREEN) ? ac__services_screen(cx, a, e) : AC__SCREEN_PASS;
    if (verdict != AC__SCREEN_PASS) {
        /* Withdrawn (its monitor or link was taken back after it was
         * queued): it reaches no hook, as one the actor has no hook for.
         * Taken: the service acted on it (a link's exit killed us). */
        if (verdict == AC__SCREEN_VOID)
            AC__COUNT(cx, unhandled, 1);
        rc = 0;
    } else if (ac__services_deliver(cx, a, e, &rc)) {
        if (rc == AC__DEAD_LETTERED)
            return 0;  /* the service counted it */
    } else {
        rc = ac__type(a)->dispatch(a->state, cx, ac__env_pub(e));
        if (rc == AC_EBADTAG) {
            AC__COUNT(cx, unhandled, 1);
            rc = 0;
        }
    }
    ac__count_taken(cx, e);
    return rc;
}


/* A user message the actor's current behaviour does not take: counted
 * here, handled (and counted in `messages`) as any other, so that the
 * counters still reconcile. The generated dispatch calls it, off the
 * path of every message a behaviour takes. */
int ac_unhandled(ac_ctx *cx)
{
    if (cx == NULL)
        return AC_EINVAL;
    if (ac__current(cx) == NULL)
        return AC_ESTATE;
    AC__COUNT(cx, unhandled, 1);
    return 0;
}

/* How handling one envelope ended. HANDLED_STASHES: the actor has
 * stashed (now or before), HANDLED_REPLAY: and a stash was taken up
 * again; either sends a plain turn onto the stash's path. HANDLED_MUTED,
 * or'ed into one of the others: the handler sent to an overloaded actor,
 * so the turn ends here (mute.c). */
enum { HANDLED_FREED, HANDLED, HANDLED_STASHES, HANDLED_REPLAY, HANDLED_MUTED = 4 };

/* A message to an actor that is dead or being killed. */
static void handle_dead(ac_ctx *cx, ac__actor *a, ac__env *e, unsigned f)
{
    /* Killed: what is queued in front of the kill is dropped; the kill's
     * envelope, which carries the reason, ends the actor. */
    if (!(f & AC__ACTOR_DEAD) && e->tag == AC__TAG_KILL) {
        const kill_note *k = ac_envelope_payload(ac__env_pub(e));
        die(cx, a, k->reason, k->code);
    } else if (counted_env(e)) {
        ac__dead_letter(cx, &a->addr, e, AC_ENOTFOUND);  /* a runtime message is nobody's loss */
    }
}

/* A message to a live actor of `type` (the turn reads it once). Returns
 * the owner's flags after it, which say whether a handler took a stash up
 * again (AC__OWN_REPLAY). */
static TURN_INLINE unsigned handle_live(ac_ctx *cx, ac__actor *a, const ac_actor_type *type,
                                        ac__env *e)
{
    if (e->tag >= AC__TAG_STOP) {
        /* A service may take a stop over (a supervisor stops its children
         * first, one at a time, and then itself): the actor lives on. An
         * urgent wake-up has done its work by now. */
        if (e->tag == AC__TAG_STOP) {
            int rc = 0;
            if (ac__services_stop(cx, a, &rc))
                (void)after_handler(cx, a, rc);
            else
                die(cx, a, AC_REASON_NORMAL, 0);  /* its stash goes with it */
        }
        return a->oflags;
    }
    int rc;
    unsigned f;
    if (e->tag >= AC_TAG_SYSTEM) {
        rc = dispatch_system(cx, a, e);  /* counts it itself */
        f = after_handler(cx, a, rc);
    } else {
        /* Set through the death the handler may cause: a stash's died
         * hook must not free the envelope this turn still reads. */
        cx->handling = e;
        rc = type->dispatch(a->state, cx, ac__env_pub(e));
        /* A stashed message is counted when it is handled for good, or
         * as a dead letter: ac_stash took this count back already
         * (stash.c), so no test here. */
        AC__COUNT(cx, messages, 1);
        f = after_handler(cx, a, rc);
        cx->handling = NULL;
    }
    return f;
}

static TURN_COLD void take_urgent(ac_ctx *cx, ac__actor *a);

/* Handles one envelope other than the finalize one. `outer`: one taken
 * from the normal lane (or a stash's replay), in front of which the urgent
 * lane is taken when its flag is up; the flag shares the test of DEAD and
 * KILLED, so a normal message pays nothing for it. */
static TURN_INLINE int handle_one(ac_ctx *cx, ac__actor *a, const ac_actor_type *type,
                                  ac__env *e, bool outer)
{
    if ((e->flags & AC__ENV_BOUNDED) && bound_release(cx, a, e, !outer))
        return HANDLED;
    unsigned f = ac__flags(a);
    if (f & (AC__ACTOR_DEAD | AC__ACTOR_KILLED | AC__ACTOR_URGENT)) {
        if (outer && (f & AC__ACTOR_URGENT)) {
            take_urgent(cx, a);
            f = ac__flags(a);
        }
        if (f & (AC__ACTOR_DEAD | AC__ACTOR_KILLED)) {
            handle_dead(cx, a, e, f);
            return HANDLED;
        }
    }
    f = handle_live(cx, a, type, e);
    if (!(f & (AC__OWN_STASHES | AC__OWN_MUTING)))
        return HANDLED;  /* REPLAY implies STASHES: one test a message */
    int h = !(f & AC__OWN_STASHES)    ? HANDLED
            : (f & AC__OWN_REPLAY) ? HANDLED_REPLAY
                                   : HANDLED_STASHES;
    return (f & AC__OWN_MUTING) ? h | HANDLED_MUTED : h;
}

/* Handles what waits in the urgent lane, oldest first. One take: what is
 * sent meanwhile waits for the next message or its own wake-up, so an
 * actor sending itself urgent mail still ends its turn. A replay a handler
 * here asks for is seen by the turn in the flags of the message in hand. */
static TURN_COLD void take_urgent(ac_ctx *cx, ac__actor *a)
{
    for (ac__env *u = ac__mailbox_take_urgent(a), *next; u != NULL; u = next) {
        /* Relaxed: ours since the take. */
        next = atomic_load_explicit(&u->next, memory_order_relaxed);
        (void)handle_one(cx, a, ac__type(a), u, false);
        /* Off the normal lane: no pop frees it; a stash that took it
         * frees it when it is taken up again (ac__env_release). */
        if (!(u->flags & AC__ENV_STASHED))
            ac__pool_free(cx, u);
    }
}

/* Handles one envelope. */
static TURN_INLINE int handle(ac_ctx *cx, ac__actor *a, const ac_actor_type *type, ac__env *e)
{
    if (e->tag == AC__TAG_FINALIZE) {
        /* Nothing can be pushed now (qsbr.c), and the last pushes are
         * visible: what the urgent lane holds ends as dead letters. */
        if (ac__flags(a) & AC__ACTOR_URGENT)
            take_urgent(cx, a);
        sync_tail(cx, a);  /* ac__actor_free frees the tail, this envelope */
        cx->tail = NULL;
        ac__actor_free(cx, a);  /* the last envelope it will ever get */
        return HANDLED_FREED;
    }
    return handle_one(cx, a, type, e, true);
}

/* A message an observed turn takes, before it is handled: counted for its
 * type, the mailbox's length (a bound's count, which still includes it)
 * kept when it is the turn's longest, a sampled send's flow ended. */
static TURN_COLD void observe_message(ac_ctx *cx, ac__actor *a, ac__env *e)
{
    if (e->tag < AC__TAG_STOP)
        cx->turn.handled++;  /* not the runtime's own: stop, kill, finalize */
    if (a->attrs & AC__ATTR_BOUNDED) {
        /* Relaxed: a counter read by its consumer, as bound_release does. */
        uint32_t len = atomic_load_explicit(&ac__bound_of(a)->len, memory_order_relaxed);
        if (len > cx->turn.hwm)
            cx->turn.hwm = len;
    }
    if (e->flags & AC__ENV_FLOW) {
        e->flags &= ~AC__ENV_FLOW;  /* a stash's replay is not a second end */
        ac__trace_event(cx, AC__EV_RECV, ac__now_ns(), (uint64_t)(uintptr_t)e, NULL, 0, 0);
    }
}

/* What a plain loop returns when the actor stashed: go on with the
 * stash's loop. */
#define TURN_STASHES ((int)AC__TURN_MUTED + 1)

/* Ends a plain loop's batch: its tail stored back, once, where
 * mark-empty, has_next and the stash's loop read it. */
static TURN_INLINE void end_batch(ac_ctx *cx, ac__actor *a)
{
    ac__mailbox_set_tail(a, cx->tail);
    cx->tail = NULL;
}

/* The loop of a turn. `observed` and `stashes` are constants at each
 * call. The plain loop (`stashes` false: the actor never stashed when
 * the turn began) pops without the stash's test and asks no service for
 * replays; the first message a handler stashes sends it to the stash's
 * loop (TURN_STASHES), which goes on from there with *n and *replay.
 * The plain loop writes nothing to the actor's block for a message: the
 * block's `tail` is on the line where every sender exchanges `head`
 * (actor.h), so the tail it moves is the context's (cx->tail), stored
 * back once (end_batch), and sync_tail stores it for the rare paths that
 * read it from the block (a death, a finalize, the stash). */
static TURN_INLINE int turn_loop(ac_ctx *cx, ac__actor *a, const ac_actor_type *type,
                                 unsigned *batch, unsigned *n, bool *replay, bool observed,
                                 bool stashes)
{
    if (!stashes)
        cx->tail = ac__mailbox_tail(a);  /* NULL until the first pop */
    for (;;) {
        ac__env *e = NULL;
        bool replayed = false;
        if (*n < *batch) {
            if (stashes && *replay)
                *replay = replayed = (e = ac__stash_replay(cx, a)) != NULL;
            if (e == NULL)
                e = stashes ? ac__mailbox_pop(cx, a) : ac__mailbox_pop_at(cx, a, &cx->tail);
        }
        if (e == NULL) {
            if (!stashes)
                end_batch(cx, a);
            /* Out of batch with more to do, or drained (or a producer is
             * mid-push, which ac__turn_release then notices). */
            return *n == *batch && (*replay || ac__mailbox_has_next(a)) ? AC__TURN_MORE
                                                                       : AC__TURN_DRAINED;
        }
        ++*n;
        if (observed)
            observe_message(cx, a, e);
        int h = handle(cx, a, type, e);
        if (h == HANDLED_FREED)
            return AC__TURN_FREED;  /* handle's finalize let go of cx->tail */
        if (h != HANDLED) {
            if (h & HANDLED_MUTED) {
                *batch = *n;  /* the turn ends after this message */
                h &= ~HANDLED_MUTED;
            }
            *replay |= h == HANDLED_REPLAY;
            if (!stashes && h != HANDLED) {
                end_batch(cx, a);
                return TURN_STASHES;  /* e came from the mailbox: its pop frees it */
            }
        }
        if (replayed && !(e->flags & AC__ENV_STASHED))
            ac__env_release(cx, a, e);
    }
}

/* One turn. `observed` is a constant at each of the two calls, so the
 * plain turn has nothing of the observed one's work in it. */
static TURN_INLINE ac__turn turn(ac_ctx *cx, ac__actor *a, unsigned batch, unsigned *handled,
                                 bool observed)
{
    cx->current = a;
    unsigned n = 0;
    /* Read once a turn: it is on the line senders write (actor.h).
     * Relaxed: ac__type; OVERLOADED changes only by this actor's hand. */
    uintptr_t w = atomic_load_explicit(&a->typew, memory_order_relaxed);
    const ac_actor_type *type = (const ac_actor_type *)(w & ~(uintptr_t)AC__TYPEW_BITS);
    /* Messages taken up again from a stash go before the mailbox: left
     * by an earlier turn that ran out of batch, or set by a handler of
     * this one (handle says so, from the flags it reads anyway). */
    unsigned of = a->oflags;
    bool replay = false;  /* REPLAY implies STASHES */
    int end = TURN_STASHES;
    /* Lowered to the messages handled when a handler meets an overloaded
     * actor (turn_loop). */
    unsigned limit = batch;
    if (!(of & AC__OWN_STASHES))
        end = turn_loop(cx, a, type, &limit, &n, &replay, observed, false);
    else
        replay = (of & AC__OWN_REPLAY) != 0;
    if (end == TURN_STASHES)
        end = turn_loop(cx, a, type, &limit, &n, &replay, observed, true);
    cx->current = NULL;
    *handled = n;
    /* Back-pressure (mute.c): a turn that used up its batch (or was cut
     * short by a mute), or of an actor that was overloaded. OVERLOADED
     * changes only by this actor's own hand, so w still tells. */
    if (__builtin_expect(n >= limit || (w & AC__TYPEW_OVERLOADED), 0))
        return ac__mute_turn_end(cx, a, (ac__turn)end, n, batch);
    return (ac__turn)end;
}

/* A turn recorded as a slice of the trace and in its type's counters. Its
 * actor may be freed by the turn (its finalize): what the end records is
 * taken first. */
static TURN_COLD ac__turn turn_observed(ac_ctx *cx, ac__actor *a, unsigned batch,
                                        unsigned *handled)
{
    if (cx->worker != NULL)
        ac__sched_note_handoff(cx, a);  /* ac_stats.handoffs: observed only */
    cx->turn.type = ac__type(a);
    cx->turn.addr = ac__addr_short(&a->addr);
    cx->turn.handled = 0;
    cx->turn.hwm = 0;
    cx->turn.t0 = ac__now_ns();
    ac__turn end = turn(cx, a, batch, handled, true);
    uint64_t ns = ac__now_ns() - cx->turn.t0;
    if (cx->observe & AC__OBS_TRACE)
        ac__trace_event(cx, AC__EV_TURN, cx->turn.t0, ns, cx->turn.type, cx->turn.addr,
                        *handled);
    if (cx->observe & AC__OBS_TYPES)
        ac__typestats_turn(cx, cx->turn.type, cx->turn.handled, ns, cx->turn.hwm);
    return end;
}

/* The plain turn, on its own: inlined into ac__actor_turn beside the
 * call of the observed one, it saved more registers on every turn (4
 * instructions a ring hop, callgrind). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static ac__turn turn_plain(ac_ctx *cx, ac__actor *a, unsigned batch, unsigned *handled)
{
    return turn(cx, a, batch, handled, false);
}

ac__turn ac__actor_turn(ac_ctx *cx, ac__actor *a, unsigned batch, unsigned *handled)
{
    /* The one test a turn pays when nothing is observed. */
    if (__builtin_expect(cx->observe != 0, 0))
        return turn_observed(cx, a, batch, handled);
    return turn_plain(cx, a, batch, handled);
}

bool ac__turn_release(ac__actor *a)
{
    /* Marking fails if a producer got in since the last pop: then the
     * actor stays scheduled, and the caller runs it again. No test of
     * the tail's link first: a node behind the tail means the head has
     * moved past it, which mark_empty's own compare sees. */
    return ac__mailbox_mark_empty(a);
}
