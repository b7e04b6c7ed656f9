/*
 * test_coverage.c — what test_wire.c, test_sample.c and test_ask.c leave
 * out, so that every construct of docs/IDL.md reaches a real actor intact,
 * directly and after an encode/decode round trip (coverage.actor):
 *
 * - requests of every field type (scalars; string, bytes, fixed arrays,
 *   sequences of strings, structs, refs and addrs, enums, nested structs
 *   with their own variable-length data) sent to a server directly and to
 *   one whose dispatch first encodes and decodes each request: the
 *   `reply_to` travels in front of the fields (WIRE.md) and the reply
 *   still finds its asker, an actor or a blocking ask's inbox;
 * - replies of the same types, both at the actor's continuation and at a
 *   blocking ask, and through the reply codecs (m_A_encode_reply /
 *   m_A_decode_reply): every strict prefix, random mutations and a
 *   trailing byte, then a decoded reply delivered with ac_reply to a real
 *   asker that checks every field;
 * - `on start;` without fields, `on stop;`, `mailbox N drop_oldest;`, the
 *   three policies in the descriptors;
 * - the golden file of coverage.actor's generated code (golden/extra/).
 */
#include <criterion/criterion.h>
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "actorc_compiler.h"
#include "coverage.actor.h"
#include "helpers.h"

/* ---- expected values --------------------------------------------------------- */

static const uint8_t raw_bytes[] = { 0, 0xff, 0x7f, 0x80, 1, 0 };
static const uint8_t blob_bytes[] = { 0xde, 0xad, 0xbe, 0xef };
static const char *const word_list[] = { "first", "", "tr\xc3\xa8s long mot" };
static const cov_Kind kind_list[] = { cov_Kind_neg, cov_Kind_none, cov_Kind_two };
static const uint32_t trio[3] = { 0, 0x80000000u, UINT32_MAX };
static const cov_Kind kinds2[2] = { cov_Kind_one, cov_Kind_neg };

static cov_Blob blob_a, blob_b;
static cov_Blob blob_list[2];
static cov_Deep deep_a, deep_b;
static cov_Deep deep_list[2];
static cov_Client_ref who;
static ac_addr where;
static cov_Server_ref peer_list[2];
static ac_addr addr_list[3];
static ac_string words[3];

static void fill_addr(ac_addr *a, uint8_t base)
{
    for (int i = 0; i < 32; i++)
        a->bytes[i] = (uint8_t)(base + i * 3);
}

static void setup_values(void)
{
    memset(&blob_a, 0, sizeof blob_a);
    blob_a.label = ac_string_of("blob a");
    blob_a.data.data = blob_bytes;
    blob_a.data.len = sizeof blob_bytes;
    blob_a.pair[0] = 1;
    blob_a.pair[1] = UINT16_MAX;
    blob_a.kinds.data = kind_list;
    blob_a.kinds.len = 3;
    memset(&blob_b, 0, sizeof blob_b);
    blob_b.label = ac_string_of("");
    blob_b.pair[0] = 0x1234;
    blob_list[0] = blob_b;
    blob_list[1] = blob_a;

    memset(&deep_a, 0, sizeof deep_a);
    deep_a.blob = blob_a;
    deep_a.blobs.data = blob_list;
    deep_a.blobs.len = 2;
    deep_a.two[0] = blob_b;
    deep_a.two[1] = blob_a;
    deep_a.small = INT8_MIN;
    memset(&deep_b, 0, sizeof deep_b);
    deep_b.blob = blob_b;
    deep_b.two[0] = blob_a;
    deep_b.small = 5;
    deep_list[0] = deep_b;
    deep_list[1] = deep_a;

    fill_addr(&who.addr, 0x10);
    fill_addr(&where, 0x20);
    fill_addr(&peer_list[0].addr, 0x30);
    fill_addr(&peer_list[1].addr, 0x40);
    fill_addr(&addr_list[0], 0x50);
    memset(&addr_list[1], 0, sizeof addr_list[1]);
    fill_addr(&addr_list[2], 0x60);
    for (int i = 0; i < 3; i++)
        words[i] = ac_string_of(word_list[i]);
}

static bool str_is(ac_string s, const char *want)
{
    return s.len == strlen(want) && s.data != NULL &&
           memcmp(s.data, want, s.len) == 0 && s.data[s.len] == '\0';
}

