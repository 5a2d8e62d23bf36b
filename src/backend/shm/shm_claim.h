/* Chunks claimed by whichever rank runs (shm_claim.c), for the direct and
 * private all-reduce engines. */
#ifndef COLL_SHM_CLAIM_H
#define COLL_SHM_CLAIM_H

#include <stdint.h>

struct shm_op;

/* Every rank counts every call's chunks alike, so the shared counters of the
 * segment need no reset between calls. */
typedef struct shm_claim_state {
    uint64_t chunks_done; /* chunks of earlier calls (shm_header's finished) */
    uint64_t *home_done;  /* [n] of them in each rank's home range (shm_rank_ctrl) */
} shm_claim_state;

/* One chunk (0..nchunks of the call); a nonzero status stops the call. */
typedef int (*shm_chunk_fn)(struct shm_op *o, uint64_t k, void *arg);
/* Runs fn on every chunk this rank claims (home range first, then the
 * others'), then waits until all nchunks are finished, naming a rank that
 * still holds one if they never are. Every rank calls it. */
int coll__shm_claim_all(struct shm_op *o, uint64_t nchunks, shm_chunk_fn fn, void *arg);

#endif
