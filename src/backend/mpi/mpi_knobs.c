/* The mpi backend's tuning variables: see mpi_backend.h. */
#include "backend/mpi/mpi_backend.h"

#include <limits.h>

static const coll__tunable rows[] = {
    [COLL__MPI_KNOB_MAX_COUNT] = COLL__TUNABLE("COLL_MPI_MAX_COUNT", COUNT, INT_MAX, ALWAYS, 1,
                                               INT_MAX,
                                               "mpi: largest element count of one MPI call"),
};

const coll__tunable_table coll__mpi_tunables = {rows, sizeof rows / sizeof rows[0]};
