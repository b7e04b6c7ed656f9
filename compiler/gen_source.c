/*
 * gen_source.c — writes NAME.actor.c: the codecs of the structs and enums
 * in messages (gen_codec.c), then per actor the message union, the
 * dispatch function (one switch on the tag), the hook wrappers, the
 * message names, the codecs, copy and copy_args (gen_codec.c), the type
 * descriptor, and the spawn, send (one builder per message, shared by its
 * send, publish, send_after, send_every and ask functions), whereis,
 * ref_of and ref_self functions.
 *
 * Names made here that are not in the header contain "__", which no user
 * name can produce; locals end in '_', which no user name can either.
 */
#include <string.h>

#include "acc.h"

/* ---- per actor --------------------------------------------------------------------- */

/* The runtime's own messages, for the hooks the actor declares (in every
 * behaviour); the others reach AC_EBADTAG, which the runtime counts as
 * unhandled. */
static void put_system_cases(acc_gen *g, const acc_actor *a)
{
    if (a->down != NULL) {
        acc_gen_line(g, "    case AC_TAG_DOWN:");
        acc_gen_line(g, "        return %s(self, cx, (const ac_down *)"
                        "ac_envelope_payload(e));",
                        acc_actor_cstr(g, a, ACC_A_ON_DOWN));
    }
    if (a->exit != NULL) {
        acc_gen_line(g, "    case AC_TAG_EXIT:");
        acc_gen_line(g, "        return %s(self, cx, (const ac_exit *)"
                        "ac_envelope_payload(e));",
                        acc_actor_cstr(g, a, ACC_A_ON_EXIT));
    }
}

/* The dispatch of the behaviours other than the default one, out of the
 * default's way: a switch on the behaviour, then on the tag. A postponed
 * message goes to the stash (ac_stash keeps the envelope, reply_to and
 * all); one the behaviour neither handles nor postpones is unhandled: a
 * request is answered AC_EBADTAG, so that its asker does not wait, and
 * every one is counted (ac_unhandled). Then become, which takes the stash
 * up again when the behaviour changes. */
static void put_behaviour_dispatch(acc_gen *g, const acc_actor *a,
                                   const char *p)
{
    acc_gen_line(g, "static int %s__unhandled(ac_ctx *cx, ac_envelope *e)\n{", p);
    bool requests = false;
    for (const acc_message *m = a->messages; m != NULL; m = m->next)
        requests |= m->has_reply;
    if (requests) {
        acc_gen_line(g, "    union %s__messages *m =", p);
        acc_gen_line(g, "        (union %s__messages *)ac_envelope_payload(e);\n", p);
        acc_gen_line(g, "    int rc_ = ac_unhandled(cx);\n");
        acc_gen_line(g, "    if (rc_ != 0)\n        return rc_;");
        acc_gen_line(g, "    switch (e->tag) {");
        for (const acc_message *m = a->messages; m != NULL; m = m->next) {
            if (!m->has_reply)
                continue;
            acc_arena_mark mk = acc_arena_mark_get(&g->cx->arena);
            acc_gen_line(g, "    case %s:", acc_msg_cstr(g, m, ACC_M_TAG));
            acc_gen_line(g, "        return ac_reply_error(cx, &m->%s.reply_to, "
                            "AC_EBADTAG);", acc_gen_msg_member(g, m));
            acc_arena_release(&g->cx->arena, mk);
        }
        acc_gen_line(g, "    }\n    return 0;\n}\n");
    } else {
        acc_gen_line(g, "    (void)e;\n    return ac_unhandled(cx);\n}\n");
    }

    acc_gen_line(g, "static int %s__dispatch_in(%s *self, ac_ctx *cx, "
                    "ac_envelope *e)\n{", p, p);
    acc_gen_line(g, "    union %s__messages *m =", p);
    acc_gen_line(g, "        (union %s__messages *)ac_envelope_payload(e);\n", p);
    acc_gen_line(g, "    (void)m;");
    acc_gen_line(g, "    switch (self->behaviour_) {");
    for (const acc_behaviour *b = a->behaviours; b != NULL; b = b->next) {
        acc_arena_mark mk = acc_arena_mark_get(&g->cx->arena);
        acc_gen_line(g, "    case %s:", acc_gen_behaviour_const(g, b));
        acc_gen_line(g, "        switch (e->tag) {");
        for (const acc_bitem *it = b->items; it != NULL; it = it->next) {
            acc_gen_line(g, "        case %s:", acc_msg_cstr(g, it->msg, ACC_M_TAG));
            if (it->postpone)
                acc_gen_line(g, "            return ac_stash(cx);");
            else
                acc_gen_line(g, "            return %s(self, cx, &m->%s);",
                             acc_gen_behaviour_handler(g, b, it->msg),
                             acc_gen_msg_member(g, it->msg));
        }
        acc_gen_line(g, "        }\n        break;");
        acc_arena_release(&g->cx->arena, mk);
    }
    acc_gen_line(g, "    }");
    if (a->down != NULL || a->exit != NULL) {
        acc_gen_line(g, "    switch (e->tag) {");
        put_system_cases(g, a);
        acc_gen_line(g, "    }");
    }
    acc_gen_line(g, "    return e->tag < %uu ? %s__unhandled(cx, e) : AC_EBADTAG;",
                 (unsigned)a->message_count, p);
    acc_gen_line(g, "}\n");
}

