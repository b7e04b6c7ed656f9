/* test_records.c — one actor holding many service records (issue 12, item
 * 7): a watcher's monitors whose targets stop, an owner's timers, an
 * actor's groups and links. Each record of one actor used to be on one
 * bucket chain, so N of them cost O(N²); test_amap.c asserts the tables'
 * shape, and these check that the services keep every count right at a
 * size (thousands) where each record comes and goes in any order; and
 * that a dead asker's asks go with it. */
#include "svc_probe.h"
#include "services/services.h"  /* ac__ask_records */

#include <stdio.h>
#include <stdlib.h>

enum { N = 20000 };

Test(records, one_watcher_hears_of_every_one_of_many_targets, .timeout = 60)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr w = sv_spawn(cx);
    ac_addr *t = malloc(N * sizeof *t);
    for (int i = 0; i < N; i++) {
        t[i] = sv_spawn(cx);
        cr_assert_eq(ac_monitor(cx, &w, &t[i], NULL), 0);
    }
    /* The targets stop in the order they were monitored: the oldest of
     * the watcher's records first. */
    for (int i = 0; i < N; i++)
        cr_assert_eq(ac_stop(cx, &t[i]), 0);
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&sv_downs), N);
    ac_runtime_destroy(rt);
    free(t);
}

Test(records, many_monitors_of_one_watcher_are_taken_back_in_any_order, .timeout = 60)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    /* The watcher is an inbox of this thread's: only a monitor's watcher
     * may take it back. */
    ac_inbox *ib;
    cr_assert_eq(ac_inbox_create(cx, &ib), 0);
    const ac_addr *w = ac_inbox_addr(ib);
    ac_addr target = sv_spawn(cx);
    uint64_t *refs = malloc(N * sizeof *refs);
    for (int i = 0; i < N; i++)
        cr_assert_eq(ac_monitor(cx, w, &target, &refs[i]), 0);
    for (int k = 0; k < N; k++)  /* a stride prime to N: scrambled */
        cr_assert_eq(ac_demonitor(cx, refs[(k * 7919L) % N]), 0);
    cr_assert_eq(ac_demonitor(cx, refs[0]), AC_ENOTFOUND);
    cr_assert_eq(ac_stop(cx, &target), 0);
    ac_runtime_run(rt);
    ac_envelope *e;
    cr_assert_eq(ac_inbox_recv(cx, ib, AC_TAG_DOWN, 0, &e), AC_ETIMEDOUT);
    ac_inbox_destroy(cx, ib);
    ac_runtime_destroy(rt);
    free(refs);
}

/* ---- timers ------------------------------------------------------------------ */

typedef struct timer_args {
    int count;
    ac_timer_id *ids;
} timer_args;

static int start_timers(void *state, ac_ctx *cx, const void *args)
{
    (void)state;
    const timer_args *ta = args;
    for (int i = 0; i < ta->count; i++) {
        ac_envelope *e = ac_envelope_new(cx, 0, 0);
        if (e == NULL || ac_timer_after(cx, ac_self(cx), 1000 + (uint32_t)i, e, &ta->ids[i]) != 0)
            return 1;
    }
    return 0;
}

static int ignore(void *state, ac_ctx *cx, ac_envelope *e)
{
    (void)state;
    (void)cx;
    (void)e;
    return 0;
}

static const ac_actor_type timer_owner = {
    .abi = AC_ABI_VERSION,
    .name = "records.TimerOwner",
    .dispatch = ignore,
    .on_start = start_timers,
};

Test(records, many_timers_of_one_owner_are_cancelled_one_by_one, .timeout = 60)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    timer_args ta = {N, malloc(N * sizeof *ta.ids)};
    ac_addr owner;
    cr_assert_eq(ac_spawn(cx, &timer_owner, &ta, &owner), 0);
    for (int k = 0; k < N; k++)  /* the oldest first, then scrambled */
        cr_assert_eq(ac_timer_cancel(cx, ta.ids[k < N / 2 ? k : N / 2 + (k * 7919L) % (N / 2)]),
                     0);
    cr_assert_eq(ac_timer_cancel(cx, ta.ids[0]), AC_ENOTFOUND);
    cr_assert_eq(ac_runtime_advance(rt, 1000 + N), 0, "nothing left to fire");
    ac_runtime_destroy(rt);
    free(ta.ids);
}

Test(records, many_timers_of_one_owner_fire_or_die_with_it, .timeout = 60)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    timer_args ta = {N, malloc(N * sizeof *ta.ids)};
    ac_addr owner;
    cr_assert_eq(ac_spawn(cx, &timer_owner, &ta, &owner), 0);
    /* Half fire (each firing takes its timer off the owner's records),
     * the rest go with the owner. */
    cr_assert_eq(ac_runtime_advance(rt, 1000 + N / 2 - 1), N / 2);
    ac_runtime_run(rt);
    cr_assert_eq(ac_stop(cx, &owner), 0);
    ac_runtime_run(rt);
    cr_assert_eq(ac_runtime_advance(rt, N), 0);
    cr_assert_eq(ac_timer_cancel(cx, ta.ids[N - 1]), AC_ENOTFOUND);
    ac_runtime_destroy(rt);
    free(ta.ids);
}

/* ---- groups ------------------------------------------------------------------ */

static void group_name(char *out, int i)
{
    snprintf(out, 32, "room-%d", i);
}

