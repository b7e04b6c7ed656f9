/*
 * test_hub.c — a worker that runs a communication-bound hub keeps its
 * clients (thieves leave its deque alone), clients that do real work
 * still spread, and a hub's long turn holds nothing hostage (sched.c,
 * "Hubs").
 *
 * What a thief does with a marked worker's deque depends on whether the
 * worker's turn has lasted LONG_TURN_US, and on a loaded machine any turn
 * may (a preempted worker), so the tests of the mark freeze the clock
 * (fake_clock.h): a frozen turn is never long, a thawed one is, and which
 * worker runs what follows from the messages alone. The tests of whole
 * workloads assert what holds whatever the interleaving, and wait for the
 * events they need (a mark, a client on the second worker) rather than
 * expect them within a number of rounds.
 */
#include "fixtures.h"

#include "core/sched.h"  /* the hub test hooks */
#include "fake_clock.h"

#include <pthread.h>
#include <stdlib.h>

/* Waits with nanosleep (the kernel's clock: these waits also end while
 * fake_clock.h's is frozen) until *flag is set; false after ~20 s, a
 * generous give-up, not a timing assert. Acquire: what the setter did
 * before. */
static bool wait_flag(_Atomic bool *flag)
{
    struct timespec nap = {0, 100000};
    for (int i = 0; i < 200000; i++) {
        if (atomic_load_explicit(flag, memory_order_acquire))
            return true;
        nanosleep(&nap, NULL);
    }
    return atomic_load_explicit(flag, memory_order_acquire);
}

/* ---- a marked worker and a thief, step by step ---------------------------- */

/* With the clock frozen and two workers: an Occupier holds one worker
 * (Wp) in its turn. A Driver, on the other (W1), sends CALLERS asks to a
 * Desk in one turn; the Desk runs next on W1 (the LIFO slot: nobody else
 * can take it) and answers them all in one turn, which wakes CALLERS - 1
 * callers into W1's deque: a hub-shaped turn, cheap per message at any
 * frozen instant, so W1 is marked. The first caller to run asks the Desk
 * to block, which it does in its second turn, on W1, while marked. Then
 * the Occupier lets Wp go: it searches, and must leave W1's deque alone,
 * since the Desk's turn is not long, and parks. Then either the Desk
 * returns (every caller must then run on W1), or the clock is thawed (its
 * turn is long now, and Wp, woken by the monitor, must take the callers
 * while it lasts). */

/* T_ASK carries an item (fixtures.h): the caller's index. */
enum { T_ASK = COUNTER_ITEM, T_OCCUPY, T_GO, T_BLOCK, T_ANSWER };
enum { CALLERS = 32 };  /* 16 (HUB_MIN_HANDLED) to 64 (one batch) */

static ac_addr desk, callers[CALLERS];
static bool hostage;                 /* set before anything runs */
static pthread_t desk_thread;        /* written before the Desk's answers */
static _Atomic bool occupied, occupier_go, first_claimed, desk_blocked, desk_go;
static _Atomic bool desk_marked, desk_saw_all;
static _Atomic uint64_t answered, elsewhere;

static int occupier_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    (void)state, (void)cx, (void)e;
    /* Release: the test thread sends the Driver's go after seeing it. */
    atomic_store_explicit(&occupied, true, memory_order_release);
    return wait_flag(&occupier_go) ? 0 : AC_ETIMEDOUT;
}

static int driver_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    (void)state, (void)e;
    for (uint32_t i = 0; i < CALLERS; i++)
        if (send_item(cx, &desk, i, 0) != 0)
            return AC_ENOMEM;
    return 0;
}

static int desk_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    (void)state;
    if (e->tag == T_ASK) {
        desk_thread = pthread_self();  /* published by the sends below */
        const item *m = ac_envelope_payload(e);
        return send_tag(cx, &callers[m->sender], T_ANSWER);
    }
    /* T_BLOCK: a long turn, as far as the mark is concerned, on W1. */
    atomic_store_explicit(&desk_marked, ac__sched_hub_marked(cx), memory_order_relaxed);
    /* Release: the test thread reads desk_marked after seeing this. */
    atomic_store_explicit(&desk_blocked, true, memory_order_release);
    if (!hostage)
        return wait_flag(&desk_go) ? 0 : AC_ETIMEDOUT;
    /* Every caller, the first one included, which ran before this turn:
     * the others can run only on Wp while it lasts. */
    struct timespec nap = {0, 100000};
    for (int i = 0; i < 200000; i++) {
        /* Acquire: the callers' counts. */
        if (atomic_load_explicit(&answered, memory_order_acquire) == CALLERS)
            break;
        nanosleep(&nap, NULL);
    }
    atomic_store_explicit(&desk_saw_all,
                          atomic_load_explicit(&answered, memory_order_acquire) == CALLERS,
                          memory_order_relaxed);
    return 0;
}

