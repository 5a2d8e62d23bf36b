/* The shm backend's ops (shm.c) and tuning variables (shm_knobs.c), for its
 * entry and for auto, which runs it within a host. */
#ifndef SHM_BACKEND_H
#define SHM_BACKEND_H

#include "backend/backend.h"
#include "core/tuning.h"

extern const coll__backend_ops coll__backend_shm;
extern const coll__tunable_table coll__shm_tunables;

#endif