Test(records, one_actor_joins_rejoins_and_leaves_many_groups, .timeout = 60)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = sv_spawn(cx), b = sv_spawn(cx);
    char name[32];
    for (int round = 0; round < 2; round++)  /* the second: already a member */
        for (int i = 0; i < N; i++) {
            group_name(name, i);
            cr_assert_eq(ac_group_join(cx, name, &a), 0);
        }
    cr_assert_eq(ac_groups(cx, NULL, 0), N);
    group_name(name, N - 1);
    cr_assert_eq(ac_group_members(cx, name, NULL, 0), 1);
    cr_assert_eq(ac_group_join(cx, name, &b), 0);
    cr_assert_eq(ac_group_members(cx, name, NULL, 0), 2);
    for (int i = 0; i < N; i += 2) {
        group_name(name, i);
        cr_assert_eq(ac_group_leave(cx, name, &a), 0);
        cr_assert_eq(ac_group_leave(cx, name, &a), AC_ENOTFOUND);
    }
    cr_assert_eq(ac_groups(cx, NULL, 0), N / 2);
    cr_assert_eq(ac_stop(cx, &a), 0);
    ac_runtime_run(rt);
    /* Every membership went with it; b's group is left with b. */
    cr_assert_eq(ac_groups(cx, NULL, 0), 1);
    group_name(name, N - 1);
    cr_assert_eq(ac_group_members(cx, name, NULL, 0), 1);
    ac_runtime_destroy(rt);
}

/* ---- links ------------------------------------------------------------------- */

typedef struct link_args {
    int count;
    const ac_addr *others;
} link_args;

/* Deterministic mode: the start hook runs on the test's own thread. */
static int link_errors;

static int start_links(void *state, ac_ctx *cx, const void *args)
{
    (void)state;
    const link_args *la = args;
    for (int round = 0; round < 2; round++)  /* twice: one link each */
        for (int i = 0; i < la->count; i++)
            if (ac_link(cx, &la->others[i]) != 0)
                link_errors++;
    /* Every other one undone, the last first. */
    for (int i = la->count - 1; i >= 0; i -= 2)
        if (ac_unlink(cx, &la->others[i]) != 0)
            link_errors++;
    return 0;
}

static const ac_actor_type link_hub = {
    .abi = AC_ABI_VERSION,
    .name = "records.LinkHub",
    .dispatch = ignore,
    .on_start = start_links,
};

Test(records, one_actor_links_many_and_its_failure_ends_the_linked_ones, .timeout = 60)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr w = sv_spawn(cx);
    ac_addr *others = malloc(N * sizeof *others);
    for (int i = 0; i < N; i++) {
        others[i] = sv_spawn(cx);
        cr_assert_eq(ac_monitor(cx, &w, &others[i], NULL), 0);
    }
    link_args la = {N, others};
    ac_addr hub;
    cr_assert_eq(ac_spawn(cx, &link_hub, &la, &hub), 0);
    cr_assert_eq(link_errors, 0);
    cr_assert_eq(ac_kill(cx, &hub), 0);
    ac_runtime_run(rt);
    /* The half still linked were killed with it; the others live. */
    cr_assert_eq(atomic_load(&sv_downs), N / 2);
    ac_runtime_destroy(rt);
    free(others);
}

/* ---- asks -------------------------------------------------------------------- */

static int no_reply(void *state, ac_ctx *cx, int status, const void *body, void *arg)
{
    (void)state;
    (void)cx;
    (void)status;
    (void)body;
    (void)arg;
    return 0;
}

static int start_asks(void *state, ac_ctx *cx, const void *args)
{
    (void)state;
    for (int i = 0; i < N; i++) {
        ac_envelope *e = ac_envelope_new(cx, 0, sizeof(ac_reply_to));
        if (e == NULL || ac_ask(cx, args, e, 0, no_reply, NULL) != 0)
            return 1;
    }
    return 0;
}

static const ac_actor_type asker_type = {
    .abi = AC_ABI_VERSION,
    .name = "records.Asker",
    .dispatch = ignore,
    .on_start = start_asks,
};

static const ac_actor_type silent_type = {
    .abi = AC_ABI_VERSION,
    .name = "records.Silent",
    .dispatch = ignore,
};

Test(records, a_dead_askers_unanswered_asks_are_freed_with_it, .timeout = 60)
{
    /* The asks were kept by (asker, id) and the death looked for (asker,
     * 0): they stayed until the runtime was destroyed. Now records are
     * reused rather than freed, so the store shows it: a second asker's
     * N asks, pending at once, take the first one's records. */
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr silent, asker, again;
    cr_assert_eq(ac_spawn(cx, &silent_type, NULL, &silent), 0);
    cr_assert_eq(ac_spawn(cx, &asker_type, &silent, &asker), 0);
    /* Every request handled, none answered. */
    cr_assert_eq(ac_runtime_run(rt), N);
    size_t made = ac__ask_records(rt);
    cr_assert_geq(made, (size_t)N);
    cr_assert_eq(ac_kill(cx, &asker), 0);
    cr_assert_eq(ac_runtime_run(rt), 0, "none pending once the asker is gone");
    cr_assert_eq(ac_spawn(cx, &asker_type, &silent, &again), 0);
    cr_assert_eq(ac_runtime_run(rt), N);
    /* Give or take what one context keeps on its own list (fewer than
     * 64): the start hook asks from the spawning thread's context, the
     * death freed onto the worker's. */
    cr_assert_lt(ac__ask_records(rt), made + 64,
                 "the dead asker's records were reused (%zu, then %zu)", made,
                 ac__ask_records(rt));
    ac_runtime_destroy(rt);
}
