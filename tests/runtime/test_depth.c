/*
 * test_depth.c — the one nesting bound of recursive structs, AC_MAX_DEPTH
 * (docs/IDL.md), through the generated functions of depth.actor: a chain
 * of AC_MAX_DEPTH Nodes is sent, copied, encoded and decoded; one node
 * more, a chain of 200,000 (which would have overflowed the stack of the
 * recursive builder) or a cycle is AC_EINVAL at the send, at encode and at
 * decode, never a crash, and never accepted by one side and refused by the
 * other. Also the generated codecs' NULL arguments, and views of NULL with
 * a length.
 */
#include "depth.actor.h"

#include "fixtures.h"

#include <stdlib.h>

/* What the Sink saw; written by its handlers, read by the test after
 * wait_for saw `g_got` move. */
static _Atomic uint64_t g_got;
static _Atomic uint32_t g_length;     /* of the last chain, 0: malformed */
static _Atomic uint32_t g_text_len;
static _Atomic int g_text_nul;        /* the text was "" with its NUL */

/* The length of the chain at head, each node the only kid of the one
 * before and numbered from 1; 0 when it is not such a chain. Iterative:
 * the chains here are deeper than a test's stack would like. */
static uint32_t chain_length(const depth_Node *head)
{
    uint32_t n = 1;
    for (const depth_Node *at = head; at->v == n; n++) {
        if (at->kids.len == 0)
            return n;
        if (at->kids.len != 1 || at->kids.data == NULL)
            return 0;
        at = &at->kids.data[0];
    }
    return 0;
}

int depth_Sink_on_chain(depth_Sink *self, ac_ctx *cx, const depth_Sink_chain *m)
{
    (void)self;
    (void)cx;
    uint32_t n = chain_length(&m->head);
    atomic_store(&g_length, n == m->length ? n : 0);
    atomic_fetch_add(&g_got, 1);
    return 0;
}

int depth_Sink_on_held(depth_Sink *self, ac_ctx *cx, const depth_Sink_held *m)
{
    (void)self;
    (void)cx;
    uint32_t n = chain_length(&m->h.root);
    bool label = m->h.label.len == 4 && memcmp(m->h.label.data, "deep", 4) == 0;
    atomic_store(&g_length, n == m->length && label ? n : 0);
    atomic_fetch_add(&g_got, 1);
    return 0;
}

/* The number of Odds below e, each the only one of the Even before and
 * numbered one more than the one above it (`v` is the number of the Odd
 * that holds e, or one less than the first); UINT32_MAX when it is not
 * such a chain. */
static uint32_t odd_count(const depth_Even *e, uint32_t v)
{
    uint32_t n = 0;
    for (; e->odds.len == 1; e = &e->odds.data[0].inner, n++)
        if (e->odds.data[0].v != ++v)
            return UINT32_MAX;
    return e->odds.len == 0 ? n : UINT32_MAX;
}

int depth_Sink_on_even(depth_Sink *self, ac_ctx *cx, const depth_Sink_even *m)
{
    (void)self;
    (void)cx;
    uint32_t v = m->e.odds.len > 0 ? m->e.odds.data[0].v - 1 : 0;
    uint32_t n = odd_count(&m->e, v);
    atomic_store(&g_length, n == m->count ? n : 0);
    atomic_fetch_add(&g_got, 1);
    return 0;
}

int depth_Sink_on_odd(depth_Sink *self, ac_ctx *cx, const depth_Sink_odd *m)
{
    (void)self;
    (void)cx;
    uint32_t n = 1 + odd_count(&m->o.inner, m->o.v);
    atomic_store(&g_length, n == m->count ? n : 0);
    atomic_fetch_add(&g_got, 1);
    return 0;
}

int depth_Sink_on_text(depth_Sink *self, ac_ctx *cx, const depth_Sink_text *m)
{
    (void)self;
    (void)cx;
    atomic_store(&g_text_len, m->s.len);
    atomic_store(&g_text_nul, m->s.data != NULL && m->s.data[0] == '\0');
    atomic_fetch_add(&g_got, 1);
    return 0;
}

/* A chain of n nodes on the heap, built without recursion: node i is the
 * only kid of node i - 1. */
static depth_Node *make_chain(uint32_t n)
{
    depth_Node *nodes = calloc(n, sizeof(*nodes));
    cr_assert_not_null(nodes);
    for (uint32_t i = 0; i < n; i++) {
        nodes[i].v = i + 1;
        if (i + 1 < n)
            nodes[i].kids = (depth_Node_seq){ &nodes[i + 1], 1 };
    }
    return nodes;
}

/* The wire form of chain(head, length) for a chain of n nodes
 * (docs/WIRE.md): per node its v (u64) and its count of kids (u32), then
 * the length (u32), all little-endian. */