static void expect_blob(const cov_Blob *got, const cov_Blob *want)
{
    cr_expect(got->label.len == want->label.len && got->label.data != NULL &&
              (want->label.len == 0 ||
               memcmp(got->label.data, want->label.data, want->label.len) == 0) &&
              got->label.data[got->label.len] == '\0');
    cr_expect_eq(got->data.len, want->data.len);
    cr_expect(want->data.len == 0 ||
              memcmp(got->data.data, want->data.data, want->data.len) == 0);
    cr_expect(got->pair[0] == want->pair[0] && got->pair[1] == want->pair[1]);
    cr_assert_eq(got->kinds.len, want->kinds.len);
    for (uint32_t i = 0; i < want->kinds.len; i++)
        cr_expect_eq(got->kinds.data[i], want->kinds.data[i]);
    /* The views point into the envelope, never at the sender's memory. */
    if (want->kinds.len > 0) {
        cr_expect_neq(got->kinds.data, want->kinds.data);
        cr_expect_eq((uintptr_t)got->kinds.data % AC_ALIGNOF(cov_Kind), 0);
    }
    if (want->data.len > 0)
        cr_expect_neq(got->data.data, want->data.data);
}

static void expect_deep(const cov_Deep *got, const cov_Deep *want)
{
    expect_blob(&got->blob, &want->blob);
    cr_assert_eq(got->blobs.len, want->blobs.len);
    for (uint32_t i = 0; i < want->blobs.len; i++)
        expect_blob(&got->blobs.data[i], &want->blobs.data[i]);
    expect_blob(&got->two[0], &want->two[0]);
    expect_blob(&got->two[1], &want->two[1]);
    cr_expect_eq(got->small, want->small);
}

/* The request (cov_Server_lookup) and the reply (cov_Server_lookup_reply)
 * have the same field names: one check for both. */
#define EXPECT_LOOKUP(m) do {                                                   \
    cr_expect(str_is((m)->key, "lookup key"));                                  \
    cr_expect_eq((m)->raw.len, sizeof raw_bytes);                               \
    cr_expect(memcmp((m)->raw.data, raw_bytes, sizeof raw_bytes) == 0);         \
    for (int i_ = 0; i_ < 3; i_++)                                              \
        cr_expect_eq((m)->trio[i_], trio[i_]);                                  \
    cr_expect_eq((m)->k, cov_Kind_two);                                         \
    expect_deep(&(m)->d, &deep_a);                                              \
    cr_expect(ac_addr_eq(&(m)->who.addr, &who.addr));                           \
    cr_expect(ac_addr_eq(&(m)->where, &where));                                 \
    cr_assert_eq((m)->words.len, 3);                                            \
    for (int i_ = 0; i_ < 3; i_++)                                              \
        cr_expect(str_is((m)->words.data[i_], word_list[i_]));                  \
    cr_assert_eq((m)->deeps.len, 2);                                            \
    expect_deep(&(m)->deeps.data[0], &deep_b);                                  \
    expect_deep(&(m)->deeps.data[1], &deep_a);                                  \
    cr_assert_eq((m)->peers.len, 2);                                            \
    cr_expect(ac_addr_eq(&(m)->peers.data[0].addr, &peer_list[0].addr));        \
    cr_expect(ac_addr_eq(&(m)->peers.data[1].addr, &peer_list[1].addr));        \
    cr_assert_eq((m)->addrs.len, 3);                                            \
    for (int i_ = 0; i_ < 3; i_++)                                              \
        cr_expect(ac_addr_eq(&(m)->addrs.data[i_], &addr_list[i_]));            \
    cr_expect((m)->kinds[0] == cov_Kind_one && (m)->kinds[1] == cov_Kind_neg);  \
} while (0)

#define EXPECT_SCALARS(m) do {                                                  \
    cr_expect((m)->b == true);                                                  \
    cr_expect_eq((m)->a, INT8_MIN);                                             \
    cr_expect_eq((m)->c, INT16_MIN);                                            \
    cr_expect_eq((m)->d, INT32_MAX);                                            \
    cr_expect_eq((m)->e, INT64_MIN);                                            \
    cr_expect_eq((m)->f, 0x80);                                                 \
    cr_expect_eq((m)->g, UINT16_MAX);                                           \
    cr_expect_eq((m)->h, 0xdeadbeefu);                                          \
    cr_expect_eq((m)->i, UINT64_MAX - 1);                                       \
    cr_expect((m)->x == FLT_MIN);                                               \
    cr_expect((m)->y == -DBL_MAX);                                              \
} while (0)

