/* The time of one call, typically: per collective and size class, per
 * collective overall and over the whole trace, the median over the calls of
 * each call's time averaged over the ranks. Each rank numbers its calls of a
 * class in order (its k-th allreduce of 1M-16M); call position k's time is the
 * mean over the ranks that made it; the median is over the positions (a
 * collective overall: its classes' positions together). Replayed and recorded
 * (the trace's t1 - t0) alike, so the two compare call for call, which sums do
 * not when a few slow calls dominate.
 *
 * The ranks meet with two allreduces on the world communicator: the maximum of
 * each class's call count (the positions), then the sum of the times, the
 * recorded times and a count per position (3 doubles a position). */
#ifndef REPLAY_MEDIAN_H
#define REPLAY_MEDIAN_H

#include <stddef.h>

#include "coll.h"
#include "replay/replay_run.h"
#include "replay/trace.h"

/* Index of a collective's overall median in replay_medians' second dimension. */
#define REPLAY_MEDIAN_ALL REPLAY_NSIZE
#define REPLAY_MEDIAN_CELLS (REPLAY_OP_COUNT * REPLAY_NSIZE)

/* Seconds; NAN where no call ran. Recorded: meaningful only where every rank's
 * trace carries t0/t1 (replay_summary.has_times). */
typedef struct replay_medians {
    double replayed[REPLAY_OP_COUNT][REPLAY_NSIZE + 1];
    double recorded[REPLAY_OP_COUNT][REPLAY_NSIZE + 1];
    double all_replayed, all_recorded; /* over every call of the trace */
} replay_medians;

/* Every median NAN. */
void replay_medians_clear(replay_medians *m);

/* The median of v[0..n) (sorts v); NAN for n == 0. */
double replay_median_of(double *v, size_t n);

/* This rank's calls per cell (op * REPLAY_NSIZE + size class). */
void replay_median_counts(const replay_trace *t, double counts[REPLAY_MEDIAN_CELLS]);
/* Positions in all: the sum of the cells' maximum counts. */
size_t replay_median_positions(const double maxc[REPLAY_MEDIAN_CELLS]);
/* This rank's share of the sum (3 x positions doubles, zeroed by the caller):
 * replayed times (call_s: t->ncalls entries, replay_opts.call_s), recorded
 * times, then 1 at each position it made. */
void replay_median_fill(const replay_trace *t, const double *call_s,
                        const double maxc[REPLAY_MEDIAN_CELLS], double *buf);
/* The medians from the ranks' summed buffers. 0, or -1 out of memory. */
int replay_median_compute(const double *sums, const double maxc[REPLAY_MEDIAN_CELLS],
                          replay_medians *m);

/* All of the above on every rank of world (collective: every rank calls it).
 * 0, or a coll status (COLL_ENOMEM where the buffers do not fit). */
int replay_median_gather(const replay_trace *t, const double *call_s, coll_comm *world,
                         replay_medians *m);

#endif
