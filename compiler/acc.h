/*
 * acc.h — what the compiler's passes share: the compilation context (arena,
 * diagnostics, out-of-memory escape), the token, the AST, and each pass's
 * entry point. Not installed; the library's API is actorc_compiler.h.
 *
 * Memory: everything a compilation allocates lives in its arena or in one
 * of the context's buffers, and goes away with the context. Running out of
 * memory longjmps back to acc_compile_buffer (Lua's arrangement), so no pass
 * checks allocation results.
 */
#ifndef ACC_H
#define ACC_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "actorc_compiler.h"

#if defined(__GNUC__) || defined(__clang__)
#define ACC_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define ACC_PRINTF(f, a)
#endif

/* ---- memory (arena.c) ---------------------------------------------------- */

typedef struct acc_chunk acc_chunk;

typedef struct acc_arena {
    acc_chunk *head;
    jmp_buf *oom;           /* where to go when malloc fails */
} acc_arena;

/* Zeroed, aligned for pointers, sizes, doubles and 64-bit integers (not
 * long double); never NULL. */
void *acc_alloc(acc_arena *a, size_t size);
/* Room for a string of len bytes and its NUL (zeroed, not aligned). */
char *acc_alloc_chars(acc_arena *a, size_t len);
/* A NUL-terminated copy of s[0..len). */
char *acc_strndup(acc_arena *a, const char *s, size_t len);
/* printf into the arena. */
char *acc_aprintf(acc_arena *a, const char *fmt, ...) ACC_PRINTF(2, 3);
void acc_arena_free(acc_arena *a);
/* Frees `p` at once if it was allocated alone in a chunk (an object larger
 * than a chunk: a map's slots), else leaves it to acc_arena_free: a growing
 * map would otherwise keep every smaller table it outgrew. Not for what
 * was allocated before a mark that is still to be released. */
void acc_arena_give_back(acc_arena *a, void *p);

/* A point in the arena to go back to: acc_arena_release frees what was
 * allocated since acc_arena_mark (marks nest, last in first out). The
 * generators release what they allocate for one message or actor (its
 * declarations and parameter lists) once it is written, so that the arena
 * does not grow with the output. */
typedef struct acc_arena_mark {
    acc_chunk *head;        /* the chunk in use at the mark (NULL: none) */
    acc_chunk *next;        /* what followed it then */
    size_t used;            /* and how much of it was used */
} acc_arena_mark;

acc_arena_mark acc_arena_mark_get(const acc_arena *a);
void acc_arena_release(acc_arena *a, acc_arena_mark m);

/* A growable byte string on the heap, always NUL-terminated once used.
 * With `max` set (not 0), growing past max bytes longjmps to `oom` with
 * ACC_JMP_LIMIT instead of ACC_JMP_OOM: the generators' outputs are capped
 * that way, without a check at every line. */
typedef struct acc_buf {
    char *data;
    size_t len, cap;
    jmp_buf *oom;
    size_t max;
    /* With `sink` set, what is held is handed to it (and dropped) whenever
     * it passes ACC_BUF_FLUSH bytes, and by acc_buf_flush: a generated file
     * then takes a few kilobytes of memory however large it is. `max`
     * counts what went to the sink too (`flushed`). */
    void (*sink)(void *arg, const char *data, size_t len);
    void *sink_arg;
    size_t flushed;
} acc_buf;

#define ACC_BUF_FLUSH ((size_t)64 << 10)

/* What the recovery point is longjmp'd with. */
enum { ACC_JMP_OOM = 1, ACC_JMP_LIMIT = 2 };

void acc_buf_put(acc_buf *b, const char *s, size_t n);
void acc_buf_puts(acc_buf *b, const char *s);
void acc_buf_putc(acc_buf *b, char c);
void acc_buf_printf(acc_buf *b, const char *fmt, ...) ACC_PRINTF(2, 3);
/* Hands the string over (caller frees; NULL only when out of memory); the
 * buffer is empty afterwards. Safe outside the recovery point. */
char *acc_buf_take(acc_buf *b, size_t *len);
/* Hands what is held to the sink (called even when nothing is, so that
 * the sink sees every file, an empty one too). */
void acc_buf_flush(acc_buf *b);
/* Everything put so far: flushed and held. */
size_t acc_buf_total(const acc_buf *b);
void acc_buf_free(acc_buf *b);

/* A string built in an arena by appending, for text the generators
 * assemble from many parts (a parameter list): each growth doubles, so
 * the copies add up to less than twice the result, and nothing is left to
 * free when the compilation runs out of memory halfway. `data` is
 * NUL-terminated once anything is appended. */
