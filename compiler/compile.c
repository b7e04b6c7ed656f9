/*
 * compile.c — the library's entry points: runs the passes over one input
 * (load, which parses; check; the two generators, or the graph's with
 * acc_options.graph), each to the end before the next, inside the
 * out-of-memory recovery point, and hands back the outputs and the
 * rendered diagnostics.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acc.h"

void acc_options_init(acc_options *opt)
{
    memset(opt, 0, sizeof(*opt));
    opt->max_errors = ACC_MAX_ERRORS;
}

const char *acc_basename(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash != NULL ? slash + 1 : path;
}

/* Reported when even the diagnostics cannot be allocated; never freed. */
static char oom_text[] = "actorc: error: out of memory\n";

static char *dup_or_null(const char *s)
{
    if (s == NULL)
        return NULL;
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p != NULL)
        memcpy(p, s, n);
    return p;
}

/* The output's base name must survive `#include "..."` and a comment. */
static bool usable_output_name(const char *s)
{
    if (*s == '\0')
        return false;
    for (; *s != '\0'; s++)
        if ((unsigned char)*s < 0x20 || *s == '"' || *s == '\\' ||
            *s == '/' || *s == 0x7f)
            return false;
    return true;
}

/* An output buffer's sink when the caller takes the code as it is made
 * (acc_options.write): the buffer's pieces, with the file's name. */
typedef struct out_sink {
    const acc_options *opt;
    const char *name;
} out_sink;

static void to_writer(void *arg, const char *data, size_t len)
{
    const out_sink *o = arg;
    o->opt->write(o->opt->write_arg, o->name, data, len);
}

/* Everything the compilation allocated on the heap, released together. */
typedef struct job {
    acc_ctx cx;
    acc_buf header, source;
    out_sink header_sink, source_sink;
    const char *graph_name;     /* with acc_options.graph: the one output */
} job;

static size_t output_cap(const acc_options *opt)
{
    return opt->max_output != 0 && opt->max_output < ACC_MAX_OUTPUT
               ? opt->max_output : ACC_MAX_OUTPUT;
}

/* The header, then the source. */
static void generate_c(job *j, const acc_module *mod, const acc_options *opt,
                       const char *base, acc_result *res)
{
    acc_ctx *cx = &j->cx;
    /* The cap is shared: the source gets what the header left. (A max of
     * 0 would mean no cap, hence at least 1, which the source's first
     * line is past.) */
    size_t cap = output_cap(opt);
    acc_gen g = { cx, mod, acc_basename(cx->filename), NULL, NULL };
    g.header_name = acc_aprintf(&cx->arena, "%s.h", base);
    const char *source_name = acc_aprintf(&cx->arena, "%s.c", base);
    if (opt->write != NULL) {
        j->header_sink = (out_sink){ opt, g.header_name };
        j->source_sink = (out_sink){ opt, source_name };
        j->header.sink = j->source.sink = to_writer;
        j->header.sink_arg = &j->header_sink;
        j->source.sink_arg = &j->source_sink;
    }
    g.out = &j->header;
    j->header.max = cap;
    acc_gen_header(&g);
    acc_buf_flush(&j->header);
    size_t header_len = acc_buf_total(&j->header);
    g.out = &j->source;
    j->source.max = cap > header_len ? cap - header_len : 1;
    acc_gen_source(&g);
    acc_buf_flush(&j->source);
    res->header_name = (char *)g.header_name;
    res->source_name = (char *)source_name;
}

/* NAME.actor.dot (acc_options.graph), in the header's buffer. False when
 * it could not be drawn (reported). */
static bool generate_graph(job *j, const acc_graph *graph,
                           const acc_options *opt, const char *base)
{
    acc_ctx *cx = &j->cx;
    acc_gen g = { cx, graph->main, acc_basename(cx->filename), NULL,
                  &j->header };
    j->graph_name = acc_aprintf(&cx->arena, "%s.dot", base);
    if (opt->write != NULL) {
        j->header_sink = (out_sink){ opt, j->graph_name };
        j->header.sink = to_writer;
        j->header.sink_arg = &j->header_sink;
    }
    j->header.max = output_cap(opt);
    if (!acc_gen_graph(&g, graph)) {
        acc_error_file(cx, "the actor system is too large to draw: its "
                       "actors reach through more fields than the graph "
                       "looks at (a struct counts once for each actor "
                       "that reaches it)");
        return false;
    }
    acc_buf_flush(&j->header);
    return true;
}

