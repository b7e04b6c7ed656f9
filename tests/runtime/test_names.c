/* test_names.c — the registry of names: ac_register, ac_whereis, ... */
#include "svc_probe.h"

#include <stdio.h>

Test(names, a_registered_name_finds_its_actor)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = sv_spawn(cx), found;
    cr_assert_eq(ac_register(cx, "logger", &a), 0);
    cr_assert_eq(ac_whereis(cx, "logger", &found), 0);
    cr_assert(ac_addr_eq(&found, &a));
    cr_assert_eq(ac_whereis(cx, "nobody", &found), AC_ENOTFOUND);
    ac_runtime_destroy(rt);
}

Test(names, duplicate_name_is_refused_and_the_original_keeps_it)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = sv_spawn(cx), b = sv_spawn(cx), found;
    cr_assert_eq(ac_register(cx, "db", &a), 0);
    cr_assert_eq(ac_register(cx, "db", &b), AC_EEXIST);
    cr_assert_eq(ac_register(cx, "db", &a), AC_EEXIST);
    cr_assert_eq(ac_whereis(cx, "db", &found), 0);
    cr_assert(ac_addr_eq(&found, &a));
    ac_runtime_destroy(rt);
}

Test(names, a_name_for_an_actor_that_is_not_alive_is_refused)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = sv_spawn(cx), never, found;
    memset(&never, 0x5a, sizeof never);
    cr_assert_eq(ac_register(cx, "ghost", &never), AC_ENOTFOUND);
    cr_assert_eq(ac_stop(cx, &a), 0);
    ac_runtime_run(rt);
    cr_assert_eq(ac_register(cx, "ghost", &a), AC_ENOTFOUND);
    cr_assert_eq(ac_whereis(cx, "ghost", &found), AC_ENOTFOUND);
    ac_runtime_destroy(rt);
}

Test(names, null_empty_and_overlong_names_are_invalid)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = sv_spawn(cx), found;
    char longest[AC_NAME_MAX + 2];
    memset(longest, 'n', sizeof longest);
    longest[AC_NAME_MAX + 1] = '\0';  /* 256 bytes: one too many */
    cr_assert_eq(ac_register(cx, NULL, &a), AC_EINVAL);
    cr_assert_eq(ac_register(cx, "", &a), AC_EINVAL);
    cr_assert_eq(ac_register(cx, longest, &a), AC_EINVAL);
    cr_assert_eq(ac_register(cx, "x", NULL), AC_EINVAL);
    cr_assert_eq(ac_whereis(cx, longest, &found), AC_EINVAL);
    cr_assert_eq(ac_unregister(cx, ""), AC_EINVAL);
    longest[AC_NAME_MAX] = '\0';  /* 255 bytes: the limit */
    cr_assert_eq(ac_register(cx, longest, &a), 0);
    cr_assert_eq(ac_whereis(cx, longest, &found), 0);
    ac_runtime_destroy(rt);
}

Test(names, unregister_frees_the_name_and_the_actor_lives_on)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = sv_spawn(cx), b = sv_spawn(cx), found;
    cr_assert_eq(ac_register(cx, "svc", &a), 0);
    cr_assert_eq(ac_unregister(cx, "svc"), 0);
    cr_assert_eq(ac_whereis(cx, "svc", &found), AC_ENOTFOUND);
    cr_assert_eq(ac_unregister(cx, "svc"), AC_ENOTFOUND);
    cr_assert_eq(sv_send(cx, &a, SV_NOTE, 1, NULL), 0);
    ac_runtime_run(rt);
    cr_assert_eq(sv_notes_of(&a), 1);
    cr_assert_eq(ac_register(cx, "svc", &b), 0);  /* free for anyone */
    ac_runtime_destroy(rt);
}

Test(names, an_actor_may_hold_several_names)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = sv_spawn(cx), f1, f2;
    cr_assert_eq(ac_register(cx, "primary", &a), 0);
    cr_assert_eq(ac_register(cx, "alias", &a), 0);
    cr_assert_eq(ac_whereis(cx, "primary", &f1), 0);
    cr_assert_eq(ac_whereis(cx, "alias", &f2), 0);
    cr_assert(ac_addr_eq(&f1, &a) && ac_addr_eq(&f2, &a));
    cr_assert_eq(ac_unregister(cx, "alias"), 0);
    cr_assert_eq(ac_whereis(cx, "primary", &f1), 0);  /* the other stays */
    ac_runtime_destroy(rt);
}

