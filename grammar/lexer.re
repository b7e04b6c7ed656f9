/*
 * lexer.re — the actorc lexer (re2c). Returns lemon's token codes (TK_*
 * from parser.h) directly; a token is a slice of the source buffer, never a
 * copy. Comments and white space are skipped; `///` lines are collected and
 * handed to the parser on the next token, which is how doc comments reach
 * the declaration that follows them.
 *
 * The buffer ends with a NUL sentinel (the loader adds it); a NUL
 * inside the input is an ordinary bad character, told apart from the end by
 * re2c's bounds check (re2c:eof).
 */
#include <stdio.h>
#include <string.h>

#include "acc.h"
#include "parser.h"

void acc_lex_init(acc_lexer *lx, acc_ctx *cx, const acc_file *f)
{
    memset(lx, 0, sizeof(*lx));
    lx->cx = cx;
    lx->file = f;
    lx->cur = (const unsigned char *)f->src + acc_bom_len(f);
    lx->lim = (const unsigned char *)f->src + f->len;
}

static uint32_t offset(const acc_lexer *lx, const unsigned char *p)
{
    return (uint32_t)(p - (const unsigned char *)lx->file->src);
}

static acc_loc span(const acc_lexer *lx, const unsigned char *b,
                    const unsigned char *e)
{
    acc_loc at = { offset(lx, b), (uint32_t)(e - b) };
    return at;
}

