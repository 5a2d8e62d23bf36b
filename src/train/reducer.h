/* How gradients (or parameters) meet across ranks in one training step:
 *   single          no communication
 *   allreduce-sync  one all-reduce (average) of every gradient after backward
 *   ddp             buckets of --bucket-mb (the first smaller, as torch DDP),
 *                   each bucket's nonblocking all-reduce started from inside
 *                   backward as soon as its gradients are final, all waited
 *                   before the optimizer; optionally compressed (compress.h)
 *   ps              gradients sent to rank 0, averaged there, rank 0 steps and
 *                   broadcasts the parameters back (the DataParallel pattern)
 *   local-sgd:K     every rank steps alone; parameters averaged every K steps */
#ifndef TRAIN_REDUCER_H
#define TRAIN_REDUCER_H

#include <stddef.h>
#include <stdint.h>

#include "coll.h"
#include "train/compress.h"
#include "train/net.h"
#include "train/optim_sgd.h"

typedef enum train_mode {
    MODE_SINGLE,
    MODE_ALLREDUCE_SYNC,
    MODE_DDP,
    MODE_PS,
    MODE_LOCAL_SGD,
} train_mode;

typedef struct reducer_opts {
    train_mode mode;
    int local_k;               /* local-sgd: steps between averages */
    size_t bucket_bytes;       /* ddp */
    size_t first_bucket_bytes; /* ddp: the first bucket (last layers), smaller */
    compress_spec compress;    /* ddp */
} reducer_opts;

/* "single", "allreduce-sync", "ddp", "ps", "local-sgd" or "local-sgd:K". */
int train_reducer_mode_parse(const char *s, reducer_opts *o, char *err, size_t errlen);
/* The name train_reducer_mode_parse reads back. */
void train_reducer_mode_name(const reducer_opts *o, char *buf, size_t len);

typedef struct ddp_bucket {
    size_t lo, hi;      /* range of the flat gradient */
    size_t k, pair_off; /* topk: entries sent, offset in the send pairs */
    coll_request *req;
} ddp_bucket;

typedef struct reducer {
    reducer_opts o;
    coll_comm *comm;
    train_net *m;
    sgd *opt;
    int rank, world;
    grad_hook hook;
    ddp_bucket *buckets;       /* from the top of the gradient down */
    size_t nbuckets, next;     /* next bucket to start */
    int status;                /* first failure to start a bucket inside backward */
    uint16_t *half;            /* fp16/bf16 copy of the gradient */
    float *residual, *scratch; /* topk error feedback; selection scratch */
    topk_pair *pairs_send, *pairs_recv;
    float *ps_recv;    /* ps at rank 0: one peer's gradient */
    size_t comm_bytes; /* bytes of all the buffers above */
    double opt_ms;     /* optimizer time of the last step on this rank */
    int synced;        /* parameters equal on every rank after the last step */
    char err[320];
} reducer;

/* Bytes of communication buffers train_reducer_create will allocate (for estimates). */
size_t train_reducer_comm_bytes_estimate(const reducer_opts *o, size_t nparams, int world,
                                         int rank);

int train_reducer_create(reducer *r, const reducer_opts *o, coll_comm *comm, train_net *m,
                         sgd *opt);
/* The hook to give backward (NULL unless ddp). Call before each backward. */
const grad_hook *train_reducer_begin_step(reducer *r);
/* After backward: synchronise (as the mode says) and step the optimizer.
 * step counts from 0. Returns 0 or a coll_status with r->err set. */
int train_reducer_end_step(reducer *r, int step);
void train_reducer_free(reducer *r);

/* ddp (reducer_ddp.c) */
int train_ddp_setup(reducer *r);
void train_ddp_begin(reducer *r);
int train_ddp_finish(reducer *r);

#endif
