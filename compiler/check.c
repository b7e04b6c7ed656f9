/*
 * check.c — the check pass, over each module the loader left, imports
 * before the modules that import them: resolves type names and ref<Actor>
 * (also `mod.Name` through an import), rejects duplicate names (with a
 * note at the first), names C
 * cannot take, array sizes and enum values out of range, repeated enum
 * values, structs that contain themselves by value, and any two generated C
 * identifiers that would be the same — in this module or across the modules
 * it imports. Then the warnings: unused imports, and actors whose handlers
 * no other actor can reach (see docs/IDL.md). Marks bad declarations so
 * that one mistake is not reported again as a collision.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "acc.h"

/* The largest fixed part of a message or struct, and of one array. */
#define MAX_FIXED ((uint64_t)1 << 24)
#define MAX_ARRAY 65535u

typedef struct checker {
    acc_ctx *cx;
    acc_module *mod;        /* the module being checked */
    acc_map scope;          /* name -> struct, enum or actor (scope_entry) */
} checker;

/* Errors and their notes about the module being checked are in its file;
 * a note about another module names that module's file itself. */
static void error(checker *ck, acc_loc at, const char *fmt, ...)
    ACC_PRINTF(3, 4);
static void note(checker *ck, acc_loc at, const char *fmt, ...)
    ACC_PRINTF(3, 4);

static void error(checker *ck, acc_loc at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    acc_verror(ck->cx, &ck->mod->file, at, fmt, ap);
    va_end(ap);
}

static void note(checker *ck, acc_loc at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    acc_vnote(ck->cx, &ck->mod->file, at, fmt, ap);
    va_end(ap);
}

typedef struct scope_entry {
    acc_decl *decl;         /* or */
    acc_actor *actor;
} scope_entry;

/* The scope's value is the declaration itself, an actor's with its low
 * bit set (the arena aligns both to 8): no entry is allocated for it. */
static void *scope_value(acc_decl *d, acc_actor *a)
{
    return d != NULL ? (void *)d : (void *)((uintptr_t)a | 1);
}

static scope_entry scope_entry_of(void *v)
{
    scope_entry e = { NULL, NULL };
    if ((uintptr_t)v & 1)
        e.actor = (acc_actor *)((uintptr_t)v & ~(uintptr_t)1);
    else
        e.decl = v;
    return e;
}

static acc_loc loc_of(acc_name n)
{
    acc_loc at = { n.off, n.len };
    return at;
}

static bool is(acc_name n, const char *s)
{
    return strlen(s) == n.len && memcmp(n.s, s, n.len) == 0;
}

static bool same(acc_name a, acc_name b)
{
    return a.len == b.len && memcmp(a.s, b.s, a.len) == 0;
}

/* Every name: not a keyword. Bare names (module, message, field) also keep
 * clear of the standard headers' and the runtime's names. */
static bool check_name(checker *ck, acc_name n, const char *what, bool bare)
{
    const char *why = bare ? acc_c_reserved(n.s, n.len)
                           : acc_c_keyword(n.s, n.len);
    if (why == NULL)
        return true;
    error(ck, loc_of(n), "'%.*s' cannot be used as %s name: it is %s",
          (int)n.len, n.s, what, why);
    return false;
}

static const char *const builtin_types[] = {
    "bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f32",
    "f64", "string", "bytes", "addr", "ref", "ptr",
};

/* Type and actor names: not a keyword, not a built-in type. */
static bool check_type_name(checker *ck, acc_name n, const char *what)
{
    for (size_t i = 0; i < sizeof(builtin_types) / sizeof(builtin_types[0]); i++)
        if (is(n, builtin_types[i])) {
            error(ck, loc_of(n), "'%.*s' cannot be used as %s name: "
                  "it is a built-in type", (int)n.len, n.s, what);
            return false;
        }
    return check_name(ck, n, what, false);
}

/* ---- the module and its imports --------------------------------------------- */

typedef struct same_name {
    checker *ck;
    bool reported;
} same_name;

static void find_same_module(acc_module *m, void *arg)
{
    same_name *sn = arg;
    acc_module *mod = sn->ck->mod;
    if (m == mod || sn->reported || !m->has_name || !same(m->name, mod->name))
        return;
    error(sn->ck, loc_of(mod->name), "module '%.*s' is also the "
          "module of '%s': each file needs a module of its own",
          (int)mod->name.len, mod->name.s, m->file.filename);
    acc_note(sn->ck->cx, &m->file, loc_of(m->name), "'%.*s' is declared "
             "here", (int)m->name.len, m->name.s);
    sn->reported = true;
    mod->bad = true;
}

static void check_module(checker *ck)
{
    acc_module *mod = ck->mod;
    if (!check_name(ck, mod->name, "a module", false)) {
        mod->bad = true;
    } else if (is(mod->name, "ac") || is(mod->name, "AC")) {
        error(ck, loc_of(mod->name),
              "'%.*s' cannot be used as a module name: the prefix "
              "'%.*s_' is reserved for the actorc runtime",
              (int)mod->name.len, mod->name.s,
              (int)mod->name.len, mod->name.s);
        mod->bad = true;
    }
    same_name sn = { ck, false };
    acc_each_module(ck->cx, mod, find_same_module, &sn);
}

/* ---- the scope of top-level names ------------------------------------------- */

static const char *decl_what(const acc_decl *d)
{
    return d->kind == ACC_STRUCT ? "struct" : "enum";
}

static void declare(checker *ck, acc_name n, acc_decl *d, acc_actor *a)
{
    acc_map_put(&ck->scope, n.s, n.len, scope_value(d, a));
}

/* Reports a second declaration of a name, or a name C cannot take. */
static void check_declared(checker *ck, acc_name n, acc_decl *d, acc_actor *a)
{
    scope_entry e = scope_entry_of(acc_map_get(&ck->scope, n.s, n.len));
    const scope_entry *first = &e;
    bool ok;
    if (first->decl != d || first->actor != a) {
        acc_name fn = first->decl ? first->decl->name : first->actor->name;
        const char *what = d ? decl_what(d) : "actor";
        const char *fwhat = first->decl ? decl_what(first->decl) : "actor";
        if (strcmp(what, fwhat) == 0)
            error(ck, loc_of(n), "duplicate %s '%.*s'", what,
                  (int)n.len, n.s);
        else
            error(ck, loc_of(n), "duplicate name '%.*s': %s %s has "
                  "it already", (int)n.len, n.s,
                  fwhat[0] == 'a' || fwhat[0] == 'e' ? "an" : "a", fwhat);
        note(ck, loc_of(fn), "'%.*s' was first declared here",
             (int)fn.len, fn.s);
        ok = false;
    } else {
        ok = check_type_name(ck, n, d ? (d->kind == ACC_STRUCT ? "a struct"
                                                               : "an enum")
                                      : "an actor");
    }
    if (!ok) {
        if (d)
            d->bad = true;
        else
            a->bad = true;
    }
}

/* The scope a qualified or plain name is looked up in; NULL (reported)
 * when the qualifier names no import. */
static acc_module *scope_of(checker *ck, acc_name qual)
{
    if (qual.len == 0)
        return ck->mod;
    for (acc_import *im = ck->mod->imports; im != NULL; im = im->next)
        if (im->mod != NULL && same(im->mod->name, qual)) {
            im->used = true;
            return im->mod;
        }
    const acc_import *best = NULL;
    size_t cap = qual.len / 3 > 1 ? qual.len / 3 : 1, best_d = cap + 1;
    for (acc_import *im = ck->mod->imports; im != NULL; im = im->next) {
        if (im->mod == NULL)
            continue;
        size_t d = acc_edit_distance(qual.s, qual.len, im->mod->name.s,
                                     im->mod->name.len, cap);
        if (d < best_d) {
            best = im;
            best_d = d;
        }
    }
    if (same(qual, ck->mod->name))
        return ck->mod;
    if (best != NULL)
        error(ck, loc_of(qual), "unknown module '%.*s'; did you mean "
              "'%.*s'?", (int)qual.len, qual.s, (int)best->mod->name.len,
              best->mod->name.s);
    else
        error(ck, loc_of(qual), "unknown module '%.*s' (no import "
              "declares it)", (int)qual.len, qual.s);
    return NULL;
}