Test(names, a_name_is_freed_when_its_actor_stops_and_can_be_reused)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = sv_spawn(cx), b = sv_spawn(cx), found;
    cr_assert_eq(ac_register(cx, "worker", &a), 0);
    cr_assert_eq(ac_register(cx, "worker-2", &a), 0);
    cr_assert_eq(sv_send(cx, &a, SV_STOP, 0, NULL), 0);
    ac_runtime_run(rt);
    cr_assert_eq(ac_whereis(cx, "worker", &found), AC_ENOTFOUND);
    cr_assert_eq(ac_whereis(cx, "worker-2", &found), AC_ENOTFOUND);
    cr_assert_eq(ac_registered(cx, NULL, 0), 0);
    cr_assert_eq(ac_register(cx, "worker", &b), 0);
    cr_assert_eq(ac_whereis(cx, "worker", &found), 0);
    cr_assert(ac_addr_eq(&found, &b));
    ac_runtime_destroy(rt);
}

Test(names, a_name_is_freed_when_its_actor_fails_or_is_killed)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = sv_spawn(cx), b = sv_spawn(cx), found;
    cr_assert_eq(ac_register(cx, "failing", &a), 0);
    cr_assert_eq(ac_register(cx, "killed", &b), 0);
    cr_assert_eq(sv_send(cx, &a, SV_FAIL, 0, NULL), 0);
    cr_assert_eq(ac_kill(cx, &b), 0);
    ac_runtime_run(rt);
    cr_assert_eq(ac_whereis(cx, "failing", &found), AC_ENOTFOUND);
    cr_assert_eq(ac_whereis(cx, "killed", &found), AC_ENOTFOUND);
    ac_runtime_destroy(rt);
}

Test(names, registered_lists_every_name_with_its_address)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = sv_spawn(cx), b = sv_spawn(cx);
    cr_assert_eq(ac_register(cx, "a1", &a), 0);
    cr_assert_eq(ac_register(cx, "a2", &a), 0);
    cr_assert_eq(ac_register(cx, "b1", &b), 0);
    cr_assert_eq(ac_registered(cx, NULL, 0), 3);
    ac_name_entry two[2];
    cr_assert_eq(ac_registered(cx, two, 2), 3);  /* the total, 2 copied */
    ac_name_entry all[8];
    cr_assert_eq(ac_registered(cx, all, 8), 3);
    int seen = 0;
    for (int i = 0; i < 3; i++) {
        const ac_addr *want = strcmp(all[i].name, "b1") == 0 ? &b : &a;
        cr_assert(ac_addr_eq(&all[i].addr, want), "%s", all[i].name);
        seen |= strcmp(all[i].name, "a1") == 0 ? 1 : strcmp(all[i].name, "a2") == 0 ? 2 : 4;
    }
    cr_assert_eq(seen, 7);
    ac_runtime_destroy(rt);
}

Test(names, spawn_with_a_name_registers_it_before_the_start_hook)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    sv_args args = {"early", 0};
    ac_spawn_options o = {0};
    o.name = "early";
    ac_addr a, found;
    cr_assert_eq(ac_spawn_opts(cx, &sv_type, &args, &o, &a), 0);
    cr_assert_eq(atomic_load(&sv_start_saw_name), 1);
    cr_assert_eq(ac_whereis(cx, "early", &found), 0);
    cr_assert(ac_addr_eq(&found, &a));
    ac_runtime_destroy(rt);
}

Test(names, spawn_with_a_taken_name_fails_and_creates_no_actor)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = sv_spawn(cx), b, found;
    cr_assert_eq(ac_register(cx, "taken", &a), 0);
    ac_stats before, after;
    ac_runtime_stats(rt, &before);
    ac_spawn_options o = {0};
    o.name = "taken";
    sv_args args = {"taken", 0};
    cr_assert_eq(ac_spawn_opts(cx, &sv_type, &args, &o, &b), AC_EEXIST);
    ac_runtime_stats(rt, &after);
    cr_assert_eq(after.spawned, before.spawned);
    cr_assert_eq(atomic_load(&sv_start_saw_name), 0);  /* no start hook ran */
    cr_assert_eq(ac_whereis(cx, "taken", &found), 0);
    cr_assert(ac_addr_eq(&found, &a));
    o.name = "";
    cr_assert_eq(ac_spawn_opts(cx, &sv_type, NULL, &o, &b), AC_EINVAL);
    ac_runtime_destroy(rt);
}