typedef struct acc_str {
    char *data;
    size_t len, cap;
    acc_arena *arena;
} acc_str;

void acc_str_printf(acc_str *s, const char *fmt, ...) ACC_PRINTF(2, 3);

/* String -> pointer map, allocated in an arena. Keys are not copied. */
typedef struct acc_map {
    struct acc_map_slot *slots;
    size_t cap, count;
    acc_arena *arena;
} acc_map;

void acc_map_init(acc_map *m, acc_arena *a);
/* The same, sized for n keys (it still grows past them). */
void acc_map_init_for(acc_map *m, acc_arena *a, size_t n);
/* The value stored under key, or NULL. */
void *acc_map_get(const acc_map *m, const char *key, size_t len);
/* Stores value unless the key is present; returns the value now stored. */
void *acc_map_put(acc_map *m, const char *key, size_t len, void *value);

/* ---- the compilation context ---------------------------------------------- */

/* One source file: the main input or an import. */
typedef struct acc_file {
    const char *filename;   /* as diagnostics show it */
    const char *path;       /* as opened ("" for a buffer) */
    const char *dir;        /* where its imports are looked up first */
    const char *src;        /* NUL-terminated */
    uint32_t len;
} acc_file;

typedef struct acc_ctx {
    acc_arena arena;
    jmp_buf oom;
    /* The input as diagnostics show it: what errors about the whole
     * compilation name. Diagnostics about a module name its file. */
    const char *filename;
    acc_buf diags;          /* rendered diagnostics */
    int errors;
    int warnings;
    int max_errors;
    bool no_warnings;
    bool stopped;           /* max_errors reached: passes wind down */
    bool muted;             /* the last error was dropped: drop its notes */
    const struct acc_options *opt;
    uint32_t mark_gen;      /* for walks over the modules */
    size_t source_bytes;    /* read so far, input and imports: at most
                             * ACC_MAX_INPUT */
    /* diag.c: where the last diagnostic was (file, offset, its line's
     * number and start), to count lines on from there: warnings are not
     * capped, and counting each one's line from the top of the file would
     * be quadratic in it. */
    const acc_file *line_file;
    uint32_t line_off, line_number, line_start;
} acc_ctx;

/* A place in the source: byte offset and length (0 for a point). */
typedef struct acc_loc {
    uint32_t off, len;
} acc_loc;

/* 3 when `f` begins with a UTF-8 byte order mark (which editors on some
 * systems write), else 0: the lexer skips it, and a column on the first
 * line counts from after it. */
uint32_t acc_bom_len(const acc_file *f);

/* Diagnostics at a place in file `f`: the file of the module they are
 * about, which the pass reporting them carries. */
void acc_error(acc_ctx *cx, const acc_file *f, acc_loc at,
               const char *fmt, ...) ACC_PRINTF(4, 5);
/* A note belongs to the error just reported. */
void acc_note(acc_ctx *cx, const acc_file *f, acc_loc at,
              const char *fmt, ...) ACC_PRINTF(4, 5);
/* Warning `id`: shown with its option ("[-Wunused-import]") unless the
 * options turn it off, not counted as an error unless they make it one
 * (-Werror, -Werror=<name>: then it is an error, "[-Werror=...]"). */
void acc_warning(acc_ctx *cx, acc_warning_id id, const acc_file *f,
                 acc_loc at, const char *fmt, ...) ACC_PRINTF(5, 6);
/* The same on a va_list, for a pass's own wrappers that add its file. */
void acc_verror(acc_ctx *cx, const acc_file *f, acc_loc at,
                const char *fmt, va_list ap) ACC_PRINTF(4, 0);
void acc_vnote(acc_ctx *cx, const acc_file *f, acc_loc at,
               const char *fmt, va_list ap) ACC_PRINTF(4, 0);
/* An error about the whole input (no line). */
void acc_error_file(acc_ctx *cx, const char *fmt, ...) ACC_PRINTF(2, 3);
/* Appends the final "too many errors" note when the cap was reached. */
void acc_diag_finish(acc_ctx *cx);

/* ---- tokens (lexer.re, parse.c) ------------------------------------------ */

/* One `///` line: the text after the slashes (and one space), in the source. */
typedef struct acc_doc {
    acc_loc text;
    struct acc_doc *next;
} acc_doc;

/* What the lexer hands the parser: a slice of the source, no copy. */
typedef struct acc_token {
    const char *s;
    uint32_t len;
    uint32_t off;
    acc_doc *doc;           /* `///` lines just before this token */
} acc_token;