/* What `n` names in m's scope; NULL when nothing (or m's scope is not
 * made: a module that failed its check). */
static const scope_entry *lookup(acc_module *m, acc_name n,
                                 scope_entry *out)
{
    void *v = m->scope_ready ? acc_map_get(&m->scope, n.s, n.len) : NULL;
    if (v == NULL)
        return NULL;
    *out = scope_entry_of(v);
    return out;
}

/* "did you mean": the closest name of the wanted kind within a third of
 * its length (at least one edit). */
static acc_name closest(acc_module *m, acc_name n, bool actors)
{
    acc_name best = { NULL, 0, 0 };
    size_t cap = n.len / 3 > 1 ? n.len / 3 : 1, best_d = cap + 1;
    if (actors) {
        for (const acc_actor *a = m->actors; a != NULL; a = a->next) {
            size_t d = acc_edit_distance(n.s, n.len, a->name.s, a->name.len, cap);
            if (d < best_d) {
                best = a->name;
                best_d = d;
            }
        }
    } else {
        for (const acc_decl *t = m->decls; t != NULL; t = t->next) {
            size_t d = acc_edit_distance(n.s, n.len, t->name.s, t->name.len, cap);
            if (d < best_d) {
                best = t->name;
                best_d = d;
            }
        }
    }
    return best;
}

/* Other languages' names for the built-in types (C's, C++'s, Rust's,
 * Go's, protobuf's, Java's), for "did you mean": someone new writes the
 * ones they know. */
static const char *const foreign_types[][2] = {
    { "int8", "i8" }, { "int16", "i16" }, { "int32", "i32" },
    { "int64", "i64" }, { "uint8", "u8" }, { "uint16", "u16" },
    { "uint32", "u32" }, { "uint64", "u64" }, { "int8_t", "i8" },
    { "int16_t", "i16" }, { "int32_t", "i32" }, { "int64_t", "i64" },
    { "uint8_t", "u8" }, { "uint16_t", "u16" }, { "uint32_t", "u32" },
    { "uint64_t", "u64" }, { "sint32", "i32" }, { "sint64", "i64" },
    { "fixed32", "u32" }, { "fixed64", "u64" }, { "sfixed32", "i32" },
    { "sfixed64", "i64" }, { "int", "i32" }, { "uint", "u32" },
    { "unsigned", "u32" }, { "short", "i16" }, { "long", "i64" },
    { "char", "u8" }, { "byte", "u8" }, { "ubyte", "u8" },
    { "sbyte", "i8" }, { "usize", "u64" }, { "isize", "i64" },
    { "size_t", "u64" }, { "float", "f32" }, { "float32", "f32" },
    { "double", "f64" }, { "float64", "f64" }, { "boolean", "bool" },
    { "Boolean", "bool" }, { "string_view", "string" }, { "str", "string" },
    { "String", "string" }, { "text", "string" }, { "blob", "bytes" },
    { "address", "addr" },
};

static const char *foreign_type(acc_name n)
{
    for (size_t i = 0; i < sizeof(foreign_types) / sizeof(foreign_types[0]);
         i++)
        if (is(n, foreign_types[i][0]))
            return foreign_types[i][1];
    return NULL;
}

/* The built-in type `n` is a misspelling of (`strng`), or NULL. */
static const char *closest_builtin(acc_name n)
{
    const char *best = NULL;
    size_t cap = n.len / 3 > 1 ? n.len / 3 : 1, best_d = cap + 1;
    for (size_t i = 0; i < sizeof(builtin_types) / sizeof(builtin_types[0]);
         i++) {
        size_t d = acc_edit_distance(n.s, n.len, builtin_types[i],
                                     strlen(builtin_types[i]), cap);
        if (d < best_d && d < n.len) {
            best = builtin_types[i];
            best_d = d;
        }
    }
    return best;
}

static void unknown(checker *ck, acc_type *t, acc_module *m, bool actor)
{
    const char *what = actor ? "actor" : "type";
    acc_name n = t->target, qual = acc_type_qual(t);
    const char *builtin = !actor && qual.len == 0 ? foreign_type(n) : NULL;
    if (builtin != NULL) {
        error(ck, loc_of(n), "unknown type '%.*s'; did you mean '%s'?",
              (int)n.len, n.s, builtin);
        return;
    }
    acc_name near = closest(m, n, actor);
    acc_module *in = NULL;
    /* Declared in an import: suggest the qualified name. */
    if (near.s == NULL && qual.len == 0)
        for (acc_import *im = ck->mod->imports; im != NULL; im = im->next) {
            scope_entry se;
            const scope_entry *e = im->mod ? lookup(im->mod, n, &se) : NULL;
            if (e != NULL && (actor ? e->actor != NULL : e->decl != NULL)) {
                in = im->mod;
                break;
            }
        }
    if (qual.len > 0 && near.s != NULL)
        error(ck, loc_of(n), "unknown %s '%.*s.%.*s'; did you mean "
              "'%.*s.%.*s'?", what, (int)qual.len, qual.s,
              (int)n.len, n.s, (int)qual.len, qual.s,
              (int)near.len, near.s);
    else if (near.s != NULL)
        error(ck, loc_of(n), "unknown %s '%.*s'; did you mean "
              "'%.*s'?", what, (int)n.len, n.s, (int)near.len, near.s);
    else if (in != NULL)
        error(ck, loc_of(n), "unknown %s '%.*s'; did you mean "
              "'%.*s.%.*s'?", what, (int)n.len, n.s, (int)in->name.len,
              in->name.s, (int)n.len, n.s);
    else if (qual.len > 0)
        error(ck, loc_of(n), "unknown %s '%.*s.%.*s'", what,
              (int)qual.len, qual.s, (int)n.len, n.s);
    else if ((builtin = actor ? NULL : closest_builtin(n)) != NULL)
        error(ck, loc_of(n), "unknown type '%.*s'; did you mean '%s'?",
              (int)n.len, n.s, builtin);
    else
        error(ck, loc_of(n), "unknown %s '%.*s'", what, (int)n.len,
              n.s);
}

/* ---- types ------------------------------------------------------------------- */

static void check_array_size(checker *ck, acc_type *t)
{
    uint64_t v;
    bool overflow;
    acc_name lit = t->size_lit;
    if (!acc_parse_int(lit.s, lit.len, &v, &overflow)) {
        error(ck, loc_of(lit), "invalid integer literal '%.*s'",
              (int)lit.len, lit.s);
    } else if (!overflow && (v == 0 || acc_type_size_neg(t))) {
        error(ck, acc_type_size_at(t), "array size must be positive, not "
              "%s%.*s", acc_type_size_neg(t) && v != 0 ? "-" : "",
              (int)lit.len, lit.s);
    } else if (overflow || v > MAX_ARRAY) {
        error(ck, acc_type_size_at(t), "array size %s%.*s is out of "
              "range (1..%u)", acc_type_size_neg(t) ? "-" : "",
              (int)lit.len, lit.s, MAX_ARRAY);
    } else {
        t->size = (uint32_t)v;
        return;
    }
    t->size = 1;
}

