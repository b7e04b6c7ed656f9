/*
 * test_sample.c — sample.actor's generated code, linked into this suite,
 * against the real runtime: every message reaches the right handler, once,
 * with every field intact; the descriptors, tags and C types are what the
 * IDL says.
 */
#include <criterion/criterion.h>
#include <float.h>
#include <stdalign.h>
#include <string.h>

#include "sample.actor.h"
#include "helpers.h"

/* ---- what the handlers saw ------------------------------------------------ */

static struct seen {
    int ints, uints, floats, flags, refs, poke, hello, nothing;
    int order[16];
    int count;
    sample_A_ints ints_m;
    sample_A_uints uints_m;
    sample_A_floats floats_m;
    sample_A_flags flags_m;
    sample_A_refs refs_m;
    sample_A_ref poke_self;
    uint64_t hello_n;
    uint32_t handled_at_poke;
} seen;

static void record(int which)
{
    if (seen.count < 16)
        seen.order[seen.count] = which;
    seen.count++;
}

int sample_A_on_ints(sample_A *self, ac_ctx *cx, const sample_A_ints *m)
{
    (void)cx;
    self->handled++;
    self->last = m->d;
    seen.ints++;
    seen.ints_m = *m;
    record(sample_A_TAG_ints);
    return 0;
}

int sample_A_on_uints(sample_A *self, ac_ctx *cx, const sample_A_uints *m)
{
    (void)cx;
    self->handled++;
    seen.uints++;
    seen.uints_m = *m;
    record(sample_A_TAG_uints);
    return 0;
}

int sample_A_on_floats(sample_A *self, ac_ctx *cx, const sample_A_floats *m)
{
    (void)cx;
    self->handled++;
    seen.floats++;
    seen.floats_m = *m;
    record(sample_A_TAG_floats);
    return 0;
}

int sample_A_on_flags(sample_A *self, ac_ctx *cx, const sample_A_flags *m)
{
    (void)cx;
    self->handled++;
    seen.flags++;
    seen.flags_m = *m;
    record(sample_A_TAG_flags);
    return 0;
}

int sample_A_on_refs(sample_A *self, ac_ctx *cx, const sample_A_refs *m)
{
    (void)cx;
    self->handled++;
    seen.refs++;
    seen.refs_m = *m;
    record(sample_A_TAG_refs);
    return 0;
}

int sample_A_on_poke(sample_A *self, ac_ctx *cx, const sample_A_poke *m)
{
    (void)m;
    self->handled++;
    seen.poke++;
    seen.poke_self = sample_A_ref_self(cx);
    seen.handled_at_poke = self->handled;
    record(sample_A_TAG_poke);
    return 0;
}

int sample_B_on_hello(sample_B *self, ac_ctx *cx, const sample_B_hello *m)
{
    (void)self;
    (void)cx;
    seen.hello++;
    seen.hello_n = m->n;
    return 0;
}

int sample_C_on_nothing(sample_C *self, ac_ctx *cx, const sample_C_nothing *m)
{
    (void)self;
    (void)cx;
    (void)m;
    seen.nothing++;
    return 0;
}

/* V: what its handlers saw, checked where the envelope is still alive. */
static struct vseen {
    int texts, empty;
    bool texts_ok, empty_ok, in_envelope;
} vseen;

static bool str_is(ac_string s, const char *want)
{
    return s.len == strlen(want) && memcmp(s.data, want, s.len) == 0 &&
           s.data[s.len] == '\0';
}

/* Whether [p, p + n) lies in the payload of the envelope holding m, which
 * is at most `cap` bytes long. */
static bool inside(const void *m, size_t cap, const void *p, size_t n)
{
    const unsigned char *b = m, *q = p;
    return n == 0 || (q >= b && q + n <= b + cap);
}

#define V_CAP 512

