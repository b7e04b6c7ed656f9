/*
 * cluster.c — parsing the cluster file (cluster.h). Leaf code: it reads
 * text and checks its fields, and knows nothing of sockets or peers.
 */
#include "cluster.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int ac__cluster_parse(const char *text, size_t len, ac__cluster_node **out,
                      size_t *count, char *why, size_t why_len)
{
    *out = NULL;
    *count = 0;
    size_t cap = 0, n = 0;
    ac__cluster_node *nodes = NULL;
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
        for (size_t i = 0; i < n && rc == 0; i++) {
            if (strcmp(nodes[i].name, c->name) == 0)
                rc = fail(why, why_len, line, "node '%s' is listed twice", c->name);
            else if (strcmp(nodes[i].endpoint, c->endpoint) == 0)
                rc = fail(why, why_len, line, "endpoint %s is listed twice", c->endpoint);
            else if (strcmp(nodes[i].public_key, c->public_key) == 0)
                rc = fail(why, why_len, line, "'%s' has the public key of '%s'", c->name,
                          nodes[i].name);
        }
        if (rc == 0)
            n++;
    }
    if (rc != 0) {
        free(nodes);
        return rc;
    }
    *out = nodes;
    *count = n;
    return 0;
}
