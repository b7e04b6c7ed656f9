/*
 * main.c — the actorc command line. Parses options, reads each input,
 * compiles it with the library (actorc_compiler.h) and writes the outputs
 * (and, on request, a make depfile). Nothing else lives here.
 *
 * Exit status: 0 success, 1 errors in an input (or an output that could
 * not be written), 2 bad usage (unknown option, missing or unreadable
 * input file).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "actorc_compiler.h"

#define MAX_LIST 256

typedef struct cli {
    const char *out_dir;            /* NULL: the current directory */
    const char *includes[MAX_LIST];
    size_t include_count;
    const char *inputs[MAX_LIST];
    size_t input_count;
    bool to_stdout;
    bool graph;                     /* --graph: NAME.actor.dot, not the C */
    bool depfile;                   /* -MD */
    const char *dep_path;           /* -MF */
    const char *dep_targets[MAX_LIST];  /* -MT */
    size_t dep_target_count;
    bool dep_phony;                 /* -MP */
    bool no_warnings;               /* -w */
    /* -W<name>, -Wno-<name>, -Werror[=<name>], -Wno-error=<name>, -Wall:
     * resolved in order, the last word on a warning winning. */
    unsigned warn_on, warn_off, warn_error, warn_no_error;
    bool warn_all_errors;
} cli;

static void usage(FILE *f)
{
    fprintf(f,
        "usage: %s [options] file.actor...\n"
        "\n"
        "Compiles actor definitions to C: NAME.actor gives NAME.actor.h and\n"
        "NAME.actor.c.\n"
        "\n"
        "options:\n"
        "  -o DIR       write the outputs to DIR (default: the current directory)\n"
        "  -I DIR       add DIR to the import search path (repeatable)\n"
        "  --stdout     write the header, then the source (or the graph), to\n"
        "               standard output (no depfile: it would name files never written)\n"
        "  --graph      write NAME.actor.dot instead of the C: the actors of the\n"
        "               file and its imports as a Graphviz digraph, an edge\n"
        "               A -> B where A can hold a ref<B> (see docs/IDL.md)\n"
        "  -MD          also write a make depfile, DIR/NAME.actor.d\n"
        "  -MF FILE     write the depfile to FILE (implies -MD)\n"
        "  -MT TARGET   use TARGET as the depfile's target (repeatable)\n"
        "  -MP          add a phony target for each dependency but the input\n"
        "  -w           suppress warnings\n"
        "  -W<name>, -Wno-<name>\n"
        "               turn warning <name> on, or off (the list is below)\n"
        "  -Wall        turn every warning on\n"
        "  -Werror, -Werror=<name>, -Wno-error=<name>\n"
        "               make every warning an error, or one (which turns it\n"
        "               on), or keep one a warning under -Werror\n"
        "  --version    print the version and exit\n"
        "  -h, --help   print this help and exit\n"
        "\n"
        "A file named '-' is standard input: messages call it <stdin>, and its\n"
        "outputs are named after its module (MODULE.actor.h, MODULE.actor.c).\n"
        "\n"
        "Exit status: 0 success, 1 errors in the input, 2 bad usage.\n"
        "\n"
        "warnings (-W<name>):\n",
        ACC_NAME);
    for (int i = 0; acc_warning_name(i) != NULL; i++)
        fprintf(f, "  %-19s (%s) %s\n", acc_warning_name(i),
                acc_warning_default(i) ? "on " : "off", acc_warning_help(i));
}

/* Sets or clears `bit` in `set`, clearing it in `other`: the last option
 * about a warning wins. */
static void warn_bit(unsigned *set, unsigned *other, unsigned bit)
{
    *set |= bit;
    *other &= ~bit;
}