int sample_V_on_texts(sample_V *self, ac_ctx *cx, const sample_V_texts *m)
{
    (void)self;
    (void)cx;
    vseen.texts++;
    vseen.texts_ok = str_is(m->s, "copied string") && m->b.len == 3 &&
                     m->b.data[0] == 1 && m->b.data[2] == 0xff &&
                     m->nums.len == 3 && m->nums.data[0] == 7 &&
                     m->nums.data[2] == UINT32_MAX && m->words.len == 2 &&
                     str_is(m->words.data[0], "alpha") &&
                     str_is(m->words.data[1], "");
    vseen.in_envelope =
        inside(m, V_CAP, m->s.data, m->s.len + 1) &&
        inside(m, V_CAP, m->b.data, m->b.len) &&
        inside(m, V_CAP, m->nums.data, m->nums.len * sizeof(uint32_t)) &&
        inside(m, V_CAP, m->words.data, m->words.len * sizeof(ac_string)) &&
        inside(m, V_CAP, m->words.data[0].data, 6) &&
        inside(m, V_CAP, m->words.data[1].data, 1);
    return 0;
}

int sample_V_on_empty(sample_V *self, ac_ctx *cx, const sample_V_empty *m)
{
    (void)self;
    (void)cx;
    vseen.empty++;
    vseen.empty_ok = str_is(m->s, "") && m->none.len == 0 &&
                     inside(m, V_CAP, m->s.data, 1);
    return 0;
}

/* ---- the generated declarations -------------------------------------------- */

#define IS(expr, T) _Generic((expr), T: 1, default: 0)

Test(sample, c_types_follow_the_idl)
{
    sample_A_ints i;
    sample_A_uints u;
    sample_A_floats f;
    sample_A_flags b;
    sample_A_refs r;
    sample_A a;
    memset(&i, 0, sizeof(i));
    memset(&u, 0, sizeof(u));
    memset(&f, 0, sizeof(f));
    memset(&b, 0, sizeof(b));
    memset(&r, 0, sizeof(r));
    memset(&a, 0, sizeof(a));
    cr_expect(IS(i.a, int8_t) && IS(i.b, int16_t) && IS(i.c, int32_t) &&
              IS(i.d, int64_t));
    cr_expect(IS(u.a, uint8_t) && IS(u.b, uint16_t) && IS(u.c, uint32_t) &&
              IS(u.d, uint64_t));
    cr_expect(IS(f.x, float) && IS(f.y, double));
    cr_expect(IS(b.yes, bool) && IS(b.no, bool));
    cr_expect(IS(r.b, sample_B_ref) && IS(r.a, sample_A_ref) &&
              IS(r.raw, ac_addr));
    cr_expect(IS(r.b.addr, ac_addr));
    cr_expect(IS(a.handled, uint32_t) && IS(a.last, int64_t));
    cr_expect_eq(sizeof(sample_A_poke), 1);     /* { uint8_t unused_; } */
}

Test(sample, tags_in_declaration_order)
{
    cr_expect_eq(sample_A_TAG_ints, 0);
    cr_expect_eq(sample_A_TAG_uints, 1);
    cr_expect_eq(sample_A_TAG_floats, 2);
    cr_expect_eq(sample_A_TAG_flags, 3);
    cr_expect_eq(sample_A_TAG_refs, 4);
    cr_expect_eq(sample_A_TAG_poke, 5);
    cr_expect_eq(sample_B_TAG_hello, 0);
    cr_expect_eq(sample_C_TAG_nothing, 0);
}

Test(sample, descriptors)
{
    static const char *const names[] = {
        "ints", "uints", "floats", "flags", "refs", "poke",
    };
    const ac_actor_type *t = &sample_A_type;
    cr_expect_eq(t->abi, AC_ABI_VERSION);
    cr_expect_str_eq(t->name, "sample.A");
    cr_expect_eq(t->state_size, sizeof(sample_A));
    cr_expect_eq(t->state_align, alignof(sample_A));
    cr_expect_not_null(t->dispatch);
    cr_expect_null(t->on_start);
    cr_expect_null(t->on_stop);
    cr_assert_eq(t->message_count, 6);
    for (uint32_t i = 0; i < t->message_count; i++)
        cr_expect_str_eq(t->message_names[i], names[i]);

    /* No state block, and an empty one: no state. */
    cr_expect_str_eq(sample_B_type.name, "sample.B");
    cr_expect_eq(sample_B_type.state_size, 0);
    cr_expect_eq(sample_B_type.state_align, 1);
    cr_expect_eq(sample_C_type.state_size, 0);
    cr_expect_eq(sample_C_type.message_count, 1);
    cr_expect_str_eq(sample_C_type.message_names[0], "nothing");

    /* No messages. */
    cr_expect_eq(sample_Idle_type.message_count, 0);
    cr_expect_null(sample_Idle_type.message_names);
    cr_expect_not_null(sample_Idle_type.dispatch);
}

