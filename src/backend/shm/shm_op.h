/* Internals of the shm backend shared by its files: the backend state, one
 * running call (shm_op), and the engines every collective is built on:
 *   staging: rounds through the segment (copy in, publish, peers copy out);
 *            small messages, and everything when CMA is unavailable;
 *   cma:     peers read (or write) each other's buffers with process_vm_readv,
 *            one copy, chunked so that partial results stay in L2 (a small
 *            all-reduce out of place: each rank reads whole inputs);
 *   direct:  all-reduce on buffers in the shared heaps (coll_alloc): plain
 *            loads and stores, chunks claimed by whichever rank runs;
 *   private: all-reduce on private buffers of mid sizes: each rank copies its
 *            input once into a scratch area of its heap, the direct engine
 *            runs on those copies, results go out to the private outputs.
 * Which one runs a call is decided in one place: coll__shm_plan (shm_plan.c).
 * Every collective starts with an arrival step (signature + buffer addresses,
 * checked against every peer) and every rank takes the same steps, so a step
 * number is a sequence number that only grows, on every rank alike. */
#ifndef COLL_SHM_OP_H
#define COLL_SHM_OP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend/backend.h"
#include "backend/shm/shm_plan.h"
#include "core/reduce.h"
#include "backend/shm/shm_heap.h"
#include "backend/shm/shm_liveness.h"
#include "backend/shm/shm_segment.h"
#include "backend/shm/shm_wait.h"

/* A rank's buffers of a direct all-reduce whose pages this process's page
 * tables already map (while its heap_frees count has not moved). */
typedef struct shm_populated {
    uint64_t send, recv, bytes, frees;
    uint64_t used; /* LRU stamp (0: empty); not part of the key */
} shm_populated;

/* The page-table cache of buffer sets per rank: a DDP step all-reduces one
 * bucket after another, each at its own address (issue 18), so it holds many:
 * SHM_POP_SETS x SHM_POP_WAYS, set-associative by a hash of the buffer set,
 * the least recently used of a set's ways replaced (a rotation through fewer
 * than about SHM_POP_SETS buffer sets stays in it). */
#define SHM_POP_SETS 256
#define SHM_POP_WAYS 4

typedef struct shm_state {
    shm_segment seg;
    shm_liveness live;
    int rank, n;
    const int *world_of;  /* rank -> world rank (NULL: the group is the world) */
    int nworld;           /* its entries: errors name world ranks (coll__err_init) */
    int cma;              /* process_vm_readv works between the ranks */
    char cma_reason[160]; /* why not, when it does not */
    uint64_t step;        /* collective steps taken; the same on every rank */
    shm_knobs k;          /* COLL_SHM_*: thresholds, chunk and slot sizes */
    shm_heap heap;        /* coll_alloc memory every rank has mapped */
    int direct;           /* every rank mapped every heap: direct all-reduce possible */
    uint64_t chunks_done; /* direct all-reduce chunks of earlier calls (shm_header) */
    uint64_t *home_done;  /* [n] of them in each rank's home ranges (shm_rank_ctrl) */
    shm_populated *pop;   /* [n][SHM_POP_SETS][SHM_POP_WAYS] each rank's buffer sets this
                             * process's mappings hold, least recently used out */
    uint64_t pop_clock;   /* LRU stamps */
    char *scratch;        /* this rank's copy-in area in its own heap */
    size_t scratch_bytes;
    unsigned char *mine; /* [mine_cap] chunks this rank reduced in a call */
    size_t mine_cap;
    char **in_map, **out_map;        /* [n] every rank's buffers as mapped here */
    const float **at_in;             /* [n] the same at the chunk being reduced, for */
    float **at_out;                  /* coll__shm_fused_f32_sum */
    int fused;                       /* coll__shm_fused_f32_sum runs here */
    char *sub;                       /* SHM_SUB_BYTES: one reduced block on its way out */
    int spin, yield;                 /* shm_waiter's */
    char *tmp, *acc;                 /* chunk_bytes each: peer data, partial sums */
    uint64_t *peer_send, *peer_recv; /* [n] buffer addresses of the current call */
    unsigned char *watch;            /* [n] peers whose death fails a p2p wait */
    int any_last;                    /* the peer recv_any took last: looked at last next time */
    volatile uint64_t probe_word;
} shm_state;

