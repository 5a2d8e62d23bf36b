/* The time budget of one size (--time-budget): how long to warm up and how
 * many iterations to time, decided from warm-up times (pure functions; every
 * rank calls them with the same max-reduced times, so all decide alike). */
#ifndef BENCH_BUDGET_H
#define BENCH_BUDGET_H

#define BUDGET_MIN_TIMED_ITERS 3
/* A warm-up iteration at least this x the one before: no longer falling. */
#define BUDGET_SETTLED 0.8

/* After `done` of `warmup` warm-up iterations, the last taking t_us and the
 * one before prev_us: 1 to stop warming up. Stops early only when the rest
 * (warm-ups left and `iters` timed) would overrun budget_s (0: no budget),
 * after at least 2, and once the time has settled: the first iterations of a
 * large size pay for page faults in every process that maps the buffers
 * (seconds per GiB on some VMs), and timing those would report the faults. */
int bench_budget_stop_warmup(double budget_s, int warmup, int iters, int done, double t_us,
                             double prev_us);

/* Timed iterations at t_us each: iters, or as many as fit budget_s but at
 * least BUDGET_MIN_TIMED_ITERS. */
int bench_budget_timed_iters(double budget_s, int iters, double t_us);

/* --stop-spread: a cell whose timed iterations already agree stops early:
 * every BUDGET_TIGHT_EVERY iterations (while more are left) the runner
 * max-reduces the times so far, and stops when their p25-p75 spread is at most
 * `bound` of their median. */
#define BUDGET_TIGHT_EVERY 8

/* 1 when, after `done` of `iters` timed iterations, the runner should look
 * (bound 0: never). */
int bench_budget_spread_due(double bound, int done, int iters);

/* 1 when times with these quartiles are within bound of their median. */
int bench_budget_spread_tight(double bound, double p25, double p50, double p75);

#endif
