/* Summary statistics of per-iteration times: the numbers every table, CSV row
 * and JSON row reports. Percentiles match numpy.percentile's default (linear
 * interpolation between the closest ranks) so results can be checked in Python. */
#include "engine/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* q in [0, 1] of sorted[0..n-1], n >= 1. */
static double percentile_sorted(const double *sorted, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)floor(pos);
    if (lo >= n - 1) return sorted[n - 1];
    double frac = pos - (double)lo;
    return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

void bench_stats_compute(const double *samples, size_t n, bench_stats *out)
{
    memset(out, 0, sizeof *out);
    if (n == 0 || !samples) return;

    double sum = 0, mn = samples[0], mx = samples[0];
    for (size_t i = 0; i < n; i++) {
        sum += samples[i];
        if (samples[i] < mn) mn = samples[i];
        if (samples[i] > mx) mx = samples[i];
    }
    out->avg = sum / (double)n;
    out->min = mn;
    out->max = mx;

    /* Sort a copy: the caller's samples stay in iteration order. */
    double *sorted = malloc(n * sizeof *sorted);
    if (!sorted) { /* no memory for the copy: say "unknown" rather than guess */
        out->p25 = out->p50 = out->p75 = out->p99 = NAN;
        return;
    }
    memcpy(sorted, samples, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_double);
    out->p25 = percentile_sorted(sorted, n, 0.25);
    out->p50 = percentile_sorted(sorted, n, 0.50);
    out->p75 = percentile_sorted(sorted, n, 0.75);
    out->p99 = percentile_sorted(sorted, n, 0.99);
    free(sorted);
}
