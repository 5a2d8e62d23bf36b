/* collbench straggler: which rank is late to the collective, and by how much.
 *
 * Each iteration every rank computes for --compute-ms (a real arithmetic loop),
 * then sleeps its --inject delay (a sleep, so that 6 ranks on 2 cores are not
 * all saturated by the injection), records its arrival time and does a small
 * all-reduce. Arrival times are allgathered and rank 0 reports lateness per rank.
 *
 * Clocks: each rank takes CLOCK_MONOTONIC right after a barrier as its zero. On
 * one host that is the same clock anyway; across hosts the alignment is only as
 * good as the barrier's exit skew (tens of microseconds on a LAN), which biases
 * every iteration of a rank by the same amount.
 *
 * Not inside a launched rank: launch -P ranks of ourselves (cli_launch.h) and
 * return their code. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/opt_table.h"
#include "engine/straggler.h"
#include "cli_launch.h"
#include "coll_tool.h"
#include "core/clock.h"

#define PREFIX "collbench straggler"
#define MAX_PROCS 1024
#define MAX_ITERS 1000000

typedef struct straggler_opts {
    int nprocs, iters;
    const char *inject;  /* NULL: none */
    double threshold_ms; /* 0: the default */
    double compute_ms;
    double monitored_s; /* 0: no monitored barrier */
    double timeout_s;
    const char *backend; /* NULL: the library's default */
    bench_multinode mn;  /* --nnodes ...: this host's -P ranks of a multi-host job */
} straggler_opts;

/* ---- one handler per flag (c->user is the straggler_opts) ---- */

#define SO(c) ((straggler_opts *)(c)->user)

static int on_procs(bench_opt_ctx *c, const char *v)
{
    return bench_opt_int(c, v, 1, MAX_PROCS, &SO(c)->nprocs);
}
static int on_iters(bench_opt_ctx *c, const char *v)
{
    return bench_opt_int(c, v, 1, MAX_ITERS, &SO(c)->iters);
}
static int on_inject(bench_opt_ctx *c, const char *v)
{
    SO(c)->inject = v;
    return 0;
} /* checked later */
static int on_threshold(bench_opt_ctx *c, const char *v)
{
    return bench_opt_double(c, v, 0, 1, INFINITY, 0, &SO(c)->threshold_ms);
}
static int on_compute(bench_opt_ctx *c, const char *v)
{
    return bench_opt_double(c, v, 0, 0, INFINITY, 0, &SO(c)->compute_ms);
}
static int on_monitored(bench_opt_ctx *c, const char *v)
{
    return bench_opt_double(c, v, 0, 1, BENCH_MAX_TIMEOUT_S, 0, &SO(c)->monitored_s);
}
static int on_timeout(bench_opt_ctx *c, const char *v)
{
    return bench_opt_double(c, v, 0, 1, BENCH_MAX_TIMEOUT_S, 0, &SO(c)->timeout_s);
}
static int on_backend(bench_opt_ctx *c, const char *v)
{
    SO(c)->backend = v;
    return 0;
}

static const bench_opt opt_table[] = {
    {'P', NULL, "N", on_procs, "ranks to launch (default 4; with --nnodes: --nproc-per-node)"},
    {0, "iters", "K", on_iters, "iterations (default 50)"},
    {0, "inject", "RANK:MS[,..]", on_inject,
     "delay these ranks by MS each iteration (a sleep; at most\n"
     "3600000 ms; past -T the others time out on them)"},
    {0, "threshold", "MS", on_threshold,
     "flag ranks whose mean excess is above MS (default\n"
     "max(1 ms, 3 x the ranks' median jitter of excess))"},
    {0, "compute-ms", "X", on_compute, "compute loop per iteration (default 2; at most -T)"},
    {0, "monitored-barrier", "T", on_monitored,
     "first a monitored barrier with timeout T s; exit 3\n"
     "naming the ranks that did not arrive"},
    {'T', NULL, "SECONDS", on_timeout,
     "timeout of every blocking wait (default 60, at most\n"
     "86400)"},
    {0, "backend", "B", on_backend, "backend (default: $COLL_BACKEND or tcp; mpi through mpirun)"},
    {'h', "help", NULL, bench_opt_help, "this help"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: collbench straggler [options]\n\n"
               "Per-iteration arrival lateness of every rank at a small all-reduce after a\n"
               "compute phase. Ranks later than the median rank by more than the threshold\n"
               "on average are STRAGGLERs.\n\n");
    bench_opt_usage(f, opt_table, BENCH_OPT_COUNT(opt_table), 26);
    bench_multinode_usage(f, 26);
}

