/*
 * probe.h — an actor type for the lifecycle, monitor, link and supervisor
 * suites that does what its messages say (monitor, link, trap exits, fail,
 * stop) and reports what happens to it to an inbox, so tests observe it the
 * way a user would.
 */
#ifndef TESTS_RUNTIME_PROBE_H
#define TESTS_RUNTIME_PROBE_H

#include <actorc.h>
#include <criterion/criterion.h>

/* Commands a probe handles. */
enum {
    P_COUNT = 0,    /* count it */
    P_MONITOR,      /* payload ac_addr: monitor it; reports R_RC with the ref */
    P_LINK,         /* payload ac_addr: link to it; reports R_RC */
    P_UNLINK,       /* payload ac_addr */
    P_TRAP,         /* trap exits from now on */
    P_FAIL,         /* payload int: return it from the handler */
    P_STOP_SELF,
    P_FAIL_VIA_API, /* payload int: ac_fail(cx, code), then return 0 */
    P_GET_COUNT,    /* reports R_COUNT with how many P_COUNT it handled */
    P_DEMONITOR,    /* payload uint64_t: ac_demonitor it; reports R_RC */
    P_NCOMMANDS
};

/* Reports a probe sends to its inbox. */
enum {
    R_RC = 100,     /* payload probe_rc */
    R_DOWN,         /* payload ac_down */
    R_EXIT,         /* payload ac_exit */
    R_STOPPED,      /* payload probe_stopped: from the stop hook */
    R_STARTED,      /* payload ac_addr: the start hook saw ac_self */
    R_COUNT         /* payload probe_stopped (who, count) */
};

typedef struct probe_args {
    ac_addr report;
    int fail_start;     /* non-zero: the start hook fails with it */
    bool no_signals;    /* its dispatch has no down/exit hooks */
} probe_args;

typedef struct probe_rc {
    int rc;
    uint64_t ref;
} probe_rc;

typedef struct probe_stopped {
    ac_addr who;
    uint64_t count;
} probe_stopped;

extern const ac_actor_type probe_type;

/* A runtime with `workers` workers and an inbox for the probes' reports. */
typedef struct probe_world {
    ac_runtime *rt;
    ac_ctx *cx;
    ac_inbox *ib;
    const ac_addr *me;   /* the inbox's address */
} probe_world;

probe_world probe_world_open(int workers);
void probe_world_close(probe_world *w);

/* Spawns a probe reporting to `report`. */
ac_addr spawn_probe(ac_ctx *cx, const ac_addr *report);
/* Sends a command with an optional payload. */
int probe_cmd(ac_ctx *cx, const ac_addr *to, uint32_t tag, const void *payload, size_t size);
/* Receives the next report of `tag` (AC_ANY_TAG: any) within 10 s; the
 * payload is copied to `out` (size bytes). Fails the test on timeout. */
void expect_report(ac_ctx *cx, ac_inbox *ib, uint32_t tag, void *out, size_t size);
/* Receives the next report that is not a start or a stop, within 10 s,
 * and copies its payload (as much as `size` holds) to `out`: its tag.
 * Reports from one probe come in the order it made them. */
uint32_t next_report(ac_ctx *cx, ac_inbox *ib, void *out, size_t size);
/* True if no report of `tag` is waiting (after the runtime went idle). */
bool no_report(ac_ctx *cx, ac_inbox *ib, uint32_t tag);

#endif
