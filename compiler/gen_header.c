/*
 * gen_header.c — writes NAME.actor.h: the includes of the imported
 * headers; enums; forward declarations of structs, typed references and
 * sequence types; struct definitions (dependencies first); then per actor
 * its state struct, tag enum, message structs, start arguments, the
 * handler and hook prototypes the user implements, spawn / send and
 * their service wrappers / whereis / ref_of / ref_self, and the type
 * descriptor. Compiles as C11 and as C++.
 */
#include <string.h>

#include "acc.h"

/* The runtime ABI (AC_ABI_VERSION of actorc.h) the generated code is
 * written for: the descriptor's layout and the calls it makes. */
#define ACC_ABI 13

static void put_fields(acc_gen *g, const acc_field *f)
{
    for (; f != NULL; f = f->next) {
        acc_gen_doc(g, f->doc, 4);
        const char *name = acc_gen_field(g, f);
        acc_gen_line(g, "    %s;", acc_gen_cdecl(g, &f->type, name, false));
    }
}

static void put_state(acc_gen *g, const acc_actor *a, const char *p)
{
    acc_gen_doc(g, a->doc, 0);
    if (!acc_gen_has_state(a)) {
        acc_gen_line(g, "typedef struct %s %s; /* no state */", p, p);
        return;
    }
    acc_gen_line(g, "typedef struct %s {", p);
    put_fields(g, a->state);
    /* Last, so that the user's fields keep their place; zeroed at spawn,
     * as the whole state is: the default behaviour. */
    if (a->behaviours != NULL)
        acc_gen_line(g, "    /* The current %s (%s sets it). */\n"
                        "    uint32_t behaviour_;",
                     acc_actor_cstr(g, a, ACC_A_BEHAVIOUR),
                     acc_actor_cstr(g, a, ACC_A_BECOME));
    acc_gen_line(g, "} %s;", p);
}

/* The behaviours' enum: 0 the default one, then each block's in order. */
static void put_behaviours(acc_gen *g, const acc_actor *a)
{
    const char *e = acc_actor_cstr(g, a, ACC_A_BEHAVIOUR);
    acc_gen_line(g, "\n/* Which handlers of %.*s are active (docs/IDL.md, "
                    "behaviours). */", (int)a->name.len, a->name.s);
    acc_gen_line(g, "typedef enum %s {", e);
    acc_gen_line(g, "    %s = 0%s", acc_actor_cstr(g, a, ACC_A_BEHAVIOUR_DEFAULT),
                 a->behaviours != NULL ? "," : "");
    for (const acc_behaviour *b = a->behaviours; b != NULL; b = b->next) {
        acc_gen_doc(g, b->doc, 4);
        acc_gen_line(g, "    %s = %u%s", acc_gen_behaviour_const(g, b),
                     (unsigned)b->index, b->next ? "," : "");
    }
    acc_gen_line(g, "} %s;", e);
}

static void put_messages(acc_gen *g, const acc_actor *a)
{
    acc_gen_line(g, "\nenum %s {", acc_actor_cstr(g, a, ACC_A_TAG_ENUM));
    for (const acc_message *m = a->messages; m != NULL; m = m->next) {
        acc_arena_mark mk = acc_arena_mark_get(&g->cx->arena);
        acc_gen_line(g, "    %s = %u%s", acc_msg_cstr(g, m, ACC_M_TAG),
                     (unsigned)m->tag, m->next ? "," : "");
        acc_arena_release(&g->cx->arena, mk);
    }
    acc_gen_line(g, "};");

    for (const acc_message *m = a->messages; m != NULL; m = m->next) {
        acc_arena_mark mk = acc_arena_mark_get(&g->cx->arena);
        const char *sn = acc_msg_cstr(g, m, ACC_M_STRUCT);
        const char *rn = acc_msg_cstr(g, m, ACC_M_REPLY_STRUCT);
        acc_buf_putc(g->out, '\n');
        acc_gen_doc(g, m->doc, 0);
        acc_gen_line(g, "typedef struct %s {", sn);
        if (m->has_reply)
            acc_gen_line(g, "    /** Where the reply goes: keep a copy to "
                            "reply later. */\n    ac_reply_to reply_to;");
        else if (m->fields == NULL)
            acc_gen_line(g, "    uint8_t unused_;");
        put_fields(g, m->fields);
        acc_gen_line(g, "} %s;", sn);
        if (m->has_reply) {
            acc_gen_line(g, "\n/** The reply to %.*s. */", (int)m->name.len,
                         m->name.s);
            acc_gen_line(g, "typedef struct %s {", rn);
            if (m->reply == NULL)
                acc_gen_line(g, "    uint8_t unused_;");
            put_fields(g, m->reply);
            acc_gen_line(g, "} %s;", rn);
        }
        acc_arena_release(&g->cx->arena, mk);
    }
}

