/*
 * supervisors.c — supervisors (Erlang/OTP's supervisor behaviour): an actor
 * that starts children from specifications, monitors them, and restarts
 * them by strategy, within a restart intensity.
 *
 * A child keeps its address for the supervisor's whole life: a restart
 * spawns the new instance at the old address, which the death removed from
 * the routing table before the supervisor heard of it (die() unlinks, then
 * the services run: names first, so a named child's name is free again).
 *
 * The supervisor's dispatch is a small state machine:
 *   RUNNING     a down decides, by the child's restart policy and the
 *               strategy, what to restart; one-for-all and rest-for-one kill
 *               the affected siblings and move to RESTARTING;
 *   RESTARTING  waits until every killed sibling is down, then restarts
 *               the affected children in start order;
 *   STOPPING    (ac_supervisor_stop) stops the last running child, waits
 *               for its down, then the one before, then itself.
 * Downs whose reference is not a child's current monitor are stale (an
 * instance already replaced) and ignored. A child whose start fails in a
 * restart is tried again by a message to itself (SUP_RETRY), each try one
 * more restart against the intensity; once the runtime is shutting down,
 * nothing is restarted.
 */
#include "services.h"
#include "timers.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum { SUP_SHUTDOWN = 0, SUP_RETRY = 1 };

/* The service's state: once the runtime shuts down, no supervisor restarts
 * anything (OTP's too): a child whose restarts fail slowly would keep the
 * runtime from ever being quiescent, and shutdown waits for that. */
typedef struct sup_service {
    _Atomic bool shutting_down;
} sup_service;
enum { RUNNING, RESTARTING, STOPPING };

typedef struct child {
    ac_child_spec spec;        /* args and name point at our own copies */
    ac_addr addr;
    uint64_t ref;              /* the monitor of the current instance */
    bool running;
    bool killed;               /* killed by us; its down is expected */
    bool restart;              /* to restart when RESTARTING ends */
} child;

typedef struct sup {
    uint32_t strategy, max_restarts, within_ms;
    unsigned mode;
    size_t n, pending;         /* RESTARTING: killed children not yet down */
    child *c;
    uint64_t *stamps;          /* times of the last max_restarts + 1 restarts */
    size_t nstamps, stamp_at;
} sup;

typedef struct sup_state {
    sup *s;
} sup_state;

typedef struct start_args {
    const ac_supervisor_spec *spec;
    ac_addr *children;
} start_args;

static void free_sup(sup *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->n; i++) {
        free((void *)s->c[i].spec.args);
        free((void *)s->c[i].spec.name);
    }
    free(s->c);
    free(s->stamps);
    free(s);
}

static char *copy_str(const char *p)
{
    size_t n = strlen(p) + 1;
    char *q = malloc(n);
    if (q)
        memcpy(q, p, n);
    return q;
}

static int copy_spec(sup *s, const ac_supervisor_spec *spec)
{
    s->strategy = spec->strategy;
    s->max_restarts = spec->max_restarts;
    s->within_ms = spec->within_ms;
    /* s->n only once the array exists: free_sup walks s->n children. */
    s->c = calloc(spec->nchildren, sizeof *s->c);
    s->nstamps = (size_t)spec->max_restarts + 1;
    s->stamps = calloc(s->nstamps, sizeof *s->stamps);
    if ((s->c == NULL && spec->nchildren) || s->stamps == NULL)
        return AC_ENOMEM;
    s->n = spec->nchildren;
    for (size_t i = 0; i < s->n; i++) {
        const ac_child_spec *in = &spec->children[i];
        child *c = &s->c[i];
        c->spec = *in;
        c->spec.args = NULL;
        c->spec.name = NULL;
        if (in->args_size) {
            void *a = malloc(in->args_size);
            if (a == NULL)
                return AC_ENOMEM;
            memcpy(a, in->args, in->args_size);
            c->spec.args = a;
        }
        if (in->name && (c->spec.name = copy_str(in->name)) == NULL)
            return AC_ENOMEM;
    }
    return 0;
}

static int check_spec(const ac_supervisor_spec *spec)
{
    if (spec->strategy > AC_REST_FOR_ONE || spec->nchildren > AC_MAX_CHILDREN ||
        spec->max_restarts > AC_MAX_RESTARTS || (spec->nchildren && spec->children == NULL))
        return AC_EINVAL;
    for (size_t i = 0; i < spec->nchildren; i++) {
        const ac_child_spec *c = &spec->children[i];
        if (c->type == NULL || c->restart > AC_RESTART_TEMPORARY ||
            (c->args_size && c->args == NULL))
            return AC_EINVAL;
    }
    return 0;
}

/* Starts child i: at a fresh address the first time, at its own after. */
static int start_child(ac_ctx *cx, sup *s, size_t i, bool fresh)
{
    child *c = &s->c[i];
    ac_spawn_options o;
    memset(&o, 0, sizeof o);
    o.name = c->spec.name;
    ac_addr at = c->addr;
    int rc = ac__spawn_actor(cx, c->spec.type, c->spec.args, &o, fresh ? NULL : &at,
                             &c->addr);
    if (rc != 0)
        return rc;
    c->running = true;
    c->killed = false;
    /* A child that dies before this gives a `noproc` down: a down all the
     * same, with this reference. */
    return ac_monitor(cx, ac_self(cx), &c->addr, &c->ref);
}