static ac_string_seq words_seq(void) { return (ac_string_seq){ words, 3 }; }
static cov_Deep_seq deeps_seq(void) { return (cov_Deep_seq){ deep_list, 2 }; }
static cov_Server_ref_seq peers_seq(void) { return (cov_Server_ref_seq){ peer_list, 2 }; }
static ac_addr_seq addrs_seq(void) { return (ac_addr_seq){ addr_list, 3 }; }
static ac_bytes raw_of(void) { return (ac_bytes){ raw_bytes, sizeof raw_bytes }; }

/* ---- the server ---------------------------------------------------------------- */

static struct {
    int scalars, lookup, nothing, note;
    int deferred;
    ac_reply_to held;       /* a deferred lookup's reply_to */
} server;

int cov_Server_on_scalars(cov_Server *self, ac_ctx *cx, const cov_Server_scalars *m)
{
    self->served++;
    server.scalars++;
    EXPECT_SCALARS(m);
    return cov_Server_reply_scalars(cx, &m->reply_to, m->b, m->a, m->c, m->d,
                                    m->e, m->f, m->g, m->h, m->i, m->x, m->y);
}

int cov_Server_on_lookup(cov_Server *self, ac_ctx *cx, const cov_Server_lookup *m)
{
    self->served++;
    server.lookup++;
    EXPECT_LOOKUP(m);
    if (m->defer) {
        server.deferred++;
        server.held = m->reply_to;
        return 0;
    }
    return cov_Server_reply_lookup(cx, &m->reply_to, m->key, m->raw, m->trio,
                                   m->k, m->d, m->who, m->where, m->words,
                                   m->deeps, m->peers, m->addrs, m->kinds);
}

int cov_Server_on_nothing(cov_Server *self, ac_ctx *cx, const cov_Server_nothing *m)
{
    self->served++;
    server.nothing++;
    return cov_Server_reply_nothing(cx, &m->reply_to);
}

int cov_Server_on_note(cov_Server *self, ac_ctx *cx, const cov_Server_note *m)
{
    (void)cx;
    self->served++;
    server.note++;
    cr_expect_eq(m->n, 0xfeedu);
    return 0;
}

/* A tree of depth 3: root 1 with kids 2 (with kid 4) and 3 (no kids). */
static cov_Tree leaf4, kids_of_2[1], kids_of_root[2], root;

static void setup_tree(void)
{
    memset(&leaf4, 0, sizeof leaf4);
    leaf4.v = 4;
    leaf4.name = ac_string_of("four");
    kids_of_2[0] = leaf4;
    memset(kids_of_root, 0, sizeof kids_of_root);
    kids_of_root[0].v = 2;
    kids_of_root[0].kids.data = kids_of_2;
    kids_of_root[0].kids.len = 1;
    kids_of_root[0].name = ac_string_of("two");
    kids_of_root[1].v = 3;
    kids_of_root[1].name = ac_string_of("");
    memset(&root, 0, sizeof root);
    root.v = 1;
    root.kids.data = kids_of_root;
    root.kids.len = 2;
    root.name = ac_string_of("root");
}

static void expect_tree(const cov_Tree *got, const cov_Tree *want)
{
    cr_expect_eq(got->v, want->v);
    cr_expect(got->name.len == want->name.len && got->name.data != NULL &&
              (want->name.len == 0 ||
               memcmp(got->name.data, want->name.data, want->name.len) == 0) &&
              got->name.data[got->name.len] == '\0');
    cr_assert_eq(got->kids.len, want->kids.len);
    if (want->kids.len > 0)
        cr_expect_neq(got->kids.data, want->kids.data);
    for (uint32_t i = 0; i < want->kids.len; i++)
        expect_tree(&got->kids.data[i], &want->kids.data[i]);
}

static int trees;

int cov_Server_on_tree(cov_Server *self, ac_ctx *cx, const cov_Server_tree *m)
{
    (void)cx;
    self->served++;
    trees++;
    expect_tree(&m->t, &root);
    return 0;
}

/* ---- the client ------------------------------------------------------------------ */

static struct {
    int scalars, lookup, nothing;
    int bad_status;
    void *state;
} client;

