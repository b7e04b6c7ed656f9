/*
 * gen_source.c — writes NAME.actor.c: per struct and message its tail,
 * copy, encode and decode helpers, and per actor the message union, the
 * dispatch function (one switch on the tag), the hook wrappers, the
 * codecs, the message names, the type descriptor, and the spawn, send (one
 * builder per message, shared by its send, publish, send_after, send_every
 * and ask functions), whereis, ref_of and ref_self functions.
 *
 * Names made here that are not in the header contain "__", which no user
 * name can produce; locals end in '_', which no user name can either.
 *
 * The tail of an envelope (docs/WIRE.md): the message struct, then the
 * variable-length data of its fields in declaration order, depth first —
 * a string's bytes and a NUL, a bytes value's bytes, a sequence's elements
 * (aligned for their type) followed by their own variable-length data.
 * The size pass (tail / dsize) and the fill pass (copy / dec) walk the
 * same order, so the two agree on every offset.
 */
#include <string.h>

#include "acc.h"

/* ---- one value's code ---------------------------------------------------------- */

typedef enum pass { P_TAIL, P_COPY, P_ENC, P_DSIZE, P_DEC } pass;

typedef struct emitter {
    acc_gen *g;
    pass p;
    const char *at;         /* an lvalue of type size_t */
} emitter;

static const char *ind(int depth)
{
    static const char spaces[] = "                                        ";
    int n = 4 * (depth + 1);
    return spaces + (int)sizeof(spaces) - 1 - (n < 40 ? n : 40);
}

static const int wire_bits[] = {
    [ACC_I8] = 8, [ACC_I16] = 16, [ACC_I32] = 32, [ACC_I64] = 64,
    [ACC_U8] = 8, [ACC_U16] = 16, [ACC_U32] = 32, [ACC_U64] = 64,
};

static bool is_signed(acc_kind k)
{
    return k >= ACC_I8 && k <= ACC_I64;
}

static bool is_enum(const acc_type *t)
{
    return t->kind == ACC_NAMED && t->decl->kind == ACC_ENUM;
}

static bool is_struct(const acc_type *t)
{
    return t->kind == ACC_NAMED && t->decl->kind == ACC_STRUCT;
}

