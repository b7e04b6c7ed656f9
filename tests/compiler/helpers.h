/*
 * helpers.h — what the compiler suite's tests share: running a command and
 * capturing its output, reading and writing files, scratch directories,
 * the golden-file switch, and a runtime for running generated code.
 *
 * The tests run from the repository root (as `make test` does): the paths
 * TEST_SRC_DIR and ACTORC_BIN are relative to it.
 */
#ifndef TEST_COMPILER_HELPERS_H
#define TEST_COMPILER_HELPERS_H

#include <stdbool.h>
#include <stddef.h>

#include <actorc.h>

typedef struct cmd_result {
    int status;         /* exit status; -1 if it did not exit normally */
    char *out;          /* standard output */
    size_t out_len;
    char *err;          /* standard error */
    size_t err_len;
} cmd_result;

/* Runs `sh -c CMD` in `dir` (NULL: the current directory) with standard
 * input from `in_path` (NULL: /dev/null). Returns false if it could not be
 * started. Free with cmd_free(). */
bool cmd_run(cmd_result *r, const char *dir, const char *in_path,
             const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void cmd_free(cmd_result *r);

/* The whole file, NUL-terminated (NULL if unreadable). Caller frees. */
char *read_file(const char *path, size_t *len);
bool write_file(const char *path, const char *data, size_t len);
bool file_exists(const char *path);

/* A fresh directory under /tmp; remove_tree() deletes it. Caller frees. */
char *make_tmpdir(void);
void remove_tree(const char *path);

/* Absolute path of the actorc binary under test. Caller frees. */
char *actorc_path(void);

/* Whether `cc` runs (for skipping a compiler that is not installed). */
bool have_program(const char *name);

/* ACTORC_UPDATE_GOLDEN=1: tests rewrite expected files instead of
 * comparing (then review the diff with git). */
bool update_golden(void);

/* A printf into a malloc'd string. Caller frees. */
char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Aborts the test (with a message) unless run from the repository root. */
void require_repo_root(void);

/* A runtime with `workers` workers (0: deterministic, driven by
 * ac_runtime_run) that does not report actors failed on purpose
 * (failure.c), and whose shutdown is never forced: it handles what is
 * queued however long a loaded machine takes to. Asserts that it was
 * created. */
ac_runtime *make_runtime(int workers);

#endif /* TEST_COMPILER_HELPERS_H */
