/*
 * supervisors.c — supervisors (Erlang/OTP's supervisor behaviour): an actor
 * that starts children from specifications, monitors them, and restarts
 * them by strategy, within a restart intensity. A child may be a
 * supervisor itself, so supervisors form trees.
 *
 * A tree's specification is copied whole (a `tmpl`) when its top starts,
 * and every address in it is drawn then: each start of a child, the first
 * and every restart, at any level, spawns it at its address. A restart
 * finds the address free because an instance's `down` reaches its
 * supervisor only after the death removed it from the routing table (and,
 * names first, freed its names), and a supervisor dies only after all of
 * its children have: so a subtree that restarts gets back all of its
 * addresses and names. Each supervisor copies its own part of the tree
 * from its parent's copy in its start hook, which runs on its parent's
 * thread inside the parent's spawn.
 *
 * The supervisor's dispatch is a small state machine:
 *   RUNNING     a down decides, by the child's restart policy and the
 *               strategy, what to restart: one-for-one restarts the child,
 *               one-for-all and rest-for-one move to RESTARTING;
 *   RESTARTING  ends the group's children one at a time, last started
 *               first, each once the one after it is down; then starts the
 *               group in start order. A start that fails counts as one
 *               more restart and ends and starts the whole group again
 *               (OTP's try_again_restart);
 *   STOPPING    (ac_supervisor_stop, ac_stop, shutdown, or giving up) ends
 *               every child the same way, then itself: normally, or as a
 *               failure when it gave up, which is how a failure escalates
 *               to its own supervisor.
 * Downs whose reference is not a child's current monitor are stale (an
 * instance already replaced) and ignored. A retry goes through the
 * mailbox (SUP_RETRY), so that between tries the supervisor handles its
 * other messages (a stop) and a start that fails slowly enough never to
 * exceed the intensity cannot hold it in one handler; once the runtime is
 * shutting down, nothing is restarted.
 *
 * Workers are ended by ac_kill in a restart and when giving up (the
 * documented difference from OTP's shutdown timeout), by ac_stop when the
 * supervisor stops; a child supervisor is always ended by ac_stop, which
 * it takes over (the service's stop hook) to end its own children first:
 * OTP's shutdown = infinity for supervisors.
 */
#include "services.h"
#include "timers.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum { SUP_SHUTDOWN = 0, SUP_RETRY = 1 };

typedef struct sup sup;

/* The service's state. Once the runtime shuts down no supervisor restarts
 * anything (OTP's neither): a child whose restarts fail slowly would keep
 * the runtime from ever being quiescent, and shutdown waits for that. The
 * lock orders a supervisor's publishing and freeing of its state against
 * ac_supervisor_which_children on other threads, and guards the list of
 * live supervisors: one that waits for a down that was never sent (out of
 * memory) outlives the shutdown, and fini frees what it holds. */
typedef struct sup_service {
    _Atomic bool shutting_down;
    pthread_mutex_t lock;
    sup *live;
} sup_service;

enum { RUNNING, RESTARTING, STOPPING };

/* One child of a tree's copied specification. */
typedef struct tmpl tmpl;
typedef struct tchild {
    const ac_actor_type *type; /* NULL for a supervisor */
    void *args;                /* our own copy, whole (copy_args) */
    size_t args_size;
    uint32_t restart;
    char *name;                /* our own copy, or NULL */
    tmpl *sub;                 /* a child supervisor's specification */
    ac_addr addr;              /* lifelong: drawn when the tree's top started */
} tchild;

struct tmpl {
    uint32_t strategy, max_restarts, within_ms;
    size_t n;
    tchild *c;
};

/* A child's instance, as its supervisor sees it. */
typedef struct child {
    uint64_t ref;              /* the monitor of the current instance */
    bool live;                 /* started, and its down not yet here */
    bool ending;               /* ended by us: its down is awaited */
    bool restart;              /* RESTARTING: to start again with the group */
} child;