/* Emits the code of pass e->p for the value `v` (an lvalue) of type t. */
static void value(emitter *e, const acc_type *t, const char *v, int depth)
{
    acc_gen *g = e->g;
    acc_arena *ar = &g->cx->arena;
    const char *in = ind(depth);
    int d = depth;

    if ((e->p == P_TAIL || e->p == P_COPY) && !acc_type_has_var(t))
        return;

    if (t->kind == ACC_ARRAY) {
        acc_gen_line(g, "%sfor (uint32_t i%d_ = 0; i%d_ < %u; i%d_++) {", in,
                     d, d, (unsigned)t->size, d);
        value(e, t->elem, acc_aprintf(ar, "%s[i%d_]", v, d), depth + 1);
        acc_gen_line(g, "%s}", in);
        return;
    }
    if (is_struct(t)) {
        const char *n = t->decl->cname[ACC_D_TYPE];
        switch (e->p) {
        case P_TAIL: acc_gen_line(g, "%s%s__tail(&%s, &%s);", in, n, v, e->at); break;
        case P_COPY: acc_gen_line(g, "%s%s__copy(&%s, base, &%s);", in, n, v, e->at); break;
        case P_ENC: acc_gen_line(g, "%s%s__enc(&%s, o);", in, n, v); break;
        case P_DSIZE: acc_gen_line(g, "%s%s__dsize(in, &%s);", in, n, e->at); break;
        case P_DEC: acc_gen_line(g, "%s%s__dec(&%s, in, base, &%s);", in, n, v, e->at); break;
        }
        return;
    }
    if (is_enum(t)) {
        const char *n = t->decl->cname[ACC_D_TYPE];
        switch (e->p) {
        case P_ENC: acc_gen_line(g, "%sac_wire_u32(o, (uint32_t)(int32_t)%s);", in, v); break;
        case P_DSIZE:
            acc_gen_line(g, "%sif (!%s__valid((int32_t)ac_wire_get_u32(in)))", in, n);
            acc_gen_line(g, "%s    in->bad = true;", in);
            break;
        case P_DEC: acc_gen_line(g, "%s%s = (%s)(int32_t)ac_wire_get_u32(in);", in, v, n); break;
        default: break;
        }
        return;
    }

    switch (t->kind) {
    case ACC_BOOL:
        if (e->p == P_ENC)
            acc_gen_line(g, "%sac_wire_u8(o, %s ? 1 : 0);", in, v);
        else if (e->p == P_DSIZE)
            acc_gen_line(g, "%sac_wire_check_bool(in);", in);
        else if (e->p == P_DEC)
            acc_gen_line(g, "%s%s = ac_wire_get_u8(in) != 0;", in, v);
        return;
    case ACC_I8: case ACC_I16: case ACC_I32: case ACC_I64:
    case ACC_U8: case ACC_U16: case ACC_U32: case ACC_U64: {
        int bits = wire_bits[t->kind];
        if (e->p == P_ENC)
            acc_gen_line(g, "%sac_wire_u%d(o, (uint%d_t)%s);", in, bits, bits, v);
        else if (e->p == P_DSIZE)
            acc_gen_line(g, "%s(void)ac_wire_take(in, %d);", in, bits / 8);
        else if (e->p == P_DEC && is_signed(t->kind))
            acc_gen_line(g, "%s%s = (int%d_t)ac_wire_get_u%d(in);", in, v, bits, bits);
        else if (e->p == P_DEC)
            acc_gen_line(g, "%s%s = ac_wire_get_u%d(in);", in, v, bits);
        return;
    }
    case ACC_F32: case ACC_F64: {
        int bits = t->kind == ACC_F32 ? 32 : 64;
        if (e->p == P_ENC)
            acc_gen_line(g, "%sac_wire_f%d(o, %s);", in, bits, v);
        else if (e->p == P_DSIZE)
            acc_gen_line(g, "%s(void)ac_wire_take(in, %d);", in, bits / 8);
        else if (e->p == P_DEC)
            acc_gen_line(g, "%s%s = ac_wire_get_f%d(in);", in, v, bits);
        return;
    }
    case ACC_ADDR: case ACC_REF: {
        const char *bytes = t->kind == ACC_REF ? ".addr.bytes" : ".bytes";
        if (e->p == P_ENC)
            acc_gen_line(g, "%sac_wire_bytes(o, %s%s, 32);", in, v, bytes);
        else if (e->p == P_DSIZE)
            acc_gen_line(g, "%s(void)ac_wire_take(in, 32);", in);
        else if (e->p == P_DEC)
            acc_gen_line(g, "%smemcpy(%s%s, ac_wire_take(in, 32), 32);", in, v, bytes);
        return;
    }
    case ACC_STRING: case ACC_BYTES: {
        bool str = t->kind == ACC_STRING;
        const char *ptr = str ? "char" : "uint8_t";
        const char *extra = str ? " + 1" : "";
        switch (e->p) {
        case P_TAIL:
            acc_gen_line(g, "%sac_wire_grow(&%s, 1, (size_t)%s.len%s, 1);", in,
                         e->at, v, extra);
            break;
        case P_COPY:
            acc_gen_line(g, "%s{", in);
            acc_gen_line(g, "%s    %s *d%d_ = (%s *)(base + %s);", in, ptr, d, ptr, e->at);
            acc_gen_line(g, "%s    if (%s.len > 0)", in, v);
            acc_gen_line(g, "%s        memcpy(d%d_, %s.data, %s.len);", in, d, v, v);
            if (str)
                acc_gen_line(g, "%s    d%d_[%s.len] = '\\0';", in, d, v);
            acc_gen_line(g, "%s    %s.data = d%d_;", in, v, d);
            acc_gen_line(g, "%s    %s += (size_t)%s.len%s;", in, e->at, v, extra);
            acc_gen_line(g, "%s}", in);
            break;
        case P_ENC:
            acc_gen_line(g, "%sac_wire_u32(o, %s.len);", in, v);
            acc_gen_line(g, "%sac_wire_bytes(o, %s.data, %s.len);", in, v, v);
            break;
        case P_DSIZE:
            acc_gen_line(g, "%s{", in);
            acc_gen_line(g, "%s    uint32_t n%d_ = ac_wire_get_u32(in);", in, d);
            acc_gen_line(g, "%s    (void)ac_wire_take(in, n%d_);", in, d);
            acc_gen_line(g, "%s    ac_wire_grow(&%s, 1, (size_t)n%d_%s, 1);", in,
                         e->at, d, extra);
            acc_gen_line(g, "%s}", in);
            break;
        case P_DEC:
            acc_gen_line(g, "%s{", in);
            acc_gen_line(g, "%s    uint32_t n%d_ = ac_wire_get_u32(in);", in, d);
            acc_gen_line(g, "%s    %s *d%d_ = (%s *)(base + %s);", in, ptr, d, ptr, e->at);
            acc_gen_line(g, "%s    if (n%d_ > 0)", in, d);
            acc_gen_line(g, "%s        memcpy(d%d_, ac_wire_take(in, n%d_), n%d_);", in, d, d, d);
            if (str)
                acc_gen_line(g, "%s    d%d_[n%d_] = '\\0';", in, d, d);
            acc_gen_line(g, "%s    %s.data = d%d_;", in, v, d);
            acc_gen_line(g, "%s    %s.len = n%d_;", in, v, d);
            acc_gen_line(g, "%s    %s += (size_t)n%d_%s;", in, e->at, d, extra);
            acc_gen_line(g, "%s}", in);
            break;
        }
        return;
    }
    case ACC_SEQ: {
        const char *et = acc_gen_ctype(g, t->elem);
        const char *elem_v = acc_aprintf(ar, "d%d_[i%d_]", d, d);
        bool var = acc_type_has_var(t->elem);
        switch (e->p) {
        case P_TAIL:
            acc_gen_line(g, "%sac_wire_grow(&%s, AC_ALIGNOF(%s), %s.len, sizeof(%s));",
                         in, e->at, et, v, et);
            if (var) {
                acc_gen_line(g, "%sfor (uint32_t i%d_ = 0; i%d_ < %s.len && %s <= "
                                "AC_MAX_PAYLOAD; i%d_++) {", in, d, d, v, e->at, d);
                value(e, t->elem, acc_aprintf(ar, "%s.data[i%d_]", v, d), depth + 1);
                acc_gen_line(g, "%s}", in);
            }
            break;
        case P_COPY:
            acc_gen_line(g, "%s{", in);
            acc_gen_line(g, "%s    %s *d%d_;", in, et, d);
            acc_gen_line(g, "%s    %s = ac_wire_align(%s, AC_ALIGNOF(%s));", in,
                         e->at, e->at, et);
            acc_gen_line(g, "%s    d%d_ = (%s *)(void *)(base + %s);", in, d, et, e->at);
            acc_gen_line(g, "%s    if (%s.len > 0)", in, v);
            acc_gen_line(g, "%s        memcpy(d%d_, %s.data, %s.len * sizeof(%s));",
                         in, d, v, v, et);
            acc_gen_line(g, "%s    %s.data = d%d_;", in, v, d);
            acc_gen_line(g, "%s    %s += %s.len * sizeof(%s);", in, e->at, v, et);
            if (var) {
                acc_gen_line(g, "%s    for (uint32_t i%d_ = 0; i%d_ < %s.len; "
                                "i%d_++) {", in, d, d, v, d);
                value(e, t->elem, elem_v, depth + 2);
                acc_gen_line(g, "%s    }", in);
            }
            acc_gen_line(g, "%s}", in);
            break;
        case P_ENC:
            acc_gen_line(g, "%sac_wire_u32(o, %s.len);", in, v);
            acc_gen_line(g, "%sfor (uint32_t i%d_ = 0; i%d_ < %s.len; i%d_++) {",
                         in, d, d, v, d);
            value(e, t->elem, acc_aprintf(ar, "%s.data[i%d_]", v, d), depth + 1);
            acc_gen_line(g, "%s}", in);
            break;
        case P_DSIZE:
            acc_gen_line(g, "%s{", in);
            acc_gen_line(g, "%s    uint32_t n%d_ = ac_wire_get_count(in);", in, d);
            acc_gen_line(g, "%s    ac_wire_grow(&%s, AC_ALIGNOF(%s), n%d_, sizeof(%s));",
                         in, e->at, et, d, et);
            acc_gen_line(g, "%s    for (uint32_t i%d_ = 0; i%d_ < n%d_ && !in->bad; "
                            "i%d_++) {", in, d, d, d, d);
            value(e, t->elem, NULL, depth + 2);
            acc_gen_line(g, "%s    }", in);
            acc_gen_line(g, "%s}", in);
            break;
        case P_DEC:
            acc_gen_line(g, "%s{", in);
            acc_gen_line(g, "%s    uint32_t n%d_ = ac_wire_get_count(in);", in, d);
            acc_gen_line(g, "%s    %s *d%d_;", in, et, d);
            acc_gen_line(g, "%s    %s = ac_wire_align(%s, AC_ALIGNOF(%s));", in,
                         e->at, e->at, et);
            acc_gen_line(g, "%s    d%d_ = (%s *)(void *)(base + %s);", in, d, et, e->at);
            acc_gen_line(g, "%s    %s += n%d_ * sizeof(%s);", in, e->at, d, et);
            acc_gen_line(g, "%s    %s.data = d%d_;", in, v, d);
            acc_gen_line(g, "%s    %s.len = n%d_;", in, v, d);
            acc_gen_line(g, "%s    for (uint32_t i%d_ = 0; i%d_ < n%d_; i%d_++) {",
                         in, d, d, d, d);
            value(e, t->elem, elem_v, depth + 2);
            acc_gen_line(g, "%s    }", in);
            acc_gen_line(g, "%s}", in);
            break;
        }
        return;
    }
    default:
        return;
    }
}

