/*
 * mute.h — back-pressure: senders to an overloaded actor are muted (not
 * scheduled) until it keeps up again (mute.c; design in runtime/README.md,
 * "Back-pressure").
 */
#ifndef AC_CORE_MUTE_H
#define AC_CORE_MUTE_H

#include "actor.h"
#include "runtime.h"

#include <stdbool.h>

void ac__mute_init(ac_runtime *rt);
void ac__mute_fini(ac_runtime *rt);
/* A send from a handler found `to` overloaded: notes it, unless the
 * running actor may not be muted. Off the send path's common case. */
void ac__mute_note(ac_ctx *cx, ac__actor *to);
/* The end of a turn of `a` whose batch ran out, that was overloaded or
 * that noted a mute: keeps OVERLOADED true, releases the mutees when it
 * keeps up, and mutes `a` when it noted one (AC__TURN_MUTED: the
 * registry holds it now). `end` is the turn's own result. */
ac__turn ac__mute_turn_end(ac_ctx *cx, ac__actor *a, ac__turn end, unsigned n, unsigned batch);
/* `a` died: if it was overloaded, its mutees run again. */
void ac__mute_died(ac_ctx *cx, ac__actor *a);

#endif /* AC_CORE_MUTE_H */