static void resolve(checker *ck, acc_type *t)
{
    switch (t->kind) {
    case ACC_REF: {
        acc_module *m = scope_of(ck, acc_type_qual(t));
        if (m == NULL)
            return;
        scope_entry se;
        const scope_entry *e = lookup(m, t->target, &se);
        if (e != NULL && e->actor != NULL) {
            t->actor = e->actor;
            t->actor->referenced = true;
        } else if (e != NULL) {
            error(ck, loc_of(t->target), "'%.*s' is a %s, not an "
                  "actor", (int)t->target.len, t->target.s,
                  decl_what(e->decl));
        } else {
            unknown(ck, t, m, true);
        }
        return;
    }
    case ACC_NAMED: {
        acc_module *m = scope_of(ck, acc_type_qual(t));
        if (m == NULL)
            return;
        scope_entry se;
        const scope_entry *e = lookup(m, t->target, &se);
        if (e != NULL && e->decl != NULL)
            t->decl = e->decl;
        else if (e != NULL)
            error(ck, loc_of(t->target), "'%.*s' is an actor, not a "
                  "type; did you mean 'ref<%.*s>'?", (int)t->target.len,
                  t->target.s, (int)t->target.len, t->target.s);
        else
            unknown(ck, t, m, false);
        return;
    }
    case ACC_PTR:
        /* ptr<Name> is `struct Name *`: Name must be a struct tag C can
         * take (the lexer already keeps out the reserved spellings). */
        if (t->target.len > 0 && acc_c_keyword(t->target.s, t->target.len))
            error(ck, loc_of(t->target), "'ptr<%.*s>' would be 'struct "
                  "%.*s *', and '%.*s' is %s: name a struct (ptr<Node> is "
                  "struct Node *) or use 'ptr' (void *)",
                  (int)t->target.len, t->target.s, (int)t->target.len,
                  t->target.s, (int)t->target.len, t->target.s,
                  acc_c_keyword(t->target.s, t->target.len));
        return;
    case ACC_ARRAY:
    case ACC_SEQ:
        if (t->elem->kind == ACC_PTR) {
            error(ck, t->at, "a ptr cannot be %s element: hold the "
                  "pointers in memory of your own, behind one ptr",
                  t->kind == ACC_ARRAY ? "an array" : "a sequence");
            t->elem->kind = ACC_U8;
        } else if (t->elem->kind == ACC_ARRAY || t->elem->kind == ACC_SEQ) {
            error(ck, t->at, "%s of arrays or sequences are not "
                  "supported: wrap the inner one in a struct",
                  t->kind == ACC_ARRAY ? "arrays" : "sequences");
            t->elem->kind = ACC_U8;
        } else {
            resolve(ck, t->elem);
        }
        if (t->kind == ACC_ARRAY)
            check_array_size(ck, t);
        return;
    default:
        return;
    }
}

/* The fields of a struct, a message, a start hook or an actor's state
 * (`where` says which). `params` names the generated function's own
 * parameters, which a field may not take. */
/* A parameter of a generated function, which a field of the same name
 * would shadow (its value would never reach the message). */
typedef struct param {
    const char *name;
    const char *fn;         /* "send", "spawn", ... */
} param;

/* The first field before `f` named as it is, or f. A short list is
 * searched; a long one is put in a map (made on its ninth field), so that
 * neither the common case pays for a map nor a long list for a search. */
static acc_field *first_named(checker *ck, acc_map *seen, acc_field *fields,
                              acc_field *f, size_t index)
{
    enum { SEARCHED = 8 };
    if (index < SEARCHED) {
        for (acc_field *p = fields; p != f; p = p->next)
            if (same(p->name, f->name))
                return p;
        return f;
    }
    if (index == SEARCHED) {
        acc_map_init(seen, &ck->cx->arena);
        for (acc_field *p = fields; p != f; p = p->next)
            acc_map_put(seen, p->name.s, p->name.len, p);
    }
    return acc_map_put(seen, f->name.s, f->name.len, f);
}

/* A ptr is an address in this process: it may sit in an actor's state
 * and in its start arguments (spawn is always local), never in what may
 * travel to another node (a message, a reply, a struct: structs go in
 * messages). */
static void refuse_handles(checker *ck, const acc_field *fields,
                           const char *where)
{
    for (const acc_field *f = fields; f != NULL; f = f->next)
        if (f->type.kind == ACC_PTR)
            error(ck, f->type.at, "'%.*s' cannot be a ptr in %s: it may "
                  "travel to another node, where this process's pointers "
                  "mean nothing; a ptr may be a state field or a start "
                  "argument",
                  (int)f->name.len, f->name.s, where);
}

/* `where` and `owner` say whose fields they are ("message" and its name),
 * spelled out only in an error. */
static void check_fields(checker *ck, acc_field *fields, const char *where,
                         acc_name owner, const param *params,
                         const char *kind)
{
    /* The map of a long list goes once the list is checked: kept, the
     * maps of many long parameter lists were half the check's memory.
     * Nothing else here allocates in the arena (diagnostics are not in
     * it), and no map made before is grown. */
    acc_arena_mark mk = acc_arena_mark_get(&ck->cx->arena);
    acc_map seen;
    size_t index = 0;
    for (acc_field *f = fields; f != NULL; f = f->next, index++) {
        acc_field *first = first_named(ck, &seen, fields, f, index);
        if (first != f) {
            error(ck, loc_of(f->name), "duplicate field '%.*s' in %s '%.*s'",
                  (int)f->name.len, f->name.s, where, (int)owner.len,
                  owner.s);
            note(ck, loc_of(first->name),
                 "'%.*s' was first declared here",
                 (int)first->name.len, first->name.s);
        } else if (acc_c_keyword(f->name.s, f->name.len) != NULL) {
            /* Spelled `class_` in C (acc_gen_field), as protoc and flatc
             * do: no name written can end in '_', so none can clash. */
        } else if (check_name(ck, f->name, "a field", true)) {
            for (int i = 0; params != NULL && params[i].name != NULL; i++)
                if (is(f->name, params[i].name)) {
                    error(ck, loc_of(f->name), "'%.*s' cannot be used "
                          "as a %s field name: it is a parameter of the "
                          "generated %s function", (int)f->name.len,
                          f->name.s, kind, params[i].fn);
                    break;
                }
        }
        resolve(ck, &f->type);
    }
    acc_arena_release(&ck->cx->arena, mk);
}

static void check_enum(checker *ck, acc_decl *d)
{
    if (d->values == NULL) {
        error(ck, loc_of(d->name), "enum '%.*s' has no values",
              (int)d->name.len, d->name.s);
        d->bad = true;
        return;
    }
    /* Its maps (and their keys) go once the enum is checked. */
    acc_arena_mark mk = acc_arena_mark_get(&ck->cx->arena);
    acc_map names, values;
    acc_map_init(&names, &ck->cx->arena);
    acc_map_init(&values, &ck->cx->arena);
    int64_t next = 0;
    for (acc_enumerator *e = d->values; e != NULL; e = e->next) {
        acc_enumerator *first = acc_map_put(&names, e->name.s, e->name.len, e);
        if (first != e) {
            error(ck, loc_of(e->name), "duplicate value '%.*s' in enum "
                  "'%.*s'", (int)e->name.len, e->name.s, (int)d->name.len,
                  d->name.s);
            note(ck, loc_of(first->name), "'%.*s' was first declared "
                 "here", (int)first->name.len, first->name.s);
            d->bad = true;
        } else if (!check_name(ck, e->name, "an enum value", true)) {
            d->bad = true;
        }
        if (e->has_value) {
            uint64_t v;
            bool overflow;
            if (!acc_parse_int(e->lit.s, e->lit.len, &v, &overflow)) {
                error(ck, loc_of(e->lit), "invalid integer literal "
                      "'%.*s'", (int)e->lit.len, e->lit.s);
                d->bad = true;
                v = 0;
            } else if (overflow || (!e->neg && v > INT32_MAX) ||
                       (e->neg && v > (uint64_t)INT32_MAX + 1)) {
                error(ck, e->lit_at, "integer literal %s%.*s is out "
                      "of range for an enum value (i32: -2147483648.."
                      "2147483647)", e->neg ? "-" : "", (int)e->lit.len,
                      e->lit.s);
                d->bad = true;
                v = 0;
            }
            next = e->neg ? -(int64_t)v : (int64_t)v;
        } else if (next > INT32_MAX) {
            error(ck, loc_of(e->name), "the implicit value of '%.*s', "
                  "%lld, is out of range for an enum value (i32)",
                  (int)e->name.len, e->name.s, (long long)next);
            d->bad = true;
        }
        e->value = next;
        char key[24];
        int kn = snprintf(key, sizeof(key), "%lld", (long long)next);
        char *k = acc_strndup(&ck->cx->arena, key, (size_t)kn);
        acc_enumerator *prev = acc_map_put(&values, k, (size_t)kn, e);
        if (prev != e && !d->bad) {
            error(ck, loc_of(e->name), "enum value '%.*s' repeats the "
                  "value %lld of '%.*s'", (int)e->name.len, e->name.s,
                  (long long)next, (int)prev->name.len, prev->name.s);
            note(ck, loc_of(prev->name), "'%.*s' is %lld here",
                 (int)prev->name.len, prev->name.s, (long long)next);
            d->bad = true;
        }
        next++;
    }
    acc_arena_release(&ck->cx->arena, mk);
}

