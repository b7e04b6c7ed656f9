/*
 * inbox.h — inboxes: addresses for threads that are not actors.
 */
#ifndef AC_CORE_INBOX_H
#define AC_CORE_INBOX_H

#include "actor.h"

/* A push found an inbox's mailbox empty: wake its thread. */
void ac__inbox_wake(ac_ctx *cx, ac__actor *a);

/* The context that made the inbox `a`: the thread it belongs to. */
const ac_ctx *ac__inbox_owner(ac__actor *a);

#endif /* AC_CORE_INBOX_H */
