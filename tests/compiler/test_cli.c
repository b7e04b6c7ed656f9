/*
 * test_cli.c — the command line: options, exit statuses, standard input,
 * --stdout, output folders and depfiles. Runs the real binary (ACTORC_BIN).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "actorc_compiler.h"
#include "helpers.h"

#define SAMPLE TEST_SRC_DIR "/golden/pingpong.actor"

static char *bin;

static void setup(void)
{
    require_repo_root();
    bin = actorc_path();
}

static void teardown(void)
{
    free(bin);
}

TestSuite(cli, .init = setup, .fini = teardown);

Test(cli, version)
{
    cmd_result r;
    cr_assert(cmd_run(&r, NULL, NULL, "'%s' --version", bin));
    cr_expect_eq(r.status, 0);
    cr_expect_str_eq(r.out, "actorc 0.1.0\n");
    cr_expect_str_eq(r.err, "");
    cmd_free(&r);
}

Test(cli, help)
{
    cmd_result r;
    cr_assert(cmd_run(&r, NULL, NULL, "'%s' --help", bin));
    cr_expect_eq(r.status, 0);
    cr_expect(strncmp(r.out, "usage: actorc [options] file.actor...\n", 38) == 0,
              "%s", r.out);
    for (const char *opt = "-o DIR\0-I DIR\0--stdout\0-MD\0-MF FILE\0-MT TARGET\0"
                           "-MP\0--graph\0--version\0--help\0";
         *opt != '\0'; opt += strlen(opt) + 1)
        cr_expect_neq(strstr(r.out, opt), NULL, "--help lacks %s", opt);
    cr_expect_str_eq(r.err, "");
    cmd_free(&r);

    cr_assert(cmd_run(&r, NULL, NULL, "'%s' -h", bin));
    cr_expect_eq(r.status, 0);
    cmd_free(&r);
}

Test(cli, unknown_option)
{
    cmd_result r;
    cr_assert(cmd_run(&r, NULL, NULL, "'%s' --frobnicate %s", bin, SAMPLE));
    cr_expect_eq(r.status, 2);
    cr_expect_str_eq(r.err, "actorc: error: unknown option '--frobnicate'\n"
                            "Try 'actorc --help' for more information.\n");
    cr_expect_str_eq(r.out, "");
    cmd_free(&r);
}

Test(cli, option_missing_its_value)
{
    cmd_result r;
    cr_assert(cmd_run(&r, NULL, NULL, "'%s' %s -o", bin, SAMPLE));
    cr_expect_eq(r.status, 2);
    cr_expect_neq(strstr(r.err, "option '-o' needs a directory"), NULL, "%s",
                  r.err);
    cmd_free(&r);
}

/* A depfile names the files written: --stdout writes none. */
Test(cli, stdout_with_depfile)
{
    cmd_result r;
    cr_assert(cmd_run(&r, NULL, NULL, "'%s' --stdout -MD %s", bin, SAMPLE));
    cr_expect_eq(r.status, 2);
    cr_expect_neq(strstr(r.err, "--stdout writes no files for a depfile to name"), NULL, "%s",
                  r.err);
    cr_expect_str_eq(r.out, "");
    cmd_free(&r);
}

Test(cli, no_input)
{
    cmd_result r;
    cr_assert(cmd_run(&r, NULL, NULL, "'%s'", bin));
    cr_expect_eq(r.status, 2);
    cr_expect_str_eq(r.err, "actorc: error: no input files\n"
                            "Try 'actorc --help' for more information.\n");
    cmd_free(&r);
}

Test(cli, missing_file)
{
    char *dir = make_tmpdir();
    cmd_result r;
    cr_assert(cmd_run(&r, dir, NULL, "'%s' nope.actor", bin));
    cr_expect_eq(r.status, 2);
    cr_expect_str_eq(r.err, "actorc: error: cannot read 'nope.actor': "
                            "No such file or directory\n");
    cmd_free(&r);
    remove_tree(dir);
    free(dir);
}

Test(cli, writes_next_to_the_current_directory)
{
    char *dir = make_tmpdir();
    char *src = realpath(SAMPLE, NULL);
    cmd_result r;
    cr_assert(cmd_run(&r, dir, NULL, "'%s' '%s'", bin, src));
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect_str_eq(r.err, "");
    char *h = str_printf("%s/pingpong.actor.h", dir);
    char *c = str_printf("%s/pingpong.actor.c", dir);
    cr_expect(file_exists(h) && file_exists(c));
    cmd_free(&r);
    remove_tree(dir);
    free(h);
    free(c);
    free(src);
    free(dir);
}

