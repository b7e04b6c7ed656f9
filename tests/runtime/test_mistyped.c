/*
 * test_mistyped.c — a reply is read with the layout of the request it
 * answers, as the asker knows it, never with one the replier or a node's
 * record chooses (docs/RUNTIME.md, "Request / reply"; docs/NODES.md). An
 * Oracle asked `name() -> (string s)` first answers with `num()`'s reply
 * {u64 a = 0, u64 b = 64} or with another type's reply of the same tag:
 * read as the string, that would be {data = NULL, len = 64}. Each wrong
 * answer is refused and counted (a dead letter here, a forged record from
 * another node) and the ask gets the right one that follows.
 */
#include "mistyped.actor.h"

#include "fixtures.h"
#include "nodes.h"

#include <criterion/criterion.h>
#include <stdatomic.h>
#include <string.h>

enum { WRONG_TAG = 1, WRONG_TYPE = 2, BOTH = WRONG_TAG | WRONG_TYPE };

int mistyped_Oracle_on_name(mistyped_Oracle *self AC_UNUSED, ac_ctx *cx,
                            const mistyped_Oracle_name *m)
{
    if ((m->how & WRONG_TAG) && mistyped_Oracle_reply_num(cx, &m->reply_to, 0, 64) != 0)
        return AC_EFAILED;
    if ((m->how & WRONG_TYPE) && mistyped_Impostor_reply_name(cx, &m->reply_to, 0, 64) != 0)
        return AC_EFAILED;
    return mistyped_Oracle_reply_name(cx, &m->reply_to, ac_string_of("alice"));
}

int mistyped_Oracle_on_num(mistyped_Oracle *self AC_UNUSED, ac_ctx *cx,
                           const mistyped_Oracle_num *m)
{
    return mistyped_Oracle_reply_num(cx, &m->reply_to, 1, 2);
}

int mistyped_Impostor_on_name(mistyped_Impostor *self AC_UNUSED, ac_ctx *cx,
                              const mistyped_Impostor_name *m)
{
    return mistyped_Impostor_reply_name(cx, &m->reply_to, 3, 4);
}

/* What the Asker's continuation saw; read by the test after quiescence
 * or once `calls` moved (release/acquire). */
static _Atomic int calls;
static int status_seen;
static char name_seen[16];
static size_t len_seen;

static int named(void *state AC_UNUSED, ac_ctx *cx AC_UNUSED, int status,
                 const mistyped_Oracle_name_reply *r, void *arg AC_UNUSED)
{
    status_seen = status;
    if (status == 0) {
        len_seen = r->s.len;
        if (r->s.len < sizeof name_seen)
            memcpy(name_seen, r->s.data, r->s.len);  /* data NULL if misread */
    }
    atomic_fetch_add_explicit(&calls, 1, memory_order_release);
    return 0;
}

int mistyped_Asker_on_go(mistyped_Asker *self AC_UNUSED, ac_ctx *cx, const mistyped_Asker_go *m)
{
    return mistyped_Oracle_ask_name(cx, m->oracle, m->how, 0, named, NULL);
}

static void reset(void)
{
    atomic_store(&calls, 0);
    status_seen = 1;
    len_seen = 0;
    memset(name_seen, 0, sizeof name_seen);
}

static void assert_named_alice(void)
{
    cr_assert_eq(atomic_load_explicit(&calls, memory_order_acquire), 1,
                 "the continuation ran once");
    cr_assert_eq(status_seen, 0);
    cr_assert_eq(len_seen, 5, "read with name's layout (len %zu)", len_seen);
    cr_assert_str_eq(name_seen, "alice");
}

static uint64_t dead_letters_of(ac_runtime *rt)
{
    ac_stats st;
    ac_runtime_stats(rt, &st);
    return st.dead_letters;
}

/* ---- one runtime ---------------------------------------------------------------------- */

static void ask_here(uint32_t how, uint64_t wrong)
{
    reset();
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    mistyped_Oracle_ref o;
    mistyped_Asker_ref a;
    cr_assert_eq(mistyped_Oracle_spawn(cx, &o), 0);
    cr_assert_eq(mistyped_Asker_spawn(cx, &a), 0);
    cr_assert_eq(mistyped_Asker_send_go(cx, a, o, how), 0);
    cr_assert_eq(ac_runtime_run(rt), 0, "no ask left waiting");
    assert_named_alice();
    cr_assert_eq(dead_letters_of(rt), wrong, "each wrong answer is a dead letter");
    ac_runtime_destroy(rt);
}

Test(mistyped, an_ask_refuses_another_requests_reply)
{
    ask_here(WRONG_TAG, 1);
}

Test(mistyped, an_ask_refuses_another_types_reply_of_the_same_tag)
{
    ask_here(WRONG_TYPE, 1);
}

Test(mistyped, a_blocking_ask_refuses_both)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    mistyped_Oracle_ref o;
    cr_assert_eq(mistyped_Oracle_spawn(cx, &o), 0);
    mistyped_Oracle_name_reply *r = NULL;
    cr_assert_eq(mistyped_Oracle_ask_name_wait(cx, o, BOTH, 10000, &r), 0);
    cr_assert_eq(r->s.len, 5);
    cr_assert(memcmp(r->s.data, "alice", 5) == 0);
    ac_reply_free(cx, r);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(dead_letters_of(rt), 2);
    ac_runtime_destroy(rt);
}

