/* The execution trace (AC_TRACE, ac_config.trace_path): a small scripted
 * program runs traced, and the file it leaves is read back with the small
 * JSON reader below and checked against what the program did: every turn
 * is there and an actor's turns never overlap, one worker's slices never
 * overlap, every actor's spawn and death are there once, and each flow
 * runs from a send to a later turn of the actor it was sent to
 * (docs/RUNTIME.md, "Tracing"). */
#include "fixtures.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* ---- a small JSON reader ------------------------------------------------- */

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } jkind;

typedef struct jval {
    jkind kind;
    double num;
    char *str;             /* J_STR */
    struct jval *items;    /* J_ARR, J_OBJ (values) */
    char **keys;           /* J_OBJ */
    size_t n;
} jval;

typedef struct jin {
    const char *p;
    bool bad;
} jin;

static void jws(jin *in)
{
    while (isspace((unsigned char)*in->p))
        in->p++;
}

static char *jstring(jin *in)
{
    size_t cap = 16, n = 0;
    char *s = malloc(cap);
    cr_assert_not_null(s);
    in->p++;  /* the opening quote */
    while (*in->p && *in->p != '"') {
        char c = *in->p++;
        if (c == '\\') {
            c = *in->p++;
            if (c == 'u') {  /* only the control characters we escape */
                c = (char)strtol((char[]){in->p[0], in->p[1], in->p[2], in->p[3], 0}, NULL, 16);
                in->p += 4;
            } else if (c == 'n') {
                c = '\n';
            }
        }
        if (n + 2 > cap)
            cr_assert_not_null(s = realloc(s, cap *= 2));
        s[n++] = c;
    }
    if (*in->p != '"')
        in->bad = true;
    else
        in->p++;
    s[n] = '\0';
    return s;
}

static void jparse(jin *in, jval *v);

static void jpush(jval *v, jval val, char *key, size_t *cap)
{
    if (v->n == *cap) {
        *cap = *cap ? *cap * 2 : 8;
        cr_assert_not_null(v->items = realloc(v->items, *cap * sizeof *v->items));
        if (v->kind == J_OBJ)
            cr_assert_not_null(v->keys = realloc(v->keys, *cap * sizeof *v->keys));
    }
    if (v->kind == J_OBJ)
        v->keys[v->n] = key;
    v->items[v->n++] = val;
}

static void jcontainer(jin *in, jval *v, char close)
{
    size_t cap = 0;
    in->p++;
    jws(in);
    if (*in->p == close) {
        in->p++;
        return;
    }
    for (;;) {
        char *key = NULL;
        jws(in);
        if (v->kind == J_OBJ) {
            if (*in->p != '"') {
                in->bad = true;
                return;
            }
            key = jstring(in);
            jws(in);
            if (*in->p++ != ':') {
                in->bad = true;
                return;
            }
        }
        jval val;
        jparse(in, &val);
        jpush(v, val, key, &cap);
        if (in->bad)
            return;
        jws(in);
        if (*in->p == ',') {
            in->p++;
            continue;
        }
        if (*in->p++ != close)
            in->bad = true;
        return;
    }
}

static void jparse(jin *in, jval *v)
{
    memset(v, 0, sizeof *v);
    jws(in);
    char c = *in->p;
    if (c == '{') {
        v->kind = J_OBJ;
        jcontainer(in, v, '}');
    } else if (c == '[') {
        v->kind = J_ARR;
        jcontainer(in, v, ']');
    } else if (c == '"') {
        v->kind = J_STR;
        v->str = jstring(in);
    } else if (strncmp(in->p, "true", 4) == 0 || strncmp(in->p, "false", 5) == 0) {
        v->kind = J_BOOL;
        v->num = c == 't';
        in->p += c == 't' ? 4 : 5;
    } else if (strncmp(in->p, "null", 4) == 0) {
        in->p += 4;
    } else {
        char *end;
        v->kind = J_NUM;
        v->num = strtod(in->p, &end);
        if (end == in->p)
            in->bad = true;
        in->p = end;
    }
}

