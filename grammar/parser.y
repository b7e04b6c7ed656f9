/*
 * parser.y — the actorc grammar (lemon). Builds the AST through the acc_ast_*
 * helpers of compiler/parse.c, which also feeds the tokens.
 *
 *   file    ::= "module" ID ";" ( import | struct | enum | actor )*
 *   import  ::= "import" STRING ";"
 *   struct  ::= "struct" ID "{" ( type ID ";" )* "}"
 *   enum    ::= "enum" ID "{" [ value ( "," value )* [ "," ] ] "}"
 *   value   ::= ID [ "=" [ "-" ] NUMBER ]
 *   actor   ::= "actor" ID "{" ( state | message | hook | mailbox | behaviour )* "}"
 *   state   ::= "state" "{" ( type ID ";" )* "}"
 *   mailbox ::= "mailbox" [ "-" ] NUMBER [ ID ] ";"
 *   message ::= "on" [ ID ] ID [ "(" [ type ID ( "," type ID )* ] ")" ] ";"
 *               (the first ID, when there are two, is a priority: `urgent`)
 *   hook    ::= "hook" ID [ "(" [ type ID ( "," type ID )* ] ")" ] ";"
 *   behaviour ::= "behaviour" ID "{" ( "on" ID [ "(" ")" ] ";"
 *                                    | "postpone" ID ( "," ID )* ";" )* "}"
 *   type    ::= base | type "[" "]" | type "[" [ "-" ] NUMBER "]"
 *   base    ::= "bool" | "i8" | ... | "f64" | "string" | "bytes" | "addr"
 *             | "ref" "<" qname ">" | "ptr" [ "<" ID ">" ] | qname
 *   qname   ::= ID [ "." ID ]
 *
 *   message ::= ... | "on" ID "(" params ")" "->" "(" params ")" ";"   (a reply)
 *
 * Error recovery: an `error` alternative at each list level (declarations,
 * actor members, fields) swallows tokens up to the next ';' or up to a token
 * that can continue the list ('}', 'on', 'state', 'actor'), so one syntax
 * error does not hide the next.
 *
 * Keywords fall back to ID, so a message or a field may be called `state`,
 * `on` or `addr` where a keyword could not appear anyway.
 */

%name acc_lemon
%token_prefix TK_
%token_type {acc_token}
%extra_argument {acc_parser *ps}

%include {
#include <assert.h>
#include <stdbool.h>
#include <string.h>

#include "acc.h"

struct yyParser;
static void report_syntax_error(acc_parser *ps, struct yyParser *p, int major,
                                const acc_token *tok);
}

%syntax_error {
    report_syntax_error(ps, yypParser, yymajor, &yyminor);
}

%stack_overflow {
    acc_error(ps->cx, &ps->mod->file,
              (acc_loc){ ps->tok.off, ps->tok.len },
              "declarations nested too deeply");
}

/* Token codes in this order: expected-token lists are shown in it. */
%token MODULE IMPORT STRUCT ENUM ACTOR STATE ON MAILBOX HOOK BEHAVIOUR POSTPONE.
%token ID NUMBER STRLIT.
%token BOOL I8 I16 I32 I64 U8 U16 U32 U64 F32 F64 STRING BYTES REF ADDR PTR.
%token SEMI COMMA LPAREN RPAREN LBRACE RBRACE LT GT.
%token LBRACKET RBRACKET EQ DOT COLON ARROW MINUS.

%fallback ID MODULE IMPORT STRUCT ENUM ACTOR STATE ON MAILBOX HOOK BEHAVIOUR POSTPONE
             BOOL I8 I16 I32 I64 U8 U16 U32 U64 F32 F64 STRING BYTES REF ADDR PTR.

%type body {acc_actor *}
%type fields {acc_field_list}
%type params {acc_field_list}
%type plist {acc_field_list}
%type type {acc_type_tok}
%type base {acc_type_tok}
%type int {acc_int_tok}
%type enumerators {acc_enum_list}
%type bitems {acc_bitem_list}
%type pnames {acc_bitem_list}
%type elist {acc_enum_list}

file ::= module_decl decls.

module_decl ::= MODULE(K) ID(N) SEMI. {
    ps->mod->has_name = true;
    ps->mod->name.s = N.s;
    ps->mod->name.len = N.len;
    ps->mod->name.off = N.off;
    ps->mod->doc = K.doc;
}
module_decl ::= error.

