/*
 * qsbr.h — quiescent-state-based reclamation: a dead actor is freed only
 * after every context that could still hold it has passed a quiescent state.
 */
#ifndef AC_CORE_QSBR_H
#define AC_CORE_QSBR_H

#include "actor.h"

#include <stdbool.h>

void ac__qsbr_online(ac_ctx *cx);
void ac__qsbr_offline(ac_ctx *cx);
void ac__qsbr_quiescent(ac_ctx *cx);
bool ac__qsbr_retire(ac_ctx *cx, ac__actor *a);
void ac__qsbr_poll(ac_ctx *cx);
bool ac__qsbr_finalize_orphans(ac_ctx *cx);
void ac__qsbr_orphan(ac_ctx *cx);
void ac__qsbr_reclaim_tables(ac_ctx *cx);
bool ac__qsbr_all_offline_externals(ac_runtime *rt);
/* Waits until every reader online now has passed a quiescent state. The
 * caller must be offline (an external thread outside any runtime call). */
void ac__qsbr_synchronize(ac_ctx *cx);

#endif /* AC_CORE_QSBR_H */
