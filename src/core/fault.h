/* Fault injection for tests: COLL_FAULT=rank:point[:action[:arg]] makes the
 * named rank misbehave at the named point, so the test matrix can prove that
 * every other rank fails fast, names it, and loses nothing.
 *
 *   points:  rendezvous (rank known, before the store is opened), connect (the
 *            transport's connection set-up, after this rank published its
 *            address; shared memory: after mapping the segment), collective (bytes sent
 *            by the transport; arg = how many bytes this process sends before
 *            the fault fires, default 0),
 *            progress (the nonblocking progress thread, before it runs a
 *            request; arg = how many requests run first), store (a store client
 *            request; arg = how many requests go through first)
 *   actions: kill (SIGKILL self, the default), hang (block forever, no CPU),
 *            close-socket (the transport drops the connection it was using),
 *            corrupt (the next message header sent has its magic flipped, so
 *            the receiver must reject it); the last two act where a point has
 *            a connection to act on and are ignored elsewhere; delay (sleep
 *            $COLL_FAULT_DELAY_S seconds, default 3, then go on: a slow rank)
 *   arg:     a byte or request count, K/M/G suffixes (powers of 1024)
 *
 * Several faults: separate with ','. Always built in: an unset COLL_FAULT
 * costs one predictable branch per call site. Each fault announces itself on
 * stderr ("collbench: COLL_FAULT: pid N: kill at collective (after 1048576)"). */
#ifndef COLL_FAULT_H
#define COLL_FAULT_H

#include <stddef.h>

typedef enum coll__fault_point {
    COLL_FAULT_RENDEZVOUS = 0,
    COLL_FAULT_CONNECT,
    COLL_FAULT_COLLECTIVE,
    COLL_FAULT_PROGRESS,
    COLL_FAULT_STORE,
    COLL_FAULT_POINT_COUNT
} coll__fault_point;

typedef enum coll__fault_action {
    COLL_FAULT_NONE = 0,
    COLL_FAULT_KILL,
    COLL_FAULT_HANG,
    COLL_FAULT_CLOSE_SOCKET,
    COLL_FAULT_CORRUPT,
    COLL_FAULT_DELAY,
} coll__fault_action;

/* Parse COLL_FAULT once per process, keeping the faults of this rank (called by
 * the rendezvous as soon as the rank is known). Bad syntax: COLL_EINVAL with
 * err naming the entry. */
int coll__fault_init(int rank, char *err, size_t errlen);
/* Parse spec for rank now, replacing any armed faults (tests; coll__fault_init
 * uses it). */
int coll__fault_parse(const char *spec, int rank, char *err, size_t errlen);

/* Called at a point. amount: what this call adds to the point's running total
 * (collective: bytes just sent, a delta; store: 1 per request; others: 0).
 * A fault fires once, at the first hit where the total reaches its arg.
 * kill and hang act inside this call (never return). Returns the action the
 * caller must perform itself (close-socket, corrupt), else COLL_FAULT_NONE. */
coll__fault_action coll__fault_hit(coll__fault_point point, size_t amount);

/* 1 while some fault of this rank has yet to fire: a component that would
 * move bytes of its own (a backend's measurement of itself) stays still, so
 * that a fault's count is the program's. */
int coll__fault_pending(void);

const char *coll__fault_point_name(coll__fault_point p);
const char *coll__fault_action_name(coll__fault_action a);

#endif
