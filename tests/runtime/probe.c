/*
 * probe.c — see probe.h.
 */
#include "probe.h"
#include "fixtures.h"

#include <string.h>

typedef struct probe {
    ac_addr report;
    uint64_t count;
    bool no_signals;
} probe;

static void report(ac_ctx *cx, const probe *self, uint32_t tag, const void *p, size_t n)
{
    ac_envelope *e = ac_envelope_new(cx, tag, n);
    if (e == NULL)
        return;
    memcpy(ac_envelope_payload(e), p, n);
    (void)ac_send(cx, &self->report, e);
}

static void report_rc(ac_ctx *cx, const probe *self, int rc, uint64_t ref)
{
    probe_rc r = {rc, ref};
    report(cx, self, R_RC, &r, sizeof r);
}

static int probe_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    probe *self = state;
    const void *p = ac_envelope_payload(e);
    uint64_t ref = 0;
    int rc;
    switch (e->tag) {
    case P_COUNT:
        self->count++;
        return 0;
    case P_MONITOR:
        rc = ac_monitor(cx, ac_self(cx), p, &ref);
        report_rc(cx, self, rc, ref);
        return 0;
    case P_LINK:
        report_rc(cx, self, ac_link(cx, p), 0);
        return 0;
    case P_UNLINK:
        report_rc(cx, self, ac_unlink(cx, p), 0);
        return 0;
    case P_TRAP:
        return ac_trap_exits(cx, true);
    case P_FAIL:
        return *(const int *)p;
    case P_STOP_SELF:
        return ac_stop_self(cx);
    case P_FAIL_VIA_API:
        return ac_fail(cx, *(const int *)p);
    case P_GET_COUNT: {
        probe_stopped s = {*ac_self(cx), self->count};
        report(cx, self, R_COUNT, &s, sizeof s);
        return 0;
    }
    case P_DEMONITOR:
        report_rc(cx, self, ac_demonitor(cx, *(const uint64_t *)p), *(const uint64_t *)p);
        return 0;
    case AC_TAG_DOWN:
        if (self->no_signals)
            return AC_EBADTAG;
        report(cx, self, R_DOWN, p, sizeof(ac_down));
        return 0;
    case AC_TAG_EXIT:
        if (self->no_signals)
            return AC_EBADTAG;
        report(cx, self, R_EXIT, p, sizeof(ac_exit));
        return 0;
    }
    return AC_EBADTAG;
}

static int probe_start(void *state, ac_ctx *cx, const void *args)
{
    probe *self = state;
    const probe_args *a = args;
    self->report = a->report;
    self->no_signals = a->no_signals;
    report(cx, self, R_STARTED, ac_self(cx), sizeof(ac_addr));
    return a->fail_start;
}

static void probe_stop(void *state, ac_ctx *cx)
{
    probe *self = state;
    probe_stopped s = {*ac_self(cx), self->count};
    report(cx, self, R_STOPPED, &s, sizeof s);
}

static const char *const probe_names[] = {"count", "monitor", "link", "unlink", "trap",
                                          "fail", "stop_self", "fail_via_api", "get_count",
                                          "demonitor"};

const ac_actor_type probe_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.Probe",
    .state_size = sizeof(probe),
    .state_align = _Alignof(probe),
    .dispatch = probe_dispatch,
    .on_start = probe_start,
    .on_stop = probe_stop,
    .message_count = P_NCOMMANDS,
    .message_names = probe_names,
};

ac_addr spawn_probe(ac_ctx *cx, const ac_addr *report_to)
{
    probe_args args = {*report_to, 0, false};
    ac_addr a;
    cr_assert_eq(ac_spawn(cx, &probe_type, &args, &a), 0);
    return a;
}

int probe_cmd(ac_ctx *cx, const ac_addr *to, uint32_t tag, const void *payload, size_t size)
{
    ac_envelope *e = ac_envelope_new(cx, tag, size);
    if (e == NULL)
        return AC_ENOMEM;
    if (size)
        memcpy(ac_envelope_payload(e), payload, size);
    /* Checked: the suites assert that a gone target is AC_ENOTFOUND. */
    return ac_send_checked(cx, to, NULL, e);
}

void expect_report(ac_ctx *cx, ac_inbox *ib, uint32_t tag, void *out, size_t size)
{
    ac_envelope *e = NULL;
    int rc = ac_inbox_recv(cx, ib, tag, 10000, &e);
    cr_assert_eq(rc, 0, "no report with tag %u: %s", tag, ac_strerror(rc));
    if (out)
        memcpy(out, ac_envelope_payload(e), size);
    ac_envelope_free(cx, e);
}

/* The payload size of a report or signal of `tag`. */
static size_t payload_of(uint32_t tag)
{
    switch (tag) {
    case R_RC:
        return sizeof(probe_rc);
    case R_DOWN:
    case AC_TAG_DOWN:
        return sizeof(ac_down);
    case R_EXIT:
    case AC_TAG_EXIT:
        return sizeof(ac_exit);
    case R_COUNT:
        return sizeof(probe_stopped);
    }
    return 0;
}

uint32_t next_report(ac_ctx *cx, ac_inbox *ib, void *out, size_t size)
{
    for (;;) {
        ac_envelope *e = NULL;
        int rc = ac_inbox_recv(cx, ib, AC_ANY_TAG, 10000, &e);
        cr_assert_eq(rc, 0, "no report: %s", ac_strerror(rc));
        uint32_t tag = e->tag;
        if (tag != R_STARTED && tag != R_STOPPED) {
            size_t n = payload_of(tag);
            if (out)
                memcpy(out, ac_envelope_payload(e), n < size ? n : size);
            ac_envelope_free(cx, e);
            return tag;
        }
        ac_envelope_free(cx, e);
    }
}

bool no_report(ac_ctx *cx, ac_inbox *ib, uint32_t tag)
{
    ac_runtime_run(ac_ctx_runtime(cx));
    ac_envelope *e = NULL;
    if (ac_inbox_recv(cx, ib, tag, 0, &e) == AC_ETIMEDOUT)
        return true;
    ac_envelope_free(cx, e);
    return false;
}

probe_world probe_world_open(int workers)
{
    probe_world w;
    w.rt = make_runtime(workers);
    w.cx = ac_runtime_ctx(w.rt);
    cr_assert_eq(ac_inbox_create(w.cx, &w.ib), 0);
    w.me = ac_inbox_addr(w.ib);
    return w;
}

void probe_world_close(probe_world *w)
{
    ac_inbox_destroy(w->cx, w->ib);
    ac_runtime_destroy(w->rt);
}
