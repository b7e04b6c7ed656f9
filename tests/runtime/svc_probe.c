/* probe.c — the Probe actor type (see svc_probe.h). */
#include "svc_probe.h"

#include <stdio.h>

sv_log sv_notes, sv_wins;
_Atomic uint64_t sv_copies;
_Atomic uint64_t sv_errors;
_Atomic uint64_t sv_downs;
_Atomic uint64_t sv_name_free_at_down;
char sv_watch_name[SV_NAME_MAX];
_Atomic uint64_t sv_start_saw_name;

static void log_hit(sv_log *l, const ac_addr *who, uint64_t v)
{
    uint64_t at = atomic_fetch_add(&l->len, 1);
    if (at < SV_LOG_MAX)
        l->hits[at] = (sv_hit){*who, v};
}

static int sv_start(void *state, ac_ctx *cx, const void *args)
{
    (void)state;
    const sv_args *a = args;
    if (a == NULL)
        return 0;
    if (a->expect_name) {
        ac_addr at;
        if (ac_whereis(cx, a->expect_name, &at) == 0 && ac_addr_eq(&at, ac_self(cx)))
            atomic_fetch_add(&sv_start_saw_name, 1);
    }
    return a->fail_start;
}

static int sv_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    (void)state;
    const sv_msg *m = ac_envelope_payload(e);
    int rc;
    switch (e->tag) {
    case SV_NOTE:
        log_hit(&sv_notes, ac_self(cx), m->v);
        return 0;
    case SV_STOP:
        return ac_stop_self(cx);
    case SV_FAIL:
        return 7;
    case SV_REGISTER:
        rc = ac_register(cx, m->name, ac_self(cx));
        if (rc == 0)
            log_hit(&sv_wins, ac_self(cx), m->v);
        else if (rc != AC_EEXIST)
            atomic_fetch_add(&sv_errors, 1);
        return 0;
    case SV_SPAWN_NAMED: {
        ac_spawn_options o = {0};
        o.name = m->name;
        ac_addr child;
        rc = ac_spawn_opts(cx, &sv_type, NULL, &o, &child);
        if (rc == 0)
            log_hit(&sv_wins, &child, m->v);
        else if (rc != AC_EEXIST)
            atomic_fetch_add(&sv_errors, 1);
        return 0;
    }
    case SV_JOIN:
        if (ac_group_join(cx, m->name, ac_self(cx)) != 0)
            atomic_fetch_add(&sv_errors, 1);
        return 0;
    case AC_TAG_DOWN: {
        ac_addr at;
        atomic_fetch_add(&sv_downs, 1);
        if (sv_watch_name[0] && ac_whereis(cx, sv_watch_name, &at) == AC_ENOTFOUND)
            atomic_fetch_add(&sv_name_free_at_down, 1);
        return 0;
    }
    }
    return AC_EBADTAG;
}

static ac_envelope *sv_copy(ac_ctx *cx, const ac_envelope *e)
{
    ac_envelope *c = ac_envelope_new(cx, e->tag, sizeof(sv_msg));
    if (c == NULL)
        return NULL;
    memcpy(ac_envelope_payload(c), ac_envelope_payload((ac_envelope *)e), sizeof(sv_msg));
    atomic_fetch_add(&sv_copies, 1);
    return c;
}

static const char *const sv_names[] = {"note", "stop", "fail", "register", "spawn_named", "join"};

const ac_actor_type sv_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.SvcProbe",
    .state_size = 8,
    .state_align = 8,
    .dispatch = sv_dispatch,
    .on_start = sv_start,
    .message_count = 6,
    .message_names = sv_names,
    .copy = sv_copy,
};

const ac_actor_type sv_nocopy_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.SvcProbeNoCopy",
    .state_size = 8,
    .state_align = 8,
    .dispatch = sv_dispatch,
    .on_start = sv_start,
    .message_count = 6,
    .message_names = sv_names,
};

ac_envelope *sv_new(ac_ctx *cx, uint32_t tag, uint64_t v, const char *name)
{
    ac_envelope *e = ac_envelope_new(cx, tag, sizeof(sv_msg));
    if (e == NULL)
        return NULL;
    sv_msg *m = ac_envelope_payload(e);
    memset(m, 0, sizeof *m);
    m->v = v;
    if (name)
        snprintf(m->name, sizeof m->name, "%s", name);
    return e;
}

int sv_send(ac_ctx *cx, const ac_addr *to, uint32_t tag, uint64_t v, const char *name)
{
    ac_envelope *e = sv_new(cx, tag, v, name);
    /* Checked: the suites assert that a gone target is AC_ENOTFOUND. */
    return e ? ac_send_checked(cx, to, NULL, e) : AC_ENOMEM;
}

ac_addr sv_spawn(ac_ctx *cx)
{
    ac_addr a;
    cr_assert_eq(ac_spawn(cx, &sv_type, NULL, &a), 0);
    return a;
}

uint64_t sv_notes_of(const ac_addr *who)
{
    uint64_t n = 0, len = atomic_load(&sv_notes.len);
    for (uint64_t i = 0; i < len && i < SV_LOG_MAX; i++)
        n += ac_addr_eq(&sv_notes.hits[i].who, who);
    return n;
}
