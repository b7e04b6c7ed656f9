/*
 * actorc-keygen — makes a node's CURVE keypair (docs/NODES.md).
 *
 *     actorc-keygen FILE            writes a new secret key to FILE (mode
 *                                   0600) and prints its public key
 *     actorc-keygen --public FILE   prints the public key of FILE's secret
 *
 * The public key goes into the cluster file; the secret key never leaves
 * FILE and is never printed.
 */
#include <actorc.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int usage(FILE *to)
{
    fputs("usage: actorc-keygen FILE           make a keypair, print its public key\n"
          "       actorc-keygen --public FILE  print the public key of FILE\n"
          "       actorc-keygen -h | --help    print this help\n",
          to);
    return to == stdout ? 0 : 2;
}

int main(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
        return usage(stdout);
    bool public_only = argc == 3 && strcmp(argv[1], "--public") == 0;
    if (!(argc == 2 && argv[1][0] != '-') && !public_only)
        return usage(stderr);
    const char *file = argv[argc - 1];
    char key[AC_NODE_KEY_LEN + 1];
    int rc = public_only ? ac_node_public_key(file, key) : ac_node_keygen(file, key);
    if (rc == AC_EEXIST) {
        fprintf(stderr, "actorc-keygen: %s exists: not overwritten\n", file);
        return 1;
    }
    if (rc != 0) {
        fprintf(stderr, "actorc-keygen: %s: %s\n", file,
                public_only ? "not a secret key this user alone can read"
                            : "cannot be written");
        return 1;
    }
    printf("%s\n", key);
    return 0;
}
