/* Rendezvous under an MPI launcher (built only with MPI): ranks started by
 * mpirun (or MPICH's mpiexec, or srun with PMIx) and told nothing else
 * (env:// without MASTER_PORT) meet through MPI: rank 0 starts the TCP store on
 * a free port and MPI_Bcasts its address, port and a fresh job token, so the
 * tcp and shm backends need no MASTER_ADDR under mpirun. */
#ifndef COLL_RENDEZVOUS_MPI_H
#define COLL_RENDEZVOUS_MPI_H

#include <stddef.h>

#include "bootstrap/rendezvous.h"

/* 1 when init method `method` should be resolved through MPI (see above). */
int coll__rendezvous_mpi_wanted(const char *method);

/* Fills rv->store, rv->prefix and rv->token (rank and world already set, and
 * checked here against MPI_COMM_WORLD). The first call in a process is
 * collective over MPI_COMM_WORLD; later ones reuse its store. */
int coll__rendezvous_mpi(coll__rendezvous *rv, coll__err *err);

#endif