static void put_hooks(acc_gen *g, const acc_actor *a, const char *p)
{
    if (a->start != NULL && a->start->fields != NULL) {
        acc_buf_putc(g->out, '\n');
        acc_gen_doc(g, a->start->doc, 0);
        acc_gen_line(g, "typedef struct %s {",
                     acc_actor_cstr(g, a, ACC_A_START_ARGS));
        put_fields(g, a->start->fields);
        acc_gen_line(g, "} %s;", acc_actor_cstr(g, a, ACC_A_START_ARGS));
    }
    if (a->messages == NULL && a->start == NULL && a->stop == NULL &&
        a->down == NULL && a->exit == NULL)
        return;
    /* AC_UNUSED: a handler defined by copying its prototype may ignore
     * any parameter without a (void) cast. */
    acc_gen_line(g, "\n/* Handlers, written by the user. A non-zero result "
                    "fails the actor. */");
    for (const acc_message *m = a->messages; m != NULL; m = m->next) {
        acc_arena_mark mk = acc_arena_mark_get(&g->cx->arena);
        acc_gen_line(g, "int %s(%s *self AC_UNUSED, ac_ctx *cx AC_UNUSED,\n"
                        "    const %s *m AC_UNUSED);",
                     acc_msg_cstr(g, m, ACC_M_HANDLER), p,
                     acc_msg_cstr(g, m, ACC_M_STRUCT));
        acc_arena_release(&g->cx->arena, mk);
    }
    for (const acc_behaviour *b = a->behaviours; b != NULL; b = b->next)
        for (const acc_bitem *it = b->items; it != NULL; it = it->next) {
            if (it->postpone)
                continue;
            acc_arena_mark mk = acc_arena_mark_get(&g->cx->arena);
            acc_gen_line(g, "int %s(%s *self AC_UNUSED, ac_ctx *cx AC_UNUSED,\n"
                            "    const %s *m AC_UNUSED);",
                         acc_gen_behaviour_handler(g, b, it->msg), p,
                         acc_msg_cstr(g, it->msg, ACC_M_STRUCT));
            acc_arena_release(&g->cx->arena, mk);
        }
    if (a->start != NULL && a->start->fields != NULL)
        acc_gen_line(g, "int %s(%s *self AC_UNUSED, ac_ctx *cx AC_UNUSED,\n"
                        "    const %s *args AC_UNUSED);",
                     acc_actor_cstr(g, a, ACC_A_ON_START), p,
                     acc_actor_cstr(g, a, ACC_A_START_ARGS));
    else if (a->start != NULL)
        acc_gen_line(g, "int %s(%s *self AC_UNUSED, ac_ctx *cx AC_UNUSED);",
                     acc_actor_cstr(g, a, ACC_A_ON_START), p);
    if (a->stop != NULL)
        acc_gen_line(g, "void %s(%s *self AC_UNUSED, ac_ctx *cx AC_UNUSED);",
                     acc_actor_cstr(g, a, ACC_A_ON_STOP), p);
    if (a->down != NULL)
        acc_gen_line(g, "int %s(%s *self AC_UNUSED, ac_ctx *cx AC_UNUSED,\n"
                        "    const ac_down *m AC_UNUSED);",
                     acc_actor_cstr(g, a, ACC_A_ON_DOWN), p);
    if (a->exit != NULL)
        acc_gen_line(g, "int %s(%s *self AC_UNUSED, ac_ctx *cx AC_UNUSED,\n"
                        "    const ac_exit *m AC_UNUSED);",
                     acc_actor_cstr(g, a, ACC_A_ON_EXIT), p);
}

