/*
 * gen_codec.c — the codecs of NAME.actor.c: per struct and message its
 * helpers (tail, copy, enc, dsize, dec), per actor the descriptor's
 * encode, decode and copy and the reply codecs. gen_source.c calls in for
 * them, and for the size pass of its senders (acc_gen_tail).
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
 */
#include <string.h>

#include "acc.h"

/* ---- one value's code, one function per pass ------------------------ */

typedef struct emitter {
    acc_gen *g;
    const char *at;         /* an lvalue of type size_t: the tail's end */
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
        acc_gen_line(g, "%s%s__tail(&%s, &%s);", in,
                     t->decl->cname[ACC_D_TYPE], v, e->at);
    } else if (t->kind == ACC_SEQ) {
        const char *et = acc_gen_ctype(g, t->elem);
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
                     t->decl->cname[ACC_D_TYPE], v, at);
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
        else
            acc_gen_line(g, "%s%s__enc(&%s, o);", in,
                         t->decl->cname[ACC_D_TYPE], v);
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
        const char *n = t->decl->cname[ACC_D_TYPE];
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
        const char *n = t->decl->cname[ACC_D_TYPE];
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
        fn(e, &f->type, named ? acc_aprintf(&e->g->cx->arena, "%s%.*s", owner,
                                            (int)f->name.len, f->name.s)
                              : NULL, depth);
}

void acc_gen_tail(acc_gen *g, const acc_field *fields, const char *owner,
                  const char *at, int depth)
{
    emitter e = { g, at };
    each_field(&e, tail_value, fields, owner, true, depth);
}

/* ---- helpers per struct and message -------------------------------- */

typedef enum pass { P_TAIL, P_COPY, P_ENC, P_DSIZE, P_DEC } pass;

/* "static void NAME__enc(const NAME *v, ac_wire_out *o)": a helper's
 * signature, for its prototype and its definition. */
static const char *signature(acc_gen *g, pass p, const char *n)
{
    static const char *const sig[] = {
        [P_TAIL] = "static void %s__tail(const %s *v, size_t *at)",
        [P_COPY] = "static void %s__copy(%s *v, unsigned char *base, size_t *at)",
        [P_ENC] = "static void %s__enc(const %s *v, ac_wire_out *o)",
        [P_DSIZE] = "static void %s__dsize(ac_wire_in *in, size_t *at)%.0s",
        [P_DEC] = ("static void %s__dec(%s *v, ac_wire_in *in, unsigned char *base, "
                   "size_t *at)"),
    };
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    return acc_aprintf(&g->cx->arena, sig[p], n, n);
#pragma GCC diagnostic pop
}

/* Messages (msg) need no __tail: their sender computes it from its
 * parameters. */
static void helper_protos(acc_gen *g, const char *n, const acc_field *fields,
                          bool msg)
{
    for (pass p = msg ? P_COPY : P_TAIL; p <= P_DEC; p++)
        if (p > P_COPY || acc_fields_have_var(fields))
            acc_gen_line(g, "%s;", signature(g, p, n));
}

/* One helper: the signature, the (void) of the parameters a helper of no
 * fields leaves unused, `head`, fn on each field, `foot` (both may be
 * NULL). */
