/*
 * sched.c — workers: where runnable actors are kept, who runs them next,
 * and how idle workers park and wake. Design notes: runtime/README.md.
 *
 * A runnable actor is in exactly one place: a worker's LIFO slot, a
 * worker's deque, the global injection queue (either half), or running
 * on a worker.
 * A worker takes from its deque's bottom (newest) the actors its own turns
 * woke, from the top (oldest) everything else, and thieves take from the
 * top (next_local).
 *
 * Parking follows Go's and Tokio's protocol. `idle` counts searching and
 * sleeping workers. A worker whose push makes its deque's second entry
 * wakes a sleeper only if nobody is searching (a searcher will find it;
 * push_local says why later pushes need not); a searcher that finds
 * work and was the last one wakes the next, so work keeps spreading without a
 * thundering herd. A worker about to sleep announces itself in `idle`, then
 * re-checks every queue; a notifier publishes work, then reads `idle`. Both
 * separate the two steps with a seq_cst fence, so at least one of them sees
 * the other: no wake-up is lost.
 *
 * The injection queue. Threads that are not workers push the actors they
 * schedule onto a lock-free stack (`inject_in`, one CAS); workers take
 * under a mutex from a FIFO (`inject_out`), refilled with the whole stack,
 * reversed, when it runs dry. Only the push that makes the stack non-empty
 * notifies, by ac__notify_work's rule (Go's: a sleeper is woken unless a
 * worker is searching). Why no injected actor is stranded: the push is a
 * seq_cst CAS, then the fence, then the read of `idle`; a parker announces
 * in `idle`, fences, then reads the stack (work_visible). So either the
 * parker sees the stack non-empty and stays up, or the pusher sees the
 * parker announced and wakes it or finds a searcher, which hands the
 * search on while work is visible (end_search). A stack someone emptied
 * into the FIFO has a taker that is awake, sees its own FIFO and cannot
 * park before it is empty. A push onto a non-empty stack joins a batch
 * whose first push made that argument. A worker stuck in a long turn
 * while injected actors wait is the monitor's case too (monitor_look).
 *
 * Hubs. An actor that serves many others with cheap messages (a teller,
 * a broker, a fan-in) is a serial bottleneck, and a second worker that
 * runs its clients slows it down: every client on the other core costs
 * the hub about three cache-line transfers a message. A turn that handled
 * HUB_MIN_HANDLED messages, while HUB_MIN_WOKE wakes went into the deque
 * since the last such turn, is hub-shaped; if the time since this
 * worker's previous hub-shaped turn, per message it handled since, is
 * under `hub_ns` (AC_HUB_NS), the cycle is communication-bound, and the
 * worker is marked a hub for HUB_TURNS turns. While it is, thieves leave
 * its deque alone (unless its turn is long), and its pushes wake nobody.
 * Clients that do real work make the cycle expensive per message, the
 * mark is not set or is lifted, and they spread as before. Why nothing is stranded: a deque is
 * skipped only while its owner is marked, and a marked owner is awake,
 * running turns, and takes its own deque before it searches or parks
 * (the mark lapses when it searches); if one of its turns is long,
 * thieves may take from the deque again and the monitor wakes one
 * (monitor_look), which is why there are no hubs without a monitor. When
 * the mark lapses at a push over a non-empty deque, that push notifies,
 * as the ones before it did not. Measured in bench/README.md, "Hubs".
 *
 * Taking what a long turn holds. The LIFO slot and the drained actor are
 * the owner's, taken and put with plain loads and stores between turns,
 * but a handler that blocks would keep them (and the actors in them) for
 * the whole block. So while a worker is inside a turn (`turn` odd) a thief
 * may take both, through a Dekker pair that is asymmetric, so that the
 * owner's side costs no fence: the owner ends each turn by storing `turn`
 * even, then (after only a compiler barrier) reading `steal`; the thief
 * sets `steal`, then issues membarrier(2), which runs a full barrier on
 * every thread of the process, then reads `turn`. Either the owner's store
 * is visible to the thief (who then takes nothing) or the thief's flag is
 * visible to the owner (who waits until the thief has cleared it, and then
 * sees what it took): never both touching the slot at once. Inside a turn
 * the owner only puts into the slot (ac__schedule); a thief takes with an
 * exchange, and the put is a store when the slot is empty (only the owner
 * fills an empty slot) and an exchange otherwise, so a put and a take
 * cannot both get one actor. Without membarrier (Linux before 4.14, or
 * a filter that forbids it) nothing is taken. A thief takes only from a
 * worker whose turn is the same one it noted LONG_TURN_US before.
 *
 * The monitor. A slot filled by a turn that then blocks wakes nobody, so
 * one thread (Go's sysmon, minus everything but this) looks at every
 * worker's `turn` every MON_POLL_US while any worker is awake, and when a
 * turn has lasted LONG_TURN_US holding actors, wakes a parked worker
 * (ac__notify_work), whose search takes them: the monitor only notifies,
 * workers run actors. It backs off to MON_POLL_MAX_US while no turn is
 * long, and while every worker is parked it sleeps on a futex with no
 * timeout (a read of its timerfd, disarmed): an idle runtime has no
 * wake-ups at all. The transition from every worker parked to one awake
 * (ac__notify_work, cancel_park) wakes it (monitor_kick), through a Dekker
 * pair of seq_cst RMWs and loads on `idle` and `mon_state`, so it cannot
 * sleep through a worker's wake-up; only that transition pays a system
 * call, and only if it was asleep: it arms the timerfd MON_POLL_US ahead
 * rather than waking the monitor at once, which would take the core the
 * woken worker is about to run on.
 */
#include "sched.h"

#include "actor.h"
#include "explore.h"
#include "mailbox.h"
#include "qsbr.h"
#include "trace.h"

#include "../lib/xorshift.h"

#include <errno.h>
#include <stdlib.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

/* Consecutive turns from the LIFO slot before it yields to the queue:
 * Tokio's figure. Ping-pong pairs stay on one core yet cannot starve the
 * actors queued behind them. */
#define LIFO_LIMIT 3
/* The owner takes the newest of the actors its own turns woke from the
 * bottom of its deque (a spawn tree runs depth-first: its live set stays
 * small and in cache), but after this many turns in a row that did not
 * serve the deque's oldest entry, it takes the oldest: an actor queued
 * behind k others waits at most about k times this many turns, whatever
 * the workload. Shorter intervals open a spawn tree's old subtrees early
 * (measured in bench/README.md, "Scheduling"). */
#ifndef AC_OLDEST_INTERVAL
#define AC_OLDEST_INTERVAL 1024
#endif
#define OLDEST_INTERVAL AC_OLDEST_INTERVAL
/* Every so many turns a worker looks at the injection queue first, so work
 * from outside cannot be starved by a busy local queue (Go uses 61). */
#define INJECT_INTERVAL 61
/* Steal rounds before parking; each round looks at every other worker and
 * then pauses PAUSES_PER_ROUND times, so that the spin lasts about what
 * parking would cost (the sweep that chose 64 is in bench/README.md,
 * "The spin/park sweep"). Override with -DAC_SPIN_ROUNDS=n /
 * -DAC_PAUSES_PER_ROUND=n. */
