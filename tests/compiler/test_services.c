/*
 * test_services.c — the typed service wrappers that services.actor's
 * generated code adds to each send (publish, send_after, send_every) and
 * to each actor (spawn_opts, whereis, ref_of), used through real actors
 * against the runtime: what arrives, how often, and with what fields.
 */
#include <criterion/criterion.h>
#include <string.h>
#include <time.h>

#include "nodes.h"
#include "services.actor.h"
#include "helpers.h"

/* ---- what each Rec saw, by its start index ------------------------------------------ */

#define RECS 4

static struct seen {
    int notes, ticks;
    bool note_ok;           /* every field of every note as sent */
    uint32_t last_tick;
} seen[RECS];

static const uint32_t nums[] = { 3, 1, 4, 1, 5 };
static const uint8_t key[3] = { 0xa, 0xb, 0xc };

int svc_Rec_on_start(svc_Rec *self, ac_ctx *cx, const svc_Rec_start_args *args)
{
    (void)cx;
    cr_assert_lt(args->who, RECS);
    self->who = args->who;
    return 0;
}

static bool str_is(ac_string s, const char *want)
{
    return s.len == strlen(want) && memcmp(s.data, want, s.len) == 0 &&
           s.data[s.len] == '\0';
}

int svc_Rec_on_note(svc_Rec *self, ac_ctx *cx, const svc_Rec_note *m)
{
    (void)cx;
    struct seen *s = &seen[self->who];
    bool ok = m->n == 77 && str_is(m->text, "to everyone") &&
              m->nums.len == 5 &&
              memcmp(m->nums.data, nums, sizeof nums) == 0 &&
              m->nums.data != nums &&          /* a copy, not the sender's */
              m->label.id == 9 && str_is(m->label.text, "label") &&
              memcmp(m->key, key, sizeof key) == 0;
    s->note_ok = s->notes == 0 ? ok : s->note_ok && ok;
    s->notes++;
    return 0;
}

int svc_Rec_on_tick(svc_Rec *self, ac_ctx *cx, const svc_Rec_tick *m)
{
    (void)cx;
    seen[self->who].last_tick = m->n;
    /* Atomic: a threaded test polls it while the workers run. */
    __atomic_add_fetch(&seen[self->who].ticks, 1, __ATOMIC_RELEASE);
    return 0;
}

/* ---- helpers ------------------------------------------------------------------------ */

static int publish_note(ac_ctx *cx, const char *group)
{
    ac_u32_seq seq = { nums, 5 };
    svc_Label label = { 9, ac_string_of("label") };
    return svc_Rec_publish_note(cx, group, 77, ac_string_of("to everyone"), seq,
                                label, key);
}

static bool is_nil(svc_Rec_ref r)
{
    return ac_addr_is_nil(&r.addr);
}

/* ---- publish ------------------------------------------------------------------------ */

Test(services, publish_reaches_every_member_with_every_field)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    svc_Rec_ref r[3];
    for (uint32_t i = 0; i < 3; i++) {
        cr_assert_eq(svc_Rec_spawn(cx, &r[i], i), 0);
        cr_assert_eq(ac_group_join(cx, "all", &r[i].addr), 0);
    }
    cr_expect_eq(publish_note(cx, "all"), 3, "returns the members reached");
    cr_assert_eq(ac_runtime_run(rt), 0);
    for (int i = 0; i < 3; i++) {
        cr_expect_eq(seen[i].notes, 1, "member %d", i);
        cr_expect(seen[i].note_ok, "member %d got every field intact", i);
    }
    cr_expect_eq(seen[3].notes, 0);
    ac_runtime_destroy(rt);
}

Test(services, publish_to_an_empty_group_reaches_nobody)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_stats st;
    cr_expect_eq(publish_note(cx, "nobody"), 0);
    cr_expect_eq(publish_note(cx, ""), AC_EINVAL, "a bad group name");
    cr_assert_eq(ac_runtime_run(rt), 0);
    ac_runtime_stats(rt, &st);
    cr_expect_eq(st.messages, 0);
    ac_runtime_destroy(rt);
}

Test(services, publish_with_workers_reaches_every_member_once)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    svc_Rec_ref r[RECS];
    for (uint32_t i = 0; i < RECS; i++) {
        cr_assert_eq(svc_Rec_spawn(cx, &r[i], i), 0);
        cr_assert_eq(ac_group_join(cx, "all", &r[i].addr), 0);
    }
    for (int k = 0; k < 100; k++)
        cr_assert_eq(publish_note(cx, "all"), RECS);
    cr_assert_eq(ac_runtime_run(rt), 0);
    for (int i = 0; i < RECS; i++) {
        cr_expect_eq(seen[i].notes, 100, "member %d", i);
        cr_expect(seen[i].note_ok, "member %d", i);
    }
    ac_runtime_destroy(rt);
}

/* ---- timers ------------------------------------------------------------------------- */

