/* libcoll's numeric tuning variables ($COLL_SHM_CHUNK_BYTES, ...): a value
 * that is set but is not a number in range fails the call that reads it with
 * an error naming the variable, never a silent default or clamp. */
#ifndef COLL_ENV_H
#define COLL_ENV_H

#include <stdint.h>

#include "core/err.h"

/* Bytes: digits with an optional K, M or G suffix (KiB, MiB, GiB). Unset or
 * empty: *out = dflt. Set: a count in [lo, hi], else COLL_EINVAL in err. */
int coll__env_bytes(const char *name, uint64_t dflt, uint64_t lo, uint64_t hi, uint64_t *out,
                    coll__err *err);
/* The same for a plain count: digits only. */
int coll__env_count(const char *name, uint64_t dflt, uint64_t lo, uint64_t hi, uint64_t *out,
                    coll__err *err);
/* A switch: 0 or 1 (not "off", which would read as on where only 0 turns off). */
int coll__env_flag(const char *name, int dflt, int *out, coll__err *err);

/* The same checks on a value written elsewhere (a tuning file's line), name
 * naming it in the error. */
int coll__value_bytes(const char *name, const char *text, uint64_t lo, uint64_t hi, uint64_t *out,
                      coll__err *err);
int coll__value_count(const char *name, const char *text, uint64_t lo, uint64_t hi, uint64_t *out,
                      coll__err *err);
int coll__value_flag(const char *name, const char *text, int *out, coll__err *err);

/* libcoll's tuning variables are read by their rows (core/tuning.h,
 * coll__tunable_read), which give each its default and range. */

#endif
