/*
 * test_bounded.c — bounded mailboxes: reject, drop-newest, drop-oldest;
 * every drop counted.
 */
#include "fixtures.h"
#include "probe.h"

#include <pthread.h>

static ac_addr spawn_bounded(ac_ctx *cx, ac_inbox *ib, uint32_t bound, uint32_t overflow)
{
    probe_args args = {*ac_inbox_addr(ib), 0, false};
    ac_spawn_options o = {0};
    o.mailbox_bound = bound;
    o.mailbox_overflow = overflow;
    ac_addr a;
    cr_assert_eq(ac_spawn_opts(cx, &probe_type, &args, &o, &a), 0);
    return a;
}

static uint64_t count_of(ac_ctx *cx, ac_inbox *ib, const ac_addr *a)
{
    cr_assert_eq(probe_cmd(cx, a, P_GET_COUNT, NULL, 0), 0);
    probe_stopped s;
    expect_report(cx, ib, R_COUNT, &s, sizeof s);
    return s.count;
}

Test(bounded, a_full_mailbox_rejects_with_efull_by_default, .timeout = 30)
{
    probe_world w = probe_world_open(0);
    ac_addr a = spawn_bounded(w.cx, w.ib, 4, AC_OVERFLOW_REJECT);
    for (int i = 0; i < 4; i++)
        cr_assert_eq(probe_cmd(w.cx, &a, P_COUNT, NULL, 0), 0);
    cr_assert_eq(probe_cmd(w.cx, &a, P_COUNT, NULL, 0), AC_EFULL);
    cr_assert_eq(probe_cmd(w.cx, &a, P_COUNT, NULL, 0), AC_EFULL);
    ac_runtime_run(w.rt);
    ac_stats st;
    ac_runtime_stats(w.rt, &st);
    cr_assert_eq(st.mailbox_drops, 2);
    cr_assert_eq(st.dead_letters, 0);
    cr_assert_eq(count_of(w.cx, w.ib, &a), 4);
    probe_world_close(&w);
}

Test(bounded, handled_messages_make_room_again, .timeout = 30)
{
    probe_world w = probe_world_open(0);
    ac_addr a = spawn_bounded(w.cx, w.ib, 2, AC_OVERFLOW_REJECT);
    for (int round = 0; round < 5; round++) {
        cr_assert_eq(probe_cmd(w.cx, &a, P_COUNT, NULL, 0), 0);
        cr_assert_eq(probe_cmd(w.cx, &a, P_COUNT, NULL, 0), 0);
        cr_assert_eq(probe_cmd(w.cx, &a, P_COUNT, NULL, 0), AC_EFULL);
        ac_runtime_run(w.rt);
    }
    cr_assert_eq(count_of(w.cx, w.ib, &a), 10);
    probe_world_close(&w);
}

Test(bounded, drop_newest_accepts_the_send_and_drops_it, .timeout = 30)
{
    probe_world w = probe_world_open(0);
    ac_addr a = spawn_bounded(w.cx, w.ib, 3, AC_OVERFLOW_DROP_NEWEST);
    for (int i = 0; i < 10; i++)
        cr_assert_eq(probe_cmd(w.cx, &a, P_COUNT, NULL, 0), 0);
    ac_runtime_run(w.rt);
    ac_stats st;
    ac_runtime_stats(w.rt, &st);
    cr_assert_eq(st.mailbox_drops, 7);
    cr_assert_eq(count_of(w.cx, w.ib, &a), 3);
    probe_world_close(&w);
}

/* Items carry their sequence number; the handler keeps the last one. */
static _Atomic uint64_t first_seen = UINT64_MAX, handled_items;

static int keeper_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    (void)state;
    (void)cx;
    if (e->tag != 0)
        return AC_EBADTAG;
    uint64_t seq = *(uint64_t *)ac_envelope_payload(e);
    uint64_t expect = UINT64_MAX;
    atomic_compare_exchange_strong(&first_seen, &expect, seq);
    atomic_fetch_add(&handled_items, 1);
    return 0;
}

static const char *const keeper_names[] = {"item"};
static const ac_actor_type keeper_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.Keeper",
    .state_align = 1,
    .dispatch = keeper_dispatch,
    .message_count = 1,
    .message_names = keeper_names,
    .mailbox_bound = 5,
    .mailbox_overflow = AC_OVERFLOW_DROP_OLDEST,
};

Test(bounded, drop_oldest_keeps_the_newest_messages, .timeout = 30)
{
    probe_world w = probe_world_open(0);
    ac_addr a;
    /* The bound and policy come from the type here, as the IDL gives them. */
    cr_assert_eq(ac_spawn(w.cx, &keeper_type, NULL, &a), 0);
    for (uint64_t i = 0; i < 12; i++) {
        ac_envelope *e = ac_envelope_new(w.cx, 0, sizeof i);
        *(uint64_t *)ac_envelope_payload(e) = i;
        cr_assert_eq(ac_send(w.cx, &a, e), 0);
    }
    ac_runtime_run(w.rt);
    cr_assert_eq(atomic_load(&handled_items), 5);
    cr_assert_eq(atomic_load(&first_seen), 7);  /* 7..11 survive */
    ac_stats st;
    ac_runtime_stats(w.rt, &st);
    cr_assert_eq(st.mailbox_drops, 7);
    probe_world_close(&w);
}

