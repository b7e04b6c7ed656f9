/*
 * test_imports.c — imports through the command line (-I, depfiles with
 * -MP, cycles, missing files, -w) and the typed references that make a
 * message for one actor type fail to compile when sent to another.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

static char *bin, *dir;

static void setup(void)
{
    require_repo_root();
    bin = actorc_path();
    dir = make_tmpdir();
}

static void teardown(void)
{
    remove_tree(dir);
    free(dir);
    free(bin);
}

TestSuite(imports, .init = setup, .fini = teardown);

static void put(const char *name, const char *text)
{
    char *p = str_printf("%s/%s", dir, name);
    char *slash = strrchr(p, '/');
    *slash = '\0';
    char *mk = str_printf("mkdir -p '%s'", p);
    cr_assert_eq(system(mk), 0);
    *slash = '/';
    cr_assert(write_file(p, text, strlen(text)));
    free(mk);
    free(p);
}

static char *slurp(const char *name)
{
    char *p = str_printf("%s/%s", dir, name);
    char *t = read_file(p, NULL);
    cr_assert_not_null(t, "no %s", p);
    free(p);
    return t;
}

Test(imports, include_dirs_and_depfile)
{
    put("lib/money.actor", "module money;\nstruct Money { i64 cents; }\n");
    put("lib/units.actor", "module units;\nimport \"money.actor\";\n"
                           "struct Price { money.Money m; }\n");
    put("app.actor", "module app;\nimport \"units.actor\";\n"
                     "actor A { on buy(units.Price p, ref<A> me); }\n");
    cmd_result r;
    cr_assert(cmd_run(&r, dir, NULL, "'%s' -I lib -MD -MP -o out app.actor",
                      bin));
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect_str_eq(r.err, "");
    char *d = slurp("out/app.actor.d");
    cr_expect_str_eq(d, "out/app.actor.h out/app.actor.c: app.actor \\\n"
                        " lib/units.actor \\\n lib/money.actor\n"
                        "\nlib/units.actor:\n\nlib/money.actor:\n");
    char *h = slurp("out/app.actor.h");
    cr_expect_neq(strstr(h, "#include \"units.actor.h\"\n"), NULL);
    cr_expect_null(strstr(h, "money.actor.h"));
    cmd_free(&r);
    free(d);
    free(h);

    /* Without -I the import is not found: an error in the input. */
    cr_assert(cmd_run(&r, dir, NULL, "'%s' -o out app.actor", bin));
    cr_expect_eq(r.status, 1);
    cr_expect_neq(strstr(r.err, "app.actor:2:8: error: cannot find "
                                "\"units.actor\""), NULL, "%s", r.err);
    cmd_free(&r);
}

Test(imports, cycle_is_reported)
{
    put("a.actor", "module a;\nimport \"b.actor\";\nstruct X { b.Y y; }\n");
    put("b.actor", "module b;\nimport \"a.actor\";\nstruct Y { u8 v; }\n");
    cmd_result r;
    cr_assert(cmd_run(&r, dir, NULL, "'%s' -o out a.actor", bin));
    cr_expect_eq(r.status, 1);
    cr_expect_neq(strstr(r.err, "b.actor:2:8: error: import cycle: a.actor -> "
                                "b.actor -> a.actor"), NULL, "%s", r.err);
    cmd_free(&r);
}

Test(imports, diamond_loads_each_file_once)
{
    put("base.actor", "module base;\nenum E { x }\n");
    put("l.actor", "module l;\nimport \"base.actor\";\nstruct L { base.E e; }\n");
    put("r.actor", "module r;\nimport \"base.actor\";\nstruct R { base.E e; }\n");
    put("top.actor", "module top;\nimport \"l.actor\";\nimport \"r.actor\";\n"
                     "actor T { on m(l.L a, r.R b, ref<T> t); }\n");
    cmd_result r;
    cr_assert(cmd_run(&r, dir, NULL, "'%s' -MD -o out top.actor", bin));
    cr_expect_eq(r.status, 0, "%s", r.err);
    char *d = slurp("out/top.actor.d");
    cr_expect_str_eq(d, "out/top.actor.h out/top.actor.c: top.actor \\\n"
                        " l.actor \\\n base.actor \\\n r.actor\n");
    cmd_free(&r);
    free(d);
}

