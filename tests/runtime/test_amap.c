/* The services' tables on their own (lib/amap.h, lib/table.h): however many
 * records one actor holds under one key, the table holds one node for the
 * key, so adding and removing a record never walks the others; and names
 * and addresses are hashed under a key drawn per table owner, so names
 * chosen to collide under FNV-1a (the hash they had), and addresses chosen
 * to share the bytes that were their hash, spread like any others. Asserted on the
 * tables' shape, never on time. */
#include "lib/amap.h"
#include "lib/table.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MANY = 100000 };

static ac_addr addr_of(uint64_t i)
{
    /* Spread like the runtime's random addresses (splitmix64 of i). */
    ac_addr a;
    memset(&a, 0, sizeof a);
    uint64_t x = i + 0x9E3779B97F4A7C15u;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9u;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBu;
    x ^= x >> 31;
    memcpy(a.bytes, &x, sizeof x);
    return a;
}

static size_t key_count(ac__amap *m, const ac_addr *k, uint64_t extra)
{
    size_t n = 0;
    for (ac__amap_node *x = ac__amap_find(m, k, extra); x; x = ac__amap_find_next(x))
        n++;
    return n;
}

Test(amap, one_keys_many_records_are_one_node_on_the_table)
{
    ac__amap m;
    cr_assert_eq(ac__amap_init(&m), 0);
    ac__amap_node *nodes = calloc(MANY, sizeof *nodes);
    ac_addr owner = addr_of(1);
    for (size_t i = 0; i < MANY; i++) {
        nodes[i].key = owner;
        nodes[i].extra = 0;
        ac__amap_add(&m, &nodes[i]);
    }
    /* The whole key is one node on one chain: a removal walks a chain of
     * other keys' heads, never the key's own records. */
    cr_assert_eq(m.table.count, 1);
    cr_assert_eq(ac__table_longest_chain(&m.table), 1);
    /* Newest first, as when they all stood on the chain. */
    size_t seen = 0;
    for (ac__amap_node *x = ac__amap_find(&m, &owner, 0); x; x = ac__amap_find_next(x)) {
        cr_assert_eq(x, &nodes[MANY - 1 - seen]);
        seen++;
    }
    cr_assert_eq(seen, MANY);
    /* Removing from anywhere: the head (its heir takes its place), the
     * oldest, the middle. */
    ac__amap_remove(&m, &nodes[MANY - 1]);
    ac__amap_remove(&m, &nodes[0]);
    ac__amap_remove(&m, &nodes[MANY / 2]);
    cr_assert_eq(ac__amap_find(&m, &owner, 0), &nodes[MANY - 2]);
    cr_assert_eq(key_count(&m, &owner, 0), MANY - 3);
    cr_assert_eq(m.table.count, 1);
    /* A walk may remove the node it stands on (the services' deaths). */
    size_t removed = 0;
    for (ac__amap_node *x = ac__amap_find(&m, &owner, 0), *next; x; x = next) {
        next = ac__amap_find_next(x);
        if ((size_t)(x - nodes) % 2 == 0) {
            ac__amap_remove(&m, x);
            removed++;
        }
    }
    cr_assert_eq(key_count(&m, &owner, 0), MANY - 3 - removed);
    /* take() hands back the rest, newest first, and leaves nothing. */
    size_t taken = 0;
    ac__amap_node *prev = NULL;
    for (ac__amap_node *x = ac__amap_take(&m, &owner, 0); x; x = x->next) {
        cr_assert(prev == NULL || prev > x);
        prev = x;
        taken++;
    }
    cr_assert_eq(taken, MANY - 3 - removed);
    cr_assert_eq(m.table.count, 0);
    cr_assert_null(ac__amap_find(&m, &owner, 0));
    ac__amap_destroy(&m);
    free(nodes);
}

static void count_node(ac__amap_node *x, void *arg)
{
    (void)x;
    ++*(size_t *)arg;
}

