/*
 * mailbox.h — an actor's lock-free MPSC mailbox; the push that makes it
 * non-empty is the one that schedules the actor.
 */
#ifndef AC_CORE_MAILBOX_H
#define AC_CORE_MAILBOX_H

#include "actor.h"

#include <stdbool.h>

void ac__mailbox_init(ac__actor *a, bool owned);
bool ac__mailbox_push(ac__actor *a, ac__env *e);   /* true: was empty */
ac__env *ac__mailbox_pop(ac_ctx *cx, ac__actor *a);
bool ac__mailbox_mark_empty(ac__actor *a);
bool ac__mailbox_has_next(ac__actor *a);

#endif /* AC_CORE_MAILBOX_H */