/* The dispatch function on its own: the right handler, and AC_EBADTAG for
 * a tag the actor does not have. */
Test(sample, dispatch_switch)
{
    union {
        max_align_t align;
        unsigned char bytes[AC_ENVELOPE_HEADER_SIZE + sizeof(sample_A_flags)];
    } env;
    memset(&env, 0, sizeof(env));
    ac_envelope *e = (ac_envelope *)env.bytes;
    sample_A state;
    memset(&state, 0, sizeof(state));

    e->tag = sample_A_TAG_flags;
    sample_A_flags *m = ac_envelope_payload(e);
    m->yes = true;
    cr_expect_eq(sample_A_type.dispatch(&state, NULL, e), 0);
    cr_expect_eq(seen.flags, 1);
    cr_expect(seen.flags_m.yes && !seen.flags_m.no);
    cr_expect_eq(state.handled, 1);

    e->tag = 6;
    cr_expect_eq(sample_A_type.dispatch(&state, NULL, e), AC_EBADTAG);
    e->tag = UINT32_MAX;
    cr_expect_eq(sample_A_type.dispatch(&state, NULL, e), AC_EBADTAG);
    cr_expect_eq(state.handled, 1);
    cr_expect_eq(seen.count, 1);

    e->tag = 0;
    cr_expect_eq(sample_Idle_type.dispatch(NULL, NULL, e), AC_EBADTAG);
}

/* ---- through the runtime ----------------------------------------------------- */

Test(sample, every_message_arrives_intact)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    cr_assert_not_null(cx);

    sample_A_ref a;
    sample_B_ref b;
    sample_C_ref c;
    sample_Idle_ref idle;
    cr_assert_eq(sample_A_spawn(cx, &a), 0);
    cr_assert_eq(sample_B_spawn(cx, &b), 0);
    cr_assert_eq(sample_C_spawn(cx, &c), 0);
    cr_assert_eq(sample_Idle_spawn(cx, &idle), 0);
    cr_expect(!ac_addr_eq(&a.addr, &b.addr));

    /* Outside a handler there is no self. */
    sample_A_ref nobody = sample_A_ref_self(cx);
    cr_expect(ac_addr_is_nil(&nobody.addr));

    ac_addr raw;
    for (int i = 0; i < 32; i++)
        raw.bytes[i] = (uint8_t)(0xa0 + i);

    cr_assert_eq(sample_A_send_ints(cx, a, INT8_MIN, INT16_MAX, INT32_MIN,
                                    INT64_MIN), 0);
    cr_assert_eq(sample_A_send_uints(cx, a, UINT8_MAX, 0x1234, UINT32_MAX,
                                     UINT64_MAX), 0);
    cr_assert_eq(sample_A_send_floats(cx, a, -FLT_MAX, DBL_MIN), 0);
    cr_assert_eq(sample_A_send_flags(cx, a, true, false), 0);
    cr_assert_eq(sample_A_send_refs(cx, a, b, a, raw), 0);
    cr_assert_eq(sample_A_send_poke(cx, a), 0);
    cr_assert_eq(sample_B_send_hello(cx, b, 0x0123456789abcdefull), 0);
    cr_assert_eq(sample_C_send_nothing(cx, c), 0);

    cr_assert_eq(ac_runtime_run(rt), 0);

    cr_expect_eq(seen.ints, 1);
    cr_expect_eq(seen.uints, 1);
    cr_expect_eq(seen.floats, 1);
    cr_expect_eq(seen.flags, 1);
    cr_expect_eq(seen.refs, 1);
    cr_expect_eq(seen.poke, 1);
    cr_expect_eq(seen.hello, 1);
    cr_expect_eq(seen.nothing, 1);

    /* One sender, one receiver: in order. */
    cr_assert_eq(seen.count, 6);
    for (int i = 0; i < 6; i++)
        cr_expect_eq(seen.order[i], i, "message %d handled as tag %d", i,
                     seen.order[i]);

    cr_expect_eq(seen.ints_m.a, INT8_MIN);
    cr_expect_eq(seen.ints_m.b, INT16_MAX);
    cr_expect_eq(seen.ints_m.c, INT32_MIN);
    cr_expect_eq(seen.ints_m.d, INT64_MIN);
    cr_expect_eq(seen.uints_m.a, UINT8_MAX);
    cr_expect_eq(seen.uints_m.b, 0x1234);
    cr_expect_eq(seen.uints_m.c, UINT32_MAX);
    cr_expect_eq(seen.uints_m.d, UINT64_MAX);
    cr_expect(seen.floats_m.x == -FLT_MAX);
    cr_expect(seen.floats_m.y == DBL_MIN);
    cr_expect(seen.flags_m.yes == true && seen.flags_m.no == false);
    cr_expect(ac_addr_eq(&seen.refs_m.b.addr, &b.addr));
    cr_expect(ac_addr_eq(&seen.refs_m.a.addr, &a.addr));
    cr_expect(ac_addr_eq(&seen.refs_m.raw, &raw));
    cr_expect_eq(seen.hello_n, 0x0123456789abcdefull);

    /* The state persisted across handlers; ref_self named the actor. */
    cr_expect_eq(seen.handled_at_poke, 6);
    cr_expect(ac_addr_eq(&seen.poke_self.addr, &a.addr));

    ac_runtime_destroy(rt);
}