static void put_functions(acc_gen *g, const acc_actor *a)
{
    if (a->start != NULL)
        acc_gen_line(g, "\n/* Spawns an actor of type %.*s into *out, running "
                        "%s before\n * it returns (its result is "
                        "spawn's). */", (int)a->name.len, a->name.s,
                     acc_actor_cstr(g, a, ACC_A_ON_START));
    else
        acc_gen_line(g, "\n/* Spawns an actor of type %.*s (zeroed state) into "
                        "*out. */", (int)a->name.len, a->name.s);
    acc_gen_line(g, "%s;", acc_gen_spawn_decl(g, a, false));
    acc_gen_line(g, "/* The same with options (ac_spawn_opts: a name to "
                    "register, a mailbox\n * bound, a link); `opts` may be "
                    "NULL. */");
    acc_gen_line(g, "%s;", acc_gen_spawn_decl(g, a, true));
    if (a->behaviours != NULL) {
        acc_gen_line(g, "\n/* In the actor's handlers, hooks and continuations: "
                        "from its next message on,\n * the handlers of behaviour "
                        "`b` are active. When `b` is not the current\n * one, "
                        "what the stash holds (the postponed messages) is taken "
                        "up again,\n * oldest first, before the mailbox "
                        "(ac_unstash_all). 0, AC_EINVAL for a\n * `b` the "
                        "actor does not have, AC_ESTATE outside the actor. */");
        acc_gen_line(g, "int %s(%s *self, ac_ctx *cx, %s b);",
                     acc_actor_cstr(g, a, ACC_A_BECOME),
                     acc_actor_cstr(g, a, ACC_A_STATE),
                     acc_actor_cstr(g, a, ACC_A_BEHAVIOUR));
    }

    if (a->messages != NULL) {
        acc_gen_line(g, "\n/* Senders: copy the fields into one envelope and "
                        "queue it for `to`.\n * Return 0 or an AC_E* code "
                        "(AC_EFULL: a full mailbox). A target that is\n * gone "
                        "is a counted dead letter and 0, not the sender's "
                        "failure; the\n * _checked form returns AC_ENOTFOUND "
                        "for it. send_x_msg takes the\n * message's struct, its "
                        "fields by name: &(T){ .n = 1 } in C, a T\n * declared "
                        "with designated initializers in C++20 (a request's\n * "
                        "reply_to is not read; NULL: AC_EINVAL). */");
        for (const acc_message *m = a->messages; m != NULL; m = m->next) {
            acc_arena_mark mk = acc_arena_mark_get(&g->cx->arena);
            acc_gen_line(g, "%s;", acc_gen_send_decl(g, a, m));
            acc_gen_line(g, "%s;", acc_gen_send_checked_decl(g, a, m));
            if (m->fields != NULL)
                acc_gen_line(g, "%s;", acc_gen_send_msg_decl(g, a, m));
            acc_arena_release(&g->cx->arena, mk);
        }
        acc_gen_line(g, "\n/* The same message through the runtime's services "
                        "(docs/IDL.md): publish\n * to every member of `group` "
                        "(returns how many it reached), send_x_after\n * once, "
                        "delay_ms from now, send_x_every every period_ms (> 0) "
                        "until\n * cancelled; *timer_id (may be NULL; 0 on "
                        "error) is for ac_timer_cancel.\n * The group's members "
                        "are trusted to be of type %.*s. */",
                     (int)a->name.len, a->name.s);
        for (const acc_message *m = a->messages; m != NULL; m = m->next) {
            acc_arena_mark mk = acc_arena_mark_get(&g->cx->arena);
            acc_gen_line(g, "%s;", acc_gen_publish_decl(g, m));
            acc_gen_line(g, "%s;", acc_gen_timer_decl(g, a, m, false));
            acc_gen_line(g, "%s;", acc_gen_timer_decl(g, a, m, true));
            acc_arena_release(&g->cx->arena, mk);
        }
    }
    bool replies = false;
    for (const acc_message *m = a->messages; m != NULL; m = m->next)
        replies |= m->has_reply;
    if (replies) {
        acc_gen_line(g, "\n/* Request / reply (docs/IDL.md). reply: answers "
                        "the request whose\n * reply_to is `to`, now or from "
                        "a later handler. ask: in a handler,\n * sends the "
                        "request; `fn` runs in this actor with the reply (status "
                        "0)\n * or AC_ETIMEDOUT (reply NULL) after timeout_ms "
                        "(0: none), exactly once\n * unless the actor dies "
                        "first. ask_wait: outside actors, blocks up to\n * "
                        "timeout_ms (AC_FOREVER); on 0, *out is the reply: "
                        "free it with\n * ac_reply_free(cx, *out). */");
        for (const acc_message *m = a->messages; m != NULL; m = m->next) {
            if (!m->has_reply)
                continue;
            acc_arena_mark mk = acc_arena_mark_get(&g->cx->arena);
            acc_gen_line(g, "typedef int (*%s)(void *self, ac_ctx *cx, "
                            "int status, const %s *reply, void *arg);",
                         acc_msg_cstr(g, m, ACC_M_FN),
                         acc_msg_cstr(g, m, ACC_M_REPLY_STRUCT));
            acc_gen_line(g, "%s;", acc_gen_reply_decl(g, m));
            acc_gen_line(g, "%s;", acc_gen_ask_decl(g, a, m, false));
            acc_gen_line(g, "%s;", acc_gen_ask_decl(g, a, m, true));
            acc_gen_line(g, "%s;", acc_gen_forward_decl(g, m));
            acc_arena_release(&g->cx->arena, mk);
        }
        acc_gen_line(g, "\n/* The wire form of a reply's body (docs/WIRE.md), by "
                        "its request's tag. */");
        acc_gen_line(g, "long %s(uint32_t tag, const ac_envelope *reply, "
                        "uint8_t *buf, size_t cap);",
                     acc_actor_cstr(g, a, ACC_A_ENCODE_REPLY));
        acc_gen_line(g, "int %s(ac_ctx *cx, uint32_t tag, const ac_reply_to "
                        "*to, const uint8_t *buf, size_t len, ac_envelope "
                        "**out);", acc_actor_cstr(g, a, ACC_A_DECODE_REPLY));
    }

    acc_gen_line(g, "\n/* The actor registered as `name` (ac_whereis) into "
                    "*out; nil and AC_ENOTFOUND\n * when nobody holds it. Names "
                    "are untyped: the holder is trusted to be\n * of type %.*s. */",
                 (int)a->name.len, a->name.s);
    acc_gen_line(g, "int %s(ac_ctx *cx, const char *name, %s *out);",
                 acc_actor_cstr(g, a, ACC_A_WHEREIS),
                 acc_actor_cstr(g, a, ACC_A_REF));
    acc_gen_line(g, "/* An address as a typed reference (from an ac_down, a "
                    "group's members, a\n * router), trusted to be an actor of type %.*s. */",
                 (int)a->name.len, a->name.s);
    acc_gen_line(g, "%s %s(ac_addr addr);", acc_actor_cstr(g, a, ACC_A_REF),
                 acc_actor_cstr(g, a, ACC_A_REF_OF));
    acc_gen_line(g, "/* The nil reference (sends to it are dead letters), "
                    "and whether `r` is nil. */");
    acc_gen_line(g, "%s %s(void);", acc_actor_cstr(g, a, ACC_A_REF),
                 acc_actor_cstr(g, a, ACC_A_REF_NIL));
    acc_gen_line(g, "bool %s(%s r);", acc_actor_cstr(g, a, ACC_A_REF_IS_NIL),
                 acc_actor_cstr(g, a, ACC_A_REF));
    acc_gen_line(g, "/* The running %.*s's own reference (in its handlers and "
                    "hooks; nil on a thread running no actor). */",
                 (int)a->name.len, a->name.s);
    acc_gen_line(g, "%s %s(const ac_ctx *cx);",
                 acc_actor_cstr(g, a, ACC_A_REF),
                 acc_actor_cstr(g, a, ACC_A_REF_SELF));
    acc_gen_line(g, "\n/* The actor type, for the runtime. */");
    acc_gen_line(g, "extern const ac_actor_type %s;",
                 acc_actor_cstr(g, a, ACC_A_TYPE));
}