static uint8_t *wire_chain(uint32_t n, size_t *len)
{
    *len = (size_t)n * 12 + 4;
    uint8_t *b = calloc(1, *len), *p = b;
    cr_assert_not_null(b);
    for (uint32_t i = 0; i < n; i++, p += 12) {
        p[0] = (uint8_t)(i + 1);
        p[1] = (uint8_t)((i + 1) >> 8);
        p[8] = i + 1 < n;
    }
    memcpy(p, (uint8_t[4]){ (uint8_t)n, (uint8_t)(n >> 8), 0, 0 }, 4);
    return b;
}

static depth_Sink_ref spawn_sink(ac_ctx *cx)
{
    depth_Sink_ref s;
    cr_assert_eq(depth_Sink_spawn(cx, &s), 0);
    return s;
}

Test(depth, a_chain_at_the_limit_is_sent_and_arrives_whole, .timeout = 30)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    depth_Sink_ref sink = spawn_sink(cx);
    depth_Node *nodes = make_chain(AC_MAX_DEPTH);

    cr_assert_eq(depth_Sink_send_chain(cx, sink, nodes[0], AC_MAX_DEPTH), 0);
    cr_assert(wait_for(&g_got, 1));
    cr_expect_eq(atomic_load(&g_length), AC_MAX_DEPTH);

    /* Inside a struct that is not recursive itself, the count goes on. */
    depth_Holder h = { ac_string_of("deep"), nodes[0], sink };
    cr_assert_eq(depth_Sink_send_held(cx, sink, h, AC_MAX_DEPTH), 0);
    cr_assert(wait_for(&g_got, 2));
    cr_expect_eq(atomic_load(&g_length), AC_MAX_DEPTH);

    ac_runtime_destroy(rt);
    free(nodes);
}

Test(depth, a_deeper_chain_is_einval_at_the_send, .timeout = 30)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    depth_Sink_ref sink = spawn_sink(cx);
    /* 200,000 nodes are 4.8 MB, under AC_MAX_PAYLOAD: only the depth is
     * wrong with them. */
    static const uint32_t lengths[] = { AC_MAX_DEPTH + 1, 1000, 200000 };

    for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
        depth_Node *nodes = make_chain(lengths[i]);
        depth_Holder h = { ac_string_of("deep"), nodes[0], sink };
        ac_timer_id id = 1;
        cr_expect_eq(depth_Sink_send_chain(cx, sink, nodes[0], lengths[i]), AC_EINVAL,
                     "a chain of %u", (unsigned)lengths[i]);
        cr_expect_eq(depth_Sink_send_held(cx, sink, h, lengths[i]), AC_EINVAL);
        cr_expect_eq(depth_Sink_publish_chain(cx, "g", nodes[0], lengths[i]), AC_EINVAL);
        cr_expect_eq(depth_Sink_send_chain_after(cx, sink, 1, nodes[0], lengths[i], &id),
                     AC_EINVAL);
        cr_expect_eq(id, 0);
        free(nodes);
    }
    /* Nothing of those was sent: the next message is the first to come. */
    depth_Node one = { 1, { NULL, 0 } };
    cr_assert_eq(depth_Sink_send_chain(cx, sink, one, 1), 0);
    cr_assert(wait_for(&g_got, 1));
    cr_expect_eq(atomic_load(&g_length), 1);
    cr_expect_eq(atomic_load(&g_got), 1);
    ac_runtime_destroy(rt);
}

Test(depth, a_cycle_is_einval_at_the_send, .timeout = 30)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    depth_Sink_ref sink = spawn_sink(cx);

    /* Its own kid. */
    depth_Node self = { 1, { NULL, 0 } };
    self.kids = (depth_Node_seq){ &self, 1 };
    cr_expect_eq(depth_Sink_send_chain(cx, sink, self, 1), AC_EINVAL);

    /* Back to an ancestor, ten levels down. */
    depth_Node *ring = make_chain(10);
    ring[9].kids = (depth_Node_seq){ &ring[0], 1 };
    cr_expect_eq(depth_Sink_send_chain(cx, sink, ring[0], 10), AC_EINVAL);

    /* Two kids, each the pair again: 2^64 paths to the bound unless the
     * first one past it ends the whole walk. */
    depth_Node pair[2] = { { 1, { NULL, 0 } }, { 2, { NULL, 0 } } };
    pair[0].kids = pair[1].kids = (depth_Node_seq){ pair, 2 };
    cr_expect_eq(depth_Sink_send_chain(cx, sink, pair[0], 2), AC_EINVAL);

    ac_runtime_destroy(rt);
    free(ring);
}

/* A chain of AC_MAX_DEPTH sent to an inbox, so the test holds the
 * envelope the send built. */
