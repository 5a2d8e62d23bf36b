/* Numeric environment variables, checked: see env.h. */
#include "core/env.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"

static int parse(const char *name, int suffixes, uint64_t dflt, uint64_t lo, uint64_t hi,
                 uint64_t *out, coll__err *err)
{
    const char *v = getenv(name);
    if (!v || !*v) {
        *out = dflt;
        return COLL_OK;
    }
    const char *what = suffixes ? "a byte count (digits, then optionally K, M or G)"
                                : "a count (digits)";
    if (!isdigit((unsigned char)v[0])) /* strtoull would take a sign or spaces */
        return coll__err_set(err, COLL_EINVAL, "%s=%s: not %s", name, v, what);
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    unsigned shift = 0;
    if (suffixes && *end) {
        const char *units = "KMG";
        for (unsigned i = 0; units[i]; i++)
            if (toupper((unsigned char)*end) == units[i]) shift = 10 * (i + 1);
        if (shift) end++;
    }
    if (*end) return coll__err_set(err, COLL_EINVAL, "%s=%s: not %s", name, v, what);
    if (errno == ERANGE || (shift && x > (UINT64_MAX >> shift)))
        return coll__err_set(err, COLL_EINVAL, "%s=%s: too large", name, v);
    x <<= shift;
    if (x < lo || x > hi) {
        return coll__err_set(err, COLL_EINVAL, "%s=%s: must be from %llu to %llu", name, v,
                             (unsigned long long)lo, (unsigned long long)hi);
    }
    *out = x;
    return COLL_OK;
}

int coll__env_bytes(const char *name, uint64_t dflt, uint64_t lo, uint64_t hi, uint64_t *out,
                    coll__err *err)
{
    return parse(name, 1, dflt, lo, hi, out, err);
}

int coll__env_count(const char *name, uint64_t dflt, uint64_t lo, uint64_t hi, uint64_t *out,
                    coll__err *err)
{
    return parse(name, 0, dflt, lo, hi, out, err);
}

int coll__env_flag(const char *name, int dflt, int *out, coll__err *err)
{
    const char *s = getenv(name);
    if (!s || !*s) {
        *out = dflt != 0;
        return COLL_OK;
    }
    if (strcmp(s, "0") != 0 && strcmp(s, "1") != 0)
        return coll__err_set(err, COLL_EINVAL, "%s=%s: must be 0 or 1", name, s);
    *out = s[0] == '1';
    return COLL_OK;
}

typedef enum { BYTES, COUNT, FLAG } tuning_kind;

typedef struct tuning_var {
    const char *name;
    tuning_kind kind;
    uint64_t lo, hi;
} tuning_var;

#define KIB 1024ull
static const tuning_var tuning[] = {
    {"COLL_SHM_SLOT_BYTES", BYTES, 4 * KIB, KIB *KIB *KIB},
    {"COLL_SHM_MBOX_BYTES", BYTES, 64, 64 * KIB *KIB},
    {"COLL_SHM_CHUNK_BYTES", BYTES, 64, 64 * KIB *KIB},
    {"COLL_SHM_CMA_MIN", BYTES, 0, SIZE_MAX},
    {"COLL_SHM_CMA_ALLREDUCE_MIN", BYTES, 0, SIZE_MAX},
    {"COLL_SHM_CMA_WHOLE_MIN", BYTES, 0, SIZE_MAX},
    {"COLL_SHM_CMA_WHOLE_MAX", BYTES, 0, SIZE_MAX},
    {"COLL_SHM_DIRECT_MIN", BYTES, 0, SIZE_MAX},
    {"COLL_SHM_STREAM_MIN", BYTES, 0, SIZE_MAX},
    {"COLL_SHM_TOUCH_MAX", BYTES, 0, SIZE_MAX},
    {"COLL_SHM_HEAP_BYTES", BYTES, 0, 1ull << 44},
    {"COLL_SHM_PRIV_MIN", BYTES, 0, SIZE_MAX},
    {"COLL_SHM_PRIV_MAX", BYTES, 0, SIZE_MAX},
    {"COLL_SHM_SPIN_US", COUNT, 0, 1000000},
    {"COLL_SHM_CMA", FLAG, 0, 1},
    {"COLL_TCP_SOCKBUF", BYTES, 0, 1ull << 30},
    {"COLL_AUTO_RANKS_PER_HOST", COUNT, 0, INT_MAX},
    {"COLL_AUTO_HIER", FLAG, 0, 1},
    {"COLL_AUTO_PIPE_BYTES", BYTES, 0, UINT64_MAX >> 1},
    {"COLL_MPI_MAX_COUNT", COUNT, 1, INT_MAX},
    {"COLL_GLOO_CHECK", FLAG, 0, 1},
};

static const tuning_var *find_tuning(const char *name)
{
    for (size_t i = 0; i < sizeof tuning / sizeof tuning[0]; i++)
        if (strcmp(tuning[i].name, name) == 0) return &tuning[i];
    return NULL;
}

int coll__env_tuned(const char *name, uint64_t dflt, uint64_t *out, coll__err *err)
{
    const tuning_var *t = find_tuning(name);
    if (!t || t->kind == FLAG)
        return coll__err_set(err, COLL_EINVAL, "%s: not a numeric tuning variable", name);
    return parse(name, t->kind == BYTES, dflt, t->lo, t->hi, out, err);
}

int coll__env_check_tuning(coll__err *err)
{
    for (size_t i = 0; i < sizeof tuning / sizeof tuning[0]; i++) {
        const tuning_var *t = &tuning[i];
        uint64_t v;
        int on;
        int rc = t->kind == FLAG ? coll__env_flag(t->name, 0, &on, err)
                                 : parse(t->name, t->kind == BYTES, 0, t->lo, t->hi, &v, err);
        if (rc) return rc;
    }
    return COLL_OK;
}
