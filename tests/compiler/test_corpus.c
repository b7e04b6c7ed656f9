/*
 * test_corpus.c — replays the fuzz corpus (tests/fuzz/corpus/: minimized
 * inputs that once crashed the compiler or reached new code) through the
 * compiler library. Each must compile to a coherent result without
 * crashing or leaking (run under SANITIZE=address,undefined to make that a
 * hard check); which result does not matter.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "actorc_compiler.h"
#include "helpers.h"

#define CORPUS "tests/fuzz/corpus"

Test(corpus, replays_without_a_crash)
{
    require_repo_root();
    DIR *d = opendir(CORPUS);
    if (d == NULL)
        cr_skip_test("no %s", CORPUS);
    struct dirent *e;
    int count = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char *path = str_printf("%s/%s", CORPUS, e->d_name);
        size_t len;
        char *text = read_file(path, &len);
        cr_assert_not_null(text, "cannot read %s", path);
        /* An exact-size copy: a read past the end is caught by ASan. */
        char *copy = malloc(len ? len : 1);
        memcpy(copy, text, len);
        acc_result r;
        int rc = acc_compile_buffer("/nonexistent-actorc-fuzz/fuzz.actor",
                                    copy, len, NULL, &r);
        cr_assert_not_null(r.diagnostics, "%s", path);
        cr_expect_eq(strlen(r.diagnostics), r.diagnostics_len, "%s", path);
        if (rc == 0)
            cr_expect(r.errors == 0 && r.header != NULL && r.source != NULL,
                      "%s", path);
        else
            cr_expect(r.errors > 0 && r.errors <= ACC_MAX_ERRORS &&
                      r.header == NULL, "%s", path);
        acc_result_free(&r);
        free(copy);
        free(text);
        free(path);
        count++;
    }
    closedir(d);
    cr_log_info("%d corpus inputs", count);
}
