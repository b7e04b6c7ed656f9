/*
 * tsan_main.c — runs the suites built against tsan-include/criterion (see
 * the comment there): each test in a forked child, like Criterion, so every
 * test starts with fresh globals; a failed assertion, a crash or a
 * ThreadSanitizer report fails the test.
 */
#include <criterion/criterion.h>

#include <fnmatch.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_TESTS 512
#define EXIT_SKIPPED 77
#define TIMEOUT_SECONDS 600

static struct {
    const char *suite, *name;
    crt_test_fn fn;
} tests[MAX_TESTS];
static int ntests;

void crt_register(const char *suite, const char *name, crt_test_fn fn)
{
    if (ntests == MAX_TESTS) {
        fprintf(stderr, "tsan_main: more than %d tests\n", MAX_TESTS);
        exit(2);
    }
    tests[ntests].suite = suite;
    tests[ntests].name = name;
    tests[ntests].fn = fn;
    ntests++;
}

void crt_fail(const char *file, int line, const char *expr, const char *fmt, ...)
{
    fprintf(stderr, "%s:%d: Assertion failed: %s", file, line, expr);
    if (fmt && *fmt) {
        va_list ap;
        va_start(ap, fmt);
        fputs(": ", stderr);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
    }
    fputc('\n', stderr);
    exit(1);
}

void crt_skip(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(EXIT_SKIPPED);
}

/* Criterion's `--filter suite/name` (a glob), for running one test. */
static const char *filter_of(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "--filter") == 0)
            return argv[i + 1];
    return NULL;
}

int main(int argc, char **argv)
{
    const char *filter = filter_of(argc, argv);
    int passed = 0, failed = 0, skipped = 0;
    for (int i = 0; i < ntests; i++) {
        char full[256];
        snprintf(full, sizeof full, "%s/%s", tests[i].suite, tests[i].name);
        if (filter != NULL && fnmatch(filter, full, 0) != 0)
            continue;
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0) {
            perror("tsan_main: fork");
            return 2;
        }
        if (pid == 0) {
            alarm(TIMEOUT_SECONDS);
            tests[i].fn();
            fflush(NULL);
            _exit(0);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        const char *verdict;
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
            verdict = "PASS";
            passed++;
        } else if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_SKIPPED) {
            verdict = "SKIP";
            skipped++;
        } else {
            verdict = WIFSIGNALED(status) ? "CRASH" : "FAIL";
            failed++;
        }
        printf("[%s] %s::%s\n", verdict, tests[i].suite, tests[i].name);
    }
    printf("tsan: %d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
