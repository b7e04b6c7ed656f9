/*
 * check.c — the semantic pass: resolves ref<Actor>, rejects duplicate
 * names (with a note at the first), names C cannot take, and any two
 * generated C identifiers that would be the same. Reports in source order
 * where it can; marks bad actors and messages so that one mistake is not
 * reported again as a collision.
 */
#include <string.h>

#include "acc.h"

typedef struct checker {
    acc_ctx *cx;
    acc_module *mod;
    acc_map actors;         /* name -> first acc_actor of that name */
} checker;

static acc_loc loc_of(acc_name n)
{
    acc_loc at = { n.off, n.len };
    return at;
}

static bool is(acc_name n, const char *s)
{
    return strlen(s) == n.len && memcmp(n.s, s, n.len) == 0;
}

/* Every name: not a keyword. Bare names (module, message, field) also keep
 * clear of the standard headers' and the runtime's names. */
static bool check_name(checker *ck, acc_name n, const char *what, bool bare)
{
    const char *why = bare ? acc_c_reserved(n.s, n.len)
                           : acc_c_keyword(n.s, n.len);
    if (why == NULL)
        return true;
    acc_error(ck->cx, loc_of(n), "'%.*s' cannot be used as %s name: it is %s",
              (int)n.len, n.s, what, why);
    return false;
}

static void check_module(checker *ck)
{
    acc_module *mod = ck->mod;
    if (!check_name(ck, mod->name, "a module", false)) {
        mod->bad = true;
    } else if (is(mod->name, "ac") || is(mod->name, "AC")) {
        acc_error(ck->cx, loc_of(mod->name),
                  "'%.*s' cannot be used as a module name: the prefix "
                  "'%.*s_' is reserved for the actorc runtime",
                  (int)mod->name.len, mod->name.s,
                  (int)mod->name.len, mod->name.s);
        mod->bad = true;
    }
}

/* "did you mean" for an unknown actor: the closest name within a third
 * of its length (at least one edit). */
static const acc_actor *closest_actor(checker *ck, acc_name n)
{
    const acc_actor *best = NULL;
    size_t cap = n.len / 3 > 1 ? n.len / 3 : 1;
    size_t best_d = cap + 1;
    for (const acc_actor *a = ck->mod->actors; a != NULL; a = a->next) {
        size_t d = acc_edit_distance(n.s, n.len, a->name.s, a->name.len, cap);
        if (d < best_d) {
            best = a;
            best_d = d;
        }
    }
    return best;
}

static void resolve(checker *ck, acc_type *t)
{
    if (t->kind != ACC_REF)
        return;
    t->actor = acc_map_get(&ck->actors, t->target.s, t->target.len);
    if (t->actor != NULL)
        return;
    const acc_actor *near = closest_actor(ck, t->target);
    if (near != NULL)
        acc_error(ck->cx, loc_of(t->target),
                  "unknown actor '%.*s'; did you mean '%.*s'?",
                  (int)t->target.len, t->target.s,
                  (int)near->name.len, near->name.s);
    else
        acc_error(ck->cx, loc_of(t->target), "unknown actor '%.*s'",
                  (int)t->target.len, t->target.s);
}

/* The fields of a message (owner != NULL) or of an actor's state. */
static void check_fields(checker *ck, const acc_actor *a,
                         const acc_message *owner, acc_field *fields)
{
    acc_map seen;
    acc_map_init(&seen, &ck->cx->arena);
    for (acc_field *f = fields; f != NULL; f = f->next) {
        acc_field *first = acc_map_put(&seen, f->name.s, f->name.len, f);
        if (first != f) {
            if (owner != NULL)
                acc_error(ck->cx, loc_of(f->name),
                          "duplicate field '%.*s' in message '%.*s'",
                          (int)f->name.len, f->name.s,
                          (int)owner->name.len, owner->name.s);
            else
                acc_error(ck->cx, loc_of(f->name),
                          "duplicate field '%.*s' in the state of actor '%.*s'",
                          (int)f->name.len, f->name.s,
                          (int)a->name.len, a->name.s);
            acc_note(ck->cx, loc_of(first->name),
                     "'%.*s' was first declared here",
                     (int)first->name.len, first->name.s);
        } else if (check_name(ck, f->name, "a field", true) && owner != NULL &&
                   (is(f->name, "cx") || is(f->name, "to"))) {
            acc_error(ck->cx, loc_of(f->name),
                      "'%.*s' cannot be used as a message field name: it is "
                      "a parameter of the generated send function",
                      (int)f->name.len, f->name.s);
        }
        resolve(ck, &f->type);
    }
}

