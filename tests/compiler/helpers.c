/*
 * helpers.c — see helpers.h.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "helpers.h"

char *str_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = malloc((size_t)n + 1);
    cr_assert_not_null(s);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf != NULL && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (cap - n < 2) {
            char *p = realloc(buf, cap *= 2);
            if (p == NULL)
                free(buf);
            buf = p;
        }
    }
    fclose(f);
    if (buf == NULL)
        return NULL;
    buf[n] = '\0';
    if (len != NULL)
        *len = n;
    return buf;
}

bool write_file(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return false;
    bool ok = fwrite(data, 1, len, f) == len;
    return fclose(f) == 0 && ok;
}

bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

char *make_tmpdir(void)
{
    char *dir = str_printf("/tmp/actorc-test-XXXXXX");
    cr_assert_not_null(mkdtemp(dir), "mkdtemp failed");
    return dir;
}

void remove_tree(const char *path)
{
    if (path == NULL || strncmp(path, "/tmp/actorc-test-", 17) != 0)
        return;
    char *cmd = str_printf("rm -rf '%s'", path);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", path);
    free(cmd);
}

bool cmd_run(cmd_result *r, const char *dir, const char *in_path,
             const char *fmt, ...)
{
    memset(r, 0, sizeof(*r));
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *cmd = malloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(cmd, (size_t)n + 1, fmt, ap);
    va_end(ap);

    char *tmp = make_tmpdir();
    char *out = str_printf("%s/out", tmp), *err = str_printf("%s/err", tmp);
    char *full = str_printf("cd '%s' && (%s) <'%s' >'%s' 2>'%s'",
                            dir ? dir : ".", cmd,
                            in_path ? in_path : "/dev/null", out, err);
    int st = system(full);
    r->status = st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r->out = read_file(out, &r->out_len);
    r->err = read_file(err, &r->err_len);
    remove_tree(tmp);
    free(full);
    free(out);
    free(err);
    free(tmp);
    free(cmd);
    return st != -1 && r->out != NULL && r->err != NULL;
}

void cmd_free(cmd_result *r)
{
    free(r->out);
    free(r->err);
    memset(r, 0, sizeof(*r));
}

char *actorc_path(void)
{
    char *p = realpath(ACTORC_BIN, NULL);
    cr_assert_not_null(p, "cannot find %s (run the tests from the "
                          "repository root)", ACTORC_BIN);
    return p;
}

bool have_program(const char *name)
{
    char *cmd = str_printf("command -v '%s' >/dev/null 2>&1", name);
    int st = system(cmd);
    free(cmd);
    return st == 0;
}

bool update_golden(void)
{
    const char *v = getenv("ACTORC_UPDATE_GOLDEN");
    return v != NULL && strcmp(v, "1") == 0;
}

void require_repo_root(void)
{
    cr_assert(file_exists(TEST_SRC_DIR), "run the tests from the repository "
              "root: %s is not here", TEST_SRC_DIR);
}

ac_runtime *make_runtime(int workers)
{
    ac_config cfg;
    ac_config_init(&cfg);
    cfg.workers = workers;
    cfg.shutdown_ms = AC_SHUTDOWN_NEVER_FORCED;
    ac_runtime *rt = NULL;
    cr_assert_eq(ac_runtime_create(&rt, &cfg), 0);
    ac_runtime_set_failure_hook(rt, ac_failure_quiet, NULL);
    return rt;
}
