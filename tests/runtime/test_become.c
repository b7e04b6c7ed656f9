/*
 * test_become.c — behaviours from the IDL (tests/runtime/become.actor):
 * which handlers are active, postponed messages taken up again in order on
 * a change of behaviour, become from a start hook, become to the same
 * behaviour, what an actor that dies with postponed mail loses, and
 * messages and requests a behaviour neither handles nor postpones.
 */
#include "fixtures.h"
#include "become.actor.h"

#include <stdatomic.h>

static _Atomic int g_go_rc;             /* of the last become */
static _Atomic uint32_t g_held_gos;     /* go handled by held's own handler */

int become_Gate_hook_start(become_Gate *self, ac_ctx *cx, const become_Gate_start_args *args)
{
    return become_Gate_become(self, cx, (become_Gate_behaviour)args->first);
}

int become_Gate_on_item(become_Gate *self, ac_ctx *cx, const become_Gate_item *m)
{
    (void)self;
    (void)cx;
    note_handled(m->n);
    return 0;
}

static int go(become_Gate *self, ac_ctx *cx, uint32_t b)
{
    int rc = become_Gate_become(self, cx, (become_Gate_behaviour)b);
    atomic_store(&g_go_rc, rc);
    return rc == AC_EINVAL ? 0 : rc;    /* an unknown one is seen, not fatal */
}

int become_Gate_on_go(become_Gate *self, ac_ctx *cx, const become_Gate_go *m)
{
    return go(self, cx, m->behaviour);
}

int become_Gate_held_on_go(become_Gate *self, ac_ctx *cx, const become_Gate_go *m)
{
    atomic_fetch_add(&g_held_gos, 1);
    return go(self, cx, m->behaviour);
}

int become_Gate_sealed_on_go(become_Gate *self, ac_ctx *cx, const become_Gate_go *m)
{
    return go(self, cx, m->behaviour);
}

int become_Gate_on_peek(become_Gate *self, ac_ctx *cx, const become_Gate_peek *m)
{
    (void)self;
    return become_Gate_reply_peek(cx, &m->reply_to, handled_count());
}

int become_Gate_held_on_peek(become_Gate *self, ac_ctx *cx, const become_Gate_peek *m)
{
    self->peeks++;
    return become_Gate_reply_peek(cx, &m->reply_to, 1000 + self->peeks);
}

/* ---- helpers ------------------------------------------------------------------ */

static void send_items(ac_ctx *cx, become_Gate_ref g, uint32_t from, uint32_t to)
{
    for (uint32_t n = from; n <= to; n++)
        cr_assert_eq(become_Gate_send_item(cx, g, n), 0);
}

/* ---- tests -------------------------------------------------------------------- */

/* Items postponed while held come back in the order they came, before the
 * mail that followed the change back, and each is handled once. */
Test(become, postponed_come_back_in_order)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    become_Gate_ref g;
    cr_assert_eq(become_Gate_spawn(cx, &g, 0), 0);
    send_items(cx, g, 1, 2);
    cr_assert_eq(become_Gate_send_go(cx, g, become_Gate_BEHAVIOUR_held), 0);
    send_items(cx, g, 3, 6);
    cr_assert_eq(ac_runtime_run(rt), 0);
    expect_handled((const uint32_t[]){1, 2}, 2);
    cr_expect_eq(stashed_now(rt), 4);
    cr_assert_eq(become_Gate_send_go(cx, g, become_Gate_BEHAVIOUR_default), 0);
    send_items(cx, g, 7, 8);
    cr_assert_eq(ac_runtime_run(rt), 0);
    expect_handled((const uint32_t[]){1, 2, 3, 4, 5, 6, 7, 8}, 8);
    cr_expect_eq(atomic_load(&g_held_gos), 1);   /* held's own go handler */
    cr_expect_eq(atomic_load(&g_go_rc), 0);
    ac_stats s;
    ac_runtime_stats(rt, &s);
    cr_expect_eq(s.stashed, 0);
    cr_expect_eq(s.unhandled, 0);
    cr_expect_eq(s.messages, 10);   /* 8 items, 2 gos: a postponed one once */
    assert_sends_accounted(rt);
    ac_runtime_destroy(rt);
}

/* A start hook may choose the first behaviour: no message reaches the
 * default one's handlers before it. */
Test(become, from_the_start_hook)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    become_Gate_ref g;
    cr_assert_eq(become_Gate_spawn(cx, &g, become_Gate_BEHAVIOUR_held), 0);
    send_items(cx, g, 1, 3);
    cr_assert_eq(ac_runtime_run(rt), 0);
    expect_handled(NULL, 0);
    cr_expect_eq(stashed_now(rt), 3);
    become_Gate_peek_reply *r = NULL;
    cr_assert_eq(become_Gate_ask_peek_wait(cx, g, AC_FOREVER, &r), 0);
    cr_expect_eq(r->handled, 1001);  /* held's peek */
    ac_reply_free(cx, r);
    cr_assert_eq(become_Gate_send_go(cx, g, become_Gate_BEHAVIOUR_default), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    expect_handled((const uint32_t[]){1, 2, 3}, 3);
    assert_sends_accounted(rt);
    ac_runtime_destroy(rt);
}