Test(services, send_after_arrives_once_its_delay_has_passed)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    svc_Rec_ref r;
    ac_timer_id id = 0;
    cr_assert_eq(svc_Rec_spawn(cx, &r, 0), 0);
    cr_assert_eq(svc_Rec_send_tick_after(cx, r, 50, 42, &id), 0);
    cr_expect_neq(id, 0);
    cr_assert_eq(ac_runtime_advance(rt, 49), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_expect_eq(seen[0].ticks, 0, "not before its time");
    cr_assert_eq(ac_runtime_advance(rt, 1), 1);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_expect_eq(seen[0].ticks, 1);
    cr_expect_eq(seen[0].last_tick, 42);
    cr_assert_eq(ac_runtime_advance(rt, 1000), 0, "once");
    cr_expect_eq(ac_timer_cancel(cx, id), AC_ENOTFOUND, "it has fired");
    ac_runtime_destroy(rt);
}

Test(services, send_after_cancelled_never_arrives)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    svc_Rec_ref r;
    ac_timer_id id = 0;
    cr_assert_eq(svc_Rec_spawn(cx, &r, 0), 0);
    cr_assert_eq(svc_Rec_send_tick_after(cx, r, 10, 1, &id), 0);
    cr_expect_eq(ac_timer_cancel(cx, id), 0);
    cr_assert_eq(ac_runtime_advance(rt, 100), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_expect_eq(seen[0].ticks, 0);
    ac_runtime_destroy(rt);
}

Test(services, send_every_arrives_once_per_period_until_cancelled)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    svc_Rec_ref r;
    ac_timer_id id = 0;
    cr_assert_eq(svc_Rec_spawn(cx, &r, 1), 0);
    cr_assert_eq(svc_Rec_send_tick_every(cx, r, 10, 7, &id), 0);
    cr_expect_neq(id, 0);
    for (int beat = 1; beat <= 5; beat++) {
        cr_assert_eq(ac_runtime_advance(rt, 10), 1);
        cr_assert_eq(ac_runtime_run(rt), 0);
        cr_expect_eq(seen[1].ticks, beat);
    }
    cr_expect_eq(seen[1].last_tick, 7, "every copy carries the field");
    cr_expect_eq(ac_timer_cancel(cx, id), 0);
    cr_assert_eq(ac_runtime_advance(rt, 100), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_expect_eq(seen[1].ticks, 5);
    ac_runtime_destroy(rt);
}

Test(services, send_every_with_a_zero_period_fails_with_a_zero_id)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    svc_Rec_ref r;
    ac_timer_id id = 99;
    ac_stats st;
    cr_assert_eq(svc_Rec_spawn(cx, &r, 0), 0);
    cr_expect_eq(svc_Rec_send_tick_every(cx, r, 0, 1, &id), AC_EINVAL);
    cr_expect_eq(id, 0);
    cr_expect_eq(svc_Rec_send_tick_every(cx, r, 5, 1, NULL), 0, "id may be NULL");
    cr_assert_eq(ac_runtime_advance(rt, 10), 2);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_expect_eq(seen[0].ticks, 2);
    ac_runtime_stats(rt, &st);
    cr_expect_eq(st.dead_letters, 0);
    ac_runtime_destroy(rt);
}

Test(services, send_every_with_workers_keeps_beating)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    svc_Rec_ref r;
    ac_timer_id id = 0;
    cr_assert_eq(svc_Rec_spawn(cx, &r, 2), 0);
    cr_assert_eq(svc_Rec_send_tick_every(cx, r, 2, 5, &id), 0);
    /* At least three beats within a generous bound, without assuming the
     * machine's speed beyond that. */
    for (int i = 0; i < 2000; i++) {
        struct timespec ms5 = { 0, 5000000 };
        nanosleep(&ms5, NULL);
        if (__atomic_load_n(&seen[2].ticks, __ATOMIC_ACQUIRE) >= 3)
            break;
    }
    cr_expect_eq(ac_timer_cancel(cx, id), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_expect_geq(seen[2].ticks, 3);
    cr_expect_eq(seen[2].last_tick, 5);
    ac_runtime_destroy(rt);
}

/* ---- spawn_opts, whereis, ref_of ---------------------------------------------------- */

Test(services, spawn_opts_registers_the_name_and_whereis_returns_the_typed_ref)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_spawn_options o;
    memset(&o, 0, sizeof o);
    o.name = "recorder";
    svc_Rec_ref r, found, again;
    cr_assert_eq(svc_Rec_spawn_opts(cx, &o, &r, 3), 0);
    cr_assert_eq(svc_Rec_whereis(cx, "recorder", &found), 0);
    cr_expect(ac_addr_eq(&found.addr, &r.addr));
    cr_assert_eq(svc_Rec_send_tick(cx, found, 11), 0, "the ref is usable as is");
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_expect_eq(seen[3].ticks, 1, "the start hook got its argument");
    cr_expect_eq(seen[3].last_tick, 11);
    cr_expect_eq(svc_Rec_spawn_opts(cx, &o, &again, 0), AC_EEXIST,
                 "the name is taken");
    ac_runtime_destroy(rt);
}

