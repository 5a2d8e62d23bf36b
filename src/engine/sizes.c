/* Byte sizes and integer lists from the command line.
 *
 * Suffixes are powers of 1024, as in nccl-tests: K, M, G, T, in either case,
 * optionally followed by "B" or "iB" ("1M" = "1m" = "1MB" = "1MiB" = 1048576).
 * A plain number or one ending in "B" is bytes. Decimal fractions are accepted
 * only when the result is a whole number of bytes ("1.5K" = 1536, "1.3" is
 * refused). Values must stay below 2^63 so they fit every signed 64-bit API. */
#include "core/errbuf.h"
#include "engine/sizes.h"
#include "coll.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIZE_MAX_VALUE ((uint64_t)INT64_MAX)
#define MAX_FRACTION_DIGITS 18 /* 10^18 still fits in a uint64_t */


static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Multiplier of a suffix (whole rest of the string), or 0 if unknown. */
static uint64_t suffix_multiplier(const char *s)
{
    static const char units[] = "KMGT";
    if (*s == '\0' || ((s[0] == 'B' || s[0] == 'b') && s[1] == '\0')) return 1;
    const char *u = strchr(units, toupper((unsigned char)s[0]));
    if (!u || s[0] == '\0') return 0;
    const char *rest = s + 1;
    if (*rest == 'i' || *rest == 'I') {
        rest++;
        if (*rest != 'B' && *rest != 'b') return 0; /* "Ki" alone is a typo */
    }
    if (*rest == 'B' || *rest == 'b') rest++;
    if (*rest != '\0') return 0;
    return (uint64_t)1 << (10 * (int)(u - units + 1));
}

/* s without leading/trailing blanks into buf; 0 if it does not fit. */
static int trimmed_copy(const char *s, size_t n, char *buf, size_t buflen)
{
    while (n > 0 && isspace((unsigned char)*s)) s++, n--;
    while (n > 0 && isspace((unsigned char)s[n - 1])) n--;
    if (n >= buflen) return 0;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return 1;
}

int bench_parse_size(const char *input, uint64_t *out, char *err, size_t errlen)
{
    char s[64];
    if (!input || !trimmed_copy(input, strlen(input), s, sizeof s)) {
        coll__set_err_keep_end(err, errlen, "size '%s': %s", input ? input : "(null)",
                               input ? "too long" : "missing");
        return COLL_EINVAL;
    }
    if (s[0] == '\0') {
        coll__set_err_keep_end(err, errlen, "empty size");
        return COLL_EINVAL;
    }
    if (s[0] == '-') {
        coll__set_err_keep_end(err, errlen, "size '%s': must not be negative", s);
        return COLL_EINVAL;
    }
    const char *p = s;
    if (!isdigit((unsigned char)*p)) {
        coll__set_err_keep_end(err, errlen, "size '%s': expected a number like 64, 1.5K, 1M or 1G",
                               s);
        return COLL_EINVAL;
    }
    uint64_t whole = 0;
    int too_big = 0;
    for (; isdigit((unsigned char)*p); p++) {
        unsigned d = (unsigned)(*p - '0');
        if (whole > (SIZE_MAX_VALUE - d) / 10) too_big = 1;
        else whole = whole * 10 + d;
    }
    uint64_t frac = 0, frac_den = 1; /* fraction = frac / frac_den */
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p)) {
            coll__set_err_keep_end(err, errlen,
                                   "size '%s': expected digits after the decimal point", s);
            return COLL_EINVAL;
        }
        const char *digits = p;
        while (isdigit((unsigned char)*p)) p++;
        const char *end = p;
        while (end > digits && end[-1] == '0') end--; /* "1.50K" = "1.5K" */
        if (end - digits > MAX_FRACTION_DIGITS) {
            coll__set_err_keep_end(err, errlen, "size '%s': too many decimal places", s);
            return COLL_EINVAL;
        }
        for (const char *q = digits; q < end; q++) {
            frac = frac * 10 + (uint64_t)(*q - '0');
            frac_den *= 10;
        }
    }
    uint64_t mult = suffix_multiplier(p);
    if (mult == 0) {
        coll__set_err_keep_end(err, errlen,
                               "size '%s': unknown suffix '%s' (use K, M, G or T: powers of 1024)",
                               s, p);
        return COLL_EINVAL;
    }
    /* frac/frac_den * mult must be whole: reduce the fraction first so nothing overflows. */
    uint64_t frac_bytes = 0;
    if (frac > 0) {
        uint64_t g = gcd_u64(frac, frac_den);
        uint64_t num = frac / g, den = frac_den / g;
        if (mult % den != 0) {
            coll__set_err_keep_end(err, errlen, "size '%s': not a whole number of bytes", s);
            return COLL_EINVAL;
        }
        frac_bytes = num * (mult / den); /* < mult because num < den */
    }
    if (too_big || whole > (SIZE_MAX_VALUE - frac_bytes) / mult) {
        coll__set_err_keep_end(err, errlen, "size '%s': too large (the limit is 2^63-1 bytes)", s);
        return COLL_EINVAL;
    }
    *out = whole * mult + frac_bytes;
    return COLL_OK;
}