static void jfree(jval *v)
{
    for (size_t i = 0; i < v->n; i++) {
        jfree(&v->items[i]);
        if (v->kind == J_OBJ)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
}

static const jval *jget(const jval *o, const char *key)
{
    if (o == NULL || o->kind != J_OBJ)
        return NULL;
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->keys[i], key) == 0)
            return &o->items[i];
    return NULL;
}

static const char *jstr(const jval *o, const char *key)
{
    const jval *v = jget(o, key);
    return v && v->kind == J_STR ? v->str : "";
}

static double jnum(const jval *o, const char *key)
{
    const jval *v = jget(o, key);
    return v && v->kind == J_NUM ? v->num : -1;
}

/* ---- the trace, read back ------------------------------------------------ */

typedef struct ev {
    char ph;
    int tid;
    int64_t ts, dur;        /* ns */
    const char *name, *cat, *actor, *id;
    long messages;
} ev;

typedef struct trace {
    jval root;
    ev *ev;
    size_t n;
    double dropped;
    int names[64];          /* tids that have a thread_name */
    size_t nnames;
} trace;

/* µs, printed to the ns, back to ns (no libm in this suite). */
static int64_t to_ns(double us)
{
    return (int64_t)(us * 1000 + (us < 0 ? -0.5 : 0.5));
}

static void read_trace(const char *path, trace *t)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "no trace at %s", path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    char *text = malloc((size_t)size + 1);
    cr_assert_not_null(text);
    cr_assert_eq(fread(text, 1, (size_t)size, f), (size_t)size);
    text[size] = '\0';
    fclose(f);
    jin in = {text, false};
    memset(t, 0, sizeof *t);
    jparse(&in, &t->root);
    jws(&in);
    cr_assert(!in.bad && *in.p == '\0', "the trace is not JSON (at byte %td)", in.p - text);
    const jval *evs = jget(&t->root, "traceEvents");
    cr_assert(evs && evs->kind == J_ARR);
    t->dropped = jnum(jget(&t->root, "otherData"), "dropped_events");
    t->ev = calloc(evs->n, sizeof *t->ev);
    for (size_t i = 0; i < evs->n; i++) {
        const jval *o = &evs->items[i];
        const char *ph = jstr(o, "ph");
        cr_assert(strlen(ph) == 1);
        if (ph[0] == 'M') {
            if (strcmp(jstr(o, "name"), "thread_name") == 0 && t->nnames < 64)
                t->names[t->nnames++] = (int)jnum(o, "tid");
            continue;
        }
        ev *e = &t->ev[t->n++];
        e->ph = ph[0];
        e->tid = (int)jnum(o, "tid");
        e->ts = to_ns(jnum(o, "ts"));
        e->dur = jget(o, "dur") ? to_ns(jnum(o, "dur")) : 0;
        e->name = jstr(o, "name");
        e->cat = jstr(o, "cat");
        e->id = jstr(o, "id");
        const jval *args = jget(o, "args");
        e->actor = jstr(args, "actor");
        e->messages = (long)jnum(args, "messages");
        cr_assert_geq(e->ts, 0);
        if (e->ph == 'f')
            cr_assert_str_eq(jstr(o, "bp"), "e", "a flow ends in the slice around it");
    }
    free(text);
}

static void free_trace(trace *t)
{
    jfree(&t->root);
    free(t->ev);
}

static void short_addr(const ac_addr *a, char out[9])
{
    snprintf(out, 9, "%02x%02x%02x%02x", a->bytes[0], a->bytes[1], a->bytes[2], a->bytes[3]);
}

/* The turn slice on `tid` around `ts`, or NULL. */
static const ev *slice_at(const trace *t, int tid, int64_t ts)
{
    for (size_t i = 0; i < t->n; i++) {
        const ev *e = &t->ev[i];
        if (e->ph == 'X' && e->tid == tid && strcmp(e->cat, "turn") == 0 && e->ts <= ts &&
            ts <= e->ts + e->dur)
            return e;
    }
    return NULL;
}