Test(services, whereis_of_an_unknown_name_gives_the_nil_ref)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    svc_Rec_ref r, found;
    cr_assert_eq(svc_Rec_spawn(cx, &r, 0), 0);
    found = r;
    cr_expect_eq(svc_Rec_whereis(cx, "nobody", &found), AC_ENOTFOUND);
    cr_expect(is_nil(found));
    cr_expect_eq(svc_Rec_whereis(cx, "nobody", NULL), AC_EINVAL);
    /* The name dies with its actor. */
    cr_assert_eq(ac_register(cx, "r", &r.addr), 0);
    cr_assert_eq(ac_stop(cx, &r.addr), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_expect_eq(svc_Rec_whereis(cx, "r", &found), AC_ENOTFOUND);
    ac_runtime_destroy(rt);
}

Test(services, spawn_opts_honours_a_mailbox_bound)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_spawn_options o;
    memset(&o, 0, sizeof o);
    o.mailbox_bound = 2;
    o.mailbox_overflow = AC_OVERFLOW_REJECT;
    svc_Rec_ref r, plain;
    ac_stats st;
    cr_assert_eq(svc_Rec_spawn_opts(cx, &o, &r, 0), 0);
    cr_assert_eq(svc_Rec_spawn_opts(cx, NULL, &plain, 1), 0, "NULL options");
    cr_expect_eq(svc_Rec_send_tick(cx, r, 1), 0);
    cr_expect_eq(svc_Rec_send_tick(cx, r, 2), 0);
    cr_expect_eq(svc_Rec_send_tick(cx, r, 3), AC_EFULL);
    for (uint32_t i = 0; i < 10; i++)
        cr_expect_eq(svc_Rec_send_tick(cx, plain, i), 0, "unbounded");
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_expect_eq(seen[0].ticks, 2);
    cr_expect_eq(seen[0].last_tick, 2);
    cr_expect_eq(seen[1].ticks, 10);
    ac_runtime_stats(rt, &st);
    cr_expect_eq(st.mailbox_drops, 1);
    ac_runtime_destroy(rt);
}

Test(services, ref_of_turns_a_group_listing_into_typed_refs)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    svc_Rec_ref r[2];
    ac_addr members[2];
    for (uint32_t i = 0; i < 2; i++) {
        cr_assert_eq(svc_Rec_spawn(cx, &r[i], i), 0);
        cr_assert_eq(ac_group_join(cx, "pair", &r[i].addr), 0);
    }
    cr_assert_eq(ac_group_members(cx, "pair", members, 2), 2);
    for (uint32_t i = 0; i < 2; i++) {
        svc_Rec_ref m = svc_Rec_ref_of(members[i]);
        cr_expect(ac_addr_eq(&m.addr, &members[i]));
        cr_assert_eq(svc_Rec_send_tick(cx, m, 100 + i), 0);
    }
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_expect_eq(seen[0].ticks + seen[1].ticks, 2);
    cr_expect_eq(seen[0].ticks, 1);
    cr_expect_eq(seen[1].ticks, 1);
    ac_runtime_destroy(rt);
}

/* ---- across nodes -------------------------------------------------------------------- */

/* The generated send of a typed reference reaches an actor of another node
 * with every field as sent: its variable-length data, nested structs and
 * arrays travel encoded by the generated codec and are rebuilt there. */
Test(services, a_typed_send_reaches_an_actor_of_another_node_whole, .timeout = 60)
{
    pair_of_nodes nodes;
    start_pair(&nodes, 10000, 0);
    ac_runtime *ra = nodes.ra, *rb = nodes.rb;

    svc_Rec_ref there;
    cr_assert_eq(svc_Rec_spawn(ac_runtime_ctx(rb), &there, 0), 0);
    ac_ctx *cx = ac_runtime_ctx(ra);
    ac_u32_seq seq = { nums, 5 };
    svc_Label label = { 9, ac_string_of("label") };
    enum { N = 100 };
    for (int i = 0; i < N; i++)
        cr_assert_eq(svc_Rec_send_note(cx, there, 77, ac_string_of("to everyone"), seq, label,
                                       key), 0);
    ac_peer_info p = {0};
    for (uint64_t t0 = now_ms(); now_ms() - t0 < WAIT_MS; usleep(2000))
        if (peer_of(rb, "alpha", &p) && p.received == N)
            break;
    cr_assert_eq(p.received, N);
    ac_runtime_run(rb);
    cr_assert_eq(seen[0].notes, N);
    cr_assert(seen[0].note_ok, "every field as sent");
    stop_pair(&nodes);
}