static int usage_error(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

/* -W...: false when it names no warning. */
static bool warning_option(cli *c, const char *a)
{
    const char *w = a + 2;
    bool no = strncmp(w, "no-", 3) == 0;
    if (no)
        w += 3;
    if (strcmp(a, "-Wall") == 0) {
        for (int i = 0; i < ACC_W_COUNT; i++)
            warn_bit(&c->warn_on, &c->warn_off, 1u << i);
        return true;
    }
    if (strcmp(w, "error") == 0) {
        c->warn_all_errors = !no;
        return true;
    }
    bool err = strncmp(w, "error=", 6) == 0;
    if (err)
        w += 6;
    int id = acc_warning_lookup(w, strlen(w));
    if (id < 0)
        return false;
    unsigned bit = 1u << id;
    if (err && no) {
        warn_bit(&c->warn_no_error, &c->warn_error, bit);
    } else if (err) {
        warn_bit(&c->warn_error, &c->warn_no_error, bit);
        warn_bit(&c->warn_on, &c->warn_off, bit);
    } else if (no) {
        warn_bit(&c->warn_off, &c->warn_on, bit);
    } else {
        warn_bit(&c->warn_on, &c->warn_off, bit);
    }
    return true;
}

static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: error: ", ACC_NAME);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry '%s --help' for more information.\n", ACC_NAME);
    va_end(ap);
    return 2;
}

static bool push(const char **list, size_t *count, const char *s)
{
    if (*count >= MAX_LIST)
        return false;
    list[(*count)++] = s;
    return true;
}

/* Options that take a value accept it attached ("-oDIR") or next. */
static const char *value(int argc, char **argv, int *i, const char *opt)
{
    size_t n = strlen(opt);
    if (argv[*i][n] != '\0')
        return argv[*i] + n;
    if (*i + 1 < argc)
        return argv[++*i];
    return NULL;
}

/* Returns -1 to go on, or an exit status. */
static int parse_args(cli *c, int argc, char **argv)
{
    bool options = true;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v;
        bool ok = true;
        if (!options || a[0] != '-' || strcmp(a, "-") == 0) {
            ok = push(c->inputs, &c->input_count, a);
        } else if (strcmp(a, "--") == 0) {
            options = false;
        } else if (strcmp(a, "--version") == 0) {
            printf("%s %s\n", ACC_NAME, ACC_VERSION);
            return 0;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--stdout") == 0) {
            c->to_stdout = true;
        } else if (strcmp(a, "--graph") == 0) {
            c->graph = true;
        } else if (strcmp(a, "-MD") == 0) {
            c->depfile = true;
        } else if (strcmp(a, "-MP") == 0) {
            c->dep_phony = true;
        } else if (strcmp(a, "-w") == 0) {
            c->no_warnings = true;
        } else if (strncmp(a, "-W", 2) == 0) {
            if (!warning_option(c, a))
                return usage_error("unknown warning option '%s' (see "
                                   "--help for the warnings)", a);
        } else if (strncmp(a, "-MF", 3) == 0) {
            if ((v = value(argc, argv, &i, "-MF")) == NULL)
                return usage_error("option '%s' needs a file name", a);
            c->dep_path = v;
            c->depfile = true;
        } else if (strncmp(a, "-MT", 3) == 0) {
            if ((v = value(argc, argv, &i, "-MT")) == NULL)
                return usage_error("option '%s' needs a target", a);
            ok = push(c->dep_targets, &c->dep_target_count, v);
        } else if (strncmp(a, "-o", 2) == 0) {
            if ((v = value(argc, argv, &i, "-o")) == NULL)
                return usage_error("option '%s' needs a directory", a);
            c->out_dir = v;
        } else if (strncmp(a, "-I", 2) == 0) {
            if ((v = value(argc, argv, &i, "-I")) == NULL)
                return usage_error("option '%s' needs a directory", a);
            ok = push(c->includes, &c->include_count, v);
        } else {
            return usage_error("unknown option '%s'", a);
        }
        if (!ok)
            return usage_error("too many arguments (at most %d of a kind)",
                               MAX_LIST);
    }
    if (c->input_count == 0)
        return usage_error("no input files");
    if (c->dep_path != NULL && c->input_count > 1)
        return usage_error("-MF needs a single input file");
    /* A depfile names the files written as its targets: with --stdout there
     * are none, and a rule whose target is never made reruns every build. */
    if (c->depfile && c->to_stdout)
        return usage_error("--stdout writes no files for a depfile to name: drop -MD/-MF or --stdout");
    return -1;
}

/* ---- output ------------------------------------------------------------------ */

