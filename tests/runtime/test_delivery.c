/* Delivery: messages arrive, once, in order, at many actors. */
#include "fixtures.h"

#include <stdlib.h>

Test(delivery, one_message_reaches_its_actor, .timeout = 30)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_counter(cx);
    cr_assert_eq(send_item(cx, &a, 0, 0), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(atomic_load(&g_items), 1);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.messages, 1);
    cr_assert_eq(st.sends, 1);
    cr_assert_eq(st.dead_letters, 0);
    ac_runtime_destroy(rt);
    cr_assert_eq(atomic_load(&g_stops), 1, "shutdown runs the stop hook");
}

Test(delivery, fifo_between_one_sender_and_one_receiver, .timeout = 60)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_counter(cx);
    const uint64_t n = 100000;
    for (uint64_t i = 0; i < n; i++)
        cr_assert_eq(send_item(cx, &a, 1, i), 0);
    ac_runtime_destroy(rt);
    cr_assert_eq(atomic_load(&g_stopped_items), n);
    cr_assert_eq(atomic_load(&g_fifo_violations), 0);
}

Test(delivery, ten_thousand_actors_each_receive_their_messages, .timeout = 60)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    enum { ACTORS = 10000, EACH = 10 };
    atomic_store(&g_expected_per_actor, EACH);
    ac_addr *addrs = malloc(ACTORS * sizeof *addrs);
    for (int i = 0; i < ACTORS; i++)
        addrs[i] = spawn_counter(cx);
    for (int k = 0; k < EACH; k++)
        for (int i = 0; i < ACTORS; i++)
            cr_assert_eq(send_item(cx, &addrs[i], 2, (uint64_t)k), 0);
    ac_runtime_destroy(rt);
    cr_assert_eq(atomic_load(&g_stops), ACTORS);
    cr_assert_eq(atomic_load(&g_exact_actors), ACTORS, "every actor got exactly its %d", EACH);
    cr_assert_eq(atomic_load(&g_fifo_violations), 0);
    free(addrs);
}

Test(delivery, addresses_are_distinct_and_random, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_counter(cx), b = spawn_counter(cx);
    cr_assert_not(ac_addr_eq(&a, &b));
    cr_assert_not(ac_addr_is_nil(&a));
    char hex[65];
    cr_assert_eq(strlen(ac_addr_format(&a, hex, 32)), 64);
    cr_assert_eq(strlen(ac_addr_format(&a, hex, 4)), 8);
    ac_runtime_destroy(rt);
}

/* Bytes 8-15 of every address are the runtime's node id; the other 24
 * differ from address to address. */
Test(delivery, addresses_carry_their_runtimes_node_id, .timeout = 30)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    uint64_t node = ac_runtime_node(rt);
    cr_assert_neq(node, 0);
    ac_addr a = spawn_counter(cx), b = spawn_counter(cx);
    ac_inbox *ib;
    cr_assert_eq(ac_inbox_create(cx, &ib), 0);
    cr_assert_eq(ac_addr_node(&a), node);
    cr_assert_eq(ac_addr_node(&b), node);
    cr_assert_eq(ac_addr_node(ac_inbox_addr(ib)), node);
    uint64_t le = 0;
    for (int i = 7; i >= 0; i--)
        le = le << 8 | a.bytes[AC_ADDR_NODE_OFFSET + i];
    cr_assert_eq(le, node, "little-endian at AC_ADDR_NODE_OFFSET");
    cr_assert_neq(memcmp(a.bytes, b.bytes, AC_ADDR_NODE_OFFSET), 0);
    cr_assert_neq(memcmp(a.bytes + 16, b.bytes + 16, 16), 0);
    ac_addr nil;
    memset(&nil, 0, sizeof nil);
    cr_assert_eq(ac_addr_node(&nil), 0);
    ac_inbox_destroy(cx, ib);
    ac_runtime_destroy(rt);
}

/* A runtime created again is a new incarnation: it has another node id, and
 * an address of the first one reaches nobody in the second, even when the
 * second has an actor at an address that differs only there. */
