/*
 * route — the cost of one address lookup in the routing table, at 10^3 ..
 * 10^6 entries: the identity hash (what the runtime uses) against the same
 * table keyed with SipHash-2-4 (libsodium's crypto_shorthash), and one
 * dependent random memory access (a pointer chase over as much memory as the
 * table's slots and actors) as the floor. See bench/README.md.
 */
#include "common.h"
#include "core/route.h"

#include <sodium.h>
#include <string.h>

typedef struct chase_node {
    struct chase_node *next;
    char pad[AC__CACHE_LINE - sizeof(void *)];
} chase_node;

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void shuffle(uint32_t *v, size_t n)
{
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = rng() % (i + 1);
        uint32_t t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

static uint64_t siphash(const ac_addr *a, const void *key)
{
    unsigned char out[crypto_shorthash_BYTES];
    crypto_shorthash(out, a->bytes, sizeof a->bytes, key);
    uint64_t h;
    memcpy(&h, out, sizeof h);
    return h;
}

static void report(const char *name, size_t n, double secs, size_t ops)
{
    char params[32];
    snprintf(params, sizeof params, "%zu", n);
    bench_report(name, params, secs, (double)ops);
}

static void measure(size_t n, size_t lookups)
{
    size_t actor_size = (sizeof(ac__actor) + 8 + 15) & ~(size_t)15;  /* as a pool block */
    unsigned char *actors = calloc(n, actor_size);
    ac_addr *addrs = malloc(n * sizeof *addrs);
    uint32_t *order = malloc(lookups * sizeof *order);
    if (actors == NULL || addrs == NULL || order == NULL)
        bench_fail("route: out of memory");
    unsigned char key[crypto_shorthash_KEYBYTES];
    crypto_shorthash_keygen(key);

    ac__route ident, sip;
    bench_check(ac__route_init(&ident, 64, NULL), "route init");
    bench_check(ac__route_init(&sip, 64, NULL), "route init");
    ac__route_set_hash(&sip, siphash, key);
    for (size_t i = 0; i < n; i++) {
        ac__actor *a = (ac__actor *)(void *)(actors + i * actor_size);
        randombytes_buf(a->addr.bytes, sizeof a->addr.bytes);
        addrs[i] = a->addr;
        bench_check(ac__route_insert(&ident, a), "insert");
        bench_check(ac__route_insert(&sip, a), "insert");
    }
    for (size_t i = 0; i < lookups; i++)
        order[i] = (uint32_t)(rng() % n);

    size_t misses = 0;
    double t0 = bench_now();
    for (size_t i = 0; i < lookups; i++) {
        uint32_t k = order[i];
        ac__actor *a = ac__route_lookup(&ident, &addrs[k]);
        misses += (unsigned char *)a != actors + k * actor_size;
    }
    double t_ident = bench_now() - t0;

    t0 = bench_now();
    for (size_t i = 0; i < lookups; i++) {
        uint32_t k = order[i];
        ac__actor *a = ac__route_lookup_hashed(&sip, &addrs[k], siphash(&addrs[k], key));
        misses += (unsigned char *)a != actors + k * actor_size;
    }
    double t_sip = bench_now() - t0;
    if (misses != 0)
        bench_fail("route: %zu lookups at %zu entries found the wrong actor", misses, n);

    /* The floor: a random cyclic walk over as many cache lines as the
     * table's slots and the actors occupy together. */
    size_t slots = ac__route_capacity(&ident);
    size_t lines = (slots * sizeof(uintptr_t) + n * actor_size) / sizeof(chase_node);
    chase_node *nodes = malloc(lines * sizeof *nodes);
    uint32_t *perm = malloc(lines * sizeof *perm);
    if (nodes == NULL || perm == NULL)
        bench_fail("route: out of memory");
    for (size_t i = 0; i < lines; i++)
        perm[i] = (uint32_t)i;
    shuffle(perm, lines);
    for (size_t i = 0; i < lines; i++)
        nodes[perm[i]].next = &nodes[perm[(i + 1) % lines]];
    chase_node *p = &nodes[perm[0]];
    t0 = bench_now();
    for (size_t i = 0; i < lookups; i++)
        p = p->next;
    double t_chase = bench_now() - t0;
    if (p == NULL)
        bench_fail("route: broken chase");

    report("route_identity", n, t_ident, lookups);
    report("route_siphash", n, t_sip, lookups);
    report("route_dram", n, t_chase, lookups);

    free(nodes);
    free(perm);
    ac__route_destroy(&ident);
    ac__route_destroy(&sip);
    free(order);
    free(addrs);
    free(actors);
}

int main(int argc, char **argv)
{
    (void)argv;
    if (argc != 1) {
        fprintf(stderr, "usage: route\n");
        return 2;
    }
    if (sodium_init() < 0)
        bench_fail("route: libsodium failed to start");
    for (size_t n = 1000; n <= 1000000; n *= 10)
        measure(n, 4000000);
    return 0;
}
