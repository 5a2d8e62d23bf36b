/* Passes of one configuration folded into one cell (report_passes.h). */
#include "report/report_passes.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

int report_same_config(const bench_row *a, const bench_row *b)
{
    return strcmp(a->host, b->host) == 0 && strcmp(a->collective, b->collective) == 0 &&
           strcmp(a->backend, b->backend) == 0 && strcmp(a->algo, b->algo) == 0 &&
           strcmp(a->device, b->device) == 0 && strcmp(a->buffers, b->buffers) == 0 &&
           a->nprocs == b->nprocs && a->nnodes == b->nnodes && strcmp(a->dtype, b->dtype) == 0 &&
           strcmp(a->op, b->op) == 0 && a->in_place == b->in_place && a->bytes == b->bytes &&
           a->count == b->count;
}

size_t report_pass_count(const bench_row *rows, size_t n)
{
    size_t k = n ? 1 : 0;
    while (k < n && report_same_config(&rows[0], &rows[k])) k++;
    return k;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Lowest (sign 1) or highest (-1) of a field over the passes; NaN if any lacks it. */
static double extreme(const bench_row *rows, size_t n, size_t offset, int sign)
{
    double best = NAN;
    for (size_t i = 0; i < n; i++) {
        double v = *(const double *)((const char *)&rows[i] + offset);
        if (!isfinite(v)) return NAN;
        if (i == 0 || (sign > 0 ? v < best : v > best)) best = v;
    }
    return best;
}

void report_fold_passes(const bench_row *rows, size_t n, bench_row *out)
{
    *out = rows[0];
    double *p50 = n > 1 ? malloc(n * sizeof *p50) : NULL;
    if (!p50) return; /* one pass, or no memory: the first pass stands for the cell */
    double avg = 0;
    int64_t wrong = -1;
    for (size_t i = 0; i < n; i++) {
        p50[i] = rows[i].time_us_p50;
        avg += rows[i].time_us_avg / (double)n;
        if (rows[i].wrong >= 0) wrong = (wrong < 0 ? 0 : wrong) + rows[i].wrong;
        if (strcmp(rows[i].timestamp, out->timestamp) > 0)
            memcpy(out->timestamp, rows[i].timestamp, sizeof out->timestamp);
        if (i) out->iters += rows[i].iters;
    }
    qsort(p50, n, sizeof *p50, cmp_double);
    out->time_us_p50 = n % 2 ? p50[n / 2] : (p50[n / 2 - 1] + p50[n / 2]) / 2;
    free(p50);
    out->time_us_avg = avg;
    out->time_us_min = extreme(rows, n, offsetof(bench_row, time_us_min), 1);
    out->time_us_p25 = extreme(rows, n, offsetof(bench_row, time_us_p25), 1);
    out->time_us_p75 = extreme(rows, n, offsetof(bench_row, time_us_p75), -1);
    out->time_us_p99 = extreme(rows, n, offsetof(bench_row, time_us_p99), -1);
    out->time_us_max = extreme(rows, n, offsetof(bench_row, time_us_max), -1);
    /* bandwidth is bytes over the mean time: scale the first pass's by the new mean */
    double scale = avg > 0 && rows[0].time_us_avg > 0 ? rows[0].time_us_avg / avg : 1;
    out->algbw_GBps = rows[0].algbw_GBps * scale;
    out->busbw_GBps = rows[0].busbw_GBps * scale;
    out->wrong = wrong;
}
