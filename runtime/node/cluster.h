/*
 * cluster.h — the cluster file: which nodes make up a system, where each
 * listens, and the public key it authenticates with (docs/NODES.md).
 *
 *     # name    endpoint              CURVE public key (Z85, 40 characters)
 *     alpha     tcp://127.0.0.1:7101  rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7
 *
 * One node a line, fields separated by blanks; a `#` where a field would
 * begin starts a comment (inside a key it is one of Z85's characters).
 */
#ifndef AC_NODE_CLUSTER_H
#define AC_NODE_CLUSTER_H

#include "actorc.h"

#include <stddef.h>

typedef struct ac__cluster_node {
    char name[AC_NODE_NAME_MAX + 1];
    char endpoint[AC_NODE_ENDPOINT_MAX + 1];
    char public_key[AC_NODE_KEY_LEN + 1];
} ac__cluster_node;

/* Parses text[0..len) into a new array (*out, *count; free() it). On a
 * malformed file returns AC_EINVAL and writes "line N: what" into why;
 * AC_ENOMEM when out of memory. No node is returned twice by name, key or
 * endpoint. */
int ac__cluster_parse(const char *text, size_t len, ac__cluster_node **out,
                      size_t *count, char *why, size_t why_len);

/* Validation shared with ac_node_add_peer: 0, or AC_EINVAL with a reason. */
int ac__cluster_check_name(const char *name, const char **why);
int ac__cluster_check_endpoint(const char *endpoint, const char **why);
int ac__cluster_check_key(const char *key, const char **why);

#endif /* AC_NODE_CLUSTER_H */
