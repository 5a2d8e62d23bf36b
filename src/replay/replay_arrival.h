/* The ranks' arrival at their first call, as recorded. A program's ranks
 * start apart (process start, imports, set-up), and its first collective's
 * recorded time holds the early ranks' wait for the late ones (DDP's first
 * all-gather: 16-31 ms recorded of 1 ms of work). The replay starts every rank
 * at a barrier; spending each rank's recorded lateness before its first call
 * (replay_opts.arrival_s) makes that wait again. */
#pragma once
#include "coll.h"
#include "replay/trace.h"

/* This rank's first call's recorded t0 minus the earliest rank's, in seconds,
 * into *arrival_s, and *one_clock 1: where every rank's trace carries times
 * and names one host (one clock); else both 0. A collective on world (every
 * rank calls it). 0, or a coll status. */
int replay_arrival(const replay_trace *t, coll_comm *world, double *arrival_s, int *one_clock);