/* Every actor of the module may ask every request of the module with a
 * continuation typed with its own state (docs/IDL.md, "Typed
 * continuations"): after all actors, when every state and reply struct
 * is declared. */
static void put_typed_asks(acc_gen *g, const acc_module *mod)
{
    bool any = false;
    for (const acc_actor *b = mod->actors; b != NULL; b = b->next)
        for (const acc_message *m = b->messages; m != NULL; m = m->next)
            any |= m->has_reply;
    if (!any)
        return;
    acc_gen_section(g, "typed asks", &mod->name);
    acc_gen_line(g, "/* m_A_ask_B_x: actor A asks request x of actor B (in A's "
                    "handler or hook);\n * fn runs in A as ask's does, typed with "
                    "A's state and x's reply, and\n * gets a copy of ctx[0..ctx_size) "
                    "(at most AC_ASK_CONTEXT_MAX bytes,\n * aligned to 16, kept in "
                    "the pending ask: no allocation; NULL when 0).\n * AC_EINVAL "
                    "when the running actor is not an A. */");
    for (const acc_actor *a = mod->actors; a != NULL; a = a->next)
        for (const acc_actor *b = mod->actors; b != NULL; b = b->next)
            for (const acc_message *m = b->messages; m != NULL; m = m->next) {
                if (!m->has_reply)
                    continue;
                acc_arena_mark mk = acc_arena_mark_get(&g->cx->arena);
                acc_gen_line(g, "typedef int (*%s)(%s *self, ac_ctx *cx, int status, "
                                "const %s *reply, void *ctx);",
                             acc_gen_typed_ask_name(g, a, m, true),
                             acc_actor_cstr(g, a, ACC_A_STATE),
                             acc_msg_cstr(g, m, ACC_M_REPLY_STRUCT));
                acc_gen_line(g, "%s;", acc_gen_typed_ask_decl(g, a, m));
                acc_arena_release(&g->cx->arena, mk);
            }
}