static ac_envelope *built_chain(ac_ctx *cx, ac_inbox *ib, depth_Node *nodes)
{
    ac_envelope *e = NULL;
    depth_Sink_ref to = depth_Sink_ref_of(*ac_inbox_addr(ib));
    cr_assert_eq(depth_Sink_send_chain(cx, to, nodes[0], AC_MAX_DEPTH), 0);
    cr_assert_eq(ac_inbox_recv(cx, ib, depth_Sink_TAG_chain, 5000, &e), 0);
    return e;
}

/* The last node of the chain in e, whose kids the test rewires. */
static depth_Node *last_node(ac_envelope *e)
{
    depth_Node *at = &((depth_Sink_chain *)ac_envelope_payload(e))->head;
    while (at->kids.len > 0)
        at = (depth_Node *)&at->kids.data[0];
    return at;
}

Test(depth, encode_and_decode_take_what_the_send_takes, .timeout = 30)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    const ac_actor_type *t = &depth_Sink_type;
    ac_inbox *ib;
    cr_assert_eq(ac_inbox_create(cx, &ib), 0);
    depth_Node *nodes = make_chain(AC_MAX_DEPTH);
    ac_envelope *e = built_chain(cx, ib, nodes), *d = NULL;

    /* At the limit: encoded as docs/WIRE.md says, and decoded back. */
    size_t want;
    uint8_t *wire = wire_chain(AC_MAX_DEPTH, &want);
    long len = t->encode(e, NULL, 0);
    cr_assert_eq(len, (long)want);
    uint8_t *buf = malloc(want);
    cr_assert_eq(t->encode(e, buf, want), len);
    cr_expect_arr_eq(buf, wire, want);
    cr_assert_eq(t->decode(cx, depth_Sink_TAG_chain, buf, want, &d), 0);
    cr_expect_eq(chain_length(&((depth_Sink_chain *)ac_envelope_payload(d))->head),
                 AC_MAX_DEPTH);
    ac_envelope_free(cx, d);
    ac_envelope *c = t->copy(cx, e);
    cr_assert_not_null(c);
    cr_expect_eq(chain_length(&((depth_Sink_chain *)ac_envelope_payload(c))->head),
                 AC_MAX_DEPTH);
    ac_envelope_free(cx, c);
    free(wire);
    free(buf);

    /* One deeper: the decoder refuses the bytes no send would make. */
    wire = wire_chain(AC_MAX_DEPTH + 1, &want);
    d = e;
    cr_expect_eq(t->decode(cx, depth_Sink_TAG_chain, wire, want, &d), AC_EINVAL);
    cr_expect_null(d);
    free(wire);

    /* An envelope made deeper, or cyclic, by hand after the send: encode
     * and copy refuse it too. */
    depth_Node *last = last_node(e), extra = { AC_MAX_DEPTH + 1, { NULL, 0 } };
    last->kids = (depth_Node_seq){ &extra, 1 };
    cr_expect_eq(t->encode(e, NULL, 0), AC_EINVAL);
    cr_expect_null(t->copy(cx, e));
    last->kids = (depth_Node_seq){ &((depth_Sink_chain *)ac_envelope_payload(e))->head, 1 };
    cr_expect_eq(t->encode(e, NULL, 0), AC_EINVAL);
    cr_expect_null(t->copy(cx, e));
    last->kids = (depth_Node_seq){ NULL, 0 };
    cr_expect_eq(t->encode(e, NULL, 0), len);

    ac_envelope_free(cx, e);
    ac_inbox_destroy(cx, ib);
    ac_runtime_destroy(rt);
    free(nodes);
}