static int by_ts(const void *a, const void *b)
{
    const ev *x = *(const ev *const *)a, *y = *(const ev *const *)b;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* Slices of one track (a tid) or of one actor, in time order, never
 * overlap: `tid` >= 0 selects a track, else `actor` one actor's turns. */
static size_t assert_no_overlap(const trace *t, int tid, const char *actor)
{
    const ev **s = calloc(t->n, sizeof *s);
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++) {
        const ev *e = &t->ev[i];
        if (e->ph == 'X' && (tid >= 0 ? e->tid == tid : strcmp(e->actor, actor) == 0))
            s[n++] = e;
    }
    qsort(s, n, sizeof *s, by_ts);
    for (size_t i = 1; i < n; i++)
        cr_assert_leq(s[i - 1]->ts + s[i - 1]->dur, s[i]->ts,
                      "slices overlap on %s %d/%s: %s at %lld+%lld, %s at %lld", tid >= 0 ? "tid" : "actor",
                      tid, actor ? actor : "", s[i - 1]->name, (long long)s[i - 1]->ts,
                      (long long)s[i - 1]->dur, s[i]->name, (long long)s[i]->ts);
    free(s);
    return n;
}

/* ---- the scripted program ------------------------------------------------ */

/* Hop: forwards each token to the next hop; the last one keeps it. A
 * token of HOP_FAIL fails the hop that gets it. */
enum { HOP_TOKEN = 0, HOP_FAIL = 1 };

typedef struct hop {
    ac_addr next;
    bool has_next;
} hop;

static _Atomic uint64_t g_kept;

static int hop_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    hop *self = state;
    switch (e->tag) {
    case HOP_TOKEN:
        if (!self->has_next) {
            atomic_fetch_add(&g_kept, 1);
            return 0;
        }
        return ac_send(cx, &self->next, ac_envelope_new(cx, HOP_TOKEN, 0));
    case HOP_FAIL:
        return 7;
    }
    return AC_EBADTAG;
}

static int hop_start(void *state, ac_ctx *cx, const void *args)
{
    (void)cx;
    hop *self = state;
    if (args != NULL) {
        self->next = *(const ac_addr *)args;
        self->has_next = true;
    }
    return 0;
}

static const char *const hop_names[] = {"token", "fail"};
static const ac_actor_type hop_type = {
    .abi = AC_ABI_VERSION,
    .name = "trace.Hop",
    .state_size = sizeof(hop),
    .state_align = _Alignof(hop),
    .dispatch = hop_dispatch,
    .on_start = hop_start,
    .message_count = 2,
    .message_names = hop_names,
};

#define HOPS 4
#define TOKENS 50

typedef struct script {
    ac_addr hops[HOPS];     /* hops[0] -> hops[1] -> ... */
    ac_addr failer;
} script;

/* Runs the program on a traced runtime and leaves its trace at `path`. */
static void run_script(int workers, uint32_t events, const char *path, script *s)
{
    ac_config cfg;
    ac_config_init(&cfg);
    cfg.workers = workers;
    cfg.trace_path = path;
    cfg.trace_events = events;
    cfg.trace_flow_every = 1;
    ac_runtime *rt = NULL;
    cr_assert_eq(ac_runtime_create(&rt, &cfg), 0);
    ac_runtime_set_failure_hook(rt, ac_failure_quiet, NULL);
    ac_ctx *cx = ac_runtime_ctx(rt);
    atomic_store(&g_kept, 0);
    cr_assert_eq(ac_spawn(cx, &hop_type, NULL, &s->hops[HOPS - 1]), 0);
    for (int i = HOPS - 2; i >= 0; i--)
        cr_assert_eq(ac_spawn(cx, &hop_type, &s->hops[i + 1], &s->hops[i]), 0);
    cr_assert_eq(ac_spawn(cx, &hop_type, NULL, &s->failer), 0);
    for (int i = 0; i < TOKENS; i++)
        cr_assert_eq(ac_send(cx, &s->hops[0], ac_envelope_new(cx, HOP_TOKEN, 0)), 0);
    cr_assert_eq(ac_send(cx, &s->failer, ac_envelope_new(cx, HOP_FAIL, 0)), 0);
    cr_assert_eq(ac_runtime_run(rt), 0);
    cr_assert_eq(atomic_load(&g_kept), TOKENS);
    cr_assert_eq(ac_runtime_destroy(rt), 0);
}

