/*
 * test_wire.c — wire.actor (and the wirelib.actor it imports) through real
 * actors: every construct of the language arrives intact, directly and
 * after an encode/decode round trip; every strict prefix of a valid
 * encoding, and every mutation or random input, decodes to AC_EINVAL or to
 * a message that encodes back to the same bytes (run under ASan to make
 * "never reads out of bounds" a hard check); the start and stop hooks run
 * with their arguments.
 */
#include <criterion/criterion.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "wire.actor.h"
#include "helpers.h"

/* ---- expected values ---------------------------------------------------------- */

static const uint16_t nums_a[] = { 1, 2, 65535 };
static const uint16_t nums_b[] = { 7 };
static const uint8_t blob[] = { 0, 1, 2, 0xff, 0 };
static const char *const word_list[] = { "alpha", "", "gamma\xc3\xa9" };
static wire_Inner inner_a, inner_b;
static wire_Outer outer;
static wire_Hub_ref hub_ref;
static wirelib_Sink_ref sink_ref;
static ac_addr raw_addr;

static void setup_values(void)
{
    inner_a.name = ac_string_of("inner a");
    inner_a.nums.data = nums_a;
    inner_a.nums.len = 3;
    inner_b.name = ac_string_of("");
    inner_b.nums.data = nums_b;
    inner_b.nums.len = 1;
    memset(&outer, 0, sizeof(outer));
    outer.inner = inner_a;
    outer.pair[0] = inner_b;
    outer.pair[1] = inner_a;
    static wire_Inner many[2];
    many[0] = inner_b;
    many[1] = inner_a;
    outer.many.data = many;
    outer.many.len = 2;
    outer.color = wire_Color_blue;
    outer.pt.x = -5;
    outer.pt.y = INT32_MAX;
    outer.blob.data = blob;
    outer.blob.len = sizeof(blob);
    outer.small[0] = 9;
    outer.small[2] = 0xee;
    for (int i = 0; i < 32; i++) {
        raw_addr.bytes[i] = (uint8_t)(0x40 + i);
        hub_ref.addr.bytes[i] = (uint8_t)(0x80 + i);
        sink_ref.addr.bytes[i] = (uint8_t)(0xc0 + i);
    }
}

static bool str_eq(ac_string s, const char *want)
{
    return s.len == strlen(want) && memcmp(s.data, want, s.len) == 0 &&
           s.data[s.len] == '\0';
}

static void expect_inner(const wire_Inner *got, const wire_Inner *want)
{
    cr_expect(got->name.len == want->name.len &&
              memcmp(got->name.data, want->name.data, want->name.len) == 0 &&
              got->name.data[got->name.len] == '\0');
    cr_expect_eq(got->nums.len, want->nums.len);
    for (uint32_t i = 0; i < want->nums.len && i < got->nums.len; i++)
        cr_expect_eq(got->nums.data[i], want->nums.data[i]);
    /* The views point into the envelope, not at the sender's memory. */
    if (want->nums.len > 0)
        cr_expect_neq(got->nums.data, want->nums.data);
    cr_expect_eq((uintptr_t)got->nums.data % AC_ALIGNOF(uint16_t), 0);
}

/* ---- handlers ------------------------------------------------------------------- */

static int handled[16];
static int started, stopped;

int wire_Hub_on_start(wire_Hub *self, ac_ctx *cx, const wire_Hub_start_args *a)
{
    (void)cx;
    started++;
    self->seed = a->seed;
    cr_expect(a->seed == 42 || a->seed == 13);
    cr_expect(str_eq(a->name, "hub"));
    cr_expect(a->key[0] == 1 && a->key[1] == 2 && a->key[2] == 3);
    return a->seed == 13 ? AC_EFAILED : 0;     /* 13: refuse to start */
}

void wire_Hub_on_stop(wire_Hub *self, ac_ctx *cx)
{
    (void)cx;
    (void)self;
    stopped++;
}

