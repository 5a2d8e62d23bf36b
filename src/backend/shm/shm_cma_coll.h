/* The CMA engine (shm_cma_coll.c): collectives on large messages whose ranks
 * read and write each other's private buffers with process_vm_readv/writev,
 * and the state it keeps per communicator. */
#ifndef COLL_SHM_CMA_COLL_H
#define COLL_SHM_CMA_COLL_H

#include <stdint.h>

struct shm_op;

typedef struct shm_cma_state {
    int ok;                       /* process_vm_readv works between the ranks */
    char reason[160];             /* why not, when it does not */
    volatile uint64_t probe_word; /* the word the peers' probe reads (shm.c) */
    char *tmp, *acc;              /* chunk_bytes each: peer data, partial sums */
    float *wide;                  /* a chunk's float32 sums of half-precision data (lazily) */
} shm_cma_state;

int coll__shm_cma_run(struct shm_op *o);       /* collectives but all-reduce */
int coll__shm_cma_allreduce(struct shm_op *o); /* all-reduce: each rank its slice */
int coll__shm_cma_whole(struct shm_op *o);     /* all-reduce: every rank the whole vector */

#endif
