/*
 * test_node_files.c — what a node reads before it starts: the secret key
 * file and the cluster file. Each is refused with a sentence when it is
 * not a regular file (a FIFO would block the start for ever), too large,
 * a directory, or open to others (read, for the secret; written, for the
 * allow-list that the cluster file is); a key is read past any comments;
 * a key that is Z85's characters but does not decode is refused with its
 * line; and a cluster file of tens of thousands of lines is checked for
 * repeats with the same verdicts as line by line.
 */
#include "fixtures.h"
#include "node/cluster.h"
#include "nodes.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

/* ac_node_start's verdict on this configuration; why gets its sentence. */
static int start_with(const char *name, const char *cluster, const char *key, char *why,
                      size_t why_len)
{
    ac_runtime *rt = make_runtime(1);
    ac_node_config cfg = {.name = name, .cluster_file = cluster, .secret_key_file = key};
    why[0] = '\0';
    int rc = ac_node_start(rt, &cfg, why, why_len);
    ac_runtime_destroy(rt);
    return rc;
}

typedef struct setup {
    node_dir d;
    member a;
    char cluster[128];
} setup;

static void open_setup(setup *s)
{
    make_dir(&s->d);
    make_member(&s->d, &s->a, "alpha");
    write_cluster(&s->d, "cluster", &s->a, 1, s->cluster, sizeof s->cluster);
}

static void expect_refused(const char *cluster, const char *key, const char *want)
{
    char why[256];
    cr_expect_eq(start_with("alpha", cluster, key, why, sizeof why), AC_EINVAL, "%s", why);
    cr_expect(strstr(why, want) != NULL, "got \"%s\", want \"%s\"", why, want);
}

Test(node_files, a_fifo_is_refused_at_once_not_waited_on, .timeout = 60)
{
    setup s;
    open_setup(&s);
    char fifo[128], link[128], key_fifo[128];
    snprintf(fifo, sizeof fifo, "%s/cluster.fifo", s.d.path);
    snprintf(link, sizeof link, "%s/cluster.link", s.d.path);
    snprintf(key_fifo, sizeof key_fifo, "%s/key.fifo", s.d.path);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    cr_assert_eq(symlink(fifo, link), 0);
    cr_assert_eq(mkfifo(key_fifo, 0600), 0);
    expect_refused(fifo, s.a.key_file, "not a regular file (a FIFO, a socket or a device)");
    expect_refused(link, s.a.key_file, "not a regular file");
    expect_refused(s.cluster, key_fifo, "the secret key file is not a regular file");
    char pub[AC_NODE_KEY_LEN + 1];
    cr_expect_eq(ac_node_public_key(key_fifo, pub), AC_EINVAL);
    /* A device too. */
    expect_refused("/dev/null", s.a.key_file, "not a regular file");
    remove_dir(&s.d);
}

Test(node_files, a_directory_is_said_to_be_one, .timeout = 60)
{
    setup s;
    open_setup(&s);
    expect_refused(s.d.path, s.a.key_file, "a directory, not a cluster file");
    expect_refused(s.cluster, s.d.path, "the secret key file is a directory");
    remove_dir(&s.d);
}

Test(node_files, a_cluster_file_over_16_mib_is_too_large_not_cut, .timeout = 60)
{
    setup s;
    open_setup(&s);
    /* The node's own line first: cut at 16 MiB, the file would still be
     * read as listing alpha; it is refused whole instead. */
    int fd = open(s.cluster, O_WRONLY | O_APPEND);
    cr_assert_geq(fd, 0);
    cr_assert_eq(ftruncate(fd, (16 << 20) + 1), 0);  /* NUL bytes past the lines */
    close(fd);
    expect_refused(s.cluster, s.a.key_file, "larger than 16 MiB, too large for a cluster file");
    remove_dir(&s.d);
}

Test(node_files, a_cluster_file_anyone_may_write_is_refused, .timeout = 60)
{
    setup s;
    open_setup(&s);
    cr_assert_eq(chmod(s.cluster, 0646), 0);
    expect_refused(s.cluster, s.a.key_file, "anyone may write it, and it lists the keys let in");
    /* Group-writable is taken: with a group per user, that is the owner. */
    cr_assert_eq(chmod(s.cluster, 0664), 0);
    char why[256];
    cr_expect_eq(start_with("alpha", s.cluster, s.a.key_file, why, sizeof why), 0, "%s", why);
    remove_dir(&s.d);
}

Test(node_files, a_key_after_long_comments_is_found, .timeout = 60)
{
    setup s;
    open_setup(&s);
    char secret[256] = "";
    FILE *f = fopen(s.a.key_file, "r");
    cr_assert_not_null(f);
    cr_assert_not_null(fgets(secret, sizeof secret, f));
    fclose(f);
    f = fopen(s.a.key_file, "w");
    for (int i = 0; i < 40; i++)  /* 2,400 bytes of comments */
        fprintf(f, "# %-56s\n", "a comment about this node's secret key, kept by its owner");
    fputs(secret, f);
    fclose(f);
    char pub[AC_NODE_KEY_LEN + 1];
    cr_expect_eq(ac_node_public_key(s.a.key_file, pub), 0);
    cr_expect_str_eq(pub, s.a.public_key);
    char why[256];
    cr_expect_eq(start_with("alpha", s.cluster, s.a.key_file, why, sizeof why), 0, "%s", why);
    remove_dir(&s.d);
}