Test(amap, removing_every_record_one_by_one_empties_the_table)
{
    enum { OWNERS = 64, EACH = 1000 };
    ac__amap m;
    cr_assert_eq(ac__amap_init(&m), 0);
    ac__amap_node *nodes = calloc(OWNERS * EACH, sizeof *nodes);
    for (size_t i = 0; i < OWNERS * EACH; i++) {
        nodes[i].key = addr_of(i % OWNERS);
        ac__amap_add(&m, &nodes[i]);
    }
    cr_assert_eq(m.table.count, OWNERS);
    size_t all = 0;
    ac__amap_each(&m, count_node, &all);
    cr_assert_eq(all, OWNERS * EACH);
    /* In a scrambled order (a stride prime to the size). */
    for (size_t k = 0; k < OWNERS * EACH; k++)
        ac__amap_remove(&m, &nodes[(k * 7919) % (OWNERS * EACH)]);
    cr_assert_eq(m.table.count, 0);
    for (size_t o = 0; o < OWNERS; o++) {
        ac_addr a = addr_of(o);
        cr_assert_null(ac__amap_find(&m, &a, 0));
    }
    ac__amap_destroy(&m);
    free(nodes);
}

Test(amap, keys_that_differ_only_in_a_block_address_spread)
{
    /* groups.c keys a membership by (member, group block): one member in
     * many groups differs only in an aligned pointer, whose low bits are
     * all zero. */
    ac__amap m;
    cr_assert_eq(ac__amap_init(&m), 0);
    ac__amap_node *nodes = calloc(MANY, sizeof *nodes);
    ac_addr member = addr_of(7);
    for (size_t i = 0; i < MANY; i++) {
        nodes[i].key = member;
        nodes[i].extra = 0x7f0000000000u + (uint64_t)i * 64;
        ac__amap_add(&m, &nodes[i]);
    }
    cr_assert_eq(m.table.count, MANY);
    /* Random placement of 100,000 keys at load <= 1 has a longest chain
     * of about 8; an unmixed pointer would give chains of 64. */
    cr_assert_leq(ac__table_longest_chain(&m.table), 16);
    for (size_t i = 0; i < MANY; i += 997)
        cr_assert_eq(ac__amap_find(&m, &member, nodes[i].extra), &nodes[i]);
    ac__amap_destroy(&m);
    free(nodes);
}

/* ---- addresses: keyed, since a peer node chooses its actors' ----------- */

/* The i-th of FLOOD addresses a hostile peer could choose: bytes 0-7 (the
 * bucket hash the maps had), 8-15 (its node id) and the discriminator
 * all alike, so before the key every one of them was on one chain; only
 * bytes 16-31 differ. */
static ac_addr chosen_addr(uint64_t i)
{
    ac_addr a;
    memset(&a, 0, sizeof a);
    memset(a.bytes, 0x5a, 16);
    memcpy(a.bytes + 16, &i, sizeof i);
    return a;
}

Test(amap_hash, addresses_that_share_their_first_bytes_spread_under_the_key)
{
    enum { CHOSEN = 4096 };
    ac__amap m;
    cr_assert_eq(ac__amap_init(&m), 0);
    ac__amap_node *nodes = calloc(CHOSEN, sizeof *nodes);
    for (size_t i = 0; i < CHOSEN; i++) {
        nodes[i].key = chosen_addr(i);
        nodes[i].extra = 0;
        ac__amap_add(&m, &nodes[i]);
    }
    cr_assert_eq(m.table.count, CHOSEN);
    /* 4096 keyed hashes at load <= 1: the longest chain is about 6, and
     * one of 17 or more has odds far below 1e-9. With bytes 0-7 as the
     * hash all 4096 shared one chain. */
    cr_assert_leq(ac__table_longest_chain(&m.table), 16);
    for (size_t i = 0; i < CHOSEN; i += 7) {
        ac_addr a = chosen_addr(i);
        cr_assert_eq(ac__amap_find(&m, &a, 0), &nodes[i]);
    }
    ac_addr none = chosen_addr(CHOSEN);
    cr_assert_null(ac__amap_find(&m, &none, 0));
    ac__amap_destroy(&m);
    free(nodes);
}