/* 0 to run, BENCH_OPT_HELP, or EXIT_USAGE (said). */
static int parse_opts(int argc, char **argv, straggler_opts *o)
{
    char err[256];
    *o = (straggler_opts){.nprocs = 4, .iters = 50, .compute_ms = 2, .timeout_s = 60};
    int rc = cli_parse_options(PREFIX, opt_table, BENCH_OPT_COUNT(opt_table), o, &o->mn, NULL, argc,
                               argv);
    if (rc) return rc;
    /* Each rank computes alike, so no peer's wait covers the compute loop:
     * -T bounds it here, or a typo (1e9) runs for days. */
    if (o->compute_ms > o->timeout_s * 1e3)
        return fprintf(stderr,
                       PREFIX ": --compute-ms: %g ms is longer than -T (%g s): at most %.10g ms "
                              "per iteration\n",
                       o->compute_ms, o->timeout_s, o->timeout_s * 1e3),
               EXIT_USAGE;
    if (bench_multinode_finish(&o->mn, MAX_PROCS, err, sizeof err))
        return fprintf(stderr, PREFIX ": %s\n", err), EXIT_USAGE;
    if (o->mn.nnodes) o->nprocs = o->mn.nproc_per_node; /* the ranks of this host */
    return 0;
}

/* ================= inside a rank ================= */

/* Real work for about ms milliseconds (the clock is read every 1024 steps). */
static double compute(double ms)
{
    volatile double acc = 1.0;
    double end = coll__now_s() + ms / 1e3;
    do {
        for (int i = 0; i < 1024; i++) acc = acc * 1.0000001 + 1e-9;
    } while (coll__now_s() < end);
    return acc;
}

static int fail(coll_comm *comm, const char *what, int rc)
{
    fprintf(stderr, "collbench straggler: rank %d: %s: %s\n", coll_comm_rank(comm), what,
            *coll_comm_errmsg(comm) ? coll_comm_errmsg(comm) : coll_strerror(rc));
    return EXIT_RUNTIME;
}

static int monitored(coll_comm *comm, const straggler_opts *o, double my_delay_ms)
{
    int world = coll_comm_size(comm), nmissing = 0;
    int *missing = calloc((size_t)world, sizeof *missing);
    if (!missing) return EXIT_RUNTIME;
    coll__sleep_s(my_delay_ms / 1e3);
    int rc = coll_monitored_barrier(comm, o->monitored_s, missing, world, &nmissing);
    free(missing);
    if (rc == COLL_OK) return 0;
    return fail(comm, "--monitored-barrier", rc);
}

static int loop(coll_comm *comm, const straggler_opts *o, double my_delay_ms, double *arrive)
{
    float small[8] = {0};
    int rc = coll_barrier(comm);
    if (rc) return fail(comm, "start barrier", rc);
    double zero = coll__now_s(); /* clock alignment: see the top of the file */
    for (int it = 0; it < o->iters; it++) {
        compute(o->compute_ms);
        coll__sleep_s(my_delay_ms / 1e3);
        arrive[it] = coll__now_s() - zero;
        if ((rc = coll_allreduce(comm, small, small, 8, COLL_FLOAT32, COLL_SUM)))
            return fail(comm, "all-reduce", rc);
    }
    return 0;
}

