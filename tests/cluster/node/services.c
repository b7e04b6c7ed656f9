/*
 * services.c — the cluster suite's commands for the services across nodes
 * (docs/NODES.md, "Asks, monitors, links, names and groups across nodes"),
 * run by clusternode.c's command loop. Oracles answer; Watchers ask,
 * monitor and link to Oracles of other nodes and keep what they saw in
 * their own state, which the commands read with an ask (`seen`): nothing
 * is shared between a handler and the main thread but messages.
 *
 *   oracle [NAME]              spawns an Oracle (registered as NAME):
 *                              o=INDEX addr=ADDR
 *   watcher [GROUP]            spawns a Watcher (a member of GROUP):
 *                              w=INDEX addr=ADDR
 *   ask W ADDR TEXT N          Watcher W asks the Oracle at ADDR from its
 *                              handler; waits for the continuation:
 *                              status= echo= twice=
 *   askwait ADDR TEXT N        the same from main (ask_wait): rc= echo= twice=
 *   whereis NODE NAME          ac_whereis_on from main: rc= addr=
 *   members GROUP              ac_group_members: n=
 *   publish GROUP SEQ          a note to every member: reached=
 *   watch W ADDR               Watcher W monitors the Oracle at ADDR
 *   bind W ADDR                Watcher W traps exits and links to it
 *   hold W ADDR MS             Watcher W asks it to hold, timeout MS
 *   farewell O ADDR COUNT      Oracle O sends COUNT notes to the Watcher at
 *                              ADDR, then stops
 *   seen W                     what Watcher W saw (its report)
 *
 * watch, bind and hold answer only once the Oracle has answered a question
 * the Watcher sent after them (a "sync"): it travels behind them on the
 * same link, in order, so by then the monitor, the link or the pending ask
 * is in place on the Oracle's node, and a test may kill that node at once.
 */
#include "clusternode.h"
#include "services.actor.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ORACLES 32
#define WATCHERS 32

static services_Oracle_ref oracles[ORACLES];
static size_t n_oracles;
static services_Watcher_ref watchers[WATCHERS];
static size_t n_watchers;

/* ---- Oracle ------------------------------------------------------------------------ */

int services_Oracle_on_question(services_Oracle *self, ac_ctx *cx,
                                const services_Oracle_question *m)
{
    self->asked++;
    return services_Oracle_reply_question(cx, &m->reply_to, m->text, 2 * m->n);
}

int services_Oracle_on_hold(services_Oracle *self, ac_ctx *cx, const services_Oracle_hold *m)
{
    /* No reply: the asker's timeout or this node's loss ends the ask. */
    (void)cx;
    (void)m;
    self->asked++;
    return 0;
}

int services_Oracle_on_farewell(services_Oracle *self, ac_ctx *cx,
                                const services_Oracle_farewell *m)
{
    (void)self;
    for (uint32_t i = 1; i <= m->count; i++) {
        int rc = services_Watcher_send_note(cx, m->watcher, i);
        if (rc != 0)
            return rc;  /* a failure, not a normal stop: the test sees it */
    }
    return ac_stop_self(cx);
}

/* ---- Watcher ----------------------------------------------------------------------- */

static int answered(void *state, ac_ctx *cx, int status,
                    const services_Oracle_question_reply *r, void *arg)
{
    (void)cx;
    (void)arg;
    services_Watcher *self = state;
    self->status = status;
    if (status == 0) {
        self->echo_len = r->echo.len < sizeof self->echo ? r->echo.len : sizeof self->echo;
        memcpy(self->echo, r->echo.data, self->echo_len);
        self->twice = r->twice;
    }
    self->answers++;
    return 0;
}

static int synced(void *state, ac_ctx *cx, int status, const services_Oracle_question_reply *r,
                  void *arg)
{
    (void)cx;
    (void)r;
    (void)arg;
    services_Watcher *self = state;
    if (status == 0)
        self->synced++;
    return 0;
}

/* The question behind a monitor, a link or a hold (see the top). */
static int sync_with(ac_ctx *cx, services_Oracle_ref oracle)
{
    return services_Oracle_ask_question(cx, oracle, ac_string_of("sync"), 0, ASK_MS, synced, NULL);
}

static int held(void *state, ac_ctx *cx, int status, const services_Oracle_hold_reply *r,
                void *arg)
{
    (void)cx;
    (void)r;
    (void)arg;
    services_Watcher *self = state;
    self->hold_at = now_us();
    self->hold_status = status;
    self->holds++;
    return 0;
}

