/* A tuning variable ($COLL_..._BYTES, ...) as a row of name, kind, default,
 * range and meaning, and how one row is read, range-checked and written. Each
 * component declares its own rows beside its code; the gathering of them all
 * (`collbench info --tuning`, the launcher's check, README's list through
 * scripts/check_tuning_doc.sh) is above this layer. */
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
    COLL__TUNE_CORES,   /* with a core per rank */
} coll__tune_when;

typedef struct coll__tunable {
    const char *name;
    coll__tune_kind kind;
    uint64_t dflt;
    coll__tune_when when;
    uint64_t lo, hi;
    const char *meaning;
} coll__tunable;

/* One component's rows. */
typedef struct coll__tunable_table {
    const coll__tunable *rows;
    size_t count;
} coll__tunable_table;

#define COLL__KIB 1024ull
#define COLL__MIB (COLL__KIB * COLL__KIB)
#define COLL__GIB (COLL__MIB * COLL__KIB)
/* A row: COLL__TUNABLE("COLL_X_BYTES", BYTES, 64 * COLL__KIB, ALWAYS, 0, SIZE_MAX, "..."). */
#define COLL__TUNABLE(name, kind, dflt, when, lo, hi, meaning)            \
    {                                                                     \
        name, COLL__TUNE_##kind, dflt, COLL__TUNE_##when, lo, hi, meaning \
    }

/* Its default for a communicator of ranks ranks, oversub when they outnumber
 * the cores. */
uint64_t coll__tunable_default(const coll__tunable *t, int ranks, int oversub);
/* Reads row t's variable by its kind and range: unset or empty gives the
 * tuning file's value where the row's default applies (its `when`; elsewhere
 * the default 0), else the default for (ranks, oversub); a value that is not
 * in range is COLL_EINVAL with err naming the variable, never clamped or
 * wrapped. */
int coll__tunable_read(const coll__tunable *t, int ranks, int oversub, uint64_t *out,
                       coll__err *err);
/* The tuning file's layer (core/tuning_file.h): values that replace the
 * defaults, the environment still above them. Installed once, whole, by the
 * one loader (NULL: none); v must outlive every read. */
struct coll__tuning_values;
void coll__tunable_layer_install(const struct coll__tuning_values *v);
/* 1 with *out when the installed file gives row t a value, else 0. */
int coll__tunable_file_value(const coll__tunable *t, uint64_t *out);
/* Where row t's value comes from: "env", "file" or "default". */
const char *coll__tunable_source(const coll__tunable *t);
/* COLL_OK when row t's variable is unset or in range, else COLL_EINVAL. */
int coll__tunable_check(const coll__tunable *t, coll__err *err);
/* "1M", "64K", "50": a value as a person (and the parser) writes it. */
void coll__tunable_format(const coll__tunable *t, uint64_t v, char *buf, size_t len);
/* "32K at 2 ranks, else 0": the default as a person reads it. */
void coll__tunable_format_default(const coll__tunable *t, char *buf, size_t len);

#endif
