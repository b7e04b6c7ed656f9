/*
 * fixtures.h — hand-written actor types for the runtime suites, so the
 * runtime is tested without the compiler (the compiler suite runs generated
 * code through the runtime end to end).
 */
#ifndef TESTS_RUNTIME_FIXTURES_H
#define TESTS_RUNTIME_FIXTURES_H

#include <actorc.h>
#include <criterion/criterion.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#define MAX_SENDERS 64

/* ---- Counter: counts items and checks FIFO order per sender ------------- */

enum { COUNTER_ITEM = 0, COUNTER_STOP_SELF = 1, COUNTER_FAIL = 2 };

typedef struct item {
    uint32_t sender;
    uint64_t seq;
} item;

typedef struct counter {
    uint64_t count;
    uint64_t next_seq[MAX_SENDERS];
    uint64_t fifo_violations;
} counter;

/* What every Counter has seen, summed when it stops. Criterion runs each
 * test in its own process, so these start at zero in every test. */
extern _Atomic uint64_t g_items;        /* handled by any counter */
extern _Atomic uint64_t g_stopped_items; /* summed by stop hooks */
extern _Atomic uint64_t g_fifo_violations;
extern _Atomic uint64_t g_stops;
extern _Atomic uint64_t g_expected_per_actor; /* set by a test */
extern _Atomic uint64_t g_exact_actors;       /* stopped with that count */
extern _Atomic uint64_t g_trace[4096];        /* seqs in handling order */
extern _Atomic uint64_t g_trace_len;

extern const ac_actor_type counter_type;

int send_item(ac_ctx *cx, const ac_addr *to, uint32_t sender, uint64_t seq);
int send_tag(ac_ctx *cx, const ac_addr *to, uint32_t tag);

/* Busy for `us` microseconds: a handler that works, or stays in its turn. */
static inline void spin_us(long us)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do
        clock_gettime(CLOCK_MONOTONIC, &now);
    while ((now.tv_sec - start.tv_sec) * 1000000L + (now.tv_nsec - start.tv_nsec) / 1000 < us);
}

/* ---- Runtimes ------------------------------------------------------------ */

/* A runtime made from cfg, or the test fails. */
static inline ac_runtime *make_runtime_from(const ac_config *cfg)
{
    ac_runtime *rt = NULL;
    cr_assert_eq(ac_runtime_create(&rt, cfg), 0);
    cr_assert_not_null(rt);
    /* Actors failed on purpose are not reported (failure.c). */
    ac_runtime_set_failure_hook(rt, ac_failure_quiet, NULL);
    return rt;
}

/* A shutdown that is never forced: ac_runtime_destroy handles every
 * message still queued and stops every actor, however long a loaded
 * machine takes to, rather than kill what is left after
 * AC_SHUTDOWN_MS (a test of the deadline sets its own). */
static inline ac_runtime *make_runtime(int workers)
{
    ac_config cfg;
    ac_config_init(&cfg);
    cfg.workers = workers;
    cfg.shutdown_ms = AC_SHUTDOWN_NEVER_FORCED;
    return make_runtime_from(&cfg);
}

/* With the per-type counters (ac_config.type_stats) on or off. */
static inline ac_runtime *make_typed_runtime(int workers, bool type_stats)
{
    ac_config cfg;
    ac_config_init(&cfg);
    cfg.workers = workers;
    cfg.type_stats = type_stats;
    cfg.shutdown_ms = AC_SHUTDOWN_NEVER_FORCED;
    return make_runtime_from(&cfg);
}

/* Seeded mode: deterministic (no workers), turns in the order seed picks
 * (docs/RUNTIME.md, "Systematic testing"). */
static inline ac_runtime *make_seeded_runtime(uint64_t seed)
{
    ac_config cfg;
    ac_config_init(&cfg);
    cfg.workers = 0;
    cfg.seed = seed;
    return make_runtime_from(&cfg);
}

/* ---- Counters --------------------------------------------------------------- */

/* Every send is accounted for: handled, a dead letter, dropped by a
 * bounded mailbox, forwarded to a node, or in a stash (docs/RUNTIME.md,
 * "Counters that reconcile"). */
static inline void assert_sends_accounted(ac_runtime *rt)
{
    ac_stats s;
    ac_runtime_stats(rt, &s);
    cr_assert_eq(s.sends + s.refused,
                 s.messages + s.dead_letters + s.mailbox_drops + s.node_forwarded + s.stashed,
                 "sends %llu refused %llu messages %llu dead %llu drops %llu stashed %llu",
                 (unsigned long long)s.sends, (unsigned long long)s.refused,
                 (unsigned long long)s.messages, (unsigned long long)s.dead_letters,
                 (unsigned long long)s.mailbox_drops, (unsigned long long)s.stashed);
}

/* Messages in stashes now (ac_stats.stashed). */
static inline uint64_t stashed_now(ac_runtime *rt)
{
    ac_stats s;
    ac_runtime_stats(rt, &s);
    return s.stashed;
}

/* A dead-letter hook (ac_runtime_set_dead_letter_hook, arg a dead_count)
 * that counts the undeliverable (AC_ENOTFOUND) letters of a few tags. */
typedef struct dead_count {
    uint32_t tags[4];
    unsigned ntags;
    _Atomic uint64_t n;
} dead_count;

void count_dead_letters(ac_ctx *cx, const ac_addr *to, const ac_envelope *e, int reason, void *arg);

/* ---- The order handlers saw ------------------------------------------------- */

/* A handler notes each message's number; a test compares the sequence. */
void note_handled(uint32_t n);
uint32_t handled_count(void);
uint32_t handled_at(uint32_t i);
void expect_handled(const uint32_t *want, uint32_t n);

static inline ac_addr spawn_counter(ac_ctx *cx)
{
    ac_addr a;
    cr_assert_eq(ac_spawn(cx, &counter_type, NULL, &a), 0);
    return a;
}

/* Waits (without asserting on time) until *v reaches want or ~20 s pass. */
static inline bool wait_for(_Atomic uint64_t *v, uint64_t want)
{
    struct timespec ts = {0, 100000};
    for (int i = 0; i < 200000; i++) {
        if (atomic_load(v) >= want)
            return true;
        nanosleep(&ts, NULL);
    }
    return atomic_load(v) >= want;
}

#endif
