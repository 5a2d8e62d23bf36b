/* Typical time and spread of a result (report_spread.h). */
#include "report/report_spread.h"

#include <math.h>

static int positive(double x) { return isfinite(x) && x > 0; }

double report_row_time(const bench_row *r)
{
    return positive(r->time_us_p50) ? r->time_us_p50 : r->time_us_avg;
}

spread_kind report_row_spread(const bench_row *r, double *lo, double *hi)
{
    if (positive(r->time_us_p25) && positive(r->time_us_p75) && r->time_us_p25 <= r->time_us_p75) {
        *lo = r->time_us_p25, *hi = r->time_us_p75;
        return SPREAD_IQR;
    }
    if (positive(r->time_us_min) && positive(r->time_us_p99) && r->time_us_min <= r->time_us_p99) {
        *lo = r->time_us_min, *hi = r->time_us_p99;
        return SPREAD_MIN_P99;
    }
    *lo = *hi = report_row_time(r);
    return SPREAD_UNKNOWN;
}

const char *report_spread_name(spread_kind k)
{
    return k == SPREAD_IQR ? "p25-p75" : k == SPREAD_MIN_P99 ? "min-p99" : "unknown";
}

spread_verdict report_rows_differ(const bench_row *a, const bench_row *b, spread_kind *used)
{
    double alo, ahi, blo, bhi;
    spread_kind ka = report_row_spread(a, &alo, &ahi), kb = report_row_spread(b, &blo, &bhi);
    /* Comparing an interquartile range with a min-p99 one would mix two
     * meanings: both rows use the wider kind that both have. */
    if (ka != kb && ka != SPREAD_UNKNOWN && kb != SPREAD_UNKNOWN) {
        bench_row x = *a, y = *b;
        x.time_us_p25 = x.time_us_p75 = y.time_us_p25 = y.time_us_p75 = NAN;
        ka = report_row_spread(&x, &alo, &ahi);
        kb = report_row_spread(&y, &blo, &bhi);
    }
    *used = ka < kb ? ka : kb;
    if (*used == SPREAD_UNKNOWN) return SPREAD_UNKNOWN_VERDICT;
    return ahi < blo || bhi < alo ? DIFFERS : WITHIN_NOISE;
}