/* A send to an actor that does not exist is an error, not a crash. */
Test(sample, send_to_nobody)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    sample_B_ref nobody;
    memset(&nobody, 0x5a, sizeof(nobody));
    cr_expect_eq(sample_B_send_hello(cx, nobody, 1), 0, "a dead letter, not a failure");
    cr_expect_eq(sample_B_send_hello_checked(cx, nobody, 1), AC_ENOTFOUND);
    cr_expect(sample_B_ref_is_nil(sample_B_ref_nil()));
    cr_expect(!sample_B_ref_is_nil(nobody));
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_expect_eq(seen.hello, 0);
    ac_runtime_destroy(rt);
}

/* ---- copies (the descriptor's copy) ------------------------------------------- */

/* The payload size of each message of A, B and C by tag, to poison. */
static size_t fixed_size(const ac_actor_type *t, uint32_t tag)
{
    static const size_t a[] = {
        sizeof(sample_A_ints), sizeof(sample_A_uints), sizeof(sample_A_floats),
        sizeof(sample_A_flags), sizeof(sample_A_refs), sizeof(sample_A_poke),
    };
    if (t == &sample_A_type)
        return tag < 6 ? a[tag] : 0;
    if (t == &sample_B_type)
        return sizeof(sample_B_hello);
    return sizeof(sample_C_nothing);
}

static const ac_actor_type *real_type(void *state, ac_ctx *cx);
static int copies;
static ac_addr copy_addrs[4];

/* Copies each message, spoils the original (the runtime frees it after
 * this returns), and hands the copy to the real dispatch: the handlers'
 * checks then see only what the copy holds. */
static int copy_then_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    const ac_actor_type *t = real_type(state, cx);
    ac_envelope *c = t->copy(cx, e);
    cr_assert_not_null(c);
    cr_assert_neq(c, e);
    cr_expect_eq(c->tag, e->tag);
    copies++;
    if (t == &sample_V_type) {
        /* Spoil the bytes the original's views point at. */
        if (e->tag == sample_V_TAG_texts) {
            sample_V_texts *m = ac_envelope_payload(e);
            memset((void *)m->s.data, '#', m->s.len);
            memset((void *)m->b.data, 0x55, m->b.len);
            memset((void *)m->nums.data, 0x55, m->nums.len * sizeof(uint32_t));
            memset((void *)m->words.data, 0, m->words.len * sizeof(ac_string));
        }
        memset(ac_envelope_payload(e), 0xee, sizeof(sample_V_empty));
    } else {
        memset(ac_envelope_payload(e), 0xee, fixed_size(t, e->tag));
    }
    int rc = t->dispatch(state, cx, c);
    ac_envelope_free(cx, c);
    return rc;
}