Test(amap_hash, the_digest_of_an_address_depends_on_all_of_it_and_on_the_key)
{
    /* links.c keys a pair by its lower end and the higher end's digest: a
     * peer's many ends that share bytes 0-15 must get different ones. */
    ac__amap m1, m2;
    cr_assert_eq(ac__amap_init(&m1), 0);
    cr_assert_eq(ac__amap_init(&m2), 0);
    ac_addr a = chosen_addr(1), b = chosen_addr(2);
    cr_assert_neq(ac__amap_digest(&m1, &a), ac__amap_digest(&m1, &b));
    cr_assert_eq(ac__amap_digest(&m1, &a), ac__amap_digest(&m1, &a));
    cr_assert_neq(ac__amap_digest(&m1, &a), ac__amap_digest(&m2, &a));
    ac__amap_destroy(&m1);
    ac__amap_destroy(&m2);
}

/* ---- names: keyed, so FNV-1a's collisions do not carry over ------------- */

/* FNV-1a 64, written out here so the test does not lean on the code it
 * checks. */
static uint64_t fnv1a(const char *s, size_t len)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3u;
    return h;
}

enum { FLOOD = 256, FLOOD_BITS = 16, NAME_LEN = 24 };

typedef struct named {
    ac__tname n;
    char name[NAME_LEN];
} named;

static uint64_t fnv1a_step(uint64_t h, char c)
{
    return (h ^ (unsigned char)c) * 0x100000001b3u;
}

/* FLOOD names whose FNV-1a hashes share their low FLOOD_BITS bits: under
 * the unkeyed hash every one of them is on one chain of any table of up
 * to 2^FLOOD_BITS buckets. Found by brute force, about 2^16 tries each:
 * "room-" and five characters, the hash carried from one character to the
 * next (no string formatting: it would take seconds under TSan). */
static size_t flood_names(named *out)
{
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    enum { A = sizeof alphabet - 1, SUFFIX = 5 };
    const uint64_t mask = ((uint64_t)1 << FLOOD_BITS) - 1;
    const char *prefix = "room-";
    uint64_t h[SUFFIX + 1];
    h[0] = fnv1a(prefix, strlen(prefix));
    size_t n = 0;
    int at[SUFFIX] = {0};
    /* An odometer over the suffix: h[k + 1] is the hash through its k-th
     * character, recomputed only from the digit that changed. */
    int changed = 0;
    while (n < FLOOD) {
        for (int k = changed; k < SUFFIX; k++)
            h[k + 1] = fnv1a_step(h[k], alphabet[at[k]]);
        if ((h[SUFFIX] & mask) == 0) {
            size_t len = strlen(prefix);
            memcpy(out[n].name, prefix, len);
            for (int k = 0; k < SUFFIX; k++)
                out[n].name[len + (size_t)k] = alphabet[at[k]];
            out[n].name[len + SUFFIX] = '\0';
            n++;
        }
        int k = SUFFIX - 1;
        while (k >= 0 && ++at[k] == A)
            at[k--] = 0;
        if (k < 0)
            break;  /* 36^5 names: far more than FLOOD needs */
        changed = k;
    }
    return n;
}

Test(names_hash, names_that_collide_under_fnv_do_not_share_a_chain)
{
    named *names = calloc(FLOOD, sizeof *names);
    cr_assert_eq(flood_names(names), FLOOD);
    ac__hash_key key;
    ac__hash_key_draw(&key);
    ac__table t;
    cr_assert_eq(ac__table_init(&t), 0);
    for (size_t i = 0; i < FLOOD; i++) {
        size_t len = strlen(names[i].name);
        cr_assert_eq(fnv1a(names[i].name, len) & 0xffff, 0, "the flood is real");
        ac__tname_set(&names[i].n, &key, names[i].name, len);
        cr_assert_eq(ac__table_insert(&t, &names[i].n.node), 0);
    }
    /* 256 keyed hashes in 512 buckets: the longest chain is about 4, and
     * one of 12 or more has odds far below 1e-9. Unkeyed, all 256 shared
     * one chain. */
    cr_assert_leq(ac__table_longest_chain(&t), 11);
    for (size_t i = 0; i < FLOOD; i++) {
        size_t len = strlen(names[i].name);
        cr_assert_eq(ac__table_find_name(&t, &key, names[i].name, len), &names[i].n);
    }
    cr_assert_null(ac__table_find_name(&t, &key, "room-none", 9));
    ac__table_fini(&t);
    free(names);
}