static void put_enum(acc_gen *g, const acc_decl *d)
{
    const char *n = acc_decl_cstr(g, d, ACC_D_TYPE);
    acc_buf_putc(g->out, '\n');
    acc_gen_doc(g, d->doc, 0);
    acc_gen_line(g, "typedef enum %s {", n);
    for (const acc_enumerator *e = d->values; e != NULL; e = e->next) {
        acc_arena_mark mk = acc_arena_mark_get(&g->cx->arena);
        acc_gen_doc(g, e->doc, 4);
        if (e->value == INT32_MIN)
            acc_gen_line(g, "    %s = -2147483647 - 1%s", acc_value_cstr(g, e),
                         e->next ? "," : "");
        else
            acc_gen_line(g, "    %s = %lld%s", acc_value_cstr(g, e),
                         (long long)e->value,
                         e->next ? "," : "");
        acc_arena_release(&g->cx->arena, mk);
    }
    acc_gen_line(g, "} %s;", n);
}

/* A sequence type: a view of `len` elements of type `elem`. */
static void put_seq(acc_gen *g, const char *name, const char *elem)
{
    acc_gen_line(g, "typedef struct %s { const %s *data; uint32_t len; } %s;",
                 name, elem, name);
}

static void put_struct_body(acc_gen *g, const acc_decl *d)
{
    acc_buf_putc(g->out, '\n');
    acc_gen_doc(g, d->doc, 0);
    acc_gen_line(g, "struct %s {", acc_decl_cstr(g, d, ACC_D_TYPE));
    put_fields(g, d->fields);
    acc_gen_line(g, "};");
}