static int run_rank(const straggler_opts *o)
{
    coll_config cfg;
    coll_config_init(&cfg);
    cfg.backend = o->backend ? o->backend : getenv(CLI_ENV_BACKEND); /* NULL: the default */
    cfg.timeout_s = o->timeout_s;
    coll_comm *comm = NULL;
    int rc = coll_comm_create(&cfg, &comm);
    if (rc) {
        fprintf(stderr, "collbench straggler: %s\n",
                *coll_last_create_error() ? coll_last_create_error() : coll_strerror(rc));
        return rc == COLL_EUNAVAIL ? EXIT_UNAVAILABLE : EXIT_RUNTIME;
    }
    int world = coll_comm_size(comm), rank = coll_comm_rank(comm), code = 0;
    double *delay = calloc((size_t)world, sizeof *delay);
    double *mine = calloc((size_t)o->iters, sizeof *mine);
    double *all = calloc((size_t)world * (size_t)o->iters, sizeof *all);
    straggler_rank *res = calloc((size_t)world, sizeof *res);
    char err[256];
    if (!delay || !mine || !all || !res) {
        fprintf(stderr, "collbench straggler: rank %d: out of memory\n", rank);
        code = EXIT_RUNTIME;
    } else if (o->inject &&
               bench_straggler_parse_inject(o->inject, world, delay, err, sizeof err)) {
        if (rank == 0) fprintf(stderr, "collbench straggler: %s\n", err);
        code = EXIT_USAGE;
    }
    if (!code && o->monitored_s > 0) code = monitored(comm, o, delay[rank]);
    if (!code) code = loop(comm, o, delay[rank], mine);
    if (!code && (rc = coll_allgather(comm, mine, all, (size_t)o->iters, COLL_FLOAT64)))
        code = fail(comm, "gathering arrival times", rc);
    if (!code && rank == 0) {
        straggler_summary sum;
        if (bench_straggler_analyze(all, world, o->iters, o->threshold_ms, res, &sum) == 0) {
            printf("# collbench straggler: backend %s, compute %.3g ms per iteration\n",
                   coll_comm_backend(comm), o->compute_ms);
            bench_straggler_print(stdout, res, &sum);
            fflush(stdout);
        } else {
            code = EXIT_RUNTIME;
        }
    }
    free(delay);
    free(mine);
    free(all);
    free(res);
    coll_comm_destroy(comm);
    return code;
}

/* ================= the launcher ================= */

/* The ranks run --backend, else the library's default ($COLL_BACKEND, else tcp),
 * started as every command starts them (cli_launch.h). */
static int launch(const straggler_opts *o, int argc, char **argv)
{
    const char *lib = getenv("COLL_BACKEND");
    char *asked[] = {(char *)(o->backend ? o->backend : lib && *lib ? lib : "tcp")};
    const char *backend;
    size_t n;
    cli_launch_plan plan;
    cli_plan_choose(&plan, &o->mn);
    int code = cli_plan_pick_backends(&plan, PREFIX, asked, 1, &backend, 1, &n);
    if (code) return code;
    cli_launch l = {.prefix = PREFIX, .argc = argc, .argv = argv};
    return cli_launch_one(&plan, &l, backend, o->nprocs);
}

int cmd_straggler(int argc, char **argv)
{
    straggler_opts o;
    coll_launch_env env;
    int rc = parse_opts(argc, argv, &o);
    if (rc == BENCH_OPT_HELP) return usage(stdout), 0;
    if (rc) return rc;
    cli_role role = cli_detect_role(PREFIX, &env);
    if (role == CLI_RANK) return run_rank(&o);
    if (role == CLI_BAD_ENV) return EXIT_USAGE;
    if (o.inject) { /* refuse bad input before launching anything */
        int world = o.mn.nnodes ? o.mn.nnodes * o.mn.nproc_per_node : o.nprocs;
        double *delay = calloc((size_t)world, sizeof *delay);
        char err[256];
        if (!delay) return EXIT_RUNTIME;
        rc = bench_straggler_parse_inject(o.inject, world, delay, err, sizeof err);
        free(delay);
        if (rc) {
            fprintf(stderr, "collbench straggler: %s\n", err);
            return EXIT_USAGE;
        }
    }
    return launch(&o, argc, argv);
}
