/* collbench replay --calls: every call of every rank and turn, recorded
 * against replayed, one CSV row each. A turn's sums and medians say how far
 * the replay is from the program; these rows say where: which call, on
 * which rank, issued how much earlier or later than recorded, and how long
 * it took each time.
 *
 * Start times are seconds from the turn's start (every rank leaves a barrier
 * together, then spends its recorded arrival) and, recorded, from the
 * earliest rank's first call where the traces are on one clock (one host),
 * else from this rank's own first call: on one clock the ranks' rows line up
 * call for call, their differences the program's arrival skew. */
#ifndef REPLAY_CALLS_H
#define REPLAY_CALLS_H

#include <stddef.h>

#include "coll.h"
#include "replay/trace.h"

#define REPLAY_CALLS_HEADER                                                                       \
    "backend,pass,rank,call,seq,group,op,dtype,bytes,recorded_start_s,recorded_s,replayed_start_" \
    "s,replayed_s"

/* This rank's rows of one turn into a new *out (free() it) of *len bytes:
 * issue_s and call_s (t->ncalls entries each) the replay's issue times from
 * the turn's start and durations; rec_from_s where this rank's first call
 * stands on the recorded clock (its arrival on one clock, else 0). The
 * recorded columns are empty where the trace has no times. 0, or -1 out of
 * memory. */
int replay_calls_format(const replay_trace *t, const char *backend, int pass, double rec_from_s,
                        const double *issue_s, const double *call_s, char **out, size_t *len);

/* Every rank's rows to rank 0, in rank order (collective on world: send and
 * receive on it). Rank 0 gets them in a new *all (free() it) of *alllen
 * bytes; the others NULL. 0, or a coll status (COLL_ENOMEM on rank 0 when
 * they do not fit, after taking them all in: no rank is left waiting). */
int replay_calls_gather(coll_comm *world, const char *mine, size_t len, char **all, size_t *alllen);

#endif
