/*
 * names.c — the C names generated for a module: one table of the kinds of
 * names per actor, message and type, each with its spelling and what it
 * is called in a diagnostic. The check pass fills the names in (and finds
 * collisions among them); the generators print them as filled in, so the
 * scheme is spelled here only.
 *
 * Every name here is public (the header declares it). The generators'
 * private names add "__" and a suffix to one of these, and locals end in
 * '_': neither can be spelled by a user name (lexer.re).
 */
#include <ctype.h>

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
    [ACC_A_START_ARGS] = { "", "_start_args", "the start arguments" },
    [ACC_A_ON_START] = { "", "_on_start", "the start hook" },
    [ACC_A_ON_STOP] = { "", "_on_stop", "the stop hook" },
    [ACC_A_ON_DOWN] = { "", "_on_down", "the down hook" },
    [ACC_A_ON_EXIT] = { "", "_on_exit", "the exit hook" },
    [ACC_A_ENCODE_REPLY] = { "", "_encode_reply", "the reply encoder" },
    [ACC_A_DECODE_REPLY] = { "", "_decode_reply", "the reply decoder" },
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
    [ACC_M_REPLY_STRUCT] = { "_", "_reply", "the reply struct" },
    [ACC_M_REPLY] = { "_reply_", "", "the reply function" },
    [ACC_M_FN] = { "_", "_fn", "the continuation type" },
    [ACC_M_ASK] = { "_ask_", "", "the ask function" },
    [ACC_M_ASK_WAIT] = { "_ask_", "_wait", "the blocking ask function" },
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
    default: return true;
    }
}

static const char *spell(acc_arena *ar, const char *owner,
                         const acc_cname_rule *r, const acc_name *n)
{
    if (n == NULL)
        return acc_aprintf(ar, "%s%s%s", owner, r->pre, r->post);
    return acc_aprintf(ar, "%s%s%.*s%s", owner, r->pre, (int)n->len, n->s,
                       r->post);
}

void acc_name_module(acc_arena *ar, acc_module *mod)
{
    int mn = (int)mod->name.len;
    const char *ms = mod->name.s;
    char *guard = acc_aprintf(ar, "%.*s%s", mn, ms, acc_guard_cname.post);
    for (char *p = guard; *p != '\0'; p++)
        *p = (char)toupper((unsigned char)*p);
    mod->guard = guard;

    for (acc_decl *d = mod->decls; d != NULL; d = d->next) {
        const char *t = acc_aprintf(ar, "%.*s_%.*s", mn, ms,
                                    (int)d->name.len, d->name.s);
        for (int k = 0; k < ACC_D_COUNT; k++)
            d->cname[k] = spell(ar, t, &acc_decl_cnames[k], NULL);
        for (acc_enumerator *v = d->values; v != NULL; v = v->next)
            v->cname = spell(ar, t, &acc_value_cname, &v->name);
    }
    for (acc_actor *a = mod->actors; a != NULL; a = a->next) {
        const char *p = acc_aprintf(ar, "%.*s_%.*s", mn, ms,
                                    (int)a->name.len, a->name.s);
        for (int k = 0; k < ACC_A_COUNT; k++)
            a->cname[k] = actor_has(a, (acc_actor_cname)k)
                ? spell(ar, p, &acc_actor_cnames[k], NULL) : NULL;
        for (acc_message *m = a->messages; m != NULL; m = m->next)
            for (int k = 0; k < ACC_M_COUNT; k++)
                m->cname[k] = k < ACC_M_REPLY_STRUCT || m->has_reply
                    ? spell(ar, p, &acc_msg_cnames[k], &m->name) : NULL;
    }
}