int services_Watcher_on_ask(services_Watcher *self, ac_ctx *cx, const services_Watcher_ask *m)
{
    (void)self;
    return services_Oracle_ask_question(cx, m->oracle, m->text, m->n, ASK_MS, answered, NULL);
}

int services_Watcher_on_watch(services_Watcher *self, ac_ctx *cx, const services_Watcher_watch *m)
{
    (void)self;
    int rc = ac_monitor(cx, ac_self(cx), &m->oracle.addr, NULL);
    return rc != 0 ? rc : sync_with(cx, m->oracle);
}

int services_Watcher_on_bind(services_Watcher *self, ac_ctx *cx, const services_Watcher_bind *m)
{
    (void)self;
    int rc = ac_trap_exits(cx, true);
    if (rc == 0)
        rc = ac_link(cx, &m->oracle.addr);
    return rc != 0 ? rc : sync_with(cx, m->oracle);
}

int services_Watcher_on_hold(services_Watcher *self, ac_ctx *cx, const services_Watcher_hold *m)
{
    (void)self;
    int rc = services_Oracle_ask_hold(cx, m->oracle, 1, m->timeout_ms, held, NULL);
    return rc != 0 ? rc : sync_with(cx, m->oracle);
}

int services_Watcher_on_note(services_Watcher *self, ac_ctx *cx, const services_Watcher_note *m)
{
    (void)cx;
    if (self->downs > 0)
        self->after_down++;
    if (m->seq != self->last_note + 1)
        self->disorder++;
    self->last_note = m->seq;
    self->notes++;
    return 0;
}

int services_Watcher_on_down(services_Watcher *self, ac_ctx *cx, const ac_down *m)
{
    (void)cx;
    self->down_at = now_us();
    self->down_reason = m->reason;
    self->down_code = m->code;
    self->downs++;
    return 0;
}

int services_Watcher_on_exit(services_Watcher *self, ac_ctx *cx, const ac_exit *m)
{
    (void)cx;
    self->exit_at = now_us();
    self->exit_reason = m->reason;
    self->exit_code = m->code;
    self->exits++;
    return 0;
}

int services_Watcher_on_report(services_Watcher *self, ac_ctx *cx,
                               const services_Watcher_report *m)
{
    ac_string echo = {.data = (const char *)self->echo, .len = self->echo_len};
    return services_Watcher_reply_report(
        cx, &m->reply_to, self->answers, self->status, echo, self->twice, self->synced,
        self->holds, self->hold_status, self->hold_at, self->notes, self->last_note,
        self->disorder, self->after_down, self->downs, self->down_reason, self->down_code,
        self->down_at, self->exits, self->exit_reason, self->exit_code, self->exit_at);
}

/* ---- helpers ------------------------------------------------------------------------ */

static bool parse_index(const char *arg, size_t n, size_t *out)
{
    char *end;
    unsigned long i = strtoul(arg, &end, 10);
    if (*arg == '\0' || *end != '\0' || i >= n)
        return false;
    *out = i;
    return true;
}

/* What Watcher w saw, into *out (free it with ac_reply_free). */
static int seen_by(size_t w, services_Watcher_report_reply **out)
{
    return services_Watcher_ask_report_wait(main_ctx(), watchers[w], ASK_MS, out);
}

/* Waits up to ASK_MS for Watcher w's `synced` (or, with answers, its
 * `answers`) to pass `before`. */
static bool wait_past(size_t w, bool answers, uint32_t before, char *reply, size_t cap)
{
    for (uint64_t t0 = now_us();; usleep(1000)) {
        services_Watcher_report_reply *r = NULL;
        int rc = seen_by(w, &r);
        if (rc != 0) {
            snprintf(reply, cap, "report: %d", rc);
            return false;
        }
        uint32_t now = answers ? r->answers : r->synced;
        ac_reply_free(main_ctx(), r);
        if (now > before)
            return true;
        if (now_us() - t0 >= (uint64_t)ASK_MS * 1000u) {
            snprintf(reply, cap, "timeout: watcher %zu not answered in %d ms", w, ASK_MS);
            return false;
        }
    }
}

static int counter_of(size_t w, bool answers, uint32_t *out)
{
    services_Watcher_report_reply *r = NULL;
    int rc = seen_by(w, &r);
    if (rc == 0) {
        *out = answers ? r->answers : r->synced;
        ac_reply_free(main_ctx(), r);
    }
    return rc;
}

/* ---- the commands ---------------------------------------------------------------------- */

