/* The shm backend in the table of backends (backends.h): always here. */
#include "backend/backends.h"
#include "backend/shm/shm_backend.h"

static const coll__backend_ops *probe(char *why, size_t whylen)
{
    (void)why;
    (void)whylen;
    return &coll__backend_shm;
}

const coll__backend_entry coll__shm_entry = {
    .name = "shm",
    .probe = probe,
    .flags = COLL__BACKEND_SWEEPS,
    .knobs = (const coll__tunable_table *const[]){&coll__shm_tunables, NULL},
    .scratch_bytes = coll__shm_scratch_bytes,
};