struct sup {
    sup *prev, *next;          /* the service's live list */
    tmpl *t;
    child *c;
    unsigned mode;
    bool failing;              /* STOPPING because it gave up */
    size_t from;               /* RESTARTING: the group is [from, n) */
    uint64_t *stamps;          /* times of the last max_restarts + 1 restarts */
    size_t nstamps, stamp_at;
};

typedef struct sup_state {
    sup *s;
} sup_state;

typedef struct start_args {
    const tmpl *t;
} start_args;

static const ac_actor_type supervisor_type;

static sup_service *service_of(ac_ctx *cx)
{
    return ac__service_state(ac_ctx_runtime(cx), AC__SERVICE_supervisors);
}

/* ---- the tree's copy ---------------------------------------------------------- */

static void free_tmpl(tmpl *t)
{
    if (t == NULL)
        return;
    for (size_t i = 0; i < t->n; i++) {
        free(t->c[i].args);
        free(t->c[i].name);
        free_tmpl(t->c[i].sub);
    }
    free(t->c);
    free(t);
}

static char *copy_str(const char *p)
{
    size_t n = strlen(p) + 1;
    char *q = malloc(n);
    if (q)
        memcpy(q, p, n);
    return q;
}

/* The size of a child's own copy of its start arguments: its type's
 * copy_args makes them whole (the strings, bytes and sequences their views
 * point at, which the caller may free once the call returns, and a restart
 * reads long after); a type without one gets args_size bytes. More than
 * AC_MAX_PAYLOAD: they cannot be copied (check_spec refuses them). */
static size_t args_copy_size(const ac_actor_type *type, const void *args, size_t args_size)
{
    if (args == NULL)
        return 0;
    return type->copy_args ? type->copy_args(args, NULL, 0) : args_size;
}

/* Copies child c's start arguments from `args` (checked by check_spec):
 * false when out of memory. A deep copy of a deep copy is whole too, so a
 * child supervisor's part of the tree (tmpl_copy) owns its own. */
static bool copy_args(tchild *c, const void *args)
{
    size_t n = args_copy_size(c->type, args, c->args_size);
    if (n == 0)
        return true;
    if ((c->args = malloc(n)) == NULL)
        return false;
    if (c->type->copy_args)
        (void)c->type->copy_args(args, c->args, n);
    else
        memcpy(c->args, args, n);
    c->args_size = n;
    return true;
}

/* Checks a user's specification, `depth` levels down; *total counts the
 * children of the whole tree. Recursion is bounded by AC_MAX_DEPTH. */
static int check_spec(const ac_supervisor_spec *spec, unsigned depth, size_t *total)
{
    if (depth >= AC_MAX_DEPTH || spec->strategy > AC_REST_FOR_ONE ||
        spec->nchildren > AC_MAX_CHILDREN || spec->max_restarts > AC_MAX_RESTARTS ||
        spec->within_ms == 0 || (spec->nchildren && spec->children == NULL) ||
        (depth > 0 && spec->name != NULL))
        return AC_EINVAL;
    *total += spec->nchildren;
    if (*total > AC_MAX_TREE_CHILDREN)
        return AC_EINVAL;
    for (size_t i = 0; i < spec->nchildren; i++) {
        const ac_child_spec *c = &spec->children[i];
        if (c->restart > AC_RESTART_TEMPORARY)
            return AC_EINVAL;
        if (c->supervisor) {
            if (c->type != NULL || c->args != NULL || c->args_size != 0)
                return AC_EINVAL;
            int rc = check_spec(c->supervisor, depth + 1, total);
            if (rc != 0)
                return rc;
        } else if (c->type == NULL || (c->args_size && c->args == NULL) ||
                   c->type->abi != AC_ABI_VERSION ||
                   args_copy_size(c->type, c->args, c->args_size) > AC_MAX_PAYLOAD) {
            return AC_EINVAL;
        }
    }
    return 0;
}

