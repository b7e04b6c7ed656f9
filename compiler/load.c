/*
 * load.c — the load pass: parses the input and, depth first, every module
 * it imports, each once. An import is looked up in the importing file's
 * folder, then in each -I folder; a bad path, a missing or unreadable
 * file, a cycle and a second import of one file are reported at the
 * import. The graph it leaves (acc_graph) is all the later passes read:
 * nothing is checked here, so no pass turns back to an earlier file.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "acc.h"

typedef struct loader {
    acc_ctx *cx;
    acc_graph *graph;
    acc_map loaded;         /* canonical path -> acc_module */
    acc_module *opened_tail, *order_tail;
    acc_module *stack[64];  /* the chain of imports being loaded */
    int depth;
} loader;

static const char *dir_of(acc_arena *a, const char *path)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        return ".";
    if (slash == path)
        return "/";
    return acc_strndup(a, path, (size_t)(slash - path));
}

static const char *canonical(acc_arena *a, const char *path)
{
    char *r = realpath(path, NULL);
    if (r == NULL)
        return NULL;
    char *c = acc_strndup(a, r, strlen(r));
    free(r);
    return c;
}

static bool is_regular(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Import paths go into `#include "PATH.h"`: a plain relative path. */
static const char *bad_import_path(const char *p)
{
    if (*p == '\0')
        return "it is empty";
    if (*p == '/')
        return "it is absolute (imports are found relative to the importing "
               "file's folder, then to each -I folder)";
    for (const char *c = p; *c != '\0'; c++) {
        bool ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                  (*c >= '0' && *c <= '9') || *c == '_' || *c == '-' ||
                  *c == '.' || *c == '/' || *c == '+';
        if (!ok)
            return "it may contain only letters, digits and '_', '-', '.', "
                   "'+', '/'";
    }
    return NULL;
}

static void load(loader *ld, acc_module *mod);

/* The file an import names: its path as opened, or NULL (reported). */
static const char *find(loader *ld, acc_module *mod, acc_import *im)
{
    acc_ctx *cx = ld->cx;
    acc_arena *ar = &cx->arena;
    const acc_options *opt = cx->opt;
    const char *first = acc_aprintf(ar, "%s/%s", mod->file.dir, im->path);
    if (is_regular(first))
        return strcmp(mod->file.dir, ".") == 0 ? im->path : first;
    for (size_t i = 0; i < opt->include_dir_count; i++) {
        const char *p = acc_aprintf(ar, "%s/%s", opt->include_dirs[i],
                                    im->path);
        if (is_regular(p))
            return p;
    }
    acc_error(cx, &mod->file, im->at, "cannot find \"%s\" (looked in '%s'%s)",
              im->path, mod->file.dir,
              opt->include_dir_count ? " and the -I folders" : "");
    return NULL;
}

/* Whether importing `other` (already known) from `mod` is an error, which
 * it reports: a cycle, or a second import of the same file. */
static bool bad_reimport(loader *ld, acc_module *mod, acc_import *im,
                         acc_module *other, const char *found)
{
    acc_ctx *cx = ld->cx;
    if (other->loading) {
        acc_buf chain = { .oom = &cx->oom };
        int at = 0;
        while (at < ld->depth && ld->stack[at] != other)
            at++;
        for (int i = at; i < ld->depth; i++)
            acc_buf_printf(&chain, "%s -> ",
                           acc_basename(ld->stack[i]->file.filename));
        acc_buf_printf(&chain, "%s", acc_basename(other->file.filename));
        acc_error(cx, &mod->file, im->at, "import cycle: %s", chain.data);
        acc_buf_free(&chain);
        return true;
    }
    for (acc_import *p = mod->imports; p != im; p = p->next) {
        if (p->mod == other) {
            acc_error(cx, &mod->file, im->at, "duplicate import of '%s'",
                      found);
            acc_note(cx, &mod->file, p->at, "'%s' was first imported here",
                     p->path);
            return true;
        }
    }
    return false;
}

/* Reads the file of a new import into a module of its own; NULL when it
 * cannot (reported). */
static acc_module *open_module(loader *ld, acc_module *mod, acc_import *im,
                               const char *found, const char *canon)
{
    acc_ctx *cx = ld->cx;
    acc_arena *ar = &cx->arena;
    if (ld->depth >= (int)(sizeof(ld->stack) / sizeof(ld->stack[0]))) {
        acc_error(cx, &mod->file, im->at, "imports nested too deeply");
        return NULL;
    }
    char *text;
    size_t len;
    int err = acc_read_file(found, &text, &len);
    if (err != 0) {
        acc_error(cx, &mod->file, im->at, "cannot read '%s': %s", found,
                  strerror(err));
        return NULL;
    }
    if (len > ACC_MAX_INPUT - cx->source_bytes) {
        free(text);
        acc_error(cx, &mod->file, im->at, "'%s' is too large: %zu bytes, "
                  "and with the %zu already read more than the %zu (%zu "
                  "MiB) a compilation reads, with its imports", found, len,
                  cx->source_bytes, ACC_MAX_INPUT, ACC_MAX_INPUT >> 20);
        return NULL;
    }
    cx->source_bytes += len;
    acc_module *m = acc_alloc(ar, sizeof(*m));
    char *src = acc_alloc(ar, len + 1);
    memcpy(src, text, len);
    free(text);
    m->file.filename = found;
    m->file.path = found;
    m->file.dir = dir_of(ar, found);
    m->file.src = src;
    m->file.len = (uint32_t)len;
    m->canon = canon;
    m->found = found;
    acc_map_put(&ld->loaded, canon, strlen(canon), m);
    if (ld->opened_tail != NULL)
        ld->opened_tail->next_opened = m;
    else
        ld->graph->opened = m;
    ld->opened_tail = m;
    return m;
}

/* Resolves one import of `mod`, loading its module the first time. */
static void resolve_import(loader *ld, acc_module *mod, acc_import *im)
{
    acc_ctx *cx = ld->cx;
    const char *why = bad_import_path(im->path);
    if (why != NULL) {
        acc_error(cx, &mod->file, im->at, "invalid import path \"%s\": %s",
                  im->path, why);
        return;
    }
    const char *found = find(ld, mod, im);
    if (found == NULL)
        return;
    const char *canon = canonical(&cx->arena, found);
    if (canon == NULL)
        canon = found;
    acc_module *m = acc_map_get(&ld->loaded, canon, strlen(canon));
    if (m != NULL) {
        if (!bad_reimport(ld, mod, im, m, found))
            im->mod = m;
        return;
    }
    m = open_module(ld, mod, im, found, canon);
    if (m != NULL) {
        im->mod = m;
        load(ld, m);
    }
}

/* Parses `mod` (already read), then loads its imports; a module whose
 * parse failed has no imports worth following. */
static void load(loader *ld, acc_module *mod)
{
    acc_ctx *cx = ld->cx;
    mod->loading = true;
    ld->stack[ld->depth++] = mod;
    int before = cx->errors;
    acc_parse(cx, mod);
    if (cx->errors == before && mod->has_name)
        for (acc_import *im = mod->imports; im != NULL && !cx->stopped;
             im = im->next)
            resolve_import(ld, mod, im);
    ld->depth--;
    mod->loading = false;
    mod->whole = cx->errors == 0;
    if (ld->order_tail != NULL)
        ld->order_tail->next_in_order = mod;
    else
        ld->graph->first = mod;
    ld->order_tail = mod;
}

void acc_load(acc_ctx *cx, acc_module *main, acc_graph *out)
{
    loader ld;
    memset(&ld, 0, sizeof(ld));
    memset(out, 0, sizeof(*out));
    ld.cx = cx;
    ld.graph = out;
    out->main = main;
    acc_map_init(&ld.loaded, &cx->arena);
    main->file.dir = strcmp(main->file.filename, "<stdin>") == 0
                         ? "." : dir_of(&cx->arena, main->file.filename);
    main->canon = canonical(&cx->arena, main->file.filename);
    if (main->canon != NULL)
        acc_map_put(&ld.loaded, main->canon, strlen(main->canon), main);
    load(&ld, main);
}
