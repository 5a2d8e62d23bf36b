/* What the launching commands and the three ways of starting ranks (fork/exec
 * here, mpirun, multi-host: cli_launch.h picks one) share: the exit codes, a
 * rank's backend and pinning, what one launch of our own command line is
 * (cli_launch), starting it on this host (cli_exec_ranks) and the sweep.
 * Messages start with the caller's prefix ("collbench", "collbench init"). */
#ifndef COLLBENCH_CLI_COMMON_H
#define COLLBENCH_CLI_COMMON_H

#include <stddef.h>

#include "engine/opt_table.h"
#include "exit_codes.h"
#include "launch/launcher.h"

/* Parses argv through a command's option table (opt_table.h): 0 to run,
 * BENCH_OPT_HELP (the caller prints its usage on stdout), or EXIT_USAGE once
 * "<prefix>: FLAG: why" is said on stderr. mn (the multi-host flags) and
 * positional are bench_opt_ctx's, or NULL. */
int cli_parse_options(const char *prefix, const bench_opt *table, size_t n, void *user,
                      bench_multinode *mn, int (*positional)(bench_opt_ctx *, const char *),
                      int argc, char **argv);

/* The launcher tells each rank its backend in this variable. */
#define CLI_ENV_BACKEND "COLLBENCH_BACKEND"

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
/* The same with the choice given: one core per rank (pin), or every CPU the
 * rank was started with. */
void cli_rank_pin_to(int pin, int local_rank, int local_size);

/* --bind's default for this backend's ranks: "core" (shm, auto) or "none". */
const char *cli_default_bind(const char *backend);

/* The outcome of one launch, for a command that reports it in its own words
 * (check: FAIL lines on stdout) instead of the launcher's messages on stderr. */
typedef struct cli_launch_report {
    int started;       /* 0: the ranks could not be started at all */
    char message[256]; /* why they failed ("rank 1 exited with 3"), or "" */
} cli_launch_report;

/* One launch of our own command line as ranks (cli_launch_one, cli_launch.h). */
typedef struct cli_launch {
    const char *prefix;
    const char *what; /* named before the backend in messages ("allreduce"), or NULL */
    int argc;         /* our own command line, run again by each rank */
    char **argv;
    int exit_wrong; /* the ranks' exit code for wrong results, or 0 for none */
    void (*on_result_line)(const char *line, void *arg); /* rank 0's results pipe, or NULL */
    void *arg;
    cli_launch_report *report; /* NULL: failures are said on stderr; else filled in, and
                                  the ranks' failure is the caller's to say */
} cli_launch;

/* Records a launch's outcome in l->report (when there is one). */
void cli_launch_note(const cli_launch *l, int started, const char *message);

/* Starts nprocs ranks of l's command line on this host (coll__launch, rank argv[0]
 * /proc/self/exe) with CLI_ENV_BACKEND=backend, COLLBENCH_NPROCS=nprocs and
 * extra_env (NULL-terminated, or NULL); bind: $COLL_BIND while it runs (the
 * pinning of the ranks), or NULL.
 * coll__launch's return; res filled in. */
int cli_exec_ranks(const cli_launch *l, const char *backend, int nprocs,
                   const char *const *extra_env, const char *bind, coll__launch_result *res);

/* How many ranks this host's open-file limit (*nofile, -1: none) allows one
 * job, after raising the soft limit to the hard one. */
int cli_max_local_ranks(long *nofile);

/* Runs one(arg, backend, nprocs) for every backend x process count and returns
 * the first non-zero code; an interrupt (128+signal) ends the sweep and wins.
 * A count above cli_max_local_ranks is refused first (EXIT_USAGE), naming it. */
int cli_sweep(const char *const *backends, size_t nbackends, const int *procs, size_t nprocs,
              int (*one)(void *arg, const char *backend, int nprocs), void *arg);

#endif
