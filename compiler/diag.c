/*
 * diag.c — diagnostics in the GNU form, with the source line and a caret:
 *
 *     bad.actor:3:19: error: expected ',' or ')', found ';'
 *         3 |     on ping(u64 n;
 *           |                  ^
 *
 * Lines and columns are 1-based; a column counts bytes. The caret line
 * repeats the tabs of the source line so that it lines up in a terminal,
 * and `~` underlines the rest of the span.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "acc.h"

typedef struct line_info {
    uint32_t number, col;
    uint32_t start, end;    /* the line's text, without the newline */
} line_info;

uint32_t acc_bom_len(const acc_file *f)
{
    return f->len >= 3 && memcmp(f->src, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
}

static line_info locate(acc_ctx *cx, const acc_file *f, uint32_t off)
{
    /* The first line starts after a byte order mark: it is not shown,
     * and columns count from the first character after it. */
    uint32_t bom = acc_bom_len(f);
    line_info li = { 1, 1, bom, 0 };
    uint32_t from = 0;
    if (off > f->len)
        off = f->len;
    if (off < bom)
        off = bom;
    /* On from the last diagnostic's place when this one is further on in
     * the same file (as a run of warnings is). */
    if (cx->line_file == f && cx->line_off <= off) {
        from = cx->line_off;
        li.number = cx->line_number;
        li.start = cx->line_start;
    }
    for (uint32_t i = from; i < off; i++) {
        if (f->src[i] == '\n') {
            li.number++;
            li.start = i + 1;
        }
    }
    cx->line_file = f;
    cx->line_off = off;
    cx->line_number = li.number;
    cx->line_start = li.start;
    li.col = off - li.start + 1;
    li.end = li.start;
    while (li.end < f->len && f->src[li.end] != '\n')
        li.end++;
    if (li.end > li.start && f->src[li.end - 1] == '\r')
        li.end--;
    return li;
}

/* Length of the valid UTF-8 sequence at p (1 for ASCII), or 0. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
    size_t n;
    if (p[0] < 0x80)
        return 1;
    else if (p[0] >= 0xc2 && p[0] <= 0xdf)
        n = 2;
    else if (p[0] >= 0xe0 && p[0] <= 0xef)
        n = 3;
    else if (p[0] >= 0xf0 && p[0] <= 0xf4)
        n = 4;
    else
        return 0;
    if ((size_t)(end - p) < n)
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    return n;
}

/* The source line as shown: one character per source character, with
 * control characters as spaces and invalid UTF-8 as '?'. `caret` gets the
 * padding up to `col` (tabs kept) and `~` under the rest of the span. */
static void quote_line(acc_ctx *cx, const acc_file *f, const line_info *li,
                       acc_loc at)
{
    const unsigned char *src = (const unsigned char *)f->src;
    const unsigned char *end = src + li->end;
    acc_buf *b = &cx->diags;
    bool blank = true;
    for (uint32_t i = li->start; i < li->end; i++)
        if (src[i] != ' ' && src[i] != '\t')
            blank = false;
    if (blank)
        return;

    char num[16];
    int w = snprintf(num, sizeof(num), "%5u", (unsigned)li->number);
    acc_buf_printf(b, "%s | ", num);
    for (const unsigned char *p = src + li->start; p < end;) {
        size_t n = utf8_len(p, end);
        if (n == 0)
            acc_buf_putc(b, '?');
        else if (n == 1 && ((*p < 0x20 && *p != '\t') || *p == 0x7f))
            acc_buf_putc(b, ' ');
        else
            acc_buf_put(b, (const char *)p, n);
        p += n ? n : 1;
    }
    acc_buf_printf(b, "\n%*s | ", w, "");

    const unsigned char *caret = src + at.off;
    const unsigned char *stop = src + at.off + at.len;
    if (stop > end)
        stop = end;
    for (const unsigned char *p = src + li->start; p < caret && p < end;) {
        size_t n = utf8_len(p, end);
        acc_buf_putc(b, *p == '\t' ? '\t' : ' ');
        p += n ? n : 1;
    }
    acc_buf_putc(b, '^');
    if (caret < end) {
        size_t n = utf8_len(caret, end);
        for (const unsigned char *p = caret + (n ? n : 1); p < stop;) {
            n = utf8_len(p, end);
            acc_buf_putc(b, '~');
            p += n ? n : 1;
        }
    }
    acc_buf_putc(b, '\n');
}

/* `tag`, when not NULL, follows the message in brackets: the option that
 * controls a warning ("-Wunused-import"), as gcc shows it. */
static void emit_tagged(acc_ctx *cx, const acc_file *f, acc_loc at,
                        const char *kind, const char *tag, const char *fmt,
                        va_list ap) ACC_PRINTF(6, 0);

static void emit(acc_ctx *cx, const acc_file *f, acc_loc at, const char *kind,
                 const char *fmt, va_list ap) ACC_PRINTF(5, 0);

static void emit(acc_ctx *cx, const acc_file *f, acc_loc at, const char *kind,
                 const char *fmt, va_list ap)
{
    emit_tagged(cx, f, at, kind, NULL, fmt, ap);
}

static void emit_tagged(acc_ctx *cx, const acc_file *f, acc_loc at,
                        const char *kind, const char *tag, const char *fmt,
                        va_list ap)
{
    if (at.off > f->len)
        at.off = f->len;
    if (at.len > f->len - at.off)
        at.len = f->len - at.off;
    line_info li = locate(cx, f, at.off);
    acc_buf_printf(&cx->diags, "%s:%u:%u: %s: ", f->filename,
                   (unsigned)li.number, (unsigned)li.col, kind);
    char msg[1024];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    acc_buf_puts(&cx->diags, msg);
    if (tag != NULL)
        acc_buf_printf(&cx->diags, " [%s]", tag);
    acc_buf_putc(&cx->diags, '\n');
    quote_line(cx, f, &li, at);
}

/* Counts an error; false when it must not be shown (over the cap). */
static bool admit_error(acc_ctx *cx)
{
    if (cx->stopped) {
        cx->muted = true;
        return false;
    }
    cx->muted = false;
    cx->errors++;
    if (cx->errors >= cx->max_errors)
        cx->stopped = true;
    return true;
}

void acc_verror(acc_ctx *cx, const acc_file *f, acc_loc at,
                const char *fmt, va_list ap)
{
    if (admit_error(cx))
        emit(cx, f, at, "error", fmt, ap);
}

void acc_vnote(acc_ctx *cx, const acc_file *f, acc_loc at,
               const char *fmt, va_list ap)
{
    if (!cx->muted)
        emit(cx, f, at, "note", fmt, ap);
}

void acc_error(acc_ctx *cx, const acc_file *f, acc_loc at,
               const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    acc_verror(cx, f, at, fmt, ap);
    va_end(ap);
}

void acc_note(acc_ctx *cx, const acc_file *f, acc_loc at,
              const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    acc_vnote(cx, f, at, fmt, ap);
    va_end(ap);
}

/* ---- warnings, by name ---------------------------------------------------- */

static const struct {
    const char *name;
    bool on;                /* shown when no option names it */
    const char *help;
} warnings[ACC_W_COUNT] = {
    [ACC_W_UNUSED_IMPORT] = { "unused-import", true,
                              "an import nothing in the file names" },
    /* Off by default: an actor that main spawns and drives is named by
     * no ref<>, and that is the common pattern, not a mistake. */
    [ACC_W_UNREFERENCED_ACTOR] = { "unreferenced-actor", false,
                                   "an actor with messages that no ref<> "
                                   "names" },
};

const char *acc_warning_name(int id)
{
    return id >= 0 && id < ACC_W_COUNT ? warnings[id].name : NULL;
}

bool acc_warning_default(int id)
{
    return id >= 0 && id < ACC_W_COUNT && warnings[id].on;
}

const char *acc_warning_help(int id)
{
    return id >= 0 && id < ACC_W_COUNT ? warnings[id].help : NULL;
}

int acc_warning_lookup(const char *name, size_t len)
{
    for (int i = 0; i < ACC_W_COUNT; i++)
        if (strlen(warnings[i].name) == len &&
            memcmp(warnings[i].name, name, len) == 0)
            return i;
    return -1;
}

void acc_warning(acc_ctx *cx, acc_warning_id id, const acc_file *f,
                 acc_loc at, const char *fmt, ...)
{
    const acc_options *o = cx->opt;
    unsigned bit = 1u << id;
    bool on = warnings[id].on, as_error = false;
    if (o != NULL) {
        on = (on || (o->warn_on & bit) || (o->warn_error & bit)) &&
             !(o->warn_off & bit);
        as_error = (o->warn_error & bit) ||
                   (o->warn_all_errors && !(o->warn_no_error & bit));
    }
    if (cx->no_warnings || !on)
        return;
    char tag[64];
    snprintf(tag, sizeof(tag), "-W%s%s", as_error ? "error=" : "",
             warnings[id].name);
    va_list ap;
    va_start(ap, fmt);
    if (as_error) {
        /* An error like any other: counted, capped, and no output. */
        if (admit_error(cx))
            emit_tagged(cx, f, at, "error", tag, fmt, ap);
    } else if (!cx->stopped) {
        cx->warnings++;
        cx->muted = false;
        emit_tagged(cx, f, at, "warning", tag, fmt, ap);
    }
    va_end(ap);
}

void acc_error_file(acc_ctx *cx, const char *fmt, ...)
{
    if (!admit_error(cx))
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    acc_buf_printf(&cx->diags, "%s: error: %s\n", cx->filename, msg);
}

void acc_diag_finish(acc_ctx *cx)
{
    if (cx->stopped)
        acc_buf_printf(&cx->diags,
                       "%s: note: too many errors; stopped after %d\n",
                       cx->filename, cx->errors);
}