static void put_become(acc_gen *g, const acc_actor *a, const char *p)
{
    acc_gen_line(g, "\nint %s(%s *self, ac_ctx *cx, %s b)\n{",
                 acc_actor_cstr(g, a, ACC_A_BECOME), p,
                 acc_actor_cstr(g, a, ACC_A_BEHAVIOUR));
    acc_gen_line(g, "    int rc_;\n");
    acc_gen_line(g, "    if (self == NULL || (uint32_t)b > %uu)\n"
                    "        return AC_EINVAL;", (unsigned)a->behaviour_count);
    acc_gen_line(g, "    if (self->behaviour_ == (uint32_t)b)\n        return 0;");
    /* Taken up first: outside the actor nothing changes. */
    acc_gen_line(g, "    rc_ = ac_unstash_all(cx);");
    acc_gen_line(g, "    if (rc_ < 0)\n        return rc_;");
    acc_gen_line(g, "    self->behaviour_ = (uint32_t)b;");
    acc_gen_line(g, "    return 0;\n}");
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
        for (const acc_message *m = a->messages; m != NULL; m = m->next) {
            acc_arena_mark mk = acc_arena_mark_get(&g->cx->arena);
            acc_gen_line(g, "    %s %s;", acc_msg_cstr(g, m, ACC_M_STRUCT),
                         acc_gen_msg_member(g, m));
            acc_arena_release(&g->cx->arena, mk);
        }
        acc_gen_line(g, "};\n");
    }

    if (a->behaviours != NULL)
        put_behaviour_dispatch(g, a, p);

    acc_gen_line(g, "%s", sig);
    acc_gen_line(g, "{\n    %s *self = (%s *)state;", p, p);
    if (a->messages != NULL) {
        acc_gen_line(g, "    union %s__messages *m =", p);
        acc_gen_line(g, "        (union %s__messages *)ac_envelope_payload(e);\n", p);
    } else {
        acc_buf_putc(g->out, '\n');
    }
    /* The default behaviour's path is the plain dispatch, after one test;
     * an actor without behaviours has not even that. */
    if (a->behaviours != NULL)
        acc_gen_line(g, "    if (self->behaviour_ != 0)\n"
                        "        return %s__dispatch_in(self, cx, e);", p);
    /* On the raw uint32_t: a tag outside the enum reaches AC_EBADTAG
     * without first being cast to an enum type that cannot hold it, which
     * C++ leaves undefined. */
    acc_gen_line(g, "    switch (e->tag) {");
    for (const acc_message *m = a->messages; m != NULL; m = m->next) {
        acc_arena_mark mk = acc_arena_mark_get(&g->cx->arena);
        acc_gen_line(g, "    case %s:", acc_msg_cstr(g, m, ACC_M_TAG));
        acc_gen_line(g, "        return %s(self, cx, &m->%s);",
                     acc_msg_cstr(g, m, ACC_M_HANDLER), acc_gen_msg_member(g, m));
        acc_arena_release(&g->cx->arena, mk);
    }
    put_system_cases(g, a);
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
                         acc_actor_cstr(g, a, ACC_A_ON_START), p,
                         acc_actor_cstr(g, a, ACC_A_START_ARGS));
        else
            acc_gen_line(g, "    (void)args;\n    return %s((%s *)state, cx);",
                         acc_actor_cstr(g, a, ACC_A_ON_START), p);
        acc_gen_line(g, "}");
    }
    if (a->stop != NULL) {
        acc_gen_line(g, "\nstatic void %s__stop(void *state, ac_ctx *cx)\n{", p);
        acc_gen_line(g, "    %s((%s *)state, cx);\n}",
                     acc_actor_cstr(g, a, ACC_A_ON_STOP),
                     p);
    }
}

