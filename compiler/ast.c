/*
 * ast.c — the AST: the constructors the grammar actions call (with the
 * checks that need only the tokens at hand: duplicate hooks and state
 * blocks, the mailbox options, a reply on a hook), and the walk over the
 * module graph that the loader builds and the later passes follow.
 */
#include <string.h>

#include "acc.h"

/* ---- the module graph --------------------------------------------------------- */

/* Post-order, depth first, iterative: the path is in the modules
 * (walk_up), so that a long chain of imports is no deep recursion. */
static void walk(acc_module *m, uint32_t gen,
                 void (*fn)(acc_module *, void *), void *arg)
{
    if (m == NULL || m->mark == gen)
        return;
    m->mark = gen;
    m->walk_up = NULL;
    m->walk_at = m->imports;
    while (m != NULL) {
        acc_import *im = m->walk_at;
        if (im == NULL) {
            acc_module *up = m->walk_up;
            fn(m, arg);
            m = up;
            continue;
        }
        m->walk_at = im->next;
        acc_module *next = im->mod;
        if (next != NULL && next->mark != gen) {
            next->mark = gen;
            next->walk_up = m;
            next->walk_at = next->imports;
            m = next;
        }
    }
}

void acc_each_module(acc_ctx *cx, acc_module *m,
                     void (*fn)(acc_module *, void *), void *arg)
{
    walk(m, ++cx->mark_gen, fn, arg);
}

/* ---- constructors ------------------------------------------------------------ */

static acc_name name_of(const acc_token *t)
{
    acc_name n = { t->s, t->len, t->off };
    return n;
}

acc_actor *acc_ast_body(acc_parser *ps)
{
    return acc_alloc(&ps->cx->arena, sizeof(acc_actor));
}

/* The hooks, in the order of acc_actor's slots: start takes spawn's
 * arguments; stop, down and exit take none (down and exit get the
 * runtime's ac_down / ac_exit). */
static const char *const hooks[] = { "start", "stop", "down", "exit" };
enum { HOOKS = 4 };

static acc_message **hook_slot(acc_actor *a, int i)
{
    acc_message **slot[HOOKS] = { &a->start, &a->stop, &a->down, &a->exit };
    return slot[i];
}

static bool is_name(acc_name n, const char *s)
{
    return strlen(s) == n.len && memcmp(n.s, s, n.len) == 0;
}

static int hook_index(acc_name n)
{
    for (int i = 0; i < HOOKS; i++)
        if (is_name(n, hooks[i]))
            return i;
    return -1;
}

/* Makes `m` hook i of `a`, or reports why it cannot be. */
static void set_hook(acc_parser *ps, acc_actor *a, acc_message *m, int i)
{
    acc_message **hook = hook_slot(a, i);
    const acc_file *f = &ps->mod->file;
    acc_loc at = { m->name.off, m->name.len };
    if (*hook != NULL) {
        acc_error(ps->cx, f, at, "duplicate %s hook", hooks[i]);
        acc_note(ps->cx, f, (acc_loc){ (*hook)->name.off,
                                       (*hook)->name.len },
                 "the first %s hook is here", hooks[i]);
    } else if (i > 0 && m->fields != NULL) {
        acc_error(ps->cx, f, at, "the %s hook takes no fields%s",
                  hooks[i], i == 1 ? "" : i == 2
                                 ? " (it receives an ac_down)"
                                 : " (it receives an ac_exit)");
    } else {
        *hook = m;
    }
}

/* The old spelling of a hook, `on start(...)`, `on stop;`, `on down;`,
 * `on exit;`, in an actor that spells none with `hook`: what compiled
 * before keeps its meaning. What did not (a stop, down or exit with
 * fields, a hook with a reply) is a message now, so that `on exit(u32
 * n);` is the message it looks like. */
static bool old_hook(const acc_message *m, int i)
{
    return i >= 0 && !m->has_reply && (i == 0 || m->fields == NULL);
}

