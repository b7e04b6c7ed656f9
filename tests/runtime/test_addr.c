/*
 * test_addr.c — a context's address stream (core/addr.c): every address
 * unique, the node id where DESIGN.md puts it, every random byte the
 * stream's own and used once, bytes 0-7 (the routing table's hash and
 * shard) uniform; and the same over a runtime's spawns on two workers.
 */
#include "fixtures.h"

#include "core/addr.h"

#include <stdlib.h>

#define N_STREAM 20000  /* over 300 refills of 64 addresses */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t word_at(const ac_addr *a, unsigned off)
{
    uint64_t w;
    memcpy(&w, a->bytes + off, sizeof w);
    return w;
}

/* Chi-square of `n` values over 64 bins against the uniform; 63 degrees
 * of freedom: the mean is 63, and 140 is beyond p = 10^-7. */
static double chi2_64(const unsigned *bins, unsigned n)
{
    double want = n / 64.0, x = 0;
    for (unsigned i = 0; i < 64; i++)
        x += (bins[i] - want) * (bins[i] - want) / want;
    return x;
}

Test(addr, stream_unique_node_id_and_every_random_word_once)
{
    ac__addr_stream s;
    ac__addr_stream_init(&s, 0x1122334455667788ull);
    ac_addr *all = malloc(N_STREAM * sizeof *all);
    /* Bytes 0-7, 16-23 and 24-31 of every address: 3 random words each. */
    uint64_t *words = malloc(3 * N_STREAM * sizeof *words);
    cr_assert(all && words);
    for (unsigned i = 0; i < N_STREAM; i++) {
        ac__addr_next(&s, &all[i]);
        cr_assert_eq(ac_addr_node(&all[i]), 0x1122334455667788ull, "node id at 8-15");
        words[3 * i] = word_at(&all[i], 0);
        words[3 * i + 1] = word_at(&all[i], 16);
        words[3 * i + 2] = word_at(&all[i], 24);
    }
    /* A word of keystream given to two addresses, or twice to one (a
     * refill that reused its buffer, an offset that overlapped the last
     * address's bytes), repeats a 64-bit word: random words do not
     * (about 10^-10 for 60,000 of them). */
    qsort(words, 3 * N_STREAM, sizeof *words, cmp_u64);
    for (unsigned i = 1; i < 3 * N_STREAM; i++)
        cr_assert_neq(words[i], words[i - 1], "a random word repeats");
    /* Hence every address is unique; bytes 0-7 are uniform, over the
     * shard bits (the top 6 of the hash) and the home slot's low ones. */
    unsigned top[64] = {0}, low[64] = {0};
    for (unsigned i = 0; i < N_STREAM; i++) {
        uint64_t h = word_at(&all[i], 0);
        top[h >> 58]++;
        low[h & 63]++;
    }
    cr_assert_lt(chi2_64(top, N_STREAM), 140.0, "the shard bits are not uniform");
    cr_assert_lt(chi2_64(low, N_STREAM), 140.0, "the hash's low bits are not uniform");
    free(words);
    free(all);
}

Test(addr, two_streams_share_nothing)
{
    /* Two contexts of one runtime: the same node, their own keys. */
    ac__addr_stream s1, s2;
    ac__addr_stream_init(&s1, 7);
    ac__addr_stream_init(&s2, 7);
    enum { N = 1000 };
    uint64_t w[2 * N];
    for (unsigned i = 0; i < N; i++) {
        ac_addr a, b;
        ac__addr_next(&s1, &a);
        ac__addr_next(&s2, &b);
        w[2 * i] = word_at(&a, 0);
        w[2 * i + 1] = word_at(&b, 0);
    }
    qsort(w, 2 * N, sizeof *w, cmp_u64);
    for (unsigned i = 1; i < 2 * N; i++)
        cr_assert_neq(w[i], w[i - 1]);
}

/* ---- Spawns on two workers ------------------------------------------------ */

/* A tree like bench/skynet's: each node spawns FANOUT plain children (no
 * start hook: the spawn's short path) and records its address; leaves
 * stop at once. */
#define FANOUT 8
#define DEPTH 4     /* 1 + 8 + 64 + 512 + 4096 = 4681 actors */
#define TREE (1 + 8 + 64 + 512 + 4096)

static ac_addr g_addrs[TREE];
static _Atomic unsigned g_naddrs;
static _Atomic unsigned g_leaves;

typedef struct node {
    uint32_t depth;
} node;

static int node_dispatch(void *state, ac_ctx *cx, ac_envelope *e);

static const ac_actor_type node_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.AddrNode",
    .state_size = sizeof(node),
    .state_align = _Alignof(node),
    .dispatch = node_dispatch,
    .message_count = 1,
};

static int start_node(ac_ctx *cx, const ac_addr *to, uint32_t depth)
{
    ac_envelope *e = ac_envelope_new(cx, 0, sizeof depth);
    if (e == NULL)
        return AC_ENOMEM;
    memcpy(ac_envelope_payload(e), &depth, sizeof depth);
    return ac_send(cx, to, e);
}

static int node_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    node *self = state;
    memcpy(&self->depth, ac_envelope_payload(e), sizeof self->depth);
    unsigned at = atomic_fetch_add_explicit(&g_naddrs, 1, memory_order_relaxed);
    if (at < TREE)
        g_addrs[at] = *ac_self(cx);
    if (self->depth == 0) {
        atomic_fetch_add_explicit(&g_leaves, 1, memory_order_relaxed);
        return ac_stop_self(cx);
    }
    for (unsigned i = 0; i < FANOUT; i++) {
        ac_addr child;
        int rc = ac_spawn(cx, &node_type, NULL, &child);
        if (rc == 0)
            rc = start_node(cx, &child, self->depth - 1);
        if (rc != 0)
            return rc;
    }
    return ac_stop_self(cx);
}

Test(addr, spawns_on_two_workers_unique_and_uniform)
{
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr root;
    cr_assert_eq(ac_spawn(cx, &node_type, NULL, &root), 0);
    cr_assert_eq(start_node(cx, &root, DEPTH), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    uint64_t node_id = ac_addr_node(&root);
    ac_runtime_destroy(rt);
    cr_assert_eq(atomic_load(&g_naddrs), TREE, "every node ran once");
    cr_assert_eq(atomic_load(&g_leaves), 4096);
    cr_assert_eq(st.spawned, TREE);
    cr_assert_eq(st.stopped, TREE);
    cr_assert_eq(st.dead_letters, 0);
    uint64_t *h = malloc(TREE * sizeof *h);
    cr_assert_not_null(h);
    unsigned top[64] = {0};
    for (unsigned i = 0; i < TREE; i++) {
        cr_assert_eq(ac_addr_node(&g_addrs[i]), node_id, "one runtime's node id");
        h[i] = word_at(&g_addrs[i], 0);
        top[h[i] >> 58]++;
    }
    qsort(h, TREE, sizeof *h, cmp_u64);
    for (unsigned i = 1; i < TREE; i++)
        cr_assert_neq(h[i], h[i - 1], "two actors share a hash");
    cr_assert_lt(chi2_64(top, TREE), 140.0, "the shards are not uniform");
    free(h);
}