int wire_Hub_on_scalars(wire_Hub *self, ac_ctx *cx, const wire_Hub_scalars *m)
{
    (void)cx;
    self->got++;
    handled[wire_Hub_TAG_scalars]++;
    cr_expect(m->t == true);
    cr_expect_eq(m->a, INT8_MIN);
    cr_expect_eq(m->b, INT16_MAX);
    cr_expect_eq(m->c, INT32_MIN);
    cr_expect_eq(m->d, INT64_MIN);
    cr_expect_eq(m->e, UINT8_MAX);
    cr_expect_eq(m->f, 0x1234);
    cr_expect_eq(m->g, UINT32_MAX);
    cr_expect_eq(m->h, UINT64_MAX);
    cr_expect(m->x == -FLT_MAX);
    cr_expect(m->y == DBL_MIN);
    return 0;
}

int wire_Hub_on_texts(wire_Hub *self, ac_ctx *cx, const wire_Hub_texts *m)
{
    (void)cx;
    (void)self;
    handled[wire_Hub_TAG_texts]++;
    cr_expect(str_eq(m->s, "hello, wire"));
    cr_expect_eq(m->raw.len, sizeof(blob));
    cr_expect(memcmp(m->raw.data, blob, sizeof(blob)) == 0);
    cr_expect(str_eq(m->empty, ""));
    cr_expect_not_null(m->empty.data);
    return 0;
}

int wire_Hub_on_arrays(wire_Hub *self, ac_ctx *cx, const wire_Hub_arrays *m)
{
    (void)cx;
    (void)self;
    handled[wire_Hub_TAG_arrays]++;
    for (int i = 0; i < 4; i++)
        cr_expect_eq(m->nums[i], (uint32_t)(i * 1000 + 1));
    cr_expect(str_eq(m->words[0], "one"));
    cr_expect(str_eq(m->words[1], "two words"));
    cr_expect(m->colors[0] == wire_Color_green && m->colors[1] == wire_Color_red);
    cr_expect(m->pts[0].x == 1 && m->pts[0].y == -1 && m->pts[1].x == INT32_MIN);
    return 0;
}

int wire_Hub_on_seqs(wire_Hub *self, ac_ctx *cx, const wire_Hub_seqs *m)
{
    (void)cx;
    (void)self;
    handled[wire_Hub_TAG_seqs]++;
    cr_assert_eq(m->longs.len, 3);
    cr_expect(m->longs.data[0] == 1 && m->longs.data[1] == UINT64_MAX &&
              m->longs.data[2] == 0);
    cr_expect_eq((uintptr_t)m->longs.data % AC_ALIGNOF(uint64_t), 0);
    cr_assert_eq(m->words.len, 3);
    for (int i = 0; i < 3; i++)
        cr_expect(str_eq(m->words.data[i], word_list[i]));
    cr_assert_eq(m->blobs.len, 2);
    cr_expect(m->blobs.data[0].len == sizeof(blob) &&
              memcmp(m->blobs.data[0].data, blob, sizeof(blob)) == 0);
    cr_expect_eq(m->blobs.data[1].len, 0);
    cr_assert_eq(m->flags.len, 3);
    cr_expect(m->flags.data[0] && !m->flags.data[1] && m->flags.data[2]);
    cr_assert_eq(m->inners.len, 2);
    expect_inner(&m->inners.data[0], &inner_a);
    expect_inner(&m->inners.data[1], &inner_b);
    cr_assert_eq(m->hubs.len, 1);
    cr_expect(ac_addr_eq(&m->hubs.data[0].addr, &hub_ref.addr));
    cr_assert_eq(m->addrs.len, 2);
    cr_expect(ac_addr_eq(&m->addrs.data[1], &raw_addr));
    cr_assert_eq(m->levels.len, 5);
    cr_expect(m->levels.data[0] == wirelib_Level_low &&
              m->levels.data[1] == wirelib_Level_mid &&
              m->levels.data[2] == wirelib_Level_high &&
              m->levels.data[3] == wirelib_Level_lowest &&
              m->levels.data[4] == wirelib_Level_highest);
    cr_assert_eq(m->floats.len, 1);
    cr_expect(m->floats.data[0] == 0.5f);
    cr_expect_eq(m->empty.len, 0);
    return 0;
}