typedef struct acc_lexer {
    acc_ctx *cx;
    const acc_file *file;   /* what it reads, and where its errors are */
    const unsigned char *cur, *lim;
    uint32_t last_end;      /* end of the last token: where EOF is reported */
    bool eof_reported;      /* an error already explains the early end */
    acc_doc *doc_head, *doc_tail;
} acc_lexer;

void acc_lex_init(acc_lexer *lx, acc_ctx *cx, const acc_file *f);
/* The next token's code (a TK_ value from parser.h; 0 at the end). Lexical
 * errors are reported and skipped. */
int acc_lex(acc_lexer *lx, acc_token *tok);

/* "'{'", "identifier", "end of file", ... for a token code. */
const char *acc_token_desc(int code);

/* ---- generated C names (names.c) ------------------------------------------ */

/* The kinds of public C names made for an actor, a message, a struct or
 * enum; one row each in names.c's tables, in the order the collision
 * check records them. */
typedef enum acc_actor_cname {
    ACC_A_REF, ACC_A_REF_SEQ, ACC_A_STATE, ACC_A_TAG_ENUM, ACC_A_SPAWN,
    ACC_A_REF_SELF, ACC_A_TYPE, ACC_A_SPAWN_OPTS, ACC_A_WHEREIS,
    ACC_A_REF_OF, ACC_A_REF_NIL, ACC_A_REF_IS_NIL,
    ACC_A_START_ARGS, ACC_A_ON_START,   /* with a start hook */
    ACC_A_ON_STOP, ACC_A_ON_DOWN, ACC_A_ON_EXIT,    /* with that hook */
    ACC_A_ENCODE_REPLY, ACC_A_DECODE_REPLY,         /* with a request */
    ACC_A_BEHAVIOUR, ACC_A_BEHAVIOUR_DEFAULT, ACC_A_BECOME, /* with behaviours */
    ACC_A_COUNT
} acc_actor_cname;

typedef enum acc_msg_cname {
    ACC_M_TAG, ACC_M_STRUCT, ACC_M_HANDLER, ACC_M_SEND, ACC_M_PUBLISH,
    ACC_M_SEND_AFTER, ACC_M_SEND_EVERY, ACC_M_SEND_CHECKED,
    ACC_M_SEND_MSG,         /* a message with fields only */
    /* a request's only */
    ACC_M_REPLY_STRUCT, ACC_M_REPLY, ACC_M_FN, ACC_M_ASK, ACC_M_ASK_WAIT,
    ACC_M_FORWARD,
    ACC_M_COUNT
} acc_msg_cname;

typedef enum acc_decl_cname {
    ACC_D_TYPE, ACC_D_SEQ,
    ACC_D_COUNT
} acc_decl_cname;

/* How a kind of name is spelled: the owner's C name (an actor's prefix,
 * "bank_Account"; a type's, "bank_Money"), `pre`, the member's own name
 * (a message's, an enum value's; none for the others), `post`. */
typedef struct acc_cname_rule {
    const char *pre, *post;
    const char *what;       /* in diagnostics: "the send function" */
} acc_cname_rule;

extern const acc_cname_rule acc_actor_cnames[ACC_A_COUNT];
extern const acc_cname_rule acc_msg_cnames[ACC_M_COUNT];
extern const acc_cname_rule acc_decl_cnames[ACC_D_COUNT];
extern const acc_cname_rule acc_value_cname;
extern const acc_cname_rule acc_guard_cname;

/* ---- the AST (built by parser.y) ----------------------------------------- */

typedef enum acc_kind {
    ACC_BOOL,
    ACC_I8, ACC_I16, ACC_I32, ACC_I64,
    ACC_U8, ACC_U16, ACC_U32, ACC_U64,
    ACC_F32, ACC_F64,
    ACC_STRING, ACC_BYTES,
    ACC_ADDR,               /* untyped ac_addr */
    ACC_REF,                /* ref<Actor> */
    ACC_NAMED,              /* a struct or an enum */
    ACC_ARRAY,              /* T[N] */
    ACC_SEQ,                /* T[] */
    /* ptr (void *) or ptr<Name> (struct Name *): a handle of the C
     * program's, in state and start arguments only (it means nothing on
     * another node). `target` is Name (len 0: void). */
    ACC_PTR
} acc_kind;

typedef struct acc_name {
    const char *s;          /* into the source; not NUL-terminated */
    uint32_t len;
    uint32_t off;
} acc_name;

struct acc_actor;
struct acc_decl;
struct acc_module;