#ifndef AC_SPIN_ROUNDS
#define AC_SPIN_ROUNDS 64
#endif
#ifndef AC_PAUSES_PER_ROUND
#define AC_PAUSES_PER_ROUND 32
#endif
/* Hub detection (the header's "Hubs"): a hub-shaped turn, how long a
 * mark lasts, and the default cost limit per message (the sweep is in
 * bench/README.md, "Hubs"). */
#define HUB_MIN_HANDLED 16
#define HUB_MIN_WOKE 8
#define HUB_TURNS 1024
#define HUB_NS_DEFAULT 2000
#define SPIN_ROUNDS AC_SPIN_ROUNDS
#define PAUSES_PER_ROUND AC_PAUSES_PER_ROUND
/* Turns between two attempts to finalize retired actors. */
#define REAP_INTERVAL 16
/* A turn that has lasted this long may lose its slot and drained actor to
 * a thief (Go steals runnext after about 3 µs; a longer wait keeps a
 * ping-pong pair on one core through any ordinary turn). */
#define LONG_TURN_US 500
/* The monitor's look at the workers while one is awake; after
 * MON_QUIET_CHECKS looks in a row that found no long turn, the interval
 * doubles up to MON_POLL_MAX_US (Go's sysmon backs off to 10 ms alike).
 * A long turn seen brings it back to MON_POLL_US. */
#define MON_POLL_US 1000
#define MON_POLL_MAX_US 10000
#define MON_QUIET_CHECKS 50