Test(names, a_spawn_whose_start_hook_fails_frees_its_name)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_spawn_options o = {0};
    o.name = "doomed";
    sv_args args = {NULL, 9};
    ac_addr a, found;
    cr_assert_eq(ac_spawn_opts(cx, &sv_type, &args, &o, &a), 9);
    cr_assert_eq(ac_whereis(cx, "doomed", &found), AC_ENOTFOUND);
    cr_assert_eq(ac_spawn_opts(cx, &sv_type, NULL, &o, &a), 0);
    ac_runtime_destroy(rt);
}

Test(names, send_named_reaches_the_holder_and_counts_a_dead_letter_without_one)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = sv_spawn(cx);
    cr_assert_eq(ac_register(cx, "inbox", &a), 0);
    cr_assert_eq(ac_send_named(cx, "inbox", sv_new(cx, SV_NOTE, 5, NULL)), 0);
    cr_assert_eq(ac_send_named(cx, "nobody", sv_new(cx, SV_NOTE, 6, NULL)), AC_ENOTFOUND);
    ac_runtime_run(rt);
    cr_assert_eq(sv_notes_of(&a), 1);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.dead_letters, 1);
    ac_runtime_destroy(rt);
}

Test(names, a_dead_actors_name_is_free_before_its_monitors_hear)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr target = sv_spawn(cx), watcher = sv_spawn(cx);
    snprintf(sv_watch_name, sizeof sv_watch_name, "%s", "watched");
    cr_assert_eq(ac_register(cx, "watched", &target), 0);
    cr_assert_eq(ac_monitor(cx, &watcher, &target, NULL), 0);
    cr_assert_eq(sv_send(cx, &target, SV_FAIL, 0, NULL), 0);
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&sv_downs), 1);
    cr_assert_eq(atomic_load(&sv_name_free_at_down), 1);
    ac_runtime_destroy(rt);
}

/* Racing registrations, from handlers on several workers. */
#define RACERS 64
#define RACE_NAMES 16

static void check_one_winner_per_name(ac_ctx *cx)
{
    cr_assert_eq(atomic_load(&sv_errors), 0);
    cr_assert_eq(atomic_load(&sv_wins.len), RACE_NAMES);
    int wins[RACE_NAMES] = {0};
    for (int i = 0; i < RACE_NAMES; i++) {
        const sv_hit *h = &sv_wins.hits[i];
        wins[h->v]++;
        char name[32];
        snprintf(name, sizeof name, "race-%u", (unsigned)h->v);
        ac_addr found;
        cr_assert_eq(ac_whereis(cx, name, &found), 0);
        cr_assert(ac_addr_eq(&found, &h->who), "%s is not its winner's", name);
    }
    for (int k = 0; k < RACE_NAMES; k++)
        cr_assert_eq(wins[k], 1, "name %d won %d times", k, wins[k]);
}

static void race(int workers, uint32_t tag)
{
    ac_runtime *rt = make_runtime(workers);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr racers[RACERS];
    for (int i = 0; i < RACERS; i++)
        racers[i] = sv_spawn(cx);
    /* Every racer tries every name, each starting at a different one. */
    for (int k = 0; k < RACE_NAMES; k++) {
        for (int i = 0; i < RACERS; i++) {
            unsigned n = (unsigned)(k + i) % RACE_NAMES;
            char name[32];
            snprintf(name, sizeof name, "race-%u", n);
            cr_assert_eq(sv_send(cx, &racers[i], tag, n, name), 0);
        }
    }
    ac_runtime_run(rt);
    check_one_winner_per_name(cx);
    ac_runtime_destroy(rt);
}

Test(names, concurrent_registration_from_many_workers_has_one_winner_per_name)
{
    race(4, SV_REGISTER);
}

Test(names, concurrent_named_spawns_from_many_workers_have_one_winner_per_name)
{
    race(4, SV_SPAWN_NAMED);
}

Test(names, registration_racing_with_its_actors_death_leaves_no_stale_name)
{
    ac_runtime *rt = make_runtime(4);
    ac_ctx *cx = ac_runtime_ctx(rt);
    for (int round = 0; round < 200; round++) {
        ac_addr a = sv_spawn(cx);
        char name[32];
        snprintf(name, sizeof name, "short-%d", round);
        cr_assert_eq(sv_send(cx, &a, SV_STOP, 0, NULL), 0);
        int rc = ac_register(cx, name, &a);  /* races with the stop */
        cr_assert(rc == 0 || rc == AC_ENOTFOUND, "rc %d", rc);
    }
    ac_runtime_run(rt);
    cr_assert_eq(ac_registered(cx, NULL, 0), 0);
    ac_runtime_destroy(rt);
}
