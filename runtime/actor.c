/*
 * actor.c — spawning, sending, stopping, and one turn of an actor.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

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
        ac__qsbr_orphan(cx);
        ac__qsbr_offline(cx);
        if (retired)
            ac__notify_work(cx->rt);
        /* Spawning from outside grows the table with no worker awake to
         * free what it outgrew. */
        ac__qsbr_reclaim_tables(cx);
    }
}

static ac__actor *actor_new(ac_ctx *cx, const ac_actor_type *type)
{
    size_t size = offsetof(ac__actor, state) + type->state_size;
    ac__actor *a;
    uint16_t klass;
    if (type->state_align > 16) {
        /* Pool blocks are 16-byte aligned: stricter states get their own. */
        void *p = NULL;
        if (posix_memalign(&p, type->state_align, size) != 0)
            return NULL;
        a = p;
        klass = AC__CLASS_HUGE;
    } else {
        a = ac__block_alloc(cx, size, &klass);
        if (a == NULL)
            return NULL;
    }
    memset(a, 0, size);
    a->type = type;
    a->klass = klass;
    return a;
}

void ac__actor_free(ac_ctx *cx, ac__actor *a)
{
    if (a->tail != ac__stub_of(a))
        ac__pool_free(cx, a->tail);
    ac__block_free(cx, a, a->klass);
}

/* The actor stops (code 0) or fails. Its remaining messages are dropped as
 * they are popped; it is freed once its grace period is over. */