static void generate(job *j, const acc_graph *graph, const acc_options *opt,
                     acc_result *res)
{
    acc_ctx *cx = &j->cx;
    const acc_module *mod = graph->main;
    const char *base = opt->output_name;
    if (base == NULL && opt->name_from_module)
        base = acc_aprintf(&cx->arena, "%.*s.actor", (int)mod->name.len,
                           mod->name.s);
    else if (base == NULL)
        base = acc_basename(cx->filename);
    if (!usable_output_name(base)) {
        acc_error_file(cx, "'%s' cannot name the generated files", base);
        return;
    }

    if (opt->graph) {
        if (!generate_graph(j, graph, opt, base))
            return;
    } else {
        generate_c(j, mod, opt, base, res);
    }

    res->module = acc_strndup(&cx->arena, mod->name.s, mod->name.len);
    size_t n = 0;
    for (const acc_module *m = graph->opened; m != NULL; m = m->next_opened)
        n++;
    if (n > 0) {
        res->deps = calloc(n, sizeof(char *));
        if (res->deps == NULL)
            longjmp(cx->oom, 1);
        for (const acc_module *m = graph->opened; m != NULL;
             m = m->next_opened)
            if ((res->deps[res->dep_count] = dup_or_null(m->found)) != NULL)
                res->dep_count++;
            else
                longjmp(cx->oom, 1);
    }
}

/* The passes, under the out-of-memory recovery point. */
static void run(job *j, const char *text, size_t len, const acc_options *opt,
                acc_result *res)
{
    acc_ctx *cx = &j->cx;
    acc_buf_put(&cx->diags, "", 0);
    if (len > ACC_MAX_INPUT) {
        acc_error_file(cx, "the file is too large: %zu bytes, more than "
                       "the %zu (%zu MiB) a compilation reads, with its "
                       "imports", len, ACC_MAX_INPUT, ACC_MAX_INPUT >> 20);
    } else {
        cx->source_bytes = len;
        /* The lexer wants a NUL after the text: a copy has one, and text
         * read in place has its own. */
        const char *src = text;
        if (!opt->in_place) {
            char *copy = acc_alloc(&cx->arena, len + 1);
            memcpy(copy, text, len);
            src = copy;
        }
        acc_module *mod = acc_alloc(&cx->arena, sizeof(*mod));
        mod->file.filename = cx->filename;
        mod->file.path = cx->filename;
        mod->file.src = src;
        mod->file.len = (uint32_t)len;

        acc_graph graph;
        acc_load(cx, mod, &graph);
        acc_check(cx, &graph);
        if (cx->errors == 0)
            generate(j, &graph, opt, res);
    }
    acc_diag_finish(cx);
}

/* 0, or what the passes longjmp'd with: ACC_JMP_OOM when they ran out of
 * memory, ACC_JMP_LIMIT when the generated code outgrew its cap. */
static int guarded_run(job *j, const char *text, size_t len,
                       const acc_options *opt, acc_result *res)
{
    int why = setjmp(j->cx.oom);
    if (why != 0)
        return why;
    run(j, text, len, opt, res);
    return 0;
}

/* The generated code outgrew its cap: the error says why. */
static void report_output_limit(acc_ctx *cx, size_t cap)
{
    acc_error_file(cx, "the generated code would be larger than %zu "
                   "bytes (%zu MiB), the most one compilation makes: split "
                   "the definitions into modules that import each other",
                   cap, cap >> 20);
    acc_diag_finish(cx);
}

/* Reports the output limit under a recovery point of its own (reporting
 * allocates). 0, or ACC_JMP_OOM. */
static int guarded_report(job *j, size_t cap)
{
    if (setjmp(j->cx.oom) != 0)
        return ACC_JMP_OOM;
    report_output_limit(&j->cx, cap);
    return 0;
}