static char *path_join(const char *dir, const char *name)
{
    size_t dn = dir ? strlen(dir) : 0, nn = strlen(name);
    char *p = malloc(dn + nn + 2);
    if (p == NULL)
        return NULL;
    if (dn == 0) {
        memcpy(p, name, nn + 1);
    } else {
        memcpy(p, dir, dn);
        size_t at = dn;
        if (dir[dn - 1] != '/')
            p[at++] = '/';
        memcpy(p + at, name, nn + 1);
    }
    return p;
}

/* mkdir -p */
static int make_dirs(const char *dir)
{
    char *p = strdup(dir);
    if (p == NULL)
        return ENOMEM;
    int err = 0;
    for (char *s = p + 1; err == 0; s++) {
        bool end = *s == '\0';
        if (*s != '/' && !end)
            continue;
        *s = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST)
            err = errno;
        if (end)
            break;
        *s = '/';
    }
    free(p);
    return err;
}

/* Writes through a temporary file and a rename: a reader never sees half
 * an output. Reports its own errors; false on failure. */
static bool write_file(const char *path, const char *data, size_t len)
{
    size_t n = strlen(path) + 32;
    char *tmp = malloc(n);
    if (tmp == NULL) {
        fprintf(stderr, "%s: error: out of memory\n", ACC_NAME);
        return false;
    }
    snprintf(tmp, n, "%s.tmp%ld", path, (long)getpid());
    int err = 0;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0) {
        err = errno;
    } else {
        size_t done = 0;
        while (done < len && err == 0) {
            ssize_t w = write(fd, data + done, len - done);
            if (w < 0 && errno != EINTR)
                err = errno;
            else if (w > 0)
                done += (size_t)w;
        }
        if (close(fd) != 0 && err == 0)
            err = errno;
        if (err == 0 && rename(tmp, path) != 0)
            err = errno;
        if (err != 0)
            unlink(tmp);
    }
    if (err != 0)
        fprintf(stderr, "%s: error: cannot write '%s': %s\n", ACC_NAME, path,
                strerror(err));
    free(tmp);
    return err == 0;
}

/* Make syntax: escape what make would split or expand. */
static void put_make_name(FILE *f, const char *s)
{
    for (; *s != '\0'; s++) {
        if (*s == ' ' || *s == '\t' || *s == '#' || *s == '\\')
            fputc('\\', f);
        else if (*s == '$')
            fputc('$', f);
        fputc(*s, f);
    }
}

static bool write_depfile(const cli *c, const char *input,
                          const acc_result *r, const char *hpath,
                          const char *cpath, const char *default_dep)
{
    const char *path = c->dep_path ? c->dep_path : default_dep;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL) {
        fprintf(stderr, "%s: error: out of memory\n", ACC_NAME);
        return false;
    }
    if (c->dep_target_count > 0) {
        for (size_t i = 0; i < c->dep_target_count; i++) {
            fputs(i ? " " : "", f);
            put_make_name(f, c->dep_targets[i]);
        }
    } else {
        put_make_name(f, hpath);
        if (cpath != NULL) {
            fputc(' ', f);
            put_make_name(f, cpath);
        }
    }
    fputc(':', f);
    if (strcmp(input, "-") != 0) {
        fputc(' ', f);
        put_make_name(f, input);
    }
    for (size_t i = 0; i < r->dep_count; i++) {
        fputs(" \\\n ", f);
        put_make_name(f, r->deps[i]);
    }
    fputc('\n', f);
    /* -MP: a phony target per imported file, so that deleting one does not
     * break the build. */
    for (size_t i = 0; c->dep_phony && i < r->dep_count; i++) {
        fputc('\n', f);
        put_make_name(f, r->deps[i]);
        fputs(":\n", f);
    }
    bool ok = fclose(f) == 0 && text != NULL;
    ok = ok && write_file(path, text, len);
    free(text);
    return ok;
}

/* ---- the outputs, written as they are made ------------------------------------ */

/* The library hands the code over in pieces as it generates it
 * (acc_options.write), so that its memory does not grow with the output.
 * Each file goes to a temporary file beside it (with --stdout, an unnamed
 * one) and is renamed into place, or copied to standard output, only once
 * the compilation has succeeded: a failure partway leaves nothing
 * half-written, and a reader never sees half a file. */
typedef struct out_file {
    char *name;             /* "bank.actor.h", as the library names it */
    char *path;             /* where it goes (NULL with --stdout) */
    char *tmp;              /* the temporary file's path (NULL: unnamed) */
    FILE *f;
} out_file;

