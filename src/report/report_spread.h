/* A result's typical time and its spread, and whether two results differ by
 * more than that spread: the report claims a difference only then. */
#ifndef REPORT_SPREAD_H
#define REPORT_SPREAD_H

#include "rows/result.h"

/* The median time (p50), or the average where a row has no p50. */
double report_row_time(const bench_row *r);

typedef enum spread_kind {
    SPREAD_UNKNOWN, /* neither p25/p75 nor min/p99 recorded */
    SPREAD_MIN_P99, /* older files: no p25/p75 */
    SPREAD_IQR,     /* p25..p75 */
} spread_kind;

/* r's spread as [lo, hi] microseconds; which one it is. */
spread_kind report_row_spread(const bench_row *r, double *lo, double *hi);

/* Names a spread kind for a sentence: "p25-p75", "min-p99", "unknown". */
const char *report_spread_name(spread_kind k);

typedef enum spread_verdict { DIFFERS, WITHIN_NOISE, SPREAD_UNKNOWN_VERDICT } spread_verdict;

/* Whether a and b differ beyond their spreads (the intervals do not overlap);
 * *used: the weaker kind of spread of the two, for the sentence. */
spread_verdict report_rows_differ(const bench_row *a, const bench_row *b, spread_kind *used);

#endif
