/* Straggler analysis: lateness per rank relative to the earliest arrival, and
 * excess over the median arrival, which decides (see the header). */
#include "engine/straggler.h"
#include "engine/stats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MIN_THRESHOLD_MS 1.0
#define JITTER_FACTOR 3.0

double bench_straggler_default_threshold(double jitter_ms)
{
    double t = JITTER_FACTOR * jitter_ms;
    return t > MIN_THRESHOLD_MS ? t : MIN_THRESHOLD_MS;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The reference an iteration's excess is measured from: the median arrival of
 * sorted[0..n) (n >= 3: one straggler or one early rank does not move it), or
 * for 2 ranks the other rank's arrival (the midpoint would halve a straggler). */
static double reference(const double *sorted, int n, double self)
{
    if (n == 1) return self;
    if (n == 2) return sorted[0] == self ? sorted[1] : sorted[0];
    return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

int bench_straggler_analyze(const double *arr, int nranks, int iters, double threshold_ms,
                            straggler_rank *out, straggler_summary *sum)
{
    if (!arr || !out || !sum || nranks < 1 || iters < 1) return -1;
    size_t cells = (size_t)nranks * (size_t)iters;
    double *late = malloc(cells * sizeof *late);
    double *excess = malloc(cells * sizeof *excess);
    double *scratch = malloc((size_t)nranks * sizeof *scratch);
    if (!late || !excess || !scratch) {
        free(late);
        free(excess);
        free(scratch);
        return -1;
    }
    memset(out, 0, (size_t)nranks * sizeof *out);
    for (int it = 0; it < iters; it++) {
        int first = 0, last = 0;
        for (int r = 1; r < nranks; r++) {
            if (arr[r * iters + it] < arr[first * iters + it]) first = r;
            if (arr[r * iters + it] > arr[last * iters + it]) last = r;
        }
        for (int r = 0; r < nranks; r++) scratch[r] = arr[r * iters + it];
        qsort(scratch, (size_t)nranks, sizeof *scratch, cmp_double);
        for (int r = 0; r < nranks; r++) {
            double a = arr[r * iters + it];
            late[r * iters + it] = (a - arr[first * iters + it]) * 1e3;
            excess[r * iters + it] = (a - reference(scratch, nranks, a)) * 1e3;
        }
        if (nranks > 1) out[last].last_count++;
    }
    for (int r = 0; r < nranks; r++) {
        bench_stats st;
        bench_stats_compute(late + (size_t)r * iters, (size_t)iters, &st);
        out[r].mean_late_ms = st.avg;
        out[r].p99_late_ms = st.p99;
        out[r].max_late_ms = st.max;
        out[r].last_fraction = (double)out[r].last_count / iters;
        const double *ex = excess + (size_t)r * iters;
        double mean = 0, var = 0;
        for (int it = 0; it < iters; it++) mean += ex[it];
        mean /= iters;
        for (int it = 0; it < iters; it++) var += (ex[it] - mean) * (ex[it] - mean);
        out[r].mean_excess_ms = mean;
        scratch[r] = sqrt(var / iters); /* this rank's jitter */
    }
    memset(sum, 0, sizeof *sum);
    sum->nranks = nranks;
    sum->iters = iters;
    sum->jitter_ms = median(scratch, nranks);
    sum->threshold_is_default = !(threshold_ms > 0);
    sum->threshold_ms = sum->threshold_is_default
                            ? bench_straggler_default_threshold(sum->jitter_ms)
                            : threshold_ms;
    for (int r = 0; r < nranks; r++) {
        out[r].flagged = out[r].mean_excess_ms > sum->threshold_ms;
        sum->nflagged += out[r].flagged;
    }
    free(late);
    free(excess);
    free(scratch);
    return 0;
}

int bench_straggler_parse_inject(const char *s, int world, double *delay_ms, char *err,
                                 size_t errlen)
{
    for (int r = 0; r < world; r++) delay_ms[r] = 0;
    if (!s || !*s) return snprintf(err, errlen, "--inject: empty, want RANK:MS[,RANK:MS]"), -1;
    const char *p = s;
    for (;;) {
        char *end;
        errno = 0;
        long rank = strtol(p, &end, 10);
        if (end == p || *end != ':')
            return snprintf(err, errlen, "--inject: '%s' is not RANK:MS[,RANK:MS]", s), -1;
        if (rank < 0 || rank >= world)
            return snprintf(err, errlen, "--inject: rank %ld is outside the world of %d ranks",
                            rank, world),
                   -1;
        p = end + 1;
        double ms = strtod(p, &end);
        if (end == p || (*end && *end != ',') || errno || !isfinite(ms))
            return snprintf(err, errlen, "--inject: '%s': bad delay for rank %ld", s, rank), -1;
        if (ms < 0)
            return snprintf(err, errlen, "--inject: negative delay %g ms for rank %ld", ms, rank),
                   -1;
        if (ms > BENCH_STRAGGLER_MAX_INJECT_MS)
            return snprintf(err, errlen,
                            "--inject: %g ms for rank %ld is above the limit of %.0f ms (an hour)",
                            ms, rank, BENCH_STRAGGLER_MAX_INJECT_MS),
                   -1;
        if (delay_ms[rank] > 0)
            return snprintf(err, errlen, "--inject: rank %ld given twice", rank), -1;
        delay_ms[rank] = ms;
        if (!*end) return 0;
        p = end + 1;
    }
}

void bench_straggler_print(FILE *f, const straggler_rank *r, const straggler_summary *sum)
{
    fprintf(f,
            "# %d ranks, %d iterations; lateness = arrival minus the earliest rank's,\n"
            "# excess = arrival minus the median arrival (2 ranks: the other's)\n",
            sum->nranks, sum->iters);
    fprintf(f, "# threshold %.3f ms on mean excess (%s); jitter %.3f ms\n", sum->threshold_ms,
            sum->threshold_is_default ? "default: max(1 ms, 3 x jitter)" : "--threshold",
            sum->jitter_ms);
    fprintf(f, "%6s %12s %12s %12s %12s %8s  %s\n", "rank", "mean_ms", "p99_ms", "max_ms",
            "excess_ms", "last%", "verdict");
    for (int i = 0; i < sum->nranks; i++)
        fprintf(f, "%6d %12.3f %12.3f %12.3f %12.3f %7.1f%%  %s\n", i, r[i].mean_late_ms,
                r[i].p99_late_ms, r[i].max_late_ms, r[i].mean_excess_ms, 100 * r[i].last_fraction,
                r[i].flagged ? "STRAGGLER" : "ok");
    for (int i = 0; i < sum->nranks; i++)
        if (r[i].flagged)
            fprintf(f,
                    "STRAGGLER rank %d: %.3f ms later than the median rank on average "
                    "> threshold %.3f ms; lateness mean %.3f ms, p99 %.3f ms; "
                    "last in %d of %d iterations\n",
                    i, r[i].mean_excess_ms, sum->threshold_ms, r[i].mean_late_ms, r[i].p99_late_ms,
                    r[i].last_count, sum->iters);
    if (sum->nflagged == 0) fprintf(f, "no stragglers\n");
}