/* ---- across nodes ------------------------------------------------------------------------ */

/* alpha asks, beta answers; beta's Oracle is the member that lies. */
static pair_of_nodes nodes;

static uint64_t forged_on_alpha(void)
{
    ac_node_stats ns;
    cr_assert_eq(ac_runtime_node_stats(nodes.ra, &ns), 0);
    return ns.forged;
}

Test(mistyped, a_node_refuses_a_reply_of_another_layout_from_the_node_asked, .timeout = 60)
{
    reset();
    start_pair(&nodes, 10000, 0);
    mistyped_Oracle_ref o;
    mistyped_Asker_ref a;
    cr_assert_eq(mistyped_Oracle_spawn(ac_runtime_ctx(nodes.rb), &o), 0);
    cr_assert_eq(mistyped_Asker_spawn(ac_runtime_ctx(nodes.ra), &a), 0);
    cr_assert_eq(mistyped_Asker_send_go(ac_runtime_ctx(nodes.ra), a, o, BOTH), 0);
    WAIT_FOR(atomic_load(&calls) > 0);
    assert_named_alice();
    WAIT_FOR(forged_on_alpha() >= 2);
    cr_assert(forged_on_alpha() >= 2, "both wrong answers counted as forged (%llu)",
              (unsigned long long)forged_on_alpha());

    /* The same from main, blocking. */
    mistyped_Oracle_name_reply *r = NULL;
    cr_assert_eq(mistyped_Oracle_ask_name_wait(ac_runtime_ctx(nodes.ra), o, BOTH, WAIT_MS, &r), 0);
    cr_assert_eq(r->s.len, 5);
    cr_assert(memcmp(r->s.data, "alice", 5) == 0);
    ac_reply_free(ac_runtime_ctx(nodes.ra), r);
    WAIT_FOR(forged_on_alpha() >= 4);
    cr_assert(forged_on_alpha() >= 4);
    stop_pair(&nodes);
}

/* ---- groups of mixed types ------------------------------------------------------------- */

static _Atomic int lines;

int mistyped_Listener_on_line(mistyped_Listener *self AC_UNUSED, ac_ctx *cx AC_UNUSED,
                              const mistyped_Listener_line *m)
{
    cr_assert_eq(m->s.len, 2);
    atomic_fetch_add_explicit(&lines, 1, memory_order_release);
    return 0;
}

int mistyped_Counter_on_count(mistyped_Counter *self AC_UNUSED, ac_ctx *cx AC_UNUSED,
                              const mistyped_Counter_count *m AC_UNUSED)
{
    return AC_EFAILED;  /* a line read as a count: the test sees the Counter gone */
}

int mistyped_Counter_on_tally(mistyped_Counter *self AC_UNUSED, ac_ctx *cx,
                              const mistyped_Counter_tally *m)
{
    return mistyped_Counter_reply_tally(cx, &m->reply_to, 0);
}

/* A Counter and a Listener (joined in that order) in group "g" of rt. */
static void join_both(ac_runtime *rt, mistyped_Counter_ref *c)
{
    ac_ctx *cx = ac_runtime_ctx(rt);
    mistyped_Listener_ref l;
    cr_assert_eq(mistyped_Counter_spawn(cx, c), 0);
    cr_assert_eq(mistyped_Listener_spawn(cx, &l), 0);
    cr_assert_eq(ac_group_join(cx, "g", &c->addr), 0);
    cr_assert_eq(ac_group_join(cx, "g", &l.addr), 0);
}

Test(mistyped, a_publish_reaches_only_the_members_of_its_type)
{
    atomic_store(&lines, 0);
    ac_runtime *rt = make_runtime(0);
    ac_runtime_set_failure_hook(rt, ac_failure_quiet, NULL);
    mistyped_Counter_ref c;
    join_both(rt, &c);
    cr_assert_eq(mistyped_Listener_publish_line(ac_runtime_ctx(rt), "g", ac_string_of("hi")), 1);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(atomic_load(&lines), 1);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.failed, 0, "the Counter never read a line");
    ac_runtime_destroy(rt);
}

Test(mistyped, a_publish_from_another_node_reaches_only_the_members_of_its_type, .timeout = 60)
{
    atomic_store(&lines, 0);
    start_pair(&nodes, 10000, 0);
    mistyped_Counter_ref c;
    join_both(nodes.rb, &c);
    ac_ctx *cx = ac_runtime_ctx(nodes.ra);
    WAIT_FOR(ac_group_members(cx, "g", NULL, 0) >= 2);
    cr_assert_eq(ac_group_members(cx, "g", NULL, 0), 2, "alpha sees beta's members");
    cr_assert_eq(mistyped_Listener_publish_line(cx, "g", ac_string_of("hi")), 2,
                 "one record, for beta's two members");
    /* The tally goes behind the publish on the same link, and the Counter
     * answers it after any message delivered to it before. */
    mistyped_Counter_tally_reply *r = NULL;
    cr_assert_eq(mistyped_Counter_ask_tally_wait(cx, c, WAIT_MS, &r), 0,
                 "the Counter lives: no line reached it");
    ac_reply_free(cx, r);
    WAIT_FOR(atomic_load(&lines) > 0);
    cr_assert_eq(atomic_load(&lines), 1);
    stop_pair(&nodes);
}
