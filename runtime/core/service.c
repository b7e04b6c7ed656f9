/*
 * service.c — the core's side of the services: one walk of the table
 * (services/services.c) per event of a runtime's or an actor's life, and
 * how a service learns that an actor it keeps state about is alive.
 *
 * The race to close: a service records something about actor A (a name, a
 * monitor) while A dies on another worker. Two steps on each side, in
 * opposite order, make it a Dekker pair:
 *   service: set rt->services_used (seq_cst) ; read A's DEAD flag (seq_cst)
 *   death:   set A's DEAD flag (seq_cst)     ; read rt->services_used (seq_cst)
 * In the single total order of seq_cst operations one of the two reads
 * comes after the other side's write: either the service sees DEAD and
 * refuses, or the death sees services_used and runs the died hooks, each
 * of which takes its service's lock after the service released it and so
 * finds the record. Runtimes that never use a service pay one load per
 * death; the plain send path pays nothing for any of this.
 */
#include "service.h"

#include "inbox.h"
#include "runtime.h"
#include "sched.h"

#include <string.h>

void *ac__service_state(ac_runtime *rt, unsigned id)
{
    return rt->services[id];
}

void **ac__ctx_slot(ac_ctx *cx, unsigned id)
{
    return &cx->slots[id];
}

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

bool ac__acts_for(ac_ctx *cx, const ac_addr *addr)
{
    if (cx->current != NULL)
        return ac_addr_eq(&cx->current->addr, addr);
    ac__actor *a = ac__route_lookup(&cx->rt->route, addr);
    return a != NULL && (a->attrs & AC__ATTR_INBOX) && ac__inbox_owner(a) == cx;
}

/* ---- the walks ----------------------------------------------------------------- */

int ac__services_init(ac_runtime *rt)
{
    memset(rt->consumer, AC__NO_ROW, sizeof rt->consumer);
    for (unsigned i = ac__service_count; i-- > 0;) {
        uint32_t t = ac__service_table[i]->consumes - AC_TAG_SYSTEM;
        /* The first row that consumes a tag has it, as down the table. */
        if (ac__service_table[i]->deliver && ac__service_table[i]->consumes >= AC_TAG_SYSTEM &&
            t < AC__SYSTEM_ROWS)
            rt->consumer[t] = (unsigned char)i;
    }
    for (unsigned i = 0; i < ac__service_count; i++) {
        const ac__service *s = ac__service_table[i];
        int rc = s->init ? s->init(rt, &rt->services[i]) : 0;
        if (rc != 0)
            return rc;  /* ac__services_fini tears down what was made */
    }
    return 0;
}

void ac__services_shutdown(ac_ctx *cx)
{
    for (unsigned i = 0; i < ac__service_count; i++) {
        const ac__service *s = ac__service_table[i];
        if (s->shutdown)
            s->shutdown(cx, cx->rt->services[i]);
    }
}

void ac__services_ctx_fini(ac_ctx *cx)
{
    for (unsigned i = 0; i < ac__service_count; i++) {
        const ac__service *s = ac__service_table[i];
        if (s->ctx_fini && cx->slots[i] != NULL)
            s->ctx_fini(cx, cx->rt->services[i], &cx->slots[i]);
    }
}

void ac__services_fini(ac_runtime *rt)
{
    /* Reverse order: a service may use those above it until its end. */
    for (unsigned i = ac__service_count; i-- > 0;) {
        const ac__service *s = ac__service_table[i];
        if (s->fini && rt->services[i] != NULL)
            s->fini(rt->services[i]);
        rt->services[i] = NULL;
    }
}

/* Undoes the claims of the first n rows, last first. */
static void unclaim_first(ac_ctx *cx, ac__actor *a, const ac_spawn_options *o, unsigned n)
{
    while (n-- > 0) {
        const ac__service *s = ac__service_table[n];
        if (s->unclaim)
            s->unclaim(cx, cx->rt->services[n], a, o);
    }
}

