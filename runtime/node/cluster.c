/*
 * cluster.c — parsing the cluster file (cluster.h). Leaf code: it reads
 * text and checks its fields, and knows nothing of sockets or peers.
 */
#include "cluster.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

/* ZeroMQ's Z85 alphabet (RFC 32/Z85). */
static const char z85_chars[] =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

int ac__cluster_check_name(const char *name, const char **why)
{
    size_t n = strlen(name);
    if (n == 0 || n > AC_NODE_NAME_MAX) {
        *why = "a node name has 1 to 64 characters";
        return AC_EINVAL;
    }
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.')) {
            *why = "a node name is letters, digits, '_', '-' and '.'";
            return AC_EINVAL;
        }
    }
    return 0;
}

int ac__cluster_check_endpoint(const char *endpoint, const char **why)
{
    size_t n = strlen(endpoint);
    const char *sep = strstr(endpoint, "://");
    if (n == 0 || n > AC_NODE_ENDPOINT_MAX || sep == NULL || sep == endpoint ||
        sep[3] == '\0') {
        *why = "an endpoint looks like tcp://host:port (at most 255 characters)";
        return AC_EINVAL;
    }
    return 0;
}

int ac__cluster_check_key(const char *key, const char **why)
{
    if (strlen(key) != AC_NODE_KEY_LEN || strspn(key, z85_chars) != AC_NODE_KEY_LEN) {
        *why = "a public key is 40 characters of Z85 (as actorc-keygen prints it)";
        return AC_EINVAL;
    }
    /* Z85's characters, but not every 40 of them decode: a group of five
     * must stay under 2^32 ("%%%%%" does not). ZeroMQ would refuse the
     * key only when a socket is given it; refused here, it has a line. */
    uint8_t bytes[32];
    if (zmq_z85_decode(bytes, key) == NULL) {
        *why = "a public key that is not Z85 (it does not decode; actorc-keygen prints valid ones)";
        return AC_EINVAL;
    }
    return 0;
}

static int fail(char *why, size_t why_len, unsigned line, const char *fmt, ...)
{
    if (why_len > 0) {
        int at = snprintf(why, why_len, "line %u: ", line);
        if (at >= 0 && (size_t)at < why_len) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(why + at, why_len - (size_t)at, fmt, ap);
            va_end(ap);
        }
    }
    return AC_EINVAL;
}

/* The next blank-separated field of [*p, end) into dst (cap bytes with the
 * NUL); false when there is none or it does not fit. */
static bool field(const char **p, const char *end, char *dst, size_t cap, bool *too_long)
{
    const char *s = *p;
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    const char *e = s;
    while (e < end && *e != ' ' && *e != '\t')
        e++;
    *p = e;
    *too_long = (size_t)(e - s) >= cap;
    if (e == s || *too_long)
        return false;
    memcpy(dst, s, (size_t)(e - s));
    dst[e - s] = '\0';
    return true;
}

static const char *const field_names[] = {"a name", "an endpoint", "a public key"};

/* A line's fields, in the order they are checked for repeats. */
static const char *field_of(const ac__cluster_node *c, unsigned f)
{
    return f == 0 ? c->name : f == 1 ? c->endpoint : c->public_key;
}

/* qsort's order on pointers into one array: by a field, ties in file
 * order (the array's), so that each repeat sorts right after the listing
 * before it. */
static int by(const void *x, const void *y, unsigned f)
{
    const ac__cluster_node *a = *(ac__cluster_node *const *)x, *b = *(ac__cluster_node *const *)y;
    int c = strcmp(field_of(a, f), field_of(b, f));
    return c != 0 ? c : (a > b) - (a < b);
}

static int by_name(const void *x, const void *y) { return by(x, y, 0); }
static int by_endpoint(const void *x, const void *y) { return by(x, y, 1); }
static int by_key(const void *x, const void *y) { return by(x, y, 2); }

/* The first node of nodes[0..n), in file order, that repeats a name, an
 * endpoint or a key listed before it: its index (n: none; SIZE_MAX: out
 * of memory), the field (*field) and the listing it repeats (*earlier).
 * One sort per field, n log n: comparing each line with all before it
 * took 32,000 lines 5.4 s. */