Test(depth, null_arguments_and_views_of_null_are_einval, .timeout = 30)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    const ac_actor_type *t = &depth_Sink_type;
    depth_Sink_ref sink = spawn_sink(cx);

    /* A view with a length but no bytes cannot be sent; with length 0 it
     * is the empty value. */
    cr_expect_eq(depth_Sink_send_text(cx, sink, (ac_string){ NULL, 5 }), AC_EINVAL);
    depth_Node orphan = { 1, { NULL, 3 } };
    cr_expect_eq(depth_Sink_send_chain(cx, sink, orphan, 1), AC_EINVAL);
    cr_assert_eq(depth_Sink_send_text(cx, sink, (ac_string){ NULL, 0 }), 0);
    cr_assert(wait_for(&g_got, 1));
    cr_expect_eq(atomic_load(&g_text_len), 0);
    cr_expect(atomic_load(&g_text_nul));

    ac_inbox *ib;
    cr_assert_eq(ac_inbox_create(cx, &ib), 0);
    depth_Node *nodes = make_chain(3);
    ac_envelope *e = built_chain(cx, ib, nodes), *d = e;
    long len = t->encode(e, NULL, 0);
    cr_assert_gt(len, 0);
    uint8_t *buf = malloc((size_t)len);
    cr_assert_eq(t->encode(e, buf, (size_t)len), len);

    /* encode: no envelope, or a capacity without a buffer. */
    cr_expect_eq(t->encode(NULL, NULL, 0), AC_EINVAL);
    cr_expect_eq(t->encode(NULL, buf, (size_t)len), AC_EINVAL);
    cr_expect_eq(t->encode(e, NULL, 8), AC_EINVAL);
    /* decode: no output, no context, or a length without a buffer. */
    cr_expect_eq(t->decode(cx, depth_Sink_TAG_chain, buf, (size_t)len, NULL), AC_EINVAL);
    cr_expect_eq(t->decode(NULL, depth_Sink_TAG_chain, buf, (size_t)len, &d), AC_EINVAL);
    cr_expect_null(d);
    d = e;
    cr_expect_eq(t->decode(cx, depth_Sink_TAG_chain, NULL, (size_t)len, &d), AC_EINVAL);
    cr_expect_null(d);
    /* No bytes at all are a malformed chain, not a crash. */
    cr_expect_eq(t->decode(cx, depth_Sink_TAG_chain, NULL, 0, &d), AC_EINVAL);
    /* copy: NULL for either. */
    cr_expect_null(t->copy(NULL, e));
    cr_expect_null(t->copy(cx, NULL));

    free(buf);
    free(nodes);
    ac_envelope_free(cx, e);
    ac_inbox_destroy(cx, ib);
    ac_runtime_destroy(rt);
}

/* k Odds, each the only one of the Even inside the one before. */
static depth_Odd *make_odds(uint32_t k)
{
    depth_Odd *odds = calloc(k, sizeof(*odds));
    cr_assert_not_null(odds);
    for (uint32_t i = 0; i < k; i++) {
        odds[i].v = i + 1;
        if (i + 1 < k)
            odds[i].inner.odds = (depth_Odd_seq){ &odds[i + 1], 1 };
    }
    return odds;
}

/* The wire form of even(e, k) with k Odds below e: per Odd the count 1 of
 * the Even above it and its v, then the last Even's count 0, then k. */
static uint8_t *wire_even(uint32_t k, size_t *len)
{
    *len = (size_t)k * 8 + 8;
    uint8_t *b = calloc(1, *len), *p = b;
    cr_assert_not_null(b);
    for (uint32_t i = 0; i < k; i++, p += 8) {
        p[0] = 1;
        p[4] = (uint8_t)(i + 1);
    }
    p[4] = (uint8_t)k;
    return b;
}

/* Even and Odd each count: an Even above k Odds (each with its Even) is
 * 2k + 1 levels, an Odd message with k Odds 2k. */
Test(depth, structs_recursive_through_each_other_count_every_level, .timeout = 30)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    const ac_actor_type *t = &depth_Sink_type;
    depth_Sink_ref sink = spawn_sink(cx);
    enum { K = AC_MAX_DEPTH / 2 };
    depth_Odd *odds = make_odds(K + 1);
    depth_Even top = { { &odds[1], 1 } };   /* above K Odds */

    cr_assert_eq(depth_Sink_send_odd(cx, sink, odds[1], K), 0);   /* 2K */
    cr_assert(wait_for(&g_got, 1));
    cr_expect_eq(atomic_load(&g_length), K);
    cr_expect_eq(depth_Sink_send_even(cx, sink, top, K), AC_EINVAL);   /* 2K + 1 */
    cr_expect_eq(depth_Sink_send_odd(cx, sink, odds[0], K + 1), AC_EINVAL);
    top.odds.data = &odds[2];   /* above K - 1 Odds: 2K - 1 */
    cr_assert_eq(depth_Sink_send_even(cx, sink, top, K - 1), 0);
    cr_assert(wait_for(&g_got, 2));
    cr_expect_eq(atomic_load(&g_length), K - 1);

    /* The decoder draws the line where the send does. */
    ac_envelope *d = NULL;
    size_t len;
    uint8_t *wire = wire_even(K - 1, &len);
    cr_expect_eq(t->decode(cx, depth_Sink_TAG_even, wire, len, &d), 0);
    cr_expect_eq(odd_count(&((depth_Sink_even *)ac_envelope_payload(d))->e, 0), K - 1);
    ac_envelope_free(cx, d);
    free(wire);
    wire = wire_even(K, &len);
    cr_expect_eq(t->decode(cx, depth_Sink_TAG_even, wire, len, &d), AC_EINVAL);
    free(wire);

    ac_runtime_destroy(rt);
    free(odds);
}