static void check_decl(checker *ck, acc_decl *d)
{
    if (d->kind == ACC_ENUM) {
        check_enum(ck, d);
        return;
    }
    if (d->fields == NULL) {
        error(ck, loc_of(d->name), "struct '%.*s' has no fields",
              (int)d->name.len, d->name.s);
        d->bad = true;
    }
    check_fields(ck, d->fields, "struct", d->name, NULL, NULL);
    refuse_handles(ck, d->fields, "a struct (structs go in messages)");
}

/* The first message before `m` named as it is, or m: searched, or from
 * the ninth on looked up in a map, as first_named does for fields. */
static acc_message *first_message(checker *ck, acc_map *seen,
                                  acc_message *messages, acc_message *m,
                                  size_t index)
{
    enum { SEARCHED = 8 };
    if (index < SEARCHED) {
        for (acc_message *p = messages; p != m; p = p->next)
            if (same(p->name, m->name))
                return p;
        return m;
    }
    if (index == SEARCHED) {
        acc_map_init(seen, &ck->cx->arena);
        for (acc_message *p = messages; p != m; p = p->next)
            acc_map_put(seen, p->name.s, p->name.len, p);
    }
    return acc_map_put(seen, m->name.s, m->name.len, m);
}

/* ---- behaviours -------------------------------------------------------------- */

/* The message of `a` closest to `n` (at most two edits, fewer than half
 * its letters), for a did-you-mean, or NULL. */
static const acc_message *closest_message(const acc_actor *a, acc_name n)
{
    const acc_message *best = NULL;
    size_t best_d = 3;
    for (const acc_message *m = a->messages; m != NULL; m = m->next) {
        size_t d = acc_edit_distance(n.s, n.len, m->name.s, m->name.len, 2);
        if (d < best_d && 2 * d < n.len) {
            best_d = d;
            best = m;
        }
    }
    return best;
}

/* Each `on x;` and `postpone x;` names a message of the actor (hooks run
 * in every behaviour), at most once per behaviour; behaviour names are
 * unique, and `default` is the one outside every block (its constant,
 * P_BEHAVIOUR_default, is the actor's). */
static void check_behaviours(checker *ck, acc_actor *a)
{
    if (a->behaviours == NULL)
        return;
    if (a->messages == NULL) {
        error(ck, loc_of(a->behaviours->name), "actor '%.*s' has no "
              "messages: a behaviour chooses which of its handlers are "
              "active", (int)a->name.len, a->name.s);
        return;
    }
    acc_arena_mark mk = acc_arena_mark_get(&ck->cx->arena);
    acc_map messages, names;
    acc_map_init(&messages, &ck->cx->arena);
    acc_map_init(&names, &ck->cx->arena);
    for (acc_message *m = a->messages; m != NULL; m = m->next)
        (void)acc_map_put(&messages, m->name.s, m->name.len, m);
    for (acc_behaviour *b = a->behaviours; b != NULL; b = b->next) {
        acc_behaviour *first = acc_map_put(&names, b->name.s, b->name.len, b);
        if (first != b) {
            error(ck, loc_of(b->name), "duplicate behaviour '%.*s' in "
                  "actor '%.*s'", (int)b->name.len, b->name.s,
                  (int)a->name.len, a->name.s);
            note(ck, loc_of(first->name), "'%.*s' was first declared here",
                 (int)first->name.len, first->name.s);
            b->bad = true;
        } else if (is(b->name, "default")) {
            error(ck, loc_of(b->name), "'default' is the behaviour outside "
                  "every behaviour block: it is not declared (its handlers "
                  "are the actor's own)");
            b->bad = true;
        }
        /* A keyword is fine: the name is only ever part of longer ones
         * (P_BEHAVIOUR_class, P_class_on_x). */
        /* Per behaviour: what each message's first line in it is. */
        acc_arena_mark bmk = acc_arena_mark_get(&ck->cx->arena);
        acc_map seen;
        acc_map_init(&seen, &ck->cx->arena);
        for (acc_bitem *it = b->items; it != NULL; it = it->next) {
            it->msg = acc_map_get(&messages, it->name.s, it->name.len);
            if (it->msg == NULL) {
                const acc_message *near = closest_message(a, it->name);
                bool hook = is(it->name, "start") || is(it->name, "stop") ||
                            is(it->name, "down") || is(it->name, "exit");
                error(ck, loc_of(it->name), "unknown message '%.*s' in "
                      "behaviour '%.*s' of actor '%.*s'%s%.*s%s",
                      (int)it->name.len, it->name.s, (int)b->name.len,
                      b->name.s, (int)a->name.len, a->name.s,
                      near != NULL ? "; did you mean '" : hook ?
                      " (hooks run in every behaviour)" : "",
                      near != NULL ? (int)near->name.len : 0,
                      near != NULL ? near->name.s : "",
                      near != NULL ? "'?" : "");
                continue;
            }
            acc_bitem *prev = acc_map_put(&seen, it->name.s, it->name.len, it);
            if (prev == it)
                continue;
            if (prev->postpone != it->postpone)
                error(ck, loc_of(it->name), "message '%.*s' is both handled "
                      "and postponed in behaviour '%.*s'", (int)it->name.len,
                      it->name.s, (int)b->name.len, b->name.s);
            else
                error(ck, loc_of(it->name), "message '%.*s' is %s twice in "
                      "behaviour '%.*s'", (int)it->name.len, it->name.s,
                      it->postpone ? "postponed" : "handled",
                      (int)b->name.len, b->name.s);
            note(ck, loc_of(prev->name), "'%.*s' is %s here",
                 (int)prev->name.len, prev->name.s,
                 prev->postpone ? "postponed" : "handled");
            it->msg = NULL;
        }
        acc_arena_release(&ck->cx->arena, bmk);
    }
    acc_arena_release(&ck->cx->arena, mk);
}

