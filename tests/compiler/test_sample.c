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
    ac_config cfg;
    ac_config_init(&cfg);
    cfg.workers = 0;
    ac_runtime *rt = NULL;
    cr_assert_eq(ac_runtime_create(&rt, &cfg), 0);
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
    ac_config cfg;
    ac_config_init(&cfg);
    cfg.workers = 0;
    ac_runtime *rt = NULL;
    cr_assert_eq(ac_runtime_create(&rt, &cfg), 0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    sample_B_ref nobody;
    memset(&nobody, 0x5a, sizeof(nobody));
    cr_expect_eq(sample_B_send_hello(cx, nobody, 1), AC_ENOTFOUND);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_expect_eq(seen.hello, 0);
    ac_runtime_destroy(rt);
}
