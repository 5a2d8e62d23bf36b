/* Rows of one configuration measured more than once: the passes of
 * `collbench --passes` (backends alternated A B, B A within the same ranks),
 * or reruns reported together. The report treats them as one cell whose
 * spread covers every pass, so a difference is claimed only when it holds in
 * every pass and beyond each pass's own spread: a transient that inflated one
 * pass of one backend widens that backend's spread instead of making a
 * finding. */
#ifndef REPORT_PASSES_H
#define REPORT_PASSES_H

#include <stddef.h>

#include "rows/result.h"

/* Same configuration: everything but the timestamp and the measurements. */
int report_same_config(const bench_row *a, const bench_row *b);

/* How many rows from rows[0] on (at most n) share its configuration; rows of
 * one configuration sit together in report_sort_dedup's order. */
size_t report_pass_count(const bench_row *rows, size_t n);

/* One row for n passes of one configuration: p50 the median of the passes'
 * p50s (the mean of the middle two for an even n), avg their mean; p25, min
 * the lowest and p75, p99, max the highest of the passes (NaN where a pass
 * lacks them); bandwidths from the mean time; iters summed; wrong summed (-1
 * when no pass was checked); the newest timestamp. n == 1 copies the row. */
void report_fold_passes(const bench_row *rows, size_t n, bench_row *out);

#endif