/* Becoming the current behaviour changes nothing (the postponed stay
 * postponed); a behaviour the actor does not have is AC_EINVAL. */
Test(become, twice_and_unknown)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    become_Gate_ref g;
    cr_assert_eq(become_Gate_spawn(cx, &g, 0), 0);
    cr_assert_eq(become_Gate_send_go(cx, g, become_Gate_BEHAVIOUR_held), 0);
    send_items(cx, g, 1, 1);
    cr_assert_eq(become_Gate_send_go(cx, g, become_Gate_BEHAVIOUR_held), 0);
    send_items(cx, g, 2, 2);
    cr_assert_eq(ac_runtime_run(rt), 0);
    expect_handled(NULL, 0);
    cr_expect_eq(stashed_now(rt), 2);
    cr_expect_eq(atomic_load(&g_go_rc), 0);
    cr_assert_eq(become_Gate_send_go(cx, g, 99), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_expect_eq(atomic_load(&g_go_rc), AC_EINVAL);
    cr_expect_eq(stashed_now(rt), 2);
    cr_assert_eq(become_Gate_send_go(cx, g, become_Gate_BEHAVIOUR_default), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    expect_handled((const uint32_t[]){1, 2}, 2);
    /* Outside the actor, become is refused and changes nothing. */
    become_Gate st;
    memset(&st, 0, sizeof st);
    cr_expect_eq(become_Gate_become(&st, cx, become_Gate_BEHAVIOUR_held), AC_ESTATE);
    cr_expect_eq(st.behaviour_, 0);
    assert_sends_accounted(rt);
    ac_runtime_destroy(rt);
}

/* An actor that stops while it holds postponed mail loses it as dead
 * letters, each shown to the hook. */
Test(become, a_dying_actors_postponed_mail_is_dead_letters)
{
    ac_runtime *rt = make_runtime(0);
    dead_count dead = {{become_Gate_TAG_item}, 1, 0};
    ac_runtime_set_dead_letter_hook(rt, count_dead_letters, &dead);
    ac_ctx *cx = ac_runtime_ctx(rt);
    become_Gate_ref g;
    cr_assert_eq(become_Gate_spawn(cx, &g, become_Gate_BEHAVIOUR_held), 0);
    send_items(cx, g, 1, 4);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(ac_stop(cx, &g.addr), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    ac_stats s;
    ac_runtime_stats(rt, &s);
    cr_expect_eq(s.stashed, 0);
    cr_expect_eq(s.dead_letters, 4);
    cr_expect_eq(atomic_load(&dead.n), 4);
    expect_handled(NULL, 0);
    assert_sends_accounted(rt);
    ac_runtime_destroy(rt);
}

/* In `sealed`, which neither handles nor postpones items or peeks: an item
 * is dropped and counted, a peek is answered AC_EBADTAG (its asker does
 * not wait), and the actor lives on. What held postponed comes up when
 * sealed begins, and is unhandled there too. */
Test(become, neither_handled_nor_postponed)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    become_Gate_ref g;
    cr_assert_eq(become_Gate_spawn(cx, &g, become_Gate_BEHAVIOUR_held), 0);
    send_items(cx, g, 1, 2);
    cr_assert_eq(become_Gate_send_go(cx, g, become_Gate_BEHAVIOUR_sealed), 0);
    send_items(cx, g, 3, 3);
    cr_assert_eq(ac_runtime_run(rt), 0);
    become_Gate_peek_reply *r = NULL;
    cr_expect_eq(become_Gate_ask_peek_wait(cx, g, AC_FOREVER, &r), AC_EBADTAG);
    cr_expect_null(r);
    ac_stats s;
    ac_runtime_stats(rt, &s);
    cr_expect_eq(s.unhandled, 4);   /* items 1, 2 (postponed), 3 and the peek */
    cr_expect_eq(s.failed, 0);
    cr_expect_eq(s.stashed, 0);
    expect_handled(NULL, 0);
    /* Back to the default: items are handled again. */
    cr_assert_eq(become_Gate_send_go(cx, g, become_Gate_BEHAVIOUR_default), 0);
    send_items(cx, g, 4, 4);
    cr_assert_eq(ac_runtime_run(rt), 0);
    expect_handled((const uint32_t[]){4}, 1);
    assert_sends_accounted(rt);
    ac_runtime_destroy(rt);
}

/* On workers, while main's sends race the actor's changes of behaviour:
 * every item is handled exactly once, in the order main sent them. */
Test(become, on_workers_every_item_once_in_order)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    become_Gate_ref g;
    cr_assert_eq(become_Gate_spawn(cx, &g, 0), 0);
    uint32_t n = 1;
    for (int round = 0; round < 20; round++) {
        send_items(cx, g, n, n + 4);
        n += 5;
        cr_assert_eq(become_Gate_send_go(cx, g, become_Gate_BEHAVIOUR_held), 0);
        send_items(cx, g, n, n + 4);
        n += 5;
        cr_assert_eq(become_Gate_send_go(cx, g, become_Gate_BEHAVIOUR_default), 0);
    }
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(handled_count(), 200);
    for (uint32_t i = 0; i < 200; i++)
        cr_expect_eq(handled_at(i), i + 1);
    assert_sends_accounted(rt);
    ac_runtime_destroy(rt);
}
