/*
 * transport.c — the runtime's side of transport.h: the one transport it
 * routes other nodes' addresses to, and the roles the services registered,
 * found by op. Both are set before any worker starts (from the services'
 * init hooks) and only read afterwards, so they need no ordering.
 */
#include "transport.h"

#include "runtime.h"
#include "sched.h"

#include "../lib/table.h"

#include <string.h>

uint64_t ac__type_id(const ac_actor_type *type)
{
    return ac__hash_name(type->name, strlen(type->name));
}

void ac__transport_set(ac_runtime *rt, const ac__transport *t, void *state)
{
    rt->transport = t;
    rt->transport_state = state;
}

int ac__remote_register(ac_runtime *rt, const ac__remote_role *role, void *state)
{
    if (role->op >= AC__OPS || !(AC__CONTROL_OP_MASK & (1u << role->op)))
        return AC_EINVAL;
    if (rt->role_of[role->op] != 0)
        return AC_EEXIST;
    if (rt->nroles == AC__ROLES_MAX)
        return AC_ENOMEM;
    rt->roles[rt->nroles] = (ac__remote){role, state};
    rt->role_of[role->op] = (unsigned char)++rt->nroles;
    return 0;
}

bool ac__addr_remote(ac_ctx *cx, const ac_addr *addr)
{
    return ac_addr_node(addr) != cx->rt->node;
}

int ac__transmit(ac_ctx *cx, uint64_t node, uint8_t op, const uint8_t *body, size_t len,
                 unsigned how)
{
    const ac_runtime *rt = cx->rt;
    if (rt->transport == NULL)
        return AC_ENOTFOUND;
    return rt->transport->transmit(cx, rt->transport_state, node, op, body, len, how);
}

uint64_t ac__node_named(ac_ctx *cx, const char *name)
{
    const ac_runtime *rt = cx->rt;
    return rt->transport ? rt->transport->node_named(rt->transport_state, name) : 0;
}

size_t ac__nodes_up(ac_ctx *cx, uint64_t *out, size_t max)
{
    const ac_runtime *rt = cx->rt;
    return rt->transport ? rt->transport->nodes_up(rt->transport_state, out, max) : 0;
}

uint32_t ac__peer_quota(ac_ctx *cx)
{
    const ac_runtime *rt = cx->rt;
    return rt->transport ? rt->transport->peer_quota(rt->transport_state) : UINT32_MAX;
}

bool ac__transport_forward(ac_ctx *cx, const ac_addr *to, const ac_actor_type *type, ac__env *e,
                           int *rc)
{
    const ac_runtime *rt = cx->rt;
    return rt->transport != NULL &&
           rt->transport->forward(cx, rt->transport_state, to, type, e, rc);
}

bool ac__remote_op(ac_runtime *rt, uint8_t op)
{
    return op < AC__OPS && rt->role_of[op] != 0;
}

int ac__remote_control(ac_ctx *cx, uint64_t from, uint8_t op, const uint8_t *body, size_t len)
{
    if (!ac__remote_op(cx->rt, op))
        return AC_EINVAL;
    const ac__remote *r = &cx->rt->roles[cx->rt->role_of[op] - 1];
    return r->role->control(cx, r->state, from, body, len);
}

void ac__remote_node_up(ac_ctx *cx, uint64_t node)
{
    for (unsigned i = 0; i < cx->rt->nroles; i++) {
        const ac__remote *r = &cx->rt->roles[i];
        if (r->role->node_up)
            r->role->node_up(cx, r->state, node);
    }
}

void ac__remote_node_lost(ac_ctx *cx, uint64_t node)
{
    for (unsigned i = 0; i < cx->rt->nroles; i++) {
        const ac__remote *r = &cx->rt->roles[i];
        if (r->role->node_lost)
            r->role->node_lost(cx, r->state, node);
    }
}

void ac__hold_runnable(ac_ctx *cx, bool on)
{
    ac__sched_hold(cx, on);
}

void ac__run_held(ac_ctx *cx)
{
    ac__sched_run_held(cx);
}
