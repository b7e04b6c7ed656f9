/*
 * trace.h — the execution trace (trace.c): each context's ring of events,
 * written as Chrome trace-event JSON when the runtime is destroyed.
 */
#ifndef AC_CORE_TRACE_H
#define AC_CORE_TRACE_H

#include "envelope.h"
#include "observe.h"

#include <stdint.h>

/* What an event records (ac__trace_event's `kind`). */
enum {
    AC__EV_TURN,    /* a slice: a turn, arg the messages it handled */
    AC__EV_PARK,    /* a slice: a worker asleep */
    AC__EV_SPAWN,   /* an instant */
    AC__EV_STOP,    /* an instant: a death, arg its exit code */
    AC__EV_FAIL,
    AC__EV_KILL,
    AC__EV_STEAL,   /* an instant: arg the victim worker */
    AC__EV_SEND,    /* a flow's start, val its id */
    AC__EV_RECV     /* its end, in the turn that handles the message */
};

/* Makes and frees a context's ring (cx->rt says how big); out of memory,
 * the context traces nothing (ac__trace_ctx_init clears its bit). */
void ac__trace_ctx_init(ac_ctx *cx);
void ac__trace_ctx_fini(ac_ctx *cx);
/* Records one event on cx's ring: `val` is a slice's duration (ns) or a
 * flow's id; `type` may be NULL. The owner of cx only: no lock. */
void ac__trace_event(ac_ctx *cx, unsigned kind, uint64_t ts, uint64_t val,
                     const ac_actor_type *type, uint32_t addr, uint32_t arg);
/* A send about to push e into the mailbox of an actor at `to`: one in
 * trace_flow_every becomes a flow (e is marked AC__ENV_FLOW). */
void ac__trace_send(ac_ctx *cx, ac__env *e);
/* Writes every context's events to the configured file: the workers have
 * stopped and no other thread is in the runtime. 0 or a negative AC_E*. */
int ac__trace_write(ac_runtime *rt);

#endif /* AC_CORE_TRACE_H */
