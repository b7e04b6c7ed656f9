/*
 * parse.c — drives the lexer into the lemon parser, turns the parser's
 * syntax errors into "expected X, found Y" diagnostics, and holds the AST
 * constructors the grammar actions call.
 */
#include <string.h>

#include "acc.h"
#include "parser.h"

void acc_parse(acc_ctx *cx, acc_module *mod)
{
    acc_parser ps = { cx, mod, { NULL, 0, 0, NULL } };
    acc_lexer lx;
    void *parser = acc_lemon_new(&cx->arena);

    acc_lex_init(&lx, cx);
    for (;;) {
        int code = acc_lex(&lx, &ps.tok);
        if (cx->stopped)
            break;
        acc_lemon_feed(parser, code, ps.tok, &ps);
        if (code == 0 || cx->stopped)
            break;
    }
}

/* ---- tokens ---------------------------------------------------------------- */

const char *acc_token_desc(int code)
{
    switch (code) {
    case 0: return "end of file";
    case TK_MODULE: return "'module'";
    case TK_IMPORT: return "'import'";
    case TK_STRUCT: return "'struct'";
    case TK_ENUM: return "'enum'";
    case TK_STRLIT: return "string";
    case TK_STRING: return "'string'";
    case TK_BYTES: return "'bytes'";
    case TK_MINUS: return "'-'";
    case TK_ACTOR: return "'actor'";
    case TK_STATE: return "'state'";
    case TK_ON: return "'on'";
    case TK_MAILBOX: return "'mailbox'";
    case TK_ID: return "identifier";
    case TK_NUMBER: return "number";
    case TK_BOOL: return "'bool'";
    case TK_I8: return "'i8'";
    case TK_I16: return "'i16'";
    case TK_I32: return "'i32'";
    case TK_I64: return "'i64'";
    case TK_U8: return "'u8'";
    case TK_U16: return "'u16'";
    case TK_U32: return "'u32'";
    case TK_U64: return "'u64'";
    case TK_F32: return "'f32'";
    case TK_F64: return "'f64'";
    case TK_REF: return "'ref'";
    case TK_ADDR: return "'addr'";
    case TK_SEMI: return "';'";
    case TK_COMMA: return "','";
    case TK_LPAREN: return "'('";
    case TK_RPAREN: return "')'";
    case TK_LBRACE: return "'{'";
    case TK_RBRACE: return "'}'";
    case TK_LT: return "'<'";
    case TK_GT: return "'>'";
    case TK_LBRACKET: return "'['";
    case TK_RBRACKET: return "']'";
    case TK_EQ: return "'='";
    case TK_DOT: return "'.'";
    case TK_COLON: return "':'";
    case TK_ARROW: return "'->'";
    }
    return "token";
}

static bool is_type_token(int code)
{
    return code >= TK_BOOL && code <= TK_ADDR;
}

/* Appends to a fixed message buffer, truncating. */
static void append(char *buf, size_t cap, const char *s, size_t n)
{
    size_t len = strlen(buf);
    if (n > cap - 1 - len)
        n = cap - 1 - len;
    memcpy(buf + len, s, n);
    buf[len + n] = '\0';
}

static void appends(char *buf, size_t cap, const char *s)
{
    append(buf, cap, s, strlen(s));
}

void acc_syntax_error(acc_parser *ps, int found, const acc_token *tok,
                      const int *expected, int count)
{
    char msg[512] = "";
    int types = 0, n = 0;

    /* "unterminated comment" already said why the file ends here. */
    if (found == 0 && ps->cx->eof_reported)
        return;

    /* All the type keywords together read as "type". */
    for (int i = 0; i < count; i++)
        types += is_type_token(expected[i]);
    bool any_type = types == TK_ADDR - TK_BOOL + 1;
    int shown = any_type ? count - types + 1 : count;

    appends(msg, sizeof(msg), shown == 0 ? "unexpected " : "expected ");
    /* A named type is a type too. */
    for (int i = 0; any_type && i < count; i++)
        if (expected[i] == TK_ID)
            shown--;
    for (int i = 0; i < count; i++) {
        if (any_type && is_type_token(expected[i]) && expected[i] != TK_BOOL)
            continue;
        if (any_type && expected[i] == TK_ID)
            continue;
        if (n > 0)
            appends(msg, sizeof(msg), n == shown - 1 ? " or " : ", ");
        n++;
        appends(msg, sizeof(msg),
                any_type && expected[i] == TK_BOOL
                    ? "type" : acc_token_desc(expected[i]));
    }
    if (shown > 0)
        appends(msg, sizeof(msg), ", found ");
    appends(msg, sizeof(msg), acc_token_desc(found));
    if (found == TK_ID || found == TK_NUMBER || found == TK_STRLIT) {
        appends(msg, sizeof(msg), " '");
        append(msg, sizeof(msg), tok->s, tok->len > 64 ? 64 : tok->len);
        appends(msg, sizeof(msg), "'");
    }
    acc_error(ps->cx, (acc_loc){ tok->off, tok->len }, "%s", msg);
}

