/* The table of backends: see backends.h. Adding a backend is its folder
 * (src/backend/NAME/, with NAME_entry.c defining coll__NAME_entry) and one
 * line here. */
#include "backend/backends.h"

#define BACKENDS(X)                                                    \
    X(tcp)  /* tcp/: src/algo's algorithms over the tcp transport */   \
    X(shm)  /* shm/: shared memory within a host */                    \
    X(auto) /* auto/: shm within a host, tcp between hosts */          \
    X(mpi)  /* mpi/: the MPI library's collectives (built with MPI) */ \
    X(nccl) /* nccl/: NCCL, loaded at run time */                      \
    X(gloo) /* gloo/: Gloo's collectives (built with Gloo) */

#define DECLARE(name) extern const coll__backend_entry coll__##name##_entry;
#define POINT(name) &coll__##name##_entry,
#define NAME(name) #name,

BACKENDS(DECLARE)

const coll__backend_entry *const coll__backends[] = {BACKENDS(POINT) NULL};
const char *const coll__backend_names[] = {BACKENDS(NAME) NULL};

const coll__tunable *coll__backend_knob(size_t i)
{
    for (const coll__backend_entry *const *e = coll__backends; *e; e++)
        for (const coll__tunable_table *const *t = (*e)->knobs; t && *t; t++) {
            if (i < (*t)->count) return &(*t)->rows[i];
            i -= (*t)->count;
        }
    return NULL;
}
