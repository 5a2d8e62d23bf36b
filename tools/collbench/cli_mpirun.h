/* Launching ranks through mpirun: `collbench allreduce --backend mpi -P 2,4`
 * runs `mpirun -np N --oversubscribe [--allow-run-as-root when root]
 * [$COLLBENCH_MPIRUN_ARGS] collbench <same args>` for each process count.
 * $COLLBENCH_MPIRUN names another mpirun. Rank 0 cannot inherit the results
 * pipe through mpirun, so the launcher makes a FIFO, names it in
 * COLLBENCH_RESULTS_FIFO, and rank 0 opens it as its COLL_RESULTS_FD. */
#ifndef COLLBENCH_CLI_MPIRUN_H
#define COLLBENCH_CLI_MPIRUN_H

#include <stddef.h>

#include "cli_common.h"
#include "coll_tool.h"

#define CLI_ENV_MPIRUN "COLLBENCH_MPIRUN"
#define CLI_ENV_MPIRUN_ARGS "COLLBENCH_MPIRUN_ARGS"
#define CLI_ENV_RESULTS_FIFO "COLLBENCH_RESULTS_FIFO"

/* The mpirun to run into path; 0, or -1 with why it cannot be found (a
 * message in the style of "built without MPI: install ..."). */
int cli_mpirun_find(char *path, size_t len, char *why, size_t whylen);

/* cli_launch_one (cli_launch.h) through mpirun: same messages and exit codes. */
int cli_mpirun_launch_one(const cli_launch *l, const char *backend, int nprocs);

/* In a rank: rank 0 of a launch made by cli_mpirun_launch_one opens the
 * launcher's FIFO and sets COLL_RESULTS_FD to it (a warning if it cannot). */
void cli_mpirun_rank_setup(const coll_launch_env *env);

#endif
