/*
 * arena.c — the compiler's memory: a bump arena for everything that lives
 * as long as one compilation, growable strings for the outputs, and a small
 * string-keyed hash map. Allocation failure longjmps to the context's
 * recovery point; callers never see NULL.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acc.h"

struct acc_chunk {
    acc_chunk *next;
    size_t used, size;
    max_align_t data[];
};

#define CHUNK_MIN ((size_t)16 * 1024)
/* What the compiler allocates holds pointers, sizes and 64-bit integers,
 * never a long double, so that is the alignment it gets: max_align_t's
 * (16 on x86-64) would round a 56- or 88-byte node up by 8. */
union acc_arena_align {
    void *p;
    uint64_t u;
    double d;
    size_t z;
};
#define ALIGN (_Alignof(union acc_arena_align))

static void out_of_memory(jmp_buf *oom)
{
    longjmp(*oom, ACC_JMP_OOM);
}

/* `align` is ALIGN or 1 (strings): a string takes its length, not the
 * next multiple of 16 (the generated names are most of what a module's
 * check allocates after its AST). */
static void *alloc_aligned(acc_arena *a, size_t size, size_t align)
{
    acc_chunk *c = a->head;
    if (size == 0)
        size = 1;
    size_t pad = c != NULL ? (align - c->used % align) % align : 0;
    if (c == NULL || c->size - c->used < size ||
        c->size - c->used - size < pad) {
        size_t want = size > CHUNK_MIN ? size : CHUNK_MIN;
        if (want > SIZE_MAX / 2)
            out_of_memory(a->oom);
        c = malloc(sizeof(*c) + want);
        if (c == NULL)
            out_of_memory(a->oom);
        c->size = want;
        c->used = 0;
        pad = 0;
        /* A chunk made for one large object goes behind the current one,
         * so that the current one keeps serving small requests. */
        if (a->head != NULL && want > CHUNK_MIN) {
            c->next = a->head->next;
            a->head->next = c;
        } else {
            c->next = a->head;
            a->head = c;
        }
    }
    void *p = (char *)c->data + c->used + pad;
    c->used += pad + size;
    memset(p, 0, size);
    return p;
}

void *acc_alloc(acc_arena *a, size_t size)
{
    return alloc_aligned(a, size, ALIGN);
}

char *acc_alloc_chars(acc_arena *a, size_t len)
{
    return alloc_aligned(a, len + 1, 1);
}

