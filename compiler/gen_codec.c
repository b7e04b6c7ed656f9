/*
 * gen_codec.c — the codecs of NAME.actor.c: per struct and message its
 * helpers (tail, copy, enc, dsize, dec), per actor the descriptor's
 * encode, decode, copy and copy_args and the reply codecs. gen_source.c
 * calls in for them, and for the size pass of its senders (acc_gen_tail).
 *
 * The tail of an envelope (docs/WIRE.md): the message struct, then the
 * variable-length data of its fields in declaration order, depth first —
 * a string's bytes and a NUL, a bytes value's bytes, a sequence's elements
 * (aligned for their type) followed by their own variable-length data.
 * The size passes (tail, dsize) and the fill passes (copy, dec) walk the
 * same order, so each pair agrees on every offset. Each pass is one
 * function over the kinds of value; what they share is the loop over an
 * array's elements (each_elem) and, for the fill passes, where a
 * sequence's elements go (place_elems).
 *
 * Nesting (docs/IDL.md): a struct that holds itself through a sequence
 * can nest as deep as the data goes, and every pass recurses once per
 * level, so each pass stops at AC_MAX_DEPTH values of recursive structs
 * on one path, the same bound everywhere: the size pass of a send or copy
 * (tail) makes the message too large, which the send returns as AC_EINVAL
 * before anything is copied; enc returns false, which encode returns as
 * AC_EINVAL; dsize turns the input bad. copy and dec run only after tail
 * and dsize have walked the same values, so they are bounded too. Only the
 * helpers of deep structs (recursive ones and those that hold one) carry
 * the count: a message without recursive types pays nothing for it.
 */
#include <string.h>

#include "acc.h"

/* ---- one value's code, one function per pass ------------------------ */

typedef struct emitter {
    acc_gen *g;
    const char *at;         /* an lvalue of type size_t: the tail's end */
    const char *depth;      /* the nesting a deep struct's tail and enc are
                               called with: "0" in a message's code */
} emitter;

/* Emits one pass's code for the value `v` (an lvalue; NULL for dsize,
 * which reads the wire only) of type t, at nesting `depth`. */
typedef void value_fn(const emitter *e, const acc_type *t, const char *v,
                      int depth);

static const char *ind(int depth)
{
    static const char spaces[] = "                                        ";
    int n = 4 * (depth + 1);
    return spaces + (int)sizeof(spaces) - 1 - (n < 40 ? n : 40);
}

/* Bits on the wire of an integer or a float. */
static const int wire_bits[] = {
    [ACC_I8] = 8, [ACC_I16] = 16, [ACC_I32] = 32, [ACC_I64] = 64,
    [ACC_U8] = 8, [ACC_U16] = 16, [ACC_U32] = 32, [ACC_U64] = 64,
    [ACC_F32] = 32, [ACC_F64] = 64,
};

static bool is_signed(acc_kind k)
{
    return k >= ACC_I8 && k <= ACC_I64;
}

static bool is_float(acc_kind k)
{
    return k == ACC_F32 || k == ACC_F64;
}

static bool is_enum(const acc_type *t)
{
    return t->kind == ACC_NAMED && t->decl->kind == ACC_ENUM;
}

static bool is_struct(const acc_type *t)
{
    return t->kind == ACC_NAMED && t->decl->kind == ACC_STRUCT;
}

/* The struct a field of type t holds, alone or in arrays and sequences;
 * NULL for other types. */
static const acc_decl *held_struct(const acc_type *t)
{
    while (t->kind == ACC_ARRAY || t->kind == ACC_SEQ)
        t = t->elem;
    return is_struct(t) ? t->decl : NULL;
}

/* A struct whose tail and enc helpers take the nesting count. */
static bool is_deep(const acc_type *t)
{
    return is_struct(t) && t->decl->deep;
}

static bool fields_deep(const acc_field *f)
{
    for (; f != NULL; f = f->next) {
        const acc_decl *d = held_struct(&f->type);
        if (d != NULL && d->deep)
            return true;
    }
    return false;
}

/* A view with a length but no bytes (ac_string{NULL, 5}) cannot be
 * copied: the size pass puts it past AC_MAX_PAYLOAD, so its send is
 * AC_EINVAL, and no later pass reads it. */
static void refuse_null_view(const emitter *e, const char *in, const char *v)
{
    acc_gen_line(e->g, "%sif (%s.data == NULL && %s.len > 0)", in, v, v);
    acc_gen_line(e->g, "%s    %s = AC_MAX_PAYLOAD + 1;", in, e->at);
}

/* An address's bytes, in an ac_addr or a typed reference. */
static const char *addr_bytes(const acc_type *t)
{
    return t->kind == ACC_REF ? ".addr.bytes" : ".bytes";
}

/* A string's tail holds a NUL after the bytes. */
static const char *nul_extra(const acc_type *t)
{
    return t->kind == ACC_STRING ? " + 1" : "";
}

static const char *view_ptr(const acc_type *t)
{
    return t->kind == ACC_STRING ? "char" : "uint8_t";
}

/* An array: fn on each element, whatever the pass. */
static void each_elem(const emitter *e, value_fn *fn, const acc_type *t,
                      const char *v, int depth)
{
    acc_gen *g = e->g;
    const char *in = ind(depth);
    int d = depth;
    acc_gen_line(g, "%sfor (uint32_t i%d_ = 0; i%d_ < %u; i%d_++) {", in,
                 d, d, (unsigned)t->size, d);
    fn(e, t->elem, v != NULL ? acc_aprintf(&g->cx->arena, "%s[i%d_]", v, d)
                             : NULL, depth + 1);
    acc_gen_line(g, "%s}", in);
}

/* An array of bytes (u8[N], i8[N]) is its N bytes on the wire as in
 * memory: copied whole rather than an element at a time. */
static bool is_byte_array(const acc_type *t)
{
    return t->kind == ACC_ARRAY && (t->elem->kind == ACC_U8 || t->elem->kind == ACC_I8);
}

/* The fill passes: d<depth>_ points where a sequence's elements of type
 * `et` go, at the tail's end `at` aligned for them. */
