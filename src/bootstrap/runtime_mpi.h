/* The MPI library's life in this process (built only with MPI): initialised once,
 * by whichever needs it first (the mpi backend, or the rendezvous under mpirun),
 * and finalised once at exit if libcoll was the one that initialised it. */
#ifndef COLL_RUNTIME_MPI_H
#define COLL_RUNTIME_MPI_H

#include <stddef.h>

/* MPI_Init_thread asking for MPI_THREAD_MULTIPLE unless MPI is already
 * initialised (then the application's level stands). *level: the level MPI
 * gives (MPI_THREAD_*). 0, or a negative coll_status with the reason in err. */
int coll__mpi_runtime_init(int *level, char *err, size_t errlen);

/* coll__mpi_runtime_init, then this process's rank and size in MPI_COMM_WORLD
 * checked against the rank and world size libcoll was given (config or
 * environment): they must be mpirun's. 0, or a negative coll_status with the
 * reason in err (COLL_EINVAL: they differ). */
int coll__mpi_runtime_join(int rank, int world_size, int *level, char *err, size_t errlen);

/* A communicator failed mid-collective: at exit, skip MPI_Finalize (it would
 * wait for peers that may never come) so that mpirun ends the whole job. */
void coll__mpi_runtime_mark_failed(void);

/* Below MPI_THREAD_MULTIPLE, calls from several threads must not overlap:
 * every MPI call of libcoll runs between these (no-ops under MULTIPLE). */
void coll__mpi_lock(void);
void coll__mpi_unlock(void);

/* "MPI_Allreduce: MPI_ERR_TRUNCATE: message truncated" style text for code. */
void coll__mpi_describe(int code, const char *call, char *buf, size_t len);

#endif
