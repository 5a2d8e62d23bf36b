/* Command-line options of the collective benchmarks (README.md "Usage",
 * nccl-tests' flags where it has one). Parsing never exits: bad input gives
 * COLL_EINVAL and a message naming the flag, which the command turns into exit 2. */
#ifndef BENCH_OPTIONS_H
#define BENCH_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/bench_coll.h"
#include "engine/multinode_opts.h"
#include "engine/opt_table.h"
#include "coll.h"

#define BENCH_MAX_SIZES 4096
#define BENCH_MAX_BACKENDS 8

/* bench_options_parse's return when -h/--help was given (usage printed by caller). */
#define BENCH_OPTIONS_HELP BENCH_OPT_HELP

/* One dtype/op pair to run (op is BENCH_OP_NONE for collectives without one). */
typedef struct bench_pair {
    coll_dtype dtype;
    int op;
} bench_pair;

typedef struct bench_options {
    const bench_coll *coll;
    uint64_t *sizes; /* bytes asked for, ascending as given */
    size_t nsizes;
    int *procs; /* -P: process counts to sweep */
    size_t nprocs;
    char *backends[BENCH_MAX_BACKENDS]; /* --backend; nbackends 0: every available one */
    size_t nbackends;
    bench_pair pairs[COLL_DTYPE_COUNT * (COLL_OP_COUNT + 1)];
    size_t npairs;
    int warmup, iters, check;
    int root;
    double timeout_s;     /* -T: every blocking wait of the communicator */
    double time_budget_s; /* per size and placement; 0: no limit */
    double duration_s;    /* --duration: soak, repeat the sizes this long; 0: once */
    double stop_spread;   /* --stop-spread: timed iterations end once their p25-p75 spread
                             * is this fraction of the median (budget.h); 0: off */
    char algo[24];        /* "halving_doubling" (gloo) is the longest */
    char device[8];       /* cpu | cuda */
    int inplace;          /* 0 out-of-place, 1 in-place, 2 both */
    char buffers[8];      /* --buffers: malloc (default, private), coll (coll_alloc), or
                             * cuda (set by --device cuda) */
    int buffers_given;
    const char *sizes_flag; /* "--sizes" or "-b/-e", for messages; NULL: the defaults */
    const char *csv_path, *json_path;
    const char *per_iter_path; /* --per-iter: every iteration on every rank (bench/per_iter.h) */
    const char *init_method;   /* --init-method (points into argv); NULL: env:// */
    int quiet, verbose;
    int force_memory; /* --force-memory: skip the launcher's memory check (memory_need.h) */
    int same_ranks;   /* --same-ranks: one launch per -P runs every backend, size by
                             * size (bench_runner_run_passes) */
    int passes;       /* --passes: the ranks measure their backends this many times,
                             * every other pass in reverse order (A B, B A, ...) */
    /* Multi-host without MPI, torchrun's meaning (0 / NULL: not asked for). With
     * --nnodes, -P is --nproc-per-node (default 1). */
    bench_multinode mn;
    uint64_t seed;
} bench_options;

/* Defaults (README.md "Usage"): 1M,10M,100M,1G; -P 2,4,6; float32 sum; -w 5 -n 20 -c 1. */
int bench_options_defaults(bench_options *o, const bench_coll *coll);

/* Parse argv[1..argc) (argv[0] is the command name) on top of the defaults.
 * 0, BENCH_OPTIONS_HELP, or COLL_EINVAL with err naming the flag
 * ("-n: '0' is not a positive integer"). o must be freed either way. */
int bench_options_parse(bench_options *o, const bench_coll *coll, int argc, char **argv, char *err,
                        size_t errlen);

void bench_options_free(bench_options *o);

/* The usage text of one collective command. */
void bench_options_usage(FILE *f, const bench_coll *coll);

/* 0 when every size gives each of world ranks at least one element of every
 * dtype (allgather, reducescatter, alltoall split a size into a block per
 * rank, rounded down to whole elements), else COLL_EINVAL with err naming the
 * flag, the size, the ranks and the dtype. A rank started by another launcher
 * checks it with the world it is given. */
int bench_options_check_world(const bench_options *o, int world, char *err, size_t errlen);

/* bench_options_check_world at each -P (with --nnodes, the ranks of every
 * host): what our launcher checks before any rank starts. */
int bench_options_check_procs(const bench_options *o, char *err, size_t errlen);

/* The largest -P value (the JSON world_size). */
int bench_options_largest_procs(const bench_options *o);

#endif
