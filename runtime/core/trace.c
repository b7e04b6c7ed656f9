/*
 * trace.c — the execution trace: per context, a ring of fixed-size events
 * that only the context's own thread writes, so recording one is a few
 * stores and no lock or atomic; the ring keeps the last `trace_events`
 * and counts what it overwrote. ac_runtime_destroy writes all the rings
 * as Chrome trace-event JSON (the format ui.perfetto.dev and
 * chrome://tracing open) once every worker has stopped, so nothing writes
 * a ring while it is read. Design notes: runtime/README.md, "Watching
 * turns"; what the file holds: docs/RUNTIME.md, "Tracing".
 */
#include "trace.h"

#include "runtime.h"
#include "sched.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* One event: 40 bytes, so a ring of the default 65,536 is 2.5 MiB. */
typedef struct ac__tev {
    uint64_t ts;            /* ns, ac__now_ns */
    uint64_t val;           /* a slice's duration (ns), a flow's id */
    const ac_actor_type *type;
    uint32_t addr;          /* ac__addr_short */
    uint32_t arg;           /* messages, exit code, victim */
    uint32_t kind;          /* AC__EV_* */
    uint32_t unused;
} ac__tev;

struct ac__trace_ring {
    uint64_t written;       /* events ever recorded: the next goes at
                               written % cap */
    uint32_t cap;
    ac__tev ev[];
};

void ac__trace_ctx_init(ac_ctx *cx)
{
    cx->trace = NULL;
    if (!(cx->observe & AC__OBS_TRACE))
        return;
    uint32_t cap = cx->rt->trace_events;
    ac__trace_ring *r = malloc(sizeof *r + (size_t)cap * sizeof r->ev[0]);
    if (r == NULL) {
        cx->observe &= ~AC__OBS_TRACE;  /* this thread goes untraced */
        return;
    }
    r->written = 0;
    r->cap = cap;
    cx->trace = r;
}

void ac__trace_ctx_fini(ac_ctx *cx)
{
    free(cx->trace);
    cx->trace = NULL;
}

void ac__trace_event(ac_ctx *cx, unsigned kind, uint64_t ts, uint64_t val,
                     const ac_actor_type *type, uint32_t addr, uint32_t arg)
{
    ac__trace_ring *r = cx->trace;
    if (r == NULL)
        return;
    ac__tev *ev = &r->ev[r->written++ % r->cap];
    ev->ts = ts;
    ev->val = val;
    ev->type = type;
    ev->addr = addr;
    ev->arg = arg;
    ev->kind = kind;
}

void ac__trace_send(ac_ctx *cx, ac__env *e)
{
    /* A count per sending thread, not a random draw: cheap, and the same
     * program samples the same sends. */
    if (++cx->flow_tick < cx->rt->trace_flow_every)
        return;
    cx->flow_tick = 0;
    e->flags |= AC__ENV_FLOW;
    ac__trace_event(cx, AC__EV_SEND, ac__now_ns(), (uint64_t)(uintptr_t)e, NULL, 0, 0);
}

/* ---- the file ------------------------------------------------------------ */

static void put_name(FILE *f, const ac_actor_type *type)
{
    const char *s = type && type->name ? type->name : "?";
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
}

/* µs since the runtime was created, to the ns: the format's unit. */
static void put_ts(FILE *f, const char *key, uint64_t ns)
{
    fprintf(f, "\"%s\":%" PRIu64 ".%03u", key, ns / 1000, (unsigned)(ns % 1000));
}

