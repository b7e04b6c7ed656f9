/*
 * names.c — the C names generated for a module: one table of the kinds of
 * names per actor, message and type, each with its spelling and what it
 * is called in a diagnostic, and the one speller of them all. No name is
 * stored: the check spells each one to find collisions, and the
 * generators spell one where they print it (a dozen names a message, held
 * for the whole check, were most of its memory), so the scheme is spelled
 * here only.
 *
 * Every name here is public (the header declares it). The generators'
 * private names add "__" and a suffix to one of these, and locals end in
 * '_': neither can be spelled by a user name (lexer.re).
 */
#include <ctype.h>
#include <string.h>

#include "acc.h"

/* An actor's names: its prefix P ("bank_Account") then `post`. */
const acc_cname_rule acc_actor_cnames[ACC_A_COUNT] = {
    [ACC_A_REF] = { "", "_ref", "the reference type" },
    [ACC_A_REF_SEQ] = { "", "_ref_seq", "the reference sequence type" },
    [ACC_A_STATE] = { "", "", "the state type" },
    [ACC_A_TAG_ENUM] = { "", "_tag", "the tag enum" },
    [ACC_A_SPAWN] = { "", "_spawn", "the spawn function" },
    [ACC_A_REF_SELF] = { "", "_ref_self", "the self-reference function" },
    [ACC_A_TYPE] = { "", "_type", "the type descriptor" },
    [ACC_A_SPAWN_OPTS] = { "", "_spawn_opts",
                           "the spawn-with-options function" },
    [ACC_A_WHEREIS] = { "", "_whereis", "the lookup by name function" },
    [ACC_A_REF_OF] = { "", "_ref_of", "the reference-of-address function" },
    [ACC_A_REF_NIL] = { "", "_ref_nil", "the nil reference function" },
    [ACC_A_REF_IS_NIL] = { "", "_ref_is_nil", "the nil test function" },
    [ACC_A_START_ARGS] = { "", "_start_args", "the start arguments" },
    [ACC_A_ON_START] = { "", "_on_start", "the start hook" },
    [ACC_A_ON_STOP] = { "", "_on_stop", "the stop hook" },
    [ACC_A_ON_DOWN] = { "", "_on_down", "the down hook" },
    [ACC_A_ON_EXIT] = { "", "_on_exit", "the exit hook" },
    [ACC_A_ENCODE_REPLY] = { "", "_encode_reply", "the reply encoder" },
    [ACC_A_DECODE_REPLY] = { "", "_decode_reply", "the reply decoder" },
    [ACC_A_BEHAVIOUR] = { "", "_behaviour", "the behaviour enum" },
    [ACC_A_BEHAVIOUR_DEFAULT] = { "", "_BEHAVIOUR_default",
                                  "the default behaviour's constant" },
    [ACC_A_BECOME] = { "", "_become", "the become function" },
};

/* The hooks of an actor that spells them `hook start;` ...: their own
 * names, so that a message `start` (whose handler is P_on_start) can sit
 * next to the start hook. */
static const acc_cname_rule hook_cnames[4] = {
    { "", "_hook_start", "the start hook" },
    { "", "_hook_stop", "the stop hook" },
    { "", "_hook_down", "the down hook" },
    { "", "_hook_exit", "the exit hook" },
};

/* A message's names: P, `pre`, the message's name, `post`. */
const acc_cname_rule acc_msg_cnames[ACC_M_COUNT] = {
    [ACC_M_TAG] = { "_TAG_", "", "the tag" },
    [ACC_M_STRUCT] = { "_", "", "the struct" },
    [ACC_M_HANDLER] = { "_on_", "", "the handler" },
    [ACC_M_SEND] = { "_send_", "", "the send function" },
    [ACC_M_PUBLISH] = { "_publish_", "", "the publish function" },
    [ACC_M_SEND_AFTER] = { "_send_", "_after", "the delayed send function" },
    [ACC_M_SEND_EVERY] = { "_send_", "_every", "the periodic send function" },
    [ACC_M_SEND_CHECKED] = { "_send_", "_checked", "the checked send function" },
    [ACC_M_SEND_MSG] = { "_send_", "_msg", "the send-by-struct function" },
    [ACC_M_REPLY_STRUCT] = { "_", "_reply", "the reply struct" },
    [ACC_M_REPLY] = { "_reply_", "", "the reply function" },
    [ACC_M_FN] = { "_", "_fn", "the continuation type" },
    [ACC_M_ASK] = { "_ask_", "", "the ask function" },
    [ACC_M_ASK_WAIT] = { "_ask_", "_wait", "the blocking ask function" },
    [ACC_M_FORWARD] = { "_forward_", "", "the forward function" },
};

/* A struct's or enum's names: the module's name, '_', its own, `post`;
 * an enum value's: the enum's type name, '_', the value's name. */
const acc_cname_rule acc_decl_cnames[ACC_D_COUNT] = {
    [ACC_D_TYPE] = { "", "", "the type" },
    [ACC_D_SEQ] = { "", "_seq", "the sequence type" },
};
const acc_cname_rule acc_value_cname = { "_", "", "the constant" };
/* The module's name then `post`, upper-cased. */
const acc_cname_rule acc_guard_cname = { "", "_ACTOR_H", "the include guard" };

