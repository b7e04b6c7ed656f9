/*
 * gen_util.c — what the header and source generators share: the banner,
 * the C spelling of names and types, and doc comments.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "acc.h"

/* Bytes of a name taken from outside (a file name) that could break the
 * comment they are put in are shown as '?'. */
static void put_sanitized(acc_buf *b, const char *s)
{
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        bool bad = c < 0x20 || c == 0x7f || (s[0] == '*' && s[1] == '/');
        acc_buf_putc(b, bad ? '?' : *s);
    }
}

void acc_gen_banner(acc_gen *g)
{
    /* Assembled from parts, so that the phrase appears in generated files
     * only (tools look for it to recognise them). */
    acc_buf_printf(g->out, "/* %s by %s %s from ", "generated", ACC_NAME,
                   ACC_VERSION);
    put_sanitized(g->out, g->input_name);
    acc_buf_printf(g->out, " \xe2\x80\x94 do not %s */\n", "edit");
}

static const char *const scalar_c[] = {
    [ACC_BOOL] = "bool",
    [ACC_I8] = "int8_t", [ACC_I16] = "int16_t",
    [ACC_I32] = "int32_t", [ACC_I64] = "int64_t",
    [ACC_U8] = "uint8_t", [ACC_U16] = "uint16_t",
    [ACC_U32] = "uint32_t", [ACC_U64] = "uint64_t",
    [ACC_F32] = "float", [ACC_F64] = "double",
    [ACC_STRING] = "ac_string", [ACC_BYTES] = "ac_bytes",
    [ACC_ADDR] = "ac_addr",
};

static const char *const scalar_idl[] = {
    [ACC_BOOL] = "bool",
    [ACC_I8] = "i8", [ACC_I16] = "i16", [ACC_I32] = "i32", [ACC_I64] = "i64",
    [ACC_U8] = "u8", [ACC_U16] = "u16", [ACC_U32] = "u32", [ACC_U64] = "u64",
    [ACC_F32] = "f32", [ACC_F64] = "f64",
    [ACC_STRING] = "string", [ACC_BYTES] = "bytes", [ACC_ADDR] = "addr",
};

const char *acc_gen_field(acc_gen *g, const acc_field *f)
{
    bool kw = acc_c_keyword(f->name.s, f->name.len) != NULL;
    return acc_aprintf(&g->cx->arena, "%.*s%s", (int)f->name.len, f->name.s,
                       kw ? "_" : "");
}

const char *acc_gen_msg_member(acc_gen *g, const acc_message *m)
{
    bool kw = acc_c_keyword(m->name.s, m->name.len) != NULL;
    return acc_aprintf(&g->cx->arena, "%.*s%s", (int)m->name.len, m->name.s,
                       kw ? "_" : "");
}

const char *acc_gen_behaviour_const(acc_gen *g, const acc_behaviour *b)
{
    const acc_actor *a = b->actor;
    return acc_aprintf(&g->cx->arena, "%s_BEHAVIOUR_%.*s",
                       acc_actor_cstr(g, a, ACC_A_STATE), (int)b->name.len,
                       b->name.s);
}

const char *acc_gen_behaviour_handler(acc_gen *g, const acc_behaviour *b,
                                      const acc_message *m)
{
    return acc_aprintf(&g->cx->arena, "%s_%.*s_on_%.*s",
                       acc_actor_cstr(g, b->actor, ACC_A_STATE),
                       (int)b->name.len, b->name.s, (int)m->name.len,
                       m->name.s);
}

bool acc_gen_has_state(const acc_actor *a)
{
    return a->state != NULL || a->behaviours != NULL;
}

const char *acc_gen_ctype(acc_gen *g, const acc_type *t)
{
    switch (t->kind) {
    case ACC_REF:
        return acc_actor_cstr(g, t->actor, ACC_A_REF);
    case ACC_NAMED:
        return acc_decl_cstr(g, t->decl, ACC_D_TYPE);
    case ACC_ARRAY:
        return acc_gen_ctype(g, t->elem);
    case ACC_SEQ: {
        const acc_type *e = t->elem;
        if (e->kind == ACC_REF)
            return acc_actor_cstr(g, e->actor, ACC_A_REF_SEQ);
        if (e->kind == ACC_NAMED)
            return acc_decl_cstr(g, e->decl, ACC_D_SEQ);
        return acc_aprintf(&g->cx->arena, "ac_%s_seq", scalar_idl[e->kind]);
    }
    case ACC_PTR:
        if (t->target.len == 0)
            return "void *";
        return acc_aprintf(&g->cx->arena, "struct %.*s *",
                           (int)t->target.len, t->target.s);
    default:
        return scalar_c[t->kind];
    }
}

