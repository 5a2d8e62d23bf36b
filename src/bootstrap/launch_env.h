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

/* Fills env from the environment; returns 1 if a rank/world pair was found. */
int coll_launch_env_detect(coll_launch_env *env);

#endif