void acc_ast_actor(acc_parser *ps, acc_actor *a, const acc_token *kw,
                   const acc_token *name)
{
    acc_module *mod = ps->mod;
    a->name = name_of(name);
    a->doc = kw->doc;
    a->mod = mod;
    if (mod->actors_tail != NULL)
        mod->actors_tail->next = a;
    else
        mod->actors = a;
    mod->actors_tail = a;
    if (a->hook_spelled)
        return;
    /* Only now is it known whether the actor spells a hook with `hook`
     * (it may come after an `on stop;`): the old spellings become hooks
     * here, and the messages left are numbered again. */
    acc_message **link = &a->messages;
    a->messages_tail = NULL;
    a->message_count = 0;
    while (*link != NULL) {
        acc_message *m = *link;
        int i = hook_index(m->name);
        if (old_hook(m, i)) {
            *link = m->next;
            m->next = NULL;
            /* acc_ast_priority took it for a message; it is a hook. */
            if (m->urgent)
                acc_error(ps->cx, &mod->file, (acc_loc){ m->name.off, m->name.len },
                          "a hook has no priority (only messages can be urgent)");
            set_hook(ps, a, m, i);
            continue;
        }
        m->tag = a->message_count++;
        a->messages_tail = m;
        link = &m->next;
    }
}

/* `hook start(...);`, `hook stop;`, `hook down;`, `hook exit;`: the
 * spelling that cannot be taken for a message. */
void acc_ast_hook(acc_parser *ps, acc_actor *a, const acc_token *kw,
                  const acc_token *name, acc_field *fields)
{
    acc_message *m = acc_alloc(&ps->cx->arena, sizeof(*m));
    m->name = name_of(name);
    m->doc = kw->doc;
    m->fields = fields;
    m->has_parens = fields != NULL;
    m->actor = a;
    a->hook_spelled = true;
    int i = hook_index(m->name);
    if (i >= 0) {
        set_hook(ps, a, m, i);
        return;
    }
    const char *best = NULL;
    size_t best_d = 3;
    for (int h = 0; h < HOOKS; h++) {
        size_t d = acc_edit_distance(name->s, name->len, hooks[h],
                                     strlen(hooks[h]), 2);
        /* Two edits in a name of four letters would suggest anything. */
        if (d < best_d && 2 * d < name->len) {
            best_d = d;
            best = hooks[h];
        }
    }
    acc_loc at = { name->off, name->len };
    if (best != NULL)
        acc_error(ps->cx, &ps->mod->file, at, "unknown hook '%.*s'; did "
                  "you mean '%s'?", (int)name->len, name->s, best);
    else
        acc_error(ps->cx, &ps->mod->file, at, "unknown hook '%.*s' (the "
                  "hooks are start, stop, down and exit; a message is "
                  "declared with 'on')", (int)name->len, name->s);
}

void acc_ast_state(acc_parser *ps, acc_actor *a, const acc_token *kw,
                   acc_field *fields)
{
    acc_loc at = { kw->off, kw->len };
    if (a->state_seen) {
        acc_error(ps->cx, &ps->mod->file, at, "duplicate state block");
        acc_note(ps->cx, &ps->mod->file, a->state_at,
                 "the first state block is here");
        return;
    }
    a->state_seen = true;
    a->state_at = at;
    a->state = fields;
}

static bool is_tok(const acc_token *t, const char *s)
{
    return is_name(name_of(t), s);
}

/* A message, also when it is named like a hook: acc_ast_actor decides,
 * at the actor's end, whether it is the old spelling of one. */
void acc_ast_message(acc_parser *ps, acc_actor *a, const acc_token *kw,
                     const acc_token *name, acc_field *fields, bool parens)
{
    acc_message *m = acc_alloc(&ps->cx->arena, sizeof(*m));
    m->name = name_of(name);
    m->doc = kw->doc;
    m->fields = fields;
    m->has_parens = parens;
    m->actor = a;
    m->tag = a->message_count++;
    if (a->messages_tail != NULL)
        a->messages_tail->next = m;
    else
        a->messages = m;
    a->messages_tail = m;
}

/* The policies of a full mailbox, by their value in ac_overflow. */
static const char *const policies[] = { "reject", "drop_newest", "drop_oldest" };

/* The bound is a u32 (ac_actor_type.mailbox_bound) and 0 means unbounded,
 * so 1..UINT32_MAX; the policy one of ac_overflow's, reject by default. */
