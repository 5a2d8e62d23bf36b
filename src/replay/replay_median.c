/* The median time of one call, over the ranks (replay_median.h). */
#include "replay/replay_median.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void replay_medians_clear(replay_medians *m)
{
    for (int op = 0; op < REPLAY_OP_COUNT; op++)
        for (int k = 0; k <= REPLAY_NSIZE; k++) m->replayed[op][k] = m->recorded[op][k] = NAN;
    m->all_replayed = m->all_recorded = NAN;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double replay_median_of(double *v, size_t n)
{
    if (!n) return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void replay_median_counts(const replay_trace *t, double counts[REPLAY_MEDIAN_CELLS])
{
    memset(counts, 0, REPLAY_MEDIAN_CELLS * sizeof *counts);
    for (size_t i = 0; i < t->ncalls; i++)
        counts[t->calls[i].op * REPLAY_NSIZE + replay_call_size_class(t, &t->calls[i])]++;
}

size_t replay_median_positions(const double maxc[REPLAY_MEDIAN_CELLS])
{
    size_t n = 0;
    for (int c = 0; c < REPLAY_MEDIAN_CELLS; c++) n += (size_t)maxc[c];
    return n;
}

/* Where each cell's positions start in a third of the buffer. */
static void offsets(const double maxc[REPLAY_MEDIAN_CELLS], size_t off[REPLAY_MEDIAN_CELLS])
{
    size_t at = 0;
    for (int c = 0; c < REPLAY_MEDIAN_CELLS; c++) off[c] = at, at += (size_t)maxc[c];
}

void replay_median_fill(const replay_trace *t, const double *call_s,
                        const double maxc[REPLAY_MEDIAN_CELLS], double *buf)
{
    size_t off[REPLAY_MEDIAN_CELLS], next[REPLAY_MEDIAN_CELLS] = {0};
    size_t n = replay_median_positions(maxc);
    offsets(maxc, off);
    for (size_t i = 0; i < t->ncalls; i++) {
        const replay_call *c = &t->calls[i];
        int cell = c->op * REPLAY_NSIZE + replay_call_size_class(t, c);
        if (next[cell] >= (size_t)maxc[cell]) continue; /* maxc is the ranks' maximum */
        size_t at = off[cell] + next[cell]++;
        buf[at] = call_s[i];
        buf[n + at] = t->has_times ? (double)(c->t1 - c->t0) * 1e-9 : 0;
        buf[2 * n + at] = 1;
    }
}

/* The median of the position means of the cells [c0, c1). */
static double cells_median(const double *sum, const double *ranks, const size_t *off,
                           const double *maxc, int c0, int c1, double *scratch)
{
    size_t k = 0;
    for (int c = c0; c < c1; c++)
        for (size_t p = off[c]; p < off[c] + (size_t)maxc[c]; p++)
            if (ranks[p] > 0) scratch[k++] = sum[p] / ranks[p];
    return replay_median_of(scratch, k);
}

int replay_median_compute(const double *sums, const double maxc[REPLAY_MEDIAN_CELLS],
                          replay_medians *m)
{
    size_t off[REPLAY_MEDIAN_CELLS], n = replay_median_positions(maxc);
    double *scratch = malloc((n + 1) * sizeof *scratch);
    replay_medians_clear(m);
    if (!scratch) return -1;
    offsets(maxc, off);
    const double *rec = sums + n, *ranks = sums + 2 * n;
    for (int op = 0; op < REPLAY_OP_COUNT; op++) {
        int c0 = op * REPLAY_NSIZE;
        for (int k = 0; k < REPLAY_NSIZE; k++) {
            m->replayed[op][k] = cells_median(sums, ranks, off, maxc, c0 + k, c0 + k + 1, scratch);
            m->recorded[op][k] = cells_median(rec, ranks, off, maxc, c0 + k, c0 + k + 1, scratch);
        }
        m->replayed[op][REPLAY_MEDIAN_ALL] = cells_median(sums, ranks, off, maxc, c0,
                                                          c0 + REPLAY_NSIZE, scratch);
        m->recorded[op][REPLAY_MEDIAN_ALL] = cells_median(rec, ranks, off, maxc, c0,
                                                          c0 + REPLAY_NSIZE, scratch);
    }
    m->all_replayed = cells_median(sums, ranks, off, maxc, 0, REPLAY_MEDIAN_CELLS, scratch);
    m->all_recorded = cells_median(rec, ranks, off, maxc, 0, REPLAY_MEDIAN_CELLS, scratch);
    free(scratch);
    return 0;
}

int replay_median_gather(const replay_trace *t, const double *call_s, coll_comm *world,
                         replay_medians *m)
{
    double counts[REPLAY_MEDIAN_CELLS], maxc[REPLAY_MEDIAN_CELLS];
    replay_medians_clear(m);
    replay_median_counts(t, counts);
    int rc = coll_allreduce(world, counts, maxc, REPLAY_MEDIAN_CELLS, COLL_FLOAT64, COLL_MAX);
    if (rc) return rc;
    size_t n = replay_median_positions(maxc);
    double *mine = calloc(3 * n + 1, sizeof *mine), *sums = calloc(3 * n + 1, sizeof *sums);
    /* every rank gets the same n: a failed allocation must still join the sum */
    int oom = !mine || !sums;
    if (!oom) replay_median_fill(t, call_s, maxc, mine);
    double flag = oom, any;
    rc = coll_allreduce(world, &flag, &any, 1, COLL_FLOAT64, COLL_MAX);
    if (!rc && any) rc = COLL_ENOMEM;
    if (!rc && n) rc = coll_allreduce(world, mine, sums, 3 * n, COLL_FLOAT64, COLL_SUM);
    if (!rc && replay_median_compute(sums, maxc, m)) rc = COLL_ENOMEM;
    free(mine);
    free(sums);
    return rc;
}
