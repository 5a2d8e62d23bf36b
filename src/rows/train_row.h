/* One row of training results (docs/DESIGN.md results.training; the training CSV's
 * columns): written by collbench train, read back by collbench report. */
#ifndef ROWS_TRAIN_ROW_H
#define ROWS_TRAIN_ROW_H

#include <stdint.h>

typedef struct train_row {
    char timestamp[32], host[64], model[32], mode[24], backend[16], compress[16];
    int64_t params;
    int nprocs, batch, steps;
    double bucket_mb;
    double step_ms_avg, step_ms_p50, step_ms_p99, compute_ms, comm_exposed_ms;
    double comm_overhead_pct, samples_per_s, scaling_eff;
} train_row;

#endif
