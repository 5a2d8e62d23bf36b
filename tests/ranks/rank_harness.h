/* Shared start-up for multi-rank test programs: run as `prog NPROCS [BACKEND [INIT]]`;
 * the first process launches NPROCS ranks of itself, each rank gets a communicator.
 * INIT is env (default: the launcher's env://), tcp (a free port picked by the
 * launching process: tcp://127.0.0.1:PORT) or file (file://DIR/store in a fresh
 * directory removed afterwards); with tcp or file the ranks drop MASTER_ADDR/PORT. */
#ifndef RANK_HARNESS_H
#define RANK_HARNESS_H

#include "coll.h"

extern int rh_rank, rh_size;
extern int rh_launch_status; /* exit status for main when rh_start returns NULL */

/* The communicator's timeout is 60 s, or $RH_TIMEOUT_S. */
/* In the launcher: launches the ranks, waits, returns NULL (exit with
 * rh_launch_status). In a rank: returns its communicator (NULL on failure). */
coll_comm *rh_start(int argc, char **argv);
/* Destroys the communicator; returns the rank's exit status. */
int rh_finish(coll_comm *comm, int failures);
/* Launch argv's program on nprocs ranks with extra environment; returns the
 * launcher's exit code and copies its message. */
int rh_launch(int nprocs, char **argv, const char *const *extra_env, int *failed_rank, char *msg,
              size_t msglen);

#endif