static void place_elems(acc_gen *g, const char *in, int d, const char *et,
                        const char *at)
{
    acc_gen_line(g, "%s    %s *d%d_;", in, et, d);
    acc_gen_line(g, "%s    %s = ac_wire_align(%s, AC_ALIGNOF(%s));", in, at,
                 at, et);
    acc_gen_line(g, "%s    d%d_ = (%s *)(void *)(base + %s);", in, d, et, at);
}

/* tail: adds the variable-length data of v to the size. */
static void tail_value(const emitter *e, const acc_type *t, const char *v,
                       int depth)
{
    acc_gen *g = e->g;
    const char *in = ind(depth);
    int d = depth;
    if (!acc_type_has_var(t))
        return;
    if (t->kind == ACC_ARRAY) {
        each_elem(e, tail_value, t, v, depth);
    } else if (is_struct(t)) {
        if (is_deep(t))
            acc_gen_line(g, "%s%s__tail(&%s, &%s, %s);", in,
                         acc_decl_cstr(g, t->decl, ACC_D_TYPE), v, e->at,
                         e->depth);
        else
            acc_gen_line(g, "%s%s__tail(&%s, &%s);", in,
                         acc_decl_cstr(g, t->decl, ACC_D_TYPE), v, e->at);
    } else if (t->kind == ACC_SEQ) {
        const char *et = acc_gen_ctype(g, t->elem);
        refuse_null_view(e, in, v);
        acc_gen_line(g, "%sac_wire_grow(&%s, AC_ALIGNOF(%s), %s.len, "
                        "sizeof(%s));", in, e->at, et, v, et);
        if (!acc_type_has_var(t->elem))
            return;
        acc_gen_line(g, "%sfor (uint32_t i%d_ = 0; i%d_ < %s.len && %s <= "
                        "AC_MAX_PAYLOAD; i%d_++) {", in, d, d, v, e->at, d);
        tail_value(e, t->elem, acc_aprintf(&g->cx->arena, "%s.data[i%d_]",
                   v, d), depth + 1);
        acc_gen_line(g, "%s}", in);
    } else {
        refuse_null_view(e, in, v);
        acc_gen_line(g, "%sac_wire_grow(&%s, 1, (size_t)%s.len%s, 1);", in,
                     e->at, v, nul_extra(t));
    }
}

/* copy: moves the variable-length data of v to the tail at base + size
 * and points v's views there. */
static void copy_value(const emitter *e, const acc_type *t, const char *v,
                       int depth)
{
    acc_gen *g = e->g;
    const char *in = ind(depth), *at = e->at;
    int d = depth;
    if (!acc_type_has_var(t))
        return;
    if (t->kind == ACC_ARRAY) {
        each_elem(e, copy_value, t, v, depth);
        return;
    }
    if (is_struct(t)) {
        acc_gen_line(g, "%s%s__copy(&%s, base, &%s);", in,
                     acc_decl_cstr(g, t->decl, ACC_D_TYPE), v, at);
        return;
    }
    acc_gen_line(g, "%s{", in);
    if (t->kind == ACC_SEQ) {
        const char *et = acc_gen_ctype(g, t->elem);
        place_elems(g, in, d, et, at);
        acc_gen_line(g, "%s    if (%s.len > 0)", in, v);
        acc_gen_line(g, "%s        memcpy(d%d_, %s.data, %s.len * "
                        "sizeof(%s));", in, d, v, v, et);
        acc_gen_line(g, "%s    %s.data = d%d_;", in, v, d);
        acc_gen_line(g, "%s    %s += %s.len * sizeof(%s);", in, at, v, et);
        if (acc_type_has_var(t->elem)) {
            acc_gen_line(g, "%s    for (uint32_t i%d_ = 0; i%d_ < %s.len; "
                            "i%d_++) {", in, d, d, v, d);
            copy_value(e, t->elem, acc_aprintf(&g->cx->arena, "d%d_[i%d_]",
                       d, d), depth + 2);
            acc_gen_line(g, "%s    }", in);
        }
    } else {
        const char *ptr = view_ptr(t);
        acc_gen_line(g, "%s    %s *d%d_ = (%s *)(base + %s);", in, ptr, d, ptr,
                     at);
        acc_gen_line(g, "%s    if (%s.len > 0)", in, v);
        acc_gen_line(g, "%s        memcpy(d%d_, %s.data, %s.len);", in, d, v,
                     v);
        if (t->kind == ACC_STRING)
            acc_gen_line(g, "%s    d%d_[%s.len] = '\\0';", in, d, v);
        acc_gen_line(g, "%s    %s.data = d%d_;", in, v, d);
        acc_gen_line(g, "%s    %s += (size_t)%s.len%s;", in, at, v,
                     nul_extra(t));
    }
    acc_gen_line(g, "%s}", in);
}

/* enc: writes v to the wire. */
static void enc_value(const emitter *e, const acc_type *t, const char *v,
                      int depth)
{
    acc_gen *g = e->g;
    const char *in = ind(depth);
    int d = depth;
    switch (t->kind) {
    case ACC_ARRAY:
        if (is_byte_array(t))
            acc_gen_line(g, "%sac_wire_bytes(o, %s, %u);", in, v, (unsigned)t->size);
        else
            each_elem(e, enc_value, t, v, depth);
        return;
    case ACC_NAMED:
        if (is_enum(t))
            acc_gen_line(g, "%sac_wire_u32(o, (uint32_t)(int32_t)%s);", in, v);
        else if (is_deep(t))
            acc_gen_line(g, "%sif (!%s__enc(&%s, o, %s))\n%s    return false;",
                         in, acc_decl_cstr(g, t->decl, ACC_D_TYPE), v,
                         e->depth, in);
        else
            acc_gen_line(g, "%s%s__enc(&%s, o);", in,
                         acc_decl_cstr(g, t->decl, ACC_D_TYPE), v);
        return;
    case ACC_BOOL:
        acc_gen_line(g, "%sac_wire_u8(o, %s ? 1 : 0);", in, v);
        return;
    case ACC_ADDR: case ACC_REF:
        acc_gen_line(g, "%sac_wire_bytes(o, %s%s, 32);", in, v, addr_bytes(t));
        return;
    case ACC_STRING: case ACC_BYTES:
        acc_gen_line(g, "%sac_wire_u32(o, %s.len);", in, v);
        acc_gen_line(g, "%sac_wire_bytes(o, %s.data, %s.len);", in, v, v);
        return;
    case ACC_SEQ:
        acc_gen_line(g, "%sac_wire_u32(o, %s.len);", in, v);
        acc_gen_line(g, "%sfor (uint32_t i%d_ = 0; i%d_ < %s.len; i%d_++) {",
                     in, d, d, v, d);
        enc_value(e, t->elem, acc_aprintf(&g->cx->arena, "%s.data[i%d_]", v,
                  d), depth + 1);
        acc_gen_line(g, "%s}", in);
        return;
    default:
        if (is_float(t->kind))
            acc_gen_line(g, "%sac_wire_f%d(o, %s);", in, wire_bits[t->kind],
                         v);
        else
            acc_gen_line(g, "%sac_wire_u%d(o, (uint%d_t)%s);", in,
                         wire_bits[t->kind], wire_bits[t->kind], v);
        return;
    }
}

