/* Communication spent waiting for a collective's last rank. A collective ends
 * no earlier than its last rank arrives: the time an early rank spends in it
 * before then is the other ranks' lateness (their compute, a straggler, a
 * scheduler), not the backend's transfer. The split says which part of a
 * replay's communication a backend choice can change, and it is what
 * differs between two recordings of one program on different backends: a
 * profile on torch's gloo, whose worker threads take cores from the compute,
 * has one rank issue every bucket tens of ms after the other on 2 cores
 * (docs/PERFORMANCE.md), which the replay reproduces on every backend.
 *
 * A call's last arrival is the latest issue over its group's ranks; this
 * rank's skew is its communication (the union of its calls' intervals,
 * replay_busy.h) less the union of each call from its last arrival on.
 * Point-to-point calls count whole (no group-wide arrival). */
#pragma once
#include <stddef.h>

#include "coll.h"
#include "replay/trace.h"

/* For each collective call i of t in group g: out[i] = op (COLL_MIN or
 * COLL_MAX) of mine[i] over the group's ranks; the other entries of out are
 * left as they are. comm: g's communicator; every rank of g calls this for g,
 * in the order all visit their groups (by id); it takes two allreduces,
 * joined also out of memory. 0, or a coll status. */
int replay_group_extreme(const replay_trace *t, size_t g, coll_comm *comm, const double *mine,
                         double *out, coll_op op);

/* The skew of n calls issued at start[i], ended at end[i], whose last rank
 * arrived at last[i] (all on one clock): the union of [start, end) less the
 * union of [max(start, last), end). -1 when out of memory. */
double replay_skew_of(const double *start, const double *end, const double *last, size_t n);
