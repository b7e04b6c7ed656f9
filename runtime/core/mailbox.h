/*
 * mailbox.h — an actor's lock-free MPSC mailbox; the push that makes it
 * non-empty is the one that schedules the actor.
 */
#ifndef AC_CORE_MAILBOX_H
#define AC_CORE_MAILBOX_H

#include "actor.h"

#include <stdbool.h>

void ac__mailbox_init(ac__actor *a, bool owned);
/* For an inbox, whose receiver pushes its stub back (inbox.c): a stub of
 * the caller's, a whole link, instead of `tail`; marked empty. */
void ac__mailbox_init_stub(ac__actor *a, ac__env *stub);
bool ac__mailbox_push(ac__actor *a, ac__env *e);   /* true: was empty */
/* pop leaves a node the handler stashed (AC__ENV_STASHED) to the stash:
 * the pop of an actor that has stashed (AC__OWN_STASHES), so that the
 * others (pop_at) pay no test. */
ac__env *ac__mailbox_pop(ac_ctx *cx, ac__actor *a);
/* A turn's pops without a store to the block (actor.c: turn_loop): the
 * consumer's tail is kept in *at, NULL before the actor's first pop, as
 * ac__mailbox_tail gives it; each pop frees the node it moves past.
 * ac__mailbox_set_tail stores it back, which must come before
 * anything else reads the tail: mark_empty, has_next, pop, the stash
 * (ac__env_release), a death (the failed tag) or a finalize. */
ac__env *ac__mailbox_pop_at(ac_ctx *cx, ac__actor *a, ac__env **at);
ac__env *ac__mailbox_tail(ac__actor *a);
void ac__mailbox_set_tail(ac__actor *a, ac__env *tail);
bool ac__mailbox_mark_empty(ac__actor *a);
bool ac__mailbox_has_next(ac__actor *a);
/* After the actor's grace period (qsbr.c: no push can follow): whether
 * its owner released it empty, so that nobody owns it or ever will. */
bool ac__mailbox_released_empty(ac__actor *a);
/* The urgent lane (AC__ATTR_URGENT actors only). push_urgent returns true
 * when it set AC__ACTOR_URGENT: the caller must then push a wake-up
 * (AC__TAG_URGENT) through the normal lane. take_urgent clears the flag
 * and returns what waits, oldest first, linked through `next`. */
bool ac__mailbox_push_urgent(ac__actor *a, ac__env *e);
ac__env *ac__mailbox_take_urgent(ac__actor *a);

#endif /* AC_CORE_MAILBOX_H */