Test(node_files, a_key_file_past_64_kib_is_refused, .timeout = 60)
{
    setup s;
    open_setup(&s);
    cr_assert_eq(truncate(s.a.key_file, (64 << 10) + 1), 0);
    expect_refused(s.cluster, s.a.key_file, "the secret key file is larger than 64 KiB");
    remove_dir(&s.d);
}

static const char key_a[] = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
/* Z85's characters, 40 of them, but no five of them decode: 82 * 85^4 is
 * past 2^32. */
static const char key_bad[] = "%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%%";

Test(node_files, a_key_that_does_not_decode_is_refused_with_its_line, .timeout = 30)
{
    char text[256], why[128] = "";
    snprintf(text, sizeof text, "alpha tcp://h:1 %s\n# beta next\nbeta tcp://h:2 %s\n", key_a,
             key_bad);
    ac__cluster_node *nodes = NULL;
    size_t n = 0;
    cr_assert_eq(ac__cluster_parse(text, strlen(text), &nodes, &n, why, sizeof why), AC_EINVAL);
    cr_expect_str_eq(why, "line 3: a public key that is not Z85 (it does not decode; "
                          "actorc-keygen prints valid ones)");
    cr_assert_null(nodes);

    ac_runtime *rt = make_runtime(1);
    node_dir d;
    make_dir(&d);
    member a;
    make_member(&d, &a, "alpha");
    char cluster[128];
    write_cluster(&d, "cluster", &a, 1, cluster, sizeof cluster);
    ac_node_config cfg = {.name = "alpha", .cluster_file = cluster, .secret_key_file = a.key_file};
    cr_assert_eq(ac_node_start(rt, &cfg, why, sizeof why), 0, "%s", why);
    cr_expect_eq(ac_node_add_peer(rt, "beta", "tcp://127.0.0.1:1", key_bad), AC_EINVAL);
    ac_runtime_destroy(rt);

    /* As a secret key, it is no key. */
    FILE *f = fopen(a.key_file, "w");
    fprintf(f, "%s\n", key_bad);
    fclose(f);
    char pub[AC_NODE_KEY_LEN + 1];
    cr_expect_eq(ac_node_public_key(a.key_file, pub), AC_EINVAL);
    remove_dir(&d);
}

/* A key of its own for line i, valid Z85. */
static void key_of(unsigned i, char out[AC_NODE_KEY_LEN + 1])
{
    uint8_t bytes[32] = {0};
    memcpy(bytes, &i, sizeof i);
    bytes[31] = 0x5a;
    cr_assert_not_null(zmq_z85_encode(out, bytes, sizeof bytes));
}

/* 32,000 lines, then one that repeats a key, a name or an endpoint of one
 * far above: each is found on its line, naming the listing it repeats,
 * and a repeat is told before a later line's other error. */
Test(node_files, repeats_in_a_long_cluster_file_are_found_on_their_line, .timeout = 120)
{
    enum { LINES = 32000 };
    size_t cap = (size_t)LINES * 100 + 4096;
    char *text = malloc(cap);
    cr_assert_not_null(text);
    size_t at = 0;
    char key[AC_NODE_KEY_LEN + 1];
    for (unsigned i = 0; i < LINES; i++) {
        key_of(i, key);
        at += (size_t)snprintf(text + at, cap - at, "n%u tcp://10.0.%u.%u:7000 %s\n", i,
                               i / 250, i % 250, key);
    }
    ac__cluster_node *nodes = NULL;
    size_t n = 0;
    char why[160] = "";
    cr_assert_eq(ac__cluster_parse(text, at, &nodes, &n, why, sizeof why), 0, "%s", why);
    cr_assert_eq(n, LINES);
    free(nodes);

    struct {
        const char *fmt;
        const char *want;
    } cases[] = {
        {"late tcp://h:1 %s\n", "line 32001: 'late' has the public key of 'n17'"},
        {"n17 tcp://h:1 %s\n", "line 32001: node 'n17' is listed twice"},
        {"late tcp://10.0.0.17:7000 %s\n", "line 32001: endpoint tcp://10.0.0.17:7000 is listed twice"},
        {"late tcp://h:1 %s\nbroken\n", "line 32001: 'late' has the public key of 'n17'"},
    };
    key_of(17, key);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char line[256];
        char fresh[AC_NODE_KEY_LEN + 1];
        key_of(LINES + 1, fresh);
        snprintf(line, sizeof line, cases[c].fmt, c == 0 || c == 3 ? key : fresh);
        size_t len = at + (size_t)snprintf(text + at, cap - at, "%s", line);
        nodes = NULL;
        cr_assert_eq(ac__cluster_parse(text, len, &nodes, &n, why, sizeof why), AC_EINVAL,
                     "case %zu", c);
        cr_expect_str_eq(why, cases[c].want, "case %zu", c);
        cr_assert_null(nodes);
    }
    free(text);
}