int acc_compile_buffer(const char *filename, const char *text, size_t len,
                       const acc_options *opt, acc_result *res)
{
    acc_options defaults;
    if (opt == NULL) {
        acc_options_init(&defaults);
        opt = &defaults;
    }
    memset(res, 0, sizeof(*res));

    job *j = calloc(1, sizeof(*j));
    if (j == NULL) {
        res->errors = 1;
        res->diagnostics = oom_text;
        res->diagnostics_len = strlen(oom_text);
        return 1;
    }
    acc_ctx *cx = &j->cx;
    cx->arena.oom = cx->diags.oom = j->header.oom = j->source.oom = &cx->oom;
    cx->filename = filename;
    cx->max_errors = opt->max_errors > 0 ? opt->max_errors : ACC_MAX_ERRORS;
    cx->no_warnings = opt->no_warnings;
    cx->opt = opt;

    int why = guarded_run(j, text, len, opt, res);
    if (why == ACC_JMP_LIMIT) {
        /* What was generated goes; the diagnostics so far stay. */
        acc_buf_free(&j->header);
        acc_buf_free(&j->source);
        res->module = res->header_name = res->source_name = NULL;
        why = guarded_report(j, output_cap(opt));
    }
    if (why != 0) {
        /* Out of memory: drop everything but the count. */
        cx->errors++;
        res->module = res->header_name = res->source_name = NULL;
        acc_buf_free(&cx->diags);
    }

    res->errors = cx->errors;
    res->warnings = cx->warnings;
    res->truncated = cx->stopped;
    if (cx->errors == 0 && res->module != NULL && opt->graph) {
        res->module = dup_or_null(res->module);
        res->graph_name = dup_or_null(j->graph_name);
        res->graph_len = acc_buf_total(&j->header);
        if (opt->write == NULL)
            res->graph = acc_buf_take(&j->header, &res->graph_len);
    } else if (cx->errors == 0 && res->module != NULL) {
        res->module = dup_or_null(res->module);
        res->header_name = dup_or_null(res->header_name);
        res->source_name = dup_or_null(res->source_name);
        res->header_len = acc_buf_total(&j->header);
        res->source_len = acc_buf_total(&j->source);
        if (opt->write == NULL) {
            res->header = acc_buf_take(&j->header, &res->header_len);
            res->source = acc_buf_take(&j->source, &res->source_len);
        }
    } else {
        res->module = res->header_name = res->source_name = NULL;
        for (size_t i = 0; i < res->dep_count; i++)
            free(res->deps[i]);
        free(res->deps);
        res->deps = NULL;
        res->dep_count = 0;
    }
    if (cx->diags.data != NULL)
        res->diagnostics = acc_buf_take(&cx->diags, &res->diagnostics_len);

    acc_buf_free(&j->header);
    acc_buf_free(&j->source);
    acc_buf_free(&cx->diags);
    acc_arena_free(&cx->arena);
    free(j);

    bool oom = res->diagnostics == NULL ||
               (res->errors == 0 && opt->graph &&
                (res->module == NULL || res->graph_name == NULL ||
                 (opt->write == NULL && res->graph == NULL))) ||
               (res->errors == 0 && !opt->graph &&
                (res->module == NULL || res->header_name == NULL ||
                 res->source_name == NULL ||
                 (opt->write == NULL &&
                  (res->header == NULL || res->source == NULL))));
    if (oom) {
        acc_result_free(res);
        res->errors = 1;
        res->diagnostics = oom_text;
        res->diagnostics_len = strlen(oom_text);
    }
    return res->errors > 0 ? 1 : 0;
}

int acc_compile_file(const char *path, const acc_options *opt,
                     acc_result *res)
{
    char *text;
    size_t len;
    int err = acc_read_file(path, &text, &len);
    if (err != 0) {
        char msg[1024];
        snprintf(msg, sizeof(msg), "%s: error: cannot read: %s\n", path,
                 strerror(err));
        memset(res, 0, sizeof(*res));
        res->errors = 1;
        res->diagnostics = dup_or_null(msg);
        if (res->diagnostics == NULL)
            res->diagnostics = oom_text;
        res->diagnostics_len = strlen(res->diagnostics);
        return 1;
    }
    acc_options in_place;
    if (opt != NULL)
        in_place = *opt;
    else
        acc_options_init(&in_place);
    in_place.in_place = true;           /* acc_read_file ends it in a NUL */
    int rc = acc_compile_buffer(strcmp(path, "-") == 0 ? "<stdin>" : path,
                                text, len, &in_place, res);
    free(text);
    return rc;
}

void acc_result_free(acc_result *res)
{
    for (size_t i = 0; i < res->dep_count; i++)
        free(res->deps[i]);
    free(res->deps);
    if (res->diagnostics != oom_text)
        free(res->diagnostics);
    free(res->module);
    free(res->header_name);
    free(res->source_name);
    free(res->header);
    free(res->source);
    free(res->graph_name);
    free(res->graph);
    memset(res, 0, sizeof(*res));
}

int acc_read_file(const char *path, char **text, size_t *len)
{
    bool is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (f == NULL)
        return errno ? errno : EIO;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    int err = buf == NULL ? ENOMEM : 0;
    while (err == 0) {
        if (cap - n < 2) {
            char *p = cap < SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
            if (p == NULL) {
                err = ENOMEM;
                break;
            }
            buf = p;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) {
            if (ferror(f))
                err = errno ? errno : EIO;
            break;
        }
    }
    if (!is_stdin)
        fclose(f);
    if (err != 0) {
        free(buf);
        return err;
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return 0;
}
