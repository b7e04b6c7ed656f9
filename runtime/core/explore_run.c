/*
 * explore_run.c — ac_explore: one scenario under many seeded schedules,
 * stopping at the first that fails and saying how to replay it
 * (docs/RUNTIME.md, "Systematic testing"). Only the public API, beside
 * the step count of the first run.
 */
#include <actorc.h>

#include "runtime.h"

#include <stdio.h>

void ac_explore_options_init(ac_explore_options *o)
{
    if (o == NULL)
        return;
    *o = (ac_explore_options){.first_seed = 1, .seeds = 100, .strategy = AC_SCHEDULE_RANDOM};
}

static const char *strategy_name(int s)
{
    return s == AC_SCHEDULE_PCT ? "pct" : "random";
}

/* One seed: 0 passed, 1 failed (*rc the scenario's), or an error. */
static int run_one(const ac_explore_options *o, uint64_t seed, uint32_t pct_steps,
                   int (*scenario)(ac_runtime *, void *), void *arg, int *rc, uint64_t *steps)
{
    ac_config cfg;
    ac_config_init(&cfg);
    cfg.workers = 0;
    cfg.seed = seed;
    cfg.strategy = o->strategy;
    cfg.pct_depth = o->pct_depth;
    cfg.pct_steps = pct_steps;
    ac_runtime *rt = NULL;
    int err = ac_runtime_create(&rt, &cfg);
    if (err != 0)
        return err;
    *rc = scenario(rt, arg);
    /* What the scenario left runs at shutdown, under the same schedule;
     * a forced shutdown is the scenario's to judge, not ours. */
    if (steps != NULL) {
        (void)ac_runtime_run(rt);
        *steps = ac_runtime_seeded_steps(rt);
    }
    (void)ac_runtime_destroy(rt);
    return *rc != 0;
}

int ac_explore(ac_explore_options *o, int (*scenario)(ac_runtime *rt, void *arg), void *arg)
{
    if (o == NULL || scenario == NULL)
        return AC_EINVAL;
    o->failed_seed = 0;
    o->failed_rc = 0;
    o->runs = 0;
    uint64_t first = o->first_seed ? o->first_seed : 1;
    uint64_t count = o->seeds;
    uint64_t env = ac__env_seed();
    if (env == UINT64_MAX)
        return AC_EINVAL;
    if (env != 0) {
        first = env;  /* replay: that seed alone */
        count = 1;
    }
    uint32_t k = o->pct_steps;
    if (o->strategy == AC_SCHEDULE_PCT && k == 0) {
        /* PCT draws its change points in the first k steps: take k from
         * a random run of the first seed, which a scenario of about that
         * length fits. */
        ac_explore_options r = *o;
        r.strategy = AC_SCHEDULE_RANDOM;
        int rc;
        uint64_t steps = 0;
        /* From first_seed even when AC_SEED replays another: the same
         * k, so the same schedule. */
        int err = run_one(&r, o->first_seed ? o->first_seed : 1, 0, scenario, arg, &rc, &steps);
        if (err < 0)
            return err;
        k = steps == 0 ? 1 : steps > UINT32_MAX ? UINT32_MAX : (uint32_t)steps;
    }
    for (uint64_t i = 0; i < count; i++) {
        uint64_t seed = first + i;
        if (seed == 0 || seed == UINT64_MAX)
            continue;  /* 0 is unseeded; UINT64_MAX a malformed AC_SEED */
        int rc = 0;
        int r = run_one(o, seed, k, scenario, arg, &rc, NULL);
        if (r < 0)
            return r;
        o->runs++;
        if (r == 1) {
            o->failed_seed = seed;
            o->failed_rc = rc;
            if (!o->quiet)
                fprintf(stderr,
                        "actorc: scenario failed with seed %llu (%s): AC_SEED=%llu to replay\n",
                        (unsigned long long)seed, strategy_name(o->strategy),
                        (unsigned long long)seed);
            return 1;
        }
    }
    return 0;
}