static int on_scalars_reply(void *self, ac_ctx *cx, int status,
                            const cov_Server_scalars_reply *r, void *arg)
{
    (void)cx;
    cr_expect_eq(self, client.state);
    cr_expect_eq(arg, &client);
    if (status != 0 || r == NULL) {
        client.bad_status++;
        return 0;
    }
    EXPECT_SCALARS(r);
    client.scalars++;
    ((cov_Client *)self)->answers++;
    return 0;
}

static int on_lookup_reply(void *self, ac_ctx *cx, int status,
                           const cov_Server_lookup_reply *r, void *arg)
{
    (void)cx;
    cr_expect_eq(self, client.state);
    cr_expect_eq(arg, &client);
    if (status != 0 || r == NULL) {
        client.bad_status++;
        return 0;
    }
    EXPECT_LOOKUP(r);
    client.lookup++;
    ((cov_Client *)self)->answers++;
    return 0;
}

static int on_nothing_reply(void *self, ac_ctx *cx, int status,
                            const cov_Server_nothing_reply *r, void *arg)
{
    (void)cx;
    (void)arg;
    if (status != 0 || r == NULL) {
        client.bad_status++;
        return 0;
    }
    client.nothing++;
    ((cov_Client *)self)->answers++;
    return 0;
}

static int ask_lookup(ac_ctx *cx, cov_Server_ref to, bool defer)
{
    return cov_Server_ask_lookup(cx, to, ac_string_of("lookup key"), raw_of(),
                                 trio, cov_Kind_two, deep_a, who, where,
                                 words_seq(), deeps_seq(), peers_seq(),
                                 addrs_seq(), kinds2, defer, 0,
                                 on_lookup_reply, &client);
}

int cov_Client_on_go(cov_Client *self, ac_ctx *cx, const cov_Client_go *m)
{
    client.state = self;
    switch (m->what) {
    case 0:
        return cov_Server_ask_scalars(cx, m->server, true, INT8_MIN, INT16_MIN,
                                      INT32_MAX, INT64_MIN, 0x80, UINT16_MAX,
                                      0xdeadbeefu, UINT64_MAX - 1, FLT_MIN,
                                      -DBL_MAX, 0, on_scalars_reply, &client);
    case 1:
        return ask_lookup(cx, m->server, false);
    case 2:
        return cov_Server_ask_nothing(cx, m->server, 0, on_nothing_reply, &client);
    case 3:
        return ask_lookup(cx, m->server, true);
    default:
        return AC_EINVAL;
    }
}

/* ---- the queue ------------------------------------------------------------------- */

static struct {
    int started, stopped, items;
    uint32_t order[8];
} queue;

int cov_Queue_on_start(cov_Queue *self, ac_ctx *cx)
{
    (void)cx;
    self->started++;
    queue.started++;
    return 0;
}

void cov_Queue_on_stop(cov_Queue *self, ac_ctx *cx)
{
    (void)cx;
    cr_expect_eq(self->started, 1);
    cr_expect_eq(self->count, 3);
    queue.stopped++;
}

int cov_Queue_on_item(cov_Queue *self, ac_ctx *cx, const cov_Queue_item *m)
{
    (void)cx;
    if (queue.items < 8)
        queue.order[queue.items] = m->n;
    queue.items++;
    self->count++;
    self->last = m->n;
    return 0;
}

/* ---- codec checks ------------------------------------------------------------------ */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Decodes exactly len bytes from a copy of that size (ASan sees any read
 * past it): the request codec when `to` is NULL, else the reply codec. A
 * success must encode back to the same bytes. */