/* Calls parse_item on each comma-separated item of s; empty items are errors. */
typedef int (*item_parser)(const char *item, void *dst, size_t idx, char *err, size_t errlen);

static int parse_list(const char *s, size_t elem_size, item_parser parse_item, void **out,
                      size_t *n, char *err, size_t errlen)
{
    if (!s) {
        coll__set_err_keep_end(err, errlen, "missing list");
        return COLL_EINVAL;
    }
    size_t items = 1;
    for (const char *p = s; *p; p++) items += (*p == ',');
    char *arr = calloc(items, elem_size);
    if (!arr) {
        coll__set_err_keep_end(err, errlen, "out of memory parsing list '%s'", s);
        return COLL_ENOMEM;
    }
    const char *start = s;
    for (size_t i = 0; i < items; i++) {
        const char *comma = strchr(start, ',');
        size_t len = comma ? (size_t)(comma - start) : strlen(start);
        char item[64];
        if (!trimmed_copy(start, len, item, sizeof item)) {
            coll__set_err_keep_end(err, errlen, "item %zu of '%s' is too long", i + 1, s);
            free(arr);
            return COLL_EINVAL;
        }
        if (item[0] == '\0') {
            if (items == 1) coll__set_err_keep_end(err, errlen, "empty list");
            else coll__set_err_keep_end(err, errlen, "item %zu of '%s' is empty", i + 1, s);
            free(arr);
            return COLL_EINVAL;
        }
        int rc = parse_item(item, arr + i * elem_size, i, err, errlen);
        if (rc != COLL_OK) {
            free(arr);
            return rc;
        }
        start = comma ? comma + 1 : start + len;
    }
    *out = arr;
    *n = items;
    return COLL_OK;
}

static int parse_size_item(const char *item, void *dst, size_t idx, char *err, size_t errlen)
{
    (void)idx;
    return bench_parse_size(item, dst, err, errlen);
}

static int parse_positive_int(const char *item, void *dst, size_t idx, char *err, size_t errlen)
{
    (void)idx;
    const char *p = item;
    if (*p == '+') p++;
    if (*item == '-') {
        coll__set_err_keep_end(err, errlen, "'%s': must be a positive integer", item);
        return COLL_EINVAL;
    }
    if (!isdigit((unsigned char)*p)) {
        coll__set_err_keep_end(err, errlen, "'%s': not an integer", item);
        return COLL_EINVAL;
    }
    long v = 0;
    for (; isdigit((unsigned char)*p); p++) {
        v = v * 10 + (*p - '0');
        if (v > INT_MAX) {
            coll__set_err_keep_end(err, errlen, "'%s': too large (the limit is %d)", item, INT_MAX);
            return COLL_EINVAL;
        }
    }
    if (*p != '\0') {
        coll__set_err_keep_end(err, errlen, "'%s': not an integer", item);
        return COLL_EINVAL;
    }
    if (v == 0) {
        coll__set_err_keep_end(err, errlen, "'%s': must be a positive integer", item);
        return COLL_EINVAL;
    }
    *(int *)dst = (int)v;
    return COLL_OK;
}

int bench_parse_size_list(const char *s, uint64_t **out, size_t *n, char *err, size_t errlen)
{
    void *arr = NULL;
    *n = 0;
    int rc = parse_list(s, sizeof **out, parse_size_item, &arr, n, err, errlen);
    *out = arr;
    return rc;
}

int bench_parse_int_list(const char *s, int **out, size_t *n, char *err, size_t errlen)
{
    void *arr = NULL;
    *n = 0;
    int rc = parse_list(s, sizeof **out, parse_positive_int, &arr, n, err, errlen);
    *out = arr;
    return rc;
}

void bench_format_size(uint64_t bytes, char *buf, size_t len)
{
    static const char units[] = "TGMK";
    if (!buf || len == 0) return;
    /* Largest unit that shows the size exactly with at most two decimals
     * (unit is 2^k, so bytes*100 % unit == 0 iff bytes % (unit/4) == 0). */
    for (int i = 0; i < 4; i++) {
        uint64_t unit = (uint64_t)1 << (10 * (4 - i));
        if (bytes < unit || bytes % (unit / 4) != 0) continue;
        uint64_t whole = bytes / unit;
        unsigned hundredths = (unsigned)((bytes % unit) * 100 / unit);
        if (hundredths == 0) snprintf(buf, len, "%llu%c", (unsigned long long)whole, units[i]);
        else if (hundredths % 10 == 0)
            snprintf(buf, len, "%llu.%u%c", (unsigned long long)whole, hundredths / 10, units[i]);
        else snprintf(buf, len, "%llu.%02u%c", (unsigned long long)whole, hundredths, units[i]);
        return;
    }
    snprintf(buf, len, "%llu", (unsigned long long)bytes);
}
