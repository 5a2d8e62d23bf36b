/* The runner's parts (bench_runner.h is its interface): what one run keeps
 * (bench_run_state) and one size (bench_size), and the steps of its walk, one
 * file each:
 *   bench_run_state.c    open a run (names, --algo, rank 0's outputs agreed), close it
 *   bench_progress.c     the progress line
 *   bench_sweep.c        dtype/op pairs x sizes x placements, refused pairs, --duration
 *   bench_size_buffers.c the sizes, the buffer pool and each size's buffers
 *   bench_timing.c       warm-up and budget, timed iterations, --per-iter
 *   bench_check.c        inputs and the -c checked iterations
 *   bench_rows.c         result rows: to the table and the sink
 *   bench_runner.c       bench_runner_run and the interleaved passes */
#ifndef BENCH_RUN_H
#define BENCH_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "engine/bench_coll.h"
#include "engine/bench_device.h"
#include "engine/bench_runner.h"
#include "rows/result.h"
#include "engine/stats.h"
#include "engine/table.h"

/* Everything one size needs, shared by its two placements. */
typedef struct bench_size {
    bench_pair pair;
    uint64_t asked; /* bytes asked for */
    size_t count;   /* count argument of each call */
    void *send, *recv;
    bench_buffers buf; /* send/recv and their host views (--device cuda: mirrors) */
    int skipped;       /* --device cuda: out of device memory on some rank */
    double *times;     /* per timed iteration, us */
    double *spread;    /* the times so far, max over ranks (--stop-spread) */
    char label[48];    /* "1G" or "1G in-place", for notes and progress */
} bench_size;

typedef struct bench_run_state {
    bench_runner *r;
    bench_table table;
    char host[64];
    double last_progress;
    int progress_shown;
    char what[64]; /* "allreduce tcp 4 ranks", for the progress line */
    char *err;
    size_t errlen;
    int per_iter;        /* rank 0 was given --per-iter: every rank hands it its times */
    int per_iter_failed; /* rank 0: --per-iter could not be written; the run goes on */
    char per_iter_err[320];
    bench_buffers pool; /* host buffers: one pair for every size, see bench_run_alloc_pool */
    int pooled;
    int shares_pool;        /* interleaved: the pool is another runner's, not freed here */
    unsigned char *refused; /* interleaved: [npairs] the backend refused the pair */
    char *table_text;       /* interleaved: rank 0's table, held until the pass ends */
    size_t table_len;
} bench_run_state;

/* bench_run_state.c */
int bench_run_open(bench_run_state *s, bench_runner *r, char *errmsg, size_t errlen);
void bench_run_print_header(bench_run_state *s);
int bench_run_close(bench_run_state *s, int rc);
/* The message into s->err; returns status. */
int bench_run_fail(bench_run_state *s, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* bench_progress.c */
/* The progress line on stderr (a terminal only), at most every 0.2 s. */
void bench_run_progress(bench_run_state *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void bench_run_progress_clear(bench_run_state *s);

/* bench_sweep.c */
int bench_run_size(bench_run_state *s, const bench_pair *pair, uint64_t bytes);
int bench_run_pairs(bench_run_state *s);
int bench_run_soak(bench_run_state *s);
int bench_run_skip_refused(bench_run_state *s, const bench_pair *p, uint64_t bytes, int first,
                           int rc);

/* bench_size_buffers.c */
/* The sizes a run measures: the options', or one of 0 bytes (barrier). */
const uint64_t *bench_run_sizes(const bench_options *o, size_t *n);
int bench_run_alloc_pool(bench_run_state *s, const uint64_t *sizes, size_t nsizes);
int bench_run_share_pool(bench_run_state *ss, size_t n);
int bench_run_alloc_size(bench_run_state *s, bench_size *z);
void bench_run_free_size(bench_run_state *s, bench_size *z);

/* bench_timing.c */
double bench_run_test_delay_ms(int rank);
int bench_run_warm_up(bench_run_state *s, const bench_size *z, const bench_call *c, int *warmup,
                      int *iters, int64_t *local_wrong);
int bench_run_time_iterations(bench_run_state *s, const bench_size *z, const bench_call *c,
                              int *iters, const bench_row *row, bench_stats *st);

/* bench_check.c */
int bench_run_checks_in_warm_up(const bench_runner *r);
int bench_run_fill_inputs(bench_run_state *s, const bench_size *z, const bench_call *c,
                          uint64_t iter);
int bench_run_check_one(bench_run_state *s, const bench_size *z, const bench_call *c, uint64_t iter,
                        int64_t *local);
int bench_run_check_results(bench_run_state *s, const bench_size *z, const bench_call *c,
                            int64_t local, int64_t *wrong);

/* bench_rows.c */
void bench_run_row_config(bench_run_state *s, const bench_pair *p, bench_row *row);
void bench_run_row_times(const bench_coll *coll, const bench_stats *st, int nranks, bench_row *row);
void bench_run_emit_rows(bench_run_state *s, const bench_row *oop, const bench_row *ip);

#endif