static ac_actor_type copying[4];

static const ac_actor_type *real_type(void *state, ac_ctx *cx)
{
    (void)state;
    /* Which copying type runs: the current actor's, found by address. */
    static const ac_actor_type *const real[4] = {
        &sample_A_type, &sample_B_type, &sample_C_type, &sample_V_type,
    };
    for (int i = 0; i < 4; i++)
        if (ac_addr_eq(ac_self(cx), &copy_addrs[i]))
            return real[i];
    cr_assert_fail("no copying actor at this address");
    return NULL;
}

Test(sample, copy_duplicates_every_message_with_views_into_the_copy)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);

    const ac_actor_type *real[4] = {
        &sample_A_type, &sample_B_type, &sample_C_type, &sample_V_type,
    };
    for (int i = 0; i < 4; i++) {
        cr_assert_not_null(real[i]->copy);
        copying[i] = *real[i];
        copying[i].dispatch = copy_then_dispatch;
        cr_assert_eq(ac_spawn(cx, &copying[i], NULL, &copy_addrs[i]), 0);
    }
    sample_A_ref a = { copy_addrs[0] };
    sample_B_ref b = { copy_addrs[1] };
    sample_C_ref c = { copy_addrs[2] };
    sample_V_ref v = { copy_addrs[3] };
    ac_addr raw;
    for (int i = 0; i < 32; i++)
        raw.bytes[i] = (uint8_t)(0xa0 + i);

    cr_assert_eq(sample_A_send_ints(cx, a, INT8_MIN, INT16_MAX, INT32_MIN,
                                    INT64_MIN), 0);
    cr_assert_eq(sample_A_send_uints(cx, a, UINT8_MAX, 0x1234, UINT32_MAX,
                                     UINT64_MAX), 0);
    cr_assert_eq(sample_A_send_floats(cx, a, -FLT_MAX, DBL_MIN), 0);
    cr_assert_eq(sample_A_send_flags(cx, a, true, false), 0);
    cr_assert_eq(sample_A_send_refs(cx, a, b, a, raw), 0);
    cr_assert_eq(sample_A_send_poke(cx, a), 0);
    cr_assert_eq(sample_B_send_hello(cx, b, 0x0123456789abcdefull), 0);
    cr_assert_eq(sample_C_send_nothing(cx, c), 0);
    uint8_t bytes[3] = { 1, 2, 0xff };
    uint32_t nums[3] = { 7, 8, UINT32_MAX };
    ac_string words[2] = { ac_string_of("alpha"), ac_string_of("") };
    ac_bytes bv = { bytes, 3 };
    ac_u32_seq nv = { nums, 3 };
    ac_string_seq wv = { words, 2 };
    cr_assert_eq(sample_V_send_texts(cx, v, ac_string_of("copied string"), bv,
                                     nv, wv), 0);
    ac_u8_seq none = { NULL, 0 };
    cr_assert_eq(sample_V_send_empty(cx, v, ac_string_of(NULL), none), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);

    cr_expect_eq(copies, 10);
    cr_assert_eq(seen.count, 6);
    for (int i = 0; i < 6; i++)
        cr_expect_eq(seen.order[i], i);
    cr_expect_eq(seen.ints_m.a, INT8_MIN);
    cr_expect_eq(seen.ints_m.b, INT16_MAX);
    cr_expect_eq(seen.ints_m.c, INT32_MIN);
    cr_expect_eq(seen.ints_m.d, INT64_MIN);
    cr_expect_eq(seen.uints_m.a, UINT8_MAX);
    cr_expect_eq(seen.uints_m.b, 0x1234);
    cr_expect_eq(seen.uints_m.c, UINT32_MAX);
    cr_expect_eq(seen.uints_m.d, UINT64_MAX);
    cr_expect(seen.floats_m.x == -FLT_MAX);
    cr_expect(seen.floats_m.y == DBL_MIN);
    cr_expect(seen.flags_m.yes == true && seen.flags_m.no == false);
    cr_expect(ac_addr_eq(&seen.refs_m.b.addr, &b.addr));
    cr_expect(ac_addr_eq(&seen.refs_m.a.addr, &a.addr));
    cr_expect(ac_addr_eq(&seen.refs_m.raw, &raw));
    cr_expect_eq(seen.poke, 1);
    cr_expect_eq(seen.hello_n, 0x0123456789abcdefull);
    cr_expect_eq(seen.nothing, 1);
    cr_expect_eq(vseen.texts, 1);
    cr_expect(vseen.texts_ok, "a field of the copy differs");
    cr_expect(vseen.in_envelope, "a view of the copy points outside it");
    cr_expect_eq(vseen.empty, 1);
    cr_expect(vseen.empty_ok);
    ac_runtime_destroy(rt);
}

