/*
 * gen_header.c — writes NAME.actor.h: per actor its typed reference, state
 * struct, tag enum, message structs, the handler prototypes the user
 * implements, spawn / send / ref_self, and the type descriptor. Compiles as
 * C11 and as C++.
 */
#include "acc.h"

static void put_fields(acc_gen *g, const acc_field *f)
{
    for (; f != NULL; f = f->next) {
        acc_gen_doc(g, f->doc, 4);
        acc_gen_line(g, "    %s %.*s;", acc_gen_ctype(g, &f->type),
                     (int)f->name.len, f->name.s);
    }
}

static void put_state(acc_gen *g, const acc_actor *a, const char *p)
{
    acc_gen_doc(g, a->doc, 0);
    if (a->state == NULL) {
        acc_gen_line(g, "typedef struct %s %s; /* no state */", p, p);
        return;
    }
    acc_gen_line(g, "typedef struct %s {", p);
    put_fields(g, a->state);
    acc_gen_line(g, "} %s;", p);
}

static void put_messages(acc_gen *g, const acc_actor *a, const char *p)
{
    acc_gen_line(g, "\nenum %s_tag {", p);
    for (const acc_message *m = a->messages; m != NULL; m = m->next)
        acc_gen_line(g, "    %s_TAG_%.*s = %u%s", p, (int)m->name.len,
                     m->name.s, (unsigned)m->tag, m->next ? "," : "");
    acc_gen_line(g, "};");

    for (const acc_message *m = a->messages; m != NULL; m = m->next) {
        int n = (int)m->name.len;
        acc_buf_putc(g->out, '\n');
        acc_gen_doc(g, m->doc, 0);
        acc_gen_line(g, "typedef struct %s_%.*s {", p, n, m->name.s);
        if (m->fields == NULL)
            acc_gen_line(g, "    uint8_t unused_;");
        put_fields(g, m->fields);
        acc_gen_line(g, "} %s_%.*s;", p, n, m->name.s);
    }

    acc_gen_line(g, "\n/* Handlers, written by the user. A non-zero result "
                    "fails the actor. */");
    for (const acc_message *m = a->messages; m != NULL; m = m->next) {
        int n = (int)m->name.len;
        acc_gen_line(g, "int %s_on_%.*s(%s *self, ac_ctx *cx, const %s_%.*s *m);",
                     p, n, m->name.s, p, p, n, m->name.s);
    }
}

static void put_functions(acc_gen *g, const acc_actor *a, const char *p)
{
    acc_gen_line(g, "\n/* Spawns an actor of type %.*s (zeroed state) into "
                    "*out. */", (int)a->name.len, a->name.s);
    acc_gen_line(g, "int %s_spawn(ac_ctx *cx, %s_ref *out);", p, p);

    if (a->messages != NULL) {
        acc_gen_line(g, "\n/* Senders: copy the fields into one envelope and "
                        "queue it for `to`.\n * Return 0 or an AC_E* code "
                        "(AC_ENOTFOUND: no such actor). */");
        for (const acc_message *m = a->messages; m != NULL; m = m->next)
            acc_gen_line(g, "%s;", acc_gen_send_decl(g, a, m));
    }

    acc_gen_line(g, "\n/* The running %.*s's own reference (in its handlers; "
                    "nil elsewhere). */", (int)a->name.len, a->name.s);
    acc_gen_line(g, "%s_ref %s_ref_self(const ac_ctx *cx);", p, p);
    acc_gen_line(g, "\n/* The actor type, for the runtime. */");
    acc_gen_line(g, "extern const ac_actor_type %s_type;", p);
}

void acc_gen_header(acc_gen *g)
{
    const acc_module *mod = g->mod;
    const char *guard = acc_gen_guard(&g->cx->arena, mod);

    acc_gen_banner(g);
    acc_gen_line(g, "#ifndef %s\n#define %s\n\n#include <actorc.h>\n", guard,
                 guard);
    acc_gen_line(g, "#if AC_ABI_VERSION != 2");
    acc_gen_line(g, "#error \"%s was generated for actorc ABI 2: regenerate it\"",
                 g->header_name);
    acc_gen_line(g, "#endif\n");
    acc_gen_line(g, "#ifdef __cplusplus\nextern \"C\" {\n#endif");

    if (mod->doc != NULL) {
        acc_buf_putc(g->out, '\n');
        acc_gen_doc(g, mod->doc, 0);
    }
    if (mod->actors != NULL)
        acc_gen_line(g, "\n/* Typed references: a message for one actor type "
                        "cannot be sent to another. */");
    for (const acc_actor *a = mod->actors; a != NULL; a = a->next) {
        const char *p = acc_gen_prefix(g, a);
        acc_gen_line(g, "typedef struct %s_ref { ac_addr addr; } %s_ref;", p, p);
    }

    for (const acc_actor *a = mod->actors; a != NULL; a = a->next) {
        const char *p = acc_gen_prefix(g, a);
        acc_gen_section(g, "actor", &a->name);
        put_state(g, a, p);
        if (a->messages != NULL)
            put_messages(g, a, p);
        put_functions(g, a, p);
    }

    acc_gen_line(g, "\n#ifdef __cplusplus\n}\n#endif\n\n#endif /* %s */", guard);
}
