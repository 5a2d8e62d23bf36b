/* The auto backend in the table of backends (backends.h): always here. */
#include "backend/auto/auto.h"
#include "backend/backends.h"
#include "backend/shm/shm_backend.h"

static const coll__backend_ops *probe(char *why, size_t whylen)
{
    (void)why;
    (void)whylen;
    return &coll__backend_auto;
}

const coll__backend_entry coll__auto_entry = {
    .name = "auto",
    .probe = probe,
    .flags = COLL__BACKEND_SWEEPS,
    .knobs = (const coll__tunable_table *const[]){&coll__auto_tunables, NULL},
    .scratch_bytes = coll__shm_scratch_bytes, /* shm within a host */
};
