/*
 * keys.c — a node's CURVE keys: making a pair, reading the secret
 * half back (refused when others may read it), deriving the public half;
 * and reading the cluster file, with the same care for what the path is.
 */
#include "node.h"

#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The largest secret key file read: a key and its comments. */
#define MAX_KEY_FILE (64u << 10)
/* The largest cluster file read: 16 MiB holds some 100,000 nodes. */
#define MAX_CLUSTER_FILE (16u << 20)

/* What reading one of a node's files found. */
typedef enum file_verdict {
    FILE_READ,         /* whole, in the buffer */
    FILE_CANNOT_OPEN,  /* errno says why */
    FILE_DIRECTORY,
    FILE_SPECIAL,      /* a FIFO, a socket, a device */
    FILE_MODE,         /* others may read (a secret) or write (the allow-list) it */
    FILE_TOO_LARGE,
    FILE_NO_MEMORY,
} file_verdict;

/* Reads the file at `path` whole (at most `max` bytes) into a new buffer,
 * NUL-terminated (*text, *len; the caller frees it, zeroed if secret).
 * Opened without blocking, and judged by the opened descriptor's fstat: a
 * FIFO, even one swapped in for a symlink between a check and the open,
 * would block the node's start for ever, and a directory or a device is
 * no file of ours. A file whose mode has one of `refused` bits set is
 * not read. */
static file_verdict read_whole(const char *path, size_t max, mode_t refused, char **text,
                               size_t *len)
{
    *text = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return FILE_CANNOT_OPEN;
    struct stat st;
    file_verdict v = FILE_READ;
    if (fstat(fd, &st) != 0)
        v = FILE_CANNOT_OPEN;
    else if (S_ISDIR(st.st_mode))
        v = FILE_DIRECTORY;
    else if (!S_ISREG(st.st_mode))
        v = FILE_SPECIAL;
    else if (st.st_mode & refused)
        v = FILE_MODE;
    else if (st.st_size > (off_t)max)
        v = FILE_TOO_LARGE;
    /* The size is a hint: the file may grow while we read, so the bound
     * is on the bytes read (one more tells a file past it). */
    size_t cap = v == FILE_READ ? (size_t)st.st_size + 1 : 0, n = 0;
    char *buf = v == FILE_READ ? malloc(cap + 1) : NULL;
    if (v == FILE_READ && buf == NULL)
        v = FILE_NO_MEMORY;
    while (v == FILE_READ) {
        if (n == cap) {
            size_t grown = cap * 2 > max + 1 ? max + 1 : cap * 2;
            char *bigger = grown > cap ? malloc(grown + 1) : NULL;
            if (bigger == NULL) {
                v = grown > cap ? FILE_NO_MEMORY : FILE_TOO_LARGE;
                break;
            }
            memcpy(bigger, buf, n);
            sodium_memzero(buf, n);
            free(buf);
            buf = bigger;
            cap = grown;
        }
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            v = FILE_CANNOT_OPEN;
            break;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    int err = errno;
    close(fd);
    if (v == FILE_READ && n > max)
        v = FILE_TOO_LARGE;
    if (v != FILE_READ) {
        if (buf != NULL) {
            sodium_memzero(buf, n);
            free(buf);
        }
        errno = err;
        return v;
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return FILE_READ;
}

/* The code and sentence for a file that read_whole did not read: `said`
 * has one sentence per verdict (NULL: errno's). */
static int refusal(file_verdict v, const char *const said[], const char **why)
{
    if (v == FILE_NO_MEMORY) {
        *why = "out of memory";
        return AC_ENOMEM;
    }
    *why = said[v] ? said[v] : strerror(errno);
    return AC_EINVAL;
}

static const char *const secret_said[] = {
    [FILE_CANNOT_OPEN] = "cannot read the secret key file",
    [FILE_DIRECTORY] = "the secret key file is a directory",
    [FILE_SPECIAL] = "the secret key file is not a regular file (a FIFO, a socket or a device)",
    [FILE_MODE] = "the secret key file may be read by others (chmod 600 it)",
    [FILE_TOO_LARGE] = "the secret key file is larger than 64 KiB: not a key file",
};

/* The cluster file is the allow-list: a file anyone may write would let
 * anyone add a key, so it is refused (group-writable is not: with a
 * group per user, the default on many systems, that group is its owner). */
static const char *const cluster_said[] = {
    [FILE_CANNOT_OPEN] = NULL,  /* errno's */
    [FILE_DIRECTORY] = "a directory, not a cluster file",
    [FILE_SPECIAL] = "not a regular file (a FIFO, a socket or a device)",
    [FILE_MODE] = "anyone may write it, and it lists the keys let in (chmod o-w it)",
    [FILE_TOO_LARGE] = "larger than 16 MiB, too large for a cluster file",
};

/* Reads the Z85 secret key of `path` (its first line that is not a comment).
 * A file others may read is refused, as ssh refuses such a key. */
int ac__node_read_secret(const char *path, char key[AC_NODE_KEY_LEN + 1], const char **why)
{
    char *buf;
    size_t n;
    file_verdict v = read_whole(path, MAX_KEY_FILE, 077, &buf, &n);
    if (v != FILE_READ)
        return refusal(v, secret_said, why);
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
    sodium_memzero(buf, n);
    free(buf);
    return rc;
}

int ac__node_read_cluster(const char *path, char **text, size_t *len, const char **why)
{
    file_verdict v = read_whole(path, MAX_CLUSTER_FILE, S_IWOTH, text, len);
    return v == FILE_READ ? 0 : refusal(v, cluster_said, why);
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
