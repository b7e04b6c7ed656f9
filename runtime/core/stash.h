/*
 * stash.h — the stash (stash.c), part of an actor's turn: a handler defers
 * the message it is handling (ac_stash), and the turn takes the deferred
 * ones up again ahead of the mailbox (ac_unstash_all).
 */
#ifndef AC_CORE_STASH_H
#define AC_CORE_STASH_H

#include "actor.h"

int ac__stash_init(ac_runtime *rt);
/* Every actor died before this, and took its stash with it. */
void ac__stash_fini(ac_runtime *rt);
/* `a`, running on cx, has AC__OWN_REPLAY set: the next message it took
 * up again, which goes before its mailbox; NULL when none is left (the
 * flag is cleared then). The turn gives it back with ac__env_release once
 * handled, unless the handler stashed it again. */
ac__env *ac__stash_replay(ac_ctx *cx, ac__actor *a);
/* `a` dies on cx: what its stash still holds becomes dead letters. */
void ac__stash_died(ac_ctx *cx, ac__actor *a);
/* ac_stats.stashed and .stash_overflows, added into *out. */
void ac__stash_stats(ac_runtime *rt, ac_stats *out);

/* Gives back an envelope the stash took out of a's queue once nobody
 * holds it: unless it is still the mailbox's stub (a's tail), which the
 * mailbox frees when it moves past it (actor.c). */
void ac__env_release(ac_ctx *cx, ac__actor *a, ac__env *e);

#endif /* AC_CORE_STASH_H */
