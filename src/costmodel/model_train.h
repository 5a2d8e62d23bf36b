/* A training step at a cluster's scale (docs/DESIGN.md "Cost model",
 * "Training"): compute plus the communication the step cannot hide, the
 * all-reduce time of each gradient bucket coming from the cost model (or any
 * function of bytes: the tests use a hand-made one). */
#ifndef MODEL_TRAIN_H
#define MODEL_TRAIN_H

#include <stddef.h>

/* Backward's share of a step's compute (forward + backward + optimizer):
 * backward costs about twice forward, the optimizer little. */
#define MODEL_TRAIN_BACKWARD_SHARE (2.0 / 3.0)
/* collbench train's first DDP bucket (--first-bucket-mb, not in the rows). */
#define MODEL_TRAIN_FIRST_BUCKET_BYTES (1048576.0)
/* More buckets than this: refused (a bucket size far too small for the gradient). */
#define MODEL_TRAIN_MAX_BUCKETS 1000000

typedef struct model_train_job {
    double grad_bytes;         /* float32 gradient: params x 4 */
    double compute_ms;         /* forward + backward + optimizer, per step */
    double backward_ms;        /* the part of compute bucket communication can hide behind */
    int ddp;                   /* 0: one all-reduce after backward (allreduce-sync) */
    double bucket_bytes;       /* ddp: each bucket's float32 bytes */
    double first_bucket_bytes; /* ddp: the first (last layers') bucket */
    double wire_ratio;         /* bytes all-reduced per float32 byte: 1, 0.5 for fp16/bf16 */
    double overhead_ms;        /* per-step cost besides compute and comm (e.g. compression casts) */
} model_train_job;

/* An all-reduce of bytes (the whole vector) in microseconds; NAN: unknown. */
typedef double (*model_allreduce_fn)(double bytes, void *arg);

typedef struct model_train_step {
    double comm_ms;    /* all bucket all-reduces back to back */
    double exposed_ms; /* what the step waits for after compute */
    double step_ms;    /* compute + overhead + exposed */
    double eff;        /* scaling efficiency: compute / step */
    size_t nbuckets;
} model_train_step;

/* Fills out for job j. DDP is a pipeline: buckets become ready in order as
 * backward produces their bytes (evenly over backward_ms), each all-reduce
 * starts when its bucket is ready and the previous one is done; exposed is
 * how far the last one ends past backward. Sync: exposed = the one
 * all-reduce. 0, or COLL_EINVAL with err (bad job, or ar_us gave NAN). */
int model_train_predict(const model_train_job *j, model_allreduce_fn ar_us, void *arg,
                        model_train_step *out, char *err, size_t errlen);

/* Bytes on the wire per float32 byte for a compress column ("none" 1, "fp16"
 * and "bf16" 0.5); -1 for one the model does not cover (top-k: an all-gather
 * that grows with the world). */
double model_train_wire_ratio(const char *compress);

#endif
