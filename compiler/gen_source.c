/*
 * gen_source.c — writes NAME.actor.c: per actor the message union, the
 * dispatch function (one switch on the tag), the message names, the type
 * descriptor, and the spawn / send / ref_self functions. Names made here
 * that are not in the header contain "__", which no user name can produce;
 * locals end in '_', which no user name can either.
 */
#include "acc.h"

static void put_dispatch(acc_gen *g, const acc_actor *a, const char *p)
{
    const char *sig = acc_aprintf(&g->cx->arena, "static int %s__dispatch("
                                  "void *state, ac_ctx *cx, ac_envelope *e)", p);
    if (a->messages == NULL) {
        acc_gen_line(g, "%s", sig);
        acc_gen_line(g, "{\n    (void)state;\n    (void)cx;\n    (void)e;");
        acc_gen_line(g, "    return AC_EBADTAG;\n}");
        return;
    }

    acc_gen_line(g, "union %s__messages {", p);
    for (const acc_message *m = a->messages; m != NULL; m = m->next)
        acc_gen_line(g, "    %s_%.*s %.*s;", p, (int)m->name.len, m->name.s,
                     (int)m->name.len, m->name.s);
    acc_gen_line(g, "};\n");

    acc_gen_line(g, "%s", sig);
    acc_gen_line(g, "{\n    %s *self = (%s *)state;", p, p);
    acc_gen_line(g, "    union %s__messages *m =", p);
    acc_gen_line(g, "        (union %s__messages *)ac_envelope_payload(e);\n", p);
    /* On the raw uint32_t: a tag outside the enum reaches AC_EBADTAG
     * without first being cast to an enum type that cannot hold it, which
     * C++ leaves undefined. */
    acc_gen_line(g, "    switch (e->tag) {");
    for (const acc_message *m = a->messages; m != NULL; m = m->next) {
        int n = (int)m->name.len;
        acc_gen_line(g, "    case %s_TAG_%.*s:", p, n, m->name.s);
        acc_gen_line(g, "        return %s_on_%.*s(self, cx, &m->%.*s);", p, n,
                     m->name.s, n, m->name.s);
    }
    acc_gen_line(g, "    }\n    return AC_EBADTAG;\n}\n");

    acc_gen_line(g, "static const char *const %s__names[] = {", p);
    for (const acc_message *m = a->messages; m != NULL; m = m->next)
        acc_gen_line(g, "    \"%.*s\"%s", (int)m->name.len, m->name.s,
                     m->next ? "," : "");
    acc_gen_line(g, "};");
}

static void put_type(acc_gen *g, const acc_actor *a, const char *p)
{
    const acc_name *mn = &g->mod->name;
    acc_gen_line(g, "\nconst ac_actor_type %s_type = {", p);
    acc_gen_line(g, "    AC_ABI_VERSION,");
    acc_gen_line(g, "    \"%.*s.%.*s\",", (int)mn->len, mn->s,
                 (int)a->name.len, a->name.s);
    if (a->state != NULL)
        acc_gen_line(g, "    sizeof(%s),\n    AC_ALIGNOF(%s),", p, p);
    else
        acc_gen_line(g, "    0, /* no state */\n    1,");
    acc_gen_line(g, "    %s__dispatch,", p);
    acc_gen_line(g, "    NULL, /* on_start */\n    NULL, /* on_stop */");
    acc_gen_line(g, "    %u,", (unsigned)a->message_count);
    if (a->messages != NULL)
        acc_gen_line(g, "    %s__names,", p);
    else
        acc_gen_line(g, "    NULL,");
    acc_gen_line(g, "    NULL, /* encode */\n    NULL /* decode */\n};");
}

static void put_send(acc_gen *g, const acc_actor *a, const acc_message *m,
                     const char *p)
{
    int n = (int)m->name.len;
    const char *s = m->name.s;
    acc_buf_putc(g->out, '\n');
    acc_gen_line(g, "%s", acc_gen_send_decl(g, a, m));
    acc_gen_line(g, "{");
    acc_gen_line(g, "    ac_envelope *env_ = ac_envelope_new(cx, %s_TAG_%.*s, "
                    "sizeof(%s_%.*s));", p, n, s, p, n, s);
    acc_gen_line(g, "    %s_%.*s *msg_;\n", p, n, s);
    acc_gen_line(g, "    if (env_ == NULL)\n        return AC_ENOMEM;");
    acc_gen_line(g, "    msg_ = (%s_%.*s *)ac_envelope_payload(env_);", p, n, s);
    if (m->fields == NULL)
        acc_gen_line(g, "    msg_->unused_ = 0;");
    for (const acc_field *f = m->fields; f != NULL; f = f->next)
        acc_gen_line(g, "    msg_->%.*s = %.*s;", (int)f->name.len, f->name.s,
                     (int)f->name.len, f->name.s);
    acc_gen_line(g, "    return ac_send(cx, &to.addr, env_);\n}");
}

static void put_functions(acc_gen *g, const acc_actor *a, const char *p)
{
    acc_gen_line(g, "\nint %s_spawn(ac_ctx *cx, %s_ref *out)\n{", p, p);
    acc_gen_line(g, "    return ac_spawn(cx, &%s_type, NULL, &out->addr);\n}", p);

    for (const acc_message *m = a->messages; m != NULL; m = m->next)
        put_send(g, a, m, p);

    acc_gen_line(g, "\n%s_ref %s_ref_self(const ac_ctx *cx)\n{", p, p);
    acc_gen_line(g, "    %s_ref ref = { { { 0 } } };", p);
    acc_gen_line(g, "    const ac_addr *self = ac_self(cx);\n");
    acc_gen_line(g, "    if (self != NULL)\n        ref.addr = *self;");
    acc_gen_line(g, "    return ref;\n}");
}

void acc_gen_source(acc_gen *g)
{
    acc_gen_banner(g);
    acc_gen_line(g, "#include \"%s\"", g->header_name);
    for (const acc_actor *a = g->mod->actors; a != NULL; a = a->next) {
        const char *p = acc_gen_prefix(g, a);
        acc_gen_section(g, "actor", &a->name);
        put_dispatch(g, a, p);
        put_type(g, a, p);
        put_functions(g, a, p);
    }
}
