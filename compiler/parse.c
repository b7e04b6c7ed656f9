/*
 * parse.c — the parse pass over one module: drives the lexer over the
 * module's file into the lemon parser (whose actions build the AST through
 * ast.c), and turns the parser's syntax errors into "expected X, found Y"
 * diagnostics.
 */
#include <string.h>

#include "acc.h"
#include "parser.h"

void acc_parse(acc_ctx *cx, acc_module *mod)
{
    acc_lexer lx;
    acc_parser ps = { cx, mod, &lx, { NULL, 0, 0, NULL } };
    void *parser = acc_lemon_new(&cx->arena);

    acc_lex_init(&lx, cx, &mod->file);
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
    case TK_HOOK: return "'hook'";
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
    acc_error(ps->cx, &ps->mod->file, (acc_loc){ tok->off, tok->len }, "%s",
              msg);
}