static int caller_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    (void)state, (void)e;
    /* Relaxed: counts, read once the runtime is quiescent. */
    if (!pthread_equal(pthread_self(), desk_thread))
        atomic_fetch_add_explicit(&elsewhere, 1, memory_order_relaxed);
    if (!atomic_exchange_explicit(&first_claimed, true, memory_order_relaxed) &&
        send_tag(cx, &desk, T_BLOCK) != 0)
        return AC_ENOMEM;
    /* Release: the blocked Desk waits for all of them. */
    atomic_fetch_add_explicit(&answered, 1, memory_order_release);
    return 0;
}

static const char *const desk_names[] = {"ask", "occupy", "go", "block", "answer"};
#define DESK_TYPE(var, tname, fn)                                                                  \
    static const ac_actor_type var = {                                                             \
        .abi = AC_ABI_VERSION,                                                                     \
        .name = tname,                                                                             \
        .state_align = 1,                                                                          \
        .dispatch = fn,                                                                            \
        .message_count = 5,                                                                        \
        .message_names = desk_names,                                                               \
    }
DESK_TYPE(occupier_type, "tests.Occupier", occupier_dispatch);
DESK_TYPE(driver_type, "tests.Driver", driver_dispatch);
DESK_TYPE(desk_type, "tests.Desk", desk_dispatch);
DESK_TYPE(caller_type, "tests.Caller", caller_dispatch);

static uint64_t parks_of(ac_runtime *rt)
{
    ac_stats s;
    ac_runtime_stats(rt, &s);
    return s.parks;
}

/* The scenario above, up to the Desk's long turn and the thief's park;
 * returns the runtime, or NULL (skipped) where there are no hubs. */
static ac_runtime *desk_blocks_on_a_marked_worker(bool thaw_it)
{
    hostage = thaw_it;
    unsetenv("AC_HUB_NS");  /* the default limit: any frozen cycle is under it */
    clock_freeze(1000);     /* 1 µs: the first hub-shaped turn is cheap too */
    ac_runtime *rt = make_runtime(2);
    if (ac__sched_monitor_state(rt) < 0) {
        clock_thaw();
        ac_runtime_destroy(rt);
        return NULL;
    }
    ac_ctx *cx = ac_runtime_ctx(rt);
    ac_addr occupier, driver;
    cr_assert_eq(ac_spawn(cx, &occupier_type, NULL, &occupier), 0);
    cr_assert_eq(ac_spawn(cx, &driver_type, NULL, &driver), 0);
    cr_assert_eq(ac_spawn(cx, &desk_type, NULL, &desk), 0);
    for (unsigned i = 0; i < CALLERS; i++)
        cr_assert_eq(ac_spawn(cx, &caller_type, NULL, &callers[i]), 0);
    ac_runtime_run(rt);
    cr_assert_eq(send_tag(cx, &occupier, T_OCCUPY), 0);
    cr_assert(wait_flag(&occupied), "the occupier never ran");
    cr_assert_eq(send_tag(cx, &driver, T_GO), 0);
    cr_assert(wait_flag(&desk_blocked), "the desk never blocked");
    cr_assert(atomic_load_explicit(&desk_marked, memory_order_relaxed),
              "the desk's hub-shaped turn did not mark its worker");
    cr_assert_eq(ac__sched_hub_marks(rt), 1);
    /* Wp leaves the occupier's turn, searches, and parks: the next park
     * is its own, the Desk's worker being in its turn. */
    uint64_t parks = parks_of(rt);
    atomic_store_explicit(&occupier_go, true, memory_order_release);
    struct timespec nap = {0, 100000};
    for (int i = 0; i < 200000 && parks_of(rt) == parks; i++)
        nanosleep(&nap, NULL);
    cr_assert_gt(parks_of(rt), parks, "the other worker never parked");
    return rt;
}