int wire_Hub_on_nested(wire_Hub *self, ac_ctx *cx, const wire_Hub_nested *m)
{
    (void)cx;
    (void)self;
    handled[wire_Hub_TAG_nested]++;
    const wire_Outer *o = &m->o;
    expect_inner(&o->inner, &inner_a);
    expect_inner(&o->pair[0], &inner_b);
    expect_inner(&o->pair[1], &inner_a);
    cr_assert_eq(o->many.len, 2);
    expect_inner(&o->many.data[0], &inner_b);
    expect_inner(&o->many.data[1], &inner_a);
    cr_expect(o->color == wire_Color_blue);
    cr_expect(o->pt.x == -5 && o->pt.y == INT32_MAX);
    cr_expect(o->blob.len == sizeof(blob) &&
              memcmp(o->blob.data, blob, sizeof(blob)) == 0);
    cr_expect(o->small[0] == 9 && o->small[1] == 0 && o->small[2] == 0xee);
    return 0;
}

int wire_Hub_on_refs(wire_Hub *self, ac_ctx *cx, const wire_Hub_refs *m)
{
    (void)cx;
    (void)self;
    handled[wire_Hub_TAG_refs]++;
    cr_expect(ac_addr_eq(&m->hub.addr, &hub_ref.addr));
    cr_expect(ac_addr_eq(&m->sink.addr, &sink_ref.addr));
    cr_expect(ac_addr_eq(&m->raw, &raw_addr));
    return 0;
}

int wire_Hub_on_enums(wire_Hub *self, ac_ctx *cx, const wire_Hub_enums *m)
{
    (void)cx;
    (void)self;
    handled[wire_Hub_TAG_enums]++;
    cr_expect(m->c == wire_Color_green);
    cr_expect(m->l == wirelib_Level_low);
    cr_expect(m->m == wirelib_Level_lowest);
    return 0;
}

int wire_Hub_on_nothing(wire_Hub *self, ac_ctx *cx, const wire_Hub_nothing *m)
{
    (void)cx;
    (void)self;
    (void)m;
    handled[wire_Hub_TAG_nothing]++;
    return 0;
}

int wirelib_Sink_on_point(wirelib_Sink *self, ac_ctx *cx,
                          const wirelib_Sink_point *m)
{
    (void)self;
    (void)cx;
    (void)m;
    return 0;
}

/* ---- the codec checks, run on every message a round-trip actor gets ---------- */

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Decodes exactly len bytes (a copy of that size, so that ASan sees any
 * read past it); a success must encode back to the same bytes. */
static int decode_checked(ac_ctx *cx, uint32_t tag, const uint8_t *bytes,
                          size_t len)
{
    uint8_t *copy = malloc(len ? len : 1);
    cr_assert_not_null(copy);
    if (len > 0)
        memcpy(copy, bytes, len);
    ac_envelope *e = NULL;
    int rc = wire_Hub_type.decode(cx, tag, copy, len, &e);
    cr_expect(rc == 0 || rc == AC_EINVAL, "decode: %d", rc);
    if (rc == 0) {
        cr_assert_not_null(e);
        uint8_t *again = malloc(len + 1);
        long n = wire_Hub_type.encode(e, again, len + 1);
        cr_expect_eq(n, (long)len);
        cr_expect(n != (long)len || len == 0 || memcmp(again, copy, len) == 0);
        free(again);
        ac_envelope_free(cx, e);
    } else {
        cr_expect_null(e);
    }
    free(copy);
    return rc;
}

static int roundtrips;

