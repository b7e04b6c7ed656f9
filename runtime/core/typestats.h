/*
 * typestats.h — per-actor-type counters (typestats.c): each context's
 * table of the types whose turns it ran.
 */
#ifndef AC_CORE_TYPESTATS_H
#define AC_CORE_TYPESTATS_H

#include "observe.h"

#include <stdint.h>
#include <stdio.h>

/* Makes and frees a context's table; out of memory, the context counts
 * nothing (ac__typestats_ctx_init clears its bit). */
void ac__typestats_ctx_init(ac_ctx *cx);
void ac__typestats_ctx_fini(ac_ctx *cx);
/* One turn of an actor of `type` ended on cx: `handled` messages, `ns`
 * long, the longest mailbox it saw `hwm`. The owner of cx only. */
void ac__typestats_turn(ac_ctx *cx, const ac_actor_type *type, uint32_t handled,
                        uint64_t ns, uint32_t hwm);
/* An actor of `type` failed, on cx's thread. */
void ac__typestats_failed(ac_ctx *cx, const ac_actor_type *type);
/* AC_STATS=1: one line a type. */
void ac__typestats_print(ac_runtime *rt, FILE *f);

#endif /* AC_CORE_TYPESTATS_H */