static void check_actor(checker *ck, acc_actor *a)
{
    /* Every message has a send, a publish and two timer functions. */
#define SEND_PARAMS { "cx", "send" }, { "to", "send" }, \
        { "group", "publish" }, { "delay_ms", "send_after" }, \
        { "period_ms", "send_every" }, { "timer_id", "send_after" }
    static const param send_params[] = { SEND_PARAMS, { NULL, NULL } };
    /* A request also holds its reply_to; the ask functions take more. */
    static const param ask_params[] = {
        SEND_PARAMS, { "reply_to", "ask" }, { "timeout_ms", "ask" },
        { "fn", "ask" }, { "arg", "ask" }, { "out", "ask" },
        { "ctx", "typed ask" }, { "ctx_size", "typed ask" }, { NULL, NULL },
    };
#undef SEND_PARAMS
    static const param reply_params[] = {
        { "cx", "reply" }, { "to", "reply" }, { NULL, NULL },
    };
    static const param spawn_params[] = {
        { "cx", "spawn" }, { "out", "spawn" }, { "opts", "spawn_opts" },
        { NULL, NULL },
    };
    check_fields(ck, a->state, "the state of actor", a->name, NULL, NULL);
    if (a->start != NULL)
        check_fields(ck, a->start->fields, "the start hook of actor",
                     a->name, spawn_params, "start");

    /* The map of many messages goes once they are checked (check_fields
     * releases its own before this one grows again). */
    acc_arena_mark mk = acc_arena_mark_get(&ck->cx->arena);
    acc_map seen;
    size_t index = 0;
    for (acc_message *m = a->messages; m != NULL; m = m->next, index++) {
        acc_message *prev = first_message(ck, &seen, a->messages, m, index);
        if (prev != m) {
            error(ck, loc_of(m->name),
                  "duplicate message '%.*s' in actor '%.*s'",
                  (int)m->name.len, m->name.s,
                  (int)a->name.len, a->name.s);
            note(ck, loc_of(prev->name),
                 "'%.*s' was first declared here",
                 (int)prev->name.len, prev->name.s);
            m->bad = true;
        } else if (acc_c_keyword(m->name.s, m->name.len) != NULL) {
            /* As a field's: the one place the name stands alone in C,
             * the dispatch union's member, is spelled `class_`
             * (acc_gen_msg_member); every other name made of it has the
             * actor's prefix, which no keyword has. */
        } else if (!check_name(ck, m->name, "a message", true)) {
            m->bad = true;
        }
        check_fields(ck, m->fields, "message", m->name,
                     m->has_reply ? ask_params : send_params, "message");
        refuse_handles(ck, m->fields, "a message");
        if (m->has_reply) {
            check_fields(ck, m->reply, "the reply of message", m->name,
                         reply_params, "reply");
            refuse_handles(ck, m->reply, "a reply");
        }
    }
    acc_arena_release(&ck->cx->arena, mk);
    check_behaviours(ck, a);
}

/* ---- structs by value: no cycles, bounded size ----------------------------- */

typedef struct layout {
    uint64_t size, align;
} layout;

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    return b != 0 && a > (MAX_FIXED * 4) / b ? MAX_FIXED * 4 : a * b;
}

/* The C size and alignment of a type on an LP64 machine (an estimate for
 * the size limit; saturates above it). A struct's are its own, which the
 * walk below has worked out before anything that holds it asks: each
 * struct is laid out once, however many paths lead to it. */
static layout type_layout(const acc_type *t)
{
    static const uint8_t sizes[] = {
        [ACC_BOOL] = 1, [ACC_I8] = 1, [ACC_I16] = 2, [ACC_I32] = 4,
        [ACC_I64] = 8, [ACC_U8] = 1, [ACC_U16] = 2, [ACC_U32] = 4,
        [ACC_U64] = 8, [ACC_F32] = 4, [ACC_F64] = 8,
    };
    layout l = { 1, 1 };
    uint64_t count = 1;
    for (; t->kind == ACC_ARRAY; t = t->elem)
        count = sat_mul(count, t->size);
    switch (t->kind) {
    case ACC_STRING: case ACC_BYTES: case ACC_SEQ:
        l.size = 16;
        l.align = 8;
        break;
    case ACC_ADDR: case ACC_REF:
        l.size = 32;
        break;
    case ACC_PTR:
        l.size = l.align = 8;
        break;
    case ACC_NAMED:
        if (t->decl == NULL || t->decl->kind == ACC_ENUM || t->decl->bad) {
            l.size = l.align = 4;
        } else {
            l.size = t->decl->size;
            l.align = t->decl->align;
        }
        break;
    default:
        l.size = l.align = sizes[t->kind];
        break;
    }
    l.size = sat_mul(l.size, count);
    return l;
}

static layout fields_layout(const acc_field *f)
{
    layout l = { 0, 1 };
    for (; f != NULL; f = f->next) {
        layout fl = type_layout(&f->type);
        l.size = (l.size + fl.align - 1) / fl.align * fl.align + fl.size;
        if (l.size > MAX_FIXED * 4)
            l.size = MAX_FIXED * 4;
        if (fl.align > l.align)
            l.align = fl.align;
    }
    l.size = (l.size + l.align - 1) / l.align * l.align;
    return l;
}

/* "A -> B -> C -> A": the cycle from `d` (on the walk's path) down to
 * `last`, which holds d. A long one is shortened to its ends, so that the
 * message stays readable whatever the input. */
static void cycle_chain(checker *ck, acc_buf *chain, acc_decl *d,
                        acc_decl *last)
{
    enum { HEAD = 4, TAIL = 2 };
    size_t n = 1;
    for (acc_decl *p = last; p != d; p = p->up)
        n++;
    /* The path links upwards; the message reads downwards from d. */
    acc_decl **path = acc_alloc(&ck->cx->arena, n * sizeof(*path));
    size_t i = n;
    for (acc_decl *p = last; i > 0; p = p->up)
        path[--i] = p;
    for (i = 0; i < n; i++) {
        if (n > HEAD + TAIL + 1 && i == HEAD) {
            acc_buf_printf(chain, "... %zu more ... -> ", n - HEAD - TAIL);
            i = n - TAIL;
        }
        acc_buf_printf(chain, "%.*s -> ", (int)path[i]->name.len,
                       path[i]->name.s);
    }
    acc_buf_printf(chain, "%.*s", (int)d->name.len, d->name.s);
}

/* Reports the cycle found when the walk, at `last`, meets `d` on its
 * path. */
static void report_cycle(checker *ck, acc_decl *d, acc_decl *last)
{
    acc_buf chain = { .oom = &ck->cx->oom };
    cycle_chain(ck, &chain, d, last);
    error(ck, loc_of(d->name), "struct '%.*s' contains itself by "
          "value (%s); a sequence (%.*s[]) can refer to it",
          (int)d->name.len, d->name.s, chain.data, (int)d->name.len,
          d->name.s);
    acc_buf_free(&chain);
    d->bad = true;
}

/* Depth first from `root` over the structs its fields hold by value (in
 * this module: an import's are done, and cannot lead back here), with the
 * path in the structs themselves (acc_decl.up) rather than on the C
 * stack: a chain of any length is walked in constant stack. Each struct
 * is laid out once its fields' structs are (post-order). The first cycle
 * is reported, and the structs on the path are left to be walked again
 * from the next root, so that each struct on a cycle is reported as the
 * one that contains itself. */
static void walk_structs(checker *ck, acc_decl *root)
{
    if (root->visit != 0 || root->kind != ACC_STRUCT)
        return;
    root->visit = 1;
    root->up = NULL;
    root->at = root->fields;
    acc_decl *cur = root;
    while (cur != NULL) {
        const acc_field *f = cur->at;
        if (f == NULL) {
            layout l = fields_layout(cur->fields);
            /* At most 4 * MAX_FIXED, rounded to an alignment of 16 at
             * most: 32 bits hold it. */
            cur->size = (uint32_t)l.size;
            cur->align = (uint32_t)l.align;
            cur->has_var = acc_fields_have_var(cur->fields);
            cur->visit = 2;
            cur = cur->up;
            continue;
        }
        cur->at = f->next;
        acc_decl *next = acc_field_value_struct(f, cur->mod);
        if (next == NULL)
            continue;
        if (next->visit == 1) {
            report_cycle(ck, next, cur);
            for (acc_decl *p = cur; p != NULL; p = p->up)
                p->visit = 0;
            return;
        }
        if (next->visit == 0) {
            next->visit = 1;
            next->up = cur;
            next->at = next->fields;
            cur = next;
        }
    }
}

