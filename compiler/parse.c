/*
 * parse.c — the parse pass over one module: drives the lexer over the
 * module's file into the lemon parser (whose actions build the AST through
 * ast.c), and turns the parser's syntax errors into "expected X, found Y"
 * diagnostics.
 */
#include <string.h>

#include "acc.h"
#include "parser.h"

/* ---- blocks left open ----------------------------------------------------------- */

/* A missing '}' shows up only where the next declaration begins, as some
 * other mistake ("expected ';', found '{'" at `actor B {` inside a
 * struct). So the driver keeps its own count of the braces in the
 * tokens, with what opened each, and when a declaration begins inside a
 * block (`struct|enum|actor NAME {`, or `on NAME (` inside a state block)
 * it says which block is not closed and where it opened, and closes it
 * for the parser, which then reads the declaration as what it is. */
enum { MAX_OPEN = 16, LOOKAHEAD = 3 };

typedef struct open_block {
    acc_loc brace;
    int kind;               /* TK_STRUCT, TK_ENUM, TK_ACTOR, TK_STATE,
                             * TK_BEHAVIOUR, 0 */
    acc_name name;          /* a struct's, enum's, actor's or behaviour's */
} open_block;

typedef struct driver {
    acc_ctx *cx;
    acc_parser *ps;
    void *parser;
    open_block open[MAX_OPEN];
    uint32_t depth;         /* may pass MAX_OPEN: those are not described */
    int prev_code[2];       /* the last two tokens fed: what a '{' follows */
    acc_token prev[2];
} driver;

static acc_name tok_name(const acc_token *t)
{
    acc_name n = { t->s, t->len, t->off };
    return n;
}

/* The keyword of a declaration that opens a block: "struct". */
static const char *decl_word(int kind)
{
    return kind == TK_STRUCT ? "struct" : kind == TK_ENUM ? "enum" : "actor";
}

/* "struct 'Money'", "the state block of actor 'A'", "a block". */
static const char *describe(driver *d, uint32_t i)
{
    acc_arena *ar = &d->cx->arena;
    if (i >= MAX_OPEN)
        return "a block";
    const open_block *b = &d->open[i];
    switch (b->kind) {
    case TK_STRUCT: case TK_ENUM: case TK_ACTOR:
        return acc_aprintf(ar, "%s '%.*s'", decl_word(b->kind),
                           (int)b->name.len, b->name.s);
    case TK_BEHAVIOUR:
        if (i > 0 && d->open[i - 1].kind == TK_ACTOR)
            return acc_aprintf(ar, "behaviour '%.*s' of actor '%.*s'",
                               (int)b->name.len, b->name.s,
                               (int)d->open[i - 1].name.len,
                               d->open[i - 1].name.s);
        return acc_aprintf(ar, "behaviour '%.*s'", (int)b->name.len,
                           b->name.s);
    case TK_STATE:
        if (i > 0 && d->open[i - 1].kind == TK_ACTOR)
            return acc_aprintf(ar, "the state block of actor '%.*s'",
                               (int)d->open[i - 1].name.len,
                               d->open[i - 1].name.s);
        return "the state block";
    default:
        return "a block";
    }
}

static void feed(driver *d, int code, const acc_token *tok)
{
    if (code == TK_LBRACE) {
        if (d->depth < MAX_OPEN) {
            open_block *b = &d->open[d->depth];
            b->brace = (acc_loc){ tok->off, tok->len };
            b->kind = 0;
            if (d->prev_code[1] == TK_STATE) {
                b->kind = TK_STATE;
            } else if (d->prev_code[1] == TK_ID &&
                       (d->prev_code[0] == TK_STRUCT ||
                        d->prev_code[0] == TK_ENUM ||
                        d->prev_code[0] == TK_ACTOR ||
                        d->prev_code[0] == TK_BEHAVIOUR)) {
                b->kind = d->prev_code[0];
                b->name = tok_name(&d->prev[1]);
            }
        }
        d->depth++;
    } else if (code == TK_RBRACE && d->depth > 0) {
        d->depth--;
    }
    d->prev_code[0] = d->prev_code[1];
    d->prev[0] = d->prev[1];
    d->prev_code[1] = code;
    d->prev[1] = *tok;
    acc_lemon_feed(d->parser, code, *tok, d->ps);
}

/* Reports the blocks open down to depth `keep` as not closed before
 * `at` (`before` says what is there), and closes them for the parser;
 * false, reporting nothing, when the parser would not take a '}' here
 * (the text before is broken some other way: its own error says so). */