bool cmd_oracle(char **argv, int argc, char *reply, size_t cap)
{
    if (argc > 1 || n_oracles == ORACLES) {
        snprintf(reply, cap, "usage: oracle [NAME] (at most %d)", ORACLES);
        return false;
    }
    services_Oracle_ref o;
    int rc = services_Oracle_spawn(main_ctx(), &o);
    if (rc == 0 && argc == 1)
        rc = ac_register(main_ctx(), argv[0], &o.addr);
    if (rc != 0) {
        snprintf(reply, cap, "spawn: %d", rc);
        return false;
    }
    oracles[n_oracles] = o;
    char hex[2 * sizeof(ac_addr) + 1];
    snprintf(reply, cap, "o=%zu addr=%s", n_oracles++, ac_addr_format(&o.addr, hex, sizeof hex));
    return true;
}

bool cmd_watcher(char **argv, int argc, char *reply, size_t cap)
{
    if (argc > 1 || n_watchers == WATCHERS) {
        snprintf(reply, cap, "usage: watcher [GROUP] (at most %d)", WATCHERS);
        return false;
    }
    services_Watcher_ref w;
    int rc = services_Watcher_spawn(main_ctx(), &w);
    if (rc == 0 && argc == 1)
        rc = ac_group_join(main_ctx(), argv[0], &w.addr);
    if (rc != 0) {
        snprintf(reply, cap, "spawn: %d", rc);
        return false;
    }
    watchers[n_watchers] = w;
    char hex[2 * sizeof(ac_addr) + 1];
    snprintf(reply, cap, "w=%zu addr=%s", n_watchers++, ac_addr_format(&w.addr, hex, sizeof hex));
    return true;
}

bool cmd_ask(char **argv, int argc, char *reply, size_t cap)
{
    size_t w;
    services_Oracle_ref o;
    if (argc != 4 || !parse_index(argv[0], n_watchers, &w) || !parse_addr(argv[1], &o.addr)) {
        snprintf(reply, cap, "usage: ask WATCHER ADDR TEXT N");
        return false;
    }
    uint32_t before = 0;
    int rc = counter_of(w, true, &before);
    if (rc == 0)
        rc = services_Watcher_send_ask(main_ctx(), watchers[w], o, ac_string_of(argv[2]),
                                       (uint32_t)strtoul(argv[3], NULL, 10));
    if (rc != 0) {
        snprintf(reply, cap, "send: %d", rc);
        return false;
    }
    if (!wait_past(w, true, before, reply, cap))
        return false;
    services_Watcher_report_reply *r = NULL;
    if ((rc = seen_by(w, &r)) != 0) {
        snprintf(reply, cap, "report: %d", rc);
        return false;
    }
    snprintf(reply, cap, "status=%d echo=%.*s twice=%" PRIu32, r->status, (int)r->echo.len,
             r->echo.data, r->twice);
    ac_reply_free(main_ctx(), r);
    return true;
}

bool cmd_askwait(char **argv, int argc, char *reply, size_t cap)
{
    services_Oracle_ref o;
    if (argc != 3 || !parse_addr(argv[0], &o.addr)) {
        snprintf(reply, cap, "usage: askwait ADDR TEXT N");
        return false;
    }
    services_Oracle_question_reply *r = NULL;
    int rc = services_Oracle_ask_question_wait(main_ctx(), o, ac_string_of(argv[1]),
                                               (uint32_t)strtoul(argv[2], NULL, 10), ASK_MS, &r);
    if (rc != 0) {
        snprintf(reply, cap, "rc=%d", rc);
        return true;  /* the outcome is the test's to judge */
    }
    snprintf(reply, cap, "rc=0 echo=%.*s twice=%" PRIu32, (int)r->echo.len, r->echo.data,
             r->twice);
    ac_reply_free(main_ctx(), r);
    return true;
}

bool cmd_whereis(char **argv, int argc, char *reply, size_t cap)
{
    if (argc != 2) {
        snprintf(reply, cap, "usage: whereis NODE NAME");
        return false;
    }
    ac_addr a;
    memset(&a, 0, sizeof a);
    int rc = ac_whereis_on(main_ctx(), argv[0], argv[1], ASK_MS, &a);
    char hex[2 * sizeof(ac_addr) + 1];
    snprintf(reply, cap, "rc=%d addr=%s", rc, ac_addr_format(&a, hex, sizeof hex));
    return true;
}

bool cmd_members(char **argv, int argc, char *reply, size_t cap)
{
    if (argc != 1) {
        snprintf(reply, cap, "usage: members GROUP");
        return false;
    }
    snprintf(reply, cap, "n=%zu", ac_group_members(main_ctx(), argv[0], NULL, 0));
    return true;
}

