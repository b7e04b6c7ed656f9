/*
 * service.h — the one header through which a service (names, groups,
 * monitors, timers, ... in runtime/services/) reaches the core, and the
 * table of services the core walks without knowing which is which.
 *
 * A service is a row of hooks (struct ac__service). The core calls them at
 * fixed points of a runtime's and an actor's life — create, shutdown,
 * destroy, a thread context's end, spawn, death, the arrival of a system
 * message a service consumes, a snapshot of the statistics — in the order
 * of the table (services/services.c), and never names a service. Each
 * service keeps its state in its own slot of the runtime
 * (ac__service_state), made by its init hook before any worker starts and
 * freed by its fini hook after the last one stopped; a service that needs
 * something per thread has a slot in every context too (ac__ctx_slot).
 *
 * The row holds only those hooks: what crosses nodes goes through
 * transport.h, where the node sets its interface and a node-aware service
 * registers its control records.
 *
 * Besides this header (and transport.h), a service sees the actor block
 * and the envelope (actor.h, envelope.h) and calls only the functions they
 * declare.
 */
#ifndef AC_CORE_SERVICE_H
#define AC_CORE_SERVICE_H

#include "actor.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Slots in each runtime and context; the table's size is checked against
 * it where the table is defined. */
#define AC__SERVICE_MAX 16
/* System tags AC_TAG_SYSTEM + 0 .. AC__SYSTEM_ROWS - 1 are looked up by
 * tag (the others a service might consume, down the table). */
#define AC__SYSTEM_ROWS 8u
#define AC__NO_ROW 0xFFu

/* The facts of a death, as the died hooks hear them. */
typedef struct ac__death {
    int reason;     /* AC_REASON_* */
    int code;       /* the failure's code, or the stop's */
    uint32_t tag;   /* a failure: the tag the actor was handling (for the
                       down its supervisor reads); else AC__NO_TAG */
} ac__death;

typedef struct ac__service {
    const char *name;
    /* Makes the service's state (*state) for a new runtime, or fails with
     * a negative code; fini must accept whatever a failed init left. */
    int (*init)(ac_runtime *rt, void **state);
    /* Shutdown begins, before outside sends are refused (timers stop). */
    void (*shutdown)(ac_ctx *cx, void *state);
    /* A context is about to be freed; *slot is its ac__ctx_slot. */
    void (*ctx_fini)(ac_ctx *cx, void *state, void **slot);
    /* The runtime is destroyed: free the state (every worker is gone). */
    void (*fini)(void *state);
    /* A spawn with options, before the actor is reachable: take what the
     * options ask for (a name), or refuse the spawn with a negative code.
     * unclaim undoes a claim whose spawn failed afterwards. */
    int (*claim)(ac_ctx *cx, void *state, ac__actor *a, const ac_spawn_options *o);
    void (*unclaim)(ac_ctx *cx, void *state, ac__actor *a, const ac_spawn_options *o);
    /* The same spawn, now reachable and current, before its start hook
     * (a link); a negative code fails the actor. */
    int (*attach)(ac_ctx *cx, void *state, ac__actor *a, const ac_spawn_options *o);
    /* `a` died: forget it, tell who asked to be told. Called on the
     * dying actor's thread, with the actor's DEAD flag set (see
     * ac__service_alive). */
    void (*died)(ac_ctx *cx, void *state, ac__actor *a, const ac__death *d);
    /* A system tag (AC_TAG_*) this service handles instead of the actor's
     * dispatch, as one of the actor's turns; 0: none. */
    uint32_t consumes;
    int (*deliver)(ac_ctx *cx, void *state, ac__actor *a, ac__env *e);
    /* A stop (ac_stop, shutdown's walk) reached `a`, the actor running on
     * cx: true when the service takes it over and ends the actor itself
     * later (a supervisor, after its children), *rc then being what a
     * handler would have returned; false to let the actor stop now. */
    bool (*stop)(ac_ctx *cx, void *state, ac__actor *a, int *rc);
    /* A system message of tag `screens` that the service marked
     * AC__ENV_SCREEN is about to reach `a`, in one of its turns or an
     * inbox's receive: AC__SCREEN_PASS lets it through, AC__SCREEN_VOID
     * drops it (what it tells of was taken back: ac_demonitor, ac_unlink),
     * AC__SCREEN_TAKEN says the service acted on it instead (a link's exit
     * that kills an actor not trapping exits). Taking a message off the
     * queue is the one moment when its receiver cannot be taking the
     * monitor or link back, so that is where the choice is made. */
    uint32_t screens;
    int (*screen)(ac_ctx *cx, void *state, ac__actor *a, const ac__env *e);
    /* A request marked AC__ENV_ASKED became a dead letter for want of its
     * actor (counted already, shown to the dead-letter hook): answer its
     * asker now. Any thread that drops one; e is only read, and freed by
     * the caller. */
    void (*unanswered)(ac_ctx *cx, void *state, ac__env *e);

    /* ac_runtime_run at quiescence: how many requests the service still
     * holds that nothing running will settle (asks with no reply yet). */
    size_t (*pending)(void *state);

    /* ac_runtime_stats: adds the service's counters into *out (the fields
     * that are its own). Any thread, from init to fini. */
    void (*stats)(void *state, ac_stats *out);
    /* AC_STATS=1: the service's lines, after the runtime's own (at
     * destroy, after shutdown and before fini). */
    void (*print_stats)(void *state, FILE *out);
} ac__service;