const char *acc_gen_cdecl(acc_gen *g, const acc_type *t, const char *name,
                          bool param)
{
    if (t->kind == ACC_ARRAY)
        return acc_aprintf(&g->cx->arena, "%s%s %s[%u]", param ? "const " : "",
                           acc_gen_ctype(g, t), name, (unsigned)t->size);
    const char *c = acc_gen_ctype(g, t);
    /* "void *p", not "void * p". */
    return acc_aprintf(&g->cx->arena, "%s%s%s", c,
                       c[strlen(c) - 1] == '*' ? "" : " ", name);
}

/* A struct's answer is the one the check pass worked out for it once
 * (acc_decl.has_var): asking again along every path that leads to it
 * would take time exponential in the nesting. */
bool acc_type_has_var(const acc_type *t)
{
    while (t->kind == ACC_ARRAY)
        t = t->elem;
    switch (t->kind) {
    case ACC_STRING: case ACC_BYTES: case ACC_SEQ:
        return true;
    case ACC_NAMED:
        return t->decl != NULL && t->decl->kind == ACC_STRUCT &&
               t->decl->has_var;
    default:
        return false;
    }
}

acc_decl *acc_field_value_struct(const acc_field *f, const acc_module *mod)
{
    const acc_type *t = &f->type;
    while (t->kind == ACC_ARRAY)
        t = t->elem;
    if (t->kind != ACC_NAMED || t->decl == NULL || t->decl->mod != mod ||
        t->decl->kind != ACC_STRUCT)
        return NULL;
    return t->decl;
}

bool acc_fields_have_var(const acc_field *f)
{
    for (; f != NULL; f = f->next)
        if (acc_type_has_var(&f->type))
            return true;
    return false;
}

/* One line of doc text, made safe inside a block comment: no comment
 * delimiters, no control characters, no trigraphs. */
static void put_doc_line(acc_buf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char next = i + 1 < n ? s[i + 1] : '\0';
        if (c < 0x20 || c == 0x7f) {
            acc_buf_putc(b, ' ');
        } else if ((c == '*' && next == '/') || (c == '/' && next == '*')) {
            acc_buf_putc(b, (char)c);
            acc_buf_putc(b, ' ');
        } else if (c == '?' && next == '?') {
            acc_buf_puts(b, "? ");
        } else {
            acc_buf_putc(b, (char)c);
        }
    }
}

void acc_gen_doc(acc_gen *g, const acc_doc *doc, int indent)
{
    /* Blank lines at either end are dropped. */
    const acc_doc *first = doc, *last = NULL;
    while (first != NULL && first->text.len == 0)
        first = first->next;
    int lines = 0;
    for (const acc_doc *d = first; d != NULL; d = d->next) {
        if (d->text.len > 0)
            last = d;
    }
    for (const acc_doc *d = first; last != NULL && d != last->next; d = d->next)
        lines++;
    if (lines == 0)
        return;

    const char *src = g->mod->file.src;
    if (lines == 1) {
        acc_buf_printf(g->out, "%*s/** ", indent, "");
        put_doc_line(g->out, src + first->text.off, first->text.len);
        acc_buf_puts(g->out, " */\n");
        return;
    }
    acc_buf_printf(g->out, "%*s/**\n", indent, "");
    for (const acc_doc *d = first; d != last->next; d = d->next) {
        acc_buf_printf(g->out, "%*s *%s", indent, "", d->text.len ? " " : "");
        put_doc_line(g->out, src + d->text.off, d->text.len);
        acc_buf_putc(g->out, '\n');
    }
    acc_buf_printf(g->out, "%*s */\n", indent, "");
}

void acc_gen_section(acc_gen *g, const char *what, const acc_name *n)
{
    int used = (int)(strlen(what) + n->len) + 10;
    acc_buf_printf(g->out, "\n/* ---- %s %.*s ", what, (int)n->len, n->s);
    for (int i = used; i < 76; i++)
        acc_buf_putc(g->out, '-');
    acc_buf_puts(g->out, " */\n\n");
}