typedef struct shm_op {
    shm_state *st;
    const coll__call *c;
    const coll__sig *sig;
    shm_waiter w;
    size_t es;          /* element size */
    coll__reduce_fn fn; /* NULL for collectives without an op */
    size_t moved;       /* bytes moved so far (fault points) */
    int arrived;        /* the arrival step is taken already */
    int inline_data;    /* staging through the arrival posts (shm_stage.c) */
    size_t staged;      /* input bytes copied to the scratch before arriving */
} shm_op;

/* An engine's answer that it cannot run this call, so the dispatcher (shm.c)
 * picks another: engines never call up into it. Not a coll_status (those are
 * 0 or negative). */
#define SHM_NO_ROOM 1

#define SHM_SUB_BYTES 16384 /* stays in L1 while it is reduced and written out */

/* Arrival: publish sig and buffer addresses as a new step, wait for every peer's,
 * compare signatures (COLL_EMISMATCH naming both calls), note peers' buffers. */
int coll__shm_op_arrive(shm_op *o, const void *sendbuf, const void *recvbuf);
/* Publish the next step and wait until every peer took it. */
int coll__shm_op_sync(shm_op *o, const char *what);
/* The fault point, once per chunk. */
void coll__shm_op_moved(shm_op *o, size_t bytes);
/* [lo, hi) of part p when count elements are split into n near-equal parts. */
void coll__shm_split(size_t count, int n, int p, size_t *lo, size_t *hi);
/* CMA copy from/to rank p (memcpy for this rank), failures named. */
int coll__shm_op_read(shm_op *o, int p, void *dst, uint64_t remote, size_t bytes);
int coll__shm_op_write(shm_op *o, int p, uint64_t remote, const void *src, size_t bytes);

/* The engines (shm_plan.h says which runs). */
int coll__shm_stage_run(shm_op *o); /* any collective through staging rounds */
int coll__shm_cma_run(shm_op *o);   /* collectives but all-reduce with CMA (large messages) */
int coll__shm_p2p_run(shm_op *o);   /* send, recv, sendrecv */
/* After the arrival: 1 when every rank's buffers are in the shared heaps,
 * then mapped here in st->in_map and st->out_map (shm_direct.c). */
int coll__shm_direct_map(shm_op *o);
int coll__shm_direct_allreduce(shm_op *o); /* on those maps */
/* Copy-in to the heap, then direct; SHM_NO_ROOM when some rank's heap had no
 * room for its scratch (every rank sees it after the same step). */
int coll__shm_private_allreduce(shm_op *o);
int coll__shm_cma_allreduce(shm_op *o); /* CMA: each rank its slice */
int coll__shm_cma_whole(shm_op *o);     /* CMA: every rank the whole vector */

/* One chunk (0..nchunks of the call) of an engine that claims chunks (the
 * direct and private all-reduce); a nonzero status stops the call. */
typedef int (*shm_chunk_fn)(shm_op *o, uint64_t k, void *arg);
/* Runs fn on every chunk this rank claims (home range first, then the
 * others': shm_claim.c), then waits until all nchunks are finished, naming a
 * rank that still holds one if they never are. Every rank calls it. */
int coll__shm_claim_all(shm_op *o, uint64_t nchunks, shm_chunk_fn fn, void *arg);
/* Before the arrival of an all-reduce that may take the private engine
 * (SHM_ENGINE_ARRIVE_COPY): copy the input into this rank's scratch when it
 * is large enough (shm_direct.c). */
void coll__shm_private_stage(shm_op *o);

#endif
