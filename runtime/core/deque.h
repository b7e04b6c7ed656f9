/*
 * deque.h — a worker's Chase–Lev work-stealing deque of runnable actors.
 */
#ifndef AC_CORE_DEQUE_H
#define AC_CORE_DEQUE_H

#include "actor.h"
#include "atomics.h"

#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>

typedef struct ac__deque_array {
    struct ac__deque_array *older;  /* kept until the deque is destroyed */
    int64_t size;                   /* a power of two */
    _Atomic(ac__actor *) slots[];
} ac__deque_array;

typedef struct ac__deque {
    alignas(AC__CACHE_LINE) _Atomic int64_t top;
    alignas(AC__CACHE_LINE) _Atomic int64_t bottom;
    _Atomic(ac__deque_array *) array;
} ac__deque;

int ac__deque_init(ac__deque *d, int64_t size);
void ac__deque_destroy(ac__deque *d);
int ac__deque_push(ac__deque *d, ac__actor *a);       /* owner only */
ac__actor *ac__deque_pop(ac__deque *d);               /* owner only: newest */
ac__actor *ac__deque_steal(ac__deque *d);             /* anyone: oldest */
int64_t ac__deque_size(ac__deque *d);                 /* approximate */

#endif /* AC_CORE_DEQUE_H */