/* The table (services/services.c): rows in the order a death reaches them. */
extern const ac__service *const ac__service_table[];
extern const unsigned ac__service_count;

/* Seeded mode: makes what cx sends outside a handler come from `from`
 * (a timer), on its own channel (explore.c); returns the previous one,
 * to put back. NULL: the thread itself. */
const void *ac__send_from(ac_ctx *cx, const void *from);

/* What a screen hook decides (see ac__service.screen). */
enum { AC__SCREEN_PASS = 0, AC__SCREEN_VOID = 1, AC__SCREEN_TAKEN = 2 };

/* ---- for services ---------------------------------------------------------- */

/* The state the service in row `id` made for rt. */
void *ac__service_state(ac_runtime *rt, unsigned id);
/* This context's slot for the service in row `id` (NULL until it sets it). */
void **ac__ctx_slot(ac_ctx *cx, unsigned id);

/* A service that records something about a live actor calls one of these
 * under its own lock, online (between ac__enter and ac__leave): the actor,
 * or NULL / false when it is gone or dying. The death sets DEAD and then
 * runs every service's died hook, which takes that service's lock: so a
 * record is either made before the cleanup runs (and found by it) or
 * refused. service.c says why this needs no lock of the core's. */
ac__actor *ac__service_target(ac_ctx *cx, const ac_addr *addr);
/* The same for an actor the caller already holds (its own self). */
bool ac__service_alive(ac_ctx *cx, ac__actor *a);

/* Whether this context speaks for the actor or inbox at `addr`: it is
 * running that actor's handler (or hook), or it is the thread that made
 * that inbox. What a watcher holds (a monitor) only it may take back.
 * Online. */
bool ac__acts_for(ac_ctx *cx, const ac_addr *addr);

/* ---- for the core: one walk of the table per event -------------------------- */

int ac__services_init(ac_runtime *rt);
void ac__services_shutdown(ac_ctx *cx);
void ac__services_ctx_fini(ac_ctx *cx);
void ac__services_fini(ac_runtime *rt);
int ac__services_claim(ac_ctx *cx, ac__actor *a, const ac_spawn_options *o);
void ac__services_unclaim(ac_ctx *cx, ac__actor *a, const ac_spawn_options *o);
int ac__services_attach(ac_ctx *cx, ac__actor *a, const ac_spawn_options *o);
/* Called by a death after setting DEAD (the other half of the pair). */
void ac__services_died(ac_ctx *cx, ac__actor *a, const ac__death *d);
/* A system message for `a`: true when the service that consumes its tag
 * handled it (*rc: what its handler returned); false when none does, and
 * it goes to the actor's dispatch. */
void ac__services_unanswered(ac_ctx *cx, ac__env *e);
bool ac__services_deliver(ac_ctx *cx, ac__actor *a, ac__env *e, int *rc);
/* A stop for `a`: true when a service took it over (*rc: its result). */
bool ac__services_stop(ac_ctx *cx, ac__actor *a, int *rc);
/* A marked (AC__ENV_SCREEN) system message about to reach `a`: the
 * verdict of the service that screens its tag (AC__SCREEN_*; PASS when
 * none does). */
int ac__services_screen(ac_ctx *cx, ac__actor *a, const ac__env *e);
/* Every service's counters, added into *out; every service's lines. */
void ac__services_stats(ac_runtime *rt, ac_stats *out);
size_t ac__services_pending(ac_runtime *rt);
void ac__services_print_stats(ac_runtime *rt, FILE *out);

#endif /* AC_CORE_SERVICE_H */