/* ---- helpers per struct and message ------------------------------------------- */

static bool fields_have_var(const acc_field *f)
{
    for (; f != NULL; f = f->next)
        if (acc_type_has_var(&f->type))
            return true;
    return false;
}

/* Messages (msg) need no __tail: their sender computes it from its
 * parameters. */
static void helper_protos(acc_gen *g, const char *n, const acc_field *fields,
                          bool msg)
{
    if (fields_have_var(fields)) {
        if (!msg)
            acc_gen_line(g, "static void %s__tail(const %s *v, size_t *at);",
                         n, n);
        acc_gen_line(g, "static void %s__copy(%s *v, unsigned char *base, "
                        "size_t *at);", n, n);
    }
    acc_gen_line(g, "static void %s__enc(const %s *v, ac_wire_out *o);", n, n);
    acc_gen_line(g, "static void %s__dsize(ac_wire_in *in, size_t *at);", n);
    acc_gen_line(g, "static void %s__dec(%s *v, ac_wire_in *in, unsigned char "
                    "*base, size_t *at);", n, n);
}

/* req: a request, whose struct begins with its ac_reply_to (on the wire:
 * the 32 address bytes, then the id as a u64). */
static void helper(acc_gen *g, const char *n, const acc_field *fields,
                   pass p, bool msg, bool req)
{
    static const char *const sig[] = {
        [P_TAIL] = "static void %s__tail(const %s *v, size_t *at)",
        [P_COPY] = "static void %s__copy(%s *v, unsigned char *base, size_t *at)",
        [P_ENC] = "static void %s__enc(const %s *v, ac_wire_out *o)",
        [P_DSIZE] = "static void %s__dsize(ac_wire_in *in, size_t *at)%.0s",
        [P_DEC] = ("static void %s__dec(%s *v, ac_wire_in *in, unsigned char *base, "
                   "size_t *at)"),
    };
    bool var = fields_have_var(fields);
    if ((p == P_TAIL || p == P_COPY) && !var)
        return;
    emitter e = { g, p, "*at" };
    acc_buf_putc(g->out, '\n');
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    acc_gen_line(g, sig[p], n, n);
#pragma GCC diagnostic pop
    acc_gen_line(g, "{");
    /* Parameters a pass does not use. */
    if ((p == P_DSIZE || p == P_DEC) && !var)
        acc_gen_line(g, p == P_DEC ? "    (void)at;\n    (void)base;"
                                   : "    (void)at;");
    if (!req && fields == NULL) {
        if (p == P_ENC)
            acc_gen_line(g, "    (void)v;\n    (void)o;");
        else if (p == P_DSIZE)
            acc_gen_line(g, "    (void)in;");
        else if (p == P_DEC)
            acc_gen_line(g, "    (void)in;\n    v->unused_ = 0;");
    }
    /* A struct can hold a sequence of itself: bound the recursion that
     * hostile input could drive. */
    bool guard = p == P_DSIZE && !msg && fields != NULL;
    if (guard) {
        acc_gen_line(g, "    if (++in->depth > AC_WIRE_MAX_DEPTH) {");
        acc_gen_line(g, "        in->bad = true;\n        return;\n    }");
    }
    if (req && p == P_ENC)
        acc_gen_line(g, "    ac_wire_bytes(o, v->reply_to.to.bytes, 32);\n"
                        "    ac_wire_u64(o, v->reply_to.id);");
    else if (req && p == P_DSIZE)
        acc_gen_line(g, "    (void)ac_wire_take(in, 40);");
    else if (req && p == P_DEC)
        acc_gen_line(g, "    memcpy(v->reply_to.to.bytes, ac_wire_take(in, 32), 32);\n"
                        "    v->reply_to.id = ac_wire_get_u64(in);");
    for (const acc_field *f = fields; f != NULL; f = f->next)
        value(&e, &f->type, acc_aprintf(&g->cx->arena, "v->%.*s",
              (int)f->name.len, f->name.s), 0);
    if (guard)
        acc_gen_line(g, "    in->depth--;");
    acc_gen_line(g, "}");
}

