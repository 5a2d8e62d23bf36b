/* Recognise ranks that were already launched: our own launcher and torchrun
 * (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT),
 * mpirun (OMPI_COMM_WORLD_*, PMI_RANK/PMI_SIZE) and srun (SLURM_PROCID/NTASKS). */
#ifndef COLL_LAUNCH_ENV_H
#define COLL_LAUNCH_ENV_H

typedef struct coll_launch_env {
    int rank, world_size;             /* -1 when unknown */
    int local_rank, local_world_size; /* -1 when unknown */
    const char *source;               /* "collbench", "torchrun", "mpirun", "pmi", "srun", NULL */
} coll_launch_env;

/* Fills env from the environment; returns 1 if a rank/world pair was found.
 * Sources, first match wins: RANK/WORLD_SIZE (+LOCAL_RANK/LOCAL_WORLD_SIZE;
 * "collbench" when COLL_LAUNCHED=1, else "torchrun"), OMPI_COMM_WORLD_RANK/SIZE
 * (+_LOCAL_RANK/_LOCAL_SIZE; "mpirun"), PMI_RANK/PMI_SIZE (+MPI_LOCALRANKID/
 * MPI_LOCALNRANKS; "pmi"), SLURM_PROCID/SLURM_NTASKS (+SLURM_LOCALID,
 * SLURM_NTASKS_PER_NODE when a plain number; "srun"). A source with invalid
 * values (not an integer, rank outside [0, world)) counts as absent, and the
 * problem is kept for coll_launch_env_error(). */
int coll_launch_env_detect(coll_launch_env *env);

/* Why the last coll_launch_env_detect() of this thread skipped a source, e.g.
 * "RANK=abc is not an integer"; "" when every variable it read was valid. */
const char *coll_launch_env_error(void);

/* Whether the job spans hosts: 1 yes, 0 one host, -1 the launcher does not say.
 * srun: SLURM_STEP_NUM_NODES or SLURM_NNODES, or SLURM_NODEID > 0; torchrun:
 * GROUP_RANK > 0; any launcher: a local world smaller than the world. */
int coll_launch_env_spans_hosts(const coll_launch_env *env);

/* The rendezvous store's host for env://: $MASTER_ADDR, under srun without it
 * $SLURM_LAUNCH_NODE_IPADDR (where srun ran: rank 0's node in a batch job);
 * NULL when neither is set. */
const char *coll_launch_env_store_host(const coll_launch_env *env);

#endif