/* Splits `line` (one line of code) after each ", " that lets it fit in 79
 * columns, continuing under the character after its first '(', or 8 columns
 * in when that would not fit either. */
static void put_wrapped(acc_buf *out, const char *line)
{
    enum { WIDTH = 79 };
    size_t len = strlen(line);
    const char *paren = strchr(line, '(');
    if (len <= WIDTH || paren == NULL || strstr(line, ", ") == NULL ||
        strchr(line, '\n') != NULL) {
        acc_buf_puts(out, line);
        return;
    }
    size_t indent = (size_t)(paren - line) + 1, widest = 0;
    for (const char *c = strstr(line, ", "); c != NULL;) {
        const char *next = strstr(c + 2, ", ");
        size_t n = next ? (size_t)(next - c) - 1 : strlen(c + 2);
        widest = n > widest ? n : widest;
        c = next;
    }
    if (indent + widest > WIDTH)
        indent = strspn(line, " ") + 8;

    size_t col = 0;
    const char *seg = line;
    while (*seg != '\0') {
        const char *comma = strstr(seg, ", ");
        size_t n = comma ? (size_t)(comma - seg) + 1 : strlen(seg);
        if (seg != line) {
            if (col + 1 + n > WIDTH) {
                acc_buf_printf(out, "\n%*s", (int)indent, "");
                col = indent;
            } else {
                acc_buf_putc(out, ' ');
                col++;
            }
        }
        acc_buf_put(out, seg, n);
        col += n;
        seg += n;
        if (*seg == ' ')
            seg++;
    }
}

