/* What a set of traces (one per rank, checked against each other) holds, in
 * a few lines: per group its ranks and how it was found, per op the calls,
 * the bytes and the recorded time, as the group's lowest rank made them
 * (collbench trace import and show). */
#ifndef REPLAY_TRACE_SUMMARY_H
#define REPLAY_TRACE_SUMMARY_H

#include <stddef.h>
#include <stdio.h>

#include "replay/trace.h"

/* by_rank: world entries (replay_trace_check's), none NULL. */
void replay_trace_summary(FILE *f, replay_trace *const *by_rank, int world);

#endif
