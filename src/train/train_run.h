/* One training run inside a rank: a model, synthetic data, SGD and a reducer,
 * timed step by step, with compute measured alone in the same run. */
#ifndef TRAIN_RUN_H
#define TRAIN_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "coll.h"
#include "train/net.h"
#include "train/reducer.h"
#include "train/train_memory.h"

typedef struct train_config {
    net_spec spec;
    reducer_opts red;
    size_t batch;      /* per rank */
    int steps;         /* timed steps */
    int warmup;        /* untimed steps before them (they train too) */
    int compute_steps; /* forward+backward passes alone, no communication, spread over
                               the timed steps (0: none, compute time 0) */
    uint64_t seed;
    float lr, momentum;
    int check_every; /* parameter hash across ranks every K steps and at the end (0: end only) */
    int inject_nan_step; /* testing: rank 0's input gets a NaN at this step (1-based); 0: never */
    int keep_params;     /* copy the final parameters into the result */
} train_config;

typedef struct train_result {
    size_t nparams;
    int steps;
    double *step_ms;   /* per timed step, the slowest rank's */
    double compute_ms; /* forward+backward alone + optimizer, slowest rank */
    double loss_first; /* rank-local loss of the first step */
    double loss_last;  /* rank-local mean loss of the last (up to 5) steps */
    train_mem mem;     /* this rank's */
    int bad_step;      /* 1-based step of a non-finite loss or a parameter mismatch */
    int mismatch_rank; /* first rank whose parameters differ from rank 0's, or -1 */
    float *params;     /* keep_params: the final parameters */
} train_result;

#define TRAIN_ENAN 1      /* the loss was NaN or Inf */
#define TRAIN_EMISMATCH 2 /* parameters differ across ranks */

/* Returns 0, TRAIN_ENAN, TRAIN_EMISMATCH or a negative coll_status; err says
 * what happened and at which step. Collective over comm; comm NULL runs one
 * process alone (mode single only). */
int train_run(coll_comm *comm, const train_config *cfg, train_result *res, char *err,
              size_t errlen);
void train_result_free(train_result *res);

#endif
