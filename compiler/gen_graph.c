/*
 * gen_graph.c — generate NAME.actor.dot (actorc --graph): the actor system
 * of the main module and every module it imports, as a Graphviz digraph.
 *
 * Nodes are the actors: the main module's at the top level, each imported
 * module's in `subgraph cluster_<module>`. An edge A -> B says that A can
 * come to hold a ref<B>, so can send B its messages; the edge is labelled
 * with them. A holds a ref<B> when one is written, at any depth (inside
 * structs, arrays and sequences), in
 *
 *   1. A's state,
 *   2. A's start arguments (hook start),
 *   3. the fields of a message A handles (requests included), or
 *   4. the reply of a request of an actor A reaches: A asks it, and holds
 *      what the reply carries (followed on, so it is a closure).
 *
 * Untyped `addr` fields name no actor and draw nothing. B's one-way
 * messages make one solid edge; its requests a dashed one, each with its
 * reply's fields. Everything is sorted by name (modules, actors, edges),
 * not by declaration order, so that moving a declaration does not change
 * the picture and a test can compare it byte for byte.
 *
 * No walk recurses: each actor's reach is a worklist over structs and
 * actors, each taken once per actor (marks). The work is held to a budget
 * (GRAPH_MAX_STEPS fields looked at), since an input can make it grow as
 * actors times structs; past it the pass gives up and compile.c reports it.
 */
#include <stdlib.h>
#include <string.h>

#include "acc.h"

/* Fields looked at, over all actors, before the pass gives up: far past
 * any real system (a few hundred fields per actor), and well under a
 * second. */
#define GRAPH_MAX_STEPS ((size_t)1 << 24)

typedef struct node {
    const acc_actor *a;
    bool main;              /* of the main module: drawn outside clusters */
} node;

/* A pointer and its index in the sorted array, to find a node by its
 * actor (or a struct's mark) by binary search. */
typedef struct slot {
    const void *p;
    size_t i;
} slot;

typedef struct walk {
    acc_gen *g;
    node *nodes;
    size_t n_nodes;
    slot *actor_at, *decl_at;
    size_t n_decls;
    uint32_t *actor_mark, *decl_mark;   /* = gen: seen for this actor */
    uint32_t gen;
    /* The worklist: structs (tagged 0) and reached actors (1) still to
     * look into; each is pushed at most once per actor, so it holds at
     * most n_decls + n_nodes. */
    const void **todo;
    unsigned char *todo_kind;
    size_t n_todo;
    size_t *reached;        /* node indices reached by the actor */
    size_t n_reached;
    size_t steps;
} walk;

static int name_cmp(acc_name a, acc_name b)
{
    int c = memcmp(a.s, b.s, a.len < b.len ? a.len : b.len);
    return c != 0 ? c : (a.len > b.len) - (a.len < b.len);
}

/* Main module first, then modules by name (then by file, should two share
 * a name), then actors by name. */
static int node_cmp(const void *x, const void *y)
{
    const node *a = x, *b = y;
    if (a->main != b->main)
        return a->main ? -1 : 1;
    int c = name_cmp(a->a->mod->name, b->a->mod->name);
    if (c == 0 && a->a->mod != b->a->mod)
        c = strcmp(a->a->mod->file.filename, b->a->mod->file.filename);
    return c != 0 ? c : name_cmp(a->a->name, b->a->name);
}

static int slot_cmp(const void *x, const void *y)
{
    const slot *a = x, *b = y;
    return (a->p > b->p) - (a->p < b->p);
}

static int size_cmp(const void *x, const void *y)
{
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    return (a > b) - (a < b);
}

/* Every module is checked and whole by now, so every pointer looked up
 * is in its table. */
static size_t index_of(const slot *t, size_t n, const void *p)
{
    slot key = { p, 0 };
    const slot *s = bsearch(&key, t, n, sizeof(*t), slot_cmp);
    return s->i;
}

static void reach_actor(walk *w, const acc_actor *a)
{
    size_t i = index_of(w->actor_at, w->n_nodes, a);
    if (w->actor_mark[i] == w->gen)
        return;
    w->actor_mark[i] = w->gen;
    w->reached[w->n_reached++] = i;
    w->todo[w->n_todo] = a;
    w->todo_kind[w->n_todo++] = 1;
}