/* A copy of a checked user specification, every address drawn now. */
static tmpl *tmpl_from_spec(ac_ctx *cx, const ac_supervisor_spec *spec)
{
    tmpl *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    t->strategy = spec->strategy;
    t->max_restarts = spec->max_restarts;
    t->within_ms = spec->within_ms;
    if (spec->nchildren && (t->c = calloc(spec->nchildren, sizeof *t->c)) == NULL) {
        free(t);
        return NULL;
    }
    /* t->n grows with the children copied: free_tmpl walks t->n of them. */
    for (size_t i = 0; i < spec->nchildren; i++, t->n++) {
        const ac_child_spec *in = &spec->children[i];
        tchild *c = &t->c[i];
        c->type = in->type;
        c->restart = in->restart;
        c->args_size = in->args_size;
        ac__addr_fresh(cx, &c->addr);
        if ((in->type && !copy_args(c, in->args)) ||
            (in->name && (c->name = copy_str(in->name)) == NULL) ||
            (in->supervisor && (c->sub = tmpl_from_spec(cx, in->supervisor)) == NULL)) {
            t->n++;
            free_tmpl(t);
            return NULL;
        }
    }
    return t;
}

/* A copy of a copy: the part of the tree a child supervisor owns. */
static tmpl *tmpl_copy(const tmpl *from)
{
    tmpl *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    *t = *from;
    t->n = 0;
    t->c = NULL;
    if (from->n && (t->c = calloc(from->n, sizeof *t->c)) == NULL) {
        free(t);
        return NULL;
    }
    for (size_t i = 0; i < from->n; i++, t->n++) {
        const tchild *in = &from->c[i];
        tchild *c = &t->c[i];
        *c = *in;
        c->args = NULL;
        c->name = NULL;
        c->sub = NULL;
        if ((in->type && !copy_args(c, in->args)) ||
            (in->name && (c->name = copy_str(in->name)) == NULL) ||
            (in->sub && (c->sub = tmpl_copy(in->sub)) == NULL)) {
            t->n++;
            free_tmpl(t);
            return NULL;
        }
    }
    return t;
}

static void free_sup(sup *s)
{
    if (s == NULL)
        return;
    free_tmpl(s->t);
    free(s->c);
    free(s->stamps);
    free(s);
}

static sup *new_sup(const tmpl *from)
{
    sup *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->t = tmpl_copy(from);
    s->c = calloc(from->n ? from->n : 1, sizeof *s->c);
    s->nstamps = (size_t)from->max_restarts + 1;
    s->stamps = calloc(s->nstamps, sizeof *s->stamps);
    if (s->t == NULL || s->c == NULL || s->stamps == NULL) {
        free_sup(s);
        return NULL;
    }
    return s;
}

/* ---- children ---------------------------------------------------------------- */

/* Starts child i at its address, and monitors it before it can run: a
 * child that ran first (a message its start hook sent itself, handled on
 * another worker) could fail unwatched, and the `noproc` down of the
 * monitor then carries no failure, so nobody reported it. Held by its
 * spawn (AC__SPAWN_HELD), it waits for the monitor. */
static int start_child(ac_ctx *cx, sup *s, size_t i)
{
    const tchild *t = &s->t->c[i];
    child *c = &s->c[i];
    ac_spawn_options o;
    memset(&o, 0, sizeof o);
    o.name = t->name;
    ac_addr out;
    start_args sa = {t->sub};
    int rc = ac__spawn_actor(cx, t->sub ? &supervisor_type : t->type, t->sub ? &sa : t->args,
                             &o, &t->addr, AC__ATTR_SUPERVISED | AC__SPAWN_HELD, &out);
    if (rc != 0)
        return rc;  /* a failed start is not held: nothing to release */
    rc = ac_monitor(cx, ac_self(cx), &t->addr, &c->ref);
    if (rc != 0) {
        /* Out of memory: unwatched, it must not run on; a retry that finds
         * its address still taken fails and counts as one more restart.
         * The kill waits in its mailbox, first or behind what its start
         * hook sent, and ends it once released. */
        (void)ac_kill(cx, &t->addr);
    }
    ac__spawn_release(cx, &t->addr);
    if (rc != 0)
        return rc;
    c->live = true;
    c->ending = false;
    return 0;
}

