/* An in-order job thread for the auto backend's hierarchical all-reduce: each
 * chunk's inter-host step is posted here, so that chunk crosses the network
 * while the caller reduces the next chunk inside the host and gathers the one
 * before. Jobs run one at a time in the order posted; waits block on a
 * condition variable (more ranks than cores is normal here). */
#ifndef COLL_BACKEND_AUTO_PIPE_H
#define COLL_BACKEND_AUTO_PIPE_H

#include <stdint.h>

typedef struct auto_pipe auto_pipe;
typedef void (*auto_pipe_fn)(void *arg);

/* Jobs posted and not yet waited for, at most. */
#define AUTO_PIPE_DEPTH 4

/* The thread, or NULL when one cannot be started (the caller then runs its
 * steps one after another). */
auto_pipe *coll__auto_pipe_start(void);

/* Runs what was posted, then joins the thread. NULL is a no-op. */
void coll__auto_pipe_stop(auto_pipe *p);

/* Queues fn(arg) and returns its ticket (1, 2, ...): at most AUTO_PIPE_DEPTH
 * tickets may be outstanding (posted, not yet waited for). */
uint64_t coll__auto_pipe_post(auto_pipe *p, auto_pipe_fn fn, void *arg);

/* Blocks until the job with this ticket (and every one before it) has run. */
void coll__auto_pipe_wait(auto_pipe *p, uint64_t ticket);

#endif