/* One per field, and one more per array or sequence: the fields of the
 * named types and those of arrays and sequences share their place, which
 * nearly halves it (the AST is most of the check's memory). Only the kind's
 * own fields may be read; a scalar's are all zero. What can be worked out
 * from the rest is not stored (a qualifier's text, an array size's sign):
 * acc_type_qual, acc_type_size_at, acc_type_size_neg. */
typedef struct acc_type {
    acc_kind kind;
    acc_loc at;             /* the whole type */
    union {
        struct {            /* REF, NAMED, PTR */
            acc_loc qual;   /* "mod" of mod.Name (len 0: none) */
            acc_name target;            /* REF: the actor; NAMED: the type */
            union {
                struct acc_actor *actor;    /* REF: resolved by check.c */
                struct acc_decl *decl;      /* NAMED: resolved by check.c */
            };
        };
        struct {            /* ARRAY, SEQ */
            struct acc_type *elem;
            acc_name size_lit;  /* ARRAY: the size as written */
            uint32_t size_from; /* ARRAY: where the size starts, its '-'
                                 * included */
            uint32_t size;      /* ARRAY: checked by check.c */
        };
    };
} acc_type;

/* The qualifier of a REF or NAMED type as a name (s NULL: none): it is in
 * the same source as the target, just before it. */
static inline acc_name acc_type_qual(const acc_type *t)
{
    acc_name n = { NULL, 0, 0 };
    if (t->qual.len > 0) {
        n.s = t->target.s - t->target.off + t->qual.off;
        n.len = t->qual.len;
        n.off = t->qual.off;
    }
    return n;
}

/* An ARRAY's size with its sign, and whether it has a '-'. */
static inline acc_loc acc_type_size_at(const acc_type *t)
{
    acc_loc at = { t->size_from,
                   t->size_lit.off + t->size_lit.len - t->size_from };
    return at;
}

static inline bool acc_type_size_neg(const acc_type *t)
{
    return t->size_from != t->size_lit.off;
}

typedef struct acc_field {
    acc_name name;
    acc_type type;
    acc_doc *doc;
    struct acc_field *next;
} acc_field;

typedef struct acc_message {
    acc_name name;
    acc_doc *doc;
    acc_field *fields;
    uint32_t tag;           /* position in the actor, from 0 */
    bool bad;               /* has a name error: skip in the collision check */
    bool has_parens;        /* `on x();` rather than `on x;` */
    bool has_reply;         /* `on x(...) -> (...);` */
    bool urgent;            /* `on urgent x...;`: ac_priority URGENT */
    acc_field *reply;       /* the reply's fields (may be none) */
    struct acc_actor *actor;    /* whose it is (its C names start with its) */
    struct acc_message *next;
} acc_message;

/* One line of a behaviour block: `on x;` (x's handler in this behaviour
 * is its own, P_<behaviour>_on_x) or one name of `postpone x, y;` (x is
 * stashed while the actor is in the behaviour). */
typedef struct acc_bitem {
    acc_name name;
    bool postpone;
    struct acc_message *msg;    /* resolved by check.c */
    struct acc_bitem *next;
} acc_bitem;

/* `behaviour NAME { ... }`: while the actor is in it, only its `on` lines
 * are handled, its `postpone` lines wait in the stash, and the actor's
 * other messages are unhandled (docs/IDL.md, behaviours). */
typedef struct acc_behaviour {
    acc_name name;
    acc_doc *doc;
    uint32_t index;             /* 1, 2, ...: 0 is the default behaviour */
    bool bad;                   /* a name error: skip in the generators' names */
    acc_bitem *items;
    struct acc_actor *actor;
    struct acc_behaviour *next;
} acc_behaviour;

typedef struct acc_actor {
    acc_name name;
    acc_doc *doc;
    acc_field *state;       /* NULL: no state (also for an empty block) */
    acc_loc state_at;       /* the first `state` keyword, if any */
    uint32_t message_count;
    /* The flags sit together, where they fill a hole the alignment left
     * (a small actor's node is a fifth of what it costs). */
    bool state_seen;
    bool bad;
    bool referenced;        /* some ref<> names it */
    /* Some hook is spelled `hook x`: then every `on x` is a message, the
     * old spellings of the hooks (`on start`, `on stop`) included. */
    bool hook_spelled;
    acc_message *messages, *messages_tail;
    acc_message *start, *stop;  /* lifecycle hooks, or NULL */
    acc_message *down, *exit;   /* system-message hooks, or NULL */
    /* `mailbox N [policy];`, checked by parse.c */
    acc_loc mailbox_at;         /* the keyword; len 0: none given */
    uint32_t mailbox_bound;     /* 0: unbounded */
    int mailbox_overflow;       /* the value of an ac_overflow */
    acc_behaviour *behaviours, *behaviours_tail;    /* NULL: none */
    uint32_t behaviour_count;
    struct acc_module *mod;
    struct acc_actor *next;
} acc_actor;