/* Whether some message of `a` is urgent: then the type carries a
 * priority by tag, and its actors get the runtime's urgent lane. */
static bool has_urgent(const acc_actor *a)
{
    for (const acc_message *m = a->messages; m != NULL; m = m->next)
        if (m->urgent)
            return true;
    return false;
}

static void put_type(acc_gen *g, const acc_actor *a, const char *p)
{
    const acc_name *mn = &g->mod->name;
    bool urgent = has_urgent(a);
    if (urgent) {
        acc_gen_line(g, "\nstatic const uint8_t %s__priority[] = {", p);
        for (const acc_message *m = a->messages; m != NULL; m = m->next)
            acc_gen_line(g, "    %s%s /* %.*s */",
                         m->urgent ? "AC_PRIORITY_URGENT" : "AC_PRIORITY_NORMAL",
                         m->next ? "," : "", (int)m->name.len, m->name.s);
        acc_gen_line(g, "};");
    }
    acc_gen_line(g, "\nconst ac_actor_type %s = {",
                 acc_actor_cstr(g, a, ACC_A_TYPE));
    acc_gen_line(g, "    AC_ABI_VERSION,");
    acc_gen_line(g, "    \"%.*s.%.*s\",", (int)mn->len, mn->s,
                 (int)a->name.len, a->name.s);
    if (acc_gen_has_state(a))
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
    const char *encode_reply = acc_actor_cstr(g, a, ACC_A_ENCODE_REPLY);
    if (encode_reply != NULL)
        acc_gen_line(g, "    %s,\n    %s,", encode_reply,
                     acc_actor_cstr(g, a, ACC_A_DECODE_REPLY));
    else
        acc_gen_line(g, "    NULL, /* no requests */\n    NULL,");
    acc_gen_line(g, "    %s__copy,", p);
    static const char *const overflow[] = {
        "AC_OVERFLOW_REJECT", "AC_OVERFLOW_DROP_NEWEST", "AC_OVERFLOW_DROP_OLDEST",
    };
    if (a->mailbox_bound == 0)
        acc_gen_line(g, "    0, /* mailbox: unbounded */");
    else
        acc_gen_line(g, "    %luu, /* mailbox bound */",
                     (unsigned long)a->mailbox_bound);
    acc_gen_line(g, "    %s,", overflow[a->mailbox_overflow]);
    if (urgent)
        acc_gen_line(g, "    %s__priority,", p);
    else
        acc_gen_line(g, "    NULL, /* every message normal */");
    if (a->start != NULL && a->start->fields != NULL)
        acc_gen_line(g, "    %s__copy_args\n};", p);
    else
        acc_gen_line(g, "    NULL /* no start arguments */\n};");
}

/* Assigns field f (a parameter of the same name) to dst f, dst being
 * "msg_->" or "args_.". */
static void assign(acc_gen *g, const char *dst, const acc_field *f)
{
    const char *n = acc_gen_field(g, f);
    if (f->type.kind == ACC_ARRAY)
        acc_gen_line(g, "    memcpy(%s%s, %s, sizeof(%s%s));", dst, n, n, dst,
                     n);
    else
        acc_gen_line(g, "    %s%s = %s;", dst, n, n);
}

/* ", f1, f2": the fields as arguments (appended, as acc_gen_params does:
 * linear in the fields). */
static const char *args_of(acc_gen *g, const acc_field *f)
{
    acc_str s = { NULL, 0, 0, &g->cx->arena };
    for (; f != NULL; f = f->next)
        acc_str_printf(&s, ", %s", acc_gen_field(g, f));
    return s.data != NULL ? s.data : "";
}

/* Sizes, allocates and fills a message or reply from parameters of the
 * same names as its fields. `alloc` makes env_ of size_ bytes, at most
 * `limit`; `body` is where the struct starts in it. */