/* Ends live child i: its down is then awaited. A child supervisor always
 * by a stop, which it takes over to end its own children first. */
static int end_child(ac_ctx *cx, sup *s, size_t i, bool graceful)
{
    const tchild *t = &s->t->c[i];
    s->c[i].ending = true;
    int rc = graceful || t->sub ? ac_stop(cx, &t->addr) : ac_kill(cx, &t->addr);
    /* Gone already: its down is on the way. */
    return rc == AC_ENOTFOUND ? 0 : rc;
}

/* Records a restart now; false when that makes more than max_restarts
 * within within_ms: the supervisor gives up. */
static bool note_restart(ac_ctx *cx, sup *s)
{
    uint64_t now = ac__clock_ms(ac_ctx_runtime(cx));
    s->stamps[s->stamp_at] = now + 1;  /* 0 marks an unused slot */
    s->stamp_at = (s->stamp_at + 1) % s->nstamps;
    /* The ring holds the last max_restarts + 1 restarts: too many if the
     * oldest of them is recent (with max_restarts 0, the one just made). */
    uint64_t oldest = s->stamps[s->stamp_at];
    return oldest == 0 || now + 1 - oldest >= s->t->within_ms;
}

static bool shutting_down(ac_ctx *cx)
{
    /* Relaxed: seeing the flag a turn late costs one more restart, and
     * shutdown's own barriers make it visible before it waits. */
    return atomic_load_explicit(&service_of(cx)->shutting_down, memory_order_relaxed);
}

static bool wants_restart(const tchild *t, int reason)
{
    switch (t->restart) {
    case AC_RESTART_PERMANENT:
        return true;
    case AC_RESTART_TRANSIENT:
        return reason != AC_REASON_NORMAL;
    default:
        return false;
    }
}

static int end_next(ac_ctx *cx, sup *s);

/* STOPPING: every child is ended in turn, then the supervisor. */
static int begin_stop(ac_ctx *cx, sup *s, bool failing)
{
    if (s->mode == STOPPING)
        return 0;
    s->mode = STOPPING;
    s->failing = failing;
    return end_next(cx, s);
}

/* Too many restarts: OTP's supervisor ends its children and then itself;
 * here as a failure, so that its own supervisor restarts it (escalation). */
static int give_up(ac_ctx *cx, sup *s)
{
    s->mode = RUNNING;  /* whatever it was doing, it stops now */
    return begin_stop(cx, s, true);
}

/* A try again, from the mailbox: child i (one-for-one) or the group. */
static int send_retry(ac_ctx *cx, sup *s, size_t i)
{
    ac_envelope *e = ac_envelope_new(cx, SUP_RETRY, sizeof(uint32_t));
    if (e == NULL)
        return give_up(cx, s);
    *(uint32_t *)ac_envelope_payload(e) = (uint32_t)i;
    return ac_send_checked(cx, ac_self(cx), NULL, e) != 0 ? give_up(cx, s) : 0;
}

/* RESTARTING the group [from, n): all of it but the temporary children
 * will start again once every one of them is down. */
static void begin_group(sup *s, size_t from)
{
    s->mode = RESTARTING;
    s->from = from;
    for (size_t j = from; j < s->t->n; j++)
        s->c[j].restart = s->t->c[j].restart != AC_RESTART_TEMPORARY;
}

/* One-for-one: restarts child i; a start that fails is one more restart,
 * tried again from the mailbox. */
static int restart_one(ac_ctx *cx, sup *s, size_t i)
{
    if (shutting_down(cx))
        return 0;
    if (start_child(cx, s, i) == 0)
        return 0;
    if (!note_restart(cx, s))
        return give_up(cx, s);
    return send_retry(cx, s, i);
}