typedef struct acc_enumerator {
    acc_name name;
    acc_doc *doc;
    bool has_value;
    bool neg;
    acc_name lit;           /* the number, without its sign */
    acc_loc lit_at;         /* the number with its sign */
    int64_t value;          /* set by check.c */
    struct acc_decl *decl;  /* its enum (its C name starts with the enum's) */
    struct acc_enumerator *next;
} acc_enumerator;

typedef enum acc_decl_kind { ACC_STRUCT, ACC_ENUM } acc_decl_kind;

typedef struct acc_decl {
    acc_name name;
    acc_doc *doc;
    acc_field *fields;          /* ACC_STRUCT */
    acc_enumerator *values;     /* ACC_ENUM */
    struct acc_module *mod;
    acc_decl_kind kind;         /* beside `visit`: one 8-byte word for both */
    /* The walks over structs held by value (check.c's, gen_header.c's,
     * gen_codec.c's) keep their path in the structs rather than on the C
     * stack, so that no input can make them recurse: `visit` is the
     * walk's mark (check.c: 0 new, 1 on the path, 2 done), `up` the
     * struct the walk came from and `at` the next field to look at. */
    int visit;
    struct acc_decl *up;
    const acc_field *at;
    /* check.c, once a struct is done: its C size and alignment (an
     * estimate that saturates at 4 times the size limit, so 32 bits hold
     * it) and whether it holds variable-length data, so that no pass
     * computes them twice. */
    uint32_t size, align;
    bool has_var;
    bool bad;
    /* gen_codec.c, for the structs messages use: `recursive`, it holds
     * itself (through sequences, maybe through others); `deep`, it holds a
     * recursive struct or is one. Their codec helpers count the nesting. */
    bool recursive, deep;
    struct acc_decl *next;
} acc_decl;

typedef struct acc_import {
    acc_loc at;                 /* the string literal */
    const char *path;           /* as written, without the quotes */
    struct acc_module *mod;     /* resolved by compile.c */
    bool used;
    struct acc_import *next;
} acc_import;

typedef struct acc_module {
    bool has_name;
    acc_name name;
    acc_doc *doc;
    bool bad;
    acc_file file;
    acc_actor *actors, *actors_tail;
    acc_decl *decls, *decls_tail;       /* structs and enums, in order */
    acc_import *imports, *imports_tail;
    /* load.c */
    bool loading;               /* on the chain of imports being loaded */
    /* No error had been reported when it finished loading: it and all it
     * imports are whole, so the check pass may look at it. */
    bool whole;
    const char *canon;          /* canonical path of its file */
    const char *found;          /* the path it was opened by */
    struct acc_module *next_opened;     /* acc_graph.opened */
    struct acc_module *next_in_order;   /* acc_graph.first */
    acc_map scope;              /* check.c: top-level names */
    bool scope_ready;
    uint32_t mark;              /* ast.c: the walk's visited mark */
    /* ast.c: the walk's path, kept here rather than on the C stack (a
     * chain of imports may be as long as there are files): the module it
     * came from and the next import to follow. */
    struct acc_module *walk_up;
    struct acc_import *walk_at;
} acc_module;

/* ---- generated C names, spelled (names.c) ------------------------------------ */

/* One generated name as its parts, spelled on demand and never stored (a
 * dozen names a message, kept for the whole check, were most of its
 * memory): the module's name, '_', the owner's (an actor's, struct's or
 * enum's), the rule's `pre`, the member's (a message's or enum value's;
 * len 0: none), the rule's `post`. The include guard is the module's name
 * and `post`, upper-cased. */
typedef struct acc_cname {
    const struct acc_module *mod;
    acc_name owner;
    const acc_cname_rule *rule;
    acc_name member;
    bool guard;
} acc_cname;

/* The parts of row k of an owner's names; false when the owner has no
 * such name (a hook it does not declare, a request's name of a plain
 * message): then none is generated, and none is checked. */
bool acc_actor_cname_of(const struct acc_actor *a, acc_actor_cname k,
                        acc_cname *out);
bool acc_msg_cname_of(const struct acc_message *m, acc_msg_cname k,
                      acc_cname *out);
void acc_decl_cname_of(const struct acc_decl *d, acc_decl_cname k,
                       acc_cname *out);
void acc_value_cname_of(const struct acc_enumerator *v, acc_cname *out);
void acc_guard_cname_of(const struct acc_module *m, acc_cname *out);
/* The name's length, and the name with its NUL written to out (room for
 * acc_cname_len + 1 bytes). */
