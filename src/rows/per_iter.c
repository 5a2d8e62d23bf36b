/* --per-iter rows: their CSV, appended by rank 0 (the engine gathers the times). */
#include "rows/per_iter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/atomic_file.h"
#include "coll.h"
#include "core/file_check.h"

/* One row is at most ~200 bytes: two short names and six numbers. */
#define ROW_MAX 256

/* Rows of all ranks into one malloc'd buffer. */
static char *format_rows(const bench_per_iter_key *key, const double *all_us, int nranks, int iters,
                         size_t *len)
{
    size_t cap = (size_t)nranks * (size_t)iters * ROW_MAX + 1;
    char *buf = malloc(cap);
    size_t used = 0;
    if (!buf) return NULL;
    for (int i = 0; i < iters; i++)
        for (int r = 0; r < nranks; r++) {
            int n = snprintf(buf + used, cap - used, "%s,%s,%d,%llu,%d,%d,%d,%.3f\n",
                             key->collective, key->backend, key->nprocs,
                             (unsigned long long)key->bytes, key->in_place, i, r,
                             all_us[(size_t)r * (size_t)iters + (size_t)i]);
            if (n < 0 || (size_t)n >= cap - used) { /* names longer than ROW_MAX allows */
                free(buf);
                return NULL;
            }
            used += (size_t)n;
        }
    *len = used;
    return buf;
}

int bench_per_iter_check(const char *path, char *err, size_t errlen)
{
    int rc = coll__file_check_writable(path, COLL_FILE_APPEND, err, errlen);
    return rc ? rc : coll__csv_check_header(path, BENCH_PER_ITER_HEADER, err, errlen);
}

int bench_per_iter_append(const char *path, const bench_per_iter_key *key, const double *all,
                          int iters, char *err, size_t errlen)
{
    size_t len = 0;
    char *rows = format_rows(key, all, key->nprocs, iters, &len);
    if (!rows) {
        snprintf(err, errlen, "--per-iter %s: out of memory formatting %d rows", path,
                 key->nprocs * iters);
        return COLL_ENOMEM;
    }
    char why[256];
    int rc = coll__csv_append(path, BENCH_PER_ITER_HEADER, rows, len, why, sizeof why);
    if (rc) snprintf(err, errlen, "--per-iter: %s", why);
    free(rows);
    return rc;
}
