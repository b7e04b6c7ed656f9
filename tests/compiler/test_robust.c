/*
 * test_robust.c — no input crashes the compiler or leaks (run this suite
 * under SANITIZE=address,undefined to make that a hard check): every prefix
 * of every test input, and seeded random mutations of them. The result
 * must always be coherent: output without errors, diagnostics with them.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actorc_compiler.h"
#include "helpers.h"

static const char *const inputs[] = {
    "sample.actor", "golden/pingpong.actor", "golden/types.actor",
    "golden/edge.actor", "diag/syntax_recovery.actor", "diag/collision.actor",
    "diag/bad_character.actor", "diag/too_many_errors.actor",
    "golden/full.actor", "wire.actor", "diag/array_size.actor",
    "diag/enum_range.actor", "diag/unknown_type.actor", "diag/hooks.actor",
};
#define NINPUTS (sizeof(inputs) / sizeof(inputs[0]))

static void compile_checked(const char *text, size_t len)
{
    acc_result r;
    int rc = acc_compile_buffer("fuzz.actor", text, len, NULL, &r);
    cr_assert_not_null(r.diagnostics);
    cr_assert_eq(strlen(r.diagnostics), r.diagnostics_len);
    if (rc == 0) {
        cr_assert_eq(r.errors, 0);
        cr_assert_not_null(r.header);
        cr_assert_not_null(r.source);
        cr_assert(strstr(r.diagnostics, "error: ") == NULL,
                  "errors but success:\n%s", r.diagnostics);
    } else {
        cr_assert_gt(r.errors, 0);
        cr_assert_leq(r.errors, ACC_MAX_ERRORS);
        cr_assert_null(r.header);
        cr_assert(strstr(r.diagnostics, "error: ") != NULL,
                  "errors without a message:\n%.*s", (int)len, text);
    }
    acc_result_free(&r);
}

static char *load(size_t i, size_t *len)
{
    char *path = str_printf("%s/%s", TEST_SRC_DIR, inputs[i]);
    char *text = read_file(path, len);
    cr_assert_not_null(text, "cannot read %s", path);
    free(path);
    return text;
}

Test(robust, every_prefix)
{
    require_repo_root();
    for (size_t i = 0; i < NINPUTS; i++) {
        size_t len;
        char *text = load(i, &len);
        for (size_t n = 0; n <= len; n++) {
            /* A copy of exactly n bytes, so that reading past it is
             * caught by the sanitizer. */
            char *copy = malloc(n ? n : 1);
            memcpy(copy, text, n);
            compile_checked(copy, n);
            free(copy);
        }
        free(text);
    }
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

Test(robust, random_mutations)
{
    static const char *const pieces[] = {
        "module", "actor", "state", "on", "ref<", ">", "addr", "u64", "{",
        "}", "(", ")", ";", ",", "///", "//", "/*", "*/", "\n", "\0", "\xff",
        "_", "__", "A", "spawn", "int", "->", " ", "\xc3\xa9",
        "struct", "enum", "import \"x.actor\";", "string", "bytes", "[",
        "]", "[]", "[4]", "[0]", "[-1]", "= 5", "=", "-", ".", "m.", "\"",
        "start", "stop", "0x7fffffff", "99999999999999999999",
        "mailbox 3;", "mailbox", "drop_oldest", "down", "exit",
    };
    require_repo_root();
    for (int round = 0; round < 3000; round++) {
        size_t len;
        char *text = load(next() % NINPUTS, &len);
        size_t cap = len + 64;
        char *buf = malloc(cap);
        memcpy(buf, text, len);
        int edits = 1 + (int)(next() % 4);
        for (int e = 0; e < edits; e++) {
            size_t at = len ? next() % len : 0;
            switch (next() % 4) {
            case 0:                             /* flip a byte */
                if (len)
                    buf[at] = (char)next();
                break;
            case 1:                             /* cut a range */
                if (len) {
                    size_t n = next() % (len - at + 1);
                    memmove(buf + at, buf + at + n, len - at - n);
                    len -= n;
                }
                break;
            default: {                          /* insert a token */
                const char *p = pieces[next() % (sizeof(pieces) / sizeof(pieces[0]))];
                size_t n = *p ? strlen(p) : 1;
                if (len + n > cap)
                    break;
                memmove(buf + at + n, buf + at, len - at);
                memcpy(buf + at, p, n);
                len += n;
            }
            }
        }
        compile_checked(buf, len);
        free(buf);
        free(text);
    }
}

/* Pathological sizes: long names, many declarations, deep repetition. */
Test(robust, large_inputs)
{
    size_t n = 100000;
    char *name = malloc(n + 1);
    memset(name, 'a', n);
    name[n] = '\0';
    char *text = str_printf("module %s;\nactor %s { on %s(ref<%sb> x); }\n",
                            name, name, name, name);
    acc_result r;
    acc_compile_buffer("big.actor", text, strlen(text), NULL, &r);
    cr_expect_eq(r.errors, 1);      /* unknown actor, no suggestion */
    acc_result_free(&r);
    free(text);
    free(name);

    /* Many declarations: 100 KB make some 28 MB of code, under the cap
     * on the output (ACC_MAX_OUTPUT; test_limits.c tries the cap). */
    size_t cap = 100 * 1000, len = 0;
    char *many = malloc(cap);
    len += (size_t)sprintf(many, "module m;\n");
    for (int i = 0; len + 100 < cap; i++)
        len += (size_t)sprintf(many + len, "actor A%d { on x(u8 y); }\n", i);
    acc_compile_buffer("many.actor", many, len, NULL, &r);
    cr_expect_eq(r.errors, 0, "%s", r.diagnostics);
    acc_result_free(&r);

    len = (size_t)sprintf(many, "module m;\n");
    while (len + 2 < cap)
        many[len++] = '{';
    acc_compile_buffer("braces.actor", many, len, NULL, &r);
    cr_expect_gt(r.errors, 0);
    acc_result_free(&r);
    free(many);
}
