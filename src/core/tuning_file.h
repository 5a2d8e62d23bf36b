/* The tuning file (`collbench tune` writes it, libcoll reads it): this
 * machine's measured values of tuning variables, between the environment
 * (above it) and the built-in defaults (below it). docs/DESIGN.md "Tuning
 * file" has the format:
 *
 *   # collbench tuning v1
 *   machine.cpu = AMD EPYC 7B13
 *   machine.flags = avx2 erms fsrm
 *   machine.kernel = 6.1.0-18-amd64
 *   machine.cores = 2
 *   machine.copy_gbps = 5.1
 *   COLL_SHM_CMA = 0  # measured: ...
 *
 * Parsing is all or nothing: any bad line refuses the whole file, naming
 * the file and line. Which variables exist is the caller's (a lookup), so
 * this sits in coll_base under the components that declare them. */
#ifndef COLL_TUNING_FILE_H
#define COLL_TUNING_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/machine_id.h"
#include "core/tuning.h"

#define COLL__TUNING_VERSION 1
#define COLL__TUNING_HEADER "# collbench tuning v1"
#define COLL__TUNING_MAX_VALUES 64
#define COLL__TUNING_MAX_BYTES (64 * 1024)

typedef struct coll__tuning_values {
    coll__machine_id machine; /* the machine the file was measured on */
    double copy_gbps;         /* its memory copy rate (informational), 0: not given */
    size_t count;
    struct {
        const coll__tunable *row;
        uint64_t value;
    } v[COLL__TUNING_MAX_VALUES];
} coll__tuning_values;

/* The row of the variable called name, NULL when there is none. */
typedef const coll__tunable *(*coll__tunable_lookup)(const char *name, void *arg);

/* Where the file is: $COLL_TUNING_FILE when set and not empty, else
 * $XDG_CONFIG_HOME/collbench/tuning, else $HOME/.config/collbench/tuning.
 * 0 with path set, or -1 when none can be named (no HOME). */
int coll__tuning_file_path(char *path, size_t len);

/* Parses a file's text (path only names it in errors): COLL_OK with out
 * filled, or COLL_EINVAL with err "PATH:LINE: why" and out's count 0. */
int coll__tuning_parse(const char *text, const char *path, coll__tunable_lookup find, void *arg,
                       coll__tuning_values *out, coll__err *err);

/* Reads and parses path: COLL_OK; 1 when it does not exist (nothing to
 * apply, nothing to say); COLL_EINVAL or COLL_ESYS with err naming it. */
int coll__tuning_file_read(const char *path, coll__tunable_lookup find, void *arg,
                           coll__tuning_values *out, coll__err *err);

#endif