static void check_actor(checker *ck, acc_actor *a)
{
    acc_actor *first = acc_map_get(&ck->actors, a->name.s, a->name.len);
    if (first != a) {
        acc_error(ck->cx, loc_of(a->name), "duplicate actor '%.*s'",
                  (int)a->name.len, a->name.s);
        acc_note(ck->cx, loc_of(first->name), "'%.*s' was first declared here",
                 (int)first->name.len, first->name.s);
        a->bad = true;
    } else if (!check_name(ck, a->name, "an actor", false)) {
        a->bad = true;
    }
    check_fields(ck, a, NULL, a->state);

    acc_map seen;
    acc_map_init(&seen, &ck->cx->arena);
    for (acc_message *m = a->messages; m != NULL; m = m->next) {
        acc_message *prev = acc_map_put(&seen, m->name.s, m->name.len, m);
        if (prev != m) {
            acc_error(ck->cx, loc_of(m->name),
                      "duplicate message '%.*s' in actor '%.*s'",
                      (int)m->name.len, m->name.s,
                      (int)a->name.len, a->name.s);
            acc_note(ck->cx, loc_of(prev->name),
                     "'%.*s' was first declared here",
                     (int)prev->name.len, prev->name.s);
            m->bad = true;
        } else if (!check_name(ck, m->name, "a message", true)) {
            m->bad = true;
        }
        check_fields(ck, a, m, m->fields);
    }
}

/* ---- generated names --------------------------------------------------------- */

typedef enum gen_kind {
    G_GUARD, G_REF, G_STATE, G_TAG_ENUM, G_SPAWN, G_REF_SELF, G_TYPE,
    G_MSG_TAG, G_MSG_STRUCT, G_MSG_HANDLER, G_MSG_SEND
} gen_kind;

typedef struct gen_name {
    const char *name;
    gen_kind kind;
    const acc_actor *actor;
    const acc_message *msg;
} gen_name;

static const char *describe(checker *ck, const gen_name *g)
{
    static const char *const what[] = {
        "the include guard", "the reference type", "the state type",
        "the tag enum", "the spawn function", "the self-reference function",
        "the type descriptor", "the tag", "the struct", "the handler",
        "the send function",
    };
    acc_arena *ar = &ck->cx->arena;
    if (g->kind == G_GUARD)
        return what[g->kind];
    if (g->msg == NULL)
        return acc_aprintf(ar, "%s of actor '%.*s'", what[g->kind],
                           (int)g->actor->name.len, g->actor->name.s);
    return acc_aprintf(ar, "%s of message '%.*s.%.*s'", what[g->kind],
                       (int)g->actor->name.len, g->actor->name.s,
                       (int)g->msg->name.len, g->msg->name.s);
}

static acc_loc origin(const checker *ck, const gen_name *g)
{
    if (g->msg != NULL)
        return loc_of(g->msg->name);
    if (g->actor != NULL)
        return loc_of(g->actor->name);
    return loc_of(ck->mod->name);
}

/* Records one generated name; false (after reporting) if it clashes. */
static bool add_name(checker *ck, acc_map *names, gen_name *g)
{
    const char *why = acc_c_reserved(g->name, strlen(g->name));
    if (why != NULL) {
        acc_error(ck->cx, origin(ck, g), "'%s', %s, is %s", g->name,
                  describe(ck, g), why);
        return false;
    }
    gen_name *first = acc_map_put(names, g->name, strlen(g->name), g);
    if (first == g)
        return true;
    acc_error(ck->cx, origin(ck, g), "'%s', %s, collides with %s", g->name,
              describe(ck, g), describe(ck, first));
    acc_note(ck->cx, origin(ck, first), "'%s' is first generated here",
             first->name);
    return false;
}