/* dsize: reads past a value on the wire, checking it, and adds the tail
 * its decoded form needs to the size. */
static void dsize_value(const emitter *e, const acc_type *t, const char *v,
                        int depth)
{
    acc_gen *g = e->g;
    const char *in = ind(depth);
    int d = depth;
    (void)v;
    switch (t->kind) {
    case ACC_ARRAY:
        if (is_byte_array(t))
            acc_gen_line(g, "%s(void)ac_wire_take(in, %u);", in, (unsigned)t->size);
        else
            each_elem(e, dsize_value, t, NULL, depth);
        return;
    case ACC_NAMED: {
        const char *n = acc_decl_cstr(g, t->decl, ACC_D_TYPE);
        if (is_enum(t)) {
            acc_gen_line(g, "%sif (!%s__valid((int32_t)ac_wire_get_u32(in)))",
                         in, n);
            acc_gen_line(g, "%s    in->bad = true;", in);
        } else {
            acc_gen_line(g, "%s%s__dsize(in, &%s);", in, n, e->at);
        }
        return;
    }
    case ACC_BOOL:
        acc_gen_line(g, "%sac_wire_check_bool(in);", in);
        return;
    case ACC_ADDR: case ACC_REF:
        acc_gen_line(g, "%s(void)ac_wire_take(in, 32);", in);
        return;
    case ACC_STRING: case ACC_BYTES:
        acc_gen_line(g, "%s{", in);
        acc_gen_line(g, "%s    uint32_t n%d_ = ac_wire_get_u32(in);", in, d);
        acc_gen_line(g, "%s    (void)ac_wire_take(in, n%d_);", in, d);
        acc_gen_line(g, "%s    ac_wire_grow(&%s, 1, (size_t)n%d_%s, 1);", in,
                     e->at, d, nul_extra(t));
        acc_gen_line(g, "%s}", in);
        return;
    case ACC_SEQ: {
        const char *et = acc_gen_ctype(g, t->elem);
        acc_gen_line(g, "%s{", in);
        acc_gen_line(g, "%s    uint32_t n%d_ = ac_wire_get_count(in);", in, d);
        acc_gen_line(g, "%s    ac_wire_grow(&%s, AC_ALIGNOF(%s), n%d_, "
                        "sizeof(%s));", in, e->at, et, d, et);
        acc_gen_line(g, "%s    for (uint32_t i%d_ = 0; i%d_ < n%d_ && "
                        "!in->bad; i%d_++) {", in, d, d, d, d);
        dsize_value(e, t->elem, NULL, depth + 2);
        acc_gen_line(g, "%s    }", in);
        acc_gen_line(g, "%s}", in);
        return;
    }
    default:
        acc_gen_line(g, "%s(void)ac_wire_take(in, %d);", in,
                     wire_bits[t->kind] / 8);
        return;
    }
}

/* dec: reads v from the wire (checked by dsize already), its variable-
 * length data into the tail at base + size. */