static void temp_path(char *buf, size_t n)
{
    snprintf(buf, n, "/tmp/actorc-trace-%d-XXXXXX", (int)getpid());
    int fd = mkstemp(buf);
    cr_assert_geq(fd, 0);
    close(fd);
}

/* The actor whose turn holds a flow's end or start, or "" on a thread's
 * track that runs no turns. */
static const char *actor_at(const trace *t, const ev *e)
{
    const ev *s = slice_at(t, e->tid, e->ts);
    return s ? s->actor : "";
}

static void check_script(int workers)
{
    char path[64];
    temp_path(path, sizeof path);
    script s;
    run_script(workers, 0, path, &s);
    trace t;
    read_trace(path, &t);
    unlink(path);
    cr_assert_eq(t.dropped, 0);

    /* Every track that has events is named, and its slices are apart. */
    for (size_t i = 0; i < t.n; i++) {
        bool named = false;
        for (size_t j = 0; j < t.nnames; j++)
            named |= t.names[j] == t.ev[i].tid;
        cr_assert(named, "tid %d has no thread_name", t.ev[i].tid);
    }
    for (size_t j = 0; j < t.nnames; j++)
        (void)assert_no_overlap(&t, t.names[j], NULL);

    char hops[HOPS][9], failer[9];
    for (int i = 0; i < HOPS; i++)
        short_addr(&s.hops[i], hops[i]);
    short_addr(&s.failer, failer);

    /* Every turn is there: a hop handles its tokens, the stop shutdown
     * sends it and its finalize envelope; the failer its fail and its
     * finalize. One actor's turns never overlap, on any worker. */
    for (int i = 0; i <= HOPS; i++) {
        const char *who = i < HOPS ? hops[i] : failer;
        long want = i < HOPS ? TOKENS + 2 : 2;
        long messages = 0;
        int64_t first = INT64_MAX, last_end = 0;
        for (size_t k = 0; k < t.n; k++) {
            const ev *e = &t.ev[k];
            if (e->ph != 'X' || strcmp(e->actor, who) != 0)
                continue;
            cr_assert_str_eq(e->name, "trace.Hop");
            cr_assert_gt(e->messages, 0, "a turn handles something");
            messages += e->messages;
            if (e->ts < first)
                first = e->ts;
            if (e->ts + e->dur > last_end)
                last_end = e->ts + e->dur;
        }
        cr_assert_eq(messages, want, "actor %s: %ld messages in its turns, not %ld", who,
                     messages, want);
        cr_assert_gt(assert_no_overlap(&t, -1, who), 0);
        /* One spawn before its first turn, one death inside its turns. */
        int spawns = 0, deaths = 0;
        for (size_t k = 0; k < t.n; k++) {
            const ev *e = &t.ev[k];
            if (e->ph != 'i' || strcmp(e->actor, who) != 0)
                continue;
            if (strcmp(e->name, "spawn trace.Hop") == 0) {
                spawns++;
                cr_assert_leq(e->ts, first);
            } else {
                deaths++;
                cr_assert_str_eq(e->name, i < HOPS ? "stop trace.Hop" : "fail trace.Hop");
                cr_assert_str_eq(actor_at(&t, e), who, "a death happens in its own turn");
                cr_assert_leq(e->ts, last_end);
            }
        }
        cr_assert_eq(spawns, 1, "actor %s spawned %d times", who, spawns);
        cr_assert_eq(deaths, 1, "actor %s died %d times", who, deaths);
    }

    /* Flows: each end is in a turn of the actor the message went to, after
     * its start, which is in a turn of the hop before or on a thread's
     * track (main's sends). Ids are envelope addresses, reused once a
     * flow has ended: per id, starts and ends alternate in time. */
    const ev **flows = calloc(t.n, sizeof *flows);
    size_t nf = 0;
    for (size_t k = 0; k < t.n; k++)
        if (t.ev[k].ph == 's' || t.ev[k].ph == 'f')
            flows[nf++] = &t.ev[k];
    qsort(flows, nf, sizeof *flows, by_ts);
    long ends_at_hops = 0;
    for (size_t k = 0; k < nf; k++) {
        const ev *f = flows[k];
        if (f->ph != 'f')
            continue;
        const ev *start = NULL;
        for (size_t j = k; j-- > 0;) {
            if (strcmp(flows[j]->id, f->id) == 0) {
                start = flows[j];
                break;
            }
        }
        cr_assert(start && start->ph == 's', "flow %s ends without a start before it", f->id);
        cr_assert_leq(start->ts, f->ts);
        const char *to = actor_at(&t, f);
        cr_assert_neq(*to, '\0', "a flow ends in a turn");
        for (int i = 1; i < HOPS; i++) {
            if (strcmp(to, hops[i]) == 0) {
                ends_at_hops++;
                const char *from = actor_at(&t, start);
                cr_assert(strcmp(from, hops[i - 1]) == 0 || *from == '\0',
                          "a message to hop %d came from %s", i, from);
            }
        }
    }
    /* Every token from one hop to the next, at least. */
    cr_assert_geq(ends_at_hops, (HOPS - 1) * TOKENS);
    free(flows);
    free_trace(&t);
}