static void helpers(acc_gen *g, const char *n, const acc_field *fields,
                    bool msg, bool req)
{
    for (pass p = msg ? P_COPY : P_TAIL; p <= P_DEC; p++)
        helper(g, n, fields, p, msg, req);
}

/* The structs and enums the module's messages use, directly or not. */
typedef struct needs {
    const acc_decl **list;
    size_t count, cap;
    acc_map seen;
} needs;

static void need_type(acc_gen *g, needs *nd, const acc_type *t);

static void need_fields(acc_gen *g, needs *nd, const acc_field *f)
{
    for (; f != NULL; f = f->next)
        need_type(g, nd, &f->type);
}

static void need_type(acc_gen *g, needs *nd, const acc_type *t)
{
    if (t->kind == ACC_ARRAY || t->kind == ACC_SEQ) {
        need_type(g, nd, t->elem);
        return;
    }
    if (t->kind != ACC_NAMED)
        return;
    const char *n = t->decl->cname[ACC_D_TYPE];
    if (acc_map_get(&nd->seen, n, strlen(n)) != NULL)
        return;
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
    if (t->decl->kind == ACC_STRUCT)
        need_fields(g, nd, t->decl->fields);
}

static void put_type_helpers(acc_gen *g)
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

/* ---- per actor --------------------------------------------------------------------- */