static int roundtrip_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    /* How much room: ask with no buffer first. */
    long need = wire_Hub_type.encode(e, NULL, 0);
    cr_assert_geq(need, 0);
    uint8_t *buf = malloc((size_t)need + 1);
    cr_assert_eq(wire_Hub_type.encode(e, buf, (size_t)need), need);
    /* Too small a buffer: the same size, nothing written past it. */
    if (need > 0)
        cr_expect_eq(wire_Hub_type.encode(e, buf, (size_t)need - 1), need);

    /* Every strict prefix is malformed. */
    for (long n = 0; n < need; n++)
        cr_expect_eq(decode_checked(cx, e->tag, buf, (size_t)n), AC_EINVAL,
                     "tag %u: prefix of %ld/%ld bytes decoded", e->tag, n, need);
    /* Mutations: either malformed or a message that re-encodes the same. */
    for (int i = 0; i < 200 && need > 0; i++) {
        uint8_t *mut = malloc((size_t)need);
        memcpy(mut, buf, (size_t)need);
        mut[next_rand() % (uint64_t)need] = (uint8_t)next_rand();
        decode_checked(cx, e->tag, mut, (size_t)need);
        free(mut);
    }
    /* A trailing byte is malformed. */
    buf[need] = 0;
    cr_expect_eq(decode_checked(cx, e->tag, buf, (size_t)need + 1), AC_EINVAL);

    ac_envelope *copy = NULL;
    cr_assert_eq(wire_Hub_type.decode(cx, e->tag, buf, (size_t)need, &copy), 0);
    free(buf);
    roundtrips++;
    int rc = wire_Hub_type.dispatch(state, cx, copy);
    ac_envelope_free(cx, copy);
    return rc;
}

/* ---- the test ------------------------------------------------------------------------ */

static void send_all(ac_ctx *cx, wire_Hub_ref to)
{
    cr_assert_eq(wire_Hub_send_scalars(cx, to, true, INT8_MIN, INT16_MAX,
                                       INT32_MIN, INT64_MIN, UINT8_MAX, 0x1234,
                                       UINT32_MAX, UINT64_MAX, -FLT_MAX,
                                       DBL_MIN), 0);
    ac_bytes raw = { blob, sizeof(blob) };
    cr_assert_eq(wire_Hub_send_texts(cx, to, ac_string_of("hello, wire"), raw,
                                     ac_string_of(NULL)), 0);
    uint32_t nums[4] = { 1, 1001, 2001, 3001 };
    ac_string words[2] = { ac_string_of("one"), ac_string_of("two words") };
    wire_Color colors[2] = { wire_Color_green, wire_Color_red };
    wirelib_Point pts[2] = { { 1, -1 }, { INT32_MIN, 0 } };
    cr_assert_eq(wire_Hub_send_arrays(cx, to, nums, words, colors, pts), 0);

    uint64_t longs[3] = { 1, UINT64_MAX, 0 };
    ac_string wl[3];
    for (int i = 0; i < 3; i++)
        wl[i] = ac_string_of(word_list[i]);
    ac_bytes bl[2] = { { blob, sizeof(blob) }, { NULL, 0 } };
    bool flags[3] = { true, false, true };
    wire_Inner inners[2] = { inner_a, inner_b };
    ac_addr addrs[2] = { hub_ref.addr, raw_addr };
    wirelib_Level levels[5] = { wirelib_Level_low, wirelib_Level_mid,
                                wirelib_Level_high, wirelib_Level_lowest,
                                wirelib_Level_highest };
    float fl[1] = { 0.5f };
    ac_u64_seq s_longs = { longs, 3 };
    ac_string_seq s_words = { wl, 3 };
    ac_bytes_seq s_blobs = { bl, 2 };
    ac_bool_seq s_flags = { flags, 3 };
    wire_Inner_seq s_inners = { inners, 2 };
    wire_Hub_ref_seq s_hubs = { &hub_ref, 1 };
    ac_addr_seq s_addrs = { addrs, 2 };
    wirelib_Level_seq s_levels = { levels, 5 };
    ac_f32_seq s_fl = { fl, 1 };
    ac_u8_seq s_empty = { NULL, 0 };
    cr_assert_eq(wire_Hub_send_seqs(cx, to, s_longs, s_words, s_blobs, s_flags,
                                    s_inners, s_hubs, s_addrs, s_levels, s_fl,
                                    s_empty), 0);
    cr_assert_eq(wire_Hub_send_nested(cx, to, outer), 0);
    cr_assert_eq(wire_Hub_send_refs(cx, to, hub_ref, sink_ref, raw_addr), 0);
    cr_assert_eq(wire_Hub_send_enums(cx, to, wire_Color_green, wirelib_Level_low,
                                     wirelib_Level_lowest), 0);
    cr_assert_eq(wire_Hub_send_nothing(cx, to), 0);
}