decls ::= .
decls ::= decls actor.
decls ::= decls struct.
decls ::= decls enum.
decls ::= decls import.
decls ::= decls error.

import ::= IMPORT(K) STRLIT(P) SEMI. { acc_ast_import(ps, &K, &P); }

struct ::= STRUCT(K) ID(N) LBRACE fields(F) RBRACE. {
    acc_ast_struct(ps, &K, &N, F.head);
}

enum ::= ENUM(K) ID(N) LBRACE enumerators(L) RBRACE. {
    acc_ast_enum(ps, &K, &N, L.head);
}

enumerators(R) ::= . { R.head = R.tail = NULL; }
enumerators(R) ::= elist(L). { R = L; }
enumerators(R) ::= elist(L) COMMA. { R = L; }

elist(R) ::= ID(N). {
    R.head = R.tail = NULL;
    acc_ast_enumerator(ps, &R, &N, NULL);
}
elist(R) ::= ID(N) EQ int(V). {
    R.head = R.tail = NULL;
    acc_ast_enumerator(ps, &R, &N, &V);
}
elist(R) ::= elist(L) COMMA ID(N). {
    R = L;
    acc_ast_enumerator(ps, &R, &N, NULL);
}
elist(R) ::= elist(L) COMMA ID(N) EQ int(V). {
    R = L;
    acc_ast_enumerator(ps, &R, &N, &V);
}

int(R) ::= NUMBER(N). { R.tok = N; R.first = N; R.neg = false; }
int(R) ::= MINUS(M) NUMBER(N). { R.tok = N; R.first = M; R.neg = true; }

actor ::= ACTOR(K) ID(N) LBRACE body(B) RBRACE. {
    acc_ast_actor(ps, B, &K, &N);
}

body(R) ::= . { R = acc_ast_body(ps); }
body(R) ::= body(B) STATE(K) LBRACE fields(F) RBRACE. {
    R = B;
    acc_ast_state(ps, R, &K, F.head);
}
body(R) ::= body(B) ON(K) ID(N) LPAREN params(P) RPAREN SEMI. {
    R = B;
    acc_ast_message(ps, R, &K, &N, P.head, true);
}
body(R) ::= body(B) ON(K) ID(N) SEMI. {
    R = B;
    acc_ast_message(ps, R, &K, &N, NULL, false);
}
body(R) ::= body(B) ON(K) ID(N) LPAREN params(P) RPAREN ARROW LPAREN params(Q) RPAREN SEMI. {
    R = B;
    acc_ast_message(ps, R, &K, &N, P.head, true);
    acc_ast_reply(R, Q.head);
}
body(R) ::= body(B) ON(K) ID(U) ID(N) LPAREN params(P) RPAREN SEMI. {
    R = B;
    acc_ast_message(ps, R, &K, &N, P.head, true);
    acc_ast_priority(ps, R, &U);
}
body(R) ::= body(B) ON(K) ID(U) ID(N) SEMI. {
    R = B;
    acc_ast_message(ps, R, &K, &N, NULL, false);
    acc_ast_priority(ps, R, &U);
}
body(R) ::= body(B) ON(K) ID(U) ID(N) LPAREN params(P) RPAREN ARROW LPAREN params(Q) RPAREN SEMI. {
    R = B;
    acc_ast_message(ps, R, &K, &N, P.head, true);
    acc_ast_reply(R, Q.head);
    acc_ast_priority(ps, R, &U);
}
body(R) ::= body(B) HOOK(K) ID(N) LPAREN params(P) RPAREN SEMI. {
    R = B;
    acc_ast_hook(ps, R, &K, &N, P.head);
}
body(R) ::= body(B) HOOK(K) ID(N) LPAREN params(P) RPAREN ARROW(A) LPAREN params RPAREN SEMI. {
    R = B;
    acc_ast_hook(ps, R, &K, &N, P.head);
    acc_error(ps->cx, &ps->mod->file, (acc_loc){ A.off, A.len },
              "a hook has no reply");
}
body(R) ::= body(B) HOOK(K) ID(N) SEMI. {
    R = B;
    acc_ast_hook(ps, R, &K, &N, NULL);
}
body(R) ::= body(B) MAILBOX(K) int(N) SEMI. {
    R = B;
    acc_ast_mailbox(ps, R, &K, &N, NULL);
}
body(R) ::= body(B) MAILBOX(K) int(N) ID(P) SEMI. {
    R = B;
    acc_ast_mailbox(ps, R, &K, &N, &P);
}
body(R) ::= body(B) BEHAVIOUR(K) ID(N) LBRACE bitems(I) RBRACE. {
    R = B;
    acc_ast_behaviour(ps, R, &K, &N, I.head);
}
body(R) ::= body(B) error. { R = B; }
body(R) ::= body(B) error SEMI. { R = B; }

