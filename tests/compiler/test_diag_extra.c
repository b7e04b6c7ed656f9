/*
 * test_diag_extra.c — the diagnostics test_diag.c had no input for.
 *
 * tests/compiler/diag/extra/NAME.actor is compiled by actorc (from that
 * folder) and its standard error compared with NAME.expected, as in
 * test_diag.c; refresh them with
 *
 *     ACTORC_UPDATE_GOLDEN=1 build/tests/test_compiler --filter 'diag_extra/[a-z]*'
 *
 * The errors no small input can provoke (imports nested too deeply, a file
 * too large, a file name that cannot name the outputs) are checked through
 * the library with their exact text.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actorc_compiler.h"
#include "helpers.h"

static const char *const cases[] = {
    "enum_literal", "unknown_qualified", "generated_reserved",
    "collision_hooks", "syntax_types",
};

static void check_extra(const char *name)
{
    require_repo_root();
    char *bin = actorc_path();
    char *dir = str_printf("%s/diag/extra", TEST_SRC_DIR);
    char *out = make_tmpdir();
    cmd_result r;
    cr_assert(cmd_run(&r, dir, NULL, "'%s' -o '%s' %s.actor", bin, out, name));

    char *expected_path = str_printf("%s/%s.expected", dir, name);
    if (update_golden()) {
        cr_assert(write_file(expected_path, r.err, r.err_len));
    } else {
        size_t len;
        char *want = read_file(expected_path, &len);
        cr_assert_not_null(want, "missing %s", expected_path);
        cr_expect_str_eq(r.err, want, "diag/extra/%s: standard error differs:\n"
                         "--- want\n%s--- got\n%s", name, want, r.err);
        free(want);
    }
    cr_expect_eq(r.status, 1, "diag/extra/%s: exit status %d", name, r.status);
    cr_expect_str_eq(r.out, "");
    char *h = str_printf("%s/%s.actor.h", out, name);
    cr_expect(!file_exists(h), "%s was written despite errors", h);

    cmd_free(&r);
    remove_tree(out);
    free(h);
    free(expected_path);
    free(out);
    free(dir);
    free(bin);
}

#define EXTRA(name) \
    Test(diag_extra, name) { check_extra(#name); }

EXTRA(enum_literal)
EXTRA(unknown_qualified)
EXTRA(generated_reserved)
EXTRA(collision_hooks)
EXTRA(syntax_types)

Test(diag_extra, every_input_has_a_test)
{
    require_repo_root();
    char *dir = str_printf("%s/diag/extra", TEST_SRC_DIR);
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n <= 6 || strcmp(e->d_name + n - 6, ".actor") != 0)
            continue;
        bool listed = false;
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
            listed |= strlen(cases[i]) == n - 6 &&
                      strncmp(cases[i], e->d_name, n - 6) == 0;
        cr_expect(listed, "diag/extra/%s has no EXTRA() test", e->d_name);
    }
    closedir(d);
    free(dir);
}

/* A chain of imports deeper than the loader's stack (64). */
Test(diag_extra, imports_nested_too_deeply)
{
    enum { DEPTH = 70 };
    char *dir = make_tmpdir();
    for (int i = 0; i < DEPTH; i++) {
        char *path = str_printf("%s/f%d.actor", dir, i);
        char *text = i + 1 < DEPTH
            ? str_printf("module m%d;\nimport \"f%d.actor\";\n"
                         "struct S { m%d.S s; }\n", i, i + 1, i + 1)
            : str_printf("module m%d;\nstruct S { u8 x; }\n", i);
        cr_assert(write_file(path, text, strlen(text)));
        free(text);
        free(path);
    }
    char *first = str_printf("%s/f0.actor", dir);
    acc_result r;
    cr_expect_eq(acc_compile_file(first, NULL, &r), 1);
    cr_expect_eq(r.errors, 1, "%s", r.diagnostics);
    /* The deepest file that could still be loaded reports its import. */
    char *want = str_printf("%s/f63.actor:2:8: error: imports nested too deeply\n"
                            "    2 | import \"f64.actor\";\n"
                            "      |        ^~~~~~~~~~~\n", dir);
    cr_expect_str_eq(r.diagnostics, want);
    cr_expect_null(r.header);
    acc_result_free(&r);
    free(want);
    free(first);
    remove_tree(dir);
    free(dir);
}

/* The length is refused before the text is read (it is not that long). */
Test(diag_extra, file_too_large)
{
    static const char text[] = "module m;";
    acc_result r;
    cr_expect_eq(acc_compile_buffer("big.actor", text, (size_t)UINT32_MAX / 2,
                                    NULL, &r), 1);
    cr_expect_str_eq(r.diagnostics, "big.actor: error: the file is too "
                     "large: 2147483647 bytes, more than the 16777216 (16 "
                     "MiB) a compilation reads, with its imports\n");
    cr_expect_eq(r.errors, 1);
    cr_expect_null(r.header);
    acc_result_free(&r);
}

/* The outputs' base name ends up in #include lines and file names. */
Test(diag_extra, name_that_cannot_name_the_outputs)
{
    static const char text[] = "module m;\n";
    acc_result r;
    cr_expect_eq(acc_compile_buffer("we\"ird.actor", text, strlen(text), NULL,
                                    &r), 1);
    cr_expect_str_eq(r.diagnostics, "we\"ird.actor: error: 'we\"ird.actor' "
                     "cannot name the generated files\n");
    cr_expect_null(r.header);
    acc_result_free(&r);

    acc_options opt;
    acc_options_init(&opt);
    opt.output_name = "";
    cr_expect_eq(acc_compile_buffer("m.actor", text, strlen(text), &opt, &r), 1);
    cr_expect_str_eq(r.diagnostics,
                     "m.actor: error: '' cannot name the generated files\n");
    acc_result_free(&r);
}
