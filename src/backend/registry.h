/* The backend registry's questions for the layers above libcoll (bench, tools):
 * is a name a backend, is it usable here, does a sweep run it by default.
 * coll.h has the public two (coll_backend_names, coll_backend_available). */
#ifndef COLL_BACKEND_REGISTRY_H
#define COLL_BACKEND_REGISTRY_H

#include <stddef.h>

/* 1 if name is one of coll_backend_names(), built in here or not. */
int coll__backend_known(const char *name);
/* coll_backend_available, with why's "backend NAME unavailable: " lead dropped
 * (for callers that name the backend on the line already). */
int coll__backend_available_bare(const char *name, char *why, size_t whylen);
/* 1 for a backend whose ranks mpirun (or srun) must start: mpi. */
int coll__backend_needs_mpirun(const char *name);
/* 1 if a sweep with no --backend runs it: not mpi (its own sweep, through
 * mpirun), not nccl (GPU buffers: --device cuda). */
int coll__backend_sweeps_by_default(const char *name);
/* The backends a sweep with no --backend runs here, in coll_backend_names()'s
 * order: those that sweep by default and are available. Returns how many. */
size_t coll__backend_default_sweep(const char **out, size_t cap);
/* The one backend of a run that names none: auto where it is available, else fallback. */
const char *coll__backend_preferred(const char *fallback);

#endif
