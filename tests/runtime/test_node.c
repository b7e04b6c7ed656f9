/*
 * test_node.c — nodes: keys, the cluster file, authenticated links between
 * runtimes over loopback TCP, and what a node refuses.
 *
 * The runtimes of one test share its process (each is a node of its own,
 * with its own ZeroMQ context); every wait is bounded.
 */
#include "fixtures.h"
#include "node/cluster.h"
#include "nodes.h"
#include "frame_check.h"

#include <dirent.h>
#include <inttypes.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

typedef uint64_t (*stat_fn)(const ac_node_stats *s);
static uint64_t auth_failures(const ac_node_stats *s) { return s->auth_failures; }
static uint64_t protocol_errors(const ac_node_stats *s) { return s->protocol_errors; }

static bool wait_stat(ac_runtime *rt, stat_fn f)
{
    for (uint64_t t0 = now_ms(); now_ms() - t0 < WAIT_MS;) {
        ac_node_stats s;
        cr_assert_eq(ac_runtime_node_stats(rt, &s), 0);
        if (f(&s) > 0)
            return true;
        usleep(2000);
    }
    return false;
}

/* ---- keys -------------------------------------------------------------------- */

Test(node, keygen_writes_a_private_secret_and_returns_its_public_key, .timeout = 30)
{
    node_dir d;
    make_dir(&d);
    char path[96], pub[AC_NODE_KEY_LEN + 1], again[AC_NODE_KEY_LEN + 1];
    snprintf(path, sizeof path, "%s/n.key", d.path);
    cr_assert_eq(ac_node_keygen(path, pub), 0);
    cr_assert_eq(strlen(pub), AC_NODE_KEY_LEN);
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0600);
    cr_assert_eq(ac_node_public_key(path, again), 0);
    cr_assert_str_eq(again, pub);
    /* The secret is not the public key, and an existing file is kept. */
    FILE *f = fopen(path, "r");
    char line[128] = "";
    cr_assert_not_null(fgets(line, sizeof line, f));
    fclose(f);
    cr_assert_eq(strlen(line), AC_NODE_KEY_LEN + 1);
    cr_assert_neq(strncmp(line, pub, AC_NODE_KEY_LEN), 0);
    cr_assert_eq(ac_node_keygen(path, again), AC_EEXIST);
    cr_assert_eq(ac_node_public_key(path, again), 0);
    cr_assert_str_eq(again, pub);
    /* Readable by others: refused, as ssh refuses such a key. */
    cr_assert_eq(chmod(path, 0644), 0);
    cr_assert_eq(ac_node_public_key(path, again), AC_EINVAL);
    remove_dir(&d);
}

/* ---- the cluster file ------------------------------------------------------------ */

static const char key_a[] = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
static const char key_b[] = "Yne@$w-vo<fVvi]a<NY6T1ed:M$fCG*[IaLV{hID";

static int parse(const char *text, ac__cluster_node **out, size_t *n, char *why)
{
    return ac__cluster_parse(text, strlen(text), out, n, why, 128);
}

Test(node, cluster_file_lines_comments_and_blanks, .timeout = 30)
{
    char text[512], why[128];
    snprintf(text, sizeof text,
             "# name endpoint key\n\n   alpha\ttcp://127.0.0.1:7101 %s # first\r\n"
             "beta tcp://10.0.0.2:7102 %s\n   # trailing comment\n",
             key_a, key_b);
    ac__cluster_node *nodes;
    size_t n;
    cr_assert_eq(parse(text, &nodes, &n, why), 0, "%s", why);
    cr_assert_eq(n, 2);
    cr_assert_str_eq(nodes[0].name, "alpha");
    cr_assert_str_eq(nodes[0].endpoint, "tcp://127.0.0.1:7101");
    cr_assert_str_eq(nodes[0].public_key, key_a);
    cr_assert_str_eq(nodes[1].name, "beta");
    cr_assert_str_eq(nodes[1].public_key, key_b);
    free(nodes);
    cr_assert_eq(parse("", &nodes, &n, why), 0);
    cr_assert_eq(n, 0);
}