Test(hub, a_marked_workers_clients_stay_while_its_turns_are_short, .timeout = 120)
{
    ac_runtime *rt = desk_blocks_on_a_marked_worker(false);
    if (rt == NULL)
        cr_skip_test("no monitor here (membarrier), hence no hubs");
    atomic_store_explicit(&desk_go, true, memory_order_release);
    ac_runtime_run(rt);
    clock_thaw();  /* before shutdown, which times its deadline */
    cr_assert_eq(atomic_load(&answered), CALLERS);
    /* Wp searched while W1's deque held CALLERS - 1 callers, and took
     * none: the mark. Without it, it takes them (and this fails). */
    cr_assert_eq(atomic_load(&elsewhere), 0, "%llu callers were taken from a marked worker",
                 (unsigned long long)atomic_load(&elsewhere));
    assert_sends_accounted(rt);
    ac_runtime_destroy(rt);
}

Test(hub, a_hubs_long_turn_holds_no_actor_hostage, .timeout = 120)
{
    ac_runtime *rt = desk_blocks_on_a_marked_worker(true);
    if (rt == NULL)
        cr_skip_test("no monitor here (membarrier), hence no hubs");
    /* Time runs again: the Desk's turn is long from now on. Without the
     * long-turn exception to the mark, its callers wait for it (and the
     * Desk gives up, and this fails). */
    clock_thaw();
    ac_runtime_run(rt);
    cr_assert(atomic_load(&desk_saw_all), "the marked worker's deque was held for its long turn");
    cr_assert_eq(atomic_load(&answered), CALLERS);
    cr_assert_eq(atomic_load(&elsewhere), CALLERS - 1, "the first ran before the block");
    assert_sends_accounted(rt);
    ac_runtime_destroy(rt);
}

/* ---- whole workloads: a hub answers every request at once ----------------- */

/* T_REQ carries an item (fixtures.h): to the hub, the client's index and
 * round; to a client, its index (the start). */
enum { T_REQ = COUNTER_ITEM, T_REPLY };

enum { CLIENTS = 256, GIVE_UP_S = 60 };

static ac_addr hub, clients[CLIENTS];
static uint32_t rounds_min = 400;       /* each client's rounds, at least */
static long client_spin_us;             /* a client's work per reply */
static bool until_marked, until_spread; /* then more rounds until that happened */
static struct timespec started;
static _Atomic uint64_t requests, replies, clients_done;
static _Atomic bool marked_seen, spread_seen, gave_up;

/* Whether GIVE_UP_S have passed since the clients started: a generous
 * bound on the wait for an event, not a timing assert (the test fails
 * on the event). */
static bool give_up(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - started.tv_sec < GIVE_UP_S)
        return false;
    atomic_store_explicit(&gave_up, true, memory_order_relaxed);  /* relaxed: a verdict */
    return true;
}

static int hub_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    (void)state;
    const item *m = ac_envelope_payload(e);
    /* Relaxed: a verdict, read at quiescence. */
    if (ac__sched_hub_marked(cx))
        atomic_store_explicit(&marked_seen, true, memory_order_relaxed);
    return send_tag(cx, &clients[m->sender], T_REPLY);
}

typedef struct client {
    uint32_t index, rounds;
    pthread_t last;  /* the thread of its previous turn */
    bool ran;
} client;

static int client_dispatch(void *state, ac_ctx *cx, ac_envelope *e)
{
    client *me = state;
    pthread_t self = pthread_self();
    if (me->ran && !pthread_equal(self, me->last))
        atomic_store_explicit(&spread_seen, true, memory_order_relaxed);  /* as marked_seen */
    me->last = self;
    me->ran = true;
    if (e->tag == T_REQ) {
        me->index = ((const item *)ac_envelope_payload(e))->sender;
    } else {
        if (client_spin_us > 0)
            spin_us(client_spin_us);
        atomic_fetch_add_explicit(&replies, 1, memory_order_relaxed);  /* relaxed: counts */
        me->rounds++;
        bool more = me->rounds < rounds_min;
        if (!more &&
            ((until_marked && !atomic_load_explicit(&marked_seen, memory_order_relaxed)) ||
             (until_spread && !atomic_load_explicit(&spread_seen, memory_order_relaxed))))
            more = !give_up();
        if (!more) {
            atomic_fetch_add_explicit(&clients_done, 1, memory_order_relaxed);
            return 0;
        }
    }
    atomic_fetch_add_explicit(&requests, 1, memory_order_relaxed);
    return send_item(cx, &hub, me->index, me->rounds);
}

