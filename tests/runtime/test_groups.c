/* test_groups.c — process groups: join, leave, publish, members. */
#include "svc_probe.h"

static size_t group_size(ac_ctx *cx, const char *g)
{
    return ac_group_members(cx, g, NULL, 0);
}

static int publish(ac_ctx *cx, const char *g, uint64_t v)
{
    return ac_group_publish(cx, g, &sv_type, sv_new(cx, SV_NOTE, v, NULL));
}

Test(groups, a_joined_actor_is_listed_among_the_members)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = sv_spawn(cx), b = sv_spawn(cx), out[4];
    cr_assert_eq(ac_group_join(cx, "room", &a), 0);
    cr_assert_eq(ac_group_join(cx, "room", &b), 0);
    cr_assert_eq(ac_group_members(cx, "room", out, 4), 2);
    cr_assert(ac_addr_eq(&out[0], &a) && ac_addr_eq(&out[1], &b));  /* join order */
    cr_assert_eq(ac_group_members(cx, "room", out, 1), 2);  /* total, 1 copied */
    cr_assert_eq(group_size(cx, "elsewhere"), 0);
    ac_runtime_destroy(rt);
}

Test(groups, joining_twice_is_one_membership)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = sv_spawn(cx);
    cr_assert_eq(ac_group_join(cx, "room", &a), 0);
    cr_assert_eq(ac_group_join(cx, "room", &a), 0);
    cr_assert_eq(group_size(cx, "room"), 1);
    cr_assert_eq(publish(cx, "room", 1), 1);
    ac_runtime_run(rt);
    cr_assert_eq(sv_notes_of(&a), 1);
    ac_runtime_destroy(rt);
}

Test(groups, joining_with_an_address_that_is_not_alive_is_refused)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = sv_spawn(cx), never;
    memset(&never, 0x33, sizeof never);
    cr_assert_eq(ac_group_join(cx, "room", &never), AC_ENOTFOUND);
    cr_assert_eq(ac_stop(cx, &a), 0);
    ac_runtime_run(rt);
    cr_assert_eq(ac_group_join(cx, "room", &a), AC_ENOTFOUND);
    cr_assert_eq(ac_groups(cx, NULL, 0), 0);  /* no group was created */
    cr_assert_eq(ac_group_join(cx, "", &a), AC_EINVAL);
    cr_assert_eq(ac_group_join(cx, NULL, &a), AC_EINVAL);
    ac_runtime_destroy(rt);
}

Test(groups, leave_removes_the_member_and_the_actor_lives_on)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = sv_spawn(cx), b = sv_spawn(cx), out[2];
    cr_assert_eq(ac_group_join(cx, "room", &a), 0);
    cr_assert_eq(ac_group_join(cx, "room", &b), 0);
    cr_assert_eq(ac_group_leave(cx, "room", &a), 0);
    cr_assert_eq(ac_group_members(cx, "room", out, 2), 1);
    cr_assert(ac_addr_eq(&out[0], &b));
    cr_assert_eq(sv_send(cx, &a, SV_NOTE, 1, NULL), 0);
    cr_assert_eq(publish(cx, "room", 2), 1);
    ac_runtime_run(rt);
    cr_assert_eq(sv_notes_of(&a), 1);  /* the direct send, not the publish */
    cr_assert_eq(sv_notes_of(&b), 1);
    ac_runtime_destroy(rt);
}

Test(groups, leaving_a_group_one_is_not_in_is_refused)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = sv_spawn(cx), b = sv_spawn(cx);
    cr_assert_eq(ac_group_leave(cx, "room", &a), AC_ENOTFOUND);  /* no group */
    cr_assert_eq(ac_group_join(cx, "room", &b), 0);
    cr_assert_eq(ac_group_leave(cx, "room", &a), AC_ENOTFOUND);  /* not a member */
    cr_assert_eq(ac_group_leave(cx, "room", &b), 0);
    cr_assert_eq(ac_group_leave(cx, "room", &b), AC_ENOTFOUND);  /* any more */
    ac_runtime_destroy(rt);
}

Test(groups, publish_reaches_every_member_and_returns_how_many)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    enum { N = 40 };  /* more than fit the publish's stack buffer */
    ac_addr m[N];
    for (int i = 0; i < N; i++) {
        m[i] = sv_spawn(cx);
        cr_assert_eq(ac_group_join(cx, "all", &m[i]), 0);
    }
    cr_assert_eq(publish(cx, "all", 9), N);
    ac_runtime_run(rt);
    for (int i = 0; i < N; i++)
        cr_assert_eq(sv_notes_of(&m[i]), 1);
    cr_assert_eq(atomic_load(&sv_copies), N - 1);  /* the last gets the original */
    ac_runtime_destroy(rt);
}

Test(groups, publish_to_a_group_without_members_reaches_nobody)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    cr_assert_eq(publish(cx, "nobody-here", 1), 0);
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&sv_notes.len), 0);
    cr_assert_eq(ac_group_publish(cx, "", &sv_type, sv_new(cx, SV_NOTE, 1, NULL)), AC_EINVAL);
    cr_assert_eq(ac_group_publish(cx, "g", NULL, sv_new(cx, SV_NOTE, 1, NULL)), AC_EINVAL);
    cr_assert_eq(ac_group_publish(cx, "g", &sv_type, NULL), AC_EINVAL);
    ac_runtime_destroy(rt);
}