static void put_helper(acc_gen *g, pass p, const char *n,
                       const acc_field *fields, bool req, const char *head,
                       value_fn *fn, const char *foot)
{
    emitter e = { g, "*at" };
    bool var = acc_fields_have_var(fields);
    acc_buf_putc(g->out, '\n');
    acc_gen_line(g, "%s", signature(g, p, n));
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

/* msg: a message's struct, whose tail its sender computes from its
 * parameters (no __tail). req: a request, whose struct begins with its
 * ac_reply_to (on the wire: the 32 address bytes, then the id as a u64). */
static void helpers(acc_gen *g, const char *n, const acc_field *fields,
                    bool msg, bool req)
{
    /* A struct can hold a sequence of itself: bound the recursion that
     * hostile input could drive. */
    bool guard = !msg && fields != NULL;
    if (acc_fields_have_var(fields)) {
        if (!msg)
            put_helper(g, P_TAIL, n, fields, false, NULL, tail_value, NULL);
        put_helper(g, P_COPY, n, fields, false, NULL, copy_value, NULL);
    }
    put_helper(g, P_ENC, n, fields, req, req
               ? "    ac_wire_bytes(o, v->reply_to.to.bytes, 32);\n"
                 "    ac_wire_u64(o, v->reply_to.id);" : NULL,
               enc_value, NULL);
    put_helper(g, P_DSIZE, n, fields, req, req
               ? "    (void)ac_wire_take(in, 40);" : guard
               ? "    if (++in->depth > AC_WIRE_MAX_DEPTH) {\n"
                 "        in->bad = true;\n        return;\n    }" : NULL,
               dsize_value, guard ? "    in->depth--;" : NULL);
    put_helper(g, P_DEC, n, fields, req, req
               ? "    memcpy(v->reply_to.to.bytes, ac_wire_take(in, 32), 32);\n"
                 "    v->reply_to.id = ac_wire_get_u64(in);" : NULL,
               dec_value, NULL);
}

/* The structs and enums the module's messages use, directly or not. */
typedef struct needs {
    const acc_decl **list;
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
    const char *n = t->decl->cname[ACC_D_TYPE];
    if (acc_map_get(&nd->seen, n, strlen(n)) != NULL)
        return NULL;
    acc_map_put(&nd->seen, n, strlen(n), (void *)t->decl);
    if (nd->count == nd->cap) {
        size_t cap = nd->cap ? nd->cap * 2 : 16;
        const acc_decl **l = acc_alloc(&g->cx->arena, cap * sizeof(*l));
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
    if (nd.count == 0)
        return;

    acc_gen_line(g, "\n/* ---- codecs of the structs and enums in messages "
                    "------------------------- */\n");
    for (size_t i = 0; i < nd.count; i++) {
        const acc_decl *d = nd.list[i];
        const char *n = d->cname[ACC_D_TYPE];
        if (d->kind == ACC_ENUM) {
            acc_gen_line(g, "static bool %s__valid(int32_t v)\n{", n);
            acc_gen_line(g, "    switch (v) {");
            for (const acc_enumerator *e = d->values; e != NULL; e = e->next)
                if (e->value == INT32_MIN)
                    acc_gen_line(g, "    case -2147483647 - 1:");
                else
                    acc_gen_line(g, "    case %lld:", (long long)e->value);
            acc_gen_line(g, "        return true;\n    }\n    return false;\n}\n");
        }
    }
    for (size_t i = 0; i < nd.count; i++)
        if (nd.list[i]->kind == ACC_STRUCT)
            helper_protos(g, nd.list[i]->cname[ACC_D_TYPE],
                          nd.list[i]->fields, false);

    for (size_t i = 0; i < nd.count; i++)
        if (nd.list[i]->kind == ACC_STRUCT)
            helpers(g, nd.list[i]->cname[ACC_D_TYPE], nd.list[i]->fields,
                    false, false);
}

/* ---- per actor ---------------------------------------------------- */

/* One case per message (reply: per message with a reply, on its reply
 * struct) running pass p on the body m_ (o_ or in_, size_ or at_). */
static void put_cases(acc_gen *g, const acc_actor *a, bool reply, pass ps)
{
    for (const acc_message *m = a->messages; m != NULL; m = m->next) {
        if (reply && !m->has_reply)
            continue;
        const char *n = m->cname[reply ? ACC_M_REPLY_STRUCT
                                      : ACC_M_STRUCT];
        acc_gen_line(g, "    case %s:", m->cname[ACC_M_TAG]);
        if (ps == P_ENC) {
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
                     a->cname[ACC_A_ENCODE_REPLY]);
    else
        acc_gen_line(g, "\nstatic long %s__encode(const ac_envelope *e, "
                        "uint8_t *buf, size_t cap)\n{", p);
    if (a->messages == NULL) {
        acc_gen_line(g, "    (void)e;\n    (void)buf;\n    (void)cap;\n"
                        "    return AC_EBADTAG;\n}");
    } else {
        acc_gen_line(g, "    const void *m_ = %s;", reply
                     ? "ac_reply_body((ac_envelope *)reply)"
                     : "ac_envelope_payload((ac_envelope *)e)");
        acc_gen_line(g, "    ac_wire_out o_ = { buf, cap, 0 };\n");
        acc_gen_line(g, "    switch (%s) {", reply ? "tag" : "e->tag");
        put_cases(g, a, reply, P_ENC);
        acc_gen_line(g, "    default:\n        return AC_EBADTAG;\n    }");
        acc_gen_line(g, "    return (long)o_.len;\n}");
    }

    if (reply)
        acc_gen_line(g, "\nint %s(ac_ctx *cx, uint32_t tag, const ac_reply_to "
                        "*to, const uint8_t *buf, size_t len, ac_envelope "
                        "**out)\n{", a->cname[ACC_A_DECODE_REPLY]);
    else
        acc_gen_line(g, "\nstatic int %s__decode(ac_ctx *cx, uint32_t tag, "
                        "const uint8_t *buf, size_t len,\n"
                        "                      ac_envelope **out)\n{", p);
    if (a->messages == NULL) {
        acc_gen_line(g, "    (void)cx;\n    (void)tag;\n    (void)buf;\n"
                        "    (void)len;\n    *out = NULL;\n    return AC_EBADTAG;\n}");
        return;
    }
    acc_gen_line(g, "    ac_wire_in in_ = { buf, len, 0, false, 0 };");
    acc_gen_line(g, "    size_t size_, at_;");
    acc_gen_line(g, "    ac_envelope *e_;");
    acc_gen_line(g, "    void *m_;\n");
    acc_gen_line(g, "    *out = NULL;");
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
    for (const acc_message *m = a->messages; m != NULL; m = m->next) {
        helper_protos(g, m->cname[ACC_M_STRUCT], m->fields, true);
        if (m->has_reply)
            helper_protos(g, m->cname[ACC_M_REPLY_STRUCT], m->reply, true);
    }
    for (const acc_message *m = a->messages; m != NULL; m = m->next) {
        helpers(g, m->cname[ACC_M_STRUCT], m->fields, true, m->has_reply);
        if (m->has_reply)
            helpers(g, m->cname[ACC_M_REPLY_STRUCT], m->reply, true, false);
    }

    put_codec_fns(g, a, p, false);
    /* An actor with a request has reply codecs, named in names.c. */
    if (a->cname[ACC_A_ENCODE_REPLY] != NULL)
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
    acc_gen_line(g, "    const void *m_ = ac_envelope_payload((ac_envelope *)e);");
    acc_gen_line(g, "    size_t size_;");
    acc_gen_line(g, "    ac_envelope *c_;\n");
    acc_gen_line(g, "    switch (e->tag) {");
    for (const acc_message *m = a->messages; m != NULL; m = m->next) {
        const char *n = m->cname[ACC_M_STRUCT];
        bool var = acc_fields_have_var(m->fields);
        acc_gen_line(g, "    case %s: {", m->cname[ACC_M_TAG]);
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
    }
    acc_gen_line(g, "    }\n    return NULL;\n}");
}

void acc_gen_actor_codecs(acc_gen *g, const acc_actor *a)
{
    const char *p = a->cname[ACC_A_STATE];
    put_codecs(g, a, p);
    put_copy(g, a, p);
}
