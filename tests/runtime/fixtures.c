/* fixtures.c — the Counter actor type and the suites' shared checks (see
 * fixtures.h). */
#include "fixtures.h"

_Atomic uint64_t g_items;
_Atomic uint64_t g_stopped_items;
_Atomic uint64_t g_fifo_violations;
_Atomic uint64_t g_stops;
_Atomic uint64_t g_expected_per_actor;
_Atomic uint64_t g_exact_actors;
_Atomic uint64_t g_trace[4096];
_Atomic uint64_t g_trace_len;

static const char *const counter_names[] = {"item", "stop_self", "fail"};

static int counter_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    counter *self = state;
    switch (e->tag) {
    case COUNTER_ITEM: {
        const item *m = ac_envelope_payload(e);
        if (m->sender < MAX_SENDERS) {
            if (m->seq != self->next_seq[m->sender])
                self->fifo_violations++;
            self->next_seq[m->sender] = m->seq + 1;
        }
        self->count++;
        atomic_fetch_add(&g_items, 1);
        uint64_t at = atomic_fetch_add(&g_trace_len, 1);
        if (at < 4096)
            atomic_store(&g_trace[at], m->seq);
        return 0;
    }
    case COUNTER_STOP_SELF:
        return ac_stop_self(cx);
    case COUNTER_FAIL:
        return 42;
    }
    return AC_EBADTAG;
}

static void counter_stop(void *state, ac_ctx *cx)
{
    (void)cx;
    counter *self = state;
    atomic_fetch_add(&g_stopped_items, self->count);
    atomic_fetch_add(&g_fifo_violations, self->fifo_violations);
    atomic_fetch_add(&g_stops, 1);
    if (self->count == atomic_load(&g_expected_per_actor))
        atomic_fetch_add(&g_exact_actors, 1);
}

const ac_actor_type counter_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.Counter",
    .state_size = sizeof(counter),
    .state_align = _Alignof(counter),
    .dispatch = counter_dispatch,
    .on_stop = counter_stop,
    .message_count = 3,
    .message_names = counter_names,
};

int send_item(ac_ctx *cx, const ac_addr *to, uint32_t sender, uint64_t seq)
{
    ac_envelope *e = ac_envelope_new(cx, COUNTER_ITEM, sizeof(item));
    if (e == NULL)
        return AC_ENOMEM;
    item *m = ac_envelope_payload(e);
    m->sender = sender;
    m->seq = seq;
    /* Checked: the suites assert that a gone target is AC_ENOTFOUND. */
    return ac_send_checked(cx, to, NULL, e);
}

int send_tag(ac_ctx *cx, const ac_addr *to, uint32_t tag)
{
    ac_envelope *e = ac_envelope_new(cx, tag, 0);
    if (e == NULL)
        return AC_ENOMEM;
    return ac_send(cx, to, e);
}

void count_dead_letters(ac_ctx *cx, const ac_addr *to, const ac_envelope *e, int reason, void *arg)
{
    (void)cx;
    (void)to;
    dead_count *d = arg;
    if (reason != AC_ENOTFOUND)
        return;
    for (unsigned i = 0; i < d->ntags; i++) {
        if (e->tag == d->tags[i]) {
            atomic_fetch_add(&d->n, 1);
            return;
        }
    }
}

#define HANDLED_MAX 256
static _Atomic uint32_t g_handled[HANDLED_MAX];
static _Atomic uint32_t g_nhandled;

void note_handled(uint32_t n)
{
    atomic_store(&g_handled[atomic_fetch_add(&g_nhandled, 1) % HANDLED_MAX], n);
}

uint32_t handled_count(void)
{
    return atomic_load(&g_nhandled);
}

uint32_t handled_at(uint32_t i)
{
    return atomic_load(&g_handled[i % HANDLED_MAX]);
}

void expect_handled(const uint32_t *want, uint32_t n)
{
    cr_assert_eq(atomic_load(&g_nhandled), n, "handled %u, want %u",
                 (unsigned)atomic_load(&g_nhandled), (unsigned)n);
    for (uint32_t i = 0; i < n; i++)
        cr_expect_eq(atomic_load(&g_handled[i]), want[i], "handled[%u] = %u, want %u",
                     (unsigned)i, (unsigned)atomic_load(&g_handled[i]), (unsigned)want[i]);
}
