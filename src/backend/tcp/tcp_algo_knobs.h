/* The tcp backend's algorithm crossovers (src/algo's tuning table) as tuning
 * variables, COLL_TCP_*_MIN: `collbench tune` measures them here. */
#ifndef TCP_ALGO_KNOBS_H
#define TCP_ALGO_KNOBS_H

#include "algo/algo.h"
#include "core/tuning.h"

/* Rows in coll__crossover's order. */
extern const coll__tunable_table coll__tcp_algo_tunables;

/* The crossovers for a communicator of ranks ranks (environment, tuning
 * file, defaults); COLL_EINVAL with err naming a variable out of range. */
int coll__tcp_algo_limits(int ranks, coll__algo_limits *out, coll__err *err);

#endif
