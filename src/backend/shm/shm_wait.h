/* Waiting on a shared segment without burning a core: spin a bounded number of
 * times, then sleep on this rank's doorbell futex in short slices; every slice
 * checks the condition, the abort word, the watched peers' liveness and the
 * deadline. Writers publish, then ring the doorbells of whoever may sleep. */
#ifndef COLL_SHM_WAIT_H
#define COLL_SHM_WAIT_H

#include <stddef.h>
#include <stdint.h>

#include "backend/shm/shm_liveness.h"
#include "backend/shm/shm_segment.h"

typedef struct shm_waiter {
    shm_segment *seg;
    const shm_liveness *live;
    const unsigned char *watch; /* ranks whose death fails the wait; NULL: all */
    double deadline;
    int spin;       /* microseconds of spinning before the first sleep */
    int yield;      /* more ranks than cores: yield the CPU while spinning */
    coll__err *err; /* why a wait failed, and whom to blame: world ranks
                                 * through its map (the group's) */
} shm_waiter;

typedef int (*shm_cond_fn)(const void *arg);

/* 0 once cond(arg) holds; else COLL_EPEER (a watched peer died or a peer aborted),
 * COLL_ETIMEDOUT (deadline; blames who, -1: a wait for any peer, nobody) or the
 * aborting rank's status, with err filled (err->rank: whom to blame). what names
 * the wait in messages. */
int coll__shm_wait(const shm_waiter *w, shm_cond_fn cond, const void *arg, int who,
                   const char *what);
/* Until peer's progress >= step / every peer's progress >= step. */
int coll__shm_wait_progress(const shm_waiter *w, int peer, uint64_t step, const char *what);
int coll__shm_wait_all(const shm_waiter *w, uint64_t step, const char *what);
/* Until every peer's post for step (ctrl->post[step & 1]) is there. */
int coll__shm_wait_posts(const shm_waiter *w, uint64_t step, const char *what);

/* Wake rank if it sleeps (call after publishing with a seq_cst store). */
void coll__shm_ring(shm_segment *seg, int rank);
void coll__shm_ring_all(shm_segment *seg);
/* Set this rank's progress to step and ring every peer. */
void coll__shm_publish(shm_segment *seg, uint64_t step);
/* Record the first failure of the communicator, blaming world rank failed_rank
 * (-1: none; it may be outside the group), and wake everyone. */
void coll__shm_abort_mark(shm_segment *seg, int status, int failed_rank);

#endif
