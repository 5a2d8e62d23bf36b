/* Straggler analysis of per-iteration arrival times (pure functions).
 *
 * Each iteration, every rank records when it reached the collective. A rank's
 * lateness in an iteration is its arrival minus the earliest rank's arrival;
 * its excess is its arrival minus the median arrival (with 2 ranks: minus the
 * other rank's). Ranks whose mean excess exceeds a threshold are stragglers.
 *
 * Why excess and not lateness: on a loaded host one rank can be early every
 * iteration (it kept a core to itself), which makes every other rank look
 * late relative to the earliest. A straggler is late relative to the typical
 * rank, and the median is not moved by one early or late rank.
 *
 * The default threshold scales with the jitter: how much a rank's excess varies
 * from iteration to iteration (its standard deviation), the median over ranks.
 * A steady delay is signal and does not raise it; scheduling noise does. */
#ifndef BENCH_STRAGGLER_H
#define BENCH_STRAGGLER_H

#include <stddef.h>
#include <stdio.h>

typedef struct straggler_rank {
    double mean_late_ms, p99_late_ms, max_late_ms; /* vs the earliest rank */
    double mean_excess_ms;                         /* vs the median arrival; negative: early */
    int last_count;                                /* iterations in which this rank arrived last */
    double last_fraction;                          /* last_count / iters */
    int flagged;                                   /* mean_excess_ms > threshold */
} straggler_rank;

typedef struct straggler_summary {
    int nranks, iters;
    double jitter_ms;    /* median over ranks of the std deviation of excess */
    double threshold_ms; /* the one used (given or default) */
    int threshold_is_default;
    int nflagged;
} straggler_summary;

/* Default threshold: max(1 ms, 3 x the jitter). */
double bench_straggler_default_threshold(double jitter_ms);

/* arrivals_s holds nranks blocks of iters seconds (rank r's block at r*iters,
 * the layout of an allgather). threshold_ms <= 0 picks the default. out has
 * nranks entries. Returns 0, or -1 for bad sizes/NULL/memory. */
int bench_straggler_analyze(const double *arrivals_s, int nranks, int iters, double threshold_ms,
                            straggler_rank *out, straggler_summary *sum);

/* The longest --inject delay: an hour. A delay past the run's -T makes the
 * others time out (and the launcher stop the delayed rank); anything longer
 * than this is a typo, not a test. */
#define BENCH_STRAGGLER_MAX_INJECT_MS 3600e3

/* Parses "RANK:MS[,RANK:MS...]" into delay_ms[0..world) (others 0). Returns 0, or
 * -1 with a message in err (rank outside [0, world), negative, bad or MS above
 * BENCH_STRAGGLER_MAX_INJECT_MS, repeats). */
int bench_straggler_parse_inject(const char *s, int world, double *delay_ms, char *err,
                                 size_t errlen);

/* The per-rank table, then each straggler with its evidence. */
void bench_straggler_print(FILE *f, const straggler_rank *r, const straggler_summary *sum);

#endif