static void dec_value(const emitter *e, const acc_type *t, const char *v,
                      int depth)
{
    acc_gen *g = e->g;
    const char *in = ind(depth), *at = e->at;
    int d = depth;
    switch (t->kind) {
    case ACC_ARRAY:
        if (is_byte_array(t))
            acc_gen_line(g, "%smemcpy(%s, ac_wire_take(in, %u), %u);", in, v,
                         (unsigned)t->size, (unsigned)t->size);
        else
            each_elem(e, dec_value, t, v, depth);
        return;
    case ACC_NAMED: {
        const char *n = acc_decl_cstr(g, t->decl, ACC_D_TYPE);
        if (is_enum(t))
            acc_gen_line(g, "%s%s = (%s)(int32_t)ac_wire_get_u32(in);", in, v,
                         n);
        else
            acc_gen_line(g, "%s%s__dec(&%s, in, base, &%s);", in, n, v, at);
        return;
    }
    case ACC_BOOL:
        acc_gen_line(g, "%s%s = ac_wire_get_u8(in) != 0;", in, v);
        return;
    case ACC_ADDR: case ACC_REF:
        acc_gen_line(g, "%smemcpy(%s%s, ac_wire_take(in, 32), 32);", in, v,
                     addr_bytes(t));
        return;
    case ACC_STRING: case ACC_BYTES: {
        const char *ptr = view_ptr(t);
        acc_gen_line(g, "%s{", in);
        acc_gen_line(g, "%s    uint32_t n%d_ = ac_wire_get_u32(in);", in, d);
        acc_gen_line(g, "%s    %s *d%d_ = (%s *)(base + %s);", in, ptr, d, ptr,
                     at);
        acc_gen_line(g, "%s    if (n%d_ > 0)", in, d);
        acc_gen_line(g, "%s        memcpy(d%d_, ac_wire_take(in, n%d_), "
                        "n%d_);", in, d, d, d);
        if (t->kind == ACC_STRING)
            acc_gen_line(g, "%s    d%d_[n%d_] = '\\0';", in, d, d);
        acc_gen_line(g, "%s    %s.data = d%d_;", in, v, d);
        acc_gen_line(g, "%s    %s.len = n%d_;", in, v, d);
        acc_gen_line(g, "%s    %s += (size_t)n%d_%s;", in, at, d,
                     nul_extra(t));
        acc_gen_line(g, "%s}", in);
        return;
    }
    case ACC_SEQ: {
        const char *et = acc_gen_ctype(g, t->elem);
        acc_gen_line(g, "%s{", in);
        acc_gen_line(g, "%s    uint32_t n%d_ = ac_wire_get_count(in);", in, d);
        place_elems(g, in, d, et, at);
        acc_gen_line(g, "%s    %s += n%d_ * sizeof(%s);", in, at, d, et);
        acc_gen_line(g, "%s    %s.data = d%d_;", in, v, d);
        acc_gen_line(g, "%s    %s.len = n%d_;", in, v, d);
        acc_gen_line(g, "%s    for (uint32_t i%d_ = 0; i%d_ < n%d_; i%d_++) {",
                     in, d, d, d, d);
        dec_value(e, t->elem, acc_aprintf(&g->cx->arena, "d%d_[i%d_]", d, d),
                  depth + 2);
        acc_gen_line(g, "%s    }", in);
        acc_gen_line(g, "%s}", in);
        return;
    }
    default:
        if (is_float(t->kind))
            acc_gen_line(g, "%s%s = ac_wire_get_f%d(in);", in, v,
                         wire_bits[t->kind]);
        else if (is_signed(t->kind))
            acc_gen_line(g, "%s%s = (int%d_t)ac_wire_get_u%d(in);", in, v,
                         wire_bits[t->kind], wire_bits[t->kind]);
        else
            acc_gen_line(g, "%s%s = ac_wire_get_u%d(in);", in, v,
                         wire_bits[t->kind]);
        return;
    }
}

/* fn on each field of the struct at `owner` ("v->", "s_->", or "" for
 * parameters named like the fields); `named`: fn reads the values. */
static void each_field(const emitter *e, value_fn *fn, const acc_field *f,
                       const char *owner, bool named, int depth)
{
    for (; f != NULL; f = f->next)
        fn(e, &f->type, named ? acc_aprintf(&e->g->cx->arena, "%s%s", owner,
                                            acc_gen_field(e->g, f))
                              : NULL, depth);
}

void acc_gen_tail(acc_gen *g, const acc_field *fields, const char *owner,
                  const char *at, int depth)
{
    emitter e = { g, at, "0" };
    each_field(&e, tail_value, fields, owner, true, depth);
}

/* ---- helpers per struct and message -------------------------------- */

typedef enum pass { P_TAIL, P_COPY, P_ENC, P_DSIZE, P_DEC } pass;

/* What a helper's shape depends on: `deep` (a struct's or message's
 * fields hold a recursive struct: its enc returns false past the bound and,
 * for a struct, its tail and enc take the count so far), `recursive` (a
 * struct that holds itself: its helpers add one to the count and check
 * it), `msg` (a message's or reply's struct, whose count starts at 0). */
typedef struct shape {
    bool deep, recursive, msg;
} shape;

/* "static void NAME__enc(const NAME *v, ac_wire_out *o)": a helper's
 * signature, for its prototype and its definition. */
static const char *signature(acc_gen *g, pass p, const char *n, shape sh)
{
    acc_arena *ar = &g->cx->arena;
    const char *count = sh.deep && !sh.msg ? ", unsigned depth" : "";
    switch (p) {
    case P_TAIL:
        return acc_aprintf(ar, "static void %s__tail(const %s *v, size_t *at%s)",
                           n, n, count);
    case P_COPY:
        return acc_aprintf(ar, "static void %s__copy(%s *v, unsigned char *base, "
                           "size_t *at)", n, n);
    case P_ENC:
        return acc_aprintf(ar, "static %s %s__enc(const %s *v, ac_wire_out *o%s)",
                           sh.deep ? "bool" : "void", n, n, count);
    case P_DSIZE:
        return acc_aprintf(ar, "static void %s__dsize(ac_wire_in *in, size_t *at)",
                           n);
    case P_DEC:
        break;
    }
    return acc_aprintf(ar, "static void %s__dec(%s *v, ac_wire_in *in, "
                       "unsigned char *base, size_t *at)", n, n);
}

/* Messages (msg) need no __tail: their sender computes it from its
 * parameters. `copy_only`: a struct only start arguments hold, which is
 * copied (a supervisor's restart) but never travels: its codecs would be
 * unused functions. */
static void helper_protos(acc_gen *g, const char *n, const acc_field *fields,
                          shape sh, bool copy_only)
{
    for (pass p = sh.msg ? P_COPY : P_TAIL; p <= (copy_only ? P_COPY : P_DEC); p++)
        if (p > P_COPY || acc_fields_have_var(fields))
            acc_gen_line(g, "%s;", signature(g, p, n, sh));
}

/* One helper: the signature, the (void) of the parameters a helper of no
 * fields leaves unused, `head`, fn on each field, `foot` (both may be
 * NULL). */
static void put_helper(acc_gen *g, pass p, const char *n,
                       const acc_field *fields, shape sh, bool req,
                       const char *head, value_fn *fn, const char *foot)
{
    emitter e = { g, "*at", sh.deep && !sh.msg ? "depth" : "0" };
    bool var = acc_fields_have_var(fields);
    acc_buf_putc(g->out, '\n');
    acc_gen_line(g, "%s", signature(g, p, n, sh));
    acc_gen_line(g, "{");
    if (p == P_DSIZE && !var)
        acc_gen_line(g, "    (void)at;");
    else if (p == P_DEC && !var)
        acc_gen_line(g, "    (void)at;\n    (void)base;");
    if (!req && fields == NULL && p == P_ENC)
        acc_gen_line(g, "    (void)v;\n    (void)o;");
    else if (!req && fields == NULL && p == P_DSIZE)
        acc_gen_line(g, "    (void)in;");
    else if (!req && fields == NULL && p == P_DEC)
        acc_gen_line(g, "    (void)in;\n    v->unused_ = 0;");
    if (head != NULL)
        acc_gen_line(g, "%s", head);
    each_field(&e, fn, fields, "v->", p != P_DSIZE, 0);
    if (foot != NULL)
        acc_gen_line(g, "%s", foot);
    acc_gen_line(g, "}");
}