size_t acc_cname_len(const acc_cname *c);
void acc_cname_write(const acc_cname *c, char *out);
/* The name, spelled into the arena. */
const char *acc_cname_str(acc_arena *ar, const acc_cname *c);
/* The same for the generators, spelled into their arena (released with
 * what they make for a message, struct or actor): NULL when not made. */
struct acc_gen;
const char *acc_actor_cstr(struct acc_gen *g, const acc_actor *a,
                           acc_actor_cname k);
const char *acc_msg_cstr(struct acc_gen *g, const acc_message *m,
                         acc_msg_cname k);
const char *acc_decl_cstr(struct acc_gen *g, const acc_decl *d,
                          acc_decl_cname k);
const char *acc_value_cstr(struct acc_gen *g, const acc_enumerator *v);
const char *acc_guard_cstr(struct acc_gen *g, const acc_module *m);

/* ast.c: calls fn on `m` and every module it imports, directly or not,
 * once each, imports first (the order the loader finished them in). fn
 * may not start another such walk: the walk keeps its path in the
 * modules. */
void acc_each_module(acc_ctx *cx, acc_module *m,
                     void (*fn)(acc_module *, void *), void *arg);

/* ---- the parser (parser.y, driven by parse.c) ------------------------------ */

typedef struct acc_parser {
    acc_ctx *cx;
    acc_module *mod;        /* being built; its file is where errors are */
    const acc_lexer *lx;
    acc_token tok;          /* the token being fed */
} acc_parser;

/* What grammar rules pass around. */
typedef struct acc_field_list {
    acc_field *head, *tail;
} acc_field_list;

typedef struct acc_enum_list {
    acc_enumerator *head, *tail;
} acc_enum_list;

typedef struct acc_bitem_list {
    acc_bitem *head, *tail;
} acc_bitem_list;

typedef struct acc_type_tok {
    acc_type type;
    acc_doc *doc;           /* the doc of the type's first token */
} acc_type_tok;

typedef struct acc_int_tok {
    acc_token tok;
    bool neg;
    acc_token first;        /* the '-' or the number */
} acc_int_tok;

/* In the lemon-generated parser.c. */
void *acc_lemon_new(acc_arena *a);
/* Feeds one token (0: the end). */
void acc_lemon_feed(void *parser, int code, acc_token tok, acc_parser *ps);
/* Whether the parser, as it stands, would take token `code` next. */
bool acc_lemon_accepts(void *parser, int code);

/* Called by the grammar (parse.c). */
void acc_syntax_error(acc_parser *ps, int found, const acc_token *tok,
                      const int *expected, int count);
acc_actor *acc_ast_body(acc_parser *ps);
void acc_ast_actor(acc_parser *ps, acc_actor *a, const acc_token *kw,
                   const acc_token *name);
void acc_ast_state(acc_parser *ps, acc_actor *a, const acc_token *kw,
                   acc_field *fields);
void acc_ast_message(acc_parser *ps, acc_actor *a, const acc_token *kw,
                     const acc_token *name, acc_field *fields, bool parens);
void acc_ast_hook(acc_parser *ps, acc_actor *a, const acc_token *kw,
                  const acc_token *name, acc_field *fields);
void acc_ast_behaviour(acc_parser *ps, acc_actor *a, const acc_token *kw,
                       const acc_token *name, acc_bitem *items);
void acc_ast_bitem(acc_parser *ps, acc_bitem_list *list,
                   const acc_token *name, bool postpone);
/* Appends `more` to `list` (a `postpone` line's names). */
void acc_ast_bitems_join(acc_bitem_list *list, const acc_bitem_list *more);
void acc_ast_mailbox(acc_parser *ps, acc_actor *a, const acc_token *kw,
                     const acc_int_tok *bound, const acc_token *policy);
void acc_ast_reply(acc_actor *a, acc_field *fields);
void acc_ast_priority(acc_parser *ps, acc_actor *a,
                      const acc_token *priority);
void acc_ast_field(acc_parser *ps, acc_field_list *list,
                   const acc_type_tok *type, const acc_token *name);
acc_type_tok acc_ast_type(acc_kind kind, const acc_token *first,
                          const acc_token *last, const acc_token *qual,
                          const acc_token *target);
acc_type_tok acc_ast_array(acc_parser *ps, const acc_type_tok *elem,
                           const acc_token *last, const acc_int_tok *size);
void acc_ast_struct(acc_parser *ps, const acc_token *kw, const acc_token *name,
                    acc_field *fields);