/* An actor without messages has nothing to copy. */
Test(sample, copy_of_an_actor_without_messages_is_null)
{
    union {
        max_align_t align;
        unsigned char bytes[AC_ENVELOPE_HEADER_SIZE + 16];
    } env;
    memset(&env, 0, sizeof(env));
    cr_assert_not_null(sample_Idle_type.copy);
    cr_expect_null(sample_Idle_type.copy(NULL, (ac_envelope *)env.bytes));
}

/* ---- mailbox options from the IDL ----------------------------------------------- */

static uint32_t small_got[8], lossy_got[8];
static int small_n, lossy_n;

int sample_Small_on_item(sample_Small *self, ac_ctx *cx, const sample_Small_item *m)
{
    (void)self;
    (void)cx;
    if (small_n < 8)
        small_got[small_n] = m->n;
    small_n++;
    return 0;
}

int sample_Lossy_on_item(sample_Lossy *self, ac_ctx *cx, const sample_Lossy_item *m)
{
    (void)self;
    (void)cx;
    if (lossy_n < 8)
        lossy_got[lossy_n] = m->n;
    lossy_n++;
    return 0;
}

Test(sample, mailbox_options_reach_the_descriptor)
{
    cr_expect_eq(sample_Small_type.mailbox_bound, 2);
    cr_expect_eq(sample_Small_type.mailbox_overflow, AC_OVERFLOW_REJECT);
    cr_expect_eq(sample_Lossy_type.mailbox_bound, 1);
    cr_expect_eq(sample_Lossy_type.mailbox_overflow, AC_OVERFLOW_DROP_NEWEST);
    cr_expect_eq(sample_A_type.mailbox_bound, 0);
}

/* Deterministic mode: nothing runs until ac_runtime_run, so the sends
 * queue up against the bound the IDL gave. */
Test(sample, bounded_mailbox_from_the_idl_refuses_when_full)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    sample_Small_ref small;
    sample_Lossy_ref lossy;
    cr_assert_eq(sample_Small_spawn(cx, &small), 0);
    cr_assert_eq(sample_Lossy_spawn(cx, &lossy), 0);

    cr_expect_eq(sample_Small_send_item(cx, small, 1), 0);
    cr_expect_eq(sample_Small_send_item(cx, small, 2), 0);
    cr_expect_eq(sample_Small_send_item(cx, small, 3), AC_EFULL);
    cr_expect_eq(sample_Lossy_send_item(cx, lossy, 10), 0);
    cr_expect_eq(sample_Lossy_send_item(cx, lossy, 11), 0);  /* dropped */
    cr_assert_eq(ac_runtime_run(rt), 0);

    cr_assert_eq(small_n, 2);
    cr_expect_eq(small_got[0], 1);
    cr_expect_eq(small_got[1], 2);
    cr_assert_eq(lossy_n, 1);
    cr_expect_eq(lossy_got[0], 10);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_expect_eq(st.mailbox_drops, 2);

    /* Handled, the room is back. */
    cr_expect_eq(sample_Small_send_item(cx, small, 4), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_expect_eq(small_n, 3);
    ac_runtime_destroy(rt);
}

/* ---- down and exit hooks ----------------------------------------------------------- */

static ac_down downs[4];
static ac_exit exits[4];
static int ndowns, nexits;

int sample_Watcher_on_down(sample_Watcher *self, ac_ctx *cx, const ac_down *m)
{
    (void)self;
    (void)cx;
    if (ndowns < 4)
        downs[ndowns] = *m;
    ndowns++;
    return 0;
}