static bool has_replies(const acc_actor *a)
{
    for (const acc_message *m = a->messages; m != NULL; m = m->next)
        if (m->has_reply)
            return true;
    return false;
}

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

static void put_dispatch(acc_gen *g, const acc_actor *a, const char *p)
{
    const char *sig = acc_aprintf(&g->cx->arena, "static int %s__dispatch("
                                  "void *state, ac_ctx *cx, ac_envelope *e)", p);
    bool sys = a->down != NULL || a->exit != NULL;
    if (a->messages == NULL && !sys) {
        acc_gen_line(g, "%s", sig);
        acc_gen_line(g, "{\n    (void)state;\n    (void)cx;\n    (void)e;");
        acc_gen_line(g, "    return AC_EBADTAG;\n}");
        return;
    }

    if (a->messages != NULL) {
        acc_gen_line(g, "union %s__messages {", p);
        for (const acc_message *m = a->messages; m != NULL; m = m->next)
            acc_gen_line(g, "    %s %.*s;", m->cname[ACC_M_STRUCT],
                         (int)m->name.len, m->name.s);
        acc_gen_line(g, "};\n");
    }

    acc_gen_line(g, "%s", sig);
    acc_gen_line(g, "{\n    %s *self = (%s *)state;", p, p);
    if (a->messages != NULL) {
        acc_gen_line(g, "    union %s__messages *m =", p);
        acc_gen_line(g, "        (union %s__messages *)ac_envelope_payload(e);\n", p);
    } else {
        acc_buf_putc(g->out, '\n');
    }
    /* On the raw uint32_t: a tag outside the enum reaches AC_EBADTAG
     * without first being cast to an enum type that cannot hold it, which
     * C++ leaves undefined. */
    acc_gen_line(g, "    switch (e->tag) {");
    for (const acc_message *m = a->messages; m != NULL; m = m->next) {
        int n = (int)m->name.len;
        acc_gen_line(g, "    case %s:", m->cname[ACC_M_TAG]);
        acc_gen_line(g, "        return %s(self, cx, &m->%.*s);",
                     m->cname[ACC_M_HANDLER], n, m->name.s);
    }
    /* The runtime's own messages, for the hooks the actor declares; the
     * others reach AC_EBADTAG, which the runtime counts as unhandled. */
    if (a->down != NULL) {
        acc_gen_line(g, "    case AC_TAG_DOWN:");
        acc_gen_line(g, "        return %s(self, cx, (const ac_down *)"
                        "ac_envelope_payload(e));", a->cname[ACC_A_ON_DOWN]);
    }
    if (a->exit != NULL) {
        acc_gen_line(g, "    case AC_TAG_EXIT:");
        acc_gen_line(g, "        return %s(self, cx, (const ac_exit *)"
                        "ac_envelope_payload(e));", a->cname[ACC_A_ON_EXIT]);
    }
    acc_gen_line(g, "    }\n    return AC_EBADTAG;\n}\n");
    if (a->messages == NULL)
        return;

    acc_gen_line(g, "static const char *const %s__names[] = {", p);
    for (const acc_message *m = a->messages; m != NULL; m = m->next)
        acc_gen_line(g, "    \"%.*s\"%s", (int)m->name.len, m->name.s,
                     m->next ? "," : "");
    acc_gen_line(g, "};");
}

