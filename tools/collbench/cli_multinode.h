/* Several hosts without MPI, as torchrun does it: the same command on every
 * host with --nnodes N --node-rank K --nproc-per-node M --master-addr A
 * --master-port P. Each host's launcher starts M local ranks; rank K*M+i learns
 * RANK, WORLD_SIZE=N*M, MASTER_ADDR/PORT from cli_multinode_rank_env(). Global
 * rank 0 (node 0) hosts the store on A:P; the others connect, retrying until the
 * timeout. Each host's ranks listen on --listen-addr, $COLL_LISTEN_ADDR, or the
 * address of the interface that routes to A. */
#ifndef COLLBENCH_CLI_MULTINODE_H
#define COLLBENCH_CLI_MULTINODE_H

#include <stddef.h>

#include "engine/multinode_opts.h"
#include "cli_common.h"

/* The flags as parsed (listen_addr, job_token may be NULL). */
typedef bench_multinode cli_multinode;

/* Starts this host's nprocs ranks of our command line as node mn->node_rank of
 * the job mn describes; returns their exit code (EXIT_RUNTIME when this host
 * cannot reach --master-addr). Reached through cli_launch_one (cli_launch.h). */
int cli_multinode_launch_one(const cli_multinode *mn, const cli_launch *l, const char *backend,
                             int nprocs);

/* In a rank started by the multi-host launcher: turns the local launcher's
 * variables into the job's (RANK, WORLD_SIZE, MASTER_ADDR, ...). No-op elsewhere. */
void cli_multinode_rank_env(void);

/* Address of this host's interface on the route to host (numeric IPv4) into
 * buf. 0, or -1 with why. */
int cli_route_addr(const char *host, int port, char *buf, size_t len, char *why, size_t whylen);

#endif
