/*
 * quota.c — counts per node id in a small open-addressed table (linear
 * probing, deletion by shifting back, so no tombstones build up as peers
 * come and go). A node id is a peer's incarnation, which that peer
 * chooses, but one peer has one incarnation at a time, so it cannot crowd
 * a probe sequence: the ids are mixed only to spread them.
 */
#include "quota.h"

#include <stdlib.h>

static size_t home(const ac__quota *q, uint64_t node)
{
    /* Fibonacci hashing: the high bits of the product are well mixed. */
    return (size_t)((node * UINT64_C(0x9E3779B97F4A7C15)) >> 32) & (q->cap - 1);
}

static ac__quota_slot *find(const ac__quota *q, uint64_t node)
{
    if (q->cap == 0)
        return NULL;
    for (size_t i = home(q, node);; i = (i + 1) & (q->cap - 1)) {
        if (q->slots[i].node == node)
            return &q->slots[i];
        if (q->slots[i].node == 0)
            return NULL;
    }
}

static void place(ac__quota *q, ac__quota_slot s)
{
    size_t i = home(q, s.node);
    while (q->slots[i].node != 0)
        i = (i + 1) & (q->cap - 1);
    q->slots[i] = s;
}

/* Room for one more node at a load of at most a half. */
static bool reserve(ac__quota *q)
{
    if (2 * (q->used + 1) <= q->cap)
        return true;
    size_t cap = q->cap ? 2 * q->cap : 16;
    ac__quota_slot *old = q->slots, *slots = calloc(cap, sizeof *slots);
    if (slots == NULL)
        return false;
    size_t old_cap = q->cap;
    q->slots = slots;
    q->cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].node != 0)
            place(q, old[i]);
    free(old);
    return true;
}

void ac__quota_fini(ac__quota *q)
{
    free(q->slots);
    *q = (ac__quota){NULL, 0, 0};
}

bool ac__quota_take(ac__quota *q, uint64_t node, uint32_t max)
{
    ac__quota_slot *s = find(q, node);
    if (s != NULL) {
        if (s->held >= max)
            return false;
        s->held++;
        return true;
    }
    if (max == 0 || node == 0 || !reserve(q))
        return false;
    place(q, (ac__quota_slot){node, 1});
    q->used++;
    return true;
}

void ac__quota_give(ac__quota *q, uint64_t node)
{
    ac__quota_slot *s = find(q, node);
    if (s == NULL || --s->held > 0)
        return;
    /* The last: empty the slot and shift back every later one of the
     * run that would no longer be found past the hole. */
    size_t hole = (size_t)(s - q->slots);
    q->slots[hole].node = 0;
    q->used--;
    for (size_t i = (hole + 1) & (q->cap - 1); q->slots[i].node != 0; i = (i + 1) & (q->cap - 1)) {
        size_t h = home(q, q->slots[i].node);
        /* Stays put only if its home lies cyclically in (hole, i]. */
        bool stays = hole <= i ? (hole < h && h <= i) : (hole < h || h <= i);
        if (!stays) {
            q->slots[hole] = q->slots[i];
            q->slots[i].node = 0;
            hole = i;
        }
    }
}

uint32_t ac__quota_held(const ac__quota *q, uint64_t node)
{
    const ac__quota_slot *s = find(q, node);
    return s ? s->held : 0;
}
