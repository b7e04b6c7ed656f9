/* Memory: the steady send path allocates nothing. */
#include "alloc_count.h"
#include "fixtures.h"

/* A relay: each item is passed on to `next` until its seq reaches 0. */
typedef struct relay {
    ac_addr next;
} relay;

static _Atomic uint64_t relayed;

static int relay_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    relay *self = state;
    if (e->tag == 1) {  /* link */
        self->next = *(const ac_addr *)ac_envelope_payload(e);
        return 0;
    }
    const item *m = ac_envelope_payload(e);
    atomic_fetch_add_explicit(&relayed, 1, memory_order_relaxed);
    if (m->seq == 0)
        return 0;
    return send_item(cx, &self->next, m->sender, m->seq - 1);
}

static const char *const relay_names[] = {"item", "link"};
static const ac_actor_type relay_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.Relay",
    .state_size = sizeof(relay),
    .state_align = _Alignof(relay),
    .dispatch = relay_dispatch,
    .message_count = 2,
    .message_names = relay_names,
};

static void link_to(ac_ctx *cx, const ac_addr *from, const ac_addr *to)
{
    ac_envelope *e = ac_envelope_new(cx, 1, sizeof *to);
    cr_assert_not_null(e);
    *(ac_addr *)ac_envelope_payload(e) = *to;
    cr_assert_eq(ac_send(cx, from, e), 0);
}

static void steady_state_allocates_nothing(int workers)
{
    ac_runtime *rt = make_runtime(workers);
    ac_ctx *cx = ac_runtime_ctx(rt);
    enum { RING = 8, WARM = 20000, MEASURED = 200000 };
    ac_addr ring[RING];
    for (int i = 0; i < RING; i++)
        cr_assert_eq(ac_spawn(cx, &relay_type, NULL, &ring[i]), 0);
    for (int i = 0; i < RING; i++)
        link_to(cx, &ring[i], &ring[(i + 1) % RING]);
    /* Warm up: pools, deques and the depot reach their working size. */
    for (int k = 0; k < 4; k++)
        cr_assert_eq(send_item(cx, &ring[k], 0, WARM), 0);
    ac_runtime_run(rt);

    /* The four starting envelopes come from this thread's pool, which the
     * relays never refill: take them before counting. */
    ac_envelope *start[4];
    for (int k = 0; k < 4; k++) {
        start[k] = ac_envelope_new(cx, COUNTER_ITEM, sizeof(item));
        cr_assert_not_null(start[k]);
        *(item *)ac_envelope_payload(start[k]) = (item){0, MEASURED};
    }
    uint64_t before = alloc_count();
    ac_stats st0;
    ac_runtime_stats(rt, &st0);
    for (int k = 0; k < 4; k++)
        cr_assert_eq(ac_send(cx, &ring[k], start[k]), 0);
    ac_runtime_run(rt);
    uint64_t after = alloc_count();
    ac_stats st1;
    ac_runtime_stats(rt, &st1);

    cr_assert_eq(st1.messages - st0.messages, 4 * (MEASURED + 1));
    cr_assert_eq(st1.pool_misses, st0.pool_misses, "envelope pool misses in steady state");
    cr_assert_eq(after, before, "%lu heap allocations while relaying %d messages",
                 (unsigned long)(after - before), 4 * (MEASURED + 1));
    ac_runtime_destroy(rt);
}

Test(memory, steady_send_path_allocates_nothing_deterministic, .timeout = 60)
{
    steady_state_allocates_nothing(0);
}

Test(memory, steady_send_path_allocates_nothing_with_two_workers, .timeout = 60)
{
    steady_state_allocates_nothing(2);
}