static const char *const tag_names[] = {"req", "reply"};
static const ac_actor_type hub_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.Hub",
    .state_align = 1,
    .dispatch = hub_dispatch,
    .message_count = 2,
    .message_names = tag_names,
};
static const ac_actor_type client_type = {
    .abi = AC_ABI_VERSION,
    .name = "tests.Client",
    .state_size = sizeof(client),
    .state_align = _Alignof(client),
    .dispatch = client_dispatch,
    .message_count = 2,
    .message_names = tag_names,
};

/* Spawns the hub and `n` clients, starts the clients from this (outside)
 * thread, and waits until the runtime is idle: every client done, every
 * request answered. */
static ac_stats run_clients(ac_runtime *rt, unsigned n)
{
    ac_ctx *cx = ac_runtime_ctx(rt);
    cr_assert_eq(ac_spawn(cx, &hub_type, NULL, &hub), 0);
    for (unsigned i = 0; i < n; i++)
        cr_assert_eq(ac_spawn(cx, &client_type, NULL, &clients[i]), 0);
    clock_gettime(CLOCK_MONOTONIC, &started);
    for (unsigned i = 0; i < n; i++)
        cr_assert_eq(send_item(cx, &clients[i], i, 0), 0);
    ac_runtime_run(rt);
    cr_assert_eq(atomic_load(&clients_done), n);
    cr_assert_eq(atomic_load(&replies), atomic_load(&requests));
    cr_assert_geq(atomic_load(&replies), (uint64_t)n * rounds_min);
    assert_sends_accounted(rt);
    ac_stats s;
    ac_runtime_stats(rt, &s);
    return s;
}

/* The workload the mark is for. How many transactions then cross the
 * cores is a matter of how often a loaded machine preempts a worker (a
 * long turn lets thieves in): measured in bench/README.md ("Hubs"),
 * not asserted; that a marked worker's deque stays put is the first test
 * above. */
Test(hub, cheap_clients_all_finish_and_their_hub_is_marked, .timeout = 120)
{
    setenv("AC_HUB_NS", "1000000000", 1);  /* any cycle is cheap under 1 s a message */
    ac_config cfg;
    ac_config_init(&cfg);
    cfg.workers = 2;
    cfg.batch = 16;  /* the fewest a hub-shaped turn handles: many of them */
    cfg.shutdown_ms = AC_SHUTDOWN_NEVER_FORCED;
    ac_runtime *rt = make_runtime_from(&cfg);
    if (ac__sched_monitor_state(rt) < 0) {
        ac_runtime_destroy(rt);
        cr_skip_test("no monitor here (membarrier), hence no hubs");
    }
    until_marked = true;
    run_clients(rt, CLIENTS);
    cr_assert_not(atomic_load(&gave_up), "the hub was not marked in %d s", GIVE_UP_S);
    cr_assert(atomic_load(&marked_seen));
    cr_assert_gt(ac__sched_hub_marks(rt), 0);
    ac_runtime_destroy(rt);
}

Test(hub, clients_that_work_still_spread, .timeout = 120)
{
    unsetenv("AC_HUB_NS");  /* the default limit */
    client_spin_us = 200;   /* a hundred times the default limit a message */
    rounds_min = 100;
    until_spread = true;
    ac_runtime *rt = make_typed_runtime(2, true);
    ac_stats s = run_clients(rt, 64);
    cr_assert_eq(ac__sched_hub_marks(rt), 0, "a hub whose clients work was marked");
    cr_assert_not(atomic_load(&gave_up), "no client ran on the second worker in %d s", GIVE_UP_S);
    cr_assert(atomic_load(&spread_seen));
    cr_assert_gt(s.handoffs, 0, "a client changed workers, uncounted");
    ac_runtime_destroy(rt);
}

Test(hub, a_malformed_limit_refuses_the_runtime)
{
    ac_config cfg;
    ac_config_init(&cfg);
    cfg.workers = 2;
    ac_runtime *rt = NULL;
    const char *bad[] = {"fast", "-1", "12x", "99999999999"};
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("AC_HUB_NS", bad[i], 1);
        cr_assert_eq(ac_runtime_create(&rt, &cfg), AC_EINVAL, "AC_HUB_NS=%s", bad[i]);
    }
    setenv("AC_HUB_NS", "0", 1);  /* off: the runtime runs, and marks nothing */
    rt = make_runtime_from(&cfg);
    rounds_min = 100;
    run_clients(rt, 32);
    cr_assert_eq(ac__sched_hub_marks(rt), 0);
    ac_runtime_destroy(rt);
}
