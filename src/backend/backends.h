/* The table of backends (backends.c): one line per backend, naming the entry
 * its folder defines (src/backend/NAME/NAME_entry.c, always built, also where
 * the backend itself is not). The registry, the gathering of tuning variables
 * and, through coll.h and coll_tool.h, `collbench info`, `check` and the help
 * read it; nothing else names a backend. */
#ifndef COLL_BACKENDS_H
#define COLL_BACKENDS_H

#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "core/tuning.h"

/* coll__backend_entry.flags */
#define COLL__BACKEND_NEEDS_MPIRUN 0x1u /* its ranks mpirun (or srun) must start */
#define COLL__BACKEND_SWEEPS 0x2u       /* a sweep that names no backend runs it */

typedef struct coll__backend_entry {
    const char *name;
    /* Its ops where it can run here; else NULL and, in why, what a user must
     * do to get it (without the "backend NAME unavailable: " lead). */
    const coll__backend_ops *(*probe)(char *why, size_t whylen);
    unsigned flags; /* COLL__BACKEND_* */
    /* Its tuning variables: tables, NULL-terminated (NULL: none). */
    const coll__tunable_table *const *knobs;
    /* Optional: 1 for an algorithm of collective that only this backend runs
     * (beyond src/algo's). */
    int (*own_algo)(const char *collective, const char *algo);
    /* Optional: bytes each of nranks ranks of a host allocates beyond its
     * buffers for calls of kind of these per-rank bytes on private buffers
     * (coll_backend_scratch_bytes). */
    size_t (*scratch_bytes)(coll__kind kind, const uint64_t *bytes, size_t nbytes, int nranks);
} coll__backend_entry;

/* Loads the tuning file once (tuning_load.c): every way into a backend calls
 * it before it reads a tuning variable. */
void coll__tuning_ensure(void);
/* One file read and judged for this machine, nothing installed: a
 * COLL_TUNING_FILE_* state, out filled when APPLIED, msg saying why for
 * FOREIGN and REFUSED. */
struct coll__tuning_values;
int coll__tuning_load(const char *file, struct coll__tuning_values *out, char *msg, size_t msglen);

/* Every backend, NULL-terminated, in the order coll_backend_names() lists them. */
extern const coll__backend_entry *const coll__backends[];
/* Row i of every entry's tuning tables, in the table's order (NULL past the
 * last): what collbench info --tuning lists and the tuning file names. */
const coll__tunable *coll__backend_knob(size_t i);
/* Their names, the same order (each entry's name; the unit test checks). */
extern const char *const coll__backend_names[];

#endif