/* -o makes the folder (and its parents) and the files equal the library's
 * output. */
Test(cli, output_dir)
{
    char *dir = make_tmpdir();
    cmd_result r;
    cr_assert(cmd_run(&r, NULL, NULL, "'%s' -o '%s/a/b' %s", bin, dir, SAMPLE));
    cr_expect_eq(r.status, 0, "%s", r.err);

    acc_result lib;
    cr_assert_eq(acc_compile_file(SAMPLE, NULL, &lib), 0);
    char *h = str_printf("%s/a/b/pingpong.actor.h", dir);
    char *c = str_printf("%s/a/b/pingpong.actor.c", dir);
    char *got_h = read_file(h, NULL), *got_c = read_file(c, NULL);
    cr_assert_not_null(got_h);
    cr_assert_not_null(got_c);
    cr_expect_str_eq(got_h, lib.header);
    cr_expect_str_eq(got_c, lib.source);

    acc_result_free(&lib);
    cmd_free(&r);
    remove_tree(dir);
    free(got_h);
    free(got_c);
    free(h);
    free(c);
    free(dir);
}

Test(cli, stdout_prints_header_then_source)
{
    cmd_result r;
    char *dir = make_tmpdir();
    char *src = realpath(SAMPLE, NULL);
    cr_assert(cmd_run(&r, dir, NULL, "'%s' --stdout '%s'", bin, src));
    cr_expect_eq(r.status, 0, "%s", r.err);

    acc_result lib;
    cr_assert_eq(acc_compile_file(SAMPLE, NULL, &lib), 0);
    char *both = str_printf("%s%s", lib.header, lib.source);
    cr_expect_str_eq(r.out, both);
    cr_expect(!file_exists("pingpong.actor.h"));
    char *h = str_printf("%s/pingpong.actor.h", dir);
    cr_expect(!file_exists(h), "--stdout also wrote %s", h);

    acc_result_free(&lib);
    cmd_free(&r);
    remove_tree(dir);
    free(h);
    free(both);
    free(src);
    free(dir);
}

/* "-" reads standard input; messages say <stdin>; outputs are named after
 * the module. */
Test(cli, stdin_input)
{
    char *dir = make_tmpdir();
    char *in = realpath(SAMPLE, NULL);
    cmd_result r;
    cr_assert(cmd_run(&r, dir, in, "'%s' -", bin));
    cr_expect_eq(r.status, 0, "%s", r.err);
    char *h = str_printf("%s/pingpong.actor.h", dir);
    char *text = read_file(h, NULL);
    cr_assert_not_null(text, "no %s", h);
    cr_expect(strncmp(text, "/* generated by actorc 0.1.0 from <stdin> ", 42) == 0,
              "%.60s", text);
    cmd_free(&r);
    free(text);

    char *bad = str_printf("%s/bad.actor", dir);
    cr_assert(write_file(bad, "module m;\nactor A {\n", 20));
    cr_assert(cmd_run(&r, dir, bad, "'%s' -", bin));
    cr_expect_eq(r.status, 1);
    cr_expect_str_eq(r.err, "<stdin>:2:10: error: actor 'A' is not closed: "
                            "expected '}' at the end of the file\n"
                            "    2 | actor A {\n"
                            "      |          ^\n"
                            "<stdin>:2:9: note: actor 'A' opens here\n"
                            "    2 | actor A {\n"
                            "      |         ^\n");
    cmd_free(&r);

    remove_tree(dir);
    free(bad);
    free(h);
    free(in);
    free(dir);
}

/* Errors in one file: status 1, no output for it, the others still made. */
Test(cli, several_files)
{
    char *dir = make_tmpdir();
    char *bad = str_printf("%s/bad.actor", dir);
    char *good = realpath(SAMPLE, NULL);
    cr_assert(write_file(bad, "module bad;\nactor A { on x(u64 y, u8 y); }\n", 43));
    cmd_result r;
    cr_assert(cmd_run(&r, dir, NULL, "'%s' bad.actor '%s'", bin, good));
    cr_expect_eq(r.status, 1);
    cr_expect(strncmp(r.err, "bad.actor:2:26: error: duplicate field 'y'", 42) == 0,
              "%s", r.err);
    char *bad_h = str_printf("%s/bad.actor.h", dir);
    char *good_h = str_printf("%s/pingpong.actor.h", dir);
    cr_expect(!file_exists(bad_h));
    cr_expect(file_exists(good_h));
    cmd_free(&r);
    remove_tree(dir);
    free(bad_h);
    free(good_h);
    free(bad);
    free(good);
    free(dir);
}