char *acc_strndup(acc_arena *a, const char *s, size_t len)
{
    char *p = alloc_aligned(a, len + 1, 1);
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

char *acc_aprintf(acc_arena *a, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        out_of_memory(a->oom);
    char *p = alloc_aligned(a, (size_t)n + 1, 1);
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

/* A chunk made for one large object is its own: it can go as soon as
 * the object does. The walk is over the chunks, a few per megabyte, and
 * only for objects of more than a chunk. */
void acc_arena_give_back(acc_arena *a, void *p)
{
    for (acc_chunk **at = &a->head; *at != NULL; at = &(*at)->next) {
        acc_chunk *c = *at;
        if ((void *)c->data == p) {
            if (c->size > CHUNK_MIN && c->used == c->size) {
                *at = c->next;
                free(c);
            }
            return;
        }
    }
}

void acc_arena_free(acc_arena *a)
{
    acc_chunk *c = a->head;
    while (c != NULL) {
        acc_chunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
}

acc_arena_mark acc_arena_mark_get(const acc_arena *a)
{
    acc_arena_mark m = { a->head, NULL, 0 };
    if (a->head != NULL) {
        m.next = a->head->next;
        m.used = a->head->used;
    }
    return m;
}

/* The chunks made since the mark are the ones before m.head in the list
 * and, for objects larger than a chunk (which go behind the chunk in use),
 * the ones between m.head and what followed it at the mark. */
void acc_arena_release(acc_arena *a, acc_arena_mark m)
{
    acc_chunk *c = a->head;
    while (c != m.head) {
        acc_chunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = m.head;
    if (m.head == NULL)
        return;
    for (c = m.head->next; c != m.next;) {
        acc_chunk *next = c->next;
        free(c);
        c = next;
    }
    m.head->next = m.next;
    m.head->used = m.used;
}

void acc_str_printf(acc_str *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n > SIZE_MAX / 4 - s->len)
        out_of_memory(s->arena->oom);
    if (s->cap - s->len <= (size_t)n) {
        size_t cap = s->cap ? s->cap : 64;
        while (cap - s->len <= (size_t)n)
            cap *= 2;
        char *p = acc_alloc(s->arena, cap);
        if (s->len > 0)
            memcpy(p, s->data, s->len);
        s->data = p;
        s->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(s->data + s->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    s->len += (size_t)n;
}

/* ---- acc_buf ------------------------------------------------------------- */

static void buf_reserve(acc_buf *b, size_t extra)
{
    size_t used = acc_buf_total(b);
    if (b->max != 0 && extra > b->max - (used < b->max ? used : b->max))
        longjmp(*b->oom, ACC_JMP_LIMIT);
    if (b->cap - b->len > extra)
        return;
    if (extra > SIZE_MAX / 4 - b->len)
        out_of_memory(b->oom);
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len <= extra)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (p == NULL)
        out_of_memory(b->oom);
    b->data = p;
    b->cap = cap;
}

size_t acc_buf_total(const acc_buf *b)
{
    return b->flushed + b->len;
}

void acc_buf_flush(acc_buf *b)
{
    if (b->sink == NULL)
        return;
    b->sink(b->sink_arg, b->data != NULL ? b->data : "", b->len);
    b->flushed += b->len;
    b->len = 0;
    if (b->data != NULL)
        b->data[0] = '\0';
}

/* Past ACC_BUF_FLUSH, a buffer with a sink empties into it: the buffer
 * stays near that size (one put larger than it is held whole first). */
static void maybe_flush(acc_buf *b)
{
    if (b->sink != NULL && b->len >= ACC_BUF_FLUSH)
        acc_buf_flush(b);
}

void acc_buf_put(acc_buf *b, const char *s, size_t n)
{
    buf_reserve(b, n);
    if (n > 0)
        memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
    maybe_flush(b);
}

void acc_buf_puts(acc_buf *b, const char *s)
{
    acc_buf_put(b, s, strlen(s));
}

void acc_buf_putc(acc_buf *b, char c)
{
    acc_buf_put(b, &c, 1);
}

void acc_buf_printf(acc_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        out_of_memory(b->oom);
    buf_reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    maybe_flush(b);
}

char *acc_buf_take(acc_buf *b, size_t *len)
{
    /* Never longjmps: it is called after the recovery point is gone. */
    char *p = b->data != NULL ? b->data : calloc(1, 1);
    if (len != NULL)
        *len = b->len;
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}

void acc_buf_free(acc_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

/* ---- acc_map: open addressing, FNV-1a ------------------------------------ */

struct acc_map_slot {
    const char *key;
    size_t len;
    void *value;
};

static uint64_t hash(const char *s, size_t n)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ull;
    }
    return h;
}

void acc_map_init(acc_map *m, acc_arena *a)
{
    acc_map_init_for(m, a, 0);
}

void acc_map_init_for(acc_map *m, acc_arena *a, size_t n)
{
    m->arena = a;
    m->cap = 16;
    while (m->cap / 4 * 3 < n && m->cap < SIZE_MAX / 64)
        m->cap *= 2;
    m->count = 0;
    m->slots = acc_alloc(a, m->cap * sizeof(*m->slots));
}

static struct acc_map_slot *find(const acc_map *m, const char *key, size_t len)
{
    size_t mask = m->cap - 1;
    for (size_t i = hash(key, len) & mask;; i = (i + 1) & mask) {
        struct acc_map_slot *s = &m->slots[i];
        if (s->key == NULL ||
            (s->len == len && memcmp(s->key, key, len) == 0))
            return s;
    }
}

void *acc_map_get(const acc_map *m, const char *key, size_t len)
{
    return find(m, key, len)->value;
}

void *acc_map_put(acc_map *m, const char *key, size_t len, void *value)
{
    struct acc_map_slot *s = find(m, key, len);
    if (s->key != NULL)
        return s->value;
    if ((m->count + 1) * 4 > m->cap * 3) {
        struct acc_map_slot *old = m->slots;
        size_t oldcap = m->cap;
        m->cap *= 2;
        m->slots = acc_alloc(m->arena, m->cap * sizeof(*m->slots));
        for (size_t i = 0; i < oldcap; i++)
            if (old[i].key != NULL)
                *find(m, old[i].key, old[i].len) = old[i];
        acc_arena_give_back(m->arena, old);
        s = find(m, key, len);
    }
    s->key = key;
    s->len = len;
    s->value = value;
    m->count++;
    return value;
}
