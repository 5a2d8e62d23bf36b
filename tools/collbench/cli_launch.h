/* How a launching command starts its ranks: one plan, chosen once from the
 * parsed options, that every command (the collectives, init, train, check,
 * straggler) picks its backends and launches by:
 *   CLI_LAUNCH_LOCAL      fork/exec our own command line here (coll__launch), the
 *                         ranks pinned as --bind's default says when no --bind
 *                         or $COLL_BIND was given;
 *   CLI_LAUNCH_MPIRUN     through mpirun (cli_mpirun.h): what a local plan does
 *                         for a backend whose ranks mpirun must start (mpi);
 *   CLI_LAUNCH_MULTINODE  this host's share of a multi-host job (--nnodes,
 *                         cli_multinode.h).
 * Dependencies go one way: cli_launch -> cli_multinode, cli_mpirun -> cli_common. */
#ifndef COLLBENCH_CLI_LAUNCH_H
#define COLLBENCH_CLI_LAUNCH_H

#include <stddef.h>

#include "engine/multinode_opts.h"
#include "cli_common.h"
#include "coll_tool.h"

typedef enum cli_launch_kind {
    CLI_LAUNCH_LOCAL,
    CLI_LAUNCH_MPIRUN,
    CLI_LAUNCH_MULTINODE
} cli_launch_kind;

typedef struct cli_launch_plan {
    cli_launch_kind kind; /* LOCAL or MULTINODE (cli_plan_kind gives it per backend) */
    bench_multinode mn;   /* MULTINODE: the job (--nnodes ...) */
    int default_bind;     /* LOCAL: no --bind or $COLL_BIND, so pin per backend */
} cli_launch_plan;

/* The plan for these multi-host flags (NULL or nnodes 0: this host). Call it
 * after the options are parsed (--bind sets $COLL_BIND). */
void cli_plan_choose(cli_launch_plan *p, const bench_multinode *mn);

/* How the plan starts this backend's ranks: MPIRUN for mpi under a local plan,
 * else the plan's kind. */
cli_launch_kind cli_plan_kind(const cli_launch_plan *p, const char *backend);

/* Why the plan cannot start this (available) backend's ranks (mpirun missing,
 * mpi across --nnodes), into why; NULL when it can. */
const char *cli_plan_refuses(const cli_launch_plan *p, const char *backend, char *why, size_t len);

/* The backends to sweep into out (room for cap): each one asked for, which must
 * be available and one the plan starts; none asked for: every available one
 * but mpi (needs mpirun) and nccl (needs --device cuda). A multi-host plan runs
 * one backend: the one asked for, else auto (tcp without it). Returns 0, or
 * an exit code with the reason printed. */
int cli_plan_pick_backends(const cli_launch_plan *p, const char *prefix, char *const *asked,
                           size_t nasked, const char **out, size_t cap, size_t *n);

/* Launches nprocs ranks of l's command line with CLI_ENV_BACKEND=backend and
 * COLLBENCH_NPROCS=nprocs, as the plan says; prints why when they fail (unless
 * l->report). Returns their exit code, EXIT_RUNTIME when they could not be
 * launched, 128+signal when interrupted. backend may be a comma-separated list
 * (--same-ranks, local only): the ranks then run each in turn and pin
 * themselves per backend (cli_rank_pin). */
int cli_launch_one(const cli_launch_plan *p, const cli_launch *l, const char *backend, int nprocs);

typedef enum cli_role { CLI_LAUNCHER, CLI_RANK, CLI_BAD_ENV } cli_role;

/* A rank (env filled in) when a launcher's variables are set, set up for the
 * way it was started (multi-host: the job's RANK, WORLD_SIZE; mpirun: rank 0's
 * results FIFO); CLI_BAD_ENV, with the problem printed, for half a launcher's
 * environment (launching our own ranks would hide the mistake) or, in the
 * launcher, a bad tuning variable (core/env.h), refused before any rank starts. */
cli_role cli_detect_role(const char *prefix, coll_launch_env *env);

#endif
