/*
 * test_start_args.c — start arguments whose strings, bytes and sequences
 * live in the caller's memory: a supervisor's restart and a router's
 * replacement worker see the values of the first start after the caller
 * freed and overwrote its buffers (startargs.actor; docs/RUNTIME.md,
 * "Supervisors": the caller's copy may go once the call returns).
 */
#include "startargs.actor.h"

#include "fixtures.h"

#include <stdio.h>
#include <stdlib.h>

/* Each start hook's verdict: starts seen, and those that saw the values
 * the test gave (the first mismatch is kept for the message). */
static _Atomic uint64_t g_starts, g_good;
static char g_bad[128];

static bool view_is(ac_string s, const char *want)
{
    return s.len == strlen(want) && s.data != NULL && memcmp(s.data, want, s.len) == 0 &&
           s.data[s.len] == '\0';
}

int startargs_Named_hook_start(startargs_Named *self, ac_ctx *cx,
                               const startargs_Named_start_args *a)
{
    (void)self;
    (void)cx;
    static const uint8_t blob[] = { 1, 2, 3, 250 };
    bool ok = view_is(a->name, "alice") && a->blob.len == sizeof blob &&
              memcmp(a->blob.data, blob, sizeof blob) == 0 &&
              view_is(a->badge.label, "admin") && a->badge.codes.len == 3 &&
              a->badge.codes.data[0] == 7 && a->badge.codes.data[2] == 9 &&
              a->badge.deputies.len == 1 && view_is(a->badge.deputies.data[0].label, "dep") &&
              a->aliases.len == 2 && view_is(a->aliases.data[0], "al") &&
              view_is(a->aliases.data[1], "ally");
    if (ok)
        atomic_fetch_add(&g_good, 1);
    else if (g_bad[0] == '\0')
        snprintf(g_bad, sizeof g_bad, "start %u saw name '%.*s'", (unsigned)a->who,
                 (int)(a->name.len < 64 ? a->name.len : 64), a->name.data ? a->name.data : "");
    atomic_fetch_add(&g_starts, 1);
    return 0;
}

int startargs_Named_on_fail(startargs_Named *self, ac_ctx *cx, const startargs_Named_fail *m)
{
    (void)self;
    (void)cx;
    return m->code;
}

/* The caller's buffers: every view of the arguments points into them. */
typedef struct buffers {
    char *name, *label, *al, *ally, *dep;
    uint8_t *blob;
    startargs_Badge *deputy;
    uint16_t *codes;
    ac_string *aliases;
} buffers;

static char *dup_str(const char *s)
{
    char *p = malloc(strlen(s) + 1);
    cr_assert_not_null(p);
    strcpy(p, s);
    return p;
}

static startargs_Named_start_args make_args(buffers *b)
{
    static const uint8_t blob[] = { 1, 2, 3, 250 };
    b->name = dup_str("alice");
    b->label = dup_str("admin");
    b->al = dup_str("al");
    b->ally = dup_str("ally");
    b->dep = dup_str("dep");
    b->deputy = calloc(1, sizeof *b->deputy);
    cr_assert_not_null(b->deputy);
    b->deputy->label = (ac_string){ b->dep, 3 };
    b->blob = malloc(sizeof blob);
    b->codes = malloc(3 * sizeof *b->codes);
    b->aliases = malloc(2 * sizeof *b->aliases);
    cr_assert(b->blob && b->codes && b->aliases);
    memcpy(b->blob, blob, sizeof blob);
    b->codes[0] = 7, b->codes[1] = 8, b->codes[2] = 9;
    b->aliases[0] = (ac_string){ b->al, 2 };
    b->aliases[1] = (ac_string){ b->ally, 4 };
    startargs_Named_start_args a;
    memset(&a, 0, sizeof a);
    a.who = 1;
    a.name = (ac_string){ b->name, 5 };
    a.blob = (ac_bytes){ b->blob, sizeof blob };
    a.badge.label = (ac_string){ b->label, 5 };
    a.badge.codes = (ac_u16_seq){ b->codes, 3 };
    a.badge.deputies = (startargs_Badge_seq){ b->deputy, 1 };
    a.aliases = (ac_string_seq){ b->aliases, 2 };
    return a;
}

/* What a caller may do once the call returned: overwrite its buffers
 * (what a reader of the old pointers would now see) and free them. */
static void scribble_and_free(buffers *b)
{
    memset(b->name, 'M', 5);
    memset(b->label, 'X', 5);
    memset(b->al, 'Y', 2);
    memset(b->ally, 'Z', 4);
    memset(b->dep, 'W', 3);
    memset(b->deputy, 0xEE, sizeof *b->deputy);
    memset(b->blob, 0xEE, 4);
    memset(b->codes, 0xEE, 3 * sizeof *b->codes);
    memset(b->aliases, 0, 2 * sizeof *b->aliases);
    free(b->name), free(b->label), free(b->al), free(b->ally), free(b->dep);
    free(b->deputy);
    free(b->blob), free(b->codes), free(b->aliases);
}