/* The helpers of a struct (msg false) or of a message's struct, whose
 * tail its sender computes from its parameters (no __tail). req: a
 * request, whose struct begins with its ac_reply_to (on the wire: the 32
 * address bytes, then the id as a u64). copy_only: helper_protos'. */
static void helpers(acc_gen *g, const char *n, const acc_field *fields,
                    shape sh, bool req, bool copy_only)
{
    /* A recursive struct counts itself: past AC_MAX_DEPTH, the size pass
     * gives up with a size no send accepts (and so does every loop above
     * it: they stop past AC_MAX_PAYLOAD), enc returns false, and dsize
     * turns the input bad. */
    bool rec = sh.recursive;
    if (acc_fields_have_var(fields)) {
        if (!sh.msg)
            put_helper(g, P_TAIL, n, fields, sh, false, rec
                       ? "    if (++depth > AC_MAX_DEPTH) {\n"
                         "        *at = AC_MAX_PAYLOAD + 1;\n"
                         "        return;\n    }" : NULL, tail_value, NULL);
        put_helper(g, P_COPY, n, fields, sh, false, NULL, copy_value, NULL);
    }
    if (copy_only)
        return;
    const char *enc_head = req
        ? "    ac_wire_bytes(o, v->reply_to.to.bytes, 32);\n"
          "    ac_wire_u64(o, v->reply_to.id);" : rec
        ? "    if (++depth > AC_MAX_DEPTH)\n        return false;" : NULL;
    put_helper(g, P_ENC, n, fields, sh, req, enc_head, enc_value,
               sh.deep ? "    return true;" : NULL);
    put_helper(g, P_DSIZE, n, fields, sh, req, req
               ? "    (void)ac_wire_take(in, 40);" : rec
               ? "    if (++in->depth > AC_MAX_DEPTH) {\n"
                 "        in->bad = true;\n        return;\n    }" : NULL,
               dsize_value, rec ? "    in->depth--;" : NULL);
    put_helper(g, P_DEC, n, fields, sh, req, req
               ? "    memcpy(v->reply_to.to.bytes, ac_wire_take(in, 32), 32);\n"
                 "    v->reply_to.id = ac_wire_get_u64(in);" : NULL,
               dec_value, NULL);
}

/* A message's struct (or a reply's) with these fields. */
static shape msg_shape(const acc_field *fields)
{
    shape sh = { fields_deep(fields), false, true };
    return sh;
}

static shape struct_shape(const acc_decl *d)
{
    shape sh = { d->deep, d->recursive, false };
    return sh;
}

/* The structs and enums the module's messages use, directly or not. */
typedef struct needs {
    acc_decl **list;
    size_t count, cap;
    acc_map seen;
} needs;

/* Records the struct or enum a type names (through an array or a
 * sequence) the first time; returns the struct whose fields are to be
 * looked at next, or NULL. */
static acc_decl *need_type(acc_gen *g, needs *nd, const acc_type *t)
{
    while (t->kind == ACC_ARRAY || t->kind == ACC_SEQ)
        t = t->elem;
    if (t->kind != ACC_NAMED)
        return NULL;
    const char *n = acc_decl_cstr(g, t->decl, ACC_D_TYPE);
    if (acc_map_get(&nd->seen, n, strlen(n)) != NULL)
        return NULL;
    acc_map_put(&nd->seen, n, strlen(n), (void *)t->decl);
    if (nd->count == nd->cap) {
        size_t cap = nd->cap ? nd->cap * 2 : 16;
        acc_decl **l = acc_alloc(&g->cx->arena, cap * sizeof(*l));
        if (nd->count > 0)
            memcpy(l, nd->list, nd->count * sizeof(*l));
        nd->list = l;
        nd->cap = cap;
    }
    nd->list[nd->count++] = t->decl;
    return t->decl->kind == ACC_STRUCT ? t->decl : NULL;
}

/* Each type the fields name, in pre-order, depth first: a struct is
 * listed before the types of its own fields. The path is kept in the
 * structs (acc_decl.up; each is entered once, the first time it is seen)
 * rather than on the C stack, so that a long chain of structs is no deep
 * recursion. */
static void need_fields(acc_gen *g, needs *nd, const acc_field *fields)
{
    for (const acc_field *f = fields; f != NULL; f = f->next) {
        acc_decl *cur = need_type(g, nd, &f->type);
        if (cur == NULL)
            continue;
        cur->up = NULL;
        cur->at = cur->fields;
        while (cur != NULL) {
            const acc_field *cf = cur->at;
            if (cf == NULL) {
                cur = cur->up;
                continue;
            }
            cur->at = cf->next;
            acc_decl *next = need_type(g, nd, &cf->type);
            if (next != NULL) {
                next->up = cur;
                next->at = next->fields;
                cur = next;
            }
        }
    }
}

/* The position of struct d in the list mark_recursion indexed by name. */
static uint32_t index_of(acc_gen *g, const acc_map *index, const acc_decl *d)
{
    const char *c = acc_decl_cstr(g, d, ACC_D_TYPE);
    return (uint32_t)(uintptr_t)acc_map_get(index, c, strlen(c)) - 1;
}

/* Marks the structs in nd that are recursive and deep (acc_decl). They are
 * the strongly connected components of the graph of "a field holds this
 * struct" (Tarjan's algorithm), kept iterative so that a long chain of
 * structs cannot exhaust the compiler's stack: a component of more than
 * one struct, or of one whose field holds itself, is recursive. Tarjan
 * finishes a component only after every component it reaches, so whether
 * those are deep is known by then. */