int ac__services_claim(ac_ctx *cx, ac__actor *a, const ac_spawn_options *o)
{
    for (unsigned i = 0; i < ac__service_count; i++) {
        const ac__service *s = ac__service_table[i];
        int rc = s->claim ? s->claim(cx, cx->rt->services[i], a, o) : 0;
        if (rc != 0) {
            unclaim_first(cx, a, o, i);
            return rc;
        }
    }
    return 0;
}

void ac__services_unclaim(ac_ctx *cx, ac__actor *a, const ac_spawn_options *o)
{
    unclaim_first(cx, a, o, ac__service_count);
}

int ac__services_attach(ac_ctx *cx, ac__actor *a, const ac_spawn_options *o)
{
    for (unsigned i = 0; i < ac__service_count; i++) {
        const ac__service *s = ac__service_table[i];
        int rc = s->attach ? s->attach(cx, cx->rt->services[i], a, o) : 0;
        if (rc != 0)
            return rc;
    }
    return 0;
}

void ac__services_died(ac_ctx *cx, ac__actor *a, const ac__death *d)
{
    for (unsigned i = 0; i < ac__service_count; i++) {
        const ac__service *s = ac__service_table[i];
        if (s->died)
            s->died(cx, cx->rt->services[i], a, d);
    }
}

void ac__services_unanswered(ac_ctx *cx, ac__env *e)
{
    for (unsigned i = 0; i < ac__service_count; i++) {
        const ac__service *s = ac__service_table[i];
        if (s->unanswered)
            s->unanswered(cx, cx->rt->services[i], e);
    }
}

bool ac__services_deliver(ac_ctx *cx, ac__actor *a, ac__env *e, int *rc)
{
    uint32_t t = e->tag - AC_TAG_SYSTEM;
    if (e->tag >= AC_TAG_SYSTEM && t < AC__SYSTEM_ROWS) {
        unsigned i = cx->rt->consumer[t];
        if (i == AC__NO_ROW)
            return false;
        *rc = ac__service_table[i]->deliver(cx, cx->rt->services[i], a, e);
        return true;
    }
    for (unsigned i = 0; i < ac__service_count; i++) {
        const ac__service *s = ac__service_table[i];
        if (s->consumes == e->tag && s->deliver) {
            *rc = s->deliver(cx, cx->rt->services[i], a, e);
            return true;
        }
    }
    return false;
}

bool ac__services_stop(ac_ctx *cx, ac__actor *a, int *rc)
{
    for (unsigned i = 0; i < ac__service_count; i++) {
        const ac__service *s = ac__service_table[i];
        if (s->stop && s->stop(cx, cx->rt->services[i], a, rc))
            return true;
    }
    return false;
}

int ac__services_screen(ac_ctx *cx, ac__actor *a, const ac__env *e)
{
    for (unsigned i = 0; i < ac__service_count; i++) {
        const ac__service *s = ac__service_table[i];
        if (s->screens == e->tag && s->screen)
            return s->screen(cx, cx->rt->services[i], a, e);
    }
    return AC__SCREEN_PASS;
}

void ac__services_stats(ac_runtime *rt, ac_stats *out)
{
    for (unsigned i = 0; i < ac__service_count; i++) {
        const ac__service *s = ac__service_table[i];
        if (s->stats && rt->services[i] != NULL)
            s->stats(rt->services[i], out);
    }
}

size_t ac__services_pending(ac_runtime *rt)
{
    size_t n = 0;
    for (unsigned i = 0; i < ac__service_count; i++) {
        const ac__service *s = ac__service_table[i];
        if (s->pending && rt->services[i] != NULL)
            n += s->pending(rt->services[i]);
    }
    return n;
}

void ac__services_print_stats(ac_runtime *rt, FILE *out)
{
    for (unsigned i = 0; i < ac__service_count; i++) {
        const ac__service *s = ac__service_table[i];
        if (s->print_stats && rt->services[i] != NULL)
            s->print_stats(rt->services[i], out);
    }
}

const void *ac__send_from(ac_ctx *cx, const void *from)
{
    const void *prev = cx->send_from;
    cx->send_from = from;
    return prev;
}