Test(imports, warnings_and_w)
{
    put("u.actor", "module u;\nstruct S { u8 v; }\n");
    put("w.actor", "module w;\nimport \"u.actor\";\nactor Lonely { on hi(); }\n");
    cmd_result r;
    /* By default: the unused import, not the actor main may drive. */
    cr_assert(cmd_run(&r, dir, NULL, "'%s' -o out w.actor", bin));
    cr_expect_eq(r.status, 0);
    cr_expect_neq(strstr(r.err, "w.actor:2:8: warning: unused import "
                                "\"u.actor\": nothing here names 'u.' "
                                "[-Wunused-import]\n"), NULL, "%s", r.err);
    cr_expect_eq(strstr(r.err, "Lonely"), NULL, "%s", r.err);
    cmd_free(&r);
    cr_assert(cmd_run(&r, dir, NULL, "'%s' -Wall -o out w.actor", bin));
    cr_expect_eq(r.status, 0);
    cr_expect_neq(strstr(r.err, "w.actor:3:7: warning: no actor can send to "
                                "'Lonely'"), NULL, "%s", r.err);
    cr_expect_neq(strstr(r.err, "[-Wunreferenced-actor]\n"), NULL, "%s",
                  r.err);
    cmd_free(&r);
    /* The last word on a warning wins; -w outranks them all. */
    cr_assert(cmd_run(&r, dir, NULL, "'%s' -Wall -Wno-unused-import "
                      "-Wno-unreferenced-actor -o out w.actor", bin));
    cr_expect_eq(r.status, 0);
    cr_expect_str_eq(r.err, "");
    cmd_free(&r);
    cr_assert(cmd_run(&r, dir, NULL, "'%s' -Wall -w -o out w.actor", bin));
    cr_expect_eq(r.status, 0);
    cr_expect_str_eq(r.err, "");
    cmd_free(&r);
    /* -Werror fails the compilation; -Wno-error=<name> exempts one. */
    cr_assert(cmd_run(&r, dir, NULL, "'%s' -Werror -o out2 w.actor", bin));
    cr_expect_eq(r.status, 1);
    cr_expect_neq(strstr(r.err, "w.actor:2:8: error: unused import "
                                "\"u.actor\": nothing here names 'u.' "
                                "[-Werror=unused-import]\n"), NULL, "%s",
                  r.err);
    char *h = str_printf("%s/out2/w.actor.h", dir);
    cr_expect(!file_exists(h), "%s was written despite -Werror", h);
    free(h);
    cmd_free(&r);
    cr_assert(cmd_run(&r, dir, NULL, "'%s' -Werror -Wno-error=unused-import "
                      "-o out w.actor", bin));
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect_neq(strstr(r.err, "warning: unused import"), NULL, "%s", r.err);
    cmd_free(&r);
    cr_assert(cmd_run(&r, dir, NULL, "'%s' -Wunused-imports w.actor", bin));
    cr_expect_eq(r.status, 2);
    cr_expect_neq(strstr(r.err, "unknown warning option "
                                "'-Wunused-imports'"), NULL, "%s", r.err);
    cmd_free(&r);
}

/* Sending an Account message to a Teller reference does not compile; the
 * same call with the right reference does. */
Test(imports, typed_refs_reject_the_wrong_actor)
{
    if (!have_program("cc"))
        cr_skip_test("cc is not installed");
    put("bank.actor", "module bank;\nstruct Money { i64 cents; }\n"
                      "actor Account { on deposit(Money amount); }\n"
                      "actor Teller { on serve(ref<Account> account, "
                      "Money amount); }\n");
    char *root = realpath(".", NULL);
    cmd_result r;
    cr_assert(cmd_run(&r, dir, NULL, "'%s' bank.actor", bin));
    cr_assert_eq(r.status, 0, "%s", r.err);
    cmd_free(&r);
    put("good.c", "#include \"bank.actor.h\"\n"
                  "int f(ac_ctx *cx, bank_Account_ref a);\n"
                  "int f(ac_ctx *cx, bank_Account_ref a)\n"
                  "{\n    bank_Money m = { 5 };\n"
                  "    return bank_Account_send_deposit(cx, a, m);\n}\n");
    put("bad.c", "#include \"bank.actor.h\"\n"
                 "int f(ac_ctx *cx, bank_Teller_ref t);\n"
                 "int f(ac_ctx *cx, bank_Teller_ref t)\n"
                 "{\n    bank_Money m = { 5 };\n"
                 "    return bank_Account_send_deposit(cx, t, m);\n}\n");
    cr_assert(cmd_run(&r, dir, NULL, "cc -std=c11 -Wall -Wextra -Werror "
                      "-I'%s/runtime/include' -I. -fsyntax-only good.c", root));
    cr_expect_eq(r.status, 0, "%s", r.err);
    cmd_free(&r);
    cr_assert(cmd_run(&r, dir, NULL, "cc -std=c11 -I'%s/runtime/include' -I. "
                      "-fsyntax-only bad.c", root));
    cr_expect_neq(r.status, 0, "sending an Account message to a Teller "
                  "reference compiled");
    cr_expect_neq(strstr(r.err, "incompatible type"), NULL, "%s", r.err);
    cmd_free(&r);
    free(root);
}