static void mark_recursion(acc_gen *g, needs *nd)
{
    typedef struct frame {
        uint32_t v;
        const acc_field *next;  /* the field to look at next */
    } frame;
    acc_arena *ar = &g->cx->arena;
    uint32_t n = (uint32_t)nd->count;
    uint32_t *order = acc_alloc(ar, n * sizeof(*order));  /* 0: not seen */
    uint32_t *low = acc_alloc(ar, n * sizeof(*low));
    uint32_t *comp = acc_alloc(ar, n * sizeof(*comp));    /* 0: open */
    uint32_t *stack = acc_alloc(ar, n * sizeof(*stack));
    frame *calls = acc_alloc(ar, n * sizeof(*calls));
    uint32_t seen = 0, sp = 0, comps = 0;
    acc_map index;

    acc_map_init(&index, ar);
    for (uint32_t i = 0; i < n; i++) {
        const char *c = acc_decl_cstr(g, nd->list[i], ACC_D_TYPE);
        acc_map_put(&index, c, strlen(c), (void *)(uintptr_t)(i + 1));
    }
#define INDEX_OF(d) index_of(g, &index, (d))
    for (uint32_t root = 0; root < n; root++) {
        if (order[root] != 0 || nd->list[root]->kind != ACC_STRUCT)
            continue;
        uint32_t cp = 0;
        order[root] = low[root] = ++seen;
        stack[sp++] = root;
        calls[cp++] = (frame){ root, nd->list[root]->fields };
        while (cp > 0) {
            frame *fr = &calls[cp - 1];
            uint32_t v = fr->v;
            if (fr->next != NULL) {
                const acc_decl *d = held_struct(&fr->next->type);
                fr->next = fr->next->next;
                if (d == NULL)
                    continue;
                uint32_t u = INDEX_OF(d);
                if (order[u] == 0) {
                    order[u] = low[u] = ++seen;
                    stack[sp++] = u;
                    calls[cp++] = (frame){ u, nd->list[u]->fields };
                } else if (comp[u] == 0 && order[u] < low[v]) {
                    low[v] = order[u];
                }
                continue;
            }
            cp--;
            if (cp > 0 && low[v] < low[calls[cp - 1].v])
                low[calls[cp - 1].v] = low[v];
            if (low[v] != order[v])
                continue;
            /* v roots a component: the structs above it on the stack. */
            uint32_t first = sp;
            do
                first--;
            while (stack[first] != v);
            comps++;
            for (uint32_t i = first; i < sp; i++)
                comp[stack[i]] = comps;
            bool rec = sp - first > 1, deep = false;
            for (uint32_t i = first; i < sp; i++)
                for (const acc_field *f = nd->list[stack[i]]->fields; f != NULL;
                     f = f->next) {
                    const acc_decl *d = held_struct(&f->type);
                    if (d == NULL)
                        continue;
                    if (comp[INDEX_OF(d)] == comps)
                        rec = true;
                    else
                        deep = deep || d->deep;
                }
            for (uint32_t i = first; i < sp; i++) {
                nd->list[stack[i]]->recursive = rec;
                nd->list[stack[i]]->deep = rec || deep;
            }
            sp = first;
        }
    }
#undef INDEX_OF
}

void acc_gen_type_codecs(acc_gen *g)
{
    needs nd;
    memset(&nd, 0, sizeof(nd));
    acc_map_init(&nd.seen, &g->cx->arena);
    for (const acc_actor *a = g->mod->actors; a != NULL; a = a->next)
        for (const acc_message *m = a->messages; m != NULL; m = m->next) {
            need_fields(g, &nd, m->fields);
            need_fields(g, &nd, m->reply);
        }
    /* Those from here on only start arguments hold: they get the size and
     * copy passes (the descriptor's copy_args), nothing else. */
    size_t in_messages = nd.count;
    for (const acc_actor *a = g->mod->actors; a != NULL; a = a->next)
        if (a->start != NULL)
            need_fields(g, &nd, a->start->fields);
    bool any = in_messages > 0;
    for (size_t i = in_messages; i < nd.count; i++)
        any = any || (nd.list[i]->kind == ACC_STRUCT &&
                      acc_fields_have_var(nd.list[i]->fields));
    if (!any)
        return;
    mark_recursion(g, &nd);

    acc_gen_line(g, "\n/* ---- codecs of the structs and enums in messages "
                    "------------------------- */\n");
    for (size_t i = 0; i < in_messages; i++) {
        const acc_decl *d = nd.list[i];
        if (d->kind == ACC_ENUM) {
            acc_arena_mark mk = acc_arena_mark_get(&g->cx->arena);
            const char *n = acc_decl_cstr(g, d, ACC_D_TYPE);
            acc_gen_line(g, "static bool %s__valid(int32_t v)\n{", n);
            acc_gen_line(g, "    switch (v) {");
            for (const acc_enumerator *e = d->values; e != NULL; e = e->next)
                if (e->value == INT32_MIN)
                    acc_gen_line(g, "    case -2147483647 - 1:");
                else
                    acc_gen_line(g, "    case %lld:", (long long)e->value);
            acc_gen_line(g, "        return true;\n    }\n    return false;\n}\n");
            acc_arena_release(&g->cx->arena, mk);
        }
    }
    for (size_t i = 0; i < nd.count; i++)
        if (nd.list[i]->kind == ACC_STRUCT) {
            acc_arena_mark mk = acc_arena_mark_get(&g->cx->arena);
            helper_protos(g, acc_decl_cstr(g, nd.list[i], ACC_D_TYPE),
                          nd.list[i]->fields, struct_shape(nd.list[i]),
                          i >= in_messages);
            acc_arena_release(&g->cx->arena, mk);
        }

    for (size_t i = 0; i < nd.count; i++)
        if (nd.list[i]->kind == ACC_STRUCT) {
            acc_arena_mark mk = acc_arena_mark_get(&g->cx->arena);
            helpers(g, acc_decl_cstr(g, nd.list[i], ACC_D_TYPE),
                    nd.list[i]->fields,
                    struct_shape(nd.list[i]), false, i >= in_messages);
            acc_arena_release(&g->cx->arena, mk);
        }
}

/* ---- per actor ---------------------------------------------------- */