/* The group is down: start it in start order. A start that fails counts
 * as one more restart, and the group is ended and started again, whole
 * (one-for-all), or from the child that failed (rest-for-one): OTP's
 * try_again_restart. */
static int start_group(ac_ctx *cx, sup *s)
{
    s->mode = RUNNING;
    bool stop_here = shutting_down(cx);
    for (size_t i = s->from; i < s->t->n; i++) {
        child *c = &s->c[i];
        if (!c->restart)
            continue;
        c->restart = false;
        if (stop_here || start_child(cx, s, i) == 0)
            continue;
        if (!note_restart(cx, s))
            return give_up(cx, s);
        begin_group(s, s->t->strategy == AC_ONE_FOR_ALL ? 0 : i);
        return send_retry(cx, s, i);
    }
    return 0;
}

/* RESTARTING or STOPPING: ends the live child started last, once the one
 * after it is down (one at a time, OTP's order); with none left, starts
 * the group or ends the supervisor. */
static int end_next(ac_ctx *cx, sup *s)
{
    size_t from = s->mode == STOPPING ? 0 : s->from;
    for (size_t i = s->t->n; i-- > from;) {
        child *c = &s->c[i];
        if (!c->live)
            continue;
        if (c->ending)
            return 0;  /* its down moves us on */
        return end_child(cx, s, i, s->mode == STOPPING && !s->failing);
    }
    if (s->mode == RESTARTING)
        return start_group(cx, s);
    return s->failing ? ac_fail(cx, AC_EFAILED) : ac_stop_self(cx);
}

/* Child i failed (reason AC_REASON_FAILED): its report, with what this
 * supervisor did about it (Erlang's crash and supervisor reports, in one
 * line). */
static void report(ac_ctx *cx, sup *s, size_t i, const ac_down *d, unsigned action)
{
    if (d->reason != AC_REASON_FAILED)
        return;
    const ac__down_note *n = (const ac__down_note *)(const void *)d;
    const tchild *t = &s->t->c[i];
    ac__failure_report(cx, &d->who, t->sub ? &supervisor_type : t->type, n->tag, d->code,
                       action, ac_self(cx));
}

/* Child i went down on its own while the supervisor was running. */
static int child_failed(ac_ctx *cx, sup *s, size_t i, const ac_down *d)
{
    int reason = d->reason;
    if (!wants_restart(&s->t->c[i], reason)) {
        report(cx, s, i, d, AC_FAILURE_NOT_RESTARTED);
        return 0;
    }
    if (!note_restart(cx, s)) {
        report(cx, s, i, d, AC_FAILURE_GAVE_UP);
        return give_up(cx, s);
    }
    report(cx, s, i, d, AC_FAILURE_RESTARTED);
    if (s->t->strategy == AC_ONE_FOR_ONE)
        return restart_one(cx, s, i);
    /* One-for-all: every child; rest-for-one: it and those after it. */
    begin_group(s, s->t->strategy == AC_ONE_FOR_ALL ? 0 : i);
    return end_next(cx, s);
}

static int on_down(ac_ctx *cx, sup *s, const ac_down *d)
{
    size_t i = 0;
    while (i < s->t->n && !(s->c[i].live && s->c[i].ref == d->ref &&
                            ac_addr_eq(&s->t->c[i].addr, &d->who)))
        i++;
    if (i == s->t->n)
        return 0;  /* a replaced instance's down, or not ours */
    child *c = &s->c[i];
    bool expected = c->ending;
    c->live = false;
    c->ending = false;
    c->ref = 0;
    switch (s->mode) {
    case STOPPING:
        report(cx, s, i, d, AC_FAILURE_NOT_RESTARTED);
        return end_next(cx, s);
    case RESTARTING:
        /* Died on its own meanwhile: in the group it starts with the
         * others; before it (rest-for-one), the group grows to it. */
        if (!expected && i < s->from && wants_restart(&s->t->c[i], d->reason)) {
            if (!note_restart(cx, s)) {
                report(cx, s, i, d, AC_FAILURE_GAVE_UP);
                return give_up(cx, s);
            }
            begin_group(s, i);
        }
        report(cx, s, i, d, i >= s->from && s->c[i].restart ? AC_FAILURE_RESTARTED
                                                             : AC_FAILURE_NOT_RESTARTED);
        return end_next(cx, s);
    default:
        return child_failed(cx, s, i, d);
    }
}