void acc_ast_mailbox(acc_parser *ps, acc_actor *a, const acc_token *kw,
                     const acc_int_tok *bound, const acc_token *policy)
{
    acc_ctx *cx = ps->cx;
    const acc_file *f = &ps->mod->file;
    acc_loc at = { kw->off, kw->len };
    acc_loc num = { bound->first.off,
                    bound->tok.off + bound->tok.len - bound->first.off };
    const char *sign = bound->neg ? "-" : "";
    int n = (int)bound->tok.len;
    uint64_t v;
    bool overflow;
    if (a->mailbox_at.len != 0) {
        acc_error(cx, f, at, "duplicate mailbox options");
        acc_note(cx, f, a->mailbox_at, "the first mailbox options are here");
        return;
    }
    a->mailbox_at = at;
    if (!acc_parse_int(bound->tok.s, bound->tok.len, &v, &overflow))
        acc_error(cx, f, (acc_loc){ bound->tok.off, bound->tok.len },
                  "invalid integer literal '%.*s'", n, bound->tok.s);
    else if (!overflow && (v == 0 || bound->neg))
        acc_error(cx, f, num, "mailbox bound must be positive, not %s%.*s",
                  v != 0 ? sign : "", n, bound->tok.s);
    else if (overflow || v > UINT32_MAX)
        acc_error(cx, f, num, "mailbox bound %s%.*s is out of range "
                  "(1..4294967295)", sign, n, bound->tok.s);
    else
        a->mailbox_bound = (uint32_t)v;
    if (policy == NULL)
        return;
    for (int i = 0; i < 3; i++)
        if (is_tok(policy, policies[i])) {
            a->mailbox_overflow = i;
            return;
        }
    const char *best = policies[0];
    size_t best_d = (size_t)-1;
    for (int i = 0; i < 3; i++) {
        size_t d = acc_edit_distance(policy->s, policy->len, policies[i],
                                     strlen(policies[i]), 4);
        if (d < best_d) {
            best_d = d;
            best = policies[i];
        }
    }
    acc_loc pat = { policy->off, policy->len };
    if (best_d <= 4)
        acc_error(cx, f, pat, "unknown mailbox policy '%.*s'; did you mean "
                  "'%s'?", (int)policy->len, policy->s, best);
    else
        acc_error(cx, f, pat, "unknown mailbox policy '%.*s' (reject, "
                  "drop_newest or drop_oldest)", (int)policy->len, policy->s);
}

/* The reply of the message just added (acc_ast_message ran first). */
void acc_ast_reply(acc_actor *a, acc_field *fields)
{
    acc_message *m = a->messages_tail;
    m->has_reply = true;
    m->reply = fields;
}

/* The priority of the message just added, `on urgent x...;`: `urgent` is
 * the one there is (a word, not a keyword, like a mailbox policy: it
 * stays free as a name). */
void acc_ast_priority(acc_parser *ps, acc_actor *a,
                      const acc_token *priority)
{
    const acc_file *f = &ps->mod->file;
    acc_loc at = { priority->off, priority->len };
    if (!is_tok(priority, "urgent")) {
        size_t d = acc_edit_distance(priority->s, priority->len, "urgent", 6, 3);
        if (d <= 3)
            acc_error(ps->cx, f, at, "unknown message priority '%.*s'; did you "
                      "mean 'urgent'?", (int)priority->len, priority->s);
        else
            acc_error(ps->cx, f, at, "unknown message priority '%.*s' (the one "
                      "there is: 'urgent')", (int)priority->len, priority->s);
        return;
    }
    /* Always a message here: a hook is told apart only at the actor's
     * end (acc_ast_actor), which reports an urgent one. */
    a->messages_tail->urgent = true;
}

void acc_ast_field(acc_parser *ps, acc_field_list *list,
                   const acc_type_tok *type, const acc_token *name)
{
    acc_field *f = acc_alloc(&ps->cx->arena, sizeof(*f));
    f->name = name_of(name);
    f->type = type->type;
    f->doc = type->doc;
    if (list->tail != NULL)
        list->tail->next = f;
    else
        list->head = f;
    list->tail = f;
}

acc_type_tok acc_ast_type(acc_kind kind, const acc_token *first,
                          const acc_token *last, const acc_token *qual,
                          const acc_token *target)
{
    acc_type_tok t;
    memset(&t, 0, sizeof(t));
    t.type.kind = kind;
    t.type.at.off = first->off;
    t.type.at.len = last->off + last->len - first->off;
    if (qual != NULL) {
        t.type.qual.off = qual->off;
        t.type.qual.len = qual->len;
    }
    if (target != NULL)
        t.type.target = name_of(target);
    t.doc = first->doc;
    return t;
}

