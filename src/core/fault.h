/* Fault injection for tests: COLL_FAULT=rank:point[:action[:arg]] makes the
 * named rank misbehave at the named point, so the test matrix can prove that
 * every other rank fails fast, names it, and loses nothing.
 *
 *   points:  rendezvous, connect, collective (after arg bytes moved in a
 *            collective; arg defaults to 0), progress (the nonblocking progress
 *            thread), store
 *   actions: kill (SIGKILL self, the default), hang (block forever),
 *            close-socket (the transport drops its connections), corrupt (flip
 *            bytes of the next payload sent)
 *
 * Several faults: separate with ','. Unset COLL_FAULT costs one predictable
 * branch per call site. */
#ifndef COLL_FAULT_H
#define COLL_FAULT_H

#include <stddef.h>

typedef enum coll_fault_point {
    COLL_FAULT_RENDEZVOUS = 0,
    COLL_FAULT_CONNECT,
    COLL_FAULT_COLLECTIVE,
    COLL_FAULT_PROGRESS,
    COLL_FAULT_STORE,
    COLL_FAULT_POINT_COUNT
} coll_fault_point;

typedef enum coll_fault_action {
    COLL_FAULT_NONE = 0,
    COLL_FAULT_KILL,
    COLL_FAULT_HANG,
    COLL_FAULT_CLOSE_SOCKET,
    COLL_FAULT_CORRUPT,
} coll_fault_action;

/* Parse COLL_FAULT once for this process's rank (called by the communicator
 * when the rank is known). Bad syntax: COLL_EINVAL with err naming the text. */
int coll_fault_init(int rank, char *err, size_t errlen);

/* Called at a point; bytes: progress so far at that point (collective bytes
 * moved). kill and hang act inside this call (never return). Returns the action
 * the caller must perform itself (close-socket, corrupt), else COLL_FAULT_NONE.
 * Each fault fires once. */
coll_fault_action coll_fault_hit(coll_fault_point point, size_t bytes);

#endif
