/*
 * test_quota.c — what one peer may make a node hold (docs/NODES.md, "What
 * a peer may make a node hold"): beta keeps at most QUOTA group members,
 * monitors and links of alpha's making; past that each is refused and
 * counted (`over_quota`), a monitor answered at once with a NOCONNECTION
 * down and a link with a NOCONNECTION exit, and what goes gives its place
 * back. Those it kept work as before.
 */
#include "quota.actor.h"

#include "nodes.h"
#include "lib/quota.h"

#include <criterion/criterion.h>
#include <stdatomic.h>

enum { QUOTA = 3, ASKERS = 5 };

/* Written by handlers on the workers, read by the test. */
static _Atomic int downs, exits, refused_downs, refused_exits;

int quota_Peer_on_bind(quota_Peer *self AC_UNUSED, ac_ctx *cx, const quota_Peer_bind *m)
{
    cr_assert_eq(ac_trap_exits(cx, true), 0);
    return ac_link(cx, &m->other.addr);
}

int quota_Peer_on_watch(quota_Peer *self AC_UNUSED, ac_ctx *cx, const quota_Peer_watch *m)
{
    return ac_monitor(cx, ac_self(cx), &m->other.addr, NULL);
}

int quota_Peer_on_down(quota_Peer *self AC_UNUSED, ac_ctx *cx AC_UNUSED, const ac_down *m)
{
    atomic_fetch_add(m->reason == AC_REASON_NOCONNECTION ? &refused_downs : &downs, 1);
    return 0;
}

int quota_Peer_on_exit(quota_Peer *self AC_UNUSED, ac_ctx *cx AC_UNUSED, const ac_exit *m)
{
    atomic_fetch_add(m->reason == AC_REASON_NOCONNECTION ? &refused_exits : &exits, 1);
    return 0;
}

static pair_of_nodes nodes;

static uint64_t over_quota_on_beta(void)
{
    ac_node_stats ns;
    cr_assert_eq(ac_runtime_node_stats(nodes.rb, &ns), 0);
    return ns.over_quota;
}

static bool reached(_Atomic int *n, uint64_t want)
{
    return (n ? (uint64_t)atomic_load(n) : over_quota_on_beta()) >= want;
}

/* Whether *n (or beta's over_quota, n NULL) reached `want`, once it
 * does or WAIT_MS have passed. */
static bool wait_for(_Atomic int *n, uint64_t want)
{
    WAIT_FOR(reached(n, want));
    return reached(n, want);
}

static size_t members_on_beta(void)
{
    return ac_group_members(ac_runtime_ctx(nodes.rb), "g", NULL, 0);
}

static bool wait_members(size_t want)
{
    WAIT_FOR(members_on_beta() == want);
    return members_on_beta() == want;
}

Test(quota, a_peer_holds_no_more_than_its_quota_in_each_table, .timeout = 60)
{
    atomic_store(&downs, 0);
    atomic_store(&exits, 0);
    atomic_store(&refused_downs, 0);
    atomic_store(&refused_exits, 0);
    ac_node_config base = {.timeout_ms = 10000, .peer_table_max = QUOTA};
    start_pair_with(&nodes, &base);
    ac_ctx *ca = ac_runtime_ctx(nodes.ra), *cb = ac_runtime_ctx(nodes.rb);
    quota_Peer_ref target, mine[ASKERS];
    cr_assert_eq(quota_Peer_spawn(cb, &target), 0);
    for (int i = 0; i < ASKERS; i++)
        cr_assert_eq(quota_Peer_spawn(ca, &mine[i]), 0);

    /* Group members: the first QUOTA joins are kept, in order. */
    for (int i = 0; i < ASKERS; i++)
        cr_assert_eq(ac_group_join(ca, "g", &mine[i].addr), 0);
    cr_assert(wait_for(NULL, ASKERS - QUOTA), "the joins past the quota are counted");
    cr_assert_eq(members_on_beta(), QUOTA);
    /* A member that leaves gives its place back. */
    cr_assert_eq(ac_group_leave(ca, "g", &mine[0].addr), 0);
    cr_assert(wait_members(QUOTA - 1));
    cr_assert_eq(ac_group_join(ca, "g", &mine[ASKERS - 1].addr), 0);
    cr_assert(wait_members(QUOTA), "the refused member joins in the freed place");
    /* Alpha also tells beta its members when it first sees beta up, which
     * may come after the joins above: each refused join is counted, so
     * the count is at least, not exactly, the refused members. */
    uint64_t refused_joins = over_quota_on_beta();
    cr_assert_geq(refused_joins, ASKERS - QUOTA);

    /* Monitors, then links: the refused ones are answered at once. */
    for (int i = 0; i < ASKERS; i++)
        cr_assert_eq(quota_Peer_send_watch(ca, mine[i], target), 0);
    cr_assert(wait_for(&refused_downs, ASKERS - QUOTA));
    for (int i = 0; i < ASKERS; i++)
        cr_assert_eq(quota_Peer_send_bind(ca, mine[i], target), 0);
    cr_assert(wait_for(&refused_exits, ASKERS - QUOTA));
    cr_assert(wait_for(NULL, refused_joins + 2 * (ASKERS - QUOTA)));

    /* The kept ones work: the target's stop reaches each of them once. */
    cr_assert_eq(ac_stop(cb, &target.addr), 0);
    cr_assert(wait_for(&downs, QUOTA));
    cr_assert(wait_for(&exits, QUOTA));
    cr_assert_eq(atomic_load(&refused_downs), ASKERS - QUOTA);
    cr_assert_eq(atomic_load(&refused_exits), ASKERS - QUOTA);
    stop_pair(&nodes);
}

/* ---- the counts themselves (lib/quota.c) ------------------------------------------------ */

Test(quota, counts_match_a_plain_array_through_growth_and_removals)
{
    enum { NODES = 300, OPS = 200000, MAX = 7 };
    uint64_t ids[NODES];
    uint32_t want[NODES] = {0};
    for (int i = 0; i < NODES; i++)  /* clustered ids: neighbouring homes */
        ids[i] = (uint64_t)(i + 1) << (i % 3 == 0 ? 0 : 32);
    ac__quota q = {0};
    uint64_t x = 0x9E3779B97F4A7C15u;
    for (int op = 0; op < OPS; op++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int i = (int)(x % NODES);
        if ((x >> 32) & 1) {
            bool took = ac__quota_take(&q, ids[i], MAX);
            cr_assert_eq(took, want[i] < MAX);
            want[i] += took;
        } else if (want[i] > 0) {
            ac__quota_give(&q, ids[i]);
            want[i]--;
        }
        if (op % 997 == 0)
            for (int j = 0; j < NODES; j++)
                cr_assert_eq(ac__quota_held(&q, ids[j]), want[j], "node %d", j);
    }
    for (int j = 0; j < NODES; j++) {
        cr_assert_eq(ac__quota_held(&q, ids[j]), want[j]);
        while (want[j]-- > 0)
            ac__quota_give(&q, ids[j]);
    }
    cr_assert_eq(q.used, 0, "every node gone gives its slot back");
    cr_assert(!ac__quota_take(&q, ids[0], 0), "a quota of 0 takes nothing");
    ac__quota_fini(&q);
}