static void put_fill(acc_gen *g, const char *sn, const acc_field *fields,
                     const char *alloc, const char *body, const char *limit,
                     bool req)
{
    bool var = acc_fields_have_var(fields);
    acc_gen_line(g, "    size_t size_ = sizeof(%s);", sn);
    acc_gen_line(g, "    ac_envelope *env_;");
    acc_gen_line(g, "    %s *msg_;\n", sn);
    if (var) {
        acc_gen_tail(g, fields, "", "size_", 0);
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
    const char *type = acc_actor_cstr(g, a, ACC_A_TYPE);

    open_fn(g, acc_gen_params(g, acc_aprintf(ar, "static int %s__build(ac_ctx "
                              "*cx, ac_envelope **built_", mn), m->fields, ""));
    put_fill(g, mn, m->fields, acc_aprintf(ar, "ac_envelope_new(cx, %s, "
             "size_)", acc_msg_cstr(g, m, ACC_M_TAG)), "ac_envelope_payload",
             "AC_MAX_PAYLOAD", m->has_reply);
    acc_gen_line(g, "    *built_ = env_;\n    return 0;\n}");

    /* Typed: the target may live on another node, where the message
     * travels encoded with this type's codec. */
    put_built(g, acc_gen_send_decl(g, a, m), mn, args, acc_aprintf(ar,
              "ac_send_typed(cx, &to.addr, &%s, env_)", type), false);
    put_built(g, acc_gen_send_checked_decl(g, a, m), mn, args, acc_aprintf(ar,
              "ac_send_checked(cx, &to.addr, &%s, env_)", type), false);
    if (m->fields != NULL) {
        /* By name: the positional send with the struct's fields. */
        acc_str call = { NULL, 0, 0, ar };
        acc_str_printf(&call, "%s(cx, to", acc_msg_cstr(g, m, ACC_M_SEND));
        for (const acc_field *f = m->fields; f != NULL; f = f->next)
            acc_str_printf(&call, ", msg->%s", acc_gen_field(g, f));
        open_fn(g, acc_gen_send_msg_decl(g, a, m));
        acc_gen_line(g, "    if (msg == NULL)\n        return AC_EINVAL;");
        acc_gen_line(g, "    return %s);", call.data);
        acc_gen_line(g, "}");
    }
    put_built(g, acc_gen_publish_decl(g, m), mn, args, acc_aprintf(ar,
              "ac_group_publish(cx, group, &%s, env_)", type), false);
    put_built(g, acc_gen_timer_decl(g, a, m, false), mn, args, acc_aprintf(ar,
              "ac_timer_after_typed(cx, &to.addr, &%s, delay_ms, env_, timer_id)", type),
              true);
    put_built(g, acc_gen_timer_decl(g, a, m, true), mn, args, acc_aprintf(ar,
              "ac_timer_every(cx, &to.addr, period_ms, &%s, env_, "
              "timer_id)", type), true);
}

/* A message with a reply: the ask and blocking ask (on the send's
 * builder), the reply function, the continuation's trampoline. */
static void put_request(acc_gen *g, const acc_actor *a, const acc_message *m,
                        const char *mn, const char *args)
{
    const char *rn = acc_msg_cstr(g, m, ACC_M_REPLY_STRUCT);

    open_fn(g, acc_aprintf(&g->cx->arena, "static int %s__call(ac_any_fn fn, "
                           "void *state, ac_ctx *cx, int status, const void "
                           "*body, void *arg)", mn));
    acc_gen_line(g, "    return ((%s)fn)(state, cx, status, (const %s *)body, "
                    "arg);", acc_msg_cstr(g, m, ACC_M_FN), rn);
    acc_gen_line(g, "}");

    /* Typed, as sends are: the ask, its reply and the blocking ask also
     * cross nodes. */
    const char *type = acc_actor_cstr(g, a, ACC_A_TYPE);
    put_built(g, acc_gen_ask_decl(g, a, m, false), mn, args, acc_aprintf(
              &g->cx->arena, "ac_ask_via(cx, &to.addr, &%s, env_, timeout_ms, "
              "%s__call, (ac_any_fn)fn, arg)", type, mn), false);

    open_fn(g, acc_gen_ask_decl(g, a, m, true));
    acc_gen_line(g, "    ac_envelope *env_ = NULL, *reply_ = NULL;");
    acc_gen_line(g, "    int rc_ = %s__build(cx, &env_%s);", mn, args);
    acc_buf_putc(g->out, '\n');
    acc_gen_line(g, "    *out = NULL;");
    acc_gen_line(g, "    if (rc_ != 0)\n        return rc_;");
    acc_gen_line(g, "    rc_ = ac_ask_wait_typed(cx, &to.addr, &%s, env_, timeout_ms, "
                    "&reply_);", type);
    acc_gen_line(g, "    if (rc_ == 0)\n        *out = (%s *)ac_reply_body(reply_);", rn);
    acc_gen_line(g, "    return rc_;");
    acc_gen_line(g, "}");

    open_fn(g, acc_gen_reply_decl(g, m));
    put_fill(g, rn, m->reply, "ac_reply_new(cx, to, size_)", "ac_reply_body",
             "AC_MAX_PAYLOAD - AC_REPLY_HEAD_SIZE", false);
    acc_gen_line(g, "    return ac_reply_typed(cx, to, &%s, %s, env_);", type,
                 acc_msg_cstr(g, m, ACC_M_TAG));
    acc_gen_line(g, "}");

    /* Forward: the request as received, reply_to and ask id included, in
     * an envelope of its own (the one handled is still its mailbox's), so
     * that whoever handles it last answers the original asker; sent by
     * ac_forward_typed, so that a target gone answers that asker at once
     * (AC_ENOTFOUND) instead of leaving it to its timeout. */
    bool var = acc_fields_have_var(m->fields);
    open_fn(g, acc_gen_forward_decl(g, m));
    acc_gen_line(g, "    size_t size_ = sizeof(%s);", mn);
    acc_gen_line(g, "    ac_envelope *env_;");
    acc_gen_line(g, "    %s *msg_;\n", mn);
    acc_gen_line(g, "    if (cx == NULL || msg == NULL)\n        return AC_EINVAL;");
    if (var) {
        acc_gen_tail(g, m->fields, "msg->", "size_", 0);
        acc_gen_line(g, "    if (size_ > AC_MAX_PAYLOAD)\n        return AC_EINVAL;");
    }
    acc_gen_line(g, "    env_ = ac_envelope_new(cx, %s, size_);", acc_msg_cstr(g, m, ACC_M_TAG));
    acc_gen_line(g, "    if (env_ == NULL)\n        return AC_ENOMEM;");
    acc_gen_line(g, "    msg_ = (%s *)ac_envelope_payload(env_);", mn);
    acc_gen_line(g, "    *msg_ = *msg;");
    if (var) {
        acc_gen_line(g, "    size_ = sizeof(%s);", mn);
        acc_gen_line(g, "    %s__copy(msg_, (unsigned char *)msg_, &size_);", mn);
    }
    acc_gen_line(g, "    return ac_forward_typed(cx, &to.addr, &%s, env_);", type);
    acc_gen_line(g, "}");
}

/* The typed asks (gen_header.c's put_typed_asks): a trampoline that calls
 * the continuation with its real type, and the ask on the request's
 * builder, checked to run in an actor of the asker's type. */
static void put_typed_asks(acc_gen *g)
{
    const acc_module *mod = g->mod;
    for (const acc_actor *a = mod->actors; a != NULL; a = a->next)
        for (const acc_actor *b = mod->actors; b != NULL; b = b->next)
            for (const acc_message *m = b->messages; m != NULL; m = m->next) {
                if (!m->has_reply)
                    continue;
                acc_arena *ar = &g->cx->arena;
                acc_arena_mark mk = acc_arena_mark_get(ar);
                const char *name = acc_gen_typed_ask_name(g, a, m, false);
                const char *mn = acc_msg_cstr(g, m, ACC_M_STRUCT);
                open_fn(g, acc_aprintf(ar, "static int %s__call(ac_any_fn fn, void "
                                       "*state, ac_ctx *cx, int status, const void "
                                       "*body, void *arg)", name));
                acc_gen_line(g, "    return ((%s)fn)((%s *)state, cx, status, (const %s "
                                "*)body, arg);", acc_gen_typed_ask_name(g, a, m, true),
                             acc_actor_cstr(g, a, ACC_A_STATE),
                             acc_msg_cstr(g, m, ACC_M_REPLY_STRUCT));
                acc_gen_line(g, "}");
                open_fn(g, acc_gen_typed_ask_decl(g, a, m));
                acc_gen_line(g, "    ac_envelope *env_ = NULL;");
                acc_gen_line(g, "    int rc_ = %s__build(cx, &env_%s);", mn,
                             args_of(g, m->fields));
                acc_buf_putc(g->out, '\n');
                acc_gen_line(g, "    return rc_ != 0 ? rc_ : ac_ask_ctx(cx, &to.addr, &%s, "
                                "&%s, env_, timeout_ms, %s__call, (ac_any_fn)fn, ctx, "
                                "ctx_size);", acc_actor_cstr(g, b, ACC_A_TYPE),
                             acc_actor_cstr(g, a, ACC_A_TYPE), name);
                acc_gen_line(g, "}");
                acc_arena_release(ar, mk);
            }
}

static void put_functions(acc_gen *g, const acc_actor *a)
{
    /* The plain spawn is spawn_opts without options: one copy of the
     * start arguments' packing. */
    const acc_field *start = a->start != NULL ? a->start->fields : NULL;
    const char *type = acc_actor_cstr(g, a, ACC_A_TYPE),
    *ref = acc_actor_cstr(g, a, ACC_A_REF);
    open_fn(g, acc_gen_spawn_decl(g, a, true));
    if (start != NULL) {
        acc_gen_line(g, "    %s args_;\n",
                     acc_actor_cstr(g, a, ACC_A_START_ARGS));
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
                 acc_actor_cstr(g, a, ACC_A_SPAWN_OPTS), args_of(g, start));

    for (const acc_message *m = a->messages; m != NULL; m = m->next) {
        acc_arena_mark mk = acc_arena_mark_get(&g->cx->arena);
        const char *mn = acc_msg_cstr(g, m, ACC_M_STRUCT),
        *args = args_of(g, m->fields);
        put_senders(g, a, m, mn, args);
        if (m->has_reply)
            put_request(g, a, m, mn, args);
        acc_arena_release(&g->cx->arena, mk);
    }

    open_fn(g, acc_aprintf(&g->cx->arena, "int %s(ac_ctx *cx, const char "
                           "*name, %s *out)",
                           acc_actor_cstr(g, a, ACC_A_WHEREIS), ref));
    acc_gen_line(g, "    int rc_ = ac_whereis(cx, name, out != NULL ? &out->addr "
                    ": NULL);\n");
    acc_gen_line(g, "    if (rc_ != 0 && out != NULL)");
    acc_gen_line(g, "        memset(&out->addr, 0, sizeof(out->addr));");
    acc_gen_line(g, "    return rc_;\n}");

    acc_gen_line(g, "\n%s %s(ac_addr addr)\n{", ref,
                 acc_actor_cstr(g, a, ACC_A_REF_OF));
    acc_gen_line(g, "    %s ref;\n", ref);
    acc_gen_line(g, "    ref.addr = addr;\n    return ref;\n}");

    acc_gen_line(g, "\n%s %s(void)\n{", ref,
                 acc_actor_cstr(g, a, ACC_A_REF_NIL));
    acc_gen_line(g, "    %s ref = { { { 0 } } };\n", ref);
    acc_gen_line(g, "    return ref;\n}");

    acc_gen_line(g, "\nbool %s(%s r)\n{", acc_actor_cstr(g, a, ACC_A_REF_IS_NIL),
                 ref);
    acc_gen_line(g, "    return ac_addr_is_nil(&r.addr);\n}");

    acc_gen_line(g, "\n%s %s(const ac_ctx *cx)\n{", ref,
                 acc_actor_cstr(g, a, ACC_A_REF_SELF));
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
    acc_gen_type_codecs(g);
    for (const acc_actor *a = g->mod->actors; a != NULL; a = a->next) {
        /* What an actor's code needs goes once it is written. */
        acc_arena_mark mk = acc_arena_mark_get(&g->cx->arena);
        const char *p = acc_actor_cstr(g, a, ACC_A_STATE);
        acc_gen_section(g, "actor", &a->name);
        put_dispatch(g, a, p);
        put_hooks(g, a, p);
        acc_gen_actor_codecs(g, a);
        put_type(g, a, p);
        put_functions(g, a);
        if (a->behaviours != NULL)
            put_become(g, a, p);
        acc_arena_release(&g->cx->arena, mk);
    }
    put_typed_asks(g);
}
