/* The benchmark runner: one configuration (collective, backend, process count)
 * on a live communicator, every dtype/op pair and size of the options.
 *
 * Per size and placement: warm-up, then timed iterations each started right
 * after a barrier; the per-iteration times are max-reduced across ranks once,
 * so each iteration counts as long as its slowest rank took. When the warm-up
 * shows the iterations would take longer than --time-budget, every rank
 * (deciding from the same max-reduced times) stops warming up once the time
 * has settled (at least 2 warm-ups) and runs fewer timed iterations (at least
 * 3), and rank 0 says so in the table. Then -c checked
 * iterations on fresh inputs, wrong elements summed across ranks.
 * Rank 0 prints the table as sizes finish and hands each row to the sink.
 * With --per-iter, every rank's local times of each size and placement are
 * gathered to rank 0 before the max-reduction and appended to the file; rank
 * 0's flag decides for every rank (a multi-host run's other nodes need not
 * repeat it). Before anything is measured, rank 0 checks that its files can
 * be written, and every rank stops if not. */
#ifndef BENCH_RUNNER_H
#define BENCH_RUNNER_H

#include <stdint.h>

#include "engine/bench_options.h"
#include "engine/bench_sink.h"
#include "coll.h"

typedef struct bench_runner {
    const bench_options *opts;
    coll_comm *comm;
    int rank, nranks, nnodes;
    bench_sink *sink;     /* rank 0: where rows go; NULL elsewhere or for none */
    int print;            /* rank 0 and not -q: the table on stdout */
    int progress;         /* a progress line on stderr (a terminal) */
    int64_t wrong;        /* wrong elements over the whole run, all ranks */
    int pass;             /* the pass its rows are of, from 1 (bench_runner_run_passes numbers) */
    double test_delay_ms; /* COLLBENCH_TEST_DELAY (tests): this rank's sleep per timed call */
    void (*turn)(
        void *arg); /* bench_runner_run_passes: called before each of this runner's sizes */
    void *turn_arg;
} bench_runner;

/* Fill in rank/size/nnodes from comm and the printing decisions from opts. */
void bench_runner_init(bench_runner *r, const bench_options *opts, coll_comm *comm, int nnodes,
                       bench_sink *sink);

/* Run everything. 0 when every call worked (r->wrong says whether results were
 * right); else the failing call's negative status, with the message in
 * coll_comm_errmsg(comm) (or runner_errmsg for local failures like memory). */
int bench_runner_run(bench_runner *r, char *errmsg, size_t errlen);

/* Several runners on the same ranks (collbench --same-ranks with several
 * backends, or --passes), one per communicator, all alive throughout: per
 * pass, per dtype/op pair and size, every runner measures that size in turn,
 * the order reversed every other pass (A B, B A), so a transient that lasts a
 * few seconds falls on every backend's cell of that size or shows as passes
 * that disagree, never as one backend's whole sweep. Each pass writes its own
 * rows; rank 0 prints each runner's table when the pass ends. Private buffers
 * are one pool for all; coll_alloc'd ones are allocated per size (a pool per
 * communicator would hold runners x the largest size). Not for --duration.
 * Returns as bench_runner_run; on failure *failed is the runner whose
 * communicator the message belongs to. */
int bench_runner_run_passes(bench_runner *rs, size_t n, int passes, size_t *failed, char *errmsg,
                            size_t errlen);

#endif
