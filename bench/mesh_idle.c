/*
 * mesh_idle — what a full mesh of nodes costs when nothing is sent: N
 * nodes (each its own runtime, in this one process) of one cluster file on
 * 127.0.0.1, every one linked to every other, then left idle for SECONDS.
 * Reports the time until every node saw every other up, the CPU time the
 * idle mesh burns (heartbeats: two links per pair of nodes, each pinging
 * every 200 ms), and the memory it holds, per link; docs/NODES.md uses
 * the figures ("Growing past a static cluster file", measured in
 * bench/README.md).
 *
 *   usage: mesh_idle NODES SECONDS
 *
 * Verifies that every node sees all the others up before and after the
 * idle period (no link was lost while idle).
 */
#include "common.h"

#include <string.h>
#include <unistd.h>

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

/* How many of node i's peers are up. */
static size_t peers_up(ac_runtime *rt, size_t n)
{
    ac_peer_info *all = calloc(n, sizeof *all);
    if (all == NULL)
        bench_fail("mesh_idle: out of memory");
    size_t got = ac_node_peers(rt, all, n), up = 0;
    for (size_t i = 0; i < got && i < n; i++)
        up += all[i].up;
    free(all);
    return up;
}

static bool all_up(ac_runtime **rts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (peers_up(rts[i], n) != n - 1)
            return false;
    return true;
}

int main(int argc, char **argv)
{
    const char *usage = "NODES SECONDS";
    size_t n = (size_t)bench_arg(argc, argv, 1, usage);
    uint64_t seconds = bench_arg(argc, argv, 2, usage);
    if (n < 2 || n > 200)
        bench_fail("mesh_idle: NODES must be 2..200");
    char dir[] = "/tmp/actorc-mesh-XXXXXX", path[128], cmd[160];
    if (mkdtemp(dir) == NULL)
        bench_fail("mesh_idle: mkdtemp");
    snprintf(path, sizeof path, "%s/cluster", dir);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        bench_fail("mesh_idle: %s", path);
    int *held = calloc(n, sizeof *held);
    if (held == NULL)
        bench_fail("mesh_idle: out of memory");
    for (size_t i = 0; i < n; i++) {
        char key[128], pub[AC_NODE_KEY_LEN + 1];
        snprintf(key, sizeof key, "%s/n%zu.key", dir, i);
        bench_check(ac_node_keygen(key, pub), "ac_node_keygen");
        fprintf(f, "n%zu tcp://127.0.0.1:%d %s\n", i, bench_free_port(&held[i]), pub);
    }
    fclose(f);
    for (size_t i = 0; i < n; i++)  /* drawn while all were held: all differ */
        close(held[i]);
    free(held);

    /* One worker each: the mesh's cost is the nodes', not the workers'. */
    ac_runtime **rts = calloc(n, sizeof *rts);
    if (rts == NULL)
        bench_fail("mesh_idle: out of memory");
    ac_config c;
    ac_config_init(&c);
    c.workers = 1;
    for (size_t i = 0; i < n; i++)
        bench_check(ac_runtime_create(&rts[i], &c), "ac_runtime_create");
    long rss0 = bench_rss_bytes();
    double t0 = bench_now();
    for (size_t i = 0; i < n; i++) {
        char name[16], key[128], why[256];
        snprintf(name, sizeof name, "n%zu", i);
        snprintf(key, sizeof key, "%s/n%zu.key", dir, i);
        ac_node_config cfg = {.name = name, .cluster_file = path, .secret_key_file = key};
        if (ac_node_start(rts[i], &cfg, why, sizeof why) != 0)
            bench_fail("mesh_idle: node %s: %s", name, why);
    }
    while (!all_up(rts, n)) {
        if (bench_now() - t0 > 60)
            bench_fail("mesh_idle: the mesh did not come up within 60 s");
        usleep(5000);
    }
    double up_s = bench_now() - t0;
    long rss1 = bench_rss_bytes();
    double cpu0 = cpu_seconds(), w0 = bench_now();
    sleep((unsigned)seconds);
    double cpu = cpu_seconds() - cpu0, wall = bench_now() - w0;
    if (!all_up(rts, n))
        bench_fail("mesh_idle: a link was lost while idle");
    for (size_t i = 0; i < n; i++)
        ac_runtime_destroy(rts[i]);
    free(rts);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        bench_fail("mesh_idle: %s", cmd);

    size_t links = n * (n - 1);  /* one DEALER per node per peer */
    char params[64];
    snprintf(params, sizeof params, "%zu_%" PRIu64, n, seconds);
    bench_report("mesh_idle", params, up_s, (double)links);
    printf("# mesh_idle: %zu nodes, %zu links up in %.3f s; idle %.2f %% of a core "
           "(%.1f us CPU per link per second), %.0f KiB per link\n",
           n, links, up_s, 100.0 * cpu / wall, 1e6 * cpu / wall / (double)links,
           (double)(rss1 - rss0) / 1024.0 / (double)links);
    return 0;
}