/* Dependencies first: a struct held by value must be complete. Depth
 * first over the structs of this module held by value, in post-order,
 * with the path in the structs (acc_decl.up) rather than on the C stack,
 * so that a long chain of structs is no deep recursion. */
static void put_struct(acc_gen *g, acc_decl *root)
{
    if (root->visit == 3)
        return;
    root->visit = 3;
    root->up = NULL;
    root->at = root->fields;
    acc_decl *cur = root;
    while (cur != NULL) {
        const acc_field *f = cur->at;
        if (f == NULL) {
            put_struct_body(g, cur);
            cur = cur->up;
            continue;
        }
        cur->at = f->next;
        acc_decl *next = acc_field_value_struct(f, cur->mod);
        if (next != NULL && next->visit != 3) {
            next->visit = 3;
            next->up = cur;
            next->at = next->fields;
            cur = next;
        }
    }
}

/* `struct Name;` for each ptr<Name> of a state or start field, once: in
 * a prototype's parameter list (spawn's) a struct C has not seen would
 * be one of that list's own. */
static void put_handle_tags(acc_gen *g, const acc_field *f, acc_map *seen,
                            bool *any)
{
    for (; f != NULL; f = f->next) {
        const acc_name *n = &f->type.target;
        if (f->type.kind != ACC_PTR || n->len == 0 ||
            acc_map_get(seen, n->s, n->len) != NULL)
            continue;
        acc_map_put(seen, n->s, n->len, (void *)f);
        if (!*any)
            acc_gen_line(g, "\n/* The C structs that ptr<> fields point to "
                            "(the program defines them). */");
        *any = true;
        acc_gen_line(g, "struct %.*s;", (int)n->len, n->s);
    }
}

