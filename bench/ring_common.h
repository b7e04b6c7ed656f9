/* ring_common.h — the ring shared by ring.c and ring_multi.c. */
#ifndef BENCH_RING_COMMON_H
#define BENCH_RING_COMMON_H

#include "common.h"
#include "ring.actor.h"

#include <string.h>

/* Hops each token reported when it ran out; written by the actor that
 * receives the token last, read by main after ac_runtime_run. */
static uint64_t *token_hops;
static bool *token_done;

int ring_Node_on_link(ring_Node *self, ac_ctx *cx, const ring_Node_link *m)
{
    (void)cx;
    self->next = m->next;
    return 0;
}

int ring_Node_on_token(ring_Node *self, ac_ctx *cx, const ring_Node_token *m)
{
    if (m->left == 0) {
        token_hops[m->id] = m->hops;
        token_done[m->id] = true;
        return 0;
    }
    return ring_Node_send_token(cx, self->next, m->id, m->left - 1, m->hops + 1);
}

/* Spawns R linked nodes; returns them (the caller frees). */
static inline ring_Node_ref *ring_build(ac_runtime *rt, uint64_t r)
{
    ac_ctx *cx = ac_runtime_ctx(rt);
    ring_Node_ref *nodes = malloc(r * sizeof *nodes);
    if (nodes == NULL)
        bench_fail("ring: out of memory");
    for (uint64_t i = 0; i < r; i++)
        bench_check(ring_Node_spawn(cx, &nodes[i]), "spawn");
    for (uint64_t i = 0; i < r; i++)
        bench_check(ring_Node_send_link(cx, nodes[i], nodes[(i + 1) % r]), "link");
    ac_runtime_run(rt);
    return nodes;
}

/* Starts k tokens of `each` hops at evenly spaced nodes, runs the ring, and
 * checks that every token made exactly its hops. Returns the seconds. */
static inline double ring_play(ac_runtime *rt, ring_Node_ref *nodes, uint64_t r,
                               uint64_t k, uint64_t each)
{
    ac_ctx *cx = ac_runtime_ctx(rt);
    token_hops = calloc(k, sizeof *token_hops);
    token_done = calloc(k, sizeof *token_done);
    if (token_hops == NULL || token_done == NULL)
        bench_fail("ring: out of memory");
    double t0 = bench_now();
    for (uint64_t t = 0; t < k; t++)
        bench_check(ring_Node_send_token(cx, nodes[t * r / k], (uint32_t)t, each, 0), "token");
    double secs = bench_run_since(rt, t0);
    for (uint64_t t = 0; t < k; t++)
        if (!token_done[t] || token_hops[t] != each)
            bench_fail("ring: token %" PRIu64 " made %" PRIu64 " hops, expected %" PRIu64,
                       t, token_hops[t], each);
    free(token_hops);
    free(token_done);
    return secs;
}

#endif
