/*
 * envelope.h — the runtime's view of an envelope (ac_envelope in actorc.h):
 * its queue link, tag, pool class and flags, and the system tags only the
 * runtime sends.
 */
#ifndef AC_CORE_ENVELOPE_H
#define AC_CORE_ENVELOPE_H

#include "actorc.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ac__env {
    _Atomic(struct ac__env *) next;
    uint32_t tag;
    uint16_t klass;
    uint16_t flags;
} ac__env;

_Static_assert(sizeof(ac__env) == sizeof(ac_envelope), "envelope views differ");
_Static_assert(sizeof(ac__env) == AC_ENVELOPE_HEADER_SIZE, "header size");
_Static_assert(offsetof(ac__env, tag) == offsetof(ac_envelope, tag), "tag offset");
_Static_assert(offsetof(ac__env, klass) == offsetof(ac_envelope, ac_class), "class");
_Static_assert(sizeof(_Atomic(ac__env *)) == sizeof(void *), "atomic pointer size");

static inline ac__env *ac__env_of(ac_envelope *e) { return (ac__env *)(void *)e; }
static inline ac_envelope *ac__env_pub(ac__env *e) { return (ac_envelope *)(void *)e; }

/* System tags live at the top of the tag space; generated tags start at 0. */
#define AC__TAG_STOP 0xFFFFFFF0u
#define AC__TAG_FINALIZE 0xFFFFFFF1u
#define AC__TAG_KILL 0xFFFFFFF2u     /* wakes a killed actor (ac_kill) */
/* Wakes an actor that urgent mail waits for (mailbox.c): it carries
 * nothing, reaches no hook and is counted nowhere. */
#define AC__TAG_URGENT 0xFFFFFFF3u

/* Envelope flags (ac__env.flags). */
enum {
    AC__ENV_BOUNDED = 1u << 0,          /* counted in its target's bound */
    /* A runtime message a program sent (a reply, ac__send_counted): it was
     * counted as a send, so it ends as a message or a dead letter, never
     * as a system message. */
    AC__ENV_COUNTED = 1u << 1,
    /* A down or an exit the service that sent it (its `screens` tag) must
     * confirm before it reaches the actor or the inbox: the monitor or
     * link it tells of may have been taken back since it was queued. */
    AC__ENV_SCREEN = 1u << 2,
    /* Held by a stash (stash.c): handled once and deferred, so
     * the mailbox that still has it as its stub must not free it, and the
     * handling that deferred it is not counted as a message. */
    AC__ENV_STASHED = 1u << 3,
    /* Sampled by the trace (trace.c): its send was recorded as a flow's
     * start, with the envelope's address as the flow's id, and the turn
     * that handles it records the flow's end. */
    AC__ENV_FLOW = 1u << 4,
    /* A request an ask sent (ac_ask*, ac_ask_wait*): its reply_to names an
     * asker that waits. Dropped for want of its actor (queued at a death,
     * held in a dying stash, sent on to an address that is gone), it is
     * answered at once (ac__dead_letter, services/ask.c), so the asker
     * does not sit out its timeout; a plain send of a request, whose
     * reply_to may be nil or stale, is not marked. */
    AC__ENV_ASKED = 1u << 5
};

#endif /* AC_CORE_ENVELOPE_H */