static void put_event(FILE *f, const ac__tev *ev, unsigned tid, uint64_t t0, bool *first)
{
    static const char *const death[] = {"stop", "fail", "kill"};
    uint64_t ts = ev->ts >= t0 ? ev->ts - t0 : 0;
    fputs(*first ? "\n" : ",\n", f);
    *first = false;
    fprintf(f, "{\"pid\":1,\"tid\":%u,", tid);
    put_ts(f, "ts", ts);
    switch (ev->kind) {
    case AC__EV_TURN:
        fputs(",\"ph\":\"X\",", f);
        put_ts(f, "dur", ev->val);
        fputs(",\"cat\":\"turn\",\"name\":\"", f);
        put_name(f, ev->type);
        fprintf(f, "\",\"args\":{\"actor\":\"%08" PRIx32 "\",\"messages\":%" PRIu32 "}}",
                ev->addr, ev->arg);
        break;
    case AC__EV_PARK:
        fputs(",\"ph\":\"X\",", f);
        put_ts(f, "dur", ev->val);
        fputs(",\"cat\":\"sched\",\"name\":\"park\"}", f);
        break;
    case AC__EV_SPAWN:
        fputs(",\"ph\":\"i\",\"s\":\"t\",\"cat\":\"life\",\"name\":\"spawn ", f);
        put_name(f, ev->type);
        fprintf(f, "\",\"args\":{\"actor\":\"%08" PRIx32 "\"}}", ev->addr);
        break;
    case AC__EV_STOP:
    case AC__EV_FAIL:
    case AC__EV_KILL:
        fprintf(f, ",\"ph\":\"i\",\"s\":\"t\",\"cat\":\"life\",\"name\":\"%s ",
                death[ev->kind - AC__EV_STOP]);
        put_name(f, ev->type);
        fprintf(f, "\",\"args\":{\"actor\":\"%08" PRIx32 "\",\"code\":%" PRId32 "}}", ev->addr,
                (int32_t)ev->arg);
        break;
    case AC__EV_STEAL:
        fputs(",\"ph\":\"i\",\"s\":\"t\",\"cat\":\"sched\",\"name\":\"steal\",", f);
        fprintf(f, "\"args\":{\"from\":%" PRIu32 "}}", ev->arg + 1);
        break;
    case AC__EV_SEND:
        /* Bound to the slice around it: the sender's turn. */
        fprintf(f, ",\"ph\":\"s\",\"cat\":\"flow\",\"name\":\"send\",\"id\":\"0x%" PRIx64 "\"}",
                ev->val);
        break;
    default: /* AC__EV_RECV: "e", the enclosing slice, the receiver's turn */
        fprintf(f, ",\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"flow\",\"name\":\"send\","
                   "\"id\":\"0x%" PRIx64 "\"}", ev->val);
        break;
    }
}

/* One thread's track: its name, then its events, oldest first. */
static uint64_t put_ring(FILE *f, const ac__trace_ring *r, unsigned tid, const char *name,
                         uint64_t t0, bool *first)
{
    if (r == NULL)
        return 0;
    uint64_t dropped = r->written > r->cap ? r->written - r->cap : 0;
    fprintf(f, "%s{\"ph\":\"M\",\"pid\":1,\"tid\":%u,\"name\":\"thread_name\","
               "\"args\":{\"name\":\"%s\",\"dropped\":%" PRIu64 "}}",
            *first ? "\n" : ",\n", tid, name, dropped);
    *first = false;
    for (uint64_t i = dropped; i < r->written; i++)
        put_event(f, &r->ev[i % r->cap], tid, t0, first);
    return dropped;
}

int ac__trace_write(ac_runtime *rt)
{
    if (rt->trace_path == NULL)
        return 0;
    FILE *f = fopen(rt->trace_path, "w");
    if (f == NULL)
        return AC_EINVAL;
    bool first = true;
    uint64_t dropped = 0;
    fputs("{\"traceEvents\":[", f);
    fputs("\n{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"actorc\"}}",
          f);
    first = false;
    char name[32];
    /* tid 0 is nobody's in some viewers: workers are 1..n. */
    for (unsigned i = 0; i < rt->nslots; i++) {
        snprintf(name, sizeof name, rt->nworkers ? "worker %u" : "deterministic %u", i);
        dropped += put_ring(f, rt->workers[i].cx.trace, i + 1, name, rt->trace_t0, &first);
    }
    unsigned k = 0;
    for (ac_ctx *e = rt->externals; e != NULL; e = e->next_external, k++) {
        snprintf(name, sizeof name, "thread %u", k);
        dropped += put_ring(f, e->trace, 1000 + k, name, rt->trace_t0, &first);
    }
    fprintf(f, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"dropped_events\":%" PRIu64
               ",\"events_per_thread\":%" PRIu32 ",\"flow_every\":%" PRIu32 "}}\n",
            dropped, rt->trace_events, rt->trace_flow_every);
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad)
        return AC_EINVAL;
    return 0;
}