static void reset(void)
{
    atomic_store(&g_starts, 0);
    atomic_store(&g_good, 0);
    g_bad[0] = '\0';
}

Test(start_args, a_restarted_child_sees_its_first_arguments, .timeout = 30)
{
    reset();
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    buffers b;
    startargs_Named_start_args *args = malloc(sizeof *args);
    cr_assert_not_null(args);
    *args = make_args(&b);
    /* The child directly under the top, and one under a child supervisor
     * (whose part of the tree is a copy of the top's copy). */
    ac_child_spec inner_kids[1] = {
        { .type = &startargs_Named_type, .args = args, .args_size = sizeof *args,
          .restart = AC_RESTART_PERMANENT },
    };
    ac_supervisor_spec inner = { .strategy = AC_ONE_FOR_ONE, .max_restarts = 5,
                                 .within_ms = 60000, .children = inner_kids, .nchildren = 1 };
    ac_child_spec kids[2] = {
        { .type = &startargs_Named_type, .args = args, .args_size = sizeof *args,
          .restart = AC_RESTART_PERMANENT },
        { .restart = AC_RESTART_PERMANENT, .supervisor = &inner },
    };
    ac_supervisor_spec spec = { .strategy = AC_ONE_FOR_ONE, .max_restarts = 5,
                                .within_ms = 60000, .children = kids, .nchildren = 2 };
    ac_addr sup, addrs[2], grandkid;
    cr_assert_eq(ac_supervisor_start(cx, &spec, &sup, addrs), 0);
    cr_assert(wait_for(&g_starts, 2));
    cr_assert_eq(ac_supervisor_which_children(cx, &addrs[1], &grandkid, 1), 1);

    memset(args, 0xEE, sizeof *args);
    free(args);
    scribble_and_free(&b);

    cr_assert_eq(startargs_Named_send_fail(cx, startargs_Named_ref_of(addrs[0]), 5), 0);
    cr_assert(wait_for(&g_starts, 3));
    cr_assert_eq(startargs_Named_send_fail(cx, startargs_Named_ref_of(grandkid), 5), 0);
    cr_assert(wait_for(&g_starts, 4));
    cr_expect_eq(atomic_load(&g_good), 4, "%s", g_bad);
    ac_runtime_destroy(rt);
}

Test(start_args, a_replacement_worker_sees_the_first_arguments, .timeout = 30)
{
    reset();
    ac_runtime *rt = make_runtime(2);
    ac_ctx *cx = ac_runtime_ctx(rt);
    buffers b;
    startargs_Named_start_args args = make_args(&b);
    ac_router_options o = { .type = &startargs_Named_type, .args = &args, .workers = 2,
                            .strategy = AC_ROUTE_ROUND_ROBIN };
    ac_addr router, workers[2];
    cr_assert_eq(ac_router_spawn(cx, &o, &router), 0);
    cr_assert(wait_for(&g_starts, 2));
    cr_assert_eq(ac_router_workers(cx, &router, workers, 2), 2);

    memset(&args, 0xEE, sizeof args);
    scribble_and_free(&b);

    cr_assert_eq(startargs_Named_send_fail(cx, startargs_Named_ref_of(workers[0]), 5), 0);
    cr_assert(wait_for(&g_starts, 3));
    cr_expect_eq(atomic_load(&g_good), 3, "%s", g_bad);
    ac_runtime_destroy(rt);
}

/* A view of NULL with a length cannot be copied: the specification is
 * refused, as a send refuses such a message. */
Test(start_args, a_view_that_cannot_be_copied_is_einval, .timeout = 30)
{
    ac_runtime *rt = make_runtime(1);
    ac_ctx *cx = ac_runtime_ctx(rt);
    startargs_Named_start_args args;
    memset(&args, 0, sizeof args);
    args.name = (ac_string){ NULL, 3 };
    ac_child_spec kid = { .type = &startargs_Named_type, .args = &args,
                          .args_size = sizeof args, .restart = AC_RESTART_PERMANENT };
    ac_supervisor_spec spec = { .strategy = AC_ONE_FOR_ONE, .max_restarts = 1,
                                .within_ms = 1000, .children = &kid, .nchildren = 1 };
    ac_addr sup;
    cr_expect_eq(ac_supervisor_start(cx, &spec, &sup, NULL), AC_EINVAL);
    ac_router_options o = { .type = &startargs_Named_type, .args = &args, .workers = 1,
                            .strategy = AC_ROUTE_ROUND_ROBIN };
    cr_expect_eq(ac_router_spawn(cx, &o, &sup), AC_EINVAL);
    ac_runtime_destroy(rt);
}
