/* The ranks' recorded exit from each collective. A collective ends on its
 * ranks at different times (the last to arrive may copy last; torch wakes each
 * caller on its own: DDP's first all-reduce on torch 1.13 let one rank go 1 ms
 * after the other, its first broadcast on torch 2.6 kept the root 4 ms), and
 * the next call's arrival skew is that exit lateness plus the difference of
 * the gaps: a call shorter than the skew (DDP's tiny broadcasts after 55 ms of
 * set-up) is timed as that wait. The replay's ranks leave a collective nearly
 * together, so each spends its recorded lateness after the call, with the
 * next gap (replay_run.c), and arrives as the program did (with no more ranks
 * than cores: cmd_replay_rank.c says why). A rank that waited also wakes late
 * in the replay: its wake-up (tens of microseconds) counts twice, small
 * against the gaps it sits in. */
#pragma once
#include <stddef.h>

#include "coll.h"
#include "replay/trace.h"

/* For each call of t in group g, late_s[i] (t->ncalls entries, the others
 * left as they are): its recorded t1 minus the earliest t1 of the same call on
 * the group's ranks, in seconds; point-to-point calls left as they are. comm:
 * g's communicator; every rank of g calls this for g, in the order all visit
 * their groups (by id), and it takes two allreduces, joined also out of
 * memory (late_s NULL counts as that). Call only when every rank's trace has
 * times and names one host (replay_arrival: one clock). 0, or a coll status. */
int replay_exit_lateness(const replay_trace *t, size_t g, coll_comm *comm, double *late_s);