Test(node, cluster_file_errors_name_their_line, .timeout = 30)
{
    struct {
        const char *text, *why;
    } cases[] = {
        {"alpha tcp://h:1\n", "line 1: a public key is missing"},
        {"alpha\n", "line 1: an endpoint is missing"},
        {"\n\nalpha tcp://h:1 short\n", "line 3: a public key is 40 characters"},
        {"al pha tcp://h:1 %s\n", "line 1: more than three fields"},
        {"alpha tcp://h:1 %s #ok\nbeta tcp://h:2 %s #\n#\n gamma", "line 4: an endpoint is missing"},
        {"alpha! tcp://h:1 %s\n", "line 1: a node name is letters"},
        {"alpha 127.0.0.1:7101 %s\n", "line 1: an endpoint looks like"},
        {"alpha tcp://h:1 %s extra\n", "line 1: more than three fields"},
        {"alpha tcp://h:1 %s\nalpha tcp://h:2 %s\n", "line 2: node 'alpha' is listed twice"},
        {"alpha tcp://h:1 %s\nbeta tcp://h:1 %s\n", "line 2: endpoint tcp://h:1 is listed twice"},
        {"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa tcp://h:1 %s\n",
         "line 1: a name that is too long"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[512], why[128] = "";
        snprintf(text, sizeof text, cases[i].text, key_a, key_b);
        ac__cluster_node *nodes = NULL;
        size_t n = 0;
        cr_assert_eq(parse(text, &nodes, &n, why), AC_EINVAL, "case %zu accepted", i);
        cr_assert_null(nodes);
        cr_assert(strncmp(why, cases[i].why, strlen(cases[i].why)) == 0,
                  "case %zu: got \"%s\", want \"%s\"", i, why, cases[i].why);
    }
    char text[256], why[128];
    snprintf(text, sizeof text, "alpha tcp://h:1 %s\nbeta tcp://h:2 %s\n", key_a, key_a);
    ac__cluster_node *nodes;
    size_t n;
    cr_assert_eq(parse(text, &nodes, &n, why), AC_EINVAL);
    cr_assert_str_eq(why, "line 2: 'beta' has the public key of 'alpha'");
}

Test(node, start_refuses_a_configuration_that_does_not_add_up, .timeout = 30)
{
    node_dir d;
    make_dir(&d);
    member a, b;
    make_member(&d, &a, "alpha");
    make_member(&d, &b, "beta");
    char cluster[128], why[256];
    write_cluster(&d, "cluster", (member[]){a, b}, 2, cluster, sizeof cluster);
    ac_runtime *rt = make_runtime(1);

    ac_node_config cfg = {.name = "gamma", .cluster_file = cluster, .secret_key_file = a.key_file};
    cr_assert_eq(ac_node_start(rt, &cfg, why, sizeof why), AC_EINVAL);
    cr_assert(strstr(why, "does not list node 'gamma'") != NULL, "%s", why);

    cfg.name = "beta";  /* alpha's key */
    cr_assert_eq(ac_node_start(rt, &cfg, why, sizeof why), AC_EINVAL);
    cr_assert(strstr(why, "is not the secret key of 'beta'") != NULL, "%s", why);

    cfg.name = "alpha";
    cfg.cluster_file = "/nonexistent/cluster";
    cr_assert_eq(ac_node_start(rt, &cfg, why, sizeof why), AC_EINVAL);
    cr_assert(strstr(why, "/nonexistent/cluster") != NULL, "%s", why);

    cfg.cluster_file = cluster;
    cr_assert_eq(chmod(a.key_file, 0640), 0);
    cr_assert_eq(ac_node_start(rt, &cfg, why, sizeof why), AC_EINVAL);
    cr_assert(strstr(why, "may be read by others") != NULL, "%s", why);
    cr_assert_eq(chmod(a.key_file, 0600), 0);

    ac_node_stats st = {0};
    cr_assert_eq(ac_runtime_node_stats(rt, &st), AC_ESTATE);
    cr_assert_eq(ac_node_start(rt, &cfg, why, sizeof why), 0, "%s", why);
    cr_assert_eq(ac_node_start(rt, &cfg, why, sizeof why), AC_ESTATE);
    ac_runtime_destroy(rt);
    remove_dir(&d);
}

/* ---- links ---------------------------------------------------------------------- */

Test(node, two_nodes_link_and_learn_each_others_incarnation, .timeout = 60)
{
    pair_of_nodes p;
    /* A long timeout: a loaded machine must not make the live link look
     * lost (losses counts that). */
    start_pair(&p, 10000, 0);  /* waits until each sees the other up */
    ac_peer_info info = {0};
    cr_assert(peer_of(p.ra, "beta", &info));
    cr_assert_str_eq(info.endpoint, p.b.endpoint);
    cr_assert_eq(info.incarnations, 1);
    cr_assert_geq(info.connects, 1);
    cr_assert_eq(info.losses, 0);
    cr_assert_eq(ac_node_peers(p.ra, NULL, 0), 1);
    ac_node_stats st = {0};
    cr_assert_eq(ac_runtime_node_stats(p.ra, &st), 0);
    cr_assert_eq(st.auth_failures + st.protocol_errors + st.malformed + st.impostors +
                     st.misdirected,
                 0);
    stop_pair(&p);
}

/* A node that goes away is seen down; started again it is a new
 * incarnation, and the link comes back by itself. */
Test(node, a_lost_node_is_seen_down_and_its_restart_as_a_new_incarnation, .timeout = 60)
{
    pair_of_nodes p;
    start_pair(&p, 10000, 0);  /* beta's end is seen at once: its link closes */
    uint64_t first = ac_runtime_node(p.rb);
    cr_assert(wait_peer(p.ra, "beta", true, first));
    ac_runtime_destroy(p.rb);
    cr_assert(wait_peer(p.ra, "beta", false, 0), "alpha sees beta down");
    ac_peer_info info = {0};
    cr_assert(peer_of(p.ra, "beta", &info));
    cr_assert_eq(info.losses, 1);

    p.rb = start_node(&p.b, p.cluster);
    uint64_t second = ac_runtime_node(p.rb);
    cr_assert_neq(second, first);
    cr_assert(wait_peer(p.ra, "beta", true, second), "alpha sees beta's new incarnation");
    cr_assert(peer_of(p.ra, "beta", &info));
    cr_assert_eq(info.incarnations, 2);
    cr_assert_geq(info.connects, 2);
    stop_pair(&p);
}

/* A key the cluster file does not name fails the handshake, is counted,
 * and nothing else of the node is affected; added at run time, it is let
 * in, and removed, shut out again. */
Test(node, an_unknown_key_is_refused_until_the_peer_is_added, .timeout = 60)
{
    node_dir d;
    make_dir(&d);
    member a, b;
    make_member(&d, &a, "alpha");
    make_member(&d, &b, "beta");
    char alone[128], both[128];
    write_cluster(&d, "alpha-only", (member[]){a}, 1, alone, sizeof alone);
    write_cluster(&d, "both", (member[]){a, b}, 2, both, sizeof both);
    ac_runtime *ra = start_node(&a, alone);
    ac_runtime *rb = start_node(&b, both);
    cr_assert(wait_stat(ra, auth_failures), "alpha refuses beta's key");
    ac_node_stats before = {0}, after = {0};
    ac_stats st = {0};
    cr_assert_eq(ac_runtime_node_stats(ra, &before), 0);
    ac_runtime_stats(ra, &st);
    cr_assert_eq(ac_runtime_node_stats(ra, &after), 0);  /* beta keeps trying */
    cr_assert(st.node_auth_failures >= before.auth_failures &&
              st.node_auth_failures <= after.auth_failures, "in the runtime's totals too");
    ac_peer_info p = {0};
    cr_assert_not(peer_of(ra, "beta", &p));
    cr_assert(peer_of(rb, "alpha", &p));
    cr_assert_not(p.up);

    cr_assert_eq(ac_node_add_peer(ra, "beta", b.endpoint, b.public_key), 0);
    cr_assert_eq(ac_node_add_peer(ra, "beta", b.endpoint, b.public_key), AC_EEXIST);
    cr_assert_eq(ac_node_add_peer(ra, "gamma", b.endpoint, key_a), AC_EEXIST);
    cr_assert_eq(ac_node_add_peer(ra, "bad name!", "tcp://h:1", key_a), AC_EINVAL);
    cr_assert(wait_peer(ra, "beta", true, ac_runtime_node(rb)), "added, beta is let in");
    cr_assert(wait_peer(rb, "alpha", true, ac_runtime_node(ra)));

    cr_assert_eq(ac_node_remove_peer(ra, "beta"), 0);
    cr_assert_eq(ac_node_remove_peer(ra, "beta"), AC_ENOTFOUND);
    cr_assert_not(peer_of(ra, "beta", &p));
    cr_assert(wait_peer(rb, "alpha", false, 0), "removed, beta is shut out");
    ac_runtime_destroy(rb);
    ac_runtime_destroy(ra);
    remove_dir(&d);
}

/* Bytes that are not ZMTP are a protocol error, counted; the node's links
 * are not affected. */
Test(node, a_peer_speaking_garbage_is_refused_and_counted, .timeout = 60)
{
    pair_of_nodes p;
    start_pair(&p, 10000, 0);  /* a live link is not lost on a loaded machine */
    cr_assert(wait_peer(p.ra, "beta", true, ac_runtime_node(p.rb)));

    int port = atoi(strrchr(p.a.endpoint, ':') + 1);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    cr_assert_eq(connect(s, (struct sockaddr *)&to, sizeof to), 0);
    static const char junk[] = "GET / HTTP/1.1\r\nHost: alpha\r\n\r\nthis is not ZMTP at all";
    cr_assert_eq(write(s, junk, sizeof junk), (ssize_t)sizeof junk);
    cr_assert(wait_stat(p.ra, protocol_errors), "the garbage is counted");
    close(s);

    ac_peer_info info = {0};
    cr_assert(peer_of(p.ra, "beta", &info));
    cr_assert(info.up);
    cr_assert_eq(info.losses, 0);
    stop_pair(&p);
}

/* ---- many peers ------------------------------------------------------------------------ */

/* Writes a cluster file of `self`, `fakes` peers that never answer
 * (loopback addresses nobody listens on, keys nobody holds), and `last`
 * unless NULL; returns its path in out. */
static void write_big_cluster(node_dir *d, const member *self, int fakes, const member *last,
                              char *out, size_t cap)
{
    snprintf(out, cap, "%s/big", d->path);
    FILE *f = fopen(out, "w");
    if (f == NULL)
        return;
    fprintf(f, "%s %s %s\n", self->name, self->endpoint, self->public_key);
    for (int i = 0; i < fakes; i++) {
        char pub[41], sec[41];
        zmq_curve_keypair(pub, sec);
        fprintf(f, "n%d tcp://127.0.2.%d:%d %s\n", i, 1 + i % 250, 1000 + i / 250, pub);
    }
    if (last != NULL)
        fprintf(f, "%s %s %s\n", last->name, last->endpoint, last->public_key);
    fclose(f);
}

/* libzmq caps a context at 1,023 sockets and a node takes three a peer:
 * with 400 peers, those past ~340 were never linked, and nothing said so.
 * beta, the last of alpha's 400 (the others never answer), is linked both
 * ways. */
Test(node, a_node_with_400_peers_links_to_the_last, .timeout = 120)
{
    enum { PEERS = 400 };
    struct rlimit rl;
    cr_assert_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < 6 * PEERS)
        cr_skip_test("RLIMIT_NOFILE's hard limit (%lu) is too low for %d peers",
                     (unsigned long)rl.rlim_max, PEERS);
    node_dir d;
    make_dir(&d);
    member a, b;
    make_member(&d, &a, "alpha");
    make_member(&d, &b, "beta");
    char big[128], pair[128];
    write_big_cluster(&d, &a, PEERS - 1, &b, big, sizeof big);
    write_cluster(&d, "pair", (member[]){a, b}, 2, pair, sizeof pair);
    ac_runtime *ra = start_node(&a, big);
    ac_runtime *rb = start_node(&b, pair);
    static ac_peer_info all[PEERS];
    cr_assert_eq(ac_node_peers(ra, all, PEERS), PEERS);
    cr_assert_str_eq(all[PEERS - 1].name, "beta");
    for (uint64_t t0 = now_ms(); now_ms() - t0 < WAIT_MS && !all[PEERS - 1].up; usleep(2000))
        cr_assert_eq(ac_node_peers(ra, all, PEERS), PEERS);
    cr_assert(all[PEERS - 1].up, "alpha links to its 400th peer");
    cr_assert(wait_peer(rb, "alpha", true, ac_runtime_node(ra)), "and beta to alpha");
    ac_runtime_destroy(rb);
    ac_runtime_destroy(ra);
    remove_dir(&d);
}