/* ---- the supervisor actor ------------------------------------------------------ */

static int sup_start(void *state, ac_ctx *cx, const void *args)
{
    const start_args *a = args;
    sup_state *st = state;
    sup *s = new_sup(a->t);
    if (s == NULL)
        return AC_ENOMEM;
    /* Marks services as used before any child starts (the monitors would
     * do it only after), so that every death of a child or of this
     * supervisor runs the died hooks: ours reports a child whose start
     * hook failed, and frees s at the supervisor's death. Not yet
     * published: it cannot be dying. */
    (void)ac__service_alive(cx, ac__current(cx));
    for (size_t i = 0; i < s->t->n; i++) {
        int rc = start_child(cx, s, i);
        if (rc == 0)
            continue;
        /* Those started are stopped, last started first (OTP terminates
         * them in that order); this start hook cannot wait for them. */
        for (size_t j = i; j-- > 0;)
            (void)ac_stop(cx, &s->t->c[j].addr);
        free_sup(s);
        return rc;
    }
    s->mode = RUNNING;
    sup_service *svc = service_of(cx);
    pthread_mutex_lock(&svc->lock);
    st->s = s;
    s->next = svc->live;
    if (svc->live)
        svc->live->prev = s;
    svc->live = s;
    pthread_mutex_unlock(&svc->lock);
    return 0;
}