/* A behaviour's lines name messages of the actor: their fields are
 * declared with the message, so `on x(...)` with fields is an error. */
bitems(R) ::= . { R.head = R.tail = NULL; }
bitems(R) ::= bitems(L) ON ID(N) SEMI. {
    R = L;
    acc_ast_bitem(ps, &R, &N, false);
}
bitems(R) ::= bitems(L) ON ID(N) LPAREN params(P) RPAREN SEMI. {
    R = L;
    acc_ast_bitem(ps, &R, &N, false);
    if (P.head != NULL)
        acc_error(ps->cx, &ps->mod->file,
                  (acc_loc){ P.head->type.at.off,
                             P.tail->name.off + P.tail->name.len -
                             P.head->type.at.off },
                  "a behaviour names a message of its actor: its fields are "
                  "declared with the message (write 'on %.*s;')",
                  (int)N.len, N.s);
}
bitems(R) ::= bitems(L) POSTPONE pnames(P) SEMI. {
    R = L;
    acc_ast_bitems_join(&R, &P);
}
bitems(R) ::= bitems(L) error. { R = L; }
bitems(R) ::= bitems(L) error SEMI. { R = L; }

pnames(R) ::= ID(N). {
    R.head = R.tail = NULL;
    acc_ast_bitem(ps, &R, &N, true);
}
pnames(R) ::= pnames(L) COMMA ID(N). {
    R = L;
    acc_ast_bitem(ps, &R, &N, true);
}

fields(R) ::= . { R.head = R.tail = NULL; }
fields(R) ::= fields(L) type(T) ID(N) SEMI. {
    R = L;
    acc_ast_field(ps, &R, &T, &N);
}
fields(R) ::= fields(L) error. { R = L; }
fields(R) ::= fields(L) error SEMI. { R = L; }

params(R) ::= . { R.head = R.tail = NULL; }
params(R) ::= plist(L). { R = L; }

plist(R) ::= type(T) ID(N). {
    R.head = R.tail = NULL;
    acc_ast_field(ps, &R, &T, &N);
}
plist(R) ::= plist(L) COMMA type(T) ID(N). {
    R = L;
    acc_ast_field(ps, &R, &T, &N);
}

type(R) ::= base(B). { R = B; }
type(R) ::= type(E) LBRACKET RBRACKET(K). {
    R = acc_ast_array(ps, &E, &K, NULL);
}
type(R) ::= type(E) LBRACKET int(V) RBRACKET(K). {
    R = acc_ast_array(ps, &E, &K, &V);
}

base(R) ::= BOOL(K). { R = acc_ast_type(ACC_BOOL, &K, &K, NULL, NULL); }
base(R) ::= I8(K).   { R = acc_ast_type(ACC_I8, &K, &K, NULL, NULL); }
base(R) ::= I16(K).  { R = acc_ast_type(ACC_I16, &K, &K, NULL, NULL); }
base(R) ::= I32(K).  { R = acc_ast_type(ACC_I32, &K, &K, NULL, NULL); }
base(R) ::= I64(K).  { R = acc_ast_type(ACC_I64, &K, &K, NULL, NULL); }
base(R) ::= U8(K).   { R = acc_ast_type(ACC_U8, &K, &K, NULL, NULL); }
base(R) ::= U16(K).  { R = acc_ast_type(ACC_U16, &K, &K, NULL, NULL); }
base(R) ::= U32(K).  { R = acc_ast_type(ACC_U32, &K, &K, NULL, NULL); }
base(R) ::= U64(K).  { R = acc_ast_type(ACC_U64, &K, &K, NULL, NULL); }
base(R) ::= F32(K).  { R = acc_ast_type(ACC_F32, &K, &K, NULL, NULL); }
base(R) ::= F64(K).  { R = acc_ast_type(ACC_F64, &K, &K, NULL, NULL); }
base(R) ::= STRING(K). { R = acc_ast_type(ACC_STRING, &K, &K, NULL, NULL); }
base(R) ::= BYTES(K). { R = acc_ast_type(ACC_BYTES, &K, &K, NULL, NULL); }
base(R) ::= ADDR(K). { R = acc_ast_type(ACC_ADDR, &K, &K, NULL, NULL); }
base(R) ::= REF(K) LT ID(N) GT(E). {
    R = acc_ast_type(ACC_REF, &K, &E, NULL, &N);
}
base(R) ::= REF(K) LT ID(Q) DOT ID(N) GT(E). {
    R = acc_ast_type(ACC_REF, &K, &E, &Q, &N);
}
base(R) ::= PTR(K). { R = acc_ast_type(ACC_PTR, &K, &K, NULL, NULL); }
base(R) ::= PTR(K) LT ID(N) GT(E). {
    R = acc_ast_type(ACC_PTR, &K, &E, NULL, &N);
}
base(R) ::= ID(N). { R = acc_ast_type(ACC_NAMED, &N, &N, NULL, &N); }
base(R) ::= ID(Q) DOT ID(N). { R = acc_ast_type(ACC_NAMED, &Q, &N, &Q, &N); }

