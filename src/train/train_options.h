/* The options of `collbench train`, their defaults (and --quick's), and the
 * checks made before anything is launched. */
#ifndef TRAIN_OPTIONS_H
#define TRAIN_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/multinode_opts.h"
#include "train/net.h"
#include "train/reducer.h"

#define TRAIN_MAX_LIST 16
#define TRAIN_MAX_PROCS 256
#define TRAIN_OPTIONS_HELP 1

typedef struct train_options {
    net_kind kind;
    int hidden[TRAIN_MAX_LIST], channels[TRAIN_MAX_LIST];
    size_t nhidden, nchannels;
    int input, image, in_channels, classes;
    reducer_opts modes[TRAIN_MAX_LIST];
    size_t nmodes;
    int batches[TRAIN_MAX_LIST];
    size_t nbatches;
    int global_batch; /* 0: --batch-sizes are per rank */
    double bucket_mb[TRAIN_MAX_LIST];
    size_t nbucket;
    double first_bucket_mb;
    compress_spec compress[TRAIN_MAX_LIST];
    size_t ncompress;
    int steps, warmup, compute_steps, check_every, inject_nan, blas_threads;
    uint64_t seed;
    double lr, momentum;
    int procs[TRAIN_MAX_LIST];
    size_t nprocs;
    char backends[8][16];
    size_t nbackends;
    double timeout_s;
    const char *csv_path, *json_path;
    int quick;
    bench_multinode mn; /* --nnodes ...: several hosts */
} train_options;

void train_options_usage(FILE *f);
/* flag ("--csv", "-J") is one of collbench train's (for the suite, which runs it). */
int train_options_has_flag(const char *flag);
/* 0, TRAIN_OPTIONS_HELP, or COLL_EINVAL with err naming the flag. */
int train_options_parse(train_options *o, int argc, char **argv, char *err, size_t errlen);
/* The model of the options (points into o). */
void train_options_spec(const train_options *o, net_spec *spec);
/* "mlp-2048x2048", "cnn-32x64x128-512" */
void train_options_model_name(const train_options *o, char *buf, size_t len);
/* Per-rank batch of batch index i at nprocs ranks. */
int train_options_batch(const train_options *o, size_t i, int nprocs);
/* Model shape, batch vs process counts and the memory estimate against
 * MemAvailable; COLL_EINVAL with the reason (and the estimate) in err. */
int train_options_check(const train_options *o, char *err, size_t errlen);

#endif