static int sup_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    sup *s = ((sup_state *)state)->s;
    switch (e->tag) {
    case AC_TAG_DOWN:
        return on_down(cx, s, ac_envelope_payload(e));
    case SUP_RETRY: {
        uint32_t i = *(const uint32_t *)ac_envelope_payload(e);
        /* A group's retry moves it on (idempotent: the downs may have
         * done it already); a one-for-one retry restarts a child still
         * down. Stopping: not ours now. */
        if (s->mode == RESTARTING)
            return end_next(cx, s);
        if (s->mode != RUNNING || s->t->strategy != AC_ONE_FOR_ONE || i >= s->t->n ||
            s->c[i].live)
            return 0;
        return restart_one(cx, s, i);
    }
    case SUP_SHUTDOWN:
        return begin_stop(cx, s, false);
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

/* A stop reached an actor: a supervisor takes it over, to stop its
 * children first (ac_stop is then ac_supervisor_stop). */
static bool on_stop(ac_ctx *cx, void *state, ac__actor *a, int *rc)
{
    (void)state;
    if (ac__type(a) != &supervisor_type)
        return false;
    sup *s = ((sup_state *)(void *)a->state)->s;
    if (s == NULL)
        return false;
    *rc = begin_stop(cx, s, false);
    return true;
}

/* A supervisor died. After a stop or giving up its children are gone
 * already; killed, or failed otherwise (out of memory), it kills those
 * left, last started first, and does not wait (nor does OTP's, killed). */
static void died(ac_ctx *cx, void *state, ac__actor *a, const ac__death *d)
{
    /* A child is reported once its supervisor knows what it did about the
     * failure (report, from its down): its supervisor holds it
     * (AC__SPAWN_HELD) until it watches it, so no failure after the start
     * hook escapes it. One whose start hook failed has no down (it was not
     * watched yet, and its supervisor counts it as a failed start): it is
     * reported here. */
    if (d->reason == AC_REASON_FAILED && d->tag == AC_TAG_START &&
        (a->attrs & AC__ATTR_SUPERVISED))
        ac__failure_report(cx, &a->addr, ac__type(a), d->tag, d->code,
                           AC_FAILURE_START_FAILED, NULL);
    if (ac__type(a) != &supervisor_type)
        return;
    sup_service *svc = state;
    sup_state *st = (sup_state *)(void *)a->state;
    pthread_mutex_lock(&svc->lock);
    sup *s = st->s;
    st->s = NULL;
    if (s != NULL) {
        if (s->prev)
            s->prev->next = s->next;
        else
            svc->live = s->next;
        if (s->next)
            s->next->prev = s->prev;
    }
    pthread_mutex_unlock(&svc->lock);
    if (s == NULL)
        return;  /* its start hook failed and cleaned up */
    for (size_t i = s->t->n; i-- > 0;)
        if (s->c[i].live)
            (void)ac_kill(cx, &s->t->c[i].addr);
    free_sup(s);
}

int ac_supervisor_start(ac_ctx *cx, const ac_supervisor_spec *spec, ac_addr *out,
                        ac_addr *children)
{
    if (cx == NULL || spec == NULL || out == NULL)
        return AC_EINVAL;
    size_t total = 0;
    int rc = check_spec(spec, 0, &total);
    if (rc != 0)
        return rc;
    tmpl *t = tmpl_from_spec(cx, spec);
    if (t == NULL)
        return AC_ENOMEM;
    ac_spawn_options o;
    memset(&o, 0, sizeof o);
    o.name = spec->name;
    start_args a = {t};
    rc = ac_spawn_opts(cx, &supervisor_type, &a, &o, out);
    if (rc == 0 && children)
        for (size_t i = 0; i < t->n; i++)
            children[i] = t->c[i].addr;
    free_tmpl(t);
    return rc;
}

int ac_supervisor_stop(ac_ctx *cx, const ac_addr *sup_addr)
{
    if (cx == NULL || sup_addr == NULL)
        return AC_EINVAL;
    ac_envelope *e = ac_envelope_new(cx, SUP_SHUTDOWN, 0);
    if (e == NULL)
        return AC_ENOMEM;
    return ac_send_checked(cx, sup_addr, NULL, e);
}

int ac_supervisor_which_children(ac_ctx *cx, const ac_addr *sup_addr, ac_addr *out,
                                 size_t max)
{
    if (cx == NULL || sup_addr == NULL || (max && out == NULL))
        return AC_EINVAL;
    sup_service *svc = service_of(cx);
    int rc = AC_ENOTFOUND;
    /* Online: the block stays readable (not freed) until we leave. */
    ac__enter(cx);
    ac__actor *a = ac__lookup(cx, sup_addr);
    if (a != NULL && ac__type(a) == &supervisor_type) {
        sup_state *st = (sup_state *)(void *)a->state;
        pthread_mutex_lock(&svc->lock);
        const sup *s = st->s;
        if (s != NULL) {
            for (size_t i = 0; i < s->t->n && i < max; i++)
                out[i] = s->t->c[i].addr;
            rc = (int)s->t->n;
        }
        pthread_mutex_unlock(&svc->lock);
    }
    ac__leave(cx);
    return rc;
}

static int svc_init(ac_runtime *rt, void **state)
{
    (void)rt;
    sup_service *svc = malloc(sizeof *svc);
    if (svc == NULL)
        return AC_ENOMEM;
    if (pthread_mutex_init(&svc->lock, NULL) != 0) {
        free(svc);
        return AC_ENOMEM;
    }
    atomic_init(&svc->shutting_down, false);
    svc->live = NULL;
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
    sup_service *svc = state;
    if (svc == NULL)
        return;
    /* Every worker is gone: what is still listed belongs to supervisors
     * that never died (a down lost to out of memory). */
    while (svc->live) {
        sup *s = svc->live;
        svc->live = s->next;
        free_sup(s);
    }
    pthread_mutex_destroy(&svc->lock);
    free(svc);
}

const ac__service ac__supervisors_service = {
    .name = "supervisors",
    .init = svc_init,
    .shutdown = svc_shutdown,
    .fini = svc_fini,
    .died = died,
    .stop = on_stop,
};