static void check_size(checker *ck, const acc_field *fields, acc_name n,
                       const char *what)
{
    layout l = fields_layout(fields);
    if (l.size > MAX_FIXED)
        error(ck, loc_of(n), "%s '%.*s' is too large: its fields take "
              "%s%llu bytes, more than a message can hold (%llu)", what,
              (int)n.len, n.s, l.size >= MAX_FIXED * 4 ? "over " : "",
              (unsigned long long)l.size, (unsigned long long)MAX_FIXED);
}

/* ---- generated names --------------------------------------------------------- */

/* The names are names.c's; what is checked here is that C can take each
 * one, and that no two are the same.
 *
 * No name is kept, and few are recorded. A first pass sets, for each name,
 * one bit of a filter (8 bits a name) chosen by its hash, and a second
 * bit where the first was set already: only a name whose bit was hit
 * twice can equal another (or a field name that might shadow it, which
 * marks its bit the same way). A second pass counts those candidates,
 * about one name in nine, and the table is made for them. The check then
 * goes through the names in their order as before, spelling each one
 * (into a scratch buffer) to see that C can take it, and records only the
 * candidates, a record being the owner (one for all the names of a
 * message, actor, struct, enum value or module), row and hash. Which
 * names are reported, and in which order, is as if every name were
 * recorded: a name left out equals no other. A recorded name is
 * spelled again only when a hash matches, to compare the two. Strings
 * with a slot of 16 bytes for every name were most of the check's memory
 * (a message makes a dozen names, a small actor 17); the filter and the
 * records take 3 to 4 bytes a name. */

/* An owner is a pointer to the AST node with its kind in the low bits
 * (the arena aligns every node to 8). */
enum { OWN_MODULE, OWN_DECL, OWN_VALUE, OWN_ACTOR, OWN_MSG, OWN_MASK = 7 };

typedef struct name_rec {
    uintptr_t owner;        /* 0: an empty slot */
    uint32_t hash;
    uint32_t row;
} name_rec;

typedef struct scratch {
    char *s;
    size_t cap;
} scratch;

typedef struct name_table {
    name_rec *slots;        /* open addressing, at most 3/4 full */
    size_t cap, count;
    /* The filter: bits `bits` long, `once` set by a name's hash, `twice`
     * where once was set already (or a looked-up name found it set). */
    uint8_t *once, *twice;
    size_t bits;
    scratch other;          /* a recorded name, spelled to compare */
} name_table;

typedef struct gen_name {
    const char *what;       /* the row's: "the send function" */
    const acc_module *mod;
    const acc_actor *actor;
    const acc_message *msg;
    const acc_decl *decl;
    const acc_enumerator *value;
} gen_name;

static uintptr_t owner_ref(const void *p, int kind)
{
    return (uintptr_t)p | (uintptr_t)kind;
}

/* The parts of row `row` of owner o's names; false: not made. */
static bool cname_of(uintptr_t o, int row, acc_cname *c)
{
    const void *p = (const void *)(o & ~(uintptr_t)OWN_MASK);
    switch (o & OWN_MASK) {
    case OWN_MODULE:
        acc_guard_cname_of(p, c);
        return true;
    case OWN_DECL:
        acc_decl_cname_of(p, (acc_decl_cname)row, c);
        return true;
    case OWN_VALUE:
        acc_value_cname_of(p, c);
        return true;
    case OWN_ACTOR:
        return acc_actor_cname_of(p, (acc_actor_cname)row, c);
    default:
        return acc_msg_cname_of(p, (acc_msg_cname)row, c);
    }
}

static gen_name unpack(uintptr_t o, int row)
{
    const void *p = (const void *)(o & ~(uintptr_t)OWN_MASK);
    gen_name g = { acc_guard_cname.what, NULL, NULL, NULL, NULL, NULL };
    switch (o & OWN_MASK) {
    case OWN_MODULE:
        g.mod = p;
        break;
    case OWN_DECL:
        g.decl = p;
        g.mod = g.decl->mod;
        g.what = acc_decl_cnames[row].what;
        break;
    case OWN_VALUE:
        g.value = p;
        g.decl = g.value->decl;
        g.mod = g.decl->mod;
        g.what = acc_value_cname.what;
        break;
    case OWN_ACTOR:
        g.actor = p;
        g.mod = g.actor->mod;
        g.what = acc_actor_cnames[row].what;
        break;
    default:
        g.msg = p;
        g.actor = g.msg->actor;
        g.mod = g.actor->mod;
        g.what = acc_msg_cnames[row].what;
        break;
    }
    return g;
}

static const char *describe(checker *ck, const gen_name *g)
{
    acc_arena *ar = &ck->cx->arena;
    const char *s;
    if (g->value != NULL)
        s = acc_aprintf(ar, "%s of value '%.*s.%.*s'", g->what,
                        (int)g->decl->name.len, g->decl->name.s,
                        (int)g->value->name.len, g->value->name.s);
    else if (g->decl != NULL)
        s = acc_aprintf(ar, "%s of %s '%.*s'", g->what,
                        decl_what(g->decl), (int)g->decl->name.len,
                        g->decl->name.s);
    else if (g->actor == NULL)
        s = g->what;
    else if (g->msg == NULL)
        s = acc_aprintf(ar, "%s of actor '%.*s'", g->what,
                        (int)g->actor->name.len, g->actor->name.s);
    else
        s = acc_aprintf(ar, "%s of message '%.*s.%.*s'", g->what,
                        (int)g->actor->name.len, g->actor->name.s,
                        (int)g->msg->name.len, g->msg->name.s);
    if (g->mod != ck->mod)
        s = acc_aprintf(ar, "%s in module '%.*s' (%s)", s,
                        (int)g->mod->name.len, g->mod->name.s,
                        g->mod->file.filename);
    return s;
}

static acc_loc origin(const gen_name *g)
{
    if (g->value != NULL)
        return loc_of(g->value->name);
    if (g->decl != NULL)
        return loc_of(g->decl->name);
    if (g->msg != NULL)
        return loc_of(g->msg->name);
    if (g->actor != NULL)
        return loc_of(g->actor->name);
    return loc_of(g->mod->name);
}

/* The name spelled into `sc` (NUL-terminated), its length in *len. */
static const char *spell(acc_arena *ar, scratch *sc, const acc_cname *c,
                         size_t *len)
{
    size_t n = acc_cname_len(c);
    if (n + 1 > sc->cap) {
        sc->cap = (n + 1) * 2;
        sc->s = acc_alloc_chars(ar, sc->cap);
    }
    acc_cname_write(c, sc->s);
    *len = n;
    return sc->s;
}

static uint32_t name_hash(const char *s, size_t n)
{
    uint32_t h = 2166136261u;       /* FNV-1a */
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    return h;
}

/* The filter's bit of hash h: the hash mixed again (MurmurHash3's
 * finalizer), so that names sharing a bit do not also share the table's
 * first slot (taken from h's top bits), then scaled to the filter. */
static size_t filter_bit(const name_table *t, uint32_t h)
{
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return (size_t)(((uint64_t)h * t->bits) >> 32);
}

static bool bit_get(const uint8_t *set, size_t b)
{
    return (set[b >> 3] >> (b & 7)) & 1;
}

static void bit_set(uint8_t *set, size_t b)
{
    set[b >> 3] = (uint8_t)(set[b >> 3] | 1u << (b & 7));
}

/* Whether a name of hash h may equal another: only those are recorded,
 * and only those are looked up. */
static bool candidate(const name_table *t, uint32_t h)
{
    return bit_get(t->twice, filter_bit(t, h));
}