Test(groups, publish_without_a_copy_function_is_refused_for_several_members)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a, b;  /* members of the type published to: only they are sent to */
    cr_assert_eq(ac_spawn(cx, &sv_nocopy_type, NULL, &a), 0);
    cr_assert_eq(ac_spawn(cx, &sv_nocopy_type, NULL, &b), 0);
    cr_assert_eq(ac_group_join(cx, "pair", &a), 0);
    cr_assert_eq(ac_group_publish(cx, "pair", &sv_nocopy_type, sv_new(cx, SV_NOTE, 1, NULL)), 1);
    cr_assert_eq(ac_group_join(cx, "pair", &b), 0);
    cr_assert_eq(ac_group_publish(cx, "pair", &sv_nocopy_type, sv_new(cx, SV_NOTE, 2, NULL)),
                 AC_EINVAL);
    ac_runtime_run(rt);
    cr_assert_eq(sv_notes_of(&a), 1);  /* only the single-member publish */
    cr_assert_eq(sv_notes_of(&b), 0);
    ac_runtime_destroy(rt);
}

Test(groups, a_dead_member_is_removed)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = sv_spawn(cx), b = sv_spawn(cx), c = sv_spawn(cx), out[3];
    cr_assert_eq(ac_group_join(cx, "room", &a), 0);
    cr_assert_eq(ac_group_join(cx, "room", &b), 0);
    cr_assert_eq(ac_group_join(cx, "room", &c), 0);
    cr_assert_eq(sv_send(cx, &a, SV_FAIL, 0, NULL), 0);
    cr_assert_eq(ac_kill(cx, &b), 0);
    ac_runtime_run(rt);
    cr_assert_eq(ac_group_members(cx, "room", out, 3), 1);
    cr_assert(ac_addr_eq(&out[0], &c));
    cr_assert_eq(publish(cx, "room", 1), 1);
    ac_runtime_run(rt);
    ac_stats st;
    ac_runtime_stats(rt, &st);
    cr_assert_eq(st.dead_letters, 0);  /* nothing was sent to the dead */
    ac_runtime_destroy(rt);
}

Test(groups, an_empty_group_disappears)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = sv_spawn(cx), b = sv_spawn(cx);
    cr_assert_eq(ac_group_join(cx, "left", &a), 0);
    cr_assert_eq(ac_group_join(cx, "died", &b), 0);
    cr_assert_eq(ac_groups(cx, NULL, 0), 2);
    cr_assert_eq(ac_group_leave(cx, "left", &a), 0);
    cr_assert_eq(ac_groups(cx, NULL, 0), 1);
    cr_assert_eq(sv_send(cx, &b, SV_STOP, 0, NULL), 0);
    ac_runtime_run(rt);
    cr_assert_eq(ac_groups(cx, NULL, 0), 0);
    cr_assert_eq(ac_group_join(cx, "died", &a), 0);  /* and can come back */
    cr_assert_eq(ac_groups(cx, NULL, 0), 1);
    ac_runtime_destroy(rt);
}

Test(groups, groups_lists_every_group_with_its_member_count)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = sv_spawn(cx), b = sv_spawn(cx);
    cr_assert_eq(ac_group_join(cx, "one", &a), 0);
    cr_assert_eq(ac_group_join(cx, "two", &a), 0);
    cr_assert_eq(ac_group_join(cx, "two", &b), 0);
    ac_group_entry out[4];
    cr_assert_eq(ac_groups(cx, out, 4), 2);
    for (int i = 0; i < 2; i++) {
        bool two = strcmp(out[i].name, "two") == 0;
        cr_assert(two || strcmp(out[i].name, "one") == 0);
        cr_assert_eq(out[i].members, two ? 2u : 1u);
    }
    cr_assert_eq(ac_groups(cx, out, 1), 2);  /* total, 1 copied */
    ac_runtime_destroy(rt);
}

Test(groups, an_actor_in_several_groups_leaves_all_of_them_when_it_dies)
{
    ac_runtime *rt = make_runtime(0);
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr a = sv_spawn(cx), b = sv_spawn(cx);
    const char *gs[] = {"g1", "g2", "g3"};
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(ac_group_join(cx, gs[i], &a), 0);
        cr_assert_eq(ac_group_join(cx, gs[i], &b), 0);
    }
    cr_assert_eq(ac_kill(cx, &a), 0);
    ac_runtime_run(rt);
    ac_addr out[2];
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(ac_group_members(cx, gs[i], out, 2), 1);
        cr_assert(ac_addr_eq(&out[0], &b));
    }
    ac_runtime_destroy(rt);
}

Test(groups, members_joining_and_dying_on_several_workers_leave_consistent_groups)
{
    ac_runtime *rt = make_runtime(4);
    ac_ctx *cx = ac_runtime_ctx(rt);
    enum { N = 200 };
    ac_addr m[N];
    for (int i = 0; i < N; i++) {
        m[i] = sv_spawn(cx);
        /* Each joins two groups from its own handler, and every third
         * then stops: joins, publishes and deaths interleave. */
        cr_assert_eq(sv_send(cx, &m[i], SV_JOIN, 0, "evens-and-odds"), 0);
        cr_assert_eq(sv_send(cx, &m[i], SV_JOIN, 0, i % 2 ? "odds" : "evens"), 0);
        if (i % 3 == 0)
            cr_assert_eq(sv_send(cx, &m[i], SV_STOP, 0, NULL), 0);
        int rc = publish(cx, "evens-and-odds", (uint64_t)i);
        cr_assert(rc >= 0 && rc <= N, "rc %d", rc);
    }
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&sv_errors), 0);
    size_t alive = N - (N + 2) / 3;
    cr_assert_eq(group_size(cx, "evens-and-odds"), alive);
    cr_assert_eq(group_size(cx, "evens") + group_size(cx, "odds"), alive);
    cr_assert_eq(publish(cx, "evens-and-odds", 1000), (int)alive);
    ac_runtime_destroy(rt);
}
