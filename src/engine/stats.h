/* Summary statistics of per-iteration times. */
#ifndef BENCH_STATS_H
#define BENCH_STATS_H

#include <stddef.h>

typedef struct bench_stats {
    double avg, min, p25, p50, p75, p99, max; /* same unit as the samples */
} bench_stats;

/* Percentiles by linear interpolation between closest ranks (numpy's default).
 * samples is not modified. n == 0 gives all zeros. */
void bench_stats_compute(const double *samples, size_t n, bench_stats *out);

#endif