/* In a child whose descriptors are few (RLIMIT_NOFILE 128): a node of more
 * peers than it can link is refused with a reason, not started to leave
 * them unlinked; one that fits starts, and peers added past what it can
 * hold are AC_ENOMEM and not added. The child says what failed on stderr
 * and in its exit status. */
static int few_descriptors(node_dir *d)
{
    struct rlimit rl = {128, 128};
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 10;
    member a;
    snprintf(a.name, sizeof a.name, "alpha");
    snprintf(a.key_file, sizeof a.key_file, "%s/alpha.key", d->path);
    snprintf(a.endpoint, sizeof a.endpoint, "tcp://127.0.0.1:%d", free_port());
    if (ac_node_keygen(a.key_file, a.public_key) != 0)
        return 11;
    char big[128], why[256] = "";
    ac_runtime *rt = NULL;
    if (ac_runtime_create(&rt, NULL) != 0)
        return 12;
    ac_node_config cfg = {.name = "alpha", .cluster_file = big, .secret_key_file = a.key_file};
    write_big_cluster(d, &a, 60, NULL, big, sizeof big);
    int rc = ac_node_start(rt, &cfg, why, sizeof why);
    if (rc != AC_ENOMEM || strstr(why, "file descriptors") == NULL) {
        fprintf(stderr, "60 peers in 128 descriptors: %d (%s)\n", rc, why);
        return 13;
    }
    write_big_cluster(d, &a, 10, NULL, big, sizeof big);
    if ((rc = ac_node_start(rt, &cfg, why, sizeof why)) != 0) {
        fprintf(stderr, "10 peers in 128 descriptors: %d (%s)\n", rc, why);
        return 14;
    }
    int added = 0;
    for (; added < 40; added++) {
        char name[16], endpoint[64], pub[41], sec[41];
        snprintf(name, sizeof name, "m%d", added);
        snprintf(endpoint, sizeof endpoint, "tcp://127.0.3.1:%d", 1000 + added);
        zmq_curve_keypair(pub, sec);
        if ((rc = ac_node_add_peer(rt, name, endpoint, pub)) != 0)
            break;
    }
    if (rc != AC_ENOMEM || added == 0) {
        fprintf(stderr, "after %d peers added: %d\n", added, rc);
        return 15;
    }
    if (ac_node_peers(rt, NULL, 0) != (size_t)(10 + added)) {
        fprintf(stderr, "%zu peers, not %d\n", ac_node_peers(rt, NULL, 0), 10 + added);
        return 16;
    }
    ac_runtime_destroy(rt);
    return 0;
}

Test(node, more_peers_than_descriptors_is_an_error_not_silence, .timeout = 60)
{
    node_dir d;
    make_dir(&d);
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0)
        _exit(few_descriptors(&d));
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status), "the child ended by signal %d", WTERMSIG(status));
    cr_assert_eq(WEXITSTATUS(status), 0, "the child failed step %d (its stderr says)",
                 WEXITSTATUS(status));
    remove_dir(&d);
}

/* ---- what a node refuses from an authenticated peer ------------------------------- */

static uint64_t malformed(const ac_node_stats *s) { return s->malformed; }
static uint64_t impostors(const ac_node_stats *s) { return s->impostors; }
static uint64_t misdirected(const ac_node_stats *s) { return s->misdirected; }

/* A batch of one record (op, body) from `from` to `to`, numbered after
 * every batch built before it (a receiver takes each number once). */
static size_t record_batch(uint8_t *buf, uint64_t from, uint64_t to, uint8_t op,
                           const uint8_t *body, uint32_t len)
{
    static uint64_t seq;
    size_t at = 0;
    uint32_t magic = 0x314E4341u, rlen = 1 + len;
    uint16_t version = 2, records = 1;
    seq++;
    memcpy(buf + at, &magic, 4), at += 4;
    memcpy(buf + at, &version, 2), at += 2;
    memcpy(buf + at, &records, 2), at += 2;
    memcpy(buf + at, &from, 8), at += 8;
    memcpy(buf + at, &to, 8), at += 8;
    memcpy(buf + at, &seq, 8), at += 8;
    memcpy(buf + at, &rlen, 4), at += 4;
    buf[at++] = op;
    memcpy(buf + at, body, len);
    return at + len;
}

/* A batch with one HELLO naming `name`, from `from` to `to`. */
static size_t hello_batch(uint8_t *buf, uint64_t from, uint64_t to, const char *name)
{
    uint8_t body[1 + 64];
    size_t n = strlen(name);
    body[0] = (uint8_t)n;
    memcpy(body + 1, name, n);
    return record_batch(buf, from, to, 1 /* HELLO */, body, (uint32_t)(1 + n));
}

/* beta's key in a hand-made client: it passes the handshake, and then what
 * it sends is checked like anything a peer sends. */
