/* A rank's time in communication: how long some call of it was in flight.
 * Calls a program (or its replay) kept in flight at once overlap; summing
 * their times counts the overlap once per call, and a call queued behind
 * another (gloo runs a group's calls one after the other) would count the
 * other's time again. Calls one at a time: the union is their sum. */
#ifndef REPLAY_BUSY_H
#define REPLAY_BUSY_H

#include <stddef.h>

/* The length of the union of [start[i], end[i]) over the n intervals, in
 * their unit; an interval with end <= start (a call that never ended) adds
 * nothing. Needs no order; -1 when out of memory. */
double replay_busy(const double *start, const double *end, size_t n);

#endif