static bool add(checker *ck, acc_map *names, gen_kind kind,
                const acc_actor *a, const acc_message *m, const char *name)
{
    gen_name *g = acc_alloc(&ck->cx->arena, sizeof(*g));
    g->name = name;
    g->kind = kind;
    g->actor = a;
    g->msg = m;
    return add_name(ck, names, g);
}

static void shadows(checker *ck, const acc_map *names, acc_name n,
                    const char *what)
{
    const gen_name *g = acc_map_get(names, n.s, n.len);
    if (g != NULL)
        acc_error(ck->cx, loc_of(n), "'%.*s' cannot be used as %s name: it "
                  "is %s", (int)n.len, n.s, what, describe(ck, g));
}

static void check_shadowing(checker *ck, const acc_map *names,
                            const acc_field *fields, const acc_message *m)
{
    if (m != NULL)
        shadows(ck, names, m->name, "a message");
    for (const acc_field *f = fields; f != NULL; f = f->next)
        shadows(ck, names, f->name, "a field");
}

static void check_generated_names(checker *ck)
{
    acc_arena *ar = &ck->cx->arena;
    acc_module *mod = ck->mod;
    acc_map names;
    acc_map_init(&names, ar);

    add(ck, &names, G_GUARD, NULL, NULL, acc_gen_guard(ar, mod));
    for (const acc_actor *a = mod->actors; a != NULL; a = a->next) {
        if (a->bad)
            continue;
        const char *p = acc_aprintf(ar, "%.*s_%.*s", (int)mod->name.len,
                                    mod->name.s, (int)a->name.len, a->name.s);
        /* One report per actor or message is enough. */
        (void)(add(ck, &names, G_REF, a, NULL, acc_aprintf(ar, "%s_ref", p)) &&
               add(ck, &names, G_STATE, a, NULL, p) &&
               add(ck, &names, G_TAG_ENUM, a, NULL, acc_aprintf(ar, "%s_tag", p)) &&
               add(ck, &names, G_SPAWN, a, NULL, acc_aprintf(ar, "%s_spawn", p)) &&
               add(ck, &names, G_REF_SELF, a, NULL, acc_aprintf(ar, "%s_ref_self", p)) &&
               add(ck, &names, G_TYPE, a, NULL, acc_aprintf(ar, "%s_type", p)));
        for (const acc_message *m = a->messages; m != NULL; m = m->next) {
            if (m->bad)
                continue;
            int n = (int)m->name.len;
            const char *s = m->name.s;
            (void)(add(ck, &names, G_MSG_TAG, a, m, acc_aprintf(ar, "%s_TAG_%.*s", p, n, s)) &&
                   add(ck, &names, G_MSG_STRUCT, a, m, acc_aprintf(ar, "%s_%.*s", p, n, s)) &&
                   add(ck, &names, G_MSG_HANDLER, a, m, acc_aprintf(ar, "%s_on_%.*s", p, n, s)) &&
                   add(ck, &names, G_MSG_SEND, a, m, acc_aprintf(ar, "%s_send_%.*s", p, n, s)));
        }
    }

    /* Field and message names are struct and union members, and message
     * fields are parameters of the send functions: named like a generated
     * type or function, one would shadow it there (or, in C++, change its
     * meaning inside the struct). */
    for (const acc_actor *a = mod->actors; a != NULL; a = a->next) {
        check_shadowing(ck, &names, a->state, NULL);
        for (const acc_message *m = a->messages; m != NULL; m = m->next)
            check_shadowing(ck, &names, m->fields, m);
    }
}

void acc_check(acc_ctx *cx, acc_module *mod)
{
    checker ck = { cx, mod, { NULL, 0, 0, NULL } };
    if (!mod->has_name)
        return;
    acc_map_init(&ck.actors, &cx->arena);
    for (acc_actor *a = mod->actors; a != NULL; a = a->next)
        acc_map_put(&ck.actors, a->name.s, a->name.len, a);

    check_module(&ck);
    for (acc_actor *a = mod->actors; a != NULL && !cx->stopped; a = a->next)
        check_actor(&ck, a);
    if (!mod->bad && !cx->stopped)
        check_generated_names(&ck);
}