Test(node, an_authenticated_peer_cannot_lie_or_send_garbage, .timeout = 60)
{
    node_dir d;
    make_dir(&d);
    member a, b, g;
    make_member(&d, &a, "alpha");
    make_member(&d, &b, "beta");
    make_member(&d, &g, "gamma");
    char cluster[128];
    write_cluster(&d, "cluster", (member[]){a, b, g}, 3, cluster, sizeof cluster);
    ac_runtime *ra = start_node(&a, cluster);

    char secret[64] = "";
    FILE *f = fopen(b.key_file, "r");
    cr_assert_not_null(fgets(secret, sizeof secret, f));
    fclose(f);
    void *ctx = zmq_ctx_new();
    void *s = zmq_socket(ctx, ZMQ_DEALER);
    int zero = 0;
    zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, a.public_key, AC_NODE_KEY_LEN);
    zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, b.public_key, AC_NODE_KEY_LEN);
    zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, secret, AC_NODE_KEY_LEN);
    cr_assert_eq(zmq_connect(s, a.endpoint), 0);

    uint8_t buf[128];
    size_t n = hello_batch(buf, 0x1234, 0, "gamma");  /* beta's key, gamma's name */
    cr_assert_eq(zmq_send(s, buf, n, 0), (int)n);
    cr_assert(wait_stat(ra, impostors));
    n = hello_batch(buf, 0x1234, ac_runtime_node(ra) ^ 1, "beta");  /* an old incarnation */
    cr_assert_eq(zmq_send(s, buf, n, 0), (int)n);
    cr_assert(wait_stat(ra, misdirected));
    n = hello_batch(buf, 0x1234, 0, "beta");
    cr_assert_eq(zmq_send(s, buf, n - 1, 0), (int)n - 1);  /* its last byte cut off */
    cr_assert(wait_stat(ra, malformed));

    ac_peer_info p = {0};
    cr_assert(peer_of(ra, "gamma", &p));
    cr_assert_eq(p.node, 0, "gamma never greeted");
    cr_assert(peer_of(ra, "beta", &p));
    cr_assert_eq(p.node, 0, "nor did beta, in a well-formed batch");
    n = hello_batch(buf, 0x1234, 0, "beta");
    cr_assert_eq(zmq_send(s, buf, n, 0), (int)n);
    for (uint64_t t0 = now_ms(); now_ms() - t0 < WAIT_MS && p.node == 0; usleep(2000))
        cr_assert(peer_of(ra, "beta", &p));
    cr_assert_eq(p.node, 0x1234, "a true greeting is believed");
    ac_node_stats st = {0};
    cr_assert_eq(ac_runtime_node_stats(ra, &st), 0);
    cr_assert_eq(st.impostors, 1);
    cr_assert_eq(st.misdirected, 1);
    cr_assert_eq(st.malformed, 1);

    /* The same batch again (its number taken already: one read late from a
     * replaced connection), and an ACK of the wrong size. */
    cr_assert_eq(zmq_send(s, buf, n, 0), (int)n);
    for (uint64_t t0 = now_ms(); now_ms() - t0 < WAIT_MS && st.misdirected < 2; usleep(2000))
        cr_assert_eq(ac_runtime_node_stats(ra, &st), 0);
    cr_assert_eq(st.misdirected, 2, "a number taken already");
    uint8_t ack[17] = {0};
    n = record_batch(buf, 0x1234, ac_runtime_node(ra), 9 /* ACK */, ack, sizeof ack);
    cr_assert_eq(zmq_send(s, buf, n, 0), (int)n);
    for (uint64_t t0 = now_ms(); now_ms() - t0 < WAIT_MS && st.malformed < 2; usleep(2000))
        cr_assert_eq(ac_runtime_node_stats(ra, &st), 0);
    cr_assert_eq(st.malformed, 2, "an ACK is 16 bytes");
    zmq_close(s);
    zmq_ctx_term(ctx);
    ac_runtime_destroy(ra);
    remove_dir(&d);
}

static uint64_t forged(const ac_node_stats *s) { return s->forged; }

/* A MONITOR DOWN body: watcher, who, ref, reason, code. */
static uint32_t down_body(uint8_t *b, const ac_addr *watcher, const ac_addr *who, uint64_t ref,
                          uint32_t reason, uint32_t code)
{
    b[0] = 3;  /* DOWN */
    memcpy(b + 1, watcher->bytes, 32);
    memcpy(b + 33, who->bytes, 32);
    memcpy(b + 65, &ref, 8);
    memcpy(b + 73, &reason, 4);
    memcpy(b + 77, &code, 4);
    return 81;
}

/* An address of node `node`. */
static ac_addr addr_on(uint64_t node, uint8_t fill)
{
    ac_addr a;
    memset(a.bytes, fill, sizeof a.bytes);
    memcpy(a.bytes + AC_ADDR_NODE_OFFSET, &node, 8);
    return a;
}

/* A hand-made beta, up on alpha's side (a CURVE server at beta's endpoint
 * for alpha's link, a client with beta's key greeting alpha): what it
 * says about actors is checked against where they live. A down about an
 * actor of another node than the sender is refused and counted; the true
 * down of a monitored actor of beta's reaches its watcher. */
Test(node, a_forged_down_is_refused_and_a_true_one_delivered, .timeout = 60)
{
    node_dir d;
    make_dir(&d);
    member a, b;
    make_member(&d, &a, "alpha");
    make_member(&d, &b, "beta");
    char cluster[128];
    write_cluster(&d, "cluster", (member[]){a, b}, 2, cluster, sizeof cluster);
    ac_runtime *ra = start_node(&a, cluster);

    char secret[64] = "";
    FILE *f = fopen(b.key_file, "r");
    cr_assert_not_null(fgets(secret, sizeof secret, f));
    fclose(f);
    void *ctx = zmq_ctx_new();
    int zero = 0, one = 1;
    void *server = zmq_socket(ctx, ZMQ_ROUTER);
    zmq_setsockopt(server, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt(server, ZMQ_CURVE_SERVER, &one, sizeof one);
    zmq_setsockopt(server, ZMQ_CURVE_SECRETKEY, secret, AC_NODE_KEY_LEN);
    cr_assert_eq(zmq_bind(server, b.endpoint), 0);
    void *s = zmq_socket(ctx, ZMQ_DEALER);
    zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, a.public_key, AC_NODE_KEY_LEN);
    zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, b.public_key, AC_NODE_KEY_LEN);
    zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, secret, AC_NODE_KEY_LEN);
    cr_assert_eq(zmq_connect(s, a.endpoint), 0);
    const uint64_t beta = 0x1234, alpha = ac_runtime_node(ra);
    uint8_t buf[256], body[128];
    size_t n = hello_batch(buf, beta, 0, "beta");
    cr_assert_eq(zmq_send(s, buf, n, 0), (int)n);
    cr_assert(wait_peer(ra, "beta", true, beta), "alpha sees the hand-made beta up");

    /* An inbox of alpha monitors an actor of beta's: the ADD reaches the
     * server, with the reference the down must carry. */
    ac_ctx *cx = ac_runtime_ctx(ra);
    ac_inbox *ib;
    cr_assert_eq(ac_inbox_create(cx, &ib), 0);
    ac_addr target = addr_on(beta, 0x5a);
    uint64_t ref = 0;
    cr_assert_eq(ac_monitor(cx, ac_inbox_addr(ib), &target, &ref), 0);
    bool added = false;
    for (uint64_t t0 = now_ms(); !added && now_ms() - t0 < WAIT_MS;) {
        zmq_pollitem_t it = {server, 0, ZMQ_POLLIN, 0};
        if (zmq_poll(&it, 1, 100) <= 0)
            continue;
        uint8_t id[256], got[256];
        int idn = zmq_recv(server, id, sizeof id, 0);
        int len = zmq_recv(server, got, sizeof got, 0);
        cr_assert(idn > 0 && len > 0);
        /* header, record length and op, sub-op, watcher, target, ref */
        added = len == 32 + 5 + 1 + 32 + 32 + 8 && got[36] == 6 && got[37] == 1 &&
                memcmp(got + 38, ac_inbox_addr(ib)->bytes, 32) == 0 &&
                memcmp(got + 70, target.bytes, 32) == 0 && memcmp(got + 102, &ref, 8) == 0;
    }
    cr_assert(added, "the monitor was asked of beta");

    /* A down about an actor of alpha's own, from beta: forged. */
    ac_addr not_betas = addr_on(alpha, 0x5a);
    uint32_t bl = down_body(body, ac_inbox_addr(ib), &not_betas, ref, AC_REASON_FAILED, 1);
    n = record_batch(buf, beta, alpha, 6, body, bl);
    cr_assert_eq(zmq_send(s, buf, n, 0), (int)n);
    cr_assert(wait_stat(ra, forged));
    ac_envelope *e = NULL;
    cr_assert_eq(ac_inbox_recv(cx, ib, AC_TAG_DOWN, 100, &e), AC_ETIMEDOUT, "no down from it");

    /* The true one. */
    bl = down_body(body, ac_inbox_addr(ib), &target, ref, AC_REASON_FAILED, 3);
    n = record_batch(buf, beta, alpha, 6, body, bl);
    cr_assert_eq(zmq_send(s, buf, n, 0), (int)n);
    cr_assert_eq(ac_inbox_recv(cx, ib, AC_TAG_DOWN, WAIT_MS, &e), 0);
    const ac_down *dn = ac_envelope_payload(e);
    cr_assert(ac_addr_eq(&dn->who, &target));
    cr_assert_eq(dn->ref, ref);
    cr_assert_eq(dn->reason, AC_REASON_FAILED);
    cr_assert_eq(dn->code, 3);
    ac_envelope_free(cx, e);

    /* A control record of an unknown sub-op, and one cut short: malformed. */
    body[0] = 9;
    n = record_batch(buf, beta, alpha, 6, body, bl);
    cr_assert_eq(zmq_send(s, buf, n, 0), (int)n);
    n = record_batch(buf, beta, alpha, 5, body, 10);  /* a LINK record, truncated */
    cr_assert_eq(zmq_send(s, buf, n, 0), (int)n);
    ac_node_stats st = {0};
    for (uint64_t t0 = now_ms(); now_ms() - t0 < WAIT_MS && st.malformed < 2; usleep(2000))
        cr_assert_eq(ac_runtime_node_stats(ra, &st), 0);
    cr_assert_eq(st.malformed, 2);
    cr_assert_eq(st.forged, 1);

    ac_inbox_destroy(cx, ib);
    zmq_close(s);
    zmq_close(server);
    zmq_ctx_term(ctx);
    ac_runtime_destroy(ra);
    remove_dir(&d);
}