typedef struct writer {
    const cli *c;
    out_file file[2];       /* the header, then the source: their order
                             * (with --graph, the graph alone) */
    int err;                /* the first failure's errno (0: none) */
    char *err_what;         /* its message, less the reason */
} writer;

static void writer_fail(writer *w, int err, const char *fmt, const char *arg)
{
    if (w->err != 0)
        return;
    w->err = err != 0 ? err : EIO;
    size_t n = strlen(fmt) + (arg ? strlen(arg) : 0) + 1;
    w->err_what = malloc(n);
    if (w->err_what != NULL)
        snprintf(w->err_what, n, fmt, arg ? arg : "");
}

static out_file *writer_open(writer *w, const char *name)
{
    for (size_t i = 0; i < 2; i++)
        if (w->file[i].name != NULL && strcmp(w->file[i].name, name) == 0)
            return &w->file[i];
    out_file *o = w->file[0].name == NULL ? &w->file[0] : &w->file[1];
    if (o->name != NULL || (o->name = strdup(name)) == NULL) {
        writer_fail(w, ENOMEM, "out of memory%s", NULL);
        return NULL;
    }
    if (w->c->to_stdout) {
        if ((o->f = tmpfile()) == NULL)
            writer_fail(w, errno, "cannot write to standard output%s", NULL);
        return o;
    }
    const char *dir = w->c->out_dir;
    int err = dir != NULL && o == &w->file[0] ? make_dirs(dir) : 0;
    if (err != 0) {
        writer_fail(w, err, "cannot create '%s'", dir);
        return o;
    }
    o->path = path_join(dir, name);
    size_t n = o->path != NULL ? strlen(o->path) + 32 : 0;
    o->tmp = o->path != NULL ? malloc(n) : NULL;
    if (o->tmp == NULL) {
        writer_fail(w, ENOMEM, "out of memory%s", NULL);
        return o;
    }
    snprintf(o->tmp, n, "%s.tmp%ld", o->path, (long)getpid());
    if ((o->f = fopen(o->tmp, "wb")) == NULL)
        writer_fail(w, errno, "cannot write '%s'", o->path);
    return o;
}

/* acc_options.write: after a failure, the rest is dropped. */
static void writer_put(void *arg, const char *name, const char *data,
                       size_t len)
{
    writer *w = arg;
    if (w->err != 0)
        return;
    out_file *o = writer_open(w, name);
    if (w->err != 0 || o == NULL)
        return;
    errno = 0;
    if (fwrite(data, 1, len, o->f) != len)
        writer_fail(w, errno, w->c->to_stdout
                                  ? "cannot write to standard output%s"
                                  : "cannot write '%s'", o->path);
}

/* Copies a finished temporary file to standard output. */
static bool copy_out(FILE *f)
{
    char buf[64 * 1024];
    if (fflush(f) != 0 || fseek(f, 0, SEEK_SET) != 0)
        return false;
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        if (fwrite(buf, 1, n, stdout) != n)
            return false;
    return !ferror(f);
}

/* Puts the files in place (or on standard output), or with `keep` false
 * only removes them. Reports its own errors; false on failure. */
static bool writer_finish(writer *w, bool keep)
{
    bool ok = keep && w->err == 0;
    if (ok && w->c->to_stdout) {
        /* A write that fails inside fwrite leaves nothing for fflush to
         * fail on: each call's result, and the stream's error flag, say
         * whether all of it was written. */
        errno = 0;
        bool wrote = true;
        for (size_t i = 0; i < 2 && wrote; i++)
            wrote = w->file[i].f == NULL || copy_out(w->file[i].f);
        if (fflush(stdout) != 0 || !wrote || ferror(stdout))
            writer_fail(w, errno, "cannot write to standard output%s", NULL);
    }
    for (size_t i = 0; i < 2; i++) {
        out_file *o = &w->file[i];
        if (o->f != NULL && fclose(o->f) != 0)
            writer_fail(w, errno, "cannot write '%s'", o->path);
        o->f = NULL;
    }
    for (size_t i = 0; i < 2; i++) {
        out_file *o = &w->file[i];
        if (o->tmp != NULL && keep && w->err == 0 &&
            rename(o->tmp, o->path) != 0)
            writer_fail(w, errno, "cannot write '%s'", o->path);
    }
    for (size_t i = 0; i < 2; i++) {
        out_file *o = &w->file[i];
        /* After a rename this finds nothing; else it drops the half. */
        if (o->tmp != NULL)
            unlink(o->tmp);
        free(o->name);
        free(o->path);
        free(o->tmp);
    }
    ok = w->err == 0;
    if (keep && !ok) {
        if (w->err == ENOMEM && w->err_what != NULL &&
            strcmp(w->err_what, "out of memory") == 0)
            fprintf(stderr, "%s: error: out of memory\n", ACC_NAME);
        else
            fprintf(stderr, "%s: error: %s: %s\n", ACC_NAME,
                    w->err_what ? w->err_what : "cannot write",
                    strerror(w->err));
    }
    free(w->err_what);
    memset(w, 0, sizeof(*w));
    return ok;
}

