/* What the launching commands (the collectives, init, check) share: the exit
 * codes, which backends a sweep runs, whether this process is a rank or the
 * launcher, and launching our own command line as the ranks of one
 * backend x process count. Messages start with the caller's prefix
 * ("collbench" or "collbench init"). */
#ifndef COLLBENCH_CLI_COMMON_H
#define COLLBENCH_CLI_COMMON_H

#include <stddef.h>

#include "bootstrap/launch_env.h"

#define EXIT_USAGE 2
#define EXIT_RUNTIME 3
#define EXIT_UNAVAILABLE 4

/* The launcher tells each rank its backend in this variable. */
#define CLI_ENV_BACKEND "COLLBENCH_BACKEND"

/* Why our launcher cannot run this backend (mpi needs mpirun), or NULL. */
const char *cli_launcher_refuses(const char *backend);

/* The backends to sweep into out (room for cap): each one asked for, which must
 * be available and one our launcher runs; none asked for: every available one
 * but mpi (needs mpirun) and nccl (needs --device cuda). cmd names the command
 * in the mpirun hint. Returns 0, or EXIT_UNAVAILABLE with the reason printed. */
int cli_pick_backends(const char *prefix, const char *cmd, char *const *asked, size_t nasked,
                      const char **out, size_t cap, size_t *n);

typedef enum cli_role { CLI_LAUNCHER, CLI_RANK, CLI_BAD_ENV } cli_role;

/* A rank (env filled in) when a launcher's variables are set; CLI_BAD_ENV, with
 * the problem printed, for half a launcher's environment: launching our own
 * ranks would hide the mistake. */
cli_role cli_detect_role(const char *prefix, coll_launch_env *env);

/* A rank's backend: the one env_var names (set by our launcher), else the only
 * one asked for, else auto, or NULL (the library's default) when $COLL_BACKEND is
 * set or auto is not available. Rank 0
 * warns when several were asked for. */
const char *cli_rank_backend(const char *prefix, const char *env_var, char *const *asked,
                             size_t nasked, int rank);

/* In a rank that runs several backends in turn: the pinning --bind's default
 * gives this backend (core for shm and auto, none for the others), unless the
 * user chose one ($COLL_BIND: the launcher pinned the ranks for good).
 * local_rank of local_size ranks on this host. Best effort, like the launcher's. */
void cli_rank_pin(const char *backend, int local_rank, int local_size);

typedef struct cli_launch {
    const char *prefix;
    const char *what;   /* named before the backend in messages ("allreduce"), or NULL */
    int argc;           /* our own command line, run again by each rank */
    char **argv;
    int exit_wrong;     /* the ranks' exit code for wrong results, or 0 for none */
    void (*on_result_line)(const char *line, void *arg); /* rank 0's results pipe, or NULL */
    void *arg;
} cli_launch;

/* Launches nprocs ranks of our command line with CLI_ENV_BACKEND=backend and
 * COLLBENCH_NPROCS=nprocs; prints why when they fail. Returns their exit code,
 * EXIT_RUNTIME when they could not be launched, 128+signal when interrupted.
 * backend may be a comma-separated list (--same-ranks): the ranks then run
 * each in turn and pin themselves per backend (cli_rank_pin). */
int cli_launch_one(const cli_launch *l, const char *backend, int nprocs);

/* Runs one(arg, backend, nprocs) for every backend x process count and returns
 * the first non-zero code; an interrupt (128+signal) ends the sweep and wins. */
int cli_sweep(const char *const *backends, size_t nbackends, const int *procs, size_t nprocs,
              int (*one)(void *arg, const char *backend, int nprocs), void *arg);

#endif