/* `/// text`: keeps "text" (one leading space and trailing space dropped). */
static void add_doc(acc_lexer *lx, const unsigned char *b,
                    const unsigned char *e)
{
    b += 3;
    if (b < e && *b == ' ')
        b++;
    while (e > b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
        e--;
    acc_doc *d = acc_alloc(&lx->cx->arena, sizeof(*d));
    d->text = span(lx, b, e);
    if (lx->doc_tail != NULL)
        lx->doc_tail->next = d;
    else
        lx->doc_head = d;
    lx->doc_tail = d;
}

/* Skips a block comment, `p` being just past its opening; returns the end,
 * or NULL if the comment is not closed. Comments do not nest. */
static const unsigned char *skip_block_comment(const unsigned char *p,
                                               const unsigned char *lim)
{
    for (; p + 1 < lim; p++)
        if (p[0] == '*' && p[1] == '/')
            return p + 2;
    return NULL;
}

/* Reports a character that cannot start a token; returns where it ends (a
 * UTF-8 sequence counts as one character). */
static const unsigned char *bad_char(acc_lexer *lx, const unsigned char *b)
{
    const unsigned char *e = b + 1;
    int want = -1;
    if (*b < 0x80)
        want = 0;
    else if (*b >= 0xc2 && *b <= 0xdf)
        want = 1;
    else if (*b >= 0xe0 && *b <= 0xef)
        want = 2;
    else if (*b >= 0xf0 && *b <= 0xf4)
        want = 3;
    while (want > 0 && e < lx->lim && (*e & 0xc0) == 0x80) {
        e++;
        want--;
    }
    if (want != 0) {
        acc_error(lx->cx, lx->file, span(lx, b, b + 1),
                  "invalid byte '\\x%02x' (the input must be UTF-8)", *b);
        return b + 1;
    }
    if (*b == '*')
        acc_error(lx->cx, lx->file, span(lx, b, e),
                  "unexpected character '*': a pointer is written 'ptr' "
                  "(void *) or 'ptr<Name>' (struct Name *), in state and "
                  "start fields");
    else if (*b < 0x20 || *b == 0x7f)
        acc_error(lx->cx, lx->file, span(lx, b, e),
                  "unexpected character '\\x%02x'", *b);
    else
        acc_error(lx->cx, lx->file, span(lx, b, e),
                  "unexpected character '%.*s'", (int)(e - b),
                  (const char *)b);
    return e;
}

/* Generated C names join identifiers with '_'. A leading or trailing '_',
 * or a "__", could then make a name C reserves (_X..., __...) or one of the
 * generator's internal names (which all contain "__"). */
static void check_reserved(acc_lexer *lx, const unsigned char *b,
                           const unsigned char *e)
{
    const char *why = NULL;
    if (*b == '_')
        why = "begin with '_'";
    else if (e[-1] == '_')
        why = "end with '_'";
    else
        for (const unsigned char *p = b; p + 1 < e; p++)
            if (p[0] == '_' && p[1] == '_')
                why = "contain '__'";
    if (why != NULL)
        acc_error(lx->cx, lx->file, span(lx, b, e),
                  "identifier '%.*s' is reserved: names may not %s",
                  (int)(e - b), (const char *)b, why);
}

int acc_lex(acc_lexer *lx, acc_token *tok)
{
    const unsigned char *cur = lx->cur, *lim = lx->lim, *mar, *start;
    int code;

    for (;;) {
        if (lx->cx->stopped) {
            start = cur = lim;
            code = 0;
            break;
        }
        start = cur;
        /*!re2c
            re2c:api:style = free-form;
            re2c:define:YYCTYPE = "unsigned char";
            re2c:define:YYCURSOR = "cur";
            re2c:define:YYMARKER = "mar";
            re2c:define:YYLIMIT = "lim";
            re2c:yyfill:enable = 0;
            re2c:eof = 0;

            ident = [A-Za-z_][A-Za-z0-9_]*;

            $ { code = 0; break; }

            [ \t\r\n\f\v]+       { continue; }
            "////" [^\n]*        { continue; }
            "///" [^\n]*         { add_doc(lx, start, cur); continue; }
            "//" [^\n]*          { continue; }
            "/*" {
                const unsigned char *e = skip_block_comment(cur, lim);
                if (e == NULL) {
                    acc_error(lx->cx, lx->file, span(lx, start, cur),
                              "unterminated comment");
                    lx->eof_reported = true;
                    cur = lim;
                    continue;
                }
                cur = e;
                continue;
            }

            "module" { code = TK_MODULE; break; }
            "import" { code = TK_IMPORT; break; }
            "struct" { code = TK_STRUCT; break; }
            "enum"   { code = TK_ENUM; break; }
            "string" { code = TK_STRING; break; }
            "bytes"  { code = TK_BYTES; break; }
            "actor"  { code = TK_ACTOR; break; }
            "state"  { code = TK_STATE; break; }
            "on"     { code = TK_ON; break; }
            "mailbox" { code = TK_MAILBOX; break; }
            "hook"   { code = TK_HOOK; break; }
            "behaviour" { code = TK_BEHAVIOUR; break; }
            "postpone" { code = TK_POSTPONE; break; }
            "bool"   { code = TK_BOOL; break; }
            "i8"     { code = TK_I8; break; }
            "i16"    { code = TK_I16; break; }
            "i32"    { code = TK_I32; break; }
            "i64"    { code = TK_I64; break; }
            "u8"     { code = TK_U8; break; }
            "u16"    { code = TK_U16; break; }
            "u32"    { code = TK_U32; break; }
            "u64"    { code = TK_U64; break; }
            "f32"    { code = TK_F32; break; }
            "f64"    { code = TK_F64; break; }
            "ref"    { code = TK_REF; break; }
            "addr"   { code = TK_ADDR; break; }
            "ptr"    { code = TK_PTR; break; }

            ident {
                check_reserved(lx, start, cur);
                code = TK_ID;
                break;
            }
            [0-9][A-Za-z0-9_]* { code = TK_NUMBER; break; }

            ["] [^"\n\x00]* ["] { code = TK_STRLIT; break; }
            ["] [^"\n\x00]* {
                acc_error(lx->cx, lx->file, span(lx, start, cur),
                          "unterminated string");
                continue;
            }

            ";"  { code = TK_SEMI; break; }
            ","  { code = TK_COMMA; break; }
            "("  { code = TK_LPAREN; break; }
            ")"  { code = TK_RPAREN; break; }
            "{"  { code = TK_LBRACE; break; }
            "}"  { code = TK_RBRACE; break; }
            "<"  { code = TK_LT; break; }
            ">"  { code = TK_GT; break; }
            "["  { code = TK_LBRACKET; break; }
            "]"  { code = TK_RBRACKET; break; }
            "="  { code = TK_EQ; break; }
            "."  { code = TK_DOT; break; }
            ":"  { code = TK_COLON; break; }
            "->" { code = TK_ARROW; break; }
            "-"  { code = TK_MINUS; break; }

            * { cur = bad_char(lx, start); continue; }
        */
    }

    lx->cur = cur;
    tok->s = (const char *)start;
    tok->off = offset(lx, start);
    tok->len = (uint32_t)(cur - start);
    tok->doc = lx->doc_head;
    lx->doc_head = lx->doc_tail = NULL;
    if (code != 0) {
        lx->last_end = tok->off + tok->len;
    } else {
        /* The end is reported just after the last token. */
        tok->off = lx->last_end;
        tok->len = 0;
        tok->s = lx->file->src + tok->off;
    }
    return code;
}
