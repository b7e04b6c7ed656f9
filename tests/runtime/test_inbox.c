/*
 * test_inbox.c — inboxes: addresses for threads that are not actors.
 */
#include "fixtures.h"
#include "probe.h"

#include <pthread.h>

static void send_u64(ac_ctx *cx, const ac_addr *to, uint32_t tag, uint64_t v)
{
    ac_envelope *e = ac_envelope_new(cx, tag, sizeof v);
    cr_assert_not_null(e);
    *(uint64_t *)ac_envelope_payload(e) = v;
    cr_assert_eq(ac_send(cx, to, e), 0);
}

static uint64_t recv_u64(ac_ctx *cx, ac_inbox *ib, uint32_t tag, int timeout)
{
    ac_envelope *e;
    cr_assert_eq(ac_inbox_recv(cx, ib, tag, timeout, &e), 0);
    uint64_t v = *(uint64_t *)ac_envelope_payload(e);
    ac_envelope_free(cx, e);
    return v;
}

Test(inbox, receives_what_an_actor_sends, .timeout = 30)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_inbox *ib;
    cr_assert_eq(ac_inbox_create(cx, &ib), 0);
    ac_addr p = spawn_probe(cx, ac_inbox_addr(ib));
    ac_addr seen;
    expect_report(cx, ib, R_STARTED, &seen, sizeof seen);
    cr_assert(ac_addr_eq(&seen, &p));
    ac_inbox_destroy(cx, ib);
    ac_runtime_destroy(rt);
}

Test(inbox, recv_times_out_when_nothing_comes, .timeout = 30)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_inbox *ib;
    cr_assert_eq(ac_inbox_create(cx, &ib), 0);
    ac_envelope *e = (ac_envelope *)1;
    cr_assert_eq(ac_inbox_recv(cx, ib, AC_ANY_TAG, 20, &e), AC_ETIMEDOUT);
    cr_assert_null(e);
    cr_assert_eq(ac_inbox_recv(cx, ib, AC_ANY_TAG, 0, &e), AC_ETIMEDOUT);
    ac_inbox_destroy(cx, ib);
    ac_runtime_destroy(rt);
}

Test(inbox, a_tag_filter_keeps_the_other_messages_in_order, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_inbox *ib;
    cr_assert_eq(ac_inbox_create(cx, &ib), 0);
    const ac_addr *me = ac_inbox_addr(ib);
    for (uint64_t i = 0; i < 6; i++)
        send_u64(cx, me, (uint32_t)(i % 2), i);
    cr_assert_eq(recv_u64(cx, ib, 1, 0), 1);
    cr_assert_eq(recv_u64(cx, ib, 1, 0), 3);
    cr_assert_eq(recv_u64(cx, ib, AC_ANY_TAG, 0), 0);
    cr_assert_eq(recv_u64(cx, ib, AC_ANY_TAG, 0), 2);
    cr_assert_eq(recv_u64(cx, ib, 1, 0), 5);
    cr_assert_eq(recv_u64(cx, ib, 0, 0), 4);
    ac_envelope *e;
    cr_assert_eq(ac_inbox_recv(cx, ib, AC_ANY_TAG, 0, &e), AC_ETIMEDOUT);
    ac_inbox_destroy(cx, ib);
    ac_runtime_destroy(rt);
}

Test(inbox, deterministic_recv_runs_the_runtime_until_a_message_comes, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_inbox *ib;
    cr_assert_eq(ac_inbox_create(cx, &ib), 0);
    ac_addr p = spawn_probe(cx, ac_inbox_addr(ib));
    /* Nothing has run yet: the start report is queued, then the stop. */
    ac_stop(cx, &p);
    expect_report(cx, ib, R_STOPPED, NULL, 0);
    ac_envelope *e;
    cr_assert_eq(ac_inbox_recv(cx, ib, R_STOPPED, AC_FOREVER, &e), AC_ETIMEDOUT);
    ac_inbox_destroy(cx, ib);
    ac_runtime_destroy(rt);
}