%code {
/* The parser and a copy of its state stack as it was before the current
 * token: lemon performs default reductions before it detects an error, so
 * the expected tokens are computed from that copy. */
typedef struct acc_lemon_parser {
    yyParser p;
    YYACTIONTYPE before[YYSTACKDEPTH];
    int before_top;
} acc_lemon_parser;

/* Allocates a parser in the arena: it goes away with the compilation. */
void *acc_lemon_new(acc_arena *a)
{
    acc_lemon_parser *lp = acc_alloc(a, sizeof(*lp));
    acc_lemonInit(&lp->p);
    return lp;
}

void acc_lemon_feed(void *parser, int code, acc_token tok, acc_parser *ps)
{
    acc_lemon_parser *lp = parser;
    int top = (int)(lp->p.yytos - lp->p.yystack);
    for (int i = 0; i <= top; i++)
        lp->before[i] = lp->p.yystack[i].stateno;
    lp->before_top = top;
    acc_lemon(&lp->p, code, tok, ps);
}

/* Whether the parser, from the stack it had before the current token,
 * could shift token `tok` after the reductions that token implies: the
 * LALR automaton replayed on a copy of the state stack. */
static bool accepts(const acc_lemon_parser *lp, int tok)
{
    enum { CAP = YYSTACKDEPTH + 64 };
    YYACTIONTYPE st[CAP];
    int top = lp->before_top;
    memcpy(st, lp->before, (size_t)(top + 1) * sizeof(st[0]));
    YYACTIONTYPE act = st[top];
    for (int step = 0; step < 4 * CAP; step++) {
        act = yy_find_shift_action((YYCODETYPE)tok, act);
        if (act >= YY_MIN_REDUCE) {
            unsigned rule = act - YY_MIN_REDUCE;
            top += yyRuleInfoNRhs[rule];
            if (top < 0)
                return false;
            act = yy_find_reduce_action(st[top],
                                        (YYCODETYPE)yyRuleInfoLhs[rule]);
            if (++top >= CAP)
                return true;
            st[top] = act;
        } else if (act <= YY_MAX_SHIFTREDUCE) {
            return true;
        } else {
            return act == YY_ACCEPT_ACTION;
        }
    }
    return false;
}

static void report_syntax_error(acc_parser *ps, yyParser *p, int major,
                                const acc_token *tok)
{
    const acc_lemon_parser *lp = (const acc_lemon_parser *)p;
    int expected[YYNTOKEN];
    int n = 0;
    bool id_ok = accepts(lp, TK_ID);
    for (int t = 1; t < YYNTOKEN; t++) {
        /* A keyword that would be taken as a name is not listed apart. */
        if (id_ok && acc_lemonFallback(t) == TK_ID &&
            !(t >= TK_BOOL && t <= TK_PTR))
            continue;
        if (accepts(lp, t))
            expected[n++] = t;
    }
    if (accepts(lp, 0))
        expected[n++] = 0;
    acc_syntax_error(ps, major, tok, expected, n);
}

bool acc_lemon_accepts(void *parser, int code)
{
    acc_lemon_parser *lp = parser;
    int top = (int)(lp->p.yytos - lp->p.yystack);
    for (int i = 0; i <= top; i++)
        lp->before[i] = lp->p.yystack[i].stateno;
    lp->before_top = top;
    return accepts(lp, code);
}
}