/* ---- AST constructors ------------------------------------------------------- */

static acc_name name_of(const acc_token *t)
{
    acc_name n = { t->s, t->len, t->off };
    return n;
}

acc_actor *acc_ast_body(acc_parser *ps)
{
    return acc_alloc(&ps->cx->arena, sizeof(acc_actor));
}

void acc_ast_actor(acc_parser *ps, acc_actor *a, const acc_token *kw,
                   const acc_token *name)
{
    acc_module *mod = ps->mod;
    a->name = name_of(name);
    a->doc = kw->doc;
    a->mod = mod;
    if (mod->actors_tail != NULL)
        mod->actors_tail->next = a;
    else
        mod->actors = a;
    mod->actors_tail = a;
}

void acc_ast_state(acc_parser *ps, acc_actor *a, const acc_token *kw,
                   acc_field *fields)
{
    acc_loc at = { kw->off, kw->len };
    if (a->state_seen) {
        acc_error(ps->cx, at, "duplicate state block");
        acc_note(ps->cx, a->state_at, "the first state block is here");
        return;
    }
    a->state_seen = true;
    a->state_at = at;
    a->state = fields;
}

static bool is_tok(const acc_token *t, const char *s)
{
    return strlen(s) == t->len && memcmp(t->s, s, t->len) == 0;
}

void acc_ast_message(acc_parser *ps, acc_actor *a, const acc_token *kw,
                     const acc_token *name, acc_field *fields, bool parens)
{
    acc_message *m = acc_alloc(&ps->cx->arena, sizeof(*m));
    m->name = name_of(name);
    m->doc = kw->doc;
    m->fields = fields;
    m->has_parens = parens;
    /* Hooks, not messages: start takes spawn's arguments; stop, down and
     * exit take none (down and exit get the runtime's ac_down / ac_exit). */
    static const char *const hooks[] = { "start", "stop", "down", "exit" };
    acc_message **slot[] = { &a->start, &a->stop, &a->down, &a->exit };
    for (int i = 0; i < 4; i++) {
        if (!is_tok(name, hooks[i]))
            continue;
        acc_message **hook = slot[i];
        acc_loc at = { name->off, name->len };
        if (*hook != NULL) {
            acc_error(ps->cx, at, "duplicate %s hook", hooks[i]);
            acc_note(ps->cx, (acc_loc){ (*hook)->name.off, (*hook)->name.len },
                     "the first %s hook is here", hooks[i]);
        } else if (i > 0 && fields != NULL) {
            acc_error(ps->cx, at, "the %s hook takes no fields%s", hooks[i],
                      i == 1 ? "" : i == 2 ? " (it receives an ac_down)"
                                           : " (it receives an ac_exit)");
        } else {
            *hook = m;
        }
        return;
    }
    m->tag = a->message_count++;
    if (a->messages_tail != NULL)
        a->messages_tail->next = m;
    else
        a->messages = m;
    a->messages_tail = m;
}

/* The policies of a full mailbox, by their value in ac_overflow. */
static const char *const policies[] = { "reject", "drop_newest", "drop_oldest" };

/* The bound is a u32 (ac_actor_type.mailbox_bound) and 0 means unbounded,
 * so 1..UINT32_MAX; the policy one of ac_overflow's, reject by default. */
void acc_ast_mailbox(acc_parser *ps, acc_actor *a, const acc_token *kw,
                     const acc_int_tok *bound, const acc_token *policy)
{
    acc_ctx *cx = ps->cx;
    acc_loc at = { kw->off, kw->len };
    acc_loc num = { bound->first.off,
                    bound->tok.off + bound->tok.len - bound->first.off };
    const char *sign = bound->neg ? "-" : "";
    int n = (int)bound->tok.len;
    uint64_t v;
    bool overflow;
    if (a->mailbox_at.len != 0) {
        acc_error(cx, at, "duplicate mailbox options");
        acc_note(cx, a->mailbox_at, "the first mailbox options are here");
        return;
    }
    a->mailbox_at = at;
    if (!acc_parse_int(bound->tok.s, bound->tok.len, &v, &overflow))
        acc_error(cx, (acc_loc){ bound->tok.off, bound->tok.len },
                  "invalid integer literal '%.*s'", n, bound->tok.s);
    else if (!overflow && (v == 0 || bound->neg))
        acc_error(cx, num, "mailbox bound must be positive, not %s%.*s",
                  v != 0 ? sign : "", n, bound->tok.s);
    else if (overflow || v > UINT32_MAX)
        acc_error(cx, num, "mailbox bound %s%.*s is out of range "
                  "(1..4294967295)", sign, n, bound->tok.s);
    else
        a->mailbox_bound = (uint32_t)v;
    if (policy == NULL)
        return;
    for (int i = 0; i < 3; i++)
        if (is_tok(policy, policies[i])) {
            a->mailbox_overflow = i;
            return;
        }
    const char *best = policies[0];
    size_t best_d = (size_t)-1;
    for (int i = 0; i < 3; i++) {
        size_t d = acc_edit_distance(policy->s, policy->len, policies[i],
                                     strlen(policies[i]), 4);
        if (d < best_d) {
            best_d = d;
            best = policies[i];
        }
    }
    acc_loc pat = { policy->off, policy->len };
    if (best_d <= 4)
        acc_error(cx, pat, "unknown mailbox policy '%.*s'; did you mean "
                  "'%s'?", (int)policy->len, policy->s, best);
    else
        acc_error(cx, pat, "unknown mailbox policy '%.*s' (reject, "
                  "drop_newest or drop_oldest)", (int)policy->len, policy->s);
}

