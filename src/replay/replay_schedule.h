/* Which calls a replay keeps in flight together, read from the recorded times.
 *
 * A program that issues its collectives asynchronously (DDP's bucket
 * all-reduces) has several in flight at once: call j was issued at t0[j] while
 * earlier calls had not ended (t1[i] > t0[j]). Replaying each call alone loses
 * that queueing, so the replay keeps in flight what the program kept in
 * flight: before issuing call j it waits for exactly the calls that had ended
 * before the program issued j (done_by[i] <= j). Calls of one group end in
 * their issue order, so a call that must be done makes the earlier calls of
 * its group done too; done_by is made to say so. */
#ifndef REPLAY_SCHEDULE_H
#define REPLAY_SCHEDULE_H

#include <stddef.h>

#include "replay/trace.h"

/* More calls of one group than this in flight: the replay waits for the
 * oldest first (each in-flight call has its own buffers). */
#define REPLAY_MAX_IN_FLIGHT 16

/* 1 for ops the replay issues without waiting (libcoll has a nonblocking
 * call for them); the others wait for their group's calls in flight first. */
int replay_op_nonblocking(replay_op op);
/* 1 for calls the replay issues without waiting: an op replay_op_nonblocking
 * names, unless the program ran it on its calling thread (blocking), which
 * the replay runs on its own as a blocking call. */
int replay_call_nonblocking(const replay_call *c);

/* done_by[i] (t->ncalls entries): the first call the replay must not issue
 * before call i has ended: the first j > i with t0[j] >= t1[i], at most the
 * next blocking call of i's group, at most done_by of any later call of the
 * group; t->ncalls when none. Needs t->has_times. */
void replay_schedule_done_by(const replay_trace *t, size_t *done_by);

/* depth[g] (t->ngroups entries): the most calls of group g in flight at once
 * under done_by (1 at least, at most REPLAY_MAX_IN_FLIGHT). 0, or -1 out of memory. */
int replay_schedule_depth(const replay_trace *t, const size_t *done_by, size_t *depth);

/* Where the program blocked for a call (its wait_cpu): the replay, in the gap
 * before call `before` (the first one issued after the call's recorded end;
 * t->ncalls: after the last), spins `cpu` ns of the calling thread's CPU from
 * the previous call's return, then waits for `call`. */
typedef struct replay_wait {
    size_t call, before;
    int64_t cpu;
} replay_wait;

/* t's calls with a wait_cpu, by `before`, then by `cpu`, into a new array of
 * *n (free() it); NULL with *n 0 when there are none or out of memory (then
 * the replay waits only where done_by says, as without the CPU times). */
replay_wait *replay_schedule_waits(const replay_trace *t, size_t *n);

#endif