Test(cli, include_dirs_are_accepted)
{
    char *dir = make_tmpdir();
    cmd_result r;
    cr_assert(cmd_run(&r, NULL, NULL, "'%s' -I /nonexistent -I. -o '%s' %s",
                      bin, dir, SAMPLE));
    cr_expect_eq(r.status, 0, "%s", r.err);
    cmd_free(&r);
    remove_tree(dir);
    free(dir);
}

Test(cli, depfile)
{
    char *dir = make_tmpdir();
    cmd_result r;
    cr_assert(cmd_run(&r, NULL, NULL, "'%s' -MD -o '%s' %s", bin, dir, SAMPLE));
    cr_expect_eq(r.status, 0, "%s", r.err);
    char *d = str_printf("%s/pingpong.actor.d", dir);
    char *text = read_file(d, NULL);
    cr_assert_not_null(text, "no %s", d);
    char *want = str_printf("%s/pingpong.actor.h %s/pingpong.actor.c: %s\n",
                            dir, dir, SAMPLE);
    cr_expect_str_eq(text, want);
    cmd_free(&r);
    free(text);
    free(want);

    cr_assert(cmd_run(&r, NULL, NULL,
                      "'%s' -MF '%s/x y.d' -MT 'gen/$t' -MP -o '%s' %s",
                      bin, dir, dir, SAMPLE));
    cr_expect_eq(r.status, 0, "%s", r.err);
    char *mf = str_printf("%s/x y.d", dir);
    text = read_file(mf, NULL);
    cr_assert_not_null(text);
    want = str_printf("gen/$$t: %s\n", SAMPLE);
    cr_expect_str_eq(text, want);
    cmd_free(&r);

    cr_assert(cmd_run(&r, NULL, NULL, "'%s' -MF x.d %s %s", bin, SAMPLE,
                      SAMPLE));
    cr_expect_eq(r.status, 2);
    cmd_free(&r);

    remove_tree(dir);
    free(text);
    free(want);
    free(mf);
    free(d);
    free(dir);
}

/* --graph: NAME.actor.dot alone, the library's graph byte for byte, in the
 * -o folder or on standard output; -MD names the .dot as its target. */
Test(cli, graph)
{
    char *dir = make_tmpdir();
    acc_options opt;
    acc_options_init(&opt);
    opt.graph = true;
    acc_result lib;
    cr_assert_eq(acc_compile_file(SAMPLE, &opt, &lib), 0);
    cr_assert_not_null(lib.graph);

    cmd_result r;
    cr_assert(cmd_run(&r, NULL, NULL, "'%s' --graph -MD -o '%s' %s", bin,
                      dir, SAMPLE));
    cr_expect_eq(r.status, 0, "%s", r.err);
    char *g = str_printf("%s/pingpong.actor.dot", dir);
    char *got = read_file(g, NULL);
    cr_assert_not_null(got, "no %s", g);
    cr_expect_str_eq(got, lib.graph);
    char *h = str_printf("%s/pingpong.actor.h", dir);
    cr_expect(!file_exists(h), "--graph also wrote %s", h);
    char *d = str_printf("%s/pingpong.actor.dot.d", dir);
    char *dep = read_file(d, NULL);
    cr_assert_not_null(dep, "no %s", d);
    char *want = str_printf("%s: %s\n", g, SAMPLE);
    cr_expect_str_eq(dep, want);
    cmd_free(&r);

    char *src = realpath(SAMPLE, NULL);
    cr_assert(cmd_run(&r, dir, NULL, "'%s' --graph --stdout '%s'", bin, src));
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect_str_eq(r.out, lib.graph);
    cmd_free(&r);

    acc_result_free(&lib);
    remove_tree(dir);
    free(src);
    free(want);
    free(dep);
    free(d);
    free(h);
    free(got);
    free(g);
    free(dir);
}