static bool emit_depfile(const cli *c, const char *input, const acc_result *r)
{
    if (c->graph) {
        /* The graph's own depfile, NAME.actor.dot.d, so that it and the
         * C's NAME.actor.d can sit in one folder. */
        char *g = path_join(c->out_dir, r->graph_name);
        size_t n = g != NULL ? strlen(g) + 3 : 0;
        char *d = g != NULL ? malloc(n) : NULL;
        bool ok = d != NULL;
        if (!ok)
            fprintf(stderr, "%s: error: out of memory\n", ACC_NAME);
        else
            snprintf(d, n, "%s.d", g);
        ok = ok && write_depfile(c, input, r, g, NULL, d);
        free(g);
        free(d);
        return ok;
    }
    char *h = path_join(c->out_dir, r->header_name);
    char *s = path_join(c->out_dir, r->source_name);
    char *base = h ? strdup(h) : NULL;
    bool ok = h != NULL && s != NULL && base != NULL;
    if (!ok) {
        fprintf(stderr, "%s: error: out of memory\n", ACC_NAME);
    } else {
        base[strlen(base) - 1] = 'd';       /* NAME.actor.h -> .d */
        ok = write_depfile(c, input, r, h, s, base);
    }
    free(h);
    free(s);
    free(base);
    return ok;
}

int main(int argc, char **argv)
{
    cli c;
    memset(&c, 0, sizeof(c));
    int rc = parse_args(&c, argc, argv);
    if (rc >= 0)
        return rc;

    acc_options opt;
    acc_options_init(&opt);
    opt.include_dirs = c.includes;
    opt.include_dir_count = c.include_count;
    opt.no_warnings = c.no_warnings;
    opt.warn_on = c.warn_on;
    opt.warn_off = c.warn_off;
    opt.warn_error = c.warn_error;
    opt.warn_no_error = c.warn_no_error;
    opt.warn_all_errors = c.warn_all_errors;
    opt.graph = c.graph;

    int errors = 0;
    rc = 0;
    for (size_t i = 0; i < c.input_count && errors < ACC_MAX_ERRORS; i++) {
        const char *input = c.inputs[i];
        char *text;
        size_t len;
        int err = acc_read_file(input, &text, &len);
        if (err != 0) {
            fprintf(stderr, "%s: error: cannot read '%s': %s\n", ACC_NAME,
                    input, strerror(err));
            rc = 2;
            continue;
        }
        bool is_stdin = strcmp(input, "-") == 0;
        opt.name_from_module = is_stdin;
        opt.max_errors = ACC_MAX_ERRORS - errors;

        acc_result r;
        writer w = { .c = &c };
        opt.write = writer_put;
        opt.write_arg = &w;
        opt.in_place = true;            /* acc_read_file ends it in a NUL */
        acc_compile_buffer(is_stdin ? "<stdin>" : input, text, len, &opt, &r);
        free(text);
        fwrite(r.diagnostics, 1, r.diagnostics_len, stderr);
        errors += r.errors;
        bool ok = writer_finish(&w, r.errors == 0) && r.errors == 0;
        if (ok && c.depfile)
            ok = emit_depfile(&c, input, &r);
        if (!ok)
            rc = rc ? rc : 1;
        acc_result_free(&r);
    }
    return rc;
}