static bool close_open(driver *d, uint32_t keep, const acc_token *at,
                       const char *before)
{
    if (d->depth <= keep || !acc_lemon_accepts(d->parser, TK_RBRACE))
        return false;
    const acc_file *f = &d->ps->mod->file;
    uint32_t inner = d->depth - 1;
    acc_error(d->cx, f, (acc_loc){ at->off, at->len }, "%s is not closed: "
              "expected '}' %s", describe(d, inner), before);
    for (uint32_t i = inner + 1; i-- > keep;)
        if (i < MAX_OPEN)
            acc_note(d->cx, f, d->open[i].brace, "%s opens here%s",
                     describe(d, i), i == inner ? "" : " (and is not "
                     "closed either)");
    while (d->depth > keep && acc_lemon_accepts(d->parser, TK_RBRACE)) {
        acc_token close = *at;
        close.len = 0;
        close.doc = NULL;
        close.s = "}";
        feed(d, TK_RBRACE, &close);
    }
    return true;
}

void acc_parse(acc_ctx *cx, acc_module *mod)
{
    acc_lexer lx;
    acc_parser ps = { cx, mod, &lx, { NULL, 0, 0, NULL } };
    driver d;
    memset(&d, 0, sizeof(d));
    d.cx = cx;
    d.ps = &ps;
    d.parser = acc_lemon_new(&cx->arena);

    /* Tokens read ahead: a declaration's first three. */
    int codes[LOOKAHEAD];
    acc_token toks[LOOKAHEAD];
    int held = 0;

    acc_lex_init(&lx, cx, &mod->file);
    for (;;) {
        if (held == 0) {
            codes[0] = acc_lex(&lx, &toks[0]);
            held = 1;
        }
        if (cx->stopped)
            break;
        int code = codes[0];
        bool decl = code == TK_STRUCT || code == TK_ENUM ||
                    code == TK_ACTOR;
        bool in_state = d.depth > 0 && d.depth <= MAX_OPEN &&
                        d.open[d.depth - 1].kind == TK_STATE;
        if (d.depth > 0 && (decl || (code == TK_ON && in_state))) {
            while (held < LOOKAHEAD && codes[held - 1] != 0) {
                codes[held] = acc_lex(&lx, &toks[held]);
                held++;
            }
            if (held == LOOKAHEAD && codes[1] == TK_ID) {
                if (decl && codes[2] == TK_LBRACE)
                    close_open(&d, 0, &toks[0], acc_aprintf(&cx->arena,
                               "before this %s", decl_word(code)));
                else if (!decl && codes[2] == TK_LPAREN)
                    close_open(&d, d.depth - 1, &toks[0],
                               "before this message");
            }
        } else if (code == 0 && d.depth > 0 && !lx.eof_reported) {
            /* (An unterminated comment already said why the file ends.) */
            close_open(&d, 0, &toks[0], "at the end of the file");
        }
        ps.tok = toks[0];
        feed(&d, code, &toks[0]);
        if (code == 0 || cx->stopped)
            break;
        held--;
        memmove(codes, codes + 1, (size_t)held * sizeof(codes[0]));
        memmove(toks, toks + 1, (size_t)held * sizeof(toks[0]));
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
    case TK_HOOK: return "'hook'";
    case TK_BEHAVIOUR: return "'behaviour'";
    case TK_POSTPONE: return "'postpone'";
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
    case TK_PTR: return "'ptr'";
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
    return code >= TK_BOOL && code <= TK_PTR;
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

/* The keyword among `expected` that `tok` is a misspelling of (at most
 * two edits, and fewer than half its letters), quoted ("'struct'"), or
 * NULL. */
static const char *near_keyword(const acc_token *tok, const int *expected,
                                int count)
{
    const char *best = NULL;
    size_t best_d = 3;
    for (int i = 0; i < count; i++) {
        int t = expected[i];
        bool kw = (t >= TK_MODULE && t <= TK_POSTPONE) || is_type_token(t);
        if (!kw)
            continue;
        const char *desc = acc_token_desc(t);   /* "'struct'" */
        size_t n = strlen(desc) - 2;
        size_t d = acc_edit_distance(tok->s, tok->len, desc + 1, n, 2);
        bool close = (d == 1 && tok->len >= 2) || 2 * d < tok->len;
        if (d < best_d && close) {
            best_d = d;
            best = desc;
        }
    }
    return best;
}

void acc_syntax_error(acc_parser *ps, int found, const acc_token *tok,
                      const int *expected, int count)
{
    char msg[512] = "";
    int types = 0, n = 0;

    /* "unterminated comment" already said why the file ends here. */
    if (found == 0 && ps->lx->eof_reported)
        return;

    /* All the type keywords together read as "type". */
    for (int i = 0; i < count; i++)
        types += is_type_token(expected[i]);
    bool any_type = types == TK_PTR - TK_BOOL + 1;
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
    /* A name where a keyword was wanted: a misspelt keyword (`strcut`,
     * `acotr`) gets the keyword suggested. */
    const char *near = found == TK_ID ? near_keyword(tok, expected, count)
                                      : NULL;
    if (near != NULL) {
        appends(msg, sizeof(msg), "; did you mean ");
        appends(msg, sizeof(msg), near);
        appends(msg, sizeof(msg), "?");
    }
    acc_error(ps->cx, &ps->mod->file, (acc_loc){ tok->off, tok->len }, "%s",
              msg);
}