void acc_ast_enum(acc_parser *ps, const acc_token *kw, const acc_token *name,
                  acc_enumerator *values);
void acc_ast_enumerator(acc_parser *ps, acc_enum_list *list,
                        const acc_token *name, const acc_int_tok *value);
void acc_ast_import(acc_parser *ps, const acc_token *kw, const acc_token *path);

/* ---- passes --------------------------------------------------------------- */

/* What the loader hands the later passes: every module parsed once, each
 * import's `mod` resolved unless an error about it was reported. */
typedef struct acc_graph {
    acc_module *main;       /* the module being compiled */
    /* Every module, each after the modules it imports (so main is last),
     * linked by next_in_order: the order they are checked in. */
    acc_module *first;
    /* The imported modules in the order their files were opened, linked
     * by next_opened: the depfile's order. */
    acc_module *opened;
} acc_graph;

/* load.c: loads `main` (its file already read: filename, src, len) and
 * every module it imports, directly or not. */
void acc_load(acc_ctx *cx, acc_module *main, acc_graph *out);

/* parse.c: lexes and parses the file of `mod` into it. */
void acc_parse(acc_ctx *cx, acc_module *mod);

/* check.c: resolves names and checks every rule on each whole module of
 * the graph, in its order, until one fails (a module is checked against
 * imports that passed). The warnings concern the main module only, the
 * file being compiled. */
void acc_check(acc_ctx *cx, const acc_graph *graph);


/* cnames.c: the rules on C identifiers. */
/* Why `name` may not appear as a bare C identifier, or NULL if it may. */
const char *acc_c_reserved(const char *name, size_t len);
/* Whether `name` is a C or C++ keyword (or a keyword-like macro). */
const char *acc_c_keyword(const char *name, size_t len);
/* Levenshtein distance, capped: returns cap + 1 when larger. */
size_t acc_edit_distance(const char *a, size_t an, const char *b, size_t bn,
                         size_t cap);

/* Integer literal: decimal or 0x hex. False when malformed; *overflow when
 * it does not fit in 64 bits. */
bool acc_parse_int(const char *s, size_t len, uint64_t *value, bool *overflow);

/* Whether the type holds variable-length data (string, bytes, sequence);
 * whether any of the fields does. */
bool acc_type_has_var(const acc_type *t);
bool acc_fields_have_var(const acc_field *f);
/* The struct of the field's own module that it holds by value (directly
 * or in fixed arrays), or NULL: the edges of the walks over structs held
 * by value (check.c's layout, gen_header.c's definition order). */
acc_decl *acc_field_value_struct(const acc_field *f, const acc_module *mod);

/* gen_util.c: shared by both generators. */
typedef struct acc_gen {
    acc_ctx *cx;
    const acc_module *mod;
    const char *input_name;     /* for the banner: base name of the input */
    const char *header_name;    /* "bank.actor.h" */
    acc_buf *out;
} acc_gen;

void acc_gen_banner(acc_gen *g);
/* A field's C name: its own, or with '_' added when it is a C or C++
 * keyword (`class` is `class_`). */
const char *acc_gen_field(acc_gen *g, const acc_field *f);
/* A message's name where it stands alone in C (the dispatch union's
 * member): with '_' added when it is a C or C++ keyword, as a field's. */
const char *acc_gen_msg_member(acc_gen *g, const struct acc_message *m);
/* The names of behaviour b (not in the collision check, as the typed
 * asks' are not): its constant "m_A_BEHAVIOUR_busy" and the handler
 * "m_A_busy_on_x" of its line `on x;`. */
const char *acc_gen_behaviour_const(acc_gen *g, const acc_behaviour *b);
const char *acc_gen_behaviour_handler(acc_gen *g, const acc_behaviour *b,
                                      const acc_message *m);
/* Whether the actor's state struct is defined: it has state fields, or
 * behaviours (the current one is kept in the state). */
bool acc_gen_has_state(const acc_actor *a);
/* The C type of a field type that is not an array, e.g. "uint64_t",
 * "bank_Teller_ref", "ac_string", "ac_u32_seq". */
const char *acc_gen_ctype(acc_gen *g, const acc_type *t);
/* A C declaration of `name` with type `t` ("uint8_t key[16]"); as a
 * parameter, arrays are const. */
const char *acc_gen_cdecl(acc_gen *g, const acc_type *t, const char *name,
                          bool param);
/* A doc comment block from `///` lines, indented by `indent` spaces. */
void acc_gen_doc(acc_gen *g, const acc_doc *doc, int indent);
/* A rule line naming a section ("---- actor Name ----"), 79 columns. */
void acc_gen_section(acc_gen *g, const char *what, const acc_name *n);
/* One line of code (the newline is added), wrapped after commas to fit in
 * 79 columns. */
