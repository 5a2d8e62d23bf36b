/* The mpi backend's ops (mpi.c, built only with MPI) and tuning variables
 * (mpi_knobs.c, always built: README lists them either way). */
#ifndef COLL_MPI_BACKEND_H
#define COLL_MPI_BACKEND_H

#include "backend/backend.h"
#include "core/tuning.h"

#ifdef COLL_HAVE_MPI
extern const coll__backend_ops coll__backend_mpi;
#endif

enum { COLL__MPI_KNOB_MAX_COUNT };
extern const coll__tunable_table coll__mpi_tunables;

#endif