/* ---- actorc-keygen ------------------------------------------------------------------ */

static int run(const char *cmd, char *out, size_t cap)
{
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = '\0';
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

Test(node, actorc_keygen_makes_a_key_and_prints_only_the_public_half, .timeout = 30)
{
    node_dir d;
    make_dir(&d);
    char cmd[256], out[256], again[256];
    snprintf(cmd, sizeof cmd, "%s %s/n.key 2>&1", KEYGEN_BIN, d.path);
    cr_assert_eq(run(cmd, out, sizeof out), 0, "%s", out);
    cr_assert_eq(strlen(out), AC_NODE_KEY_LEN + 1, "one line: %s", out);
    char path[96], pub[AC_NODE_KEY_LEN + 1];
    snprintf(path, sizeof path, "%s/n.key", d.path);
    cr_assert_eq(ac_node_public_key(path, pub), 0);
    cr_assert_eq(strncmp(out, pub, AC_NODE_KEY_LEN), 0);
    snprintf(cmd, sizeof cmd, "%s --public %s/n.key 2>&1", KEYGEN_BIN, d.path);
    cr_assert_eq(run(cmd, again, sizeof again), 0);
    cr_assert_str_eq(again, out);
    snprintf(cmd, sizeof cmd, "%s %s/n.key 2>&1", KEYGEN_BIN, d.path);
    cr_assert_eq(run(cmd, out, sizeof out), 1);
    cr_assert(strstr(out, "exists: not overwritten") != NULL, "%s", out);
    snprintf(cmd, sizeof cmd, "%s 2>&1", KEYGEN_BIN);
    cr_assert_eq(run(cmd, out, sizeof out), 2);
    cr_assert(strstr(out, "usage: actorc-keygen") != NULL);
    remove_dir(&d);
}

/* ---- docs/NODES.md's walkthrough, as written ---------------------------------------- */

/* Copies into `path` the first block of docs/NODES.md in language `lang`:
 * the first word of its info string (the words after it, as in "```c
 * program norun", say how tests/docs/check.sh checks the block). */
static void extract(const char *lang, const char *path)
{
    FILE *in = fopen("docs/NODES.md", "r");
    cr_assert_not_null(in, "run from the repository's root");
    FILE *out = fopen(path, "w");
    char line[512], fence[16];
    int n = snprintf(fence, sizeof fence, "```%s", lang);
    bool inside = false, done = false;
    while (!done && fgets(line, sizeof line, in)) {
        if (!inside)
            inside = strncmp(line, fence, (size_t)n) == 0 && (line[n] == ' ' || line[n] == '\n');
        else if (strcmp(line, "```\n") == 0)
            done = true;
        else
            fputs(line, out);
    }
    fclose(in);
    fclose(out);
    cr_assert(done, "docs/NODES.md has a ```%s block", lang);
}

Test(node, the_walkthrough_of_docs_nodes_md_runs_as_written, .timeout = 120)
{
    node_dir d;
    make_dir(&d);
    char sh[128], c[128], root[1024], cmd[4096], out[1024];
    snprintf(sh, sizeof sh, "%s/keys.sh", d.path);
    snprintf(c, sizeof c, "%s/node.c", d.path);
    extract("sh", sh);
    extract("c", c);
    cr_assert_not_null(getcwd(root, sizeof root));
    snprintf(cmd, sizeof cmd,
             "cd '%s' && %s -Wall -Wextra -Werror -I'%s/runtime/include' node.c "
             "'%s/%s/libactorc.a' %s -o node 2>&1",
             d.path, TEST_CC, root, root, BUILD_DIR, TEST_LINK);
    cr_assert_eq(run(cmd, out, sizeof out), 0, "the C block builds: %s", out);
    snprintf(cmd, sizeof cmd, "cd '%s' && PATH='%s/%s':\"$PATH\" sh -e keys.sh 2>&1", d.path, root,
             BUILD_DIR);
    cr_assert_eq(run(cmd, out, sizeof out), 0, "the sh block runs: %s", out);
    /* The block's fixed ports may be taken on a shared machine (by another
     * run of this suite, a sanitizer build's say): the nodes listen on
     * free ones instead. */
    snprintf(cmd, sizeof cmd,
             "cd '%s' && grep -q ':7101 ' cluster && grep -q ':7102 ' cluster && "
             "sed -i 's/:7101 /:%d /; s/:7102 /:%d /' cluster 2>&1",
             d.path, free_port(), free_port());
    cr_assert_eq(run(cmd, out, sizeof out), 0, "the cluster file names ports 7101 and 7102: %s",
                 out);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && (./node alpha > alpha.out 2>&1 & ./node beta > beta.out 2>&1; b=$?; "
             "wait $!; a=$?; cat alpha.out beta.out; test $a = 0 && test $b = 0)",
             d.path);
    int rc = run(cmd, out, sizeof out);
    cr_assert_eq(rc, 0, "both nodes see each other: %s", out);
    cr_assert(strstr(out, "alpha sees beta up\n") != NULL, "%s", out);
    cr_assert(strstr(out, "beta sees alpha up\n") != NULL, "%s", out);
    remove_dir(&d);
}

/* ---- messages across nodes ------------------------------------------------------------ */

/* The Counter of fixtures.h with a codec, as generated code would have:
 * an item is its sender (u32) and its sequence number (u64). */
static long item_encode(const ac_envelope *e, uint8_t *buf, size_t cap)
{
    if (e->tag != COUNTER_ITEM)
        return 0;
    const item *m = ac_envelope_payload((ac_envelope *)e);
    ac_wire_out out = {buf, cap, 0};
    ac_wire_u32(&out, m->sender);
    ac_wire_u64(&out, m->seq);
    return (long)out.len;
}

static int item_decode(ac_ctx *cx, uint32_t tag, const uint8_t *buf, size_t len,
                       ac_envelope **out)
{
    ac_wire_in in = {buf, len, 0, false, 0};
    if (tag > COUNTER_FAIL)
        return AC_EINVAL;
    ac_envelope *e = ac_envelope_new(cx, tag, tag == COUNTER_ITEM ? sizeof(item) : 0);
    if (e == NULL)
        return AC_ENOMEM;
    if (tag == COUNTER_ITEM) {
        item *m = ac_envelope_payload(e);
        m->sender = ac_wire_get_u32(&in);
        m->seq = ac_wire_get_u64(&in);
    }
    if (in.bad || in.pos != len) {
        ac_envelope_free(cx, e);
        return AC_EINVAL;
    }
    *out = e;
    return 0;
}

static ac_actor_type wired_counter;

static const ac_actor_type *wired(void)
{
    wired_counter = counter_type;
    wired_counter.encode = item_encode;
    wired_counter.decode = item_decode;
    return &wired_counter;
}

static int send_wired(ac_ctx *cx, const ac_addr *to, const ac_actor_type *type, uint32_t sender,
                      uint64_t seq)
{
    ac_envelope *e = ac_envelope_new(cx, COUNTER_ITEM, sizeof(item));
    item *m = ac_envelope_payload(e);
    m->sender = sender;
    m->seq = seq;
    return ac_send_checked(cx, to, type, e);
}

/* Messages sent to an actor of another node arrive, all of them, in the
 * order they were sent, decoded by the target's type. */
Test(node, messages_reach_an_actor_of_another_node_in_order, .timeout = 60)
{
    pair_of_nodes p;
    start_pair(&p, 10000, 0);
    const ac_actor_type *type = wired();
    ac_addr there;
    cr_assert_eq(ac_spawn(ac_runtime_ctx(p.rb), type, NULL, &there), 0);
    cr_assert_eq(ac_addr_node(&there), ac_runtime_node(p.rb));
    ac_ctx *cx = ac_runtime_ctx(p.ra);
    enum { N = 20000 };
    for (uint64_t i = 0; i < N; i++)
        cr_assert_eq(send_wired(cx, &there, type, 1, i), 0);
    ac_peer_info pa = {0}, pb = {0};
    bool all = wait_for(&g_items, N);
    cr_assert(peer_of(p.ra, "beta", &pa));
    cr_assert(all, "%lu of %d arrived (link losses %lu, drops %lu)",
              (unsigned long)atomic_load(&g_items), N, (unsigned long)pa.losses,
              (unsigned long)pa.drops);
    ac_runtime_run(p.rb);
    cr_assert_eq(send_tag(ac_runtime_ctx(p.rb), &there, COUNTER_STOP_SELF), 0);
    cr_assert(wait_for(&g_stops, 1));
    cr_assert_eq(atomic_load(&g_fifo_violations), 0, "FIFO from one sender");
    cr_assert_eq(atomic_load(&g_stopped_items), N);
    cr_assert(peer_of(p.ra, "beta", &pa));
    cr_assert(peer_of(p.rb, "alpha", &pb));
    cr_assert_eq(pa.sent, N);
    cr_assert_eq(pb.received, N);
    cr_assert_leq(pa.batches, N, "batched");
    cr_assert_eq(pa.queued + pa.drops + pa.refused, 0);
    ac_stats st = {0};
    ac_runtime_stats(p.ra, &st);
    cr_assert_geq(st.sends, N);
    stop_pair(&p);
}

/* A peer removed and added again is linked again and reached: its other
 * end, which took our batches before, takes the new ones (they go on
 * numbering past the old). */
Test(node, a_peer_removed_and_added_again_is_reached, .timeout = 60)
{
    pair_of_nodes p;
    start_pair(&p, 10000, 0);
    const ac_actor_type *type = wired();
    ac_addr there;
    cr_assert_eq(ac_spawn(ac_runtime_ctx(p.rb), type, NULL, &there), 0);
    ac_ctx *cx = ac_runtime_ctx(p.ra);
    cr_assert_eq(send_wired(cx, &there, type, 1, 0), 0);
    cr_assert(wait_for(&g_items, 1));
    cr_assert_eq(ac_node_remove_peer(p.ra, "beta"), 0);
    cr_assert(wait_peer(p.rb, "alpha", false, 0), "beta is told");
    cr_assert_eq(ac_node_add_peer(p.ra, "beta", p.b.endpoint, p.b.public_key), 0);
    cr_assert(wait_peer(p.ra, "beta", true, ac_runtime_node(p.rb)), "alpha links to beta again");
    cr_assert(wait_peer(p.rb, "alpha", true, ac_runtime_node(p.ra)), "and beta to alpha");
    cr_assert_eq(send_wired(cx, &there, type, 1, 1), 0);
    cr_assert(wait_for(&g_items, 2), "beta takes what alpha sends now");
    ac_node_stats st = {0};
    cr_assert_eq(ac_runtime_node_stats(p.rb, &st), 0);
    cr_assert_eq(st.misdirected, 0, "nothing refused as taken already");
    stop_pair(&p);
}

/* Without the type there is no encoding; a node nobody links to, or an
 * actor that is gone there, is a dead letter; a type the target is not of
 * is refused by the target's node. */
Test(node, what_cannot_be_delivered_across_nodes_is_refused_and_counted, .timeout = 60)
{
    pair_of_nodes p;
    start_pair(&p, 10000, 0);
    const ac_actor_type *type = wired();
    ac_ctx *cb = ac_runtime_ctx(p.rb), *cx = ac_runtime_ctx(p.ra);
    ac_addr there;
    cr_assert_eq(ac_spawn(cb, type, NULL, &there), 0);

    cr_assert_eq(send_item(cx, &there, 1, 0), AC_EINVAL, "ac_send cannot encode");
    ac_addr nowhere = there;
    nowhere.bytes[AC_ADDR_NODE_OFFSET] ^= 0x55;
    ac_stats st = {0};
    cr_assert_eq(send_wired(cx, &nowhere, type, 1, 0), AC_ENOTFOUND);
    ac_runtime_stats(p.ra, &st);
    cr_assert_eq(st.dead_letters, 1);

    ac_actor_type other = *type;
    other.name = "tests.Other";
    cr_assert_eq(send_wired(cx, &there, &other, 1, 0), 0);  /* accepted here... */
    cr_assert(wait_stat(p.rb, malformed), "...refused there");

    ac_addr gone;
    cr_assert_eq(ac_spawn(cb, type, NULL, &gone), 0);
    cr_assert_eq(send_tag(cb, &gone, COUNTER_STOP_SELF), 0);
    cr_assert(wait_for(&g_stops, 1));
    ac_runtime_run(p.rb);
    ac_runtime_stats(p.rb, &st);
    uint64_t before = st.dead_letters;
    cr_assert_eq(send_wired(cx, &gone, type, 1, 0), 0);
    for (uint64_t t0 = now_ms(); now_ms() - t0 < WAIT_MS && st.dead_letters == before;
         usleep(2000))
        ac_runtime_stats(p.rb, &st);
    cr_assert_eq(st.dead_letters, before + 1, "a dead letter on the target's node");
    cr_assert_eq(atomic_load(&g_items), 0);
    stop_pair(&p);
}

typedef struct flood {
    ac_runtime *rt;
    const ac_addr *to;
    const ac_actor_type *type;
    uint32_t sender;
    uint64_t accepted, refused, other;
} flood;

static void *flood_main(void *arg)
{
    flood *f = arg;
    ac_ctx *cx = ac_runtime_ctx(f->rt);
    for (uint64_t i = 0; i < 20000; i++) {
        int rc = send_wired(cx, f->to, f->type, f->sender, f->accepted);
        if (rc == 0)
            f->accepted++;
        else if (rc == AC_EFULL)
            f->refused++;
        else
            f->other++;
    }
    return NULL;
}

/* A peer's queue is bounded: a send past it is AC_EFULL and counted, and
 * every send accepted arrives (the link stays up), in order. */
Test(node, a_full_peer_queue_refuses_sends_and_loses_nothing_it_accepted, .timeout = 90)
{
    pair_of_nodes p;
    start_pair(&p, 10000, 2);
    const ac_actor_type *type = wired();
    ac_addr there;
    cr_assert_eq(ac_spawn(ac_runtime_ctx(p.rb), type, NULL, &there), 0);

    flood f[2] = {{p.ra, &there, type, 1, 0, 0, 0}, {p.ra, &there, type, 2, 0, 0, 0}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        cr_assert_eq(pthread_create(&t[i], NULL, flood_main, &f[i]), 0);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    uint64_t accepted = f[0].accepted + f[1].accepted, refused = f[0].refused + f[1].refused;
    cr_assert_eq(f[0].other + f[1].other, 0);
    cr_assert_eq(accepted + refused, 40000);
    cr_assert(wait_for(&g_items, accepted));
    ac_runtime_run(p.rb);
    cr_assert_eq(send_tag(ac_runtime_ctx(p.rb), &there, COUNTER_STOP_SELF), 0);
    cr_assert(wait_for(&g_stops, 1));
    cr_assert_eq(atomic_load(&g_stopped_items), accepted);
    cr_assert_eq(atomic_load(&g_fifo_violations), 0);
    ac_peer_info pa = {0};
    cr_assert(peer_of(p.ra, "beta", &pa));
    cr_assert_eq(pa.refused, refused);
    cr_assert_eq(pa.sent, accepted);
    ac_stats st = {0};
    ac_runtime_stats(p.ra, &st);
    cr_assert_eq(st.mailbox_drops, refused, "each refusal counted");
    cr_assert_eq(st.node_refused, refused, "in the node's totals too");
    stop_pair(&p);
}

/* A Counter whose items travel with BLOB bytes of padding (no decoder: the
 * peer below never reads them); RECORD: the MSG record of one, its head
 * (AC__MSG_HEAD_SIZE) and the encoding. */
enum { BLOB = 32 << 10, RECORD = 49 + BLOB + 12 };

static long blob_encode(const ac_envelope *e, uint8_t *buf, size_t cap)
{
    if (cap >= BLOB + 12)
        memset(buf, 0, BLOB + 12);
    return e->tag == COUNTER_ITEM ? BLOB + 12 : 0;
}

/* A peer that stops reading: the hand-made beta's server takes one batch
 * and no more, so what alpha sends backs up in alpha. A send finds the
 * queue full once it holds queue_bytes — not queue_bound messages, which
 * at 32 KiB each would be 2 GiB — and is refused, counted where a full
 * queue's refusals are. */
Test(node, a_peer_queue_is_bounded_in_bytes_too, .timeout = 120)
{
    node_dir d;
    make_dir(&d);
    member a, b;
    make_member(&d, &a, "alpha");
    make_member(&d, &b, "beta");
    char cluster[128], why[256];
    write_cluster(&d, "cluster", (member[]){a, b}, 2, cluster, sizeof cluster);
    ac_config c;
    ac_config_init(&c);
    c.workers = 1;
    ac_runtime *ra = NULL;
    cr_assert_eq(ac_runtime_create(&ra, &c), 0);
    enum { QUEUE_BYTES = 1 << 20 };
    ac_node_config cfg = {.name = "alpha", .cluster_file = cluster, .secret_key_file = a.key_file,
                          .timeout_ms = 60000, .queue_bytes = QUEUE_BYTES};
    cr_assert_eq(ac_node_start(ra, &cfg, why, sizeof why), 0, "%s", why);

    char secret[64] = "";
    FILE *f = fopen(b.key_file, "r");
    cr_assert_not_null(fgets(secret, sizeof secret, f));
    fclose(f);
    void *ctx = zmq_ctx_new();
    int zero = 0, one = 1, small = 64 << 10;
    void *server = zmq_socket(ctx, ZMQ_ROUTER);
    zmq_setsockopt(server, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt(server, ZMQ_RCVHWM, &one, sizeof one);
    zmq_setsockopt(server, ZMQ_RCVBUF, &small, sizeof small);
    zmq_setsockopt(server, ZMQ_CURVE_SERVER, &one, sizeof one);
    zmq_setsockopt(server, ZMQ_CURVE_SECRETKEY, secret, AC_NODE_KEY_LEN);
    cr_assert_eq(zmq_bind(server, b.endpoint), 0);
    void *s = zmq_socket(ctx, ZMQ_DEALER);
    zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, a.public_key, AC_NODE_KEY_LEN);
    zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, b.public_key, AC_NODE_KEY_LEN);
    zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, secret, AC_NODE_KEY_LEN);
    cr_assert_eq(zmq_connect(s, a.endpoint), 0);
    const uint64_t beta = 0x1234;
    uint8_t buf[256];
    size_t n = hello_batch(buf, beta, 0, "beta");
    cr_assert_eq(zmq_send(s, buf, n, 0), (int)n);
    cr_assert(wait_peer(ra, "beta", true, beta), "alpha sees the hand-made beta up");

    ac_actor_type blob = counter_type;
    blob.encode = blob_encode;
    ac_addr there = addr_on(beta, 0x5a);
    ac_ctx *cx = ac_runtime_ctx(ra);
    /* What libzmq takes first: alpha's pipe (1,000 batches of one item)
     * and the sockets' buffers; then the queue. A queue bounded only by
     * count would take every send below. */
    enum { TRIES = 4000 };
    uint64_t accepted = 0, refused = 0;
    ac_peer_info pa = {0};
    for (int i = 0; i < TRIES && refused == 0; i++) {
        int rc = send_wired(cx, &there, &blob, 1, (uint64_t)i);
        cr_assert(rc == 0 || rc == AC_EFULL, "%d", rc);
        accepted += rc == 0;
        refused += rc == AC_EFULL;
        if (refused == 0)
            continue;
        cr_assert(peer_of(ra, "beta", &pa));
        cr_assert_leq(pa.queued_bytes, QUEUE_BYTES, "the queue stays within its bytes");
        cr_assert_gt(pa.queued_bytes + RECORD, QUEUE_BYTES, "and is refused only at it");
    }
    cr_assert_eq(refused, 1, "a send is refused before %d (%lu accepted)", TRIES,
                 (unsigned long)accepted);
    cr_assert_eq(pa.refused, 1);
    cr_assert_eq(pa.queued_bytes, pa.queued * RECORD);
    ac_stats st = {0};
    ac_runtime_stats(ra, &st);
    cr_assert_eq(st.mailbox_drops, 1, "counted as a full queue's refusal is");
    cr_assert_eq(st.node_refused, 1);

    zmq_close(s);
    zmq_close(server);
    zmq_ctx_term(ctx);
    ac_runtime_destroy(ra);
    remove_dir(&d);
}