/* The refs in `fields`; the structs they hold go on the worklist. */
static void look_at(walk *w, const acc_field *fields)
{
    for (const acc_field *f = fields; f != NULL; f = f->next) {
        w->steps++;
        const acc_type *t = &f->type;
        while (t->kind == ACC_ARRAY || t->kind == ACC_SEQ)
            t = t->elem;
        if (t->kind == ACC_REF) {
            reach_actor(w, t->actor);
        } else if (t->kind == ACC_NAMED && t->decl->kind == ACC_STRUCT) {
            size_t i = index_of(w->decl_at, w->n_decls, t->decl);
            if (w->decl_mark[i] != w->gen) {
                w->decl_mark[i] = w->gen;
                w->todo[w->n_todo] = t->decl;
                w->todo_kind[w->n_todo++] = 0;
            }
        }
    }
}

/* Fills w->reached with what actor `a` (node gen - 1) can reach, sorted.
 * False past the budget. */
static bool reach_of(walk *w, const acc_actor *a)
{
    w->n_reached = w->n_todo = 0;
    look_at(w, a->state);
    if (a->start != NULL)
        look_at(w, a->start->fields);
    for (const acc_message *m = a->messages; m != NULL; m = m->next)
        look_at(w, m->fields);
    while (w->n_todo > 0) {
        if (w->steps > GRAPH_MAX_STEPS)
            return false;
        w->n_todo--;
        const void *p = w->todo[w->n_todo];
        if (w->todo_kind[w->n_todo] == 0) {
            look_at(w, ((const acc_decl *)p)->fields);
        } else {
            for (const acc_message *m = ((const acc_actor *)p)->messages;
                 m != NULL; m = m->next)
                if (m->has_reply)
                    look_at(w, m->reply);
        }
    }
    qsort(w->reached, w->n_reached, sizeof(size_t), size_cmp);
    return w->steps <= GRAPH_MAX_STEPS;
}

static void put_id(acc_gen *g, const acc_actor *a)
{
    acc_buf_printf(g->out, "\"%.*s.%.*s\"", (int)a->mod->name.len,
                   a->mod->name.s, (int)a->name.len, a->name.s);
}

/* "name(f1, f2)", the message as the label shows it. */
static void put_fields(acc_gen *g, const acc_field *fields)
{
    acc_buf_putc(g->out, '(');
    for (const acc_field *f = fields; f != NULL; f = f->next)
        acc_buf_printf(g->out, "%s%.*s", f == fields ? "" : ", ",
                       (int)f->name.len, f->name.s);
    acc_buf_putc(g->out, ')');
}

/* One edge from -> to, labelled with to's requests (`requests`) or its
 * one-way messages, one a line (left-justified: "\l" ends each); none
 * drawn when there are none of that kind, unless `always`. */
static void put_edge(acc_gen *g, const acc_actor *from, const acc_actor *to,
                     bool requests, bool always)
{
    size_t n = 0;
    for (const acc_message *m = to->messages; m != NULL; m = m->next)
        n += m->has_reply == requests;
    if (n == 0 && !always)
        return;
    acc_buf_puts(g->out, "    ");
    put_id(g, from);
    acc_buf_puts(g->out, " -> ");
    put_id(g, to);
    if (n > 0) {
        acc_buf_puts(g->out, " [label=\"");
        for (const acc_message *m = to->messages; m != NULL; m = m->next) {
            if (m->has_reply != requests)
                continue;
            acc_buf_printf(g->out, "%s%.*s", m->urgent ? "urgent " : "",
                           (int)m->name.len, m->name.s);
            put_fields(g, m->fields);
            if (requests) {
                acc_buf_puts(g->out, " -> ");
                put_fields(g, m->reply);
            }
            acc_buf_puts(g->out, "\\l");
        }
        acc_buf_puts(g->out, requests ? "\", style=dashed]" : "\"]");
    }
    acc_buf_puts(g->out, ";\n");
}