/* Ends every running child, last started first: gracefully when the
 * supervisor stops normally, killed otherwise. */
static void end_children(ac_ctx *cx, sup *s, bool graceful)
{
    for (size_t i = s->n; i-- > 0;) {
        child *c = &s->c[i];
        if (!c->running)
            continue;
        c->running = false;
        if (graceful)
            (void)ac_stop(cx, &c->addr);
        else
            (void)ac_kill(cx, &c->addr);
    }
}

static int sup_start(void *state, ac_ctx *cx, const void *args)
{
    const start_args *a = args;
    sup_state *st = state;
    int rc = check_spec(a->spec);
    if (rc != 0)
        return rc;
    sup *s = calloc(1, sizeof *s);
    if (s == NULL)
        return AC_ENOMEM;
    if ((rc = copy_spec(s, a->spec)) != 0) {
        free_sup(s);
        return rc;
    }
    for (size_t i = 0; i < s->n; i++) {
        if ((rc = start_child(cx, s, i, true)) != 0) {
            end_children(cx, s, false);
            free_sup(s);
            return rc;
        }
        if (a->children)
            a->children[i] = s->c[i].addr;
    }
    /* Marks services as used even without children (whose monitors would
     * do it), so that the supervisor's death runs the died hook, which
     * frees s (core/service.c). Not yet published: it cannot be dying. */
    (void)ac__service_alive(cx, ac__current(cx));
    st->s = s;
    s->mode = RUNNING;
    return 0;
}

/* Records a restart now; false when that makes more than max_restarts
 * within within_ms: the supervisor gives up. */
static bool note_restart(ac_ctx *cx, sup *s)
{
    uint64_t now = ac__clock_ms(ac_ctx_runtime(cx));
    s->stamps[s->stamp_at] = now + 1;  /* 0 marks an unused slot */
    s->stamp_at = (s->stamp_at + 1) % s->nstamps;
    /* The ring holds the last max_restarts + 1 restarts: too many if the
     * oldest of them is recent. */
    uint64_t oldest = s->stamps[s->stamp_at];
    return oldest == 0 || now + 1 - oldest >= s->within_ms;
}

static int give_up(ac_ctx *cx)
{
    return ac_fail(cx, AC_EFAILED);
}

static bool shutting_down(ac_ctx *cx)
{
    const sup_service *svc = ac__service_state(ac_ctx_runtime(cx), AC__SERVICE_supervisors);
    /* Relaxed: seeing the flag a turn late costs one more restart, and
     * shutdown's own barriers make it visible before it waits. */
    return atomic_load_explicit(&svc->shutting_down, memory_order_relaxed);
}

/* Restarts child i. A start that fails counts as one more restart and is
 * tried again from the mailbox (OTP's try_again_restart), not in a loop
 * here: the supervisor still handles its other messages (a stop, other
 * downs) between the tries, and a start that fails slowly enough never to
 * exceed the intensity cannot hold it in one handler for ever. */
static int restart(ac_ctx *cx, sup *s, size_t i)
{
    if (shutting_down(cx))
        return 0;
    if (start_child(cx, s, i, false) == 0)
        return 0;
    if (!note_restart(cx, s))
        return give_up(cx);
    ac_envelope *e = ac_envelope_new(cx, SUP_RETRY, sizeof(uint32_t));
    if (e == NULL)
        return give_up(cx);
    *(uint32_t *)ac_envelope_payload(e) = (uint32_t)i;
    int rc = ac_send(cx, ac_self(cx), e);
    return rc != 0 ? give_up(cx) : 0;
}

static bool wants_restart(const child *c, int reason)
{
    switch (c->spec.restart) {
    case AC_RESTART_PERMANENT:
        return true;
    case AC_RESTART_TRANSIENT:
        return reason != AC_REASON_NORMAL;
    default:
        return false;
    }
}

static int finish_restarting(ac_ctx *cx, sup *s)
{
    s->mode = RUNNING;
    for (size_t i = 0; i < s->n; i++) {
        child *c = &s->c[i];
        if (!c->restart)
            continue;
        c->restart = false;
        if (c->spec.restart == AC_RESTART_TEMPORARY)
            continue;  /* a temporary child is never restarted */
        int rc = restart(cx, s, i);
        if (rc != 0 || s->mode != RUNNING)
            return rc;
    }
    return 0;
}

/* Child i went down on its own while the supervisor was running. */
static int child_failed(ac_ctx *cx, sup *s, size_t i, int reason)
{
    child *c = &s->c[i];
    if (!wants_restart(c, reason))
        return 0;
    if (!note_restart(cx, s))
        return give_up(cx);
    if (s->strategy == AC_ONE_FOR_ONE)
        return restart(cx, s, i);
    /* One-for-all: every child; rest-for-one: it and those after it. The
     * others are killed and restarted once all of them are down. */
    size_t from = s->strategy == AC_ONE_FOR_ALL ? 0 : i;
    s->mode = RESTARTING;
    s->pending = 0;
    for (size_t j = s->n; j-- > from;) {
        child *o = &s->c[j];
        o->restart = true;
        if (j == i || !o->running)
            continue;
        o->killed = true;
        o->running = false;
        s->pending++;
        (void)ac_kill(cx, &o->addr);
    }
    return s->pending == 0 ? finish_restarting(cx, s) : 0;
}