static int decode_checked(ac_ctx *cx, uint32_t tag, const ac_reply_to *to,
                          const uint8_t *bytes, size_t len)
{
    uint8_t *copy = malloc(len ? len : 1);
    cr_assert_not_null(copy);
    if (len > 0)
        memcpy(copy, bytes, len);
    ac_envelope *e = NULL;
    int rc = to == NULL ? cov_Server_type.decode(cx, tag, copy, len, &e)
                        : cov_Server_decode_reply(cx, tag, to, copy, len, &e);
    cr_expect(rc == 0 || rc == AC_EINVAL, "decode: %d", rc);
    if (rc == 0) {
        cr_assert_not_null(e);
        uint8_t *again = malloc(len + 1);
        long n = to == NULL ? cov_Server_type.encode(e, again, len + 1)
                            : cov_Server_encode_reply(tag, e, again, len + 1);
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

/* Every strict prefix is malformed, mutations decode to AC_EINVAL or to
 * the same bytes, a trailing byte is malformed. `buf` has need + 1 bytes. */
static void torture(ac_ctx *cx, uint32_t tag, const ac_reply_to *to,
                    uint8_t *buf, long need)
{
    for (long n = 0; n < need; n++)
        cr_expect_eq(decode_checked(cx, tag, to, buf, (size_t)n), AC_EINVAL,
                     "tag %u: prefix of %ld/%ld bytes decoded", tag, n, need);
    for (int i = 0; i < 100 && need > 0; i++) {
        uint8_t *mut = malloc((size_t)need);
        memcpy(mut, buf, (size_t)need);
        mut[next_rand() % (uint64_t)need] = (uint8_t)next_rand();
        decode_checked(cx, tag, to, mut, (size_t)need);
        free(mut);
    }
    buf[need] = 0;
    cr_expect_eq(decode_checked(cx, tag, to, buf, (size_t)need + 1), AC_EINVAL);
}

static int roundtrips, requests_checked;

/* The wire server's dispatch: each message is encoded, tortured, decoded
 * and only then dispatched; for a request, the reply_to leads the bytes and
 * survives. */
static int roundtrip_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    long need = cov_Server_type.encode(e, NULL, 0);
    if (need == AC_EBADTAG)         /* a system message: not IDL's */
        return cov_Server_type.dispatch(state, cx, e);
    cr_assert_geq(need, 0);
    uint8_t *buf = malloc((size_t)need + 1);
    cr_assert_eq(cov_Server_type.encode(e, buf, (size_t)need), need);
    if (need > 0)
        cr_expect_eq(cov_Server_type.encode(e, buf, (size_t)need - 1), need);

    bool request = e->tag != cov_Server_TAG_note && e->tag != cov_Server_TAG_tree;
    const ac_reply_to *sent = ac_envelope_payload(e);
    if (request) {
        /* WIRE.md: the asker's 32 address bytes, then the ask's id. */
        cr_assert_geq(need, 40);
        cr_expect(memcmp(buf, sent->to.bytes, 32) == 0);
        cr_expect_eq(le64(buf + 32), sent->id);
        cr_expect_neq(sent->id, 0);
    }
    torture(cx, e->tag, NULL, buf, need);

    ac_envelope *copy = NULL;
    cr_assert_eq(cov_Server_type.decode(cx, e->tag, buf, (size_t)need, &copy), 0);
    free(buf);
    if (request) {
        const ac_reply_to *got = ac_envelope_payload(copy);
        cr_expect(ac_addr_eq(&got->to, &sent->to));
        cr_expect_eq(got->id, sent->id);
        requests_checked++;
    }
    roundtrips++;
    int rc = cov_Server_type.dispatch(state, cx, copy);
    ac_envelope_free(cx, copy);
    return rc;
}

/* The envelope of a reply body that a blocking ask returned: the body
 * follows the envelope header and the reply head (actorc.h). */
static const ac_envelope *reply_envelope(const void *body)
{
    const ac_envelope *e = (const ac_envelope *)(const void *)
        ((const unsigned char *)body - AC_REPLY_HEAD_SIZE - AC_ENVELOPE_HEADER_SIZE);
    cr_assert_eq(ac_reply_body((ac_envelope *)e), body);
    return e;
}

/* Encodes a reply, tortures the reply decoder with it, and decodes it
 * into a new reply envelope for `to`. */
static ac_envelope *reply_roundtrip(ac_ctx *cx, uint32_t tag, const void *body,
                                    const ac_reply_to *to)
{
    const ac_envelope *e = reply_envelope(body);
    long need = cov_Server_encode_reply(tag, e, NULL, 0);
    cr_assert_geq(need, 0);
    uint8_t *buf = malloc((size_t)need + 1);
    cr_assert_eq(cov_Server_encode_reply(tag, e, buf, (size_t)need), need);
    torture(cx, tag, to, buf, need);
    ac_envelope *out = NULL;
    cr_assert_eq(cov_Server_decode_reply(cx, tag, to, buf, (size_t)need, &out), 0);
    cr_assert_not_null(out);
    free(buf);
    return out;
}

/* ---- tests ---------------------------------------------------------------------- */

static ac_actor_type wire_type;

static cov_Server_ref spawn_wire_server(ac_ctx *cx)
{
    wire_type = cov_Server_type;
    wire_type.dispatch = roundtrip_dispatch;
    cov_Server_ref s;
    cr_assert_eq(ac_spawn(cx, &wire_type, NULL, &s.addr), 0);
    return s;
}

static void blocking_asks(ac_ctx *cx, cov_Server_ref to)
{
    cov_Server_scalars_reply *s = NULL;
    cr_assert_eq(cov_Server_ask_scalars_wait(cx, to, true, INT8_MIN, INT16_MIN,
                                             INT32_MAX, INT64_MIN, 0x80,
                                             UINT16_MAX, 0xdeadbeefu,
                                             UINT64_MAX - 1, FLT_MIN, -DBL_MAX,
                                             AC_FOREVER, &s), 0);
    EXPECT_SCALARS(s);
    ac_reply_free(cx, s);

    cov_Server_lookup_reply *l = NULL;
    cr_assert_eq(cov_Server_ask_lookup_wait(cx, to, ac_string_of("lookup key"),
                                            raw_of(), trio, cov_Kind_two, deep_a,
                                            who, where, words_seq(), deeps_seq(),
                                            peers_seq(), addrs_seq(), kinds2,
                                            false, AC_FOREVER, &l), 0);
    EXPECT_LOOKUP(l);
    ac_reply_free(cx, l);

    cov_Server_nothing_reply *n = NULL;
    cr_assert_eq(cov_Server_ask_nothing_wait(cx, to, AC_FOREVER, &n), 0);
    cr_expect_not_null(n);
    ac_reply_free(cx, n);
}

Test(coverage, requests_and_replies_of_every_type_directly_and_over_the_wire)
{
    setup_values();
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    cov_Server_ref direct, wired;
    cov_Client_ref c;
    cr_assert_eq(cov_Server_spawn(cx, &direct), 0);
    wired = spawn_wire_server(cx);
    cr_assert_eq(cov_Client_spawn(cx, &c), 0);

    /* Asks from an actor, answered at its continuation. */
    for (uint8_t what = 0; what < 3; what++) {
        cr_assert_eq(cov_Client_send_go(cx, c, direct, what), 0);
        cr_assert_eq(cov_Client_send_go(cx, c, wired, what), 0);
    }
    cr_assert_eq(cov_Server_send_note(cx, wired, 0xfeedu), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_expect_eq(server.scalars, 2);
    cr_expect_eq(server.lookup, 2);
    cr_expect_eq(server.nothing, 2);
    cr_expect_eq(server.note, 1);
    cr_expect_eq(client.scalars, 2);
    cr_expect_eq(client.lookup, 2);
    cr_expect_eq(client.nothing, 2);
    cr_expect_eq(client.bad_status, 0);
    cr_expect_eq(((cov_Client *)client.state)->answers, 6);
    cr_expect_eq(roundtrips, 4);
    cr_expect_eq(requests_checked, 3);

    /* Blocking asks from main: the reply_to names this thread's inbox. */
    blocking_asks(cx, direct);
    blocking_asks(cx, wired);
    cr_expect_eq(server.scalars, 4);
    cr_expect_eq(server.lookup, 4);
    cr_expect_eq(server.nothing, 4);
    cr_expect_eq(requests_checked, 6);

    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_expect_eq(st.dead_letters, 0);
    cr_expect_eq(st.failed, 0);
    ac_runtime_destroy(rt);
}

Test(coverage, replies_of_every_type_through_the_reply_codecs)
{
    setup_values();
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    cov_Server_ref s, wired;
    cov_Client_ref c;
    cr_assert_eq(cov_Server_spawn(cx, &s), 0);
    wired = spawn_wire_server(cx);
    cr_assert_eq(cov_Client_spawn(cx, &c), 0);

    /* The client's lookup is held by the (wire) server, unanswered. */
    cr_assert_eq(cov_Client_send_go(cx, c, wired, 3), 0);
    cr_assert_eq(ac_runtime_run(rt), 1, "the lookup waits");
    cr_assert_eq(server.deferred, 1);
    cr_assert_eq(client.lookup, 0);
    ac_reply_to held = server.held;

    /* A real reply, made by the generated reply function for a blocking
     * ask, goes through the codecs and answers the held ask. */
    cov_Server_lookup_reply *l = NULL;
    cr_assert_eq(cov_Server_ask_lookup_wait(cx, s, ac_string_of("lookup key"),
                                            raw_of(), trio, cov_Kind_two, deep_a,
                                            who, where, words_seq(), deeps_seq(),
                                            peers_seq(), addrs_seq(), kinds2,
                                            false, AC_FOREVER, &l), 0);
    ac_envelope *r = reply_roundtrip(cx, cov_Server_TAG_lookup, l, &held);
    EXPECT_LOOKUP((const cov_Server_lookup_reply *)ac_reply_body(r));
    ac_reply_free(cx, l);
    /* Sent as the replier sends it: typed, so the ask reads it. */
    cr_assert_eq(ac_reply_typed(cx, &held, &cov_Server_type, cov_Server_TAG_lookup, r), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_expect_eq(client.lookup, 1, "the decoded reply reached the continuation");
    cr_expect_eq(client.bad_status, 0);
    /* Answered once: a second reply to it is a dead letter. */
    cr_expect_eq(cov_Server_reply_nothing(cx, &held), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_expect_eq(client.nothing, 0);

    /* The other two replies, decoded back to the same fields. */
    cov_Server_scalars_reply *sc = NULL;
    cr_assert_eq(cov_Server_ask_scalars_wait(cx, s, true, INT8_MIN, INT16_MIN,
                                             INT32_MAX, INT64_MIN, 0x80,
                                             UINT16_MAX, 0xdeadbeefu,
                                             UINT64_MAX - 1, FLT_MIN, -DBL_MAX,
                                             AC_FOREVER, &sc), 0);
    r = reply_roundtrip(cx, cov_Server_TAG_scalars, sc, &held);
    EXPECT_SCALARS((const cov_Server_scalars_reply *)ac_reply_body(r));
    ac_envelope_free(cx, r);
    ac_reply_free(cx, sc);

    cov_Server_nothing_reply *n = NULL;
    cr_assert_eq(cov_Server_ask_nothing_wait(cx, s, AC_FOREVER, &n), 0);
    cr_expect_eq(cov_Server_encode_reply(cov_Server_TAG_nothing,
                                         reply_envelope(n), NULL, 0), 0);
    r = reply_roundtrip(cx, cov_Server_TAG_nothing, n, &held);
    ac_envelope_free(cx, r);
    ac_reply_free(cx, n);

    /* Tags without a reply, or unknown, are refused both ways. */
    uint8_t byte = 0;
    ac_envelope *none = NULL;
    cr_expect_eq(cov_Server_decode_reply(cx, cov_Server_TAG_note, &held, &byte, 0,
                                         &none), AC_EBADTAG);
    cr_expect_eq(cov_Server_decode_reply(cx, 99, &held, &byte, 0, &none),
                 AC_EBADTAG);
    cr_expect_null(none);
    cov_Server_nothing_reply *n2 = NULL;
    cr_assert_eq(cov_Server_ask_nothing_wait(cx, s, AC_FOREVER, &n2), 0);
    cr_expect_eq(cov_Server_encode_reply(cov_Server_TAG_note, reply_envelope(n2),
                                         NULL, 0), AC_EBADTAG);
    ac_reply_free(cx, n2);
    ac_runtime_destroy(rt);
}

/* The wire form of a chain of `depth` trees, each the only kid of the
 * one before (WIRE.md: v, the kids' count, the kids, the name). */
static uint8_t *tree_chain(uint32_t depth, size_t *len)
{
    size_t n = (size_t)depth * 12;
    uint8_t *b = calloc(n, 1), *p = b;
    cr_assert_not_null(b);
    for (uint32_t i = 0; i < depth; i++) {
        p[0] = (uint8_t)i;                      /* v */
        p[4] = i + 1 < depth;                   /* one kid, or none */
        p += 8;
    }
    /* then `depth` empty names: zeros */
    *len = n;
    return b;
}

Test(coverage, recursive_struct_directly_over_the_wire_and_its_depth_bound)
{
    setup_values();
    setup_tree();
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    cov_Server_ref direct, wired;
    cr_assert_eq(cov_Server_spawn(cx, &direct), 0);
    wired = spawn_wire_server(cx);
    cr_assert_eq(cov_Server_send_tree(cx, direct, root), 0);
    cr_assert_eq(cov_Server_send_tree(cx, wired, root), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_expect_eq(trees, 2);
    cr_expect_eq(roundtrips, 1);

    /* Structs nest at most 64 deep: the message's Tree is the first. */
    size_t len;
    ac_envelope *e = NULL;
    uint8_t *ok = tree_chain(64, &len);
    cr_expect_eq(decode_checked(cx, cov_Server_TAG_tree, NULL, ok, len), 0);
    free(ok);
    uint8_t *deep = tree_chain(65, &len);
    cr_expect_eq(cov_Server_type.decode(cx, cov_Server_TAG_tree, deep, len, &e),
                 AC_EINVAL);
    cr_expect_null(e);
    free(deep);
    ac_runtime_destroy(rt);
}

Test(coverage, start_without_fields_stop_and_a_drop_oldest_mailbox)
{
    cr_expect_eq(cov_Queue_type.mailbox_bound, 3);
    cr_expect_eq(cov_Queue_type.mailbox_overflow, AC_OVERFLOW_DROP_OLDEST);
    cr_expect_eq(cov_Server_type.mailbox_bound, 64);
    cr_expect_eq(cov_Server_type.mailbox_overflow, AC_OVERFLOW_REJECT);
    cr_expect_eq(cov_Client_type.mailbox_bound, 16);
    cr_expect_eq(cov_Client_type.mailbox_overflow, AC_OVERFLOW_DROP_NEWEST);
    cr_expect_not_null(cov_Queue_type.on_start);
    cr_expect_not_null(cov_Queue_type.on_stop);
    cr_expect_null(cov_Server_type.on_start);
    cr_expect_null(cov_Server_type.on_stop);

    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    cov_Queue_ref q;
    cr_assert_eq(cov_Queue_spawn(cx, &q), 0);
    cr_expect_eq(queue.started, 1, "the start hook runs inside spawn");
    for (uint32_t n = 1; n <= 5; n++)
        cr_expect_eq(cov_Queue_send_item(cx, q, n), 0, "drop_oldest never refuses");
    cr_assert_eq(ac_runtime_run(rt), 0);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_expect_eq(st.mailbox_drops, 2);
    cr_assert_eq(queue.items, 3);
    cr_expect(queue.order[0] == 3 && queue.order[1] == 4 && queue.order[2] == 5,
              "the two oldest were dropped");
    cr_expect_eq(ac_runtime_shutdown(rt), 0);
    cr_expect_eq(queue.stopped, 1);
    ac_runtime_destroy(rt);
}

/* ---- the golden file of coverage.actor -------------------------------------------
 *
 * In suite `golden`, so that the refresh command of test_golden.c
 * (ACTORC_UPDATE_GOLDEN=1 ... --filter 'golden/[a-z]*') rewrites it too. */

static void expect_same(const char *path, const char *got, size_t got_len)
{
    if (update_golden()) {
        cr_assert(write_file(path, got, got_len), "cannot write %s", path);
        return;
    }
    size_t len;
    char *want = read_file(path, &len);
    cr_assert_not_null(want, "missing %s (ACTORC_UPDATE_GOLDEN=1 makes it)", path);
    size_t i = 0, line = 1;
    while (i < len && i < got_len && want[i] == got[i])
        line += want[i++] == '\n';
    cr_expect(i == len && i == got_len,
              "%s differs from the generated text at line %zu:\n"
              "  want: %.*s\n  got:  %.*s", path, line,
              (int)strcspn(want + i, "\n"), want + i,
              (int)strcspn(got + i, "\n"), got + i);
    free(want);
}

Test(golden, coverage)
{
    require_repo_root();
    char *input = str_printf("%s/coverage.actor", TEST_SRC_DIR);
    acc_result r;
    int rc = acc_compile_file(input, NULL, &r);
    cr_assert_eq(rc, 0, "%s does not compile:\n%s", input, r.diagnostics);
    cr_assert_str_eq(r.diagnostics, "");
    char *h = str_printf("%s/golden/extra/%s", TEST_SRC_DIR, r.header_name);
    char *c = str_printf("%s/golden/extra/%s", TEST_SRC_DIR, r.source_name);
    expect_same(h, r.header, r.header_len);
    expect_same(c, r.source, r.source_len);
    acc_result_free(&r);
    free(h);
    free(c);
    free(input);
}
