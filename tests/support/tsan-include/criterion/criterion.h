/*
 * A stand-in for <criterion/criterion.h>, used only for the ThreadSanitizer
 * build of the suites.
 *
 * Why: Criterion cannot start under ThreadSanitizer. Its sandbox maps an
 * "inheritable arena" at random addresses in a range that TSan reserves for
 * its shadow memory, and gives up ("Could not initialize inheritable arena",
 * upstream issue Snaipe/Criterion#274). So the TSan build compiles the very
 * same test files against this header, which supplies the subset of the
 * Criterion API our suites use, and links tests/support/tsan_main.c, which
 * runs each test in its own forked process as Criterion does.
 */
#ifndef ACTORC_TSAN_CRITERION_H
#define ACTORC_TSAN_CRITERION_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*crt_test_fn)(void);
void crt_register(const char *suite, const char *name, crt_test_fn fn);
void crt_fail(const char *file, int line, const char *expr, const char *fmt, ...);
void crt_skip(const char *fmt, ...);

#define Test(suite, name, ...)                                                 \
    static void suite##_##name(void);                                          \
    __attribute__((constructor)) static void suite##_##name##_register(void)   \
    {                                                                          \
        crt_register(#suite, #name, suite##_##name);                           \
    }                                                                          \
    static void suite##_##name(void)

#define cr_assert(cond, ...)                                                   \
    do {                                                                       \
        if (!(cond))                                                           \
            crt_fail(__FILE__, __LINE__, #cond, "" __VA_ARGS__);               \
    } while (0)
#define cr_assert_not(cond, ...) cr_assert(!(cond), __VA_ARGS__)
#define cr_assert_eq(a, b, ...) cr_assert((a) == (b), __VA_ARGS__)
#define cr_assert_neq(a, b, ...) cr_assert((a) != (b), __VA_ARGS__)
#define cr_assert_gt(a, b, ...) cr_assert((a) > (b), __VA_ARGS__)
#define cr_assert_geq(a, b, ...) cr_assert((a) >= (b), __VA_ARGS__)
#define cr_assert_lt(a, b, ...) cr_assert((a) < (b), __VA_ARGS__)
#define cr_assert_leq(a, b, ...) cr_assert((a) <= (b), __VA_ARGS__)
#define cr_assert_null(p, ...) cr_assert((p) == NULL, __VA_ARGS__)
#define cr_assert_not_null(p, ...) cr_assert((p) != NULL, __VA_ARGS__)
#define cr_assert_str_eq(a, b, ...) cr_assert(strcmp((a), (b)) == 0, __VA_ARGS__)
#define cr_assert_str_neq(a, b, ...) cr_assert(strcmp((a), (b)) != 0, __VA_ARGS__)
#define cr_assert_arr_eq(a, b, n, ...) cr_assert(memcmp((a), (b), (n)) == 0, __VA_ARGS__)
#define cr_expect cr_assert
/* The stand-in stops at the first failed expectation too. */
#define cr_expect_not cr_assert_not
#define cr_expect_eq cr_assert_eq
#define cr_expect_neq cr_assert_neq
#define cr_expect_gt cr_assert_gt
#define cr_expect_geq cr_assert_geq
#define cr_expect_lt cr_assert_lt
#define cr_expect_leq cr_assert_leq
#define cr_expect_null cr_assert_null
#define cr_expect_not_null cr_assert_not_null
#define cr_expect_str_eq cr_assert_str_eq
#define cr_expect_str_neq cr_assert_str_neq
#define cr_expect_arr_eq cr_assert_arr_eq
#define cr_skip_test(...) crt_skip("" __VA_ARGS__)
#define cr_log_info(...) (fprintf(stderr, __VA_ARGS__), fputc('\n', stderr))

#endif