#define MESSAGES 8

Test(wire, every_construct_arrives_intact_directly_and_over_the_wire)
{
    setup_values();
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);

    uint8_t key[3] = { 1, 2, 3 };
    wire_Hub_ref direct, refused;
    cr_assert_eq(wire_Hub_spawn(cx, &direct, 42, ac_string_of("hub"), key), 0);
    cr_expect_eq(started, 1);

    /* The same type, but every message is encoded and decoded first. */
    ac_actor_type rt_type = wire_Hub_type;
    rt_type.dispatch = roundtrip_dispatch;
    wire_Hub_start_args args;
    args.seed = 42;
    args.name = ac_string_of("hub");
    memcpy(args.key, key, 3);
    wire_Hub_ref via_wire;
    cr_assert_eq(ac_spawn(cx, &rt_type, &args, &via_wire.addr), 0);

    send_all(cx, direct);
    send_all(cx, via_wire);
    cr_assert_eq(ac_runtime_run(rt), 0);
    for (int t = 0; t < MESSAGES; t++)
        cr_expect_eq(handled[t], 2, "tag %d handled %d times", t, handled[t]);
    cr_expect_eq(roundtrips, MESSAGES);

    /* A start hook's failure is spawn's result. */
    cr_expect_eq(wire_Hub_spawn(cx, &refused, 13, ac_string_of("hub"), key),
                 AC_EFAILED);

    cr_expect_eq(ac_runtime_shutdown(rt), 0);
    cr_expect_eq(stopped, 2);
    ac_runtime_destroy(rt);
}

Test(wire, random_bytes_never_crash_the_decoder)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    uint8_t buf[96];
    for (int round = 0; round < 20000; round++) {
        size_t len = (size_t)(next_rand() % sizeof(buf));
        for (size_t i = 0; i < len; i++)
            buf[i] = (uint8_t)(next_rand() & (round & 1 ? 0x03 : 0xff));
        decode_checked(cx, (uint32_t)(next_rand() % MESSAGES), buf, len);
    }
    ac_envelope *e = NULL;
    cr_expect_eq(wire_Hub_type.decode(cx, MESSAGES, buf, 0, &e), AC_EBADTAG);
    cr_expect_eq(wire_Hub_type.decode(cx, UINT32_MAX, buf, 0, &e), AC_EBADTAG);
    /* A sequence length far beyond the input. */
    static const uint8_t huge[] = { 0xff, 0xff, 0xff, 0xff };
    cr_expect_eq(wire_Hub_type.decode(cx, wire_Hub_TAG_seqs, huge, 4, &e),
                 AC_EINVAL);
    ac_runtime_destroy(rt);
}

/* The sender refuses a message whose tail would exceed AC_MAX_PAYLOAD. */
Test(wire, oversized_message_is_refused)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    static const uint8_t one = 0;
    ac_bytes big = { &one, UINT32_MAX };     /* never read: refused first */
    ac_string s = ac_string_of("x");
    wire_Hub_ref nobody;
    memset(&nobody, 0, sizeof(nobody));
    cr_expect_eq(wire_Hub_send_texts(cx, nobody, s, big, s), AC_EINVAL);
    ac_runtime_destroy(rt);
}