bool cmd_publish(char **argv, int argc, char *reply, size_t cap)
{
    if (argc != 2) {
        snprintf(reply, cap, "usage: publish GROUP SEQ");
        return false;
    }
    int n = services_Watcher_publish_note(main_ctx(), argv[0],
                                          (uint32_t)strtoul(argv[1], NULL, 10));
    snprintf(reply, cap, "reached=%d", n);
    return n >= 0;
}

/* watch, bind and hold: one message to Watcher w, answered once its sync
 * has come back (see the top). */
enum sync_op { WATCH, BIND, HOLD };

static bool watcher_then_sync(char **argv, int argc, enum sync_op op, char *reply, size_t cap)
{
    static const char *const usage[] = {"watch WATCHER ADDR", "bind WATCHER ADDR",
                                        "hold WATCHER ADDR MS"};
    size_t w;
    services_Oracle_ref o;
    if (argc != (op == HOLD ? 3 : 2) || !parse_index(argv[0], n_watchers, &w) ||
        !parse_addr(argv[1], &o.addr)) {
        snprintf(reply, cap, "usage: %s", usage[op]);
        return false;
    }
    uint32_t before = 0;
    int rc = counter_of(w, false, &before);
    if (rc == 0) {
        ac_ctx *cx = main_ctx();
        if (op == WATCH)
            rc = services_Watcher_send_watch(cx, watchers[w], o);
        else if (op == BIND)
            rc = services_Watcher_send_bind(cx, watchers[w], o);
        else
            rc = services_Watcher_send_hold(cx, watchers[w], o,
                                            (uint32_t)strtoul(argv[2], NULL, 10));
    }
    if (rc != 0) {
        snprintf(reply, cap, "send: %d", rc);
        return false;
    }
    if (!wait_past(w, false, before, reply, cap))
        return false;
    snprintf(reply, cap, "synced=%" PRIu32, before + 1);
    return true;
}

bool cmd_watch(char **argv, int argc, char *reply, size_t cap)
{
    return watcher_then_sync(argv, argc, WATCH, reply, cap);
}

bool cmd_bind(char **argv, int argc, char *reply, size_t cap)
{
    return watcher_then_sync(argv, argc, BIND, reply, cap);
}

bool cmd_hold(char **argv, int argc, char *reply, size_t cap)
{
    return watcher_then_sync(argv, argc, HOLD, reply, cap);
}

bool cmd_farewell(char **argv, int argc, char *reply, size_t cap)
{
    size_t o;
    services_Watcher_ref w;
    if (argc != 3 || !parse_index(argv[0], n_oracles, &o) || !parse_addr(argv[1], &w.addr)) {
        snprintf(reply, cap, "usage: farewell ORACLE ADDR COUNT");
        return false;
    }
    int rc = services_Oracle_send_farewell(main_ctx(), oracles[o], w,
                                           (uint32_t)strtoul(argv[2], NULL, 10));
    snprintf(reply, cap, "rc=%d", rc);
    return rc == 0;
}

bool cmd_seen(char **argv, int argc, char *reply, size_t cap)
{
    size_t w;
    if (argc != 1 || !parse_index(argv[0], n_watchers, &w)) {
        snprintf(reply, cap, "usage: seen WATCHER");
        return false;
    }
    services_Watcher_report_reply *r = NULL;
    int rc = seen_by(w, &r);
    if (rc != 0) {
        snprintf(reply, cap, "report: %d", rc);
        return false;
    }
    snprintf(reply, cap,
             "answers=%" PRIu32 " status=%" PRId32 " echo=%.*s twice=%" PRIu32
             " synced=%" PRIu32 " holds=%" PRIu32 " hold_status=%" PRId32 " hold_at=%" PRIu64
             " notes=%" PRIu32 " last_note=%" PRIu32 " disorder=%" PRIu32
             " after_down=%" PRIu32 " downs=%" PRIu32 " down_reason=%" PRId32
             " down_code=%" PRId32 " down_at=%" PRIu64 " exits=%" PRIu32
             " exit_reason=%" PRId32 " exit_code=%" PRId32 " exit_at=%" PRIu64,
             r->answers, r->status, (int)r->echo.len, r->echo.data, r->twice, r->synced,
             r->holds, r->hold_status, r->hold_at, r->notes, r->last_note, r->disorder,
             r->after_down, r->downs, r->down_reason, r->down_code, r->down_at, r->exits,
             r->exit_reason, r->exit_code, r->exit_at);
    ac_reply_free(main_ctx(), r);
    return true;
}