/* The filter for `names` names. */
static void filter_init(name_table *t, acc_arena *a, size_t names)
{
    t->bits = names < 8 ? 64 : names * 8;
    t->once = acc_alloc(a, t->bits / 8 + 1);
    t->twice = acc_alloc(a, t->bits / 8 + 1);
    t->other = (scratch){ NULL, 0 };
}

/* The table, for the `count` candidates filter_name counted: at most 3/4
 * full, so that it never grows and a search always ends at an empty
 * slot. Its size is no power of two: a search starts at the hash scaled
 * to it. */
static void table_init(name_table *t, acc_arena *a, size_t count)
{
    t->cap = count + count / 3 + 1;
    t->count = 0;
    t->slots = acc_alloc(a, t->cap * sizeof(*t->slots));
}

/* The record of s[0..len) (hash h), or the empty one where it would go. */
static name_rec *table_find(name_table *t, acc_arena *ar, const char *s,
                            size_t len, uint32_t h)
{
    for (size_t i = (size_t)(((uint64_t)h * t->cap) >> 32);;
         i = i + 1 < t->cap ? i + 1 : 0) {
        name_rec *r = &t->slots[i];
        if (r->owner == 0)
            return r;
        if (r->hash != h)
            continue;
        acc_cname c;
        cname_of(r->owner, (int)r->row, &c);
        size_t n;
        const char *o = spell(ar, &t->other, &c, &n);
        if (n == len && memcmp(o, s, len) == 0)
            return r;
    }
}

typedef struct namer {
    checker *ck;
    name_table *names;
    scratch name;           /* the name being recorded */
    bool report;            /* false: an import's names, already checked */
    bool counting;          /* filter_name counts candidates */
} namer;

/* Records name `row` of owner o; false (after reporting) if C cannot take
 * it or it clashes. A name not made passes. */
static bool add(namer *nm, uintptr_t o, int row)
{
    checker *ck = nm->ck;
    acc_arena *ar = &ck->cx->arena;
    name_table *t = nm->names;
    acc_cname c;
    if (!cname_of(o, row, &c))
        return true;
    size_t len;
    const char *name = spell(ar, &nm->name, &c, &len);
    if (nm->report) {
        const char *why = acc_c_reserved(name, len);
        if (why != NULL) {
            gen_name g = unpack(o, row);
            error(ck, origin(&g), "'%s', %s, is %s", name,
                  describe(ck, &g), why);
            return false;
        }
    }
    uint32_t h = name_hash(name, len);
    if (!candidate(t, h))
        return true;
    name_rec *r = table_find(t, ar, name, len, h);
    if (r->owner == 0) {
        *r = (name_rec){ o, h, (uint32_t)row };
        t->count++;
        return true;
    }
    /* Two rows of one owner may spell one name (a request named `reply`:
     * its reply struct and reply function); that was never reported. */
    if (r->owner == o || !nm->report)
        return true;
    gen_name g = unpack(o, row), f = unpack(r->owner, (int)r->row);
    error(ck, origin(&g), "'%s', %s, collides with %s", name,
          describe(ck, &g), describe(ck, &f));
    acc_note(ck->cx, &f.mod->file, origin(&f),
             "'%s' is first generated here", name);
    return false;
}

/* One report per type, actor or message is enough. */
static void module_names(acc_module *mod, void *arg)
{
    namer *nm = arg;
    if (mod->bad || !mod->has_name)
        return;
    nm->report = mod == nm->ck->mod;

    add(nm, owner_ref(mod, OWN_MODULE), 0);
    for (const acc_decl *d = mod->decls; d != NULL; d = d->next) {
        if (d->bad)
            continue;
        bool ok = true;
        uintptr_t o = owner_ref(d, OWN_DECL);
        for (int k = 0; ok && k < ACC_D_COUNT; k++)
            ok = add(nm, o, k);
        for (const acc_enumerator *v = d->values; ok && v != NULL;
             v = v->next)
            ok = add(nm, owner_ref(v, OWN_VALUE), 0);
    }
    for (const acc_actor *a = mod->actors; a != NULL; a = a->next) {
        if (a->bad)
            continue;
        bool ok = true;
        uintptr_t o = owner_ref(a, OWN_ACTOR);
        for (int k = 0; ok && k < ACC_A_COUNT; k++)
            ok = add(nm, o, k);
        for (const acc_message *m = a->messages; ok && m != NULL;
             m = m->next) {
            if (m->bad)
                continue;
            bool mok = true;
            uintptr_t mo = owner_ref(m, OWN_MSG);
            for (int k = 0; mok && k < ACC_M_COUNT; k++)
                mok = add(nm, mo, k);
        }
    }
}

/* The filter's passes over every name module_names may record (of the
 * same owners; past an error it records fewer, never others): the first
 * sets the bits, the second (`counting`) counts the candidates, so that
 * the table is made once for them (grown, it would hold its old table and
 * its new one at once, twice what it needs). */
static void filter_name(namer *nm, uintptr_t o, int row)
{
    name_table *t = nm->names;
    acc_cname c;
    if (!cname_of(o, row, &c))
        return;
    size_t len;
    const char *name = spell(&nm->ck->cx->arena, &nm->name, &c, &len);
    uint32_t h = name_hash(name, len);
    if (nm->counting) {
        t->count += candidate(t, h);
        return;
    }
    size_t b = filter_bit(t, h);
    if (bit_get(t->once, b))
        bit_set(t->twice, b);
    else
        bit_set(t->once, b);
}

static void filter_names(acc_module *mod, void *arg)
{
    namer *nm = arg;
    if (mod->bad || !mod->has_name)
        return;
    filter_name(nm, owner_ref(mod, OWN_MODULE), 0);
    for (const acc_decl *d = mod->decls; d != NULL; d = d->next) {
        if (d->bad)
            continue;
        for (int k = 0; k < ACC_D_COUNT; k++)
            filter_name(nm, owner_ref(d, OWN_DECL), k);
        for (const acc_enumerator *v = d->values; v != NULL; v = v->next)
            filter_name(nm, owner_ref(v, OWN_VALUE), 0);
    }
    for (const acc_actor *a = mod->actors; a != NULL; a = a->next) {
        if (a->bad)
            continue;
        for (int k = 0; k < ACC_A_COUNT; k++)
            filter_name(nm, owner_ref(a, OWN_ACTOR), k);
        for (const acc_message *m = a->messages; m != NULL; m = m->next)
            if (!m->bad)
                for (int k = 0; k < ACC_M_COUNT; k++)
                    filter_name(nm, owner_ref(m, OWN_MSG), k);
    }
}

/* How many names module_names may record: the filter's size. */
static void count_names(acc_module *mod, void *arg)
{
    size_t *n = arg;
    if (mod->bad || !mod->has_name)
        return;
    *n += 1;
    for (const acc_decl *d = mod->decls; d != NULL; d = d->next) {
        *n += ACC_D_COUNT;
        for (const acc_enumerator *v = d->values; v != NULL; v = v->next)
            *n += 1;
    }
    /* Those made, not every row: the filter is 2 bytes a name. */
    acc_cname c;
    for (const acc_actor *a = mod->actors; a != NULL; a = a->next) {
        for (int k = 0; k < ACC_A_COUNT; k++)
            *n += acc_actor_cname_of(a, (acc_actor_cname)k, &c);
        for (const acc_message *m = a->messages; m != NULL; m = m->next)
            *n += m->has_reply ? ACC_M_COUNT : ACC_M_REPLY_STRUCT;
    }
}

/* Field and message names are struct and union members, and message
 * fields are parameters of the send functions: named like a generated
 * type or function, one would shadow it there (or, in C++, change its
 * meaning inside the struct). With `mark`, the filter's pass: a name
 * whose bit a generated name set makes that bit a candidate's, so that
 * the generated name is recorded to be found. */
