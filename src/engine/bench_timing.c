/* Timing: warm-up under the time budget, timed iterations, --per-iter. */
#include "engine/bench_run.h"

#include <stdio.h>
#include <stdlib.h>

#include "core/clock.h"
#include "engine/budget.h"
#include "rows/per_iter.h"

/* Test hook: COLLBENCH_TEST_DELAY=RANK:MS makes that rank sleep MS at the end
 * of every timed call, after the collective returned, so no peer waits for it:
 * only the max over ranks can put the delay into the reported time. */
double bench_run_test_delay_ms(int rank)
{
    const char *v = getenv("COLLBENCH_TEST_DELAY");
    char *end;
    if (!v || !*v) return 0;
    long who = strtol(v, &end, 10);
    double ms = *end == ':' ? strtod(end + 1, &end) : -1;
    if (*end || !(ms >= 0 && ms <= 60000)) {
        if (rank == 0)
            fprintf(
                stderr,
                "collbench: ignoring COLLBENCH_TEST_DELAY=%s (want RANK:MS, MS at most 60000)\n",
                v);
        return 0;
    }
    return who == rank ? ms : 0;
}

/* One iteration, started right after a barrier so every rank starts together. */
static int timed_call(const bench_runner *r, const bench_call *c, double *us)
{
    int rc = coll_barrier(c->comm);
    if (rc) return rc;
    double t0 = coll__now_us();
    rc = r->opts->coll->run(c);
    if (rc == 0) rc = bench_device_sync(); /* --device cuda: the GPU's work is in the time */
    if (r->test_delay_ms > 0) coll__sleep_s(r->test_delay_ms / 1e3);
    *us = coll__now_us() - t0;
    return rc;
}

/* One warm-up iteration; *us is the slowest rank's time, the same on every rank. */
static int probe(const bench_runner *r, const bench_call *c, double *us)
{
    int rc = timed_call(r, c, us);
    if (rc == 0) rc = coll_allreduce(c->comm, us, us, 1, COLL_FLOAT64, COLL_MAX);
    return rc;
}

static void note_budget(bench_run_state *s, const bench_size *z, int warmup, int iters)
{
    const bench_options *o = s->r->opts;
    char text[200];
    if (!s->r->print) return;
    if (warmup != o->warmup)
        snprintf(text, sizeof text,
                 "%s: %d warm-up and %d timed iterations instead of %d and %d "
                 "(time budget %g s)",
                 z->label, warmup, iters, o->warmup, o->iters, o->time_budget_s);
    else
        snprintf(text, sizeof text, "%s: %d timed iterations instead of %d (time budget %g s)",
                 z->label, iters, o->iters, o->time_budget_s);
    bench_run_progress_clear(s);
    bench_table_print_note(&s->table, text);
}

/* Warm-up, every iteration a probe; decides, identically on every rank, how
 * many warm-up and timed iterations to run (budget.h). The first warm-up
 * iteration is also the first checked one (its inputs are the check's, its
 * result checked after it): at 1 GiB a call and a fill cost seconds, and a
 * warm-up's result is as good to check as any. */
int bench_run_warm_up(bench_run_state *s, const bench_size *z, const bench_call *c, int *warmup,
                      int *iters, int64_t *local_wrong)
{
    const bench_options *o = s->r->opts;
    double t = 0, prev;
    int done = 0, rc;
    *warmup = o->warmup;
    *iters = o->iters;
    if (o->warmup == 0) return 0; /* nothing to judge the budget by */
    bench_run_progress(s, "%s: warm-up", z->label);
    do {
        prev = t;
        if ((rc = probe(s->r, c, &t))) return rc;
        if (done++ == 0 && bench_run_checks_in_warm_up(s->r) &&
            (rc = bench_run_check_one(s, z, c, 1, local_wrong)))
            return rc;
    } while (!bench_budget_stop_warmup(o->time_budget_s, o->warmup, o->iters, done, t, prev));
    *warmup = done;
    *iters = bench_budget_timed_iters(o->time_budget_s, o->iters, t);
    if (*warmup != o->warmup || *iters != o->iters) note_budget(s, z, *warmup, *iters);
    return 0;
}

/* Every rank's iters local times (us) into *all (malloc'd, nranks x iters,
 * rank-major), on every rank. 0 or the communicator's error / COLL_ENOMEM. */
static int gather_times(coll_comm *comm, const double *local_us, int iters, double **all)
{
    size_t n = (size_t)coll_comm_size(comm) * (size_t)iters;
    *all = malloc(n * sizeof **all);
    if (!*all) return COLL_ENOMEM;
    int rc = coll_allgather(comm, local_us, *all, (size_t)iters, COLL_FLOAT64);
    if (rc) {
        free(*all);
        *all = NULL;
    }
    return rc;
}

/* --per-iter: every rank's local times, before they are max-reduced. A file
 * that cannot be written is reported at the end rather than stopping rank 0
 * alone while the others wait in the next collective. */
static int write_per_iter(bench_run_state *s, const bench_row *row, const double *times, int iters)
{
    const bench_runner *r = s->r;
    double *all = NULL;
    int rc = gather_times(r->comm, times, iters, &all);
    if (rc)
        return rc == COLL_ENOMEM
                   ? bench_run_fail(s, rc, "rank %d: --per-iter: out of memory", r->rank)
                   : rc;
    bench_per_iter_key key = {.collective = row->collective,
                              .backend = row->backend,
                              .nprocs = r->nranks,
                              .bytes = row->bytes,
                              .in_place = row->in_place};
    if (r->rank == 0 && !s->per_iter_failed &&
        bench_per_iter_append(r->opts->per_iter_path, &key, all, iters, s->per_iter_err,
                              sizeof s->per_iter_err) != 0)
        s->per_iter_failed = 1;
    free(all);
    return 0;
}

/* Whether the first `done` timed iterations, each as long as its slowest
 * rank, are tight enough to stop (budget.h); the same answer on every rank. */
static int spread_tight(const bench_size *z, const bench_call *c, int done, double bound,
                        int *tight)
{
    bench_stats st;
    int rc = coll_allreduce(c->comm, z->times, z->spread, (size_t)done, COLL_FLOAT64, COLL_MAX);
    if (rc) return rc;
    bench_stats_compute(z->spread, (size_t)done, &st);
    *tight = bench_budget_spread_tight(bound, st.p25, st.p50, st.p75);
    return 0;
}

/* *iters: asked for, then how many ran. */
int bench_run_time_iterations(bench_run_state *s, const bench_size *z, const bench_call *c,
                              int *iters, const bench_row *row, bench_stats *st)
{
    int rc, tight = 0;
    for (int i = 0; i < *iters && !tight; i++) {
        bench_run_progress(s, "%s: iteration %d/%d", z->label, i + 1, *iters);
        if ((rc = timed_call(s->r, c, &z->times[i]))) return rc;
        if (bench_budget_spread_due(s->r->opts->stop_spread, i + 1, *iters)) {
            if ((rc = spread_tight(z, c, i + 1, s->r->opts->stop_spread, &tight))) return rc;
            if (tight) *iters = i + 1;
        }
    }
    if (s->per_iter && (rc = write_per_iter(s, row, z->times, *iters))) return rc;
    /* Each iteration took as long as its slowest rank. */
    rc = coll_allreduce(c->comm, z->times, z->times, (size_t)*iters, COLL_FLOAT64, COLL_MAX);
    if (rc) return rc;
    bench_stats_compute(z->times, (size_t)*iters, st);
    return 0;
}