/* The reply of the message just added (acc_ast_message ran first). */
void acc_ast_reply(acc_parser *ps, acc_actor *a, const acc_token *name,
                   const acc_token *arrow, acc_field *fields)
{
    acc_message *m = a->messages_tail;
    if (m == NULL || m->name.off != name->off) {
        /* It was a hook: the message list did not grow. */
        acc_error(ps->cx, (acc_loc){ arrow->off, arrow->len },
                  "a hook has no reply");
        return;
    }
    m->has_reply = true;
    m->reply = fields;
}

void acc_ast_field(acc_parser *ps, acc_field_list *list,
                   const acc_type_tok *type, const acc_token *name)
{
    acc_field *f = acc_alloc(&ps->cx->arena, sizeof(*f));
    f->name = name_of(name);
    f->type = type->type;
    f->doc = type->doc;
    if (list->tail != NULL)
        list->tail->next = f;
    else
        list->head = f;
    list->tail = f;
}

acc_type_tok acc_ast_type(acc_kind kind, const acc_token *first,
                          const acc_token *last, const acc_token *qual,
                          const acc_token *target)
{
    acc_type_tok t;
    memset(&t, 0, sizeof(t));
    t.type.kind = kind;
    t.type.at.off = first->off;
    t.type.at.len = last->off + last->len - first->off;
    if (qual != NULL)
        t.type.qual = name_of(qual);
    if (target != NULL)
        t.type.target = name_of(target);
    t.doc = first->doc;
    return t;
}

acc_type_tok acc_ast_array(acc_parser *ps, const acc_type_tok *elem,
                           const acc_token *last, const acc_int_tok *size)
{
    acc_type_tok t = *elem;
    acc_type *e = acc_alloc(&ps->cx->arena, sizeof(*e));
    *e = elem->type;
    memset(&t.type, 0, sizeof(t.type));
    t.type.kind = size != NULL ? ACC_ARRAY : ACC_SEQ;
    t.type.at.off = e->at.off;
    t.type.at.len = last->off + last->len - e->at.off;
    t.type.elem = e;
    if (size != NULL) {
        t.type.size_lit = name_of(&size->tok);
        t.type.size_neg = size->neg;
        t.type.size_at.off = size->first.off;
        t.type.size_at.len = size->tok.off + size->tok.len - size->first.off;
    }
    return t;
}

void acc_ast_struct(acc_parser *ps, const acc_token *kw, const acc_token *name,
                    acc_field *fields)
{
    acc_decl *d = acc_alloc(&ps->cx->arena, sizeof(*d));
    d->kind = ACC_STRUCT;
    d->name = name_of(name);
    d->doc = kw->doc;
    d->fields = fields;
    d->mod = ps->mod;
    if (ps->mod->decls_tail != NULL)
        ps->mod->decls_tail->next = d;
    else
        ps->mod->decls = d;
    ps->mod->decls_tail = d;
}

void acc_ast_enum(acc_parser *ps, const acc_token *kw, const acc_token *name,
                  acc_enumerator *values)
{
    acc_ast_struct(ps, kw, name, NULL);
    ps->mod->decls_tail->kind = ACC_ENUM;
    ps->mod->decls_tail->values = values;
}

void acc_ast_enumerator(acc_parser *ps, acc_enum_list *list,
                        const acc_token *name, const acc_int_tok *value)
{
    acc_enumerator *e = acc_alloc(&ps->cx->arena, sizeof(*e));
    e->name = name_of(name);
    e->doc = name->doc;
    if (value != NULL) {
        e->has_value = true;
        e->neg = value->neg;
        e->lit = name_of(&value->tok);
        e->lit_at.off = value->first.off;
        e->lit_at.len = value->tok.off + value->tok.len - value->first.off;
    }
    if (list->tail != NULL)
        list->tail->next = e;
    else
        list->head = e;
    list->tail = e;
}

void acc_ast_import(acc_parser *ps, const acc_token *kw, const acc_token *path)
{
    acc_import *im = acc_alloc(&ps->cx->arena, sizeof(*im));
    (void)kw;
    im->at.off = path->off;
    im->at.len = path->len;
    im->path = acc_strndup(&ps->cx->arena, path->s + 1, path->len - 2);
    if (ps->mod->imports_tail != NULL)
        ps->mod->imports_tail->next = im;
    else
        ps->mod->imports = im;
    ps->mod->imports_tail = im;
}