static void shadows(checker *ck, name_table *names, acc_name n,
                    const char *what, bool mark)
{
    uint32_t h = name_hash(n.s, n.len);
    if (mark) {
        size_t b = filter_bit(names, h);
        if (bit_get(names->once, b))
            bit_set(names->twice, b);
        return;
    }
    if (!candidate(names, h))
        return;
    name_rec *r = table_find(names, &ck->cx->arena, n.s, n.len, h);
    if (r->owner != 0) {
        gen_name g = unpack(r->owner, (int)r->row);
        error(ck, loc_of(n), "'%.*s' cannot be used as %s name: it "
              "is %s", (int)n.len, n.s, what, describe(ck, &g));
    }
}

static void check_shadowing(checker *ck, name_table *names,
                            const acc_field *fields, const acc_message *m,
                            bool mark)
{
    if (m != NULL)
        shadows(ck, names, m->name, "a message", mark);
    for (const acc_field *f = fields; f != NULL; f = f->next)
        shadows(ck, names, f->name, "a field", mark);
}

static void each_shadow(checker *ck, name_table *names, bool mark)
{
    for (const acc_decl *d = ck->mod->decls; d != NULL; d = d->next)
        check_shadowing(ck, names, d->fields, NULL, mark);
    for (const acc_actor *a = ck->mod->actors; a != NULL; a = a->next) {
        check_shadowing(ck, names, a->state, NULL, mark);
        if (a->start != NULL)
            check_shadowing(ck, names, a->start->fields, NULL, mark);
        for (const acc_message *m = a->messages; m != NULL; m = m->next) {
            check_shadowing(ck, names, m->fields, m, mark);
            check_shadowing(ck, names, m->reply, NULL, mark);
        }
    }
}

static void check_generated_names(checker *ck)
{
    acc_arena *ar = &ck->cx->arena;
    name_table names;
    size_t count = 0;
    acc_each_module(ck->cx, ck->mod, count_names, &count);
    filter_init(&names, ar, count);
    namer nm = { ck, &names, { NULL, 0 }, false, false };
    acc_each_module(ck->cx, ck->mod, filter_names, &nm);
    each_shadow(ck, &names, true);
    names.count = 0;
    nm.counting = true;
    acc_each_module(ck->cx, ck->mod, filter_names, &nm);
    table_init(&names, ar, names.count);
    /* The imports' names first: a clash is reported in this file. */
    acc_each_module(ck->cx, ck->mod, module_names, &nm);
    each_shadow(ck, &names, false);
    /* The generators need none of it: what outgrew a chunk goes back. */
    acc_arena_give_back(ar, names.slots);
    acc_arena_give_back(ar, names.once);
    acc_arena_give_back(ar, names.twice);
}

/* ---- state: no views -------------------------------------------------------- */

/* A string, bytes value or sequence is a view: in a message, into its
 * envelope, which the runtime reuses once the handler returns. Kept in
 * the state (`self->name = m->name;`) it would point at whatever the
 * envelope holds next, and neither the compiler nor a sanitizer would
 * see it. So the state holds no view, also not inside a struct: what it
 * keeps it owns (a fixed array, or memory of its own behind a ptr). */
static void check_state_views(checker *ck, const acc_actor *a)
{
    for (const acc_field *f = a->state; f != NULL; f = f->next) {
        const acc_type *t = &f->type;
        while (t->kind == ACC_ARRAY)
            t = t->elem;
        if (!acc_type_has_var(t))
            continue;
        const char *what = t->kind == ACC_STRING ? "be a string"
                         : t->kind == ACC_BYTES ? "be bytes"
                         : t->kind == ACC_SEQ ? "be a sequence"
                         : acc_aprintf(&ck->cx->arena, "hold '%.*s', which "
                                       "has a string, bytes or a sequence",
                                       (int)t->target.len, t->target.s);
        error(ck, f->type.at, "state field '%.*s' cannot %s: that is a "
              "view into a message's envelope, which is reused once the "
              "handler returns; keep a copy the actor owns (a fixed array "
              "such as u8[64], or memory it allocates, held in a 'ptr')",
              (int)f->name.len, f->name.s, what);
    }
}

/* ---- warnings ------------------------------------------------------------------ */

static void warn(checker *ck)
{
    for (acc_import *im = ck->mod->imports; im != NULL; im = im->next)
        if (!im->used && im->mod != NULL)
            acc_warning(ck->cx, ACC_W_UNUSED_IMPORT, &ck->mod->file, im->at,
                        "unused import "
                        "\"%s\": nothing here names '%.*s.'", im->path,
                        (int)im->mod->name.len, im->mod->name.s);
    for (acc_actor *a = ck->mod->actors; a != NULL; a = a->next)
        if (a->messages != NULL && !a->referenced)
            acc_warning(ck->cx, ACC_W_UNREFERENCED_ACTOR, &ck->mod->file,
                        loc_of(a->name), "no actor "
                        "can send to '%.*s': no ref<%.*s> appears in this "
                        "file or its imports, so only the code that spawns "
                        "it can reach its handlers",
                        (int)a->name.len, a->name.s, (int)a->name.len,
                        a->name.s);
}

/* Each stage runs only when the ones before it reported nothing here. */
static void check_one(acc_ctx *cx, acc_module *mod, bool main)
{
    checker ck = { cx, mod, { NULL, 0, 0, NULL } };
    int before = cx->errors;
    if (!mod->has_name)
        return;
    /* Sized once for every declaration: a map growing through its tables
     * leaves the smaller ones behind. */
    size_t names = 0;
    for (acc_decl *d = mod->decls; d != NULL; d = d->next)
        names++;
    for (acc_actor *a = mod->actors; a != NULL; a = a->next)
        names++;
    acc_map_init_for(&mod->scope, &cx->arena, names);
    ck.scope = mod->scope;
    check_module(&ck);
    for (acc_decl *d = mod->decls; d != NULL; d = d->next)
        declare(&ck, d->name, d, NULL);
    for (acc_actor *a = mod->actors; a != NULL; a = a->next)
        declare(&ck, a->name, NULL, a);
    mod->scope = ck.scope;
    mod->scope_ready = true;

    /* In source order: structs, enums and actors interleave. */
    acc_decl *nd = mod->decls;
    acc_actor *na = mod->actors;
    while ((nd != NULL || na != NULL) && !cx->stopped) {
        if (nd != NULL && (na == NULL || nd->name.off < na->name.off)) {
            check_declared(&ck, nd->name, nd, NULL);
            check_decl(&ck, nd);
            nd = nd->next;
        } else {
            check_declared(&ck, na->name, NULL, na);
            check_actor(&ck, na);
            na = na->next;
        }
    }
    if (cx->errors > before)
        return;

    for (acc_decl *d = mod->decls; d != NULL && !cx->stopped; d = d->next)
        walk_structs(&ck, d);
    if (cx->errors > before)
        return;
    for (acc_decl *d = mod->decls; d != NULL; d = d->next)
        if (d->kind == ACC_STRUCT)
            check_size(&ck, d->fields, d->name, "struct");
    for (acc_actor *a = mod->actors; a != NULL; a = a->next)
        check_state_views(&ck, a);
    for (acc_actor *a = mod->actors; a != NULL; a = a->next) {
        for (acc_message *m = a->messages; m != NULL; m = m->next) {
            check_size(&ck, m->fields, m->name, "message");
            if (m->has_reply)
                check_size(&ck, m->reply, m->name, "the reply of message");
        }
        if (a->start != NULL)
            check_size(&ck, a->start->fields, a->start->name, "start hook");
    }
    if (!mod->bad && !cx->stopped)
        check_generated_names(&ck);
    if (main && cx->errors == before)
        warn(&ck);
}

void acc_check(acc_ctx *cx, const acc_graph *graph)
{
    int before = cx->errors;
    for (acc_module *m = graph->first; m != NULL && cx->errors == before;
         m = m->next_in_order)
        if (m->whole)
            check_one(cx, m, m == graph->main);
}