int sample_Watcher_on_exit(sample_Watcher *self, ac_ctx *cx, const ac_exit *m)
{
    (void)self;
    (void)cx;
    if (nexits < 4)
        exits[nexits] = *m;
    nexits++;
    return 0;
}

int sample_Watcher_on_link(sample_Watcher *self, ac_ctx *cx,
                           const sample_Watcher_link *m)
{
    (void)self;
    cr_assert_eq(ac_trap_exits(cx, true), 0);
    return ac_link(cx, &m->other);
}

int sample_Doomed_on_fail(sample_Doomed *self, ac_ctx *cx, const sample_Doomed_fail *m)
{
    (void)self;
    (void)cx;
    return m->code;
}

Test(sample, down_hook_receives_the_monitored_actors_address_and_reason)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    sample_Watcher_ref w;
    sample_Doomed_ref failing;
    sample_B_ref stopping;
    cr_assert_eq(sample_Watcher_spawn(cx, &w), 0);
    cr_assert_eq(sample_Doomed_spawn(cx, &failing), 0);
    cr_assert_eq(sample_B_spawn(cx, &stopping), 0);
    uint64_t ref_failing = 0, ref_stopping = 0;
    cr_assert_eq(ac_monitor(cx, &w.addr, &failing.addr, &ref_failing), 0);
    cr_assert_eq(ac_monitor(cx, &w.addr, &stopping.addr, &ref_stopping), 0);

    cr_assert_eq(sample_Doomed_send_fail(cx, failing, -42), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(ndowns, 1);
    cr_expect(ac_addr_eq(&downs[0].who, &failing.addr));
    cr_expect_eq(downs[0].ref, ref_failing);
    cr_expect_eq(downs[0].reason, AC_REASON_FAILED);
    cr_expect_eq(downs[0].code, -42);

    cr_assert_eq(ac_stop(cx, &stopping.addr), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(ndowns, 2);
    cr_expect(ac_addr_eq(&downs[1].who, &stopping.addr));
    cr_expect_eq(downs[1].ref, ref_stopping);
    cr_expect_eq(downs[1].reason, AC_REASON_NORMAL);
    cr_expect_eq(downs[1].code, 0);

    /* Already gone: an immediate down, reason noproc. */
    cr_assert_eq(ac_monitor(cx, &w.addr, &failing.addr, NULL), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(ndowns, 3);
    cr_expect_eq(downs[2].reason, AC_REASON_NOPROC);

    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_expect_eq(st.unhandled, 0);
    ac_runtime_destroy(rt);
}

Test(sample, exit_hook_receives_a_linked_failure_when_trapping)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    sample_Watcher_ref w;
    sample_Doomed_ref d;
    cr_assert_eq(sample_Watcher_spawn(cx, &w), 0);
    cr_assert_eq(sample_Doomed_spawn(cx, &d), 0);
    cr_assert_eq(sample_Watcher_send_link(cx, w, d.addr), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(sample_Doomed_send_fail(cx, d, 7), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(nexits, 1);
    cr_expect(ac_addr_eq(&exits[0].who, &d.addr));
    cr_expect_eq(exits[0].reason, AC_REASON_FAILED);
    cr_expect_eq(exits[0].code, 7);
    /* The watcher lives on. */
    cr_expect_eq(sample_Watcher_send_link(cx, w, w.addr), 0);
    ac_runtime_destroy(rt);
}

/* Without a hook, a down is counted as unhandled and dropped. */
Test(sample, down_without_a_hook_is_counted_unhandled)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    sample_B_ref b;
    sample_Doomed_ref d;
    cr_assert_eq(sample_B_spawn(cx, &b), 0);
    cr_assert_eq(sample_Doomed_spawn(cx, &d), 0);
    cr_assert_eq(ac_monitor(cx, &b.addr, &d.addr, NULL), 0);
    cr_assert_eq(sample_Doomed_send_fail(cx, d, 1), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_expect_eq(st.unhandled, 1);
    cr_expect_eq(sample_B_send_hello(cx, b, 1), 0);
    ac_runtime_destroy(rt);
}