acc_type_tok acc_ast_array(acc_parser *ps, const acc_type_tok *elem,
                           const acc_token *last, const acc_int_tok *size)
{
    acc_type_tok t = *elem;
    acc_type *e = acc_alloc(&ps->cx->arena, sizeof(*e));
    *e = elem->type;
    memset(&t.type, 0, sizeof(t.type));
    t.type.kind = size != NULL ? ACC_ARRAY : ACC_SEQ;
    t.type.at.off = e->at.off;
    t.type.at.len = last->off + last->len - e->at.off;
    t.type.elem = e;
    if (size != NULL) {
        t.type.size_lit = name_of(&size->tok);
        /* size->first is the '-' when size->neg (acc_type_size_neg). */
        t.type.size_from = size->first.off;
    }
    return t;
}

void acc_ast_struct(acc_parser *ps, const acc_token *kw, const acc_token *name,
                    acc_field *fields)
{
    acc_decl *d = acc_alloc(&ps->cx->arena, sizeof(*d));
    d->kind = ACC_STRUCT;
    d->name = name_of(name);
    d->doc = kw->doc;
    d->fields = fields;
    d->mod = ps->mod;
    if (ps->mod->decls_tail != NULL)
        ps->mod->decls_tail->next = d;
    else
        ps->mod->decls = d;
    ps->mod->decls_tail = d;
}

void acc_ast_enum(acc_parser *ps, const acc_token *kw, const acc_token *name,
                  acc_enumerator *values)
{
    acc_ast_struct(ps, kw, name, NULL);
    ps->mod->decls_tail->kind = ACC_ENUM;
    ps->mod->decls_tail->values = values;
    for (acc_enumerator *v = values; v != NULL; v = v->next)
        v->decl = ps->mod->decls_tail;
}

void acc_ast_enumerator(acc_parser *ps, acc_enum_list *list,
                        const acc_token *name, const acc_int_tok *value)
{
    acc_enumerator *e = acc_alloc(&ps->cx->arena, sizeof(*e));
    e->name = name_of(name);
    e->doc = name->doc;
    if (value != NULL) {
        e->has_value = true;
        e->neg = value->neg;
        e->lit = name_of(&value->tok);
        e->lit_at.off = value->first.off;
        e->lit_at.len = value->tok.off + value->tok.len - value->first.off;
    }
    if (list->tail != NULL)
        list->tail->next = e;
    else
        list->head = e;
    list->tail = e;
}

void acc_ast_import(acc_parser *ps, const acc_token *kw, const acc_token *path)
{
    acc_import *im = acc_alloc(&ps->cx->arena, sizeof(*im));
    (void)kw;
    im->at.off = path->off;
    im->at.len = path->len;
    im->path = acc_strndup(&ps->cx->arena, path->s + 1, path->len - 2);
    if (ps->mod->imports_tail != NULL)
        ps->mod->imports_tail->next = im;
    else
        ps->mod->imports = im;
    ps->mod->imports_tail = im;
}

/* ---- behaviours ------------------------------------------------------------- */

/* `behaviour NAME { ... }`: numbered from 1 in declaration order (0 is the
 * default behaviour, the one outside every block). What its lines name is
 * resolved by check.c, once the actor's messages are all known. */
void acc_ast_behaviour(acc_parser *ps, acc_actor *a, const acc_token *kw,
                       const acc_token *name, acc_bitem *items)
{
    acc_behaviour *b = acc_alloc(&ps->cx->arena, sizeof(*b));
    b->name = name_of(name);
    b->doc = kw->doc;
    b->items = items;
    b->actor = a;
    b->index = ++a->behaviour_count;
    if (a->behaviours_tail != NULL)
        a->behaviours_tail->next = b;
    else
        a->behaviours = b;
    a->behaviours_tail = b;
}

void acc_ast_bitem(acc_parser *ps, acc_bitem_list *list,
                   const acc_token *name, bool postpone)
{
    acc_bitem *it = acc_alloc(&ps->cx->arena, sizeof(*it));
    it->name = name_of(name);
    it->postpone = postpone;
    if (list->tail != NULL)
        list->tail->next = it;
    else
        list->head = it;
    list->tail = it;
}

void acc_ast_bitems_join(acc_bitem_list *list, const acc_bitem_list *more)
{
    if (more->head == NULL)
        return;
    if (list->tail != NULL)
        list->tail->next = more->head;
    else
        list->head = more->head;
    list->tail = more->tail;
}