static void put_node(acc_gen *g, const acc_actor *a, const char *indent)
{
    acc_buf_puts(g->out, indent);
    put_id(g, a);
    acc_buf_printf(g->out, " [label=\"%.*s\"];\n", (int)a->name.len,
                   a->name.s);
}

bool acc_gen_graph(acc_gen *g, const acc_graph *graph)
{
    acc_arena *ar = &g->cx->arena;
    walk w = { .g = g };
    for (const acc_module *m = graph->first; m != NULL; m = m->next_in_order) {
        for (const acc_actor *a = m->actors; a != NULL; a = a->next)
            w.n_nodes++;
        for (const acc_decl *d = m->decls; d != NULL; d = d->next)
            w.n_decls += d->kind == ACC_STRUCT;
    }
    /* +1: no zero-sized allocations, and never NULL for bsearch. */
    w.nodes = acc_alloc(ar, (w.n_nodes + 1) * sizeof(node));
    w.actor_at = acc_alloc(ar, (w.n_nodes + 1) * sizeof(slot));
    w.decl_at = acc_alloc(ar, (w.n_decls + 1) * sizeof(slot));
    w.actor_mark = acc_alloc(ar, (w.n_nodes + 1) * sizeof(uint32_t));
    w.decl_mark = acc_alloc(ar, (w.n_decls + 1) * sizeof(uint32_t));
    w.reached = acc_alloc(ar, (w.n_nodes + 1) * sizeof(size_t));
    size_t todo_cap = w.n_nodes + w.n_decls + 1;
    w.todo = acc_alloc(ar, todo_cap * sizeof(void *));
    w.todo_kind = acc_alloc(ar, todo_cap);

    size_t n = 0, k = 0;
    for (const acc_module *m = graph->first; m != NULL; m = m->next_in_order) {
        for (const acc_actor *a = m->actors; a != NULL; a = a->next)
            w.nodes[n++] = (node){ a, m == graph->main };
        for (const acc_decl *d = m->decls; d != NULL; d = d->next)
            if (d->kind == ACC_STRUCT) {
                w.decl_at[k] = (slot){ d, k };
                k++;
            }
    }
    qsort(w.nodes, w.n_nodes, sizeof(node), node_cmp);
    for (size_t i = 0; i < w.n_nodes; i++)
        w.actor_at[i] = (slot){ w.nodes[i].a, i };
    qsort(w.actor_at, w.n_nodes, sizeof(slot), slot_cmp);
    qsort(w.decl_at, w.n_decls, sizeof(slot), slot_cmp);

    acc_gen_banner(g);
    const acc_name *mn = &graph->main->name;
    acc_buf_printf(g->out, "digraph \"%.*s\" {\n", (int)mn->len, mn->s);
    acc_buf_puts(g->out,
                 "    graph [rankdir=LR];\n"
                 "    node [shape=box, style=rounded];\n"
                 "    edge [fontsize=10];\n");
    for (size_t i = 0; i < w.n_nodes;) {
        if (w.nodes[i].main) {
            put_node(g, w.nodes[i++].a, "    ");
            continue;
        }
        const acc_module *m = w.nodes[i].a->mod;
        acc_buf_printf(g->out, "    subgraph cluster_%.*s {\n"
                       "        label=\"%.*s\";\n", (int)m->name.len,
                       m->name.s, (int)m->name.len, m->name.s);
        for (; i < w.n_nodes && w.nodes[i].a->mod == m; i++)
            put_node(g, w.nodes[i].a, "        ");
        acc_buf_puts(g->out, "    }\n");
    }
    for (size_t i = 0; i < w.n_nodes; i++) {
        const acc_actor *a = w.nodes[i].a;
        w.gen = (uint32_t)i + 1;
        if (!reach_of(&w, a))
            return false;
        for (size_t r = 0; r < w.n_reached; r++) {
            const acc_actor *b = w.nodes[w.reached[r]].a;
            bool any = b->messages != NULL;
            put_edge(g, a, b, false, !any);
            put_edge(g, a, b, true, false);
        }
    }
    acc_buf_puts(g->out, "}\n");
    return true;
}
