/* Recognise ranks that were already launched: our own launcher and torchrun
 * (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT),
 * mpirun (OMPI_COMM_WORLD_*, PMI_RANK/PMI_SIZE) and srun (SLURM_PROCID/NTASKS).
 * The detection itself is public (coll.h); these are libcoll's own questions. */
#ifndef COLL_LAUNCH_ENV_H
#define COLL_LAUNCH_ENV_H

#include "coll_tool.h" /* coll_launch_env, coll_launch_env_detect, coll_launch_env_error */

/* Whether the job spans hosts: 1 yes, 0 one host, -1 the launcher does not say.
 * srun: SLURM_STEP_NUM_NODES or SLURM_NNODES, or SLURM_NODEID > 0; torchrun:
 * GROUP_RANK > 0; any launcher: a local world smaller than the world. */
int coll__launch_env_spans_hosts(const coll_launch_env *env);

/* The rendezvous store's host for env://: $MASTER_ADDR; under srun without it
 * the first node of $SLURM_STEP_NODELIST (or $SLURM_JOB_NODELIST), where rank
 * 0 runs, else $SLURM_LAUNCH_NODE_IPADDR (where srun ran); NULL when none. */
const char *coll__launch_env_store_host(const coll_launch_env *env);

#endif
