/*
 * services.c — what the services (names, groups, monitors, links, timers,
 * asks, supervisors) share: how they learn that an actor they keep state
 * about is alive, and the cleanup that runs when it dies.
 *
 * The race to close: a service records something about actor A (a name, a
 * monitor) while A dies on another worker. Two steps on each side, in
 * opposite order, make it a Dekker pair:
 *   service: set rt->services_used (seq_cst) ; read A's DEAD flag (seq_cst)
 *   death:   set A's DEAD flag (seq_cst)     ; read rt->services_used (seq_cst)
 * In the single total order of seq_cst operations one of the two reads
 * comes after the other side's write: either the service sees DEAD and
 * refuses, or the death sees services_used and runs the cleanup, which
 * takes the service's lock after the service released it and so finds the
 * record. Runtimes that never use a service pay one load per death.
 */
#include "internal.h"

bool ac__service_alive(ac_ctx *cx, ac__actor *a)
{
    _Atomic bool *used = &cx->rt->services_used;
    /* seq_cst on both: the service's half of the pair described above.
     * Once set the flag stays set, so later services skip the store. */
    if (!atomic_load_explicit(used, memory_order_seq_cst))
        atomic_store_explicit(used, true, memory_order_seq_cst);
    return !(atomic_load_explicit(&a->flags, memory_order_seq_cst) & AC__ACTOR_DEAD);
}

ac__actor *ac__service_target(ac_ctx *cx, const ac_addr *addr)
{
    ac__actor *a = ac__route_lookup(&cx->rt->route, addr);
    if (a == NULL || !ac__service_alive(cx, a))
        return NULL;
    return a;
}

void ac__services_died(ac_ctx *cx, ac__actor *a, int reason, int code)
{
    /* Names and groups first: whoever hears of the death (a supervisor
     * restarting the actor under its name) finds the name free. */
    ac__names_died(cx, a);
    ac__groups_died(cx, a);
    ac__routers_died(cx, a);
    ac__timers_died(cx, a);  /* before anyone hears of it (timer.c) */
    ac__asks_died(cx, a);
    ac__links_died(cx, a, reason, code);
    ac__monitors_died(cx, a, reason, code);
    if (a->type == &ac__supervisor_type)
        ac__supervisor_died(cx, a, reason);
}
