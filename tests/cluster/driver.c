/*
 * driver.c — starting, speaking to and stopping the cluster suite's node
 * processes (driver.h).
 */
#include "driver.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/wait.h>

cluster cl;

static const char *const names[CLUSTER_MAX] = {"alpha", "beta", "gamma", "delta"};

uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* ---- processes -------------------------------------------------------------------- */

static void close_fds(cnode *n)
{
    if (n->to >= 0)
        close(n->to);
    if (n->from >= 0)
        close(n->from);
    n->to = n->from = -1;
    n->len = 0;
}

/* Waits up to wait_ms for node n to exit; returns its status, or -1 if it
 * is still running. */
static int reap(cnode *n, uint64_t wait_ms)
{
    for (uint64_t t0 = now_ms();;) {
        int status = 0;
        pid_t r = waitpid(n->pid, &status, WNOHANG);
        if (r == n->pid || (r < 0 && errno == ECHILD)) {
            n->pid = 0;
            close_fds(n);
            return status;
        }
        if (now_ms() - t0 >= wait_ms)
            return -1;
        usleep(1000);
    }
}

static void spawn(cnode *n)
{
    int in[2], out[2];
    cr_assert_eq(pipe2(in, O_CLOEXEC), 0);
    cr_assert_eq(pipe2(out, O_CLOEXEC), 0);
    char timeout[16];
    snprintf(timeout, sizeof timeout, "%u", (unsigned)cl.timeout_ms);
    pid_t parent = getpid();
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_geq(pid, 0, "fork");
    if (pid == 0) {
        /* Only async-signal-safe calls until exec. The node dies with the
         * test process, whatever ends it; SIGPIPE (ignored here) and the
         * signal mask are not the node's to inherit. */
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_DFL);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
            _exit(127);
        if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0)
            _exit(127);
        execl(CLUSTERNODE_BIN, CLUSTERNODE_BIN, n->m.name, n->cluster_file, n->m.key_file, timeout,
              (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    n->pid = pid;
    n->to = in[1];
    n->from = out[0];
    n->len = 0;
}

/* Reads one line of node n into line (without its newline) within
 * wait_ms; false if none came. */
static bool read_line(cnode *n, uint64_t wait_ms, char *line, size_t cap)
{
    uint64_t t0 = now_ms();
    for (;;) {
        char *nl = memchr(n->buf, '\n', n->len);
        if (nl != NULL) {
            size_t k = (size_t)(nl - n->buf);
            snprintf(line, cap, "%.*s", (int)k, n->buf);
            n->len -= k + 1;
            memmove(n->buf, nl + 1, n->len);
            return true;
        }
        uint64_t spent = now_ms() - t0;
        if (spent >= wait_ms || n->len == sizeof n->buf || n->from < 0)
            return false;
        struct pollfd p = {.fd = n->from, .events = POLLIN};
        int r = poll(&p, 1, (int)(wait_ms - spent));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        ssize_t got = read(n->from, n->buf + n->len, sizeof n->buf - n->len);
        if (got <= 0)
            return false;  /* it exited */
        n->len += (size_t)got;
    }
}

/* ---- the cluster ------------------------------------------------------------------ */

/* A port for each node, all different: held open together while they are
 * drawn (one at a time, as free_port draws, the kernel may give one twice). */
static void distinct_ports(int ports[CLUSTER_MAX])
{
    int s[CLUSTER_MAX];
    for (int i = 0; i < CLUSTER_MAX; i++) {
        s[i] = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof a;
        cr_assert_eq(bind(s[i], (struct sockaddr *)&a, sizeof a), 0);
        cr_assert_eq(getsockname(s[i], (struct sockaddr *)&a, &len), 0);
        ports[i] = ntohs(a.sin_port);
    }
    for (int i = 0; i < CLUSTER_MAX; i++)
        close(s[i]);
}

static void write_outsiders(void)
{
    FILE *f = fopen(cl.outsiders, "w");
    cr_assert_not_null(f);
    for (int i = 0; i <= cl.size; i++)
        fprintf(f, "%s %s %s\n", cl.n[i].m.name, cl.n[i].m.endpoint, cl.n[i].m.public_key);
    fclose(f);
}

void cluster_up(int size, uint32_t timeout_ms)
{
    static bool registered;
    if (!registered) {
        cr_assert_eq(atexit(cluster_down), 0);
        registered = true;
    }
    /* A node that dies must fail a write, not kill the test. */
    signal(SIGPIPE, SIG_IGN);
    cr_assert(size >= 2 && size < CLUSTER_MAX, "one slot stays for the outsider");
    memset(&cl, 0, sizeof cl);
    cl.size = size;
    cl.timeout_ms = timeout_ms;
    make_dir(&cl.d);
    cl.have_dir = true;
    member ms[CLUSTER_MAX];
    node_dir d = cl.d;  /* not cl's own: gcc cannot tell that it does not overlap cl.n */
    int ports[CLUSTER_MAX];
    distinct_ports(ports);
    for (int i = 0; i < CLUSTER_MAX; i++) {
        cl.n[i].to = cl.n[i].from = -1;
        make_member(&d, &cl.n[i].m, names[i]);
        snprintf(cl.n[i].m.endpoint, sizeof cl.n[i].m.endpoint, "tcp://127.0.0.1:%d", ports[i]);
        ms[i] = cl.n[i].m;
        cl.n[i].cluster_file = i < size ? cl.file : cl.outsiders;
    }
    write_cluster(&cl.d, "cluster", ms, size, cl.file, sizeof cl.file);
    snprintf(cl.outsiders, sizeof cl.outsiders, "%s/outsiders", cl.d.path);
    write_outsiders();
    for (int i = 0; i < size; i++)
        node_start(i);
    char reply[REPLY_MAX];
    for (int i = 0; i < size; i++)
        for (int j = 0; j < size; j++)
            if (j != i)
                node_cmd(i, reply, "await %s up %d", names[j], WAIT_MS);
}

void cluster_down(void)
{
    for (int i = 0; i < CLUSTER_MAX; i++) {
        cnode *n = &cl.n[i];
        if (n->pid > 0) {
            kill(n->pid, SIGKILL);
            waitpid(n->pid, NULL, 0);
            n->pid = 0;
        }
        if (n->to > 0 || n->from > 0)
            close_fds(n);
    }
    /* No assertion here: this also runs at exit, after one failed. */
    if (cl.have_dir) {
        cl.have_dir = false;
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", cl.d.path);
        if (system(cmd) != 0)
            fprintf(stderr, "cluster: could not remove %s\n", cl.d.path);
    }
}

void cluster_stop(void)
{
    for (int i = 0; i < CLUSTER_MAX; i++)
        if (cl.n[i].pid > 0)
            node_quit(i);
    cluster_down();
}

uint64_t node_start(int i)
{
    cnode *n = &cl.n[i];
    cr_assert_eq(n->pid, 0, "%s is running", n->m.name);
    spawn(n);
    char line[REPLY_MAX] = "";
    cr_assert(read_line(n, WAIT_MS, line, sizeof line), "%s started within %d ms", n->m.name,
              WAIT_MS);
    cr_assert(strncmp(line, "ready ", 6) == 0, "%s: %s", n->m.name, line);
    n->node = field_hex(line, "node");
    for (int s = 0; s < STATIONS; s++) {
        char key[16];
        snprintf(key, sizeof key, " s%d=", s);
        const char *at = strstr(line, key);
        cr_assert_not_null(at, "%s: %s", n->m.name, line);
        snprintf(n->station[s], sizeof n->station[s], "%.*s", (int)(sizeof n->station[s] - 1),
                 at + strlen(key));
    }
    return n->node;
}

void node_start_outsider(void)
{
    node_start(cl.size);
}

void node_signal(int i, int sig)
{
    cnode *n = &cl.n[i];
    cr_assert_gt(n->pid, 0, "%s is running", n->m.name);
    cr_assert_eq(kill(n->pid, sig), 0);
    if (sig == SIGKILL)
        cr_assert_neq(reap(n, WAIT_MS), -1, "%s died", n->m.name);
}

void node_quit(int i)
{
    cnode *n = &cl.n[i];
    char line[REPLY_MAX] = "";
    node_send(i, "quit");
    bool bye = read_line(n, WAIT_MS, line, sizeof line);
    int status = reap(n, WAIT_MS);
    if (status == -1) {
        kill(n->pid, SIGKILL);
        reap(n, WAIT_MS);
    }
    cr_assert(bye && strcmp(line, "ok bye") == 0, "%s said bye: %s", cl.n[i].m.name, line);
    cr_assert(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "%s exits 0 (status %#x)", cl.n[i].m.name, (unsigned)status);
}

/* ---- commands --------------------------------------------------------------------- */

void node_send(int i, const char *fmt, ...)
{
    cnode *n = &cl.n[i];
    char line[REPLY_MAX];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    cr_assert(k > 0 && (size_t)k < sizeof line - 1);
    line[k++] = '\n';
    cr_assert_gt(n->pid, 0, "%s is running", n->m.name);
    cr_assert_eq(write(n->to, line, (size_t)k), (ssize_t)k, "%s takes a command", n->m.name);
}

bool node_reply(int i, uint64_t wait_ms, char reply[REPLY_MAX])
{
    cnode *n = &cl.n[i];
    reply[0] = '\0';
    cr_assert(read_line(n, wait_ms + WAIT_MS, reply, REPLY_MAX), "%s answered within %lu ms",
              n->m.name, (unsigned long)(wait_ms + WAIT_MS));
    return strncmp(reply, "ok", 2) == 0;
}

void node_cmd(int i, char reply[REPLY_MAX], const char *fmt, ...)
{
    char line[REPLY_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    node_send(i, "%s", line);
    /* An await waits as long as it was told to (its fourth word). */
    char name[64], state[8];
    unsigned long wait_ms = 0;
    if (sscanf(line, "await %63s %7s %lu", name, state, &wait_ms) != 3)
        wait_ms = 0;
    cr_assert(node_reply(i, wait_ms, reply), "%s: %s -> %s", cl.n[i].m.name, line, reply);
}

static const char *value_of(const char *reply, const char *key)
{
    size_t k = strlen(key);
    for (const char *at = strstr(reply, key); at != NULL; at = strstr(at + 1, key))
        if ((at == reply || at[-1] == ' ') && at[k] == '=')
            return at + k + 1;
    cr_assert(false, "no %s= in \"%s\"", key, reply);
    return NULL;
}

uint64_t field(const char *reply, const char *key)
{
    const char *v = value_of(reply, key);
    return v ? strtoull(v, NULL, 10) : 0;
}

uint64_t field_hex(const char *reply, const char *key)
{
    const char *v = value_of(reply, key);
    return v ? strtoull(v, NULL, 16) : 0;
}

int64_t field_int(const char *reply, const char *key)
{
    const char *v = value_of(reply, key);
    return v ? strtoll(v, NULL, 10) : 0;
}

const char *field_word(const char *reply, const char *key, char *out, size_t cap)
{
    const char *v = value_of(reply, key);
    size_t n = v ? strcspn(v, " ") : 0;
    snprintf(out, cap, "%.*s", (int)n, v ? v : "");
    return out;
}

uint64_t wait_bound_ms(void)
{
    return WAIT_MS + cl.timeout_ms;
}

bool wait_report(int i, int station, int stream, const char *key, uint64_t want,
                 char reply[REPLY_MAX])
{
    for (uint64_t t0 = now_ms();; usleep(5000)) {
        node_cmd(i, reply, "report %d %d", station, stream);
        if (field(reply, key) >= want)
            return true;
        if (now_ms() - t0 >= wait_bound_ms())
            return false;
    }
}

bool wait_stat(int i, const char *key, uint64_t want, char reply[REPLY_MAX])
{
    for (uint64_t t0 = now_ms();; usleep(5000)) {
        node_cmd(i, reply, "stats");
        if (field(reply, key) >= want)
            return true;
        if (now_ms() - t0 >= wait_bound_ms())
            return false;
    }
}

bool wait_seen(int i, int w, const char *key, uint64_t want, char reply[REPLY_MAX])
{
    for (uint64_t t0 = now_ms();; usleep(1000)) {
        node_cmd(i, reply, "seen %d", w);
        if (field(reply, key) >= want)
            return true;
        if (now_ms() - t0 >= wait_bound_ms())
            return false;
    }
}
