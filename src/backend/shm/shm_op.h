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
#include "backend/shm/shm_page_kind.h"
#include "core/reduce.h"
/* the bottom: segment, heap, liveness, waiting */
#include "backend/shm/shm_heap.h"
#include "backend/shm/shm_liveness.h"
#include "backend/shm/shm_segment.h"
#include "backend/shm/shm_wait.h"
/* the plan and the engines, each with its state */
#include "backend/shm/shm_plan.h"
#include "backend/shm/shm_claim.h"
#include "backend/shm/shm_cma_coll.h"
#include "backend/shm/shm_direct.h"
#include "backend/shm/shm_fused.h"
#include "backend/shm/shm_p2p.h"

/* The communicator: the segment and what every engine reads, then each
 * engine's own state, declared in its header. */
typedef struct shm_state {
    shm_segment seg;
    shm_liveness live;
    int rank, n;
    const int *world_of;         /* rank -> world rank (NULL: the group is the world) */
    int nworld;                  /* its entries: errors name world ranks (coll__err_init) */
    uint64_t step;               /* collective steps taken; the same on every rank */
    shm_knobs k;                 /* COLL_SHM_*: thresholds, chunk and slot sizes */
    shm_heap heap;               /* coll_alloc memory every rank has mapped */
    int spin, yield;             /* shm_waiter's */
    struct {                     /* the plan's probes (shm.c, shm_core_probe.h) */
        int on, due;             /* the bands probed on this communicator; still to run */
        int running;             /* a probe's own calls are running: they probe nothing */
        int given;               /* the probes whose knob was given at set-up: theirs stands */
        size_t window_max;       /* the window's end as read: the band above's start */
        size_t slices_min;       /* the CMA slices' bound on 4 KiB pages as read */
        size_t huge_min;         /* ... and where some rank holds huge pages */
        size_t huge_window_max;  /* the window's end on huge pages as read */
        size_t above_window_max; /* the second window's end as read */
        size_t priv_stream_min;  /* the private engine's streaming bound as read */
        int above_stage;         /* verdicts: staging from the window's end, */
        int low_stage;           /* ... and in the slices' lowest band */
        double at;               /* when rank 0 last asked for them (coll__now_s) */
    } probe;
    uint64_t *peer_send, *peer_recv; /* [n] buffer addresses of the current call */
    const void **red_in;             /* [n] inputs of one reduction (coll__reduce_many) */
    shm_cma_state cma;
    shm_direct_state direct;
    shm_private_state priv;
    shm_pages pages;            /* the direct and private engines' */
    coll__page_probe page_kind; /* are a call's buffers in 4 KiB pages (the plan asks) */
    shm_fused_state fused;
    shm_claim_state claim;
    shm_p2p_state p2p;
} shm_state;

typedef struct shm_op {
    shm_state *st;
    const coll__call *c;
    const coll__sig *sig;
    shm_waiter w;
    size_t es;           /* element size */
    coll__reduce_fn fn;  /* NULL for collectives without an op */
    size_t moved;        /* bytes moved so far (fault points) */
    int arrived;         /* the arrival step is taken already */
    int inline_data;     /* staging through the arrival posts (shm_stage.c) */
    size_t staged;       /* input bytes copied to the scratch before arriving */
    int plain;           /* this rank's buffers are in 4 KiB pages (posted at the arrival) */
    int all_plain;       /* every rank's post said so (set by the arrival) */
    int any_nonblocking; /* some rank's post says its call is nonblocking (set by the arrival) */
    int probe;           /* rank 0 asks every rank to probe again (posted at the arrival) */
} shm_op;

/* An engine's answer that it cannot run this call, so the dispatcher (shm.c)
 * picks another: engines never call up into it. Not a coll_status (those are
 * 0 or negative). */
#define SHM_NO_ROOM 1

/* Arrival: publish sig and buffer addresses as a new step, wait for every peer's,
 * compare signatures (COLL_EMISMATCH naming both calls), note peers' buffers. */
int coll__shm_op_arrive(shm_op *o, const void *sendbuf, const void *recvbuf);
/* Publish the next step and wait until every peer took it. */
int coll__shm_op_sync(shm_op *o, const char *what);
/* The fault point, once per chunk. */
void coll__shm_op_moved(shm_op *o, size_t bytes);
/* [lo, hi) of part p when count elements are split into n near-equal parts. */
void coll__shm_split(size_t count, int n, int p, size_t *lo, size_t *hi);
/* How many ranks' send buffer is their receive buffer (after the arrival,
 * which shows every rank every rank's buffers: all decide alike). */
int coll__shm_in_place_ranks(const shm_state *st);
/* CMA copy from/to rank p (memcpy for this rank), failures named. */
int coll__shm_op_read(shm_op *o, int p, void *dst, uint64_t remote, size_t bytes);
int coll__shm_op_write(shm_op *o, int p, uint64_t remote, const void *src, size_t bytes);

/* The staging engine (shm_stage.c): any collective through staging rounds.
 * The others, with their state, are declared in their headers above. */
int coll__shm_stage_run(shm_op *o);

#endif
