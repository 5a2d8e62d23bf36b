/* The shm backend's ops (shm.c) and tuning variables (shm_knobs.c), for its
 * entry and for auto, which runs it within a host. */
#ifndef SHM_BACKEND_H
#define SHM_BACKEND_H

#include "backend/backend.h"
#include "core/tuning.h"

#include <stdint.h>

extern const coll__backend_ops coll__backend_shm;
extern const coll__tunable_table coll__shm_tunables;

/* Bytes each of nranks ranks of this host allocates beyond its buffers for
 * calls of kind of these per-rank bytes on private buffers: all-reduce's
 * copy-in scratch in the shared heap, at most (shm_scratch.c); 0 otherwise. */
size_t coll__shm_scratch_bytes(coll__kind kind, const uint64_t *bytes, size_t nbytes, int nranks);

#endif