static void put_hooks(acc_gen *g, const acc_actor *a, const char *p)
{
    if (a->start != NULL) {
        acc_gen_line(g, "\nstatic int %s__start(void *state, ac_ctx *cx, "
                        "const void *args)\n{", p);
        if (a->start->fields != NULL)
            acc_gen_line(g, "    return %s((%s *)state, cx,\n"
                            "                       (const %s *)args);",
                         a->cname[ACC_A_ON_START], p,
                         a->cname[ACC_A_START_ARGS]);
        else
            acc_gen_line(g, "    (void)args;\n    return %s((%s *)state, cx);",
                         a->cname[ACC_A_ON_START], p);
        acc_gen_line(g, "}");
    }
    if (a->stop != NULL) {
        acc_gen_line(g, "\nstatic void %s__stop(void *state, ac_ctx *cx)\n{", p);
        acc_gen_line(g, "    %s((%s *)state, cx);\n}", a->cname[ACC_A_ON_STOP],
                     p);
    }
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
    if (has_replies(a))
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
        bool var = fields_have_var(m->fields);
        acc_gen_line(g, "    case %s: {", m->cname[ACC_M_TAG]);
        acc_gen_line(g, "        const %s *s_ = (const %s *)m_;", n, n);
        acc_gen_line(g, "        %s *d_;\n", n);
        acc_gen_line(g, "        size_ = sizeof(%s);", n);
        if (var) {
            emitter e = { g, P_TAIL, "size_" };
            for (const acc_field *f = m->fields; f != NULL; f = f->next)
                value(&e, &f->type, acc_aprintf(&g->cx->arena, "s_->%.*s",
                      (int)f->name.len, f->name.s), 1);
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

static void put_type(acc_gen *g, const acc_actor *a, const char *p)
{
    const acc_name *mn = &g->mod->name;
    acc_gen_line(g, "\nconst ac_actor_type %s = {", a->cname[ACC_A_TYPE]);
    acc_gen_line(g, "    AC_ABI_VERSION,");
    acc_gen_line(g, "    \"%.*s.%.*s\",", (int)mn->len, mn->s,
                 (int)a->name.len, a->name.s);
    if (a->state != NULL)
        acc_gen_line(g, "    sizeof(%s),\n    AC_ALIGNOF(%s),", p, p);
    else
        acc_gen_line(g, "    0, /* no state */\n    1,");
    acc_gen_line(g, "    %s__dispatch,", p);
    if (a->start != NULL)
        acc_gen_line(g, "    %s__start,", p);
    else
        acc_gen_line(g, "    NULL, /* on_start */");
    if (a->stop != NULL)
        acc_gen_line(g, "    %s__stop,", p);
    else
        acc_gen_line(g, "    NULL, /* on_stop */");
    acc_gen_line(g, "    %u,", (unsigned)a->message_count);
    if (a->messages != NULL)
        acc_gen_line(g, "    %s__names,", p);
    else
        acc_gen_line(g, "    NULL,");
    acc_gen_line(g, "    %s__encode,\n    %s__decode,", p, p);
    acc_gen_line(g, "    %s__copy,", p);
    static const char *const overflow[] = {
        "AC_OVERFLOW_REJECT", "AC_OVERFLOW_DROP_NEWEST", "AC_OVERFLOW_DROP_OLDEST",
    };
    if (a->mailbox_bound == 0)
        acc_gen_line(g, "    0, /* mailbox: unbounded */");
    else
        acc_gen_line(g, "    %luu, /* mailbox bound */",
                     (unsigned long)a->mailbox_bound);
    acc_gen_line(g, "    %s\n};", overflow[a->mailbox_overflow]);
}

/* Assigns field f (a parameter of the same name) to dst f, dst being
 * "msg_->" or "args_.". */
static void assign(acc_gen *g, const char *dst, const acc_field *f)
{
    int n = (int)f->name.len;
    if (f->type.kind == ACC_ARRAY)
        acc_gen_line(g, "    memcpy(%s%.*s, %.*s, sizeof(%s%.*s));", dst, n,
                     f->name.s, n, f->name.s, dst, n, f->name.s);
    else
        acc_gen_line(g, "    %s%.*s = %.*s;", dst, n, f->name.s, n, f->name.s);
}

/* "f1, f2": the fields as arguments. */
static const char *args_of(acc_gen *g, const acc_field *f)
{
    const char *s = "";
    for (; f != NULL; f = f->next)
        s = acc_aprintf(&g->cx->arena, "%s, %.*s", s, (int)f->name.len, f->name.s);
    return s;
}

/* Sizes, allocates and fills a message or reply from parameters of the
 * same names as its fields. `alloc` makes env_ of size_ bytes, at most
 * `limit`; `body` is where the struct starts in it. */
static void put_fill(acc_gen *g, const char *sn, const acc_field *fields,
                     const char *alloc, const char *body, const char *limit,
                     bool req)
{
    bool var = fields_have_var(fields);
    acc_gen_line(g, "    size_t size_ = sizeof(%s);", sn);
    acc_gen_line(g, "    ac_envelope *env_;");
    acc_gen_line(g, "    %s *msg_;\n", sn);
    if (var) {
        emitter e = { g, P_TAIL, "size_" };
        for (const acc_field *f = fields; f != NULL; f = f->next)
            value(&e, &f->type, acc_strndup(&g->cx->arena, f->name.s,
                  f->name.len), 0);
        acc_gen_line(g, "    if (size_ > %s)\n        return AC_EINVAL;", limit);
    }
    acc_gen_line(g, "    env_ = %s;", alloc);
    acc_gen_line(g, "    if (env_ == NULL)\n        return AC_ENOMEM;");
    acc_gen_line(g, "    msg_ = (%s *)%s(env_);", sn, body);
    if (req)
        acc_gen_line(g, "    memset(&msg_->reply_to, 0, sizeof(msg_->reply_to));");
    else if (fields == NULL)
        acc_gen_line(g, "    msg_->unused_ = 0;");
    for (const acc_field *f = fields; f != NULL; f = f->next)
        assign(g, "msg_->", f);
    if (var) {
        acc_gen_line(g, "    size_ = sizeof(%s);", sn);
        acc_gen_line(g, "    %s__copy(msg_, (unsigned char *)msg_, &size_);", sn);
    }
}

/* A blank line, then `decl` (wrapped to fit) and the opening brace. */
static void open_fn(acc_gen *g, const char *decl)
{
    acc_buf_putc(g->out, '\n');
    acc_gen_line(g, "%s", decl);
    acc_gen_line(g, "{");
}

/* A function that builds the message into env_ with the builder and hands
 * it to `call` (a runtime function taking env_); a timer's id is 0 when
 * the build fails. */
static void put_built(acc_gen *g, const char *decl, const char *mn,
                      const char *args, const char *call, bool timer)
{
    open_fn(g, decl);
    acc_gen_line(g, "    ac_envelope *env_ = NULL;");
    acc_gen_line(g, "    int rc_ = %s__build(cx, &env_%s);", mn, args);
    acc_buf_putc(g->out, '\n');
    if (timer)
        acc_gen_line(g, "    if (rc_ != 0 && timer_id != NULL)\n"
                        "        *timer_id = 0;");
    acc_gen_line(g, "    return rc_ != 0 ? rc_ : %s;", call);
    acc_gen_line(g, "}");
}

/* The message's builder (a request's with a nil reply_to), then every
 * function that sends one built message: send, publish, send_after and
 * send_every, each a call of the builder and one of the runtime. */
static void put_senders(acc_gen *g, const acc_actor *a, const acc_message *m,
                        const char *mn, const char *args)
{
    acc_arena *ar = &g->cx->arena;
    const char *type = a->cname[ACC_A_TYPE];

    open_fn(g, acc_gen_params(g, acc_aprintf(ar, "static int %s__build(ac_ctx "
                              "*cx, ac_envelope **built_", mn), m->fields, ""));
    put_fill(g, mn, m->fields, acc_aprintf(ar, "ac_envelope_new(cx, %s, "
             "size_)", m->cname[ACC_M_TAG]), "ac_envelope_payload",
             "AC_MAX_PAYLOAD", m->has_reply);
    acc_gen_line(g, "    *built_ = env_;\n    return 0;\n}");

    put_built(g, acc_gen_send_decl(g, a, m), mn, args,
              "ac_send(cx, &to.addr, env_)", false);
    put_built(g, acc_gen_publish_decl(g, m), mn, args, acc_aprintf(ar,
              "ac_group_publish(cx, group, &%s, env_)", type), false);
    put_built(g, acc_gen_timer_decl(g, a, m, false), mn, args,
              "ac_timer_after(cx, &to.addr, delay_ms, env_, timer_id)", true);
    put_built(g, acc_gen_timer_decl(g, a, m, true), mn, args, acc_aprintf(ar,
              "ac_timer_every(cx, &to.addr, period_ms, &%s, env_, "
              "timer_id)", type), true);
}

/* A message with a reply: the ask and blocking ask (on the send's
 * builder), the reply function, the continuation's trampoline. */
static void put_request(acc_gen *g, const acc_actor *a, const acc_message *m,
                        const char *mn, const char *args)
{
    const char *rn = m->cname[ACC_M_REPLY_STRUCT];

    open_fn(g, acc_aprintf(&g->cx->arena, "static int %s__call(ac_any_fn fn, "
                           "void *state, ac_ctx *cx, int status, const void "
                           "*body, void *arg)", mn));
    acc_gen_line(g, "    return ((%s)fn)(state, cx, status, (const %s *)body, "
                    "arg);", m->cname[ACC_M_FN], rn);
    acc_gen_line(g, "}");

    put_built(g, acc_gen_ask_decl(g, a, m, false), mn, args, acc_aprintf(
              &g->cx->arena, "ac_ask_via(cx, &to.addr, env_, timeout_ms, "
              "%s__call, (ac_any_fn)fn, arg)", mn), false);

    open_fn(g, acc_gen_ask_decl(g, a, m, true));
    acc_gen_line(g, "    ac_envelope *env_ = NULL, *reply_ = NULL;");
    acc_gen_line(g, "    int rc_ = %s__build(cx, &env_%s);", mn, args);
    acc_buf_putc(g->out, '\n');
    acc_gen_line(g, "    *out = NULL;");
    acc_gen_line(g, "    if (rc_ != 0)\n        return rc_;");
    acc_gen_line(g, "    rc_ = ac_ask_wait(cx, &to.addr, env_, timeout_ms, &reply_);");
    acc_gen_line(g, "    if (rc_ == 0)\n        *out = (%s *)ac_reply_body(reply_);", rn);
    acc_gen_line(g, "    return rc_;");
    acc_gen_line(g, "}");

    open_fn(g, acc_gen_reply_decl(g, m));
    put_fill(g, rn, m->reply, "ac_reply_new(cx, to, size_)", "ac_reply_body",
             "AC_MAX_PAYLOAD - AC_REPLY_HEAD_SIZE", false);
    acc_gen_line(g, "    return ac_reply(cx, to, env_);");
    acc_gen_line(g, "}");
}

static void put_functions(acc_gen *g, const acc_actor *a)
{
    /* The plain spawn is spawn_opts without options: one copy of the
     * start arguments' packing. */
    const acc_field *start = a->start != NULL ? a->start->fields : NULL;
    const char *type = a->cname[ACC_A_TYPE], *ref = a->cname[ACC_A_REF];
    open_fn(g, acc_gen_spawn_decl(g, a, true));
    if (start != NULL) {
        acc_gen_line(g, "    %s args_;\n", a->cname[ACC_A_START_ARGS]);
        for (const acc_field *f = start; f != NULL; f = f->next)
            assign(g, "args_.", f);
        acc_gen_line(g, "    return ac_spawn_opts(cx, &%s, &args_, opts, "
                        "&out->addr);\n}", type);
    } else {
        acc_gen_line(g, "    return ac_spawn_opts(cx, &%s, NULL, opts, "
                        "&out->addr);\n}", type);
    }
    open_fn(g, acc_gen_spawn_decl(g, a, false));
    acc_gen_line(g, "    return %s(cx, NULL, out%s);\n}",
                 a->cname[ACC_A_SPAWN_OPTS], args_of(g, start));

    for (const acc_message *m = a->messages; m != NULL; m = m->next) {
        const char *mn = m->cname[ACC_M_STRUCT], *args = args_of(g, m->fields);
        put_senders(g, a, m, mn, args);
        if (m->has_reply)
            put_request(g, a, m, mn, args);
    }

    open_fn(g, acc_aprintf(&g->cx->arena, "int %s(ac_ctx *cx, const char "
                           "*name, %s *out)", a->cname[ACC_A_WHEREIS], ref));
    acc_gen_line(g, "    int rc_ = ac_whereis(cx, name, out != NULL ? &out->addr "
                    ": NULL);\n");
    acc_gen_line(g, "    if (rc_ != 0 && out != NULL)");
    acc_gen_line(g, "        memset(&out->addr, 0, sizeof(out->addr));");
    acc_gen_line(g, "    return rc_;\n}");

    acc_gen_line(g, "\n%s %s(ac_addr addr)\n{", ref, a->cname[ACC_A_REF_OF]);
    acc_gen_line(g, "    %s ref;\n", ref);
    acc_gen_line(g, "    ref.addr = addr;\n    return ref;\n}");

    acc_gen_line(g, "\n%s %s(const ac_ctx *cx)\n{", ref,
                 a->cname[ACC_A_REF_SELF]);
    acc_gen_line(g, "    %s ref = { { { 0 } } };", ref);
    acc_gen_line(g, "    const ac_addr *self = ac_self(cx);\n");
    acc_gen_line(g, "    if (self != NULL)\n        ref.addr = *self;");
    acc_gen_line(g, "    return ref;\n}");
}

void acc_gen_source(acc_gen *g)
{
    acc_gen_banner(g);
    acc_gen_line(g, "#include \"%s\"\n", g->header_name);
    /* memcpy/memset; the wire primitives are libactorc's (runtime/wire.c). */
    acc_gen_line(g, "#include <string.h>");
    put_type_helpers(g);
    for (const acc_actor *a = g->mod->actors; a != NULL; a = a->next) {
        const char *p = a->cname[ACC_A_STATE];
        acc_gen_section(g, "actor", &a->name);
        put_dispatch(g, a, p);
        put_hooks(g, a, p);
        put_codecs(g, a, p);
        put_copy(g, a, p);
        put_type(g, a, p);
        put_functions(g, a);
    }
}