/* Whether actor `a` has the name of row k: the hooks' names only for the
 * hooks it declares, the reply codecs only with a request. */
static bool actor_has(const acc_actor *a, acc_actor_cname k)
{
    switch (k) {
    case ACC_A_START_ARGS: case ACC_A_ON_START: return a->start != NULL;
    case ACC_A_ON_STOP: return a->stop != NULL;
    case ACC_A_ON_DOWN: return a->down != NULL;
    case ACC_A_ON_EXIT: return a->exit != NULL;
    case ACC_A_ENCODE_REPLY: case ACC_A_DECODE_REPLY:
        for (const acc_message *m = a->messages; m != NULL; m = m->next)
            if (m->has_reply)
                return true;
        return false;
    case ACC_A_BEHAVIOUR: case ACC_A_BEHAVIOUR_DEFAULT: case ACC_A_BECOME:
        return a->behaviours != NULL;
    default: return true;
    }
}

static const acc_name no_name = { NULL, 0, 0 };

bool acc_actor_cname_of(const acc_actor *a, acc_actor_cname k,
                        acc_cname *out)
{
    const acc_cname_rule *rule = &acc_actor_cnames[k];
    if (a->hook_spelled && k >= ACC_A_ON_START && k <= ACC_A_ON_EXIT)
        rule = &hook_cnames[k - ACC_A_ON_START];
    *out = (acc_cname){ a->mod, a->name, rule, no_name, false };
    return actor_has(a, k);
}

bool acc_msg_cname_of(const acc_message *m, acc_msg_cname k, acc_cname *out)
{
    *out = (acc_cname){ m->actor->mod, m->actor->name, &acc_msg_cnames[k],
                        m->name, false };
    if (k == ACC_M_SEND_MSG)
        return m->fields != NULL;
    return k < ACC_M_REPLY_STRUCT || m->has_reply;
}

void acc_decl_cname_of(const acc_decl *d, acc_decl_cname k, acc_cname *out)
{
    *out = (acc_cname){ d->mod, d->name, &acc_decl_cnames[k], no_name,
                        false };
}

void acc_value_cname_of(const acc_enumerator *v, acc_cname *out)
{
    *out = (acc_cname){ v->decl->mod, v->decl->name, &acc_value_cname,
                        v->name, false };
}

void acc_guard_cname_of(const acc_module *m, acc_cname *out)
{
    *out = (acc_cname){ m, no_name, &acc_guard_cname, no_name, true };
}

size_t acc_cname_len(const acc_cname *c)
{
    size_t n = c->mod->name.len + strlen(c->rule->pre) + c->member.len +
               strlen(c->rule->post);
    return c->guard ? n : n + 1 + c->owner.len;
}

/* Spelled with memcpy, not printf: the generators spell a name at each
 * use, and the check each name once or twice. */
static char *put(char *p, const char *s, size_t n)
{
    memcpy(p, s, n);
    return p + n;
}

void acc_cname_write(const acc_cname *c, char *out)
{
    char *p = put(out, c->mod->name.s, c->mod->name.len);
    if (!c->guard) {
        *p++ = '_';
        p = put(p, c->owner.s, c->owner.len);
    }
    p = put(p, c->rule->pre, strlen(c->rule->pre));
    if (c->member.len > 0)
        p = put(p, c->member.s, c->member.len);
    p = put(p, c->rule->post, strlen(c->rule->post));
    *p = '\0';
    if (c->guard)
        for (p = out; *p != '\0'; p++)
            *p = (char)toupper((unsigned char)*p);
}

const char *acc_cname_str(acc_arena *ar, const acc_cname *c)
{
    char *s = acc_alloc_chars(ar, acc_cname_len(c));
    acc_cname_write(c, s);
    return s;
}

const char *acc_actor_cstr(acc_gen *g, const acc_actor *a, acc_actor_cname k)
{
    acc_cname c;
    return acc_actor_cname_of(a, k, &c) ? acc_cname_str(&g->cx->arena, &c) : NULL;
}

const char *acc_msg_cstr(acc_gen *g, const acc_message *m, acc_msg_cname k)
{
    acc_cname c;
    return acc_msg_cname_of(m, k, &c) ? acc_cname_str(&g->cx->arena, &c) : NULL;
}

const char *acc_decl_cstr(acc_gen *g, const acc_decl *d, acc_decl_cname k)
{
    acc_cname c;
    acc_decl_cname_of(d, k, &c);
    return acc_cname_str(&g->cx->arena, &c);
}

const char *acc_value_cstr(acc_gen *g, const acc_enumerator *v)
{
    acc_cname c;
    acc_value_cname_of(v, &c);
    return acc_cname_str(&g->cx->arena, &c);
}

const char *acc_guard_cstr(acc_gen *g, const acc_module *m)
{
    acc_cname c;
    acc_guard_cname_of(m, &c);
    return acc_cname_str(&g->cx->arena, &c);
}
