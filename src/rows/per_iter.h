/* --per-iter FILE: every timed iteration's local time on every rank, as CSV
 * (collective,backend,nprocs,bytes,in_place,iter,rank,time_us), so stragglers
 * and spikes can be analysed after the run. Rank 0 appends to the file itself;
 * the other ranks only hand it their times (the engine's bench_timing.c). */
#ifndef ROWS_PER_ITER_H
#define ROWS_PER_ITER_H

#include <stddef.h>
#include <stdint.h>

#define BENCH_PER_ITER_HEADER "collective,backend,nprocs,bytes,in_place,iter,rank,time_us"

/* What the rows of one size and placement share. */
typedef struct bench_per_iter_key {
    const char *collective, *backend;
    int nprocs;
    uint64_t bytes;
    int in_place;
} bench_per_iter_key;

/* Rank 0: append one row per rank and iteration of all (key->nprocs x iters,
 * rank-major: every rank's times) to path, the header first when the file is
 * new or empty. 0, or COLL_ESYS /
 * COLL_ENOMEM with "--per-iter path: reason" in err. */
int bench_per_iter_append(const char *path, const bench_per_iter_key *key, const double *all,
                          int iters, char *err, size_t errlen);

/* Before any benchmarking: can path be appended to? Nothing is created (the
 * header goes in with the first rows). 0, or COLL_ESYS / COLL_EINVAL with
 * "path: why" in err. */
int bench_per_iter_check(const char *path, char *err, size_t errlen);

#endif
