/*
 * svc_probe.h — a hand-written actor type with a `copy` function, for the
 * names, groups and router suites. Every message carries a sv_msg; what
 * the probes see goes to global logs that the tests read at quiescence.
 */
#ifndef TESTS_RUNTIME_SVC_PROBE_H
#define TESTS_RUNTIME_SVC_PROBE_H

#include "fixtures.h"

enum {
    SV_NOTE = 0,        /* logs (self, v) in sv_notes */
    SV_STOP = 1,        /* stops itself */
    SV_FAIL = 2,        /* fails with code 7 */
    SV_REGISTER = 3,    /* ac_register(name, self); a win logs (self, v) in sv_wins */
    SV_SPAWN_NAMED = 4, /* spawns a probe named `name`; a win logs (child, v) */
    SV_JOIN = 5         /* ac_group_join(name, self) */
};

#define SV_NAME_MAX 40

typedef struct sv_msg {
    uint64_t v;
    char name[SV_NAME_MAX];
} sv_msg;

typedef struct sv_hit {
    ac_addr who;
    uint64_t v;
} sv_hit;

#define SV_LOG_MAX 65536

typedef struct sv_log {
    _Atomic uint64_t len;
    sv_hit hits[SV_LOG_MAX];
} sv_log;

extern sv_log sv_notes, sv_wins;
extern _Atomic uint64_t sv_copies;        /* envelopes made by sv_type.copy */
extern _Atomic uint64_t sv_errors;        /* unexpected return codes in handlers */
extern _Atomic uint64_t sv_downs;         /* `down` messages a probe received */
extern _Atomic uint64_t sv_name_free_at_down; /* ... when sv_watch_name was free */
extern char sv_watch_name[SV_NAME_MAX];
extern _Atomic uint64_t sv_start_saw_name; /* start hooks that found their name */

/* Start-hook arguments (may be NULL). */
typedef struct sv_args {
    const char *expect_name; /* the start hook checks it is registered to self */
    int fail_start;          /* non-zero: the start hook returns it */
} sv_args;

extern const ac_actor_type sv_type;
extern const ac_actor_type sv_nocopy_type; /* the same, without copy */

ac_envelope *sv_new(ac_ctx *cx, uint32_t tag, uint64_t v, const char *name);
int sv_send(ac_ctx *cx, const ac_addr *to, uint32_t tag, uint64_t v, const char *name);
ac_addr sv_spawn(ac_ctx *cx);
/* How many notes `who` logged in sv_notes. */
uint64_t sv_notes_of(const ac_addr *who);

#endif
