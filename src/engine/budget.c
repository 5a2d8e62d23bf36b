/* Warm-up and iteration counts under --time-budget; see budget.h. */
#include "engine/budget.h"

#include <math.h>

static int over(double budget_s, int left, double t_us)
{
    return budget_s > 0 && left * t_us > budget_s * 1e6;
}

int bench_budget_stop_warmup(double budget_s, int warmup, int iters, int done, double t_us,
                             double prev_us)
{
    if (done >= warmup) return 1;
    return done >= 2 && t_us >= BUDGET_SETTLED * prev_us &&
           over(budget_s, warmup - done + iters, t_us);
}

int bench_budget_timed_iters(double budget_s, int iters, double t_us)
{
    if (!over(budget_s, iters, t_us)) return iters;
    double fit = t_us > 0 ? floor(budget_s * 1e6 / t_us) : iters;
    if (fit < BUDGET_MIN_TIMED_ITERS) fit = BUDGET_MIN_TIMED_ITERS;
    return fit < iters ? (int)fit : iters;
}

int bench_budget_spread_due(double bound, int done, int iters)
{
    return bound > 0 && done > 0 && done < iters && done % BUDGET_TIGHT_EVERY == 0;
}

int bench_budget_spread_tight(double bound, double p25, double p50, double p75)
{
    return bound > 0 && p50 > 0 && p75 >= p25 && p75 - p25 <= bound * p50;
}
