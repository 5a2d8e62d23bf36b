/* Calls in flight during a replay: one completion thread per group waits for
 * its group's requests in issue order and notes when each ended, as the torch
 * backend's completion thread does when it records a trace (so a replayed
 * call's time is measured as the recorded one was: issue to completion, with
 * the queueing behind the calls before it). */
#ifndef REPLAY_FLIGHT_H
#define REPLAY_FLIGHT_H

#include <stddef.h>

#include "coll.h"

typedef struct replay_flight replay_flight;

/* For a trace of ncalls calls in ngroups groups. NULL out of memory. */
replay_flight *replay_flight_new(size_t ncalls, size_t ngroups);

/* Hands call `call`'s request to group's completion thread (started on first
 * use). 0, or COLL_ENOMEM when the thread could not start (the request was
 * waited for here, its end noted). */
int replay_flight_add(replay_flight *f, size_t group, size_t call, coll_request *req);

/* Waits until call `call` (added before) has ended: *done when, returns its status. */
int replay_flight_wait(replay_flight *f, size_t call, double *done);

/* Every added call ended (also after an error), the threads joined, f freed. */
void replay_flight_free(replay_flight *f);

#endif
