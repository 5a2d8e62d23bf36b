/* The mpi backend in the table of backends (backends.h): here when collbench
 * was built with MPI, else what to install. */
#include "backend/backends.h"
#include "backend/mpi/mpi_backend.h"

#include <stdio.h>

static const coll__backend_ops *probe(char *why, size_t whylen)
{
#ifdef COLL_HAVE_MPI
    (void)why;
    (void)whylen;
    return &coll__backend_mpi;
#else
    snprintf(why, whylen,
             "collbench was built without MPI: install libopenmpi-dev and openmpi-bin "
             "(scripts/deps.sh) and rebuild");
    return NULL;
#endif
}

const coll__backend_entry coll__mpi_entry = {
    .name = "mpi",
    .probe = probe,
    .flags = COLL__BACKEND_NEEDS_MPIRUN,
    .knobs = (const coll__tunable_table *const[]){&coll__mpi_tunables, NULL},
};