Test(delivery, a_new_runtime_is_a_new_incarnation, .timeout = 30)
{
    ac_runtime *first = make_runtime(0);
    ac_addr old = spawn_counter(ac_runtime_ctx(first));
    uint64_t first_node = ac_runtime_node(first);
    ac_runtime_destroy(first);

    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    cr_assert_neq(ac_runtime_node(rt), first_node);
    cr_assert_eq(ac_addr_node(&old), first_node);
    ac_addr now = spawn_counter(cx);
    ac_addr same_but_node = now;
    memcpy(same_but_node.bytes + AC_ADDR_NODE_OFFSET, old.bytes + AC_ADDR_NODE_OFFSET, 8);
    cr_assert_eq(send_item(cx, &old, 0, 0), AC_ENOTFOUND);
    cr_assert_eq(send_item(cx, &same_but_node, 0, 0), AC_ENOTFOUND);
    cr_assert_eq(send_item(cx, &now, 0, 0), 0);
    ac_runtime_run(rt);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.dead_letters, 2);
    cr_assert_eq(st.messages, 1);
    ac_runtime_destroy(rt);
}

Test(delivery, send_to_unknown_address_is_a_counted_dead_letter, .timeout = 30)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr nobody;
    memset(&nobody, 0x5a, sizeof nobody);
    cr_assert_eq(send_item(cx, &nobody, 0, 0), AC_ENOTFOUND);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.dead_letters, 1);
    cr_assert_eq(st.sends, 0);
    ac_runtime_destroy(rt);
}

Test(delivery, system_tags_and_null_arguments_are_refused, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_counter(cx);
    cr_assert_eq(ac_send(cx, &a, ac_envelope_new(cx, 0xFFFFFFF0u, 0)), AC_EINVAL);
    cr_assert_eq(ac_send(cx, NULL, ac_envelope_new(cx, 0, 0)), AC_EINVAL);
    cr_assert_eq(ac_send(cx, &a, NULL), AC_EINVAL);
    cr_assert_eq(ac_spawn(cx, NULL, NULL, &a), AC_EINVAL);
    cr_assert_null(ac_envelope_new(cx, 0, AC_MAX_PAYLOAD + 1));
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&g_items), 0);
    ac_runtime_destroy(rt);
}

Test(delivery, large_payloads_bypass_the_pools_intact, .timeout = 30)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = spawn_counter(cx);
    /* A 64 KiB payload whose head is an ordinary item. */
    ac_envelope *e = ac_envelope_new(cx, COUNTER_ITEM, 65536);
    cr_assert_not_null(e);
    item *m = ac_envelope_payload(e);
    m->sender = 3;
    m->seq = 0;
    memset((char *)m + sizeof *m, 0xab, 65536 - sizeof *m);
    cr_assert_eq(ac_send(cx, &a, e), 0);
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&g_items), 1);
    ac_runtime_destroy(rt);
}

/* Deterministic mode: nothing runs until the caller steps, and the same
 * program handles its messages in the same order every time. */
static void deterministic_program(uint64_t *trace, uint64_t *len)
{
    atomic_store(&g_trace_len, 0);
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a[5];
    for (int i = 0; i < 5; i++)
        a[i] = spawn_counter(cx);
    for (uint64_t k = 0; k < 200; k++)
        cr_assert_eq(send_item(cx, &a[(k * 7) % 5], 4, k), 0);
    cr_assert_eq(atomic_load(&g_items), 0, "nothing runs before the caller steps");
    int first = ac_runtime_step(rt);
    cr_assert_gt(first, 0);
    cr_assert_lt(atomic_load(&g_items), 200, "one step is one actor turn");
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(ac_runtime_step(rt), 0, "idle after run");
    *len = atomic_load(&g_trace_len);
    for (uint64_t i = 0; i < *len; i++)
        trace[i] = atomic_load(&g_trace[i]);
    ac_runtime_destroy(rt);
}

Test(delivery, deterministic_mode_is_stepped_and_reproducible, .timeout = 30)
{
    uint64_t t1[256], t2[256], n1, n2;
    deterministic_program(t1, &n1);
    atomic_store(&g_items, 0);
    deterministic_program(t2, &n2);
    cr_assert_eq(n1, 200);
    cr_assert_eq(n2, 200);
    cr_assert_arr_eq(t1, t2, sizeof(uint64_t) * 200);
}

Test(delivery, step_is_refused_with_workers, .timeout = 30)
{
    ac_runtime *rt = make_runtime(1);
    cr_assert_eq(ac_runtime_step(rt), AC_ESTATE);
    ac_runtime_destroy(rt);
}