void acc_gen_line(acc_gen *g, const char *fmt, ...) ACC_PRINTF(2, 3);
/* head + ", T name" per field (arrays const) + extra + ")": a parameter
 * list ending in the fields of a message, reply or start hook. */
const char *acc_gen_params(acc_gen *g, const char *head, const acc_field *f,
                           const char *extra);
/* "int m_A_send_x(ac_ctx *cx, m_A_ref to, uint64_t n)": the sender of a
 * message, declared in the header and defined in the source. */
const char *acc_gen_send_decl(acc_gen *g, const acc_actor *a,
                              const acc_message *m);
/* The same for m_A_send_x_checked. */
const char *acc_gen_send_checked_decl(acc_gen *g, const acc_actor *a,
                                      const acc_message *m);
/* "int m_A_send_x_msg(ac_ctx *cx, m_A_ref to, const m_A_x *msg)": the
 * same send with the fields by name, for a message that has fields. */
const char *acc_gen_send_msg_decl(acc_gen *g, const acc_actor *a,
                                  const acc_message *m);
/* For a message with a reply: "int m_A_reply_x(ac_ctx *cx, const
 * ac_reply_to *to, ...reply fields)", "int m_A_ask_x(ac_ctx *cx, m_A_ref
 * to, ...fields, uint32_t timeout_ms, m_A_x_fn fn, void *arg)" and "int
 * m_A_ask_x_wait(ac_ctx *cx, m_A_ref to, ...fields, int timeout_ms,
 * m_A_x_reply **out)". */
const char *acc_gen_reply_decl(acc_gen *g, const acc_message *m);
const char *acc_gen_ask_decl(acc_gen *g, const acc_actor *a,
                             const acc_message *m, bool wait);
/* "int m_A_forward_x(ac_ctx *cx, m_A_ref to, const m_A_x *msg)": a
 * request sent on with its reply_to. */
const char *acc_gen_forward_decl(acc_gen *g, const acc_message *m);
/* The typed ask of request m (of its actor B) made by actor `asker` of
 * this module: its continuation type "m_A_ask_B_x_fn" (with `fn_type`),
 * else "int m_A_ask_B_x(ac_ctx *cx, m_B_ref to, ...fields, uint32_t
 * timeout_ms, m_A_ask_B_x_fn fn, const void *ctx, size_t ctx_size)". */
const char *acc_gen_typed_ask_name(acc_gen *g, const acc_actor *asker,
                                   const acc_message *m, bool fn_type);
const char *acc_gen_typed_ask_decl(acc_gen *g, const acc_actor *asker,
                                   const acc_message *m);
/* "int m_A_spawn(ac_ctx *cx, m_A_ref *out, ...start fields)", or with
 * `opts` "int m_A_spawn_opts(ac_ctx *cx, const ac_spawn_options *opts,
 * m_A_ref *out, ...start fields)". */
const char *acc_gen_spawn_decl(acc_gen *g, const acc_actor *a, bool opts);
/* The typed service wrappers of a message: "int m_A_publish_x(ac_ctx *cx,
 * const char *group, ...fields)" and "int m_A_send_x_after(ac_ctx *cx,
 * m_A_ref to, uint32_t delay_ms, ...fields, ac_timer_id *timer_id)" (with
 * `every`: m_A_send_x_every, period_ms). */
const char *acc_gen_publish_decl(acc_gen *g, const acc_message *m);
const char *acc_gen_timer_decl(acc_gen *g, const acc_actor *a,
                               const acc_message *m, bool every);

void acc_gen_header(acc_gen *g);
void acc_gen_source(acc_gen *g);
/* gen_graph.c: the Graphviz digraph of the actors of every module of the
 * graph (acc_options.graph). False when the input would take the walk
 * past its budget (nothing sensible is left to draw then). */
bool acc_gen_graph(acc_gen *g, const acc_graph *graph);

/* gen_codec.c, for gen_source.c: the codec helpers of the structs and
 * enums the module's messages use; an actor's message and reply codecs
 * and its descriptor's copy; and the size pass of `fields` (the struct at
 * `owner`, "s_->", or "" for parameters named like the fields), which
 * adds their variable-length data to the size_t lvalue `at`. */
void acc_gen_type_codecs(acc_gen *g);
void acc_gen_actor_codecs(acc_gen *g, const acc_actor *a);
void acc_gen_tail(acc_gen *g, const acc_field *fields, const char *owner,
                  const char *at, int depth);

#endif /* ACC_H */