typedef struct seen_low {
    uint32_t low;
    uint32_t i;
} seen_low;

static int by_low(const void *a, const void *b)
{
    const seen_low *x = a, *y = b;
    return x->low < y->low ? -1 : x->low > y->low;
}

/* The i-th of a fixed sequence of scrambled names: "chat-" and ten
 * characters. Numbered names ("chat-%u") are no good for the search below:
 * FNV-1a's low 32 bits depend on nothing but the low 32 bits of its state
 * (a product mod 2^64), and on names that close they do not collide. */
static size_t chat_name(uint32_t i, char *out)
{
    static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    uint64_t x = i * 0x9E3779B97F4A7C15u;
    x = (x ^ (x >> 29)) * 0xBF58476D1CE4E5B9u;
    x ^= x >> 32;
    size_t n = (size_t)snprintf(out, NAME_LEN, "chat-");
    for (int k = 0; k < 10; k++, x /= 36)
        out[n++] = alphabet[x % 36];
    out[n] = '\0';
    return n;
}

Test(names_hash, two_names_in_one_fnv_bucket_of_any_table_are_apart_under_the_key)
{
    /* Two names whose FNV-1a hashes agree in their low 32 bits, which is
     * all a table of up to 2^32 buckets looks at: a birthday search over
     * 2^18 names (deterministic: it finds the same 3 pairs every run). */
    enum { TRIES = 1 << 18 };
    seen_low *s = malloc(TRIES * sizeof *s);
    char buf[NAME_LEN];
    for (uint32_t i = 0; i < TRIES; i++) {
        size_t len = chat_name(i, buf);
        s[i] = (seen_low){(uint32_t)fnv1a(buf, len), i};
    }
    qsort(s, TRIES, sizeof *s, by_low);
    uint32_t a = 0, b = 0;
    bool found = false;
    for (uint32_t i = 1; i < TRIES && !found; i++)
        if (s[i].low == s[i - 1].low)
            a = s[i - 1].i, b = s[i].i, found = true;
    free(s);
    cr_assert(found, "2^18 scrambled names have pairs sharing 32 bits");
    char na[NAME_LEN], nb[NAME_LEN];
    size_t la = chat_name(a, na), lb = chat_name(b, nb);
    cr_assert_eq((uint32_t)fnv1a(na, la), (uint32_t)fnv1a(nb, lb));
    /* Under a drawn key their hashes are unrelated: equal with odds 2^-64,
     * in one bucket of a table the size the names table has with them
     * (16 buckets) with odds 1/16 for one key, so ask for ten keys. */
    int same_bucket = 0;
    for (int k = 0; k < 10; k++) {
        ac__hash_key key;
        ac__hash_key_draw(&key);
        uint64_t ha = ac__hash_keyed(&key, na, la), hb = ac__hash_keyed(&key, nb, lb);
        cr_assert_neq(ha, hb);
        same_bucket += (ha & 15) == (hb & 15);
    }
    cr_assert_lt(same_bucket, 10, "ten keys cannot all put them together (odds 16^-10)");
    /* And the key is what decides: two keys, two hashes of one name. */
    ac__hash_key k1, k2;
    ac__hash_key_draw(&k1);
    ac__hash_key_draw(&k2);
    cr_assert_neq(ac__hash_keyed(&k1, na, la), ac__hash_keyed(&k2, na, la));
    cr_assert_eq(ac__hash_keyed(&k1, na, la), ac__hash_keyed(&k1, na, la));
}
