/* libcoll's tuning variables ($COLL_SHM_CHUNK_BYTES, ...): one table of name,
 * kind, default, range and meaning (tuning.c). Backends read them from it,
 * `collbench info --tuning` prints it with the values in force, and README's
 * list is generated from it (scripts/check_tuning_doc.sh). */
#ifndef COLL_TUNING_H
#define COLL_TUNING_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

typedef enum { COLL__TUNE_BYTES, COLL__TUNE_COUNT, COLL__TUNE_FLAG } coll__tune_kind;

/* When the default applies; otherwise the default is 0 (measured crossovers
 * that hold only in one configuration). */
typedef enum {
    COLL__TUNE_ALWAYS,
    COLL__TUNE_PAIR,    /* at 2 ranks */
    COLL__TUNE_OVERSUB, /* with more ranks than cores */
} coll__tune_when;

typedef struct coll__tunable {
    const char *name;
    coll__tune_kind kind;
    uint64_t dflt;
    coll__tune_when when;
    uint64_t lo, hi;
    const char *meaning;
} coll__tunable;

/* The table and its length. */
const coll__tunable *coll__tunables(size_t *count);
/* The row of name, NULL when there is none. */
const coll__tunable *coll__tunable_find(const char *name);
/* Its default for a communicator of ranks ranks, oversub when they outnumber
 * the cores. */
uint64_t coll__tunable_default(const coll__tunable *t, int ranks, int oversub);
/* Reads $name (a row of the table) by its kind and range: unset or empty
 * gives the default for (ranks, oversub); a value that is not in range is
 * COLL_EINVAL with err naming the variable, never clamped or wrapped. A name
 * not in the table is a bug (COLL_EINVAL). */
int coll__tunable_read(const char *name, int ranks, int oversub, uint64_t *out, coll__err *err);
/* "1M", "64K", "50": a value as a person (and the parser) writes it. */
void coll__tunable_format(const coll__tunable *t, uint64_t v, char *buf, size_t len);
/* "32K at 2 ranks, else 0": the default as a person reads it. */
void coll__tunable_format_default(const coll__tunable *t, char *buf, size_t len);

#endif