static size_t first_repeat(const ac__cluster_node *nodes, size_t n, unsigned *field,
                           const ac__cluster_node **earlier)
{
    if (n < 2)
        return n;
    const ac__cluster_node **sorted = malloc(n * sizeof *sorted);
    if (sorted == NULL)
        return SIZE_MAX;
    int (*const order[])(const void *, const void *) = {by_name, by_endpoint, by_key};
    size_t first = n;
    for (unsigned f = 0; f < 3; f++) {
        for (size_t i = 0; i < n; i++)
            sorted[i] = &nodes[i];
        qsort(sorted, n, sizeof *sorted, order[f]);
        for (size_t i = 1; i < n; i++) {
            size_t at = (size_t)(sorted[i] - nodes);
            if (at < first && strcmp(field_of(sorted[i - 1], f), field_of(sorted[i], f)) == 0) {
                first = at;
                *field = f;
                *earlier = sorted[i - 1];
            }
        }
    }
    free(sorted);
    return first;
}

int ac__cluster_parse(const char *text, size_t len, ac__cluster_node **out,
                      size_t *count, char *why, size_t why_len)
{
    *out = NULL;
    *count = 0;
    size_t cap = 0, n = 0, lines_cap = 0;
    ac__cluster_node *nodes = NULL;
    unsigned *lines = NULL;  /* where each node is listed */
    int rc = 0;
    unsigned line = 0;
    for (const char *p = text, *end = text + len; p < end && rc == 0;) {
        line++;
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        const char *content_end = eol ? eol : end;
        if (content_end > p && content_end[-1] == '\r')
            content_end--;
        const char *q = p;
        p = eol ? eol + 1 : end;
        while (q < content_end && (*q == ' ' || *q == '\t'))
            q++;
        /* A comment is a '#' where a field would begin: Z85 keys may
         * hold '#' themselves, names never. */
        if (q == content_end || *q == '#')
            continue;
        if (memchr(q, '\0', (size_t)(content_end - q)) != NULL) {
            rc = fail(why, why_len, line, "a NUL byte");
            break;
        }
        if (n == cap) {
            size_t grown = cap ? 2 * cap : 8;
            ac__cluster_node *bigger = realloc(nodes, grown * sizeof *nodes);
            if (bigger == NULL) {
                rc = AC_ENOMEM;
                break;
            }
            nodes = bigger;
            cap = grown;
        }
        ac__cluster_node *c = &nodes[n];
        char *dst[] = {c->name, c->endpoint, c->public_key};
        size_t caps[] = {sizeof c->name, sizeof c->endpoint, sizeof c->public_key};
        for (unsigned f = 0; f < 3 && rc == 0; f++) {
            bool too_long;
            if (!field(&q, content_end, dst[f], caps[f], &too_long))
                rc = fail(why, why_len, line, too_long ? "%s that is too long" : "%s is missing",
                          field_names[f]);
        }
        if (rc != 0)
            break;
        while (q < content_end && (*q == ' ' || *q == '\t'))
            q++;
        const char *bad = NULL;
        if (q != content_end && *q != '#')
            rc = fail(why, why_len, line, "more than three fields (name, endpoint, public key)");
        else if (ac__cluster_check_name(c->name, &bad) != 0 ||
                 ac__cluster_check_endpoint(c->endpoint, &bad) != 0 ||
                 ac__cluster_check_key(c->public_key, &bad) != 0)
            rc = fail(why, why_len, line, "%s", bad);
        if (rc == 0) {
            if (n == lines_cap) {
                size_t grown = lines_cap ? 2 * lines_cap : 8;
                unsigned *bigger = realloc(lines, grown * sizeof *lines);
                if (bigger == NULL) {
                    rc = AC_ENOMEM;
                    break;
                }
                lines = bigger;
                lines_cap = grown;
            }
            lines[n++] = line;
        }
    }
    /* A repeat among the lines read is reported before a later line's
     * error, as a line-by-line check would have. */
    if (rc != AC_ENOMEM) {
        unsigned f = 0;
        const ac__cluster_node *earlier = NULL;
        size_t at = first_repeat(nodes, n, &f, &earlier);
        if (at == SIZE_MAX) {
            rc = AC_ENOMEM;
        } else if (at < n) {
            const ac__cluster_node *c = &nodes[at];
            if (f == 0)
                rc = fail(why, why_len, lines[at], "node '%s' is listed twice", c->name);
            else if (f == 1)
                rc = fail(why, why_len, lines[at], "endpoint %s is listed twice", c->endpoint);
            else
                rc = fail(why, why_len, lines[at], "'%s' has the public key of '%s'", c->name,
                          earlier->name);
        }
    }
    free(lines);
    if (rc != 0) {
        free(nodes);
        return rc;
    }
    *out = nodes;
    *count = n;
    return 0;
}