Test(inbox, destroying_it_counts_what_was_left_as_dead_letters, .timeout = 30)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_inbox *ib;
    cr_assert_eq(ac_inbox_create(cx, &ib), 0);
    ac_addr me = *ac_inbox_addr(ib);
    for (int i = 0; i < 3; i++)
        send_u64(cx, &me, 7, (uint64_t)i);
    ac_inbox_destroy(cx, ib);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.dead_letters, 3);
    ac_envelope *e = ac_envelope_new(cx, 7, 8);
    cr_assert_eq(ac_send(cx, &me, e), 0, "a dead letter, not the sender's failure");
    cr_assert_eq(ac_send_checked(cx, &me, NULL, ac_envelope_new(cx, 7, 8)), AC_ENOTFOUND);
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.dead_letters, 5);
    ac_runtime_destroy(rt);
}

Test(inbox, an_inbox_can_monitor_and_its_death_is_a_down, .timeout = 30)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_inbox *a, *b;
    cr_assert_eq(ac_inbox_create(cx, &a), 0);
    cr_assert_eq(ac_inbox_create(cx, &b), 0);
    ac_addr baddr = *ac_inbox_addr(b);
    cr_assert_eq(ac_monitor(cx, ac_inbox_addr(a), &baddr, NULL), 0);
    ac_inbox_destroy(cx, b);
    ac_down d;
    expect_report(cx, a, AC_TAG_DOWN, &d, sizeof d);
    cr_assert(ac_addr_eq(&d.who, &baddr));
    cr_assert_eq(d.reason, AC_REASON_NORMAL);
    ac_inbox_destroy(cx, a);
    ac_runtime_destroy(rt);
}

Test(inbox, recv_from_a_handler_is_refused, .timeout = 30)
{
    /* Checked without a handler: the rule is on cx->current, and a NULL
     * argument is refused the same way everywhere. */
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_envelope *e;
    cr_assert_eq(ac_inbox_recv(cx, NULL, AC_ANY_TAG, 0, &e), AC_EINVAL);
    cr_assert_eq(ac_inbox_create(cx, NULL), AC_EINVAL);
    ac_runtime_destroy(rt);
}

typedef struct sender_arg {
    ac_runtime *rt;
    ac_addr to;
    uint32_t id;
} sender_arg;

enum { THREADS = 4, PER_THREAD = 20000 };

static void *sender(void *p)
{
    sender_arg *s = p;
    ac_ctx *cx = ac_runtime_ctx(s->rt);
    for (uint64_t i = 0; i < PER_THREAD; i++) {
        ac_envelope *e = ac_envelope_new(cx, s->id, sizeof i);
        *(uint64_t *)ac_envelope_payload(e) = i;
        cr_assert_eq(ac_send(cx, &s->to, e), 0);
    }
    return NULL;
}

Test(inbox, many_threads_send_to_one_inbox_and_nothing_is_lost, .timeout = 60)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_inbox *ib;
    cr_assert_eq(ac_inbox_create(cx, &ib), 0);
    pthread_t t[THREADS];
    sender_arg args[THREADS];
    for (uint32_t i = 0; i < THREADS; i++) {
        args[i] = (sender_arg){rt, *ac_inbox_addr(ib), i};
        pthread_create(&t[i], NULL, sender, &args[i]);
    }
    uint64_t next[THREADS] = {0};
    for (uint64_t n = 0; n < (uint64_t)THREADS * PER_THREAD; n++) {
        ac_envelope *e;
        cr_assert_eq(ac_inbox_recv(cx, ib, AC_ANY_TAG, 10000, &e), 0);
        cr_assert_lt(e->tag, THREADS);
        /* FIFO per sender. */
        cr_assert_eq(*(uint64_t *)ac_envelope_payload(e), next[e->tag]);
        next[e->tag]++;
        ac_envelope_free(cx, e);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    ac_inbox_destroy(cx, ib);
    ac_runtime_destroy(rt);
}
