/*
 * node_keys.c — a node's CURVE keys: making a pair, reading the secret
 * half back (refused when others may read it), deriving the public half.
 */
#include "node.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Reads the Z85 secret key of `path` (its first line that is not a comment).
 * A file others may read is refused, as ssh refuses such a key. */
int ac__node_read_secret(const char *path, char key[AC_NODE_KEY_LEN + 1], const char **why)
{
    *why = "cannot read the secret key file";
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return AC_EINVAL;
    struct stat st;
    char buf[512];
    ssize_t n = -1;
    if (fstat(fd, &st) == 0) {
        if (st.st_mode & 077)
            *why = "the secret key file may be read by others (chmod 600 it)";
        else
            n = read(fd, buf, sizeof buf - 1);
    }
    close(fd);
    if (n < 0)
        return AC_EINVAL;
    buf[n] = '\0';
    int rc = AC_EINVAL;
    *why = "the secret key file holds no Z85 key";
    char *save = NULL;
    for (char *line = strtok_r(buf, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        line[strcspn(line, "\r")] = '\0';
        if (line[0] == '#' || line[0] == '\0')
            continue;
        const char *bad;
        if (ac__cluster_check_key(line, &bad) == 0) {
            memcpy(key, line, AC_NODE_KEY_LEN + 1);
            rc = 0;
        }
        break;
    }
    sodium_memzero(buf, sizeof buf);
    return rc;
}

int ac_node_keygen(const char *secret_file, char public_key[AC_NODE_KEY_LEN + 1])
{
    if (secret_file == NULL || public_key == NULL)
        return AC_EINVAL;
    char secret[AC_NODE_KEY_LEN + 1];
    if (zmq_curve_keypair(public_key, secret) != 0)
        return AC_EINVAL;  /* a libzmq without CURVE */
    int fd = open(secret_file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    int rc = 0;
    if (fd < 0) {
        rc = errno == EEXIST ? AC_EEXIST : AC_EINVAL;
    } else {
        char line[AC_NODE_KEY_LEN + 2];
        memcpy(line, secret, AC_NODE_KEY_LEN);
        line[AC_NODE_KEY_LEN] = '\n';
        if (write(fd, line, sizeof line - 1) != (ssize_t)(sizeof line - 1))
            rc = AC_EINVAL;
        sodium_memzero(line, sizeof line);
        if (close(fd) != 0)
            rc = AC_EINVAL;
        if (rc != 0)
            unlink(secret_file);
    }
    sodium_memzero(secret, sizeof secret);
    return rc;
}

int ac_node_public_key(const char *secret_file, char public_key[AC_NODE_KEY_LEN + 1])
{
    if (secret_file == NULL || public_key == NULL)
        return AC_EINVAL;
    char secret[AC_NODE_KEY_LEN + 1];
    const char *why;
    int rc = ac__node_read_secret(secret_file, secret, &why);
    if (rc == 0 && zmq_curve_public(public_key, secret) != 0)
        rc = AC_EINVAL;
    sodium_memzero(secret, sizeof secret);
    return rc;
}