static void put_types(acc_gen *g)
{
    const acc_module *mod = g->mod;
    bool structs = false, enums = false;
    for (const acc_decl *d = mod->decls; d != NULL; d = d->next) {
        structs |= d->kind == ACC_STRUCT;
        enums |= d->kind == ACC_ENUM;
    }
    if (enums) {
        acc_gen_line(g, "\n/* Enums: on the wire as i32; decoding rejects "
                        "a value not listed. */");
        for (const acc_decl *d = mod->decls; d != NULL; d = d->next)
            if (d->kind == ACC_ENUM)
                put_enum(g, d);
    }
    if (structs) {
        acc_gen_line(g, "\n/* Structs (defined below). */");
        for (const acc_decl *d = mod->decls; d != NULL; d = d->next) {
            acc_arena_mark mk = acc_arena_mark_get(&g->cx->arena);
            if (d->kind == ACC_STRUCT)
                acc_gen_line(g, "typedef struct %s %s;",
                             acc_decl_cstr(g, d, ACC_D_TYPE),
                             acc_decl_cstr(g, d, ACC_D_TYPE));
            acc_arena_release(&g->cx->arena, mk);
        }
    }
    acc_arena_mark hm = acc_arena_mark_get(&g->cx->arena);
    acc_map tags;
    acc_map_init(&tags, &g->cx->arena);
    bool any = false;
    for (const acc_actor *a = mod->actors; a != NULL; a = a->next) {
        put_handle_tags(g, a->state, &tags, &any);
        if (a->start != NULL)
            put_handle_tags(g, a->start->fields, &tags, &any);
    }
    acc_arena_release(&g->cx->arena, hm);
    if (mod->actors != NULL) {
        acc_gen_line(g, "\n/* Typed references: a message for one actor type "
                        "cannot be sent to another. */");
        for (const acc_actor *a = mod->actors; a != NULL; a = a->next) {
            acc_arena_mark mk = acc_arena_mark_get(&g->cx->arena);
            acc_gen_line(g, "typedef struct %s { ac_addr addr; } %s;",
                         acc_actor_cstr(g, a, ACC_A_REF),
                         acc_actor_cstr(g, a, ACC_A_REF));
            acc_arena_release(&g->cx->arena, mk);
        }
    }
    if (mod->decls != NULL || mod->actors != NULL) {
        acc_gen_line(g, "\n/* Sequences (T[]): views of `len` elements, "
                        "copied by the send. */");
        for (const acc_decl *d = mod->decls; d != NULL; d = d->next) {
            acc_arena_mark mk = acc_arena_mark_get(&g->cx->arena);
            put_seq(g, acc_decl_cstr(g, d, ACC_D_SEQ),
                    acc_decl_cstr(g, d, ACC_D_TYPE));
            acc_arena_release(&g->cx->arena, mk);
        }
        for (const acc_actor *a = mod->actors; a != NULL; a = a->next) {
            acc_arena_mark mk = acc_arena_mark_get(&g->cx->arena);
            put_seq(g, acc_actor_cstr(g, a, ACC_A_REF_SEQ),
                    acc_actor_cstr(g, a, ACC_A_REF));
            acc_arena_release(&g->cx->arena, mk);
        }
    }
    for (acc_decl *d = mod->decls; d != NULL; d = d->next)
        if (d->kind == ACC_STRUCT) {
            acc_arena_mark mk = acc_arena_mark_get(&g->cx->arena);
            put_struct(g, d);
            acc_arena_release(&g->cx->arena, mk);
        }
}

void acc_gen_header(acc_gen *g)
{
    const acc_module *mod = g->mod;
    const char *guard = acc_guard_cstr(g, mod);

    acc_gen_banner(g);
    acc_gen_line(g, "#ifndef %s\n#define %s\n\n#include <actorc.h>", guard,
                 guard);
    for (const acc_import *im = mod->imports; im != NULL; im = im->next)
        acc_gen_line(g, "#include \"%s.h\"", im->path);
    acc_gen_line(g, "\n#if AC_ABI_VERSION != %d", ACC_ABI);
    acc_gen_line(g, "#error \"%s was generated for actorc ABI %d: regenerate it\"",
                 g->header_name, ACC_ABI);
    acc_gen_line(g, "#endif\n");
    acc_gen_line(g, "#ifdef __cplusplus\nextern \"C\" {\n#endif");

    if (mod->doc != NULL) {
        acc_buf_putc(g->out, '\n');
        acc_gen_doc(g, mod->doc, 0);
    }
    put_types(g);

    for (const acc_actor *a = mod->actors; a != NULL; a = a->next) {
        /* What an actor's code needs goes once it is written. */
        acc_arena_mark mk = acc_arena_mark_get(&g->cx->arena);
        const char *p = acc_actor_cstr(g, a, ACC_A_STATE);
        acc_gen_section(g, "actor", &a->name);
        put_state(g, a, p);
        if (a->messages != NULL)
            put_messages(g, a);
        if (a->behaviours != NULL)
            put_behaviours(g, a);
        put_hooks(g, a, p);
        put_functions(g, a);
        acc_arena_release(&g->cx->arena, mk);
    }
    put_typed_asks(g, mod);

    acc_gen_line(g, "\n#ifdef __cplusplus\n}\n#endif\n\n#endif /* %s */", guard);
}
