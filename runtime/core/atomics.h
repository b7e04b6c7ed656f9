/*
 * atomics.h — what the core's lock-free code shares: the cache line it
 * aligns contended words to, and store-load barriers ("publish, then look").
 *
 * The parking protocol (sched.c) and the reclamation protocol (qsbr.c) are
 * Dekker pairs: each side publishes a store, then reads what the other side
 * published, and at least one of them must see the other. Normally a
 * seq_cst fence between the two steps does it. ThreadSanitizer does not model fences (gcc refuses to compile
 * them), so under it every barrier becomes a no-op and every announcement
 * and observation a seq_cst read-modify-write on the shared word: two RMWs
 * on one word are ordered, and whichever comes second reads from the
 * first, which gives the same guarantee in terms TSan sees.
 */
#ifndef AC_CORE_ATOMICS_H
#define AC_CORE_ATOMICS_H

#include <stdatomic.h>
#include <stdint.h>

/* Words written by different threads sit on lines of their own. */
#define AC__CACHE_LINE 64

#if defined(__SANITIZE_THREAD__)
#define AC__TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define AC__TSAN 1
#endif
#endif

static inline void ac__barrier(void)
{
#ifndef AC__TSAN
    atomic_thread_fence(memory_order_seq_cst);
#endif
}

/* Stores v, then orders the store before the caller's later loads. */
static inline void ac__announce_u64(_Atomic uint64_t *p, uint64_t v)
{
#ifdef AC__TSAN
    atomic_exchange_explicit(p, v, memory_order_seq_cst);
#else
    atomic_store_explicit(p, v, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
#endif
}

/* Reads *p after an ac__barrier() (acquire: see qsbr.c). */
static inline uint64_t ac__observe_u64(_Atomic uint64_t *p)
{
#ifdef AC__TSAN
    return atomic_fetch_add_explicit(p, 0, memory_order_seq_cst);
#else
    return atomic_load_explicit(p, memory_order_acquire);
#endif
}

static inline uint32_t ac__observe_u32(_Atomic uint32_t *p)
{
#ifdef AC__TSAN
    return atomic_fetch_add_explicit(p, 0, memory_order_seq_cst);
#else
    return atomic_load_explicit(p, memory_order_relaxed);
#endif
}

#endif /* AC_CORE_ATOMICS_H */