static void die(ac_ctx *cx, ac__actor *a, int code)
{
    a->flags |= AC__ACTOR_DEAD;
    a->exit_code = code;
    if (code == 0 && a->type->on_stop)
        a->type->on_stop(a->state, cx);
    ac__route_remove(&cx->rt->route, a);
    if (code == 0)
        AC__COUNT(cx, stopped, 1);
    else
        AC__COUNT(cx, failed, 1);
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

static void after_handler(ac_ctx *cx, ac__actor *a, int rc)
{
    if (rc != 0 || (a->flags & AC__ACTOR_FAIL_REQUESTED))
        die(cx, a, exit_code_of(a, rc));
    else if (a->flags & AC__ACTOR_STOP_REQUESTED)
        die(cx, a, 0);
}

int ac_spawn(ac_ctx *cx, const ac_actor_type *type, const void *args, ac_addr *out)
{
    if (cx == NULL || type == NULL || out == NULL || type->dispatch == NULL)
        return AC_EINVAL;
    if (type->abi != AC_ABI_VERSION)
        return AC_EINVAL;
    ac_runtime *rt = cx->rt;
    /* Relaxed: a spawn racing with the start of shutdown is stopped by it
     * either way; the flag only refuses work once shutdown is known. */
    if (atomic_load_explicit(&rt->stopping, memory_order_relaxed))
        return AC_ESHUTDOWN;
    ac__actor *a = actor_new(cx, type);
    if (a == NULL)
        return AC_ENOMEM;
    /* The spawner owns the actor until its start hook has run: messages
     * sent to it meanwhile queue up without scheduling it. */
    ac__mailbox_init(a, true);
    ac__addr_next(&cx->addrs, &a->addr);

    ac__enter(cx);
    int rc = ac__route_insert(&rt->route, a);
    if (rc != 0) {
        ac__leave(cx);
        ac__block_free(cx, a, a->klass);
        return rc;
    }
    AC__COUNT(cx, spawned, 1);
    if (type->on_start) {
        ac__actor *caller = cx->current;
        cx->current = a;
        rc = type->on_start(a->state, cx, args);
        after_handler(cx, a, rc);
        if (rc == 0 && (a->flags & AC__ACTOR_FAIL_REQUESTED))
            rc = exit_code_of(a, 0);
        cx->current = caller;
    }
    /* Hand the actor to the scheduler: run it if messages arrived during
     * the start hook (or, if it died there, to drop them). */
    if (rc == 0)
        *out = a->addr;
    if (!ac__mailbox_mark_empty(a))
        ac__schedule(cx, a);
    ac__leave(cx);
    return rc;
}

int ac__deliver(ac_ctx *cx, ac__actor *a, ac__env *e)
{
    if (ac__mailbox_push(a, e))
        ac__schedule(cx, a);
    return 0;
}

static int send_env(ac_ctx *cx, const ac_addr *to, ac__env *e, bool system)
{
    ac__enter(cx);
    int rc;
    /* Relaxed: shutdown waits for every external context to go offline
     * after setting the flag, so a send that misses it is still handled. */
    if (!system && cx->worker == NULL &&
        atomic_load_explicit(&cx->rt->closing, memory_order_relaxed)) {
        ac__pool_free(cx, e);
        rc = AC_ESHUTDOWN;
    } else {
        ac__actor *a = ac__route_lookup(&cx->rt->route, to);
        if (a == NULL) {
            ac__pool_free(cx, e);
            if (!system)
                AC__COUNT(cx, dead_letters, 1);
            rc = AC_ENOTFOUND;
        } else {
            if (!system)
                AC__COUNT(cx, sends, 1);
            rc = ac__deliver(cx, a, e);
        }
    }
    ac__leave(cx);
    return rc;
}

int ac_send(ac_ctx *cx, const ac_addr *to, ac_envelope *e)
{
    if (e == NULL)
        return AC_EINVAL;
    if (cx == NULL)
        return AC_EINVAL;  /* cannot even return e to a pool */
    if (to == NULL) {
        ac_envelope_free(cx, e);
        return AC_EINVAL;
    }
    if (e->tag >= AC__TAG_STOP) {
        ac_envelope_free(cx, e);
        return AC_EINVAL;  /* system tags are not for users */
    }
    return send_env(cx, to, ac__env_of(e), false);
}

ac__env *ac__stop_envelope(ac_ctx *cx)
{
    ac__env *e = ac__pool_alloc(cx, 0);
    if (e != NULL) {
        e->tag = AC__TAG_STOP;
        e->flags = 0;
    }
    return e;
}

int ac_stop(ac_ctx *cx, const ac_addr *to)
{
    if (cx == NULL || to == NULL)
        return AC_EINVAL;
    ac__env *e = ac__stop_envelope(cx);
    if (e == NULL)
        return AC_ENOMEM;
    return send_env(cx, to, e, true);
}

int ac_stop_self(ac_ctx *cx)
{
    if (cx == NULL || cx->current == NULL)
        return AC_ESTATE;
    cx->current->flags |= AC__ACTOR_STOP_REQUESTED;
    return 0;
}

int ac_fail(ac_ctx *cx, int code)
{
    if (cx == NULL || cx->current == NULL)
        return AC_ESTATE;
    cx->current->flags |= AC__ACTOR_FAIL_REQUESTED;
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

/* Handles one envelope. Returns false once the actor has been freed. */
static bool handle(ac_ctx *cx, ac__actor *a, ac__env *e)
{
    if (e->tag == AC__TAG_FINALIZE) {
        ac__actor_free(cx, a);  /* the last envelope it will ever get */
        return false;
    }
    if (a->flags & AC__ACTOR_DEAD) {
        if (e->tag != AC__TAG_STOP)
            AC__COUNT(cx, dead_letters, 1);
        return true;
    }
    if (e->tag == AC__TAG_STOP) {
        die(cx, a, 0);
        return true;
    }
    int rc = a->type->dispatch(a->state, cx, ac__env_pub(e));
    AC__COUNT(cx, messages, 1);
    after_handler(cx, a, rc);
    return true;
}

ac__turn ac__actor_turn(ac_ctx *cx, ac__actor *a, unsigned batch, unsigned *handled)
{
    cx->current = a;
    unsigned n = 0;
    ac__turn end;
    for (;;) {
        ac__env *e = n < batch ? ac__mailbox_pop(cx, a) : NULL;
        if (e == NULL) {
            /* Out of batch with more to do, or drained (or a producer is
             * mid-push, which ac__turn_release then notices). */
            end = n == batch && ac__mailbox_has_next(a) ? AC__TURN_MORE : AC__TURN_DRAINED;
            break;
        }
        n++;
        if (!handle(cx, a, e)) {
            end = AC__TURN_FREED;
            break;
        }
    }
    cx->current = NULL;
    *handled = n;
    return end;
}

bool ac__turn_release(ac__actor *a)
{
    /* Marking fails if a producer got in since the last pop: then the
     * actor stays scheduled, and the caller runs it again. */
    return !ac__mailbox_has_next(a) && ac__mailbox_mark_empty(a);
}