void acc_gen_line(acc_gen *g, const char *fmt, ...)
{
    /* Formatted once: into `small` when it fits, else into the arena. */
    char small[512], *line = small;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if ((size_t)n >= sizeof(small)) {
        line = acc_alloc(&g->cx->arena, (size_t)n + 1);
        va_start(ap, fmt);
        vsnprintf(line, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    put_wrapped(g->out, line);
    acc_buf_putc(g->out, '\n');
}

/* Built by appending (acc_str): a fresh copy of the list so far for each
 * field would be quadratic in the fields. */
const char *acc_gen_params(acc_gen *g, const char *head, const acc_field *f,
                           const char *extra)
{
    acc_str s = { NULL, 0, 0, &g->cx->arena };
    acc_str_printf(&s, "%s", head);
    for (; f != NULL; f = f->next) {
        acc_str_printf(&s, ", %s", acc_gen_cdecl(g, &f->type,
                       acc_gen_field(g, f), true));
    }
    acc_str_printf(&s, "%s)", extra);
    return s.data;
}

/* The plain send and the checked one take the same parameters. */
static const char *send_decl(acc_gen *g, const acc_actor *a,
                             const acc_message *m, acc_msg_cname k)
{
    const char *head = acc_aprintf(&g->cx->arena, "int %s(ac_ctx *cx, %s to",
                                   acc_msg_cstr(g, m, k),
                                   acc_actor_cstr(g, a, ACC_A_REF));
    return acc_gen_params(g, head, m->fields, "");
}

const char *acc_gen_send_decl(acc_gen *g, const acc_actor *a,
                              const acc_message *m)
{
    return send_decl(g, a, m, ACC_M_SEND);
}

const char *acc_gen_send_checked_decl(acc_gen *g, const acc_actor *a,
                                      const acc_message *m)
{
    return send_decl(g, a, m, ACC_M_SEND_CHECKED);
}

/* The send-by-struct and the forward take the message's struct. */
static const char *msg_ptr_decl(acc_gen *g, const acc_actor *a,
                                const acc_message *m, acc_msg_cname k)
{
    return acc_aprintf(&g->cx->arena, "int %s(ac_ctx *cx, %s to, const %s "
                       "*msg)", acc_msg_cstr(g, m, k),
                       acc_actor_cstr(g, a, ACC_A_REF),
                       acc_msg_cstr(g, m, ACC_M_STRUCT));
}

const char *acc_gen_send_msg_decl(acc_gen *g, const acc_actor *a,
                                  const acc_message *m)
{
    return msg_ptr_decl(g, a, m, ACC_M_SEND_MSG);
}

const char *acc_gen_reply_decl(acc_gen *g, const acc_message *m)
{
    const char *head = acc_aprintf(&g->cx->arena, "int %s(ac_ctx *cx, const "
                                   "ac_reply_to *to",
                                   acc_msg_cstr(g, m, ACC_M_REPLY));
    return acc_gen_params(g, head, m->reply, "");
}

const char *acc_gen_ask_decl(acc_gen *g, const acc_actor *a,
                             const acc_message *m, bool wait)
{
    acc_arena *ar = &g->cx->arena;
    const char *head = acc_aprintf(ar, "int %s(ac_ctx *cx, %s to",
                                   acc_msg_cstr(g, m, wait ? ACC_M_ASK_WAIT
                                                         : ACC_M_ASK),
                                   acc_actor_cstr(g, a, ACC_A_REF));
    const char *extra = wait
        ? acc_aprintf(ar, ", int timeout_ms, %s **out",
                      acc_msg_cstr(g, m, ACC_M_REPLY_STRUCT))
        : acc_aprintf(ar, ", uint32_t timeout_ms, %s fn, void *arg",
                      acc_msg_cstr(g, m, ACC_M_FN));
    return acc_gen_params(g, head, m->fields, extra);
}

const char *acc_gen_forward_decl(acc_gen *g, const acc_message *m)
{
    return msg_ptr_decl(g, m->actor, m, ACC_M_FORWARD);
}

/* Spelled from the asker's prefix and the target's and request's names:
 * a pair of owners, which the check's table of names (one owner a row)
 * does not hold; docs/IDL.md says which user names could meet them. */
const char *acc_gen_typed_ask_name(acc_gen *g, const acc_actor *asker,
                                   const acc_message *m, bool fn_type)
{
    return acc_aprintf(&g->cx->arena, "%s_ask_%.*s_%.*s%s",
                       acc_actor_cstr(g, asker, ACC_A_STATE),
                       (int)m->actor->name.len, m->actor->name.s,
                       (int)m->name.len, m->name.s, fn_type ? "_fn" : "");
}

const char *acc_gen_typed_ask_decl(acc_gen *g, const acc_actor *asker,
                                   const acc_message *m)
{
    acc_arena *ar = &g->cx->arena;
    const char *head = acc_aprintf(ar, "int %s(ac_ctx *cx, %s to",
                                   acc_gen_typed_ask_name(g, asker, m, false),
                                   acc_actor_cstr(g, m->actor, ACC_A_REF));
    const char *extra = acc_aprintf(ar, ", uint32_t timeout_ms, %s fn, const void "
                                    "*ctx, size_t ctx_size",
                                    acc_gen_typed_ask_name(g, asker, m, true));
    return acc_gen_params(g, head, m->fields, extra);
}

const char *acc_gen_spawn_decl(acc_gen *g, const acc_actor *a, bool opts)
{
    const char *fn = acc_actor_cstr(g, a,
                                    opts ? ACC_A_SPAWN_OPTS : ACC_A_SPAWN);
    const char *head = acc_aprintf(&g->cx->arena, "int %s(ac_ctx *cx, %s%s "
                                   "*out", fn, opts ? "const ac_spawn_options "
                                   "*opts, " : "",
                                   acc_actor_cstr(g, a, ACC_A_REF));
    return acc_gen_params(g, head, a->start != NULL ? a->start->fields : NULL,
                          "");
}

const char *acc_gen_publish_decl(acc_gen *g, const acc_message *m)
{
    const char *head = acc_aprintf(&g->cx->arena, "int %s(ac_ctx *cx, const "
                                   "char *group",
                                   acc_msg_cstr(g, m, ACC_M_PUBLISH));
    return acc_gen_params(g, head, m->fields, "");
}

const char *acc_gen_timer_decl(acc_gen *g, const acc_actor *a,
                               const acc_message *m, bool every)
{
    const char *fn = acc_msg_cstr(g, m,
                                  every ? ACC_M_SEND_EVERY : ACC_M_SEND_AFTER);
    const char *head = acc_aprintf(&g->cx->arena, "int %s(ac_ctx *cx, %s to, "
                                   "uint32_t %s", fn,
                                   acc_actor_cstr(g, a, ACC_A_REF),
                                   every ? "period_ms" : "delay_ms");
    return acc_gen_params(g, head, m->fields, ", ac_timer_id *timer_id");
}