static int stop_next(ac_ctx *cx, sup *s)
{
    for (size_t i = s->n; i-- > 0;) {
        child *c = &s->c[i];
        if (c->running) {
            c->running = false;
            c->killed = true;  /* its down is the one we wait for */
            s->pending = 1;
            if (ac_stop(cx, &c->addr) == 0)
                return 0;
            c->killed = false;  /* already gone: its down comes anyway */
        }
    }
    s->pending = 0;
    return ac_stop_self(cx);
}

static int on_down(ac_ctx *cx, sup *s, const ac_down *d)
{
    size_t i = 0;
    while (i < s->n && !(s->c[i].ref == d->ref && ac_addr_eq(&s->c[i].addr, &d->who)))
        i++;
    if (i == s->n)
        return 0;  /* a replaced instance's down, or not ours */
    child *c = &s->c[i];
    bool expected = c->killed;
    c->running = false;
    c->killed = false;
    c->ref = 0;
    switch (s->mode) {
    case STOPPING:
        return stop_next(cx, s);
    case RESTARTING:
        if (expected) {
            if (--s->pending == 0)
                return finish_restarting(cx, s);
            return 0;
        }
        /* Died on its own meanwhile: restart it with the others if its
         * policy says so (it is in the affected range, or joins it). */
        if (wants_restart(c, d->reason))
            c->restart = true;
        return 0;
    default:
        return child_failed(cx, s, i, d->reason);
    }
}

static int sup_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    sup *s = ((sup_state *)state)->s;
    switch (e->tag) {
    case AC_TAG_DOWN:
        return on_down(cx, s, ac_envelope_payload(e));
    case SUP_RETRY: {
        uint32_t i = *(const uint32_t *)ac_envelope_payload(e);
        /* Stopping, or restarting a group that includes it: not ours now. */
        if (s->mode != RUNNING || i >= s->n || s->c[i].running)
            return 0;
        return restart(cx, s, i);
    }
    case SUP_SHUTDOWN:
        if (s->mode == STOPPING)
            return 0;
        /* Children killed by a restart in progress are already not
         * running: their downs only move the stopping along. */
        s->mode = STOPPING;
        return stop_next(cx, s);
    }
    return AC_EBADTAG;
}

static const char *const sup_names[] = {"shutdown", "retry"};

static const ac_actor_type supervisor_type = {
    .abi = AC_ABI_VERSION,
    .name = "actorc.Supervisor",
    .state_size = sizeof(sup_state),
    .state_align = _Alignof(sup_state),
    .dispatch = sup_dispatch,
    .on_start = sup_start,
    .message_count = 2,
    .message_names = sup_names,
    .mailbox_overflow = AC_OVERFLOW_REJECT,
};

/* A supervisor died (any reason): its children end with it. */
static void died(ac_ctx *cx, void *state, ac__actor *a, int reason, int code)
{
    (void)state;
    (void)code;
    if (a->type != &supervisor_type)
        return;
    sup_state *st = (sup_state *)(void *)a->state;
    if (st->s == NULL)
        return;  /* its start hook failed and cleaned up */
    end_children(cx, st->s, reason == AC_REASON_NORMAL);
    free_sup(st->s);
    st->s = NULL;
}

int ac_supervisor_start(ac_ctx *cx, const ac_supervisor_spec *spec, ac_addr *out,
                        ac_addr *children)
{
    if (cx == NULL || spec == NULL || out == NULL)
        return AC_EINVAL;
    start_args a = {spec, children};
    return ac_spawn(cx, &supervisor_type, &a, out);
}

int ac_supervisor_stop(ac_ctx *cx, const ac_addr *sup_addr)
{
    if (cx == NULL || sup_addr == NULL)
        return AC_EINVAL;
    ac_envelope *e = ac_envelope_new(cx, SUP_SHUTDOWN, 0);
    if (e == NULL)
        return AC_ENOMEM;
    return ac_send(cx, sup_addr, e);
}

static int svc_init(ac_runtime *rt, void **state)
{
    (void)rt;
    sup_service *svc = malloc(sizeof *svc);
    if (svc == NULL)
        return AC_ENOMEM;
    atomic_init(&svc->shutting_down, false);
    *state = svc;
    return 0;
}

static void svc_shutdown(ac_ctx *cx, void *state)
{
    (void)cx;
    sup_service *svc = state;
    /* Relaxed: see shutting_down(). */
    atomic_store_explicit(&svc->shutting_down, true, memory_order_relaxed);
}

static void svc_fini(void *state)
{
    free(state);
}

const ac__service ac__supervisors_service = {
    .name = "supervisors",
    .init = svc_init,
    .shutdown = svc_shutdown,
    .fini = svc_fini,
    .died = died,
};