/* mon_state, the monitor's futex word. */
enum { MON_AWAKE = 0, MON_ASLEEP = 1, MON_EXIT = 2 };

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static void futex_wait(_Atomic uint32_t *word, uint32_t expected)
{
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

static void futex_wait_us(_Atomic uint32_t *word, uint32_t expected, uint32_t us)
{
    struct timespec ts = {.tv_sec = us / 1000000u, .tv_nsec = (long)(us % 1000000u) * 1000L};
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected, &ts, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *word)
{
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* ---- the window in which thieves may take the slot ------------------------ */

/* Whether membarrier(2)'s expedited private command is registered: then
 * the owner's half of the window's Dekker pair needs no fence. */
static bool asym;
static pthread_once_t asym_once = PTHREAD_ONCE_INIT;

static void asym_init(void)
{
    asym = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

/* The owner: the turn begins; thieves may take the slot and the drained
 * actor from now on. `tick` grows between turns, so each turn's odd value
 * is its own. Release: a thief that reads it (acquire) sees what the owner
 * put into the slot before. */
static inline void window_open(ac__worker *w)
{
    atomic_store_explicit(&w->turn, w->tick << 1 | 1u, memory_order_release);
}

/* A thief is deciding; it holds the flag for a few instructions after one
 * system call. Out of line: the turn's path stays short. */
static __attribute__((noinline, cold)) void wait_thief(ac__worker *w)
{
    /* Acquire: what the thief took is visible once it has left. */
    for (unsigned spins = 0; atomic_load_explicit(&w->steal, memory_order_acquire) != 0; spins++) {
        if (spins < 64)
            cpu_relax();
        else
            sched_yield();  /* it was preempted */
    }
}

/* The owner: the turn is over; returns once no thief is in the window, and
 * the slot and the drained actor are the owner's again. */
static inline void window_close(ac__worker *w)
{
#ifdef AC__TSAN
    /* Two seq_cst RMWs per side stand in for the fences TSan does not
     * model (core/atomics.h). */
    atomic_exchange_explicit(&w->turn, w->tick << 1, memory_order_seq_cst);
    if (atomic_fetch_add_explicit(&w->steal, 0, memory_order_seq_cst) != 0)
        wait_thief(w);
#else
    /* Relaxed store, then the store-load barrier: the thief's membarrier
     * supplies the fence on our side, so a compiler barrier is enough.
     * Without membarrier thieves never take (steal_held): no fence either. */
    atomic_store_explicit(&w->turn, w->tick << 1, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    /* Acquire: if a thief was in, its takes are visible once it left. */
    if (atomic_load_explicit(&w->steal, memory_order_acquire) != 0)
        wait_thief(w);
#endif
}

static inline ac__actor *slot_get(ac__worker *w)
{
    /* Relaxed: outside a turn only the owner touches the slot (window). */
    return atomic_load_explicit(&w->lifo, memory_order_relaxed);
}

static inline void slot_set(ac__worker *w, ac__actor *a)
{
    /* Relaxed: outside a turn; window_open's release publishes it. */
    atomic_store_explicit(&w->lifo, a, memory_order_relaxed);
}

/* ---- the injection queue (threads that are not workers) ------------------ */

/* Pushes `a` onto the senders' stack. Lock-free: an outside thread's send
 * that schedules its actor pays one CAS on a line only pushers and the
 * refill touch, where it took a mutex (two locked RMWs on the line the
 * workers took it on, plus a count). Returns whether the stack was empty:
 * only that push needs to notify (the header's "The injection queue").
 * No ABA: nothing is ever taken from the stack but all of it at once. */
static bool inject_push(ac_runtime *rt, ac__actor *a)
{
    /* Relaxed: the CAS below re-reads it. */
    ac__actor *top = atomic_load_explicit(&rt->inject_in, memory_order_relaxed);
    do {
        a->next_runnable = top;  /* ours until the CAS publishes it */
        /* Seq_cst on success: the publication half of the Dekker pair with
         * park()'s look (work_visible), before the notifier's fence and
         * read of `idle`; it is also the release that hands the actor, and
         * the link just written, to the worker whose exchange takes it.
         * Relaxed failure: we only retry with the value it read. */
    } while (!atomic_compare_exchange_weak_explicit(&rt->inject_in, &top, a, memory_order_seq_cst,
                                                    memory_order_relaxed));
    return top == NULL;
}

/* Whether both halves look empty (relaxed: a hint for the fast paths;
 * work_visible has the look the parking protocol relies on). */
static inline bool inject_empty(ac_runtime *rt)
{
    return atomic_load_explicit(&rt->inject_out, memory_order_relaxed) == NULL &&
           atomic_load_explicit(&rt->inject_in, memory_order_relaxed) == NULL;
}

/* The oldest injected actor. Workers take under inject_lock: when the FIFO
 * half is empty, one of them takes the whole stack and reverses it into
 * the FIFO half, so actors leave in the order they came (a batch at a
 * time: the stack's actors all came after the FIFO's). */
static ac__actor *inject_pop(ac_runtime *rt)
{
    if (inject_empty(rt))
        return NULL;
    pthread_mutex_lock(&rt->inject_lock);
    /* Relaxed: written only under the lock we hold. */
    ac__actor *a = atomic_load_explicit(&rt->inject_out, memory_order_relaxed);
    if (a == NULL) {
        /* Acquire: pairs with the pushes' CAS, so each actor's link and
         * its state as its scheduler left it are seen. */
        ac__actor *s = atomic_exchange_explicit(&rt->inject_in, NULL, memory_order_acquire);
        while (s != NULL) {
            ac__actor *next = s->next_runnable;
            s->next_runnable = a;
            a = s;
            s = next;
        }
    }
    if (a != NULL) {
        /* Relaxed: other takers read it under the lock; a parker's look
         * that misses it is covered by this worker, which is awake and
         * sees its own store (the header). */
        atomic_store_explicit(&rt->inject_out, a->next_runnable, memory_order_relaxed);
    }
    pthread_mutex_unlock(&rt->inject_lock);
    return a;
}

/* ---- waking ----------------------------------------------------------------- */

/* Wakes the sleeping monitor `us` from now. Not at once: a monitor woken
 * at once takes the core the worker just woken is about to run on (bench/
 * idle's wake-up from full idle took 33 µs instead of 14), while its first
 * look is useful only once a turn could be long. The timer is armed only
 * here, by the one kick that moved mon_state from asleep to awake, or by
 * the exit, and the monitor reads every expiry a kick arms (monitor_sleep).
 * It cannot fail on a valid timerfd with these arguments. */
static void monitor_alarm(ac_runtime *rt, uint32_t us)
{
    struct itimerspec when = {.it_value = {.tv_sec = us / 1000000u,
                                           .tv_nsec = (long)(us % 1000000u) * 1000L}};
    (void)timerfd_settime(rt->mon_timer, 0, &when, NULL);
}

/* A worker left the sleepers; `prev` is `idle` before it did. If every
 * worker was parked, the monitor may be asleep with no timeout: wake it.
 * Seq_cst: our RMW on `idle`, then this load of `mon_state`, against the
 * monitor's RMW on `mon_state`, then its load of `idle` (monitor_sleep):
 * in the single order of seq_cst operations one of the two loads comes
 * last and sees the other side's write, so either the monitor sees this
 * worker awake and stays up, or we see it asleep and wake it. */
static void monitor_kick(ac_runtime *rt, uint32_t prev)
{
    /* Seq_cst on mon_started too: it is set before the monitor exists, so
     * a kick that reads it unset comes before any monitor's sleep in that
     * order, and the monitor's look at `idle` sees this worker awake. */
    if (AC__IDLE_SLEEPING(prev) != rt->nworkers ||
        !atomic_load_explicit(&rt->mon_started, memory_order_seq_cst))
        return;
    uint32_t asleep = MON_ASLEEP;
    /* The load first: the CAS's exclusive line only when it is asleep.
     * Relaxed failure: a failed CAS means it woke already (or exits). */
    if (atomic_load_explicit(&rt->mon_state, memory_order_seq_cst) == MON_ASLEEP &&
        atomic_compare_exchange_strong_explicit(&rt->mon_state, &asleep, MON_AWAKE,
                                                memory_order_seq_cst, memory_order_relaxed))
        monitor_alarm(rt, MON_POLL_US);
}

void ac__notify_work(ac_runtime *rt)
{
    /* Store-load barrier: the work we published is ordered before reading
     * `idle` (the notifier's half of the Dekker pair; see park()). */
    ac__barrier();
    uint32_t s = ac__observe_u32(&rt->idle);
    if (AC__IDLE_SEARCHING(s) != 0 || AC__IDLE_SLEEPING(s) == 0)
        return;
    pthread_mutex_lock(&rt->sleep_lock);
    s = atomic_load_explicit(&rt->idle, memory_order_relaxed);
    ac__worker *w = rt->sleepers;
    if (w == NULL || AC__IDLE_SEARCHING(s) != 0) {
        pthread_mutex_unlock(&rt->sleep_lock);
        return;
    }
    rt->sleepers = w->next_sleeper;
    /* The woken worker starts out searching: one sleeper fewer, one
     * searcher more (modular arithmetic on the packed counters). */
    uint32_t prev = atomic_fetch_add_explicit(&rt->idle, AC__IDLE_SEARCH_ONE - AC__IDLE_SLEEP_ONE,
                                              memory_order_seq_cst);
    /* Release: the woken worker sees everything published before. */
    atomic_store_explicit(&w->park_state, AC__NOTIFIED, memory_order_release);
    pthread_mutex_unlock(&rt->sleep_lock);
    futex_wake(&w->park_state);
    monitor_kick(rt, prev);
}

/* ---- hubs (the header's "Hubs") ---------------------------------------------- */

static void hub_lapse(ac__worker *w)
{
    w->hub_on = false;
    /* Relaxed: a hint for thieves; whoever acts on it looks at the deque
     * itself, and a stale true only leaves the deque to its awake owner. */
    atomic_store_explicit(&w->hub, false, memory_order_relaxed);
}

/* Whether the mark still holds; lapses it if not. Called at every push
 * while marked, and the mark lapses when the owner searches, so the tick
 * difference is never stale by 2^32 turns while the deque holds anything. */
static bool hub_fresh(const ac__worker *w)
{
    return (uint32_t)(w->tick - w->hub_tick) < HUB_TURNS;
}

static bool hub_keeps_deque(ac__worker *w)
{
    if (hub_fresh(w))
        return true;
    hub_lapse(w);
    return false;
}

/* A turn that handled a long batch: was it hub-shaped (many wakes went
 * into the deque since the last long batch), and is the time since the
 * last hub-shaped turn cheap per message this worker handled since, or do
 * the actors it wakes do real work, worth a second core? Out of line:
 * most turns of most programs handle less. */
static __attribute__((noinline)) void note_long_batch(ac__worker *w)
{
    unsigned woke = w->woke;
    w->woke = 0;
    uint32_t limit = w->cx.rt->hub_ns;
    if (woke < HUB_MIN_WOKE || limit == 0)
        return;
    /* Relaxed: this worker's own counter. */
    uint64_t msgs = atomic_load_explicit(&w->cx.stats.messages, memory_order_relaxed);
    uint64_t now = ac__now_ns();
    uint64_t per = (now - w->hub_seen_ns) / (msgs - w->hub_seen_msgs + 1);
    w->hub_seen_ns = now;
    w->hub_seen_msgs = msgs;
    if (per >= limit) {
        if (w->hub_on)
            hub_lapse(w);  /* its clients work now: let them spread */
        return;
    }
    w->hub_tick = w->tick;
    if (!w->hub_on) {
        w->hub_on = true;
        /* Relaxed: a hint (hub_lapse), and a figure for tests that only
         * the owner writes. */
        atomic_store_explicit(&w->hub, true, memory_order_relaxed);
        atomic_store_explicit(&w->hub_marks,
                              atomic_load_explicit(&w->hub_marks, memory_order_relaxed) + 1,
                              memory_order_relaxed);
    }
}

/* ---- local queues ------------------------------------------------------------- */

/* `fresh`: the actor was just woken (by this worker's turn, or a grace
 * period that ended), so the owner may take it back from the bottom; an
 * actor that used up its batch is not, and goes behind the others. */
static void push_local(ac__worker *w, ac__actor *a, bool fresh)
{
    ac_runtime *rt = w->cx.rt;
    /* Only the push that makes a second entry wakes anyone. A push onto an
     * empty deque is work this worker takes next itself: waking a sleeper
     * for it would cost a futex round trip for nothing. A push onto two or
     * more needs no wake-up either: a worker parks only after seeing every
     * deque empty (park()), so any sleeper parked before this deque last
     * went from one entry to two, and that push's notify (the Dekker pair)
     * either woke it or found a searcher, which hands the search on while
     * work is visible (end_search). If the size we read is stale because a
     * thief just took from us, that thief is awake and looks here again
     * before it can park. */
    long size = ac__deque_size(&w->deque);
    bool notify = size == 1;
    if (w->hub_on)  /* a hub's pushes wake nobody; at the mark's end, all did */
        notify = !hub_keeps_deque(w) && size >= 1;
    if (ac__deque_push(&w->deque, a) != 0) {
        inject_push(rt, a);  /* the deque could not grow: never lose it */
        notify = true;
    } else {
        /* The entries above the last unfresh push are all fresh: thieves
         * take from the top, so a count too high only makes pop find the
         * deque empty. */
        w->fresh = fresh ? w->fresh + 1 : 0;
    }
    if (notify && rt->nworkers > 1)
        ac__notify_work(rt);
}

void ac__schedule(ac_ctx *cx, ac__actor *a)
{
    ac__worker *w = cx->worker;
    if (w == NULL && cx->holding) {
        /* Owned by this context until ac__run_held runs it. */
        a->next_runnable = NULL;
        *(cx->held ? &cx->held_tail->next_runnable : &cx->held) = a;
        cx->held_tail = a;
        return;
    }
    if (w == NULL) {
        /* Onto a stack that was not empty: the push that made it non-empty
         * notified (the header's "The injection queue"). */
        if (inject_push(cx->rt, a))
            ac__notify_work(cx->rt);
        return;
    }
    if (cx->current != NULL) {
        /* Woken by the running actor: it runs next here, where the message
         * is still in cache. The slot's previous occupant is queued. A
         * thief may take from the slot meanwhile, but never fills it: an
         * empty slot stays empty until this store (release: the thief that
         * takes it sees the actor as we left it). A full one is swapped, so
         * that it and a thief's exchange cannot both get its occupant. */
        ac__actor *prev = atomic_load_explicit(&w->lifo, memory_order_relaxed);
        if (prev == NULL) {
            atomic_store_explicit(&w->lifo, a, memory_order_release);
            return;
        }
        prev = atomic_exchange_explicit(&w->lifo, a, memory_order_acq_rel);
        if (prev == NULL)
            return;  /* a thief took it */
        a = prev;
    }
    w->woke++;  /* a wake queued behind others: hub detection ("Hubs") */
    push_local(w, a, true);
}

/* The LIFO slot's actor, if its streak is not over (next_local's first
 * case, and worker_main's inline fast path). */
static inline ac__actor *take_slot(ac__worker *w)
{
    ac__actor *a = slot_get(w);
    if (a == NULL || w->lifo_streak >= LIFO_LIMIT)
        return NULL;
    slot_set(w, NULL);
    w->lifo_streak++;
    w->since_oldest++;
    return a;
}

/* The newest actor this worker's turns woke, from the deque's bottom;
 * NULL if there is none or the oldest entry is due. */
static ac__actor *pop_fresh(ac__worker *w)
{
    if (w->fresh == 0 || w->since_oldest >= OLDEST_INTERVAL)
        return NULL;
    ac__actor *a = ac__deque_pop(&w->deque);
    if (a == NULL) {
        w->fresh = 0;  /* thieves took the rest */
        return NULL;
    }
    w->fresh--;
    w->since_oldest++;
    return a;
}

static ac__actor *next_local(ac__worker *w)
{
    ac_runtime *rt = w->cx.rt;
    ac__actor *a = take_slot(w);
    if (a)
        return a;
    if ((a = slot_get(w)) != NULL) {
        slot_set(w, NULL);
        w->lifo_streak = 0;
        if (ac__deque_size(&w->deque) == 0 && inject_empty(rt)) {
            w->since_oldest = 0;
            return a;  /* nobody to be fair to */
        }
        /* Its streak is over. If another actor woken by this worker waits
         * at the bottom, run that one and leave this one at the bottom in
         * its place: a spawn tree stays depth-first. Else it goes behind
         * the oldest, as always: two actors that keep waking each other
         * (ping-pong) never wake a third, so they cannot hold the bottom. */
        ac__actor *b = pop_fresh(w);
        if (b != NULL) {
            push_local(w, a, true);
            return b;
        }
        /* Fresh only above other fresh entries (the oldest is due): the
         * bottom stays a depth-first stack after the oldest has run. */
        push_local(w, a, w->fresh > 0);
    }
    w->lifo_streak = 0;
    if (w->tick % INJECT_INTERVAL == 0 && (a = inject_pop(rt)) != NULL)
        return a;
    if ((a = pop_fresh(w)) != NULL)
        return a;
    w->since_oldest = 0;
    if ((a = ac__deque_steal(&w->deque)) != NULL)
        return a;
    return inject_pop(rt);
}

/* Hands an owned actor that has messages back to the queues: next, if the
 * LIFO slot is free (a reply to the actor that just ran), else behind the
 * others. */
static void requeue(ac__worker *w, ac__actor *a, bool soon)
{
    if (soon && slot_get(w) == NULL)
        slot_set(w, a);
    else
        push_local(w, a, soon);
}

/* Counts a cross-core hand-off: `a` ran its previous turn on another
 * worker. The worker is noted in the injection queue's link, which is
 * idle while the actor is owned, as an odd value (an actor pointer is
 * even): a link or NULL means it came through the injection queue or has
 * not run yet, and is not counted. Called only by the observed turn
 * (actor.c, turn_observed), so the plain turn pays nothing: tested in
 * run_turn instead, it cost 3 instructions a ring hop (callgrind, 363.1
 * against 360.1). Plain accesses: the owner's, and ownership passes with
 * release and acquire. */
void ac__sched_note_handoff(ac_ctx *cx, ac__actor *a)
{
    ac__worker *w = cx->worker;
    uintptr_t me = (uintptr_t)(w - w->cx.rt->workers) << 1 | 1u;
    uintptr_t last = (uintptr_t)a->next_runnable;
    if ((last & 1u) && last != me)
        AC__COUNT(&w->cx, handoffs, 1);
    a->next_runnable = (ac__actor *)me;
}

/* Releases the actor kept drained by the last turn (see run_turn). */
static inline void release_drained(ac__worker *w)
{
    /* Relaxed: outside a turn, as the slot. */
    ac__actor *a = atomic_load_explicit(&w->drained, memory_order_relaxed);
    atomic_store_explicit(&w->drained, NULL, memory_order_relaxed);
    if (a != NULL && !ac__turn_release(a))
        requeue(w, a, true);
}

/* A drained actor is kept, still owned, until the next turn ends, and only
 * then released: if that turn sent it a message (ping-pong, request and
 * reply), the push found it unreleased and did not schedule it, and it
 * runs again without the CAS that marks a mailbox empty and without being
 * scheduled. A worker releases what it holds before it searches or parks,
 * so a held actor always gets its messages. */
static void run_turn(ac__worker *w, ac__actor *a)
{
    unsigned handled;
    window_open(w);
    ac__turn end = ac__actor_turn(&w->cx, a, w->cx.rt->cfg.batch, &handled);
    window_close(w);
    release_drained(w);
    if (handled >= HUB_MIN_HANDLED)
        note_long_batch(w);
    if (end == AC__TURN_MORE)
        requeue(w, a, false);
    else if (end == AC__TURN_DRAINED)
        atomic_store_explicit(&w->drained, a, memory_order_relaxed);  /* as above */
}

/* ---- searching and parking --------------------------------------------------- */

static bool begin_search(ac__worker *w)
{
    if (w->searching)
        return true;
    ac_runtime *rt = w->cx.rt;
    uint32_t s = atomic_load_explicit(&rt->idle, memory_order_seq_cst);
    /* At most half of the awake workers search at once (Tokio). */
    if (2 * AC__IDLE_SEARCHING(s) >= rt->nworkers - AC__IDLE_SLEEPING(s))
        return false;
    atomic_fetch_add_explicit(&rt->idle, AC__IDLE_SEARCH_ONE, memory_order_seq_cst);
    w->searching = true;
    return true;
}

static bool work_visible(ac_runtime *rt, const ac__worker *thief);

static void end_search(ac__worker *w)
{
    ac_runtime *rt = w->cx.rt;
    w->searching = false;
    w->woken = false;  /* it found a turn to run */
    uint32_t prev = atomic_fetch_sub_explicit(&rt->idle, AC__IDLE_SEARCH_ONE,
                                              memory_order_seq_cst);
    /* The last searcher hands the search on, but only if there is more to
     * find: the futex wake would otherwise delay the turn it just found
     * by a system call, for a sleeper that would go straight back to sleep.
     * Work published after this check wakes a sleeper itself, since no one
     * is searching any more. */
    ac__barrier();  /* our decrement, then the look (Dekker, see park) */
    if (AC__IDLE_SEARCHING(prev) == 1 && work_visible(rt, w))
        ac__notify_work(rt);
}

/* A steal, for the trace: the thief owns `a` now, so it reads it. */
static void trace_steal(ac__worker *w, ac__worker *victim, ac__actor *a)
{
    ac__trace_event(&w->cx, AC__EV_STEAL, ac__now_ns(), 0, ac__type(a), ac__addr_short(&a->addr),
                    (uint32_t)(victim - w->cx.rt->workers));
}

static uint32_t now_us(void);
static bool turn_is_long(ac__worker *v, uint32_t t, uint32_t now);

/* Whether a thief may take from v's deque: it has actors, and v runs no
 * hub or is in a long turn. Relaxed: hints (the header's "Hubs"). */
static bool stealable(ac__worker *v)
{
    if (ac__deque_size(&v->deque) <= 0)
        return false;
    if (!atomic_load_explicit(&v->hub, memory_order_relaxed))
        return true;
    uint32_t t = atomic_load_explicit(&v->turn, memory_order_relaxed);
    return (t & 1u) != 0 && turn_is_long(v, t, now_us());
}

static ac__actor *steal_round(ac__worker *w)
{
    ac_runtime *rt = w->cx.rt;
    unsigned n = rt->nslots;
    unsigned start = (unsigned)(ac__xorshift64(&w->rng) % n);
    for (unsigned i = 0; i < n; i++) {
        ac__worker *victim = &rt->workers[(start + i) % n];
        if (victim == w || !stealable(victim))
            continue;
        ac__actor *a = ac__deque_steal(&victim->deque);
        if (a) {
            AC__COUNT(&w->cx, steals, 1);
            if (w->cx.observe & AC__OBS_TRACE)
                trace_steal(w, victim, a);
            return a;
        }
    }
    return inject_pop(rt);
}

static uint32_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint32_t)((uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u);
}

/* The thief's half of the window (the header comment): takes the victim's
 * slot and drained actor if it is still inside turn `t`. */
static ac__actor *take_held(ac__worker *w, ac__worker *v, uint32_t t)
{
    uint32_t free_ = 0;
    /* Acquire on success: after an earlier thief's release of the flag, we
     * see the slot as it left it. One thief at a time. */
    if (!atomic_compare_exchange_strong_explicit(&v->steal, &free_, 1, memory_order_acquire,
                                                 memory_order_relaxed))
        return NULL;
    uint32_t now;
#ifdef AC__TSAN
    now = atomic_fetch_add_explicit(&v->turn, 0, memory_order_seq_cst);
#else
    /* The flag's store, then a barrier on every thread (the owner's half
     * of the fence), then the look. */
    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
    /* Acquire: pairs with window_open, so the slot's contents are seen. */
    now = atomic_load_explicit(&v->turn, memory_order_acquire);
#endif
    ac__actor *a = NULL, *d = NULL;
    if (now == t) {
        /* Exchanges (acquire: the actor as its last owner left it): an
         * owner's put may race with the take, never an owner's take. */
        a = atomic_exchange_explicit(&v->lifo, NULL, memory_order_acquire);
        d = atomic_exchange_explicit(&v->drained, NULL, memory_order_acquire);
    }
    /* Release: the owner waiting in window_close sees our takes. */
    atomic_store_explicit(&v->steal, 0, memory_order_release);
    /* The drained actor is ours, still owned: release it as its owner
     * would, and keep it if messages came in meanwhile. */
    if (d != NULL && ac__turn_release(d))
        d = NULL;
    if (a == NULL)
        return d;
    if (d != NULL)
        push_local(w, d, false);
    return a;
}

/* Whether worker v's turn `t` (odd) has lasted LONG_TURN_US. A turn's
 * length is judged from `seen`, a note that thieves and the monitor all
 * update: racy, but only a heuristic; take_held decides safely. */
static bool turn_is_long(ac__worker *v, uint32_t t, uint32_t now)
{
    /* Relaxed: a hint; nothing is read through it. */
    uint64_t seen = atomic_load_explicit(&v->seen, memory_order_relaxed);
    if ((uint32_t)(seen >> 32) != t) {
        atomic_store_explicit(&v->seen, (uint64_t)t << 32 | now, memory_order_relaxed);
        return false;
    }
    return now - (uint32_t)seen >= LONG_TURN_US;
}

/* Whether v's slot or drained actor holds an actor (relaxed: a hint;
 * take_held re-checks under the window). */
static bool holds_actors(ac__worker *v)
{
    return atomic_load_explicit(&v->lifo, memory_order_relaxed) != NULL ||
           atomic_load_explicit(&v->drained, memory_order_relaxed) != NULL;
}

/* Takes what a turn that has lasted LONG_TURN_US holds, from any worker. */
static ac__actor *steal_held(ac__worker *w)
{
    ac_runtime *rt = w->cx.rt;
#ifndef AC__TSAN
    if (!asym)
        return NULL;  /* no membarrier: the owner's half has no fence */
#endif
    for (unsigned i = 0; i < rt->nslots; i++) {
        ac__worker *v = &rt->workers[i];
        /* Relaxed peeks: hints, re-checked under the window. */
        uint32_t t = atomic_load_explicit(&v->turn, memory_order_relaxed);
        if (v == w || (t & 1u) == 0 || !holds_actors(v) || !turn_is_long(v, t, now_us()))
            continue;
        ac__actor *a = take_held(w, v, t);
        if (a != NULL) {
            AC__COUNT(&w->cx, steals, 1);
            if (w->cx.observe & AC__OBS_TRACE)
                trace_steal(w, v, a);
            return a;
        }
    }
    return NULL;
}

/* ---- the monitor (the header comment) --------------------------------------- */

/* One look at every worker. Returns whether some turn was long; if a long
 * turn holds actors, wakes a parked worker to take them. If nobody could
 * be woken (all awake, or one already searching), the next look tries
 * again while the turn lasts: a searcher looks (steal_held) before it
 * parks, and a worker that parks is woken then. */
static bool monitor_look(ac_runtime *rt)
{
    bool long_turn = false, hostage = false;
    uint32_t now = now_us();
    for (unsigned i = 0; i < rt->nworkers; i++) {
        ac__worker *v = &rt->workers[i];
        /* Relaxed: a hint, as in steal_held. */
        uint32_t t = atomic_load_explicit(&v->turn, memory_order_relaxed);
        if ((t & 1u) == 0 || !turn_is_long(v, t, now))
            continue;
        long_turn = true;
        hostage |= holds_actors(v) || ac__deque_size(&v->deque) > 0;
    }
    /* Injected actors whose push found a searcher wait for it: if every
     * awake worker is stuck in a long turn meanwhile, one is woken. */
    if (long_turn && !inject_empty(rt))
        hostage = true;
    if (hostage)
        ac__notify_work(rt);
    return long_turn;
}

static void count_wake(ac_runtime *rt)
{
    /* Relaxed, load and store: only the monitor writes it; the test hook
     * reads a figure, not an order. */
    atomic_store_explicit(&rt->mon_wakes,
                          atomic_load_explicit(&rt->mon_wakes, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

/* Every worker looked parked: sleep until one wakes (monitor_kick). */
static void monitor_sleep(ac_runtime *rt)
{
    uint32_t awake = MON_AWAKE;
    /* Seq_cst: the monitor's half of the Dekker pair (monitor_kick). It
     * fails only on MON_EXIT. */
    if (!atomic_compare_exchange_strong_explicit(&rt->mon_state, &awake, MON_ASLEEP,
                                                 memory_order_seq_cst, memory_order_relaxed))
        return;
    uint32_t s = atomic_load_explicit(&rt->idle, memory_order_seq_cst);
    uint32_t asleep = MON_ASLEEP;
    /* A worker woke in between: stay up, unless its kick (or the exit)
     * already moved us awake, and then take the expiry it arms, so that
     * none is left pending for a later sleep. Relaxed: no data. */
    if (AC__IDLE_SLEEPING(s) != rt->nworkers &&
        atomic_compare_exchange_strong_explicit(&rt->mon_state, &asleep, MON_AWAKE,
                                                memory_order_relaxed, memory_order_relaxed))
        return;
    /* Relaxed: the kick carries no data; the looks read `idle` afresh. An
     * expiry is only ever armed after mon_state left MON_ASLEEP, so this
     * loop ends with the read of that expiry (or on an interrupted read
     * after it moved, whose expiry is then left for the next sleep's read:
     * one early look, never a lost wake-up). */
    uint64_t expiries;
    do {
        if (read(rt->mon_timer, &expiries, sizeof expiries) < 0 && errno != EINTR)
            return;  /* no timer to wait on: look, as if woken */
        count_wake(rt);
    } while (atomic_load_explicit(&rt->mon_state, memory_order_relaxed) == MON_ASLEEP);
}

static void *monitor_main(void *arg)
{
    ac_runtime *rt = arg;
    uint32_t delay = MON_POLL_US;
    unsigned quiet = 0;  /* looks in a row that found no long turn */
    /* Relaxed: MON_EXIT carries no data (workers_stop joins us). */
    while (atomic_load_explicit(&rt->mon_state, memory_order_relaxed) != MON_EXIT) {
        /* Seq_cst: as monitor_sleep's load; a stale "awake" only costs one
         * more look. */
        if (AC__IDLE_SLEEPING(atomic_load_explicit(&rt->idle, memory_order_seq_cst)) ==
            rt->nworkers) {
            /* Woken MON_POLL_US after the kick: look at once. */
            monitor_sleep(rt);
            delay = MON_POLL_US;
            quiet = 0;
        } else {
            /* On mon_state so that the exit cuts the wait short; kicks
             * never touch an awake monitor's word. */
            futex_wait_us(&rt->mon_state, MON_AWAKE, delay);
            count_wake(rt);
        }
        if (monitor_look(rt)) {
            quiet = 0;
            delay = MON_POLL_US;
        } else if (++quiet >= MON_QUIET_CHECKS && delay < MON_POLL_MAX_US) {
            delay = delay * 2 < MON_POLL_MAX_US ? delay * 2 : MON_POLL_MAX_US;
        }
    }
    return NULL;
}

uint64_t ac__sched_monitor_wakes(ac_runtime *rt)
{
    /* Relaxed: a figure for tests. */
    return atomic_load_explicit(&rt->mon_wakes, memory_order_relaxed);
}

uint64_t ac__sched_hub_marks(ac_runtime *rt)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < rt->nslots; i++)  /* relaxed: a figure */
        n += atomic_load_explicit(&rt->workers[i].hub_marks, memory_order_relaxed);
    return n;
}

bool ac__sched_hub_marked(ac_ctx *cx)
{
    return cx->worker != NULL && cx->worker->hub_on && hub_fresh(cx->worker);
}

int ac__sched_monitor_state(ac_runtime *rt)
{
    /* Relaxed: set before ac_runtime_create returned. */
    if (!atomic_load_explicit(&rt->mon_started, memory_order_relaxed))
        return -1;
    /* Relaxed: a figure for tests. */
    return atomic_load_explicit(&rt->mon_state, memory_order_relaxed) == MON_ASLEEP;
}

/* Whether there is work to find: injected actors, or actors in a deque.
 * As `thief` sees it (not NULL), another worker's deque counts only if it
 * may take from it: a hub's deque is its owner's (the header's "Hubs"). */
static bool work_visible(ac_runtime *rt, const ac__worker *thief)
{
    /* Seq_cst on the stack: the parker's half of the Dekker pair with
     * inject_push (a plain load on x86). Relaxed on the FIFO half: its
     * actors' taker is awake and looks itself (the header). */
    if (atomic_load_explicit(&rt->inject_in, memory_order_seq_cst) != NULL ||
        atomic_load_explicit(&rt->inject_out, memory_order_relaxed) != NULL)
        return true;
    for (unsigned i = 0; i < rt->nslots; i++) {
        ac__worker *v = &rt->workers[i];
        if (thief == NULL || v == thief ? ac__deque_size(&v->deque) > 0 : stealable(v))
            return true;
    }
    return false;
}

bool ac__quiescent(ac_runtime *rt)
{
    uint32_t s = atomic_load_explicit(&rt->idle, memory_order_seq_cst);
    return AC__IDLE_SLEEPING(s) == rt->nworkers && !work_visible(rt, NULL) &&
           !atomic_load_explicit(&rt->has_orphans, memory_order_relaxed);
}

static void signal_quiet(ac_runtime *rt)
{
    pthread_mutex_lock(&rt->quiet_lock);
    pthread_cond_broadcast(&rt->quiet_cond);
    pthread_mutex_unlock(&rt->quiet_lock);
}

/* Leaves the sleeper list after finding work during the re-check. */
static void cancel_park(ac__worker *w)
{
    ac_runtime *rt = w->cx.rt;
    uint32_t prev = 0;  /* not all parked: no kick, unless we left below */
    pthread_mutex_lock(&rt->sleep_lock);
    if (atomic_load_explicit(&w->park_state, memory_order_relaxed) == AC__PARKED) {
        ac__worker **link = &rt->sleepers;
        while (*link != w)
            link = &(*link)->next_sleeper;
        *link = w->next_sleeper;
        prev = atomic_fetch_sub_explicit(&rt->idle, AC__IDLE_SLEEP_ONE, memory_order_seq_cst);
    } else {
        w->searching = true;  /* a notifier woke us and counted us searching */
        if (!atomic_load_explicit(&rt->exiting, memory_order_acquire)) {
            /* Its futex wake found us awake, but was sent all the same.
             * Acquire: as park's. */
            AC__COUNT(&w->cx, wakeups, 1);
            w->woken = true;
        }
    }
    atomic_store_explicit(&w->park_state, AC__RUNNING, memory_order_relaxed);
    pthread_mutex_unlock(&rt->sleep_lock);
    monitor_kick(rt, prev);
}

static void park(ac__worker *w)
{
    ac_runtime *rt = w->cx.rt;
    ac_ctx *cx = &w->cx;
    uint64_t t0 = (cx->observe & AC__OBS_TRACE) ? ac__now_ns() : 0;
    ac__qsbr_orphan(cx);   /* our dead actors are reaped by whoever is awake */
    ac__qsbr_offline(cx);

    pthread_mutex_lock(&rt->sleep_lock);
    uint32_t delta = AC__IDLE_SLEEP_ONE - (w->searching ? AC__IDLE_SEARCH_ONE : 0);
    uint32_t now = atomic_fetch_add_explicit(&rt->idle, delta, memory_order_seq_cst) + delta;
    w->searching = false;
    w->next_sleeper = rt->sleepers;
    rt->sleepers = w;
    atomic_store_explicit(&w->park_state, AC__PARKED, memory_order_relaxed);
    pthread_mutex_unlock(&rt->sleep_lock);
    AC__COUNT(cx, parks, 1);
    if (w->woken) {
        /* Woken, it found nothing to run: the wake-up's futex round trip
         * bought nothing. */
        AC__COUNT(cx, idle_wakeups, 1);
        w->woken = false;
    }

    /* Store-load barrier: announce (the seq_cst RMW on idle above), then
     * look: the sleeper's half of the Dekker pair with ac__notify_work. */
    ac__barrier();
    bool work = work_visible(rt, w) ||
                atomic_load_explicit(&rt->exiting, memory_order_acquire);
    if (!work && AC__IDLE_SLEEPING(now) == rt->nworkers) {
        /* Every worker is offline now, so retired actors only wait for
         * threads outside the runtime that are inside a call. */
        work = ac__qsbr_finalize_orphans(cx);
        if (!work && atomic_load_explicit(&rt->has_orphans, memory_order_relaxed)) {
            sched_yield();  /* such a call is short: let it finish */
            work = true;
        }
        if (!work)
            signal_quiet(rt);
    }
    /* No timeout: a turn that blocks holding actors is the monitor's to
     * see, and it wakes us (the header comment). */
    if (work) {
        cancel_park(w);
    } else {
        /* Acquire: pairs with the notifier's release store. */
        while (atomic_load_explicit(&w->park_state, memory_order_acquire) == AC__PARKED)
            futex_wait(&w->park_state, AC__PARKED);
        w->searching = true;  /* the notifier counted us as searching */
        /* Acquire: as above; the shutdown's wake-up is not one for work. */
        if (!atomic_load_explicit(&rt->exiting, memory_order_acquire)) {
            AC__COUNT(cx, wakeups, 1);
            w->woken = true;
        }
        atomic_store_explicit(&w->park_state, AC__RUNNING, memory_order_relaxed);
    }
    if (cx->observe & AC__OBS_TRACE)
        ac__trace_event(cx, AC__EV_PARK, t0, ac__now_ns() - t0, NULL, 0, 0);
    ac__qsbr_online(cx);
}

/* Out of line: reached only when this worker has nothing local, and
 * inlined it costs worker_main's hop about 2 instructions in register
 * moves (callgrind, bench/README.md, "Scheduling"). */
static __attribute__((noinline)) ac__actor *search(ac__worker *w)
{
    ac_runtime *rt = w->cx.rt;
    release_drained(w);
    for (;;) {
        if (atomic_load_explicit(&rt->exiting, memory_order_acquire))
            return NULL;
        ac__actor *a = next_local(w);
        if (a)
            return a;
        if (w->hub_on)
            hub_lapse(w);  /* its deque is empty: a mark only matters over one */
        if (begin_search(w)) {
            for (int round = 0; round < SPIN_ROUNDS; round++) {
                if ((a = steal_round(w)) != NULL)
                    return a;
                AC__COUNT(&w->cx, spins, 1);
                for (int i = 0; i < PAUSES_PER_ROUND; i++)
                    cpu_relax();
            }
        }
        /* Before parking: a turn that blocks holding actors wakes nobody,
         * and the monitor's notify may have been what woke us. */
        if (rt->nworkers > 1 && (a = steal_held(w)) != NULL)
            return a;
        park(w);
    }
}

static void *worker_main(void *arg)
{
    ac__worker *w = arg;
    ac_ctx *cx = &w->cx;
    ac__tls_set(cx->rt, cx);
    ac__qsbr_online(cx);
    for (;;) {
        /* The slot within its streak, inline (next_local's first case):
         * most turns of a chain of sends (ring, ping-pong) come from here
         * (bench/README.md, "Scheduling", says what the call cost). */
        ac__actor *a = take_slot(w);
        if (a == NULL)
            a = next_local(w);
        if (a == NULL && (a = search(w)) == NULL)
            break;
        if (w->searching)
            end_search(w);
        run_turn(w, a);
        ac__qsbr_quiescent(cx);
        if (++w->tick % REAP_INTERVAL == 0)
            ac__qsbr_poll(cx);
    }
    ac__qsbr_orphan(cx);
    ac__qsbr_offline(cx);
    ac__tls_set(NULL, NULL);
    return NULL;
}

/* AC_HUB_NS: unset or empty is the default, 0 turns hub detection off,
 * and anything but a count refuses the runtime (AC_EINVAL), as a
 * malformed AC_WORKERS does. */
static int hub_limit(uint32_t *ns)
{
    const char *env = getenv("AC_HUB_NS");
    *ns = HUB_NS_DEFAULT;
    if (env == NULL || *env == '\0')
        return 0;
    char *end;
    errno = 0;
    unsigned long n = strtoul(env, &end, 10);
    if (*end != '\0' || errno != 0 || n > UINT32_MAX || *env == '-')
        return AC_EINVAL;
    *ns = (uint32_t)n;
    return 0;
}

int ac__workers_start(ac_runtime *rt)
{
    pthread_once(&asym_once, asym_init);
    /* Only where a thief can take anything (steal_held), which is where
     * the monitor runs: hubs rely on it (the header's "Hubs"). */
    bool stealing = asym;
#ifdef AC__TSAN
    stealing = true;
#endif
    int rc = hub_limit(&rt->hub_ns);
    if (rc != 0) {
        rt->nworkers = 0;  /* none started: the caller's stop joins none */
        return rc;
    }
    if (rt->nworkers < 2 || !stealing)
        rt->hub_ns = 0;
    for (unsigned i = 0; i < rt->nworkers; i++) {
        if (pthread_create(&rt->workers[i].thread, NULL, worker_main, &rt->workers[i]) != 0) {
            rt->nworkers = i;  /* the ones started are stopped by the caller */
            return AC_ENOMEM;
        }
    }
    /* After the workers, so that nworkers is final when it reads it. */
    if (rt->nworkers > 1 && stealing) {
        rt->mon_timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
        if (rt->mon_timer < 0)
            return AC_ENOMEM;  /* out of descriptors; the caller stops the workers */
        /* Awake: it looks at `idle` itself before it ever sleeps, so the
         * kicks before it exists lose nothing (monitor_kick). Seq_cst: see
         * there. */
        atomic_store_explicit(&rt->mon_state, MON_AWAKE, memory_order_seq_cst);
        atomic_store_explicit(&rt->mon_started, true, memory_order_seq_cst);
        if (pthread_create(&rt->mon_thread, NULL, monitor_main, rt) != 0) {
            /* Relaxed: no monitor ever slept, so no kick armed the timer. */
            atomic_store_explicit(&rt->mon_started, false, memory_order_relaxed);
            close(rt->mon_timer);
            return AC_ENOMEM;  /* the caller stops the workers */
        }
    }
    return 0;
}

void ac__workers_stop(ac_runtime *rt)
{
    /* Relaxed: written by this thread's ac_runtime_create, or before. */
    if (atomic_load_explicit(&rt->mon_started, memory_order_relaxed)) {
        /* Relaxed: the join orders everything after. Never overwritten:
         * the monitor and the kicks only swap AWAKE and ASLEEP. */
        atomic_store_explicit(&rt->mon_state, MON_EXIT, memory_order_relaxed);
        futex_wake(&rt->mon_state);  /* its wait while awake */
        monitor_alarm(rt, 1);        /* its sleep */
        pthread_join(rt->mon_thread, NULL);
        close(rt->mon_timer);
        /* mon_started stays set: a kick now finds MON_EXIT and does
         * nothing. Called once (shutdown's last step). */
    }
    atomic_store_explicit(&rt->exiting, true, memory_order_seq_cst);
    pthread_mutex_lock(&rt->sleep_lock);
    while (rt->sleepers) {
        ac__worker *w = rt->sleepers;
        rt->sleepers = w->next_sleeper;
        atomic_fetch_add_explicit(&rt->idle, AC__IDLE_SEARCH_ONE - AC__IDLE_SLEEP_ONE,
                                  memory_order_seq_cst);
        atomic_store_explicit(&w->park_state, AC__NOTIFIED, memory_order_release);
        futex_wake(&w->park_state);
    }
    pthread_mutex_unlock(&rt->sleep_lock);
    for (unsigned i = 0; i < rt->nworkers; i++)
        pthread_join(rt->workers[i].thread, NULL);
}

/* Runs every queued actor on the calling thread until nothing is left:
 * the whole scheduler in deterministic mode, and the final sweep after the
 * workers have been joined. With `one_turn`, stops after one actor turn.
 * Returns the number of messages handled. */
uint64_t ac__monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

ac__actor *ac__sched_take(ac__worker *w)
{
    return next_local(w);
}

/* deadline 0: none. *late: stopped by the deadline with work left. */
static unsigned run_here(ac_runtime *rt, bool one_turn, uint64_t deadline, bool *late)
{
    /* Seeded mode chooses every step itself (explore.c). */
    if (rt->seeded != NULL)
        return ac__explore_run(rt, one_turn, deadline, late);
    unsigned handled = 0;
    *late = false;
    for (;;) {
        bool ran = false;
        for (unsigned i = 0; i < rt->nslots; i++) {
            ac__worker *w = &rt->workers[i];
            ac__tls_state prev = ac__tls_get();
            ac__tls_set(rt, &w->cx);
            ac__qsbr_online(&w->cx);
            ac__actor *a;
            while ((a = next_local(w)) != NULL) {
                unsigned n;
                w->tick++;
                ac__turn end = ac__actor_turn(&w->cx, a, rt->cfg.batch, &n);
                handled += n;
                if (end == AC__TURN_MORE ||
                    (end == AC__TURN_DRAINED && !ac__turn_release(a)))
                    push_local(w, a, false);
                ran = true;
                ac__qsbr_quiescent(&w->cx);
                ac__qsbr_poll(&w->cx);
                if (one_turn)
                    break;
                if (deadline != 0 && ac__monotonic_ms() >= deadline) {
                    *late = true;
                    break;
                }
            }
            ac__qsbr_orphan(&w->cx);
            ac__qsbr_offline(&w->cx);
            ac__tls_restore(prev);
            if ((ran && one_turn) || *late)
                return handled;
        }
        if (!ran) {
            /* Everything that could run has: reap, which may queue the
             * finalize turns of dead actors. */
            ac_ctx *cx = &rt->workers[0].cx;
            if (!ac__qsbr_finalize_orphans(cx))
                return handled;
        }
    }
}

unsigned ac__run_here(ac_runtime *rt, bool one_turn)
{
    bool late;
    return run_here(rt, one_turn, 0, &late);
}

bool ac__run_here_until(ac_runtime *rt, uint64_t deadline)
{
    bool late;
    (void)run_here(rt, false, deadline, &late);
    return !late;
}

void ac__sched_hold(ac_ctx *cx, bool on)
{
    /* Never in deterministic mode: only the caller of ac_runtime_run and
     * ac_runtime_step runs actors there. */
    cx->holding = on && cx->worker == NULL && cx->rt->nworkers > 0;
}

void ac__sched_run_held(ac_ctx *cx)
{
    ac__actor *a = cx->held;
    cx->held = cx->held_tail = NULL;
    bool holding = cx->holding;
    cx->holding = false;  /* what these turns wake goes to the workers */
    ac__enter(cx);
    for (ac__actor *next; a != NULL; a = next) {
        next = a->next_runnable;
        unsigned handled;
        ac__turn end = ac__actor_turn(cx, a, cx->rt->cfg.batch, &handled);
        if (end == AC__TURN_MORE || (end == AC__TURN_DRAINED && !ac__turn_release(a))) {
            inject_push(cx->rt, a);
            ac__notify_work(cx->rt);
        }
    }
    ac__leave(cx);
    cx->holding = holding;
}
