/* Numeric environment variables, checked: see env.h. */
#include "core/env.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"

static int parse_text(const char *name, const char *v, int suffixes, uint64_t lo, uint64_t hi,
                      uint64_t *out, coll__err *err)
{
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

static int parse(const char *name, int suffixes, uint64_t dflt, uint64_t lo, uint64_t hi,
                 uint64_t *out, coll__err *err)
{
    const char *v = getenv(name);
    if (!v || !*v) {
        *out = dflt;
        return COLL_OK;
    }
    return parse_text(name, v, suffixes, lo, hi, out, err);
}

int coll__value_bytes(const char *name, const char *text, uint64_t lo, uint64_t hi, uint64_t *out,
                      coll__err *err)
{
    return parse_text(name, text, 1, lo, hi, out, err);
}

int coll__value_count(const char *name, const char *text, uint64_t lo, uint64_t hi, uint64_t *out,
                      coll__err *err)
{
    return parse_text(name, text, 0, lo, hi, out, err);
}

int coll__value_flag(const char *name, const char *text, int *out, coll__err *err)
{
    if (strcmp(text, "0") != 0 && strcmp(text, "1") != 0)
        return coll__err_set(err, COLL_EINVAL, "%s=%s: must be 0 or 1", name, text);
    *out = text[0] == '1';
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
    return coll__value_flag(name, s, out, err);
}
