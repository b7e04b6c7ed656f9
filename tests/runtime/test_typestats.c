/* Per-actor-type counters (ac_config.type_stats, AC_STATS=1): exact
 * handled and failed counts of a scripted workload, turn times, and the
 * mailbox high-water mark of a known burst (docs/RUNTIME.md, "Counters
 * per actor type"). */
#include "fixtures.h"

#define ACTORS 3
#define ITEMS 100
#define FAILERS 2

/* ACTORS counters get ITEMS items each; FAILERS more get one item and a
 * fail. Read live, at quiescence, before shutdown sends its stops. */
static void scripted(int workers)
{
    ac_runtime *rt = make_typed_runtime(workers, true);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_type_stats s;
    cr_assert_eq(ac_runtime_type_stats(rt, &counter_type, &s), AC_ENOTFOUND);
    for (int i = 0; i < ACTORS; i++) {
        ac_addr a = spawn_counter(cx);
        for (uint64_t k = 0; k < ITEMS; k++)
            cr_assert_eq(send_item(cx, &a, 0, k), 0);
    }
    for (int i = 0; i < FAILERS; i++) {
        ac_addr a = spawn_counter(cx);
        cr_assert_eq(send_item(cx, &a, 0, 0), 0);
        cr_assert_eq(send_tag(cx, &a, COUNTER_FAIL), 0);
    }
    cr_assert_eq(ac_runtime_run(rt), 0);

    cr_assert_eq(ac_runtime_type_stats(rt, &counter_type, &s), 0);
    cr_assert_eq(s.type, &counter_type);
    cr_assert_eq(s.handled, ACTORS * ITEMS + FAILERS * 2, "handled %llu",
                 (unsigned long long)s.handled);
    cr_assert_eq(s.failed, FAILERS);
    /* Not at most `handled`: a turn that finds a push half done takes
     * nothing and runs again. */
    cr_assert_geq(s.turns, ACTORS + FAILERS);
    uint64_t mean = s.turn_ns_total / s.turns;
    cr_assert_gt(mean, 0);
    cr_assert_geq(s.turn_ns_max, mean);
    cr_assert_geq(s.mailbox_hwm, 1);
    cr_assert_leq(s.mailbox_hwm, ITEMS);

    /* The iterator sees the same type, once. */
    ac_type_stats all[8];
    int n = ac_runtime_types_stats(rt, all, 8);
    cr_assert_geq(n, 1);
    int found = 0;
    for (int i = 0; i < n && i < 8; i++) {
        if (all[i].type == &counter_type) {
            found++;
            cr_assert_eq(all[i].handled, s.handled);
            cr_assert_eq(all[i].failed, s.failed);
        }
    }
    cr_assert_eq(found, 1);
    cr_assert_eq(ac_runtime_types_stats(rt, NULL, 0), n, "counting needs no room");
    cr_assert_eq(ac_runtime_destroy(rt), 0);
}

Test(typestats, exact_counts_deterministic)
{
    scripted(0);
}

Test(typestats, exact_counts_two_workers)
{
    scripted(2);
}

/* A burst sent before anything runs is the mailbox's longest: exactly. */
Test(typestats, high_water_mark_of_a_burst)
{
    ac_runtime *rt = make_typed_runtime(0, true);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_counter(cx);
    for (uint64_t k = 0; k < 37; k++)
        cr_assert_eq(send_item(cx, &a, 0, k), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    ac_type_stats s;
    cr_assert_eq(ac_runtime_type_stats(rt, &counter_type, &s), 0);
    cr_assert_eq(s.mailbox_hwm, 37);
    cr_assert_eq(s.handled, 37);
    /* Smaller bursts later do not lower it. */
    for (uint64_t k = 37; k < 40; k++)
        cr_assert_eq(send_item(cx, &a, 0, k), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(ac_runtime_type_stats(rt, &counter_type, &s), 0);
    cr_assert_eq(s.mailbox_hwm, 37);
    cr_assert_eq(s.handled, 40);
    cr_assert_eq(ac_runtime_destroy(rt), 0);
}

/* A bounded mailbox's mark is its own count: at most its bound. */
Test(typestats, high_water_mark_of_a_bounded_mailbox)
{
    ac_runtime *rt = make_typed_runtime(0, true);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_spawn_options o;
    memset(&o, 0, sizeof o);
    o.mailbox_bound = 10;
    o.mailbox_overflow = AC_OVERFLOW_REJECT;
    ac_addr a;
    cr_assert_eq(ac_spawn_opts(cx, &counter_type, NULL, &o, &a), 0);
    int full = 0;
    for (uint64_t k = 0; k < 25; k++)
        full += send_item(cx, &a, 0, k) == AC_EFULL;
    cr_assert_eq(full, 15);
    cr_assert_eq(ac_runtime_run(rt), 0);
    ac_type_stats s;
    cr_assert_eq(ac_runtime_type_stats(rt, &counter_type, &s), 0);
    cr_assert_eq(s.mailbox_hwm, 10);
    cr_assert_eq(s.handled, 10);
    cr_assert_eq(ac_runtime_destroy(rt), 0);
}

/* Off (the default), nothing is kept and the calls say so. */
Test(typestats, off_by_default)
{
    ac_runtime *rt = make_typed_runtime(0, false);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_counter(cx);
    cr_assert_eq(send_item(cx, &a, 0, 0), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    ac_type_stats s;
    cr_assert_eq(ac_runtime_type_stats(rt, &counter_type, &s), AC_ESTATE);
    cr_assert_eq(ac_runtime_types_stats(rt, NULL, 0), AC_ESTATE);
    cr_assert_eq(ac_runtime_type_stats(NULL, &counter_type, &s), AC_EINVAL);
    cr_assert_eq(ac_runtime_destroy(rt), 0);
}