Test(trace, deterministic_program_matches_its_trace)
{
    check_script(0);
}

Test(trace, two_workers_program_matches_its_trace)
{
    check_script(2);
}

/* A ring smaller than the program's events keeps the last ones and says
 * how many it dropped, per thread and in all. */
Test(trace, small_ring_counts_what_it_dropped)
{
    char path[64];
    temp_path(path, sizeof path);
    script s;
    run_script(0, 64, path, &s);
    trace t;
    read_trace(path, &t);
    unlink(path);
    cr_assert_gt(t.dropped, 0);
    const jval *evs = jget(&t.root, "traceEvents");
    double per_thread = 0;
    for (size_t i = 0; i < evs->n; i++)
        if (strcmp(jstr(&evs->items[i], "name"), "thread_name") == 0)
            per_thread += jnum(jget(&evs->items[i], "args"), "dropped");
    cr_assert_eq(per_thread, t.dropped);
    for (size_t j = 0; j < t.nnames; j++) {
        size_t on = 0;
        for (size_t i = 0; i < t.n; i++)
            on += t.ev[i].tid == t.names[j];
        cr_assert_leq(on, 64);
    }
    /* What it kept is the end: the last turns, the finalize ones. */
    cr_assert_gt(assert_no_overlap(&t, 1, NULL), 0);
    free_trace(&t);
}

/* Off, nothing is written; a bad size is refused. */
Test(trace, off_writes_nothing_and_sizes_are_checked)
{
    ac_config cfg;
    ac_config_init(&cfg);
    cfg.workers = 0;
    cfg.trace_events = (1u << 24) + 1;
    cfg.trace_path = "/nonexistent/x.json";
    ac_runtime *rt = NULL;
    cr_assert_eq(ac_runtime_create(&rt, &cfg), AC_EINVAL);
    cfg.trace_path = NULL;
    cfg.trace_events = 0;
    cr_assert_eq(ac_runtime_create(&rt, &cfg), 0);
    cr_assert_eq(ac_runtime_destroy(rt), 0);
}