Test(bounded, a_stop_is_not_refused_by_a_full_mailbox, .timeout = 30)
{
    probe_world w = probe_world_open(0);
    ac_addr a = spawn_bounded(w.cx, w.ib, 1, AC_OVERFLOW_REJECT);
    cr_assert_eq(probe_cmd(w.cx, &a, P_COUNT, NULL, 0), 0);
    cr_assert_eq(probe_cmd(w.cx, &a, P_COUNT, NULL, 0), AC_EFULL);
    cr_assert_eq(ac_stop(w.cx, &a), 0);
    probe_stopped s;
    expect_report(w.cx, w.ib, R_STOPPED, &s, sizeof s);
    cr_assert_eq(s.count, 1);
    probe_world_close(&w);
}

Test(bounded, a_bad_overflow_policy_is_refused, .timeout = 30)
{
    probe_world w = probe_world_open(0);
    probe_args args = {*ac_inbox_addr(w.ib), 0, false};
    ac_spawn_options o = {0};
    o.mailbox_bound = 3;
    o.mailbox_overflow = 99;
    ac_addr a;
    cr_assert_eq(ac_spawn_opts(w.cx, &probe_type, &args, &o, &a), AC_EINVAL);
    probe_world_close(&w);
}

static _Atomic int hook_full, hook_notfound;
static _Atomic uint32_t hook_last_tag;

static void count_hook(ac_ctx *cx, const ac_addr *to, const ac_envelope *e, int reason,
                       void *arg)
{
    (void)cx;
    (void)to;
    (void)arg;
    atomic_store(&hook_last_tag, e->tag);
    if (reason == AC_EFULL)
        atomic_fetch_add(&hook_full, 1);
    else if (reason == AC_ENOTFOUND)
        atomic_fetch_add(&hook_notfound, 1);
}

Test(bounded, the_dead_letter_hook_sees_every_refused_message, .timeout = 30)
{
    probe_world w = probe_world_open(0);
    ac_runtime_set_dead_letter_hook(w.rt, count_hook, NULL);
    ac_addr a = spawn_bounded(w.cx, w.ib, 1, AC_OVERFLOW_REJECT);
    cr_assert_eq(probe_cmd(w.cx, &a, P_COUNT, NULL, 0), 0);
    cr_assert_eq(probe_cmd(w.cx, &a, P_FAIL, NULL, 0), AC_EFULL);
    cr_assert_eq(atomic_load(&hook_last_tag), P_FAIL);
    ac_stop(w.cx, &a);
    ac_runtime_run(w.rt);
    cr_assert_eq(probe_cmd(w.cx, &a, P_COUNT, NULL, 0), AC_ENOTFOUND);
    cr_assert_eq(atomic_load(&hook_full), 1);
    cr_assert_eq(atomic_load(&hook_notfound), 1);
    probe_world_close(&w);
}

typedef struct producer_arg {
    ac_runtime *rt;
    ac_addr to;
    _Atomic uint64_t *accepted, *refused;
} producer_arg;

enum { PRODUCERS = 4, PER_PRODUCER = 20000 };

static void *producer(void *p)
{
    producer_arg *a = p;
    ac_ctx *cx = ac_runtime_ctx(a->rt);
    for (int i = 0; i < PER_PRODUCER; i++) {
        int rc = probe_cmd(cx, &a->to, P_COUNT, NULL, 0);
        if (rc == 0)
            atomic_fetch_add(a->accepted, 1);
        else if (rc == AC_EFULL)
            atomic_fetch_add(a->refused, 1);
        else
            atomic_fetch_add(a->refused, 1000000);  /* fails the count below */
    }
    return NULL;
}

Test(bounded, concurrent_producers_each_message_handled_or_counted, .timeout = 60)
{
    probe_world w = probe_world_open(2);
    ac_addr a = spawn_bounded(w.cx, w.ib, 16, AC_OVERFLOW_REJECT);
    static _Atomic uint64_t accepted, refused;
    pthread_t t[PRODUCERS];
    producer_arg args[PRODUCERS];
    for (int i = 0; i < PRODUCERS; i++) {
        args[i] = (producer_arg){w.rt, a, &accepted, &refused};
        pthread_create(&t[i], NULL, producer, &args[i]);
    }
    for (int i = 0; i < PRODUCERS; i++)
        pthread_join(t[i], NULL);
    ac_runtime_run(w.rt);
    cr_assert_eq(atomic_load(&accepted) + atomic_load(&refused),
                 (uint64_t)PRODUCERS * PER_PRODUCER);
    cr_assert_eq(count_of(w.cx, w.ib, &a), atomic_load(&accepted));
    ac_stats st;
    ac_runtime_stats(w.rt, &st);
    cr_assert_eq(st.mailbox_drops, atomic_load(&refused));
    probe_world_close(&w);
}