/* ---- the node's counters in the runtime's statistics ---------------------------------- */

/* rt's node totals in ac_runtime_stats are its one peer's counters (p)
 * and its own. */
static void expect_totals(ac_runtime *rt, const ac_peer_info *p)
{
    ac_stats st = {0};
    ac_node_stats ns = {0};
    ac_runtime_stats(rt, &st);
    cr_assert_eq(ac_runtime_node_stats(rt, &ns), 0);
    cr_assert_eq(st.node_sent, p->sent);
    cr_assert_eq(st.node_received, p->received);
    cr_assert_eq(st.node_bytes_sent, p->bytes_sent);
    cr_assert_eq(st.node_bytes_received, p->bytes_received);
    cr_assert_eq(st.node_batches, p->batches);
    cr_assert_eq(st.node_drops, p->drops);
    cr_assert_eq(st.node_refused, p->refused);
    cr_assert_eq(st.node_reconnects, p->connects - 1);
    cr_assert_eq(st.node_malformed, ns.malformed);
    cr_assert_eq(st.node_auth_failures, ns.auth_failures);
}

/* Destroys rt with AC_STATS=1, its stderr caught into out. */
static void destroy_with_stats(ac_runtime *rt, char *out, size_t cap)
{
    char path[] = "/tmp/actorc-stats-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    fflush(stderr);
    int saved = dup(2);
    cr_assert_geq(saved, 0);
    cr_assert_eq(dup2(fd, 2), 2);
    setenv("AC_STATS", "1", 1);
    ac_runtime_destroy(rt);
    unsetenv("AC_STATS");
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ssize_t n = pread(fd, out, cap - 1, 0);
    out[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(path);
}

/* After known traffic both ways, each node's totals in ac_runtime_stats
 * are its peer's counters; AC_STATS=1 prints the peer's line and the
 * node's; a peer removed leaves its traffic in the totals. */
Test(node, the_peers_counters_add_up_in_the_runtimes_statistics, .timeout = 60)
{
    pair_of_nodes p;
    start_pair(&p, 10000, 0);
    const ac_actor_type *type = wired();
    ac_addr there, here;
    cr_assert_eq(ac_spawn(ac_runtime_ctx(p.rb), type, NULL, &there), 0);
    cr_assert_eq(ac_spawn(ac_runtime_ctx(p.ra), type, NULL, &here), 0);
    enum { TO_B = 500, TO_A = 300 };
    for (uint64_t i = 0; i < TO_B; i++)
        cr_assert_eq(send_wired(ac_runtime_ctx(p.ra), &there, type, 1, i), 0);
    for (uint64_t i = 0; i < TO_A; i++)
        cr_assert_eq(send_wired(ac_runtime_ctx(p.rb), &here, type, 2, i), 0);
    cr_assert(wait_for(&g_items, TO_B + TO_A));

    ac_peer_info pa = {0}, pb = {0};
    cr_assert(peer_of(p.ra, "beta", &pa));
    cr_assert(peer_of(p.rb, "alpha", &pb));
    cr_assert_eq(pa.sent, TO_B);
    cr_assert_eq(pa.received, TO_A);
    cr_assert_eq(pb.sent, TO_A);
    cr_assert_eq(pb.received, TO_B);
    cr_assert_gt(pa.bytes_sent, 0);
    cr_assert_gt(pa.batches, 0);
    expect_totals(p.ra, &pa);
    expect_totals(p.rb, &pb);

    char out[4096], want[512];
    destroy_with_stats(p.rb, out, sizeof out);
    snprintf(want, sizeof want,
             " sent %" PRIu64 " received %" PRIu64 " bytes_sent %" PRIu64
             " bytes_received %" PRIu64 " batches %" PRIu64 " queued 0 queued_bytes 0 drops 0 refused 0"
             " in_flight ",
             pb.sent, pb.received, pb.bytes_sent, pb.bytes_received, pb.batches);
    char *line = strstr(out, "actorc stats peer alpha up ");
    cr_assert_not_null(line, "a line for the peer: %s", out);
    cr_assert_not_null(strstr(line, want), "with its counters (%s): %s", want, out);
    /* Every record beta sent was a message: all of them forwarded. */
    snprintf(want, sizeof want,
             "actorc stats node beta sent %" PRIu64 " received %" PRIu64 " forwarded %" PRIu64
             " bytes_sent ",
             pb.sent, pb.received, (uint64_t)TO_A);
    cr_assert_not_null(strstr(out, want), "and the node's totals (%s): %s", want, out);

    cr_assert(wait_peer(p.ra, "beta", false, 0));
    cr_assert_eq(ac_node_remove_peer(p.ra, "beta"), 0);
    ac_stats st = {0};
    for (uint64_t t0 = now_ms(); now_ms() - t0 < 200; usleep(2000))  /* the thread forgets it */
        ac_runtime_stats(p.ra, &st);
    cr_assert_eq(st.node_sent, pa.sent, "a removed peer's traffic stays in the totals");
    cr_assert_eq(st.node_received, pa.received);
    cr_assert_eq(st.node_bytes_sent, pa.bytes_sent);
    cr_assert_eq(st.node_batches, pa.batches);
    ac_runtime_destroy(p.ra);
    remove_dir(&p.d);
}

/* ---- the frame parser's fuzz corpus ------------------------------------------------------ */

/* What waits in a peer's queue when its link goes is lost, and counted:
 * in the peer's drops and, each message, as a dead letter. */
Test(node, what_a_lost_link_discards_is_counted_as_dead_letters, .timeout = 90)
{
    pair_of_nodes p;
    start_pair(&p, 10000, 0);
    const ac_actor_type *type = wired();
    ac_addr there;
    cr_assert_eq(ac_spawn(ac_runtime_ctx(p.rb), type, NULL, &there), 0);
    ac_stats before = {0}, after = {0};
    ac_runtime_stats(p.ra, &before);
    /* Sends while beta goes: some leave, some are queued when the link
     * closes, the rest find beta down (dead letters at the send). */
    flood f = {p.ra, &there, type, 1, 0, 0, 0};
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, flood_main, &f), 0);
    ac_runtime_destroy(p.rb);
    p.rb = NULL;
    pthread_join(t, NULL);
    cr_assert(wait_peer(p.ra, "beta", false, 0));
    ac_peer_info pa = {0};
    cr_assert(peer_of(p.ra, "beta", &pa));
    ac_runtime_stats(p.ra, &after);
    cr_assert_eq(f.accepted + f.refused + f.other, 20000);
    cr_assert_eq(f.refused, 0, "the default bound is not reached");
    cr_assert_eq(pa.queued, 0);
    cr_assert_eq(pa.sent + pa.drops, f.accepted, "each accepted message sent or dropped");
    cr_assert_eq(after.dead_letters - before.dead_letters, pa.drops + f.other,
                 "every drop and every refused send a dead letter");
    stop_pair(&p);
}

/* Every input libFuzzer kept (tests/fuzz/frame-corpus: seeds and what
 * reached new code) still keeps frame_check's properties, from an
 * exact-size copy, so that AddressSanitizer sees any read past its end. */
Test(node, the_frame_parsers_fuzz_corpus_replays, .timeout = 60)
{
    DIR *d = opendir("tests/fuzz/frame-corpus");
    cr_assert_not_null(d, "run from the repository's root");
    int count = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        char path[512];
        snprintf(path, sizeof path, "tests/fuzz/frame-corpus/%s", e->d_name);
        FILE *f = fopen(path, "rb");
        cr_assert_not_null(f, "%s", path);
        uint8_t buf[8192];
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        uint8_t *copy = malloc(n ? n : 1);
        memcpy(copy, buf, n);
        cr_assert_eq(frame_check(copy, n), 0, "%s", path);
        free(copy);
        count++;
    }
    closedir(d);
    cr_assert_geq(count, 7, "the seeds at least");
}