/* One case per message (reply: per message with a reply, on its reply
 * struct) running pass p on the body m_ (o_ or in_, size_ or at_). */
static void put_cases(acc_gen *g, const acc_actor *a, bool reply, pass ps)
{
    for (const acc_message *m = a->messages; m != NULL; m = m->next) {
        if (reply && !m->has_reply)
            continue;
        acc_arena_mark mk = acc_arena_mark_get(&g->cx->arena);
        acc_msg_cname row = reply ? ACC_M_REPLY_STRUCT : ACC_M_STRUCT;
        const char *n = acc_msg_cstr(g, m, row);
        acc_gen_line(g, "    case %s:", acc_msg_cstr(g, m, ACC_M_TAG));
        if (ps == P_ENC && fields_deep(reply ? m->reply : m->fields)) {
            acc_gen_line(g, "        if (!%s__enc((const %s *)m_, &o_))", n, n);
            acc_gen_line(g, "            return AC_EINVAL;");
        } else if (ps == P_ENC) {
            acc_gen_line(g, "        %s__enc((const %s *)m_, &o_);", n, n);
        } else if (ps == P_DSIZE) {
            acc_gen_line(g, "        size_ = sizeof(%s);", n);
            acc_gen_line(g, "        %s__dsize(&in_, &size_);", n);
        } else {
            acc_gen_line(g, "        at_ = sizeof(%s);", n);
            acc_gen_line(g, "        %s__dec((%s *)m_, &in_, (unsigned char *)m_, "
                            "&at_);", n, n);
        }
        acc_gen_line(g, "        break;");
        acc_arena_release(&g->cx->arena, mk);
    }
}

/* The encode and decode functions of the messages (an actor without any
 * gets stubs) or, with `reply`, of the replies: the body's fields only
 * (the transport carries the ask's id and status next to them, like a
 * message's tag). */
static void put_codec_fns(acc_gen *g, const acc_actor *a, const char *p,
                          bool reply)
{
    if (reply)
        acc_gen_line(g, "\nlong %s(uint32_t tag, const ac_envelope *reply, "
                        "uint8_t *buf, size_t cap)\n{",
                     acc_actor_cstr(g, a, ACC_A_ENCODE_REPLY));
    else
        acc_gen_line(g, "\nstatic long %s__encode(const ac_envelope *e, "
                        "uint8_t *buf, size_t cap)\n{", p);
    if (a->messages == NULL) {
        acc_gen_line(g, "    (void)e;\n    (void)buf;\n    (void)cap;\n"
                        "    return AC_EBADTAG;\n}");
    } else {
        /* Only a measuring call (cap 0) may come without a buffer. */
        acc_gen_line(g, "    const void *m_;");
        acc_gen_line(g, "    ac_wire_out o_ = { buf, cap, 0 };\n");
        acc_gen_line(g, "    if (%s == NULL || (buf == NULL && cap > 0))",
                     reply ? "reply" : "e");
        acc_gen_line(g, "        return AC_EINVAL;");
        acc_gen_line(g, "    m_ = %s;", reply
                     ? "ac_reply_body((ac_envelope *)reply)"
                     : "ac_envelope_payload((ac_envelope *)e)");
        acc_gen_line(g, "    switch (%s) {", reply ? "tag" : "e->tag");
        put_cases(g, a, reply, P_ENC);
        acc_gen_line(g, "    default:\n        return AC_EBADTAG;\n    }");
        acc_gen_line(g, "    return (long)o_.len;\n}");
    }

    if (reply)
        acc_gen_line(g, "\nint %s(ac_ctx *cx, uint32_t tag, const ac_reply_to "
                        "*to, const uint8_t *buf, size_t len, ac_envelope "
                        "**out)\n{", acc_actor_cstr(g, a, ACC_A_DECODE_REPLY));
    else
        acc_gen_line(g, "\nstatic int %s__decode(ac_ctx *cx, uint32_t tag, "
                        "const uint8_t *buf, size_t len,\n"
                        "                      ac_envelope **out)\n{", p);
    if (a->messages == NULL) {
        acc_gen_line(g, "    (void)cx;\n    (void)tag;\n    (void)buf;\n"
                        "    (void)len;\n    if (out != NULL)\n        *out = NULL;\n"
                        "    return AC_EBADTAG;\n}");
        return;
    }
    acc_gen_line(g, "    ac_wire_in in_ = { buf, len, 0, false, 0 };");
    acc_gen_line(g, "    size_t size_, at_;");
    acc_gen_line(g, "    ac_envelope *e_;");
    acc_gen_line(g, "    void *m_;\n");
    /* Only an empty input may come without a buffer. */
    acc_gen_line(g, "    if (out == NULL)\n        return AC_EINVAL;");
    acc_gen_line(g, "    *out = NULL;");
    acc_gen_line(g, "    if (cx == NULL || (buf == NULL && len > 0)%s)",
                 reply ? " || to == NULL" : "");
    acc_gen_line(g, "        return AC_EINVAL;");
    acc_gen_line(g, "    switch (tag) {");
    put_cases(g, a, reply, P_DSIZE);
    acc_gen_line(g, "    default:\n        return AC_EBADTAG;\n    }");
    acc_gen_line(g, "    if (in_.bad || in_.pos != len || size_ > AC_MAX_PAYLOAD%s)",
                 reply ? " - AC_REPLY_HEAD_SIZE" : "");
    acc_gen_line(g, "        return AC_EINVAL;");
    acc_gen_line(g, "    e_ = %s;", reply ? "ac_reply_new(cx, to, size_)"
                                          : "ac_envelope_new(cx, tag, size_)");
    acc_gen_line(g, "    if (e_ == NULL)\n        return AC_ENOMEM;");
    acc_gen_line(g, "    m_ = %s(e_);", reply ? "ac_reply_body" : "ac_envelope_payload");
    acc_gen_line(g, "    in_.pos = 0;");
    acc_gen_line(g, "    switch (tag) {");
    put_cases(g, a, reply, P_DEC);
    acc_gen_line(g, "    }");
    acc_gen_line(g, "    *out = e_;\n    return 0;\n}");
}

