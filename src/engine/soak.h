/* Soak mode (--duration): the configured sizes again and again on one
 * communicator until the duration has passed, with the resident memory and
 * open file descriptors of the ranks shown after warm-up and at the end, so a
 * leak shows up as growth. */
#ifndef BENCH_SOAK_H
#define BENCH_SOAK_H

#include <stdint.h>
#include <stdio.h>

#include "coll.h"

typedef struct bench_usage {
    int64_t rss_kib; /* resident set, KiB */
    int64_t fds;     /* open file descriptors */
} bench_usage;

/* This process's usage from /proc/self/statm and /proc/self/fd. 0 or COLL_ESYS. */
int bench_usage_sample(bench_usage *u);

/* Collective: *mine is this rank's usage now, *max the largest over all ranks. */
int bench_usage_gather(coll_comm *comm, bench_usage *mine, bench_usage *max);

/* "--duration 10m": plain seconds or a number with s, m or h. 0 or COLL_EINVAL. */
int bench_parse_duration(const char *s, double *seconds);

/* Runs pass(arg) (one sweep of every size) until duration_s has passed, every
 * rank deciding together when to stop. The baseline is taken after warm-up: the
 * first pass that ends after a tenth of the duration. When out is not NULL (rank
 * 0 printing), writes "# soak: ..." lines with rank 0's and the ranks' largest
 * usage at the baseline and at the end, and the growth. *growth gets the
 * largest growth over ranks (every rank). Returns pass's first error or a
 * collective's. */
int bench_soak_run(coll_comm *comm, double duration_s, int (*pass)(void *arg), void *arg, FILE *out,
                   bench_usage *growth);

#endif