static void put_codecs(acc_gen *g, const acc_actor *a, const char *p)
{
    acc_arena *ar = &g->cx->arena;
    for (const acc_message *m = a->messages; m != NULL; m = m->next) {
        acc_arena_mark mk = acc_arena_mark_get(ar);
        helper_protos(g, acc_msg_cstr(g, m, ACC_M_STRUCT), m->fields,
                      msg_shape(m->fields), false);
        if (m->has_reply)
            helper_protos(g, acc_msg_cstr(g, m, ACC_M_REPLY_STRUCT), m->reply,
                          msg_shape(m->reply), false);
        acc_arena_release(ar, mk);
    }
    for (const acc_message *m = a->messages; m != NULL; m = m->next) {
        acc_arena_mark mk = acc_arena_mark_get(ar);
        helpers(g, acc_msg_cstr(g, m, ACC_M_STRUCT), m->fields,
                msg_shape(m->fields), m->has_reply, false);
        if (m->has_reply)
            helpers(g, acc_msg_cstr(g, m, ACC_M_REPLY_STRUCT), m->reply,
                    msg_shape(m->reply), false, false);
        acc_arena_release(ar, mk);
    }

    put_codec_fns(g, a, p, false);
    /* An actor with a request has reply codecs, named in names.c. */
    if (acc_actor_cstr(g, a, ACC_A_ENCODE_REPLY) != NULL)
        put_codec_fns(g, a, p, true);
}

/* The descriptor's copy: the send's builder run on a message that is
 * already in an envelope. The size pass reads the old views, the struct is
 * assigned whole (fixed fields and arrays; views still pointing into the
 * old tail), then the message's __copy moves the variable-length data into
 * the new tail and points the views there. */
static void put_copy(acc_gen *g, const acc_actor *a, const char *p)
{
    acc_gen_line(g, "\nstatic ac_envelope *%s__copy(ac_ctx *cx, "
                    "const ac_envelope *e)\n{", p);
    if (a->messages == NULL) {
        acc_gen_line(g, "    (void)cx;\n    (void)e;\n    return NULL;\n}");
        return;
    }
    acc_gen_line(g, "    const void *m_;");
    acc_gen_line(g, "    size_t size_;");
    acc_gen_line(g, "    ac_envelope *c_;\n");
    acc_gen_line(g, "    if (cx == NULL || e == NULL)\n        return NULL;");
    acc_gen_line(g, "    m_ = ac_envelope_payload((ac_envelope *)e);");
    acc_gen_line(g, "    switch (e->tag) {");
    for (const acc_message *m = a->messages; m != NULL; m = m->next) {
        /* The names spelled for one case go with it. */
        acc_arena_mark mk = acc_arena_mark_get(&g->cx->arena);
        const char *n = acc_msg_cstr(g, m, ACC_M_STRUCT);
        bool var = acc_fields_have_var(m->fields);
        acc_gen_line(g, "    case %s: {", acc_msg_cstr(g, m, ACC_M_TAG));
        acc_gen_line(g, "        const %s *s_ = (const %s *)m_;", n, n);
        acc_gen_line(g, "        %s *d_;\n", n);
        acc_gen_line(g, "        size_ = sizeof(%s);", n);
        if (var) {
            acc_gen_tail(g, m->fields, "s_->", "size_", 1);
            acc_gen_line(g, "        if (size_ > AC_MAX_PAYLOAD)\n"
                            "            return NULL;");
        }
        acc_gen_line(g, "        c_ = ac_envelope_new(cx, e->tag, size_);");
        acc_gen_line(g, "        if (c_ == NULL)\n            return NULL;");
        acc_gen_line(g, "        d_ = (%s *)ac_envelope_payload(c_);", n);
        acc_gen_line(g, "        *d_ = *s_;");
        if (var) {
            acc_gen_line(g, "        size_ = sizeof(%s);", n);
            acc_gen_line(g, "        %s__copy(d_, (unsigned char *)d_, &size_);", n);
        }
        acc_gen_line(g, "        return c_;\n    }");
        acc_arena_release(&g->cx->arena, mk);
    }
    acc_gen_line(g, "    }\n    return NULL;\n}");
}

/* The descriptor's copy_args: the start arguments made whole in one block
 * the runtime owns, for a spawn later than the call that gave them (a
 * supervisor's restart, a router's replacement worker). The same size and
 * copy passes as a message's copy, with the struct at the block's start;
 * the caller sizes first (cap 0) and allocates. */
static void put_copy_args(acc_gen *g, const acc_actor *a, const char *p)
{
    const acc_field *fields = a->start->fields;
    const char *n = acc_actor_cstr(g, a, ACC_A_START_ARGS);
    bool var = acc_fields_have_var(fields);
    if (var)
        helpers(g, n, fields, msg_shape(fields), false, true);
    acc_gen_line(g, "\nstatic size_t %s__copy_args(const void *args, void *dst, "
                    "size_t cap)\n{", p);
    acc_gen_line(g, "    const %s *s_ = (const %s *)args;", n, n);
    acc_gen_line(g, "    size_t size_ = sizeof(%s);\n", n);
    if (var)
        acc_gen_tail(g, fields, "s_->", "size_", 0);
    acc_gen_line(g, "    if (dst == NULL || size_ > cap || size_ > AC_MAX_PAYLOAD)");
    acc_gen_line(g, "        return size_;");
    acc_gen_line(g, "    *(%s *)dst = *s_;", n);
    if (var) {
        acc_gen_line(g, "    size_ = sizeof(%s);", n);
        acc_gen_line(g, "    %s__copy((%s *)dst, (unsigned char *)dst, &size_);", n, n);
    }
    acc_gen_line(g, "    return size_;\n}");
}

void acc_gen_actor_codecs(acc_gen *g, const acc_actor *a)
{
    const char *p = acc_actor_cstr(g, a, ACC_A_STATE);
    put_codecs(g, a, p);
    put_copy(g, a, p);
    if (a->start != NULL && a->start->fields != NULL)
        put_copy_args(g, a, p);
}
