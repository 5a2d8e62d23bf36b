/* Opening and closing a run; see bench_run.h. */
#include "engine/bench_run.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/host_label.h"

int bench_run_fail(bench_run_state *s, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, s->errlen, fmt, ap);
    va_end(ap);
    return status;
}

/* Rank 0's outputs: 1 with --per-iter, | 2 when a file cannot be written (why). */
static int64_t rank0_outputs(const bench_runner *r, char *why, size_t len)
{
    const char *per_iter = r->opts->per_iter_path;
    int64_t state = per_iter ? 1 : 0;
    if (bench_outputs_check(r->sink, per_iter, why, len) != 0) state |= 2;
    return state;
}

/* Before minutes of benchmarking, every rank learns rank 0's answers: whether
 * to gather the --per-iter times (rank 0 writes them, so its flag decides: the
 * hosts of a multi-host run may be given different flags, and all must call
 * the same collectives) and whether its files can be written (if not, all stop
 * together). Other ranks add 0 to the max. */
static int agree_outputs(bench_run_state *s)
{
    const bench_runner *r = s->r;
    int64_t mine = 0, rank0 = 0;
    char why[560] = "";
    if (r->rank == 0) mine = rank0_outputs(r, why, sizeof why);
    int rc = coll_allreduce(r->comm, &mine, &rank0, 1, COLL_INT64, COLL_MAX);
    if (rc) return rc;
    s->per_iter = (int)(rank0 & 1);
    if (!(rank0 & 2)) return 0;
    if (r->rank == 0) return bench_run_fail(s, COLL_ESYS, "%s", why);
    return bench_run_fail(s, COLL_ESYS, "rank 0 cannot write its output files");
}

/* COLLBENCH_TEST_DELAY (bench_timing.c) puts a sleep into the times: every row
 * of such a run carries "+test-delay" in its host, so that neither the table,
 * the files nor the report can pass it for a measurement of the machine. */
static void mark_test_hook(bench_run_state *s)
{
    const char *hook = getenv("COLLBENCH_TEST_DELAY");
    if (!hook || !*hook) return;
    size_t n = strnlen(s->host, sizeof s->host - 12);
    snprintf(s->host + n, sizeof s->host - n, "+test-delay");
    if (s->r->rank == 0)
        fprintf(stderr,
                "collbench: COLLBENCH_TEST_DELAY is set (a test hook: one rank sleeps in every "
                "timed call); the rows say host %s\n",
                s->host);
}

/* Everything before the first size: names, --algo, rank 0's outputs agreed. */
int bench_run_open(bench_run_state *s, bench_runner *r, char *errmsg, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->r = r;
    s->err = errmsg;
    s->errlen = errlen;
    if (errlen) errmsg[0] = '\0';
    if (bench_host_label(s->host, sizeof s->host, errmsg, errlen) != 0) return COLL_EINVAL;
    mark_test_hook(s);
    snprintf(s->what, sizeof s->what, "%s %s %d ranks", r->opts->coll->name,
             coll_comm_backend(r->comm), r->nranks);
    bench_table_init(&s->table, stdout, r->opts->verbose);
    int rc;
    if (strcmp(r->opts->algo, "auto") != 0 && (rc = coll_comm_set_algo(r->comm, r->opts->algo)))
        return rc;
    return agree_outputs(s);
}

void bench_run_print_header(bench_run_state *s)
{
    const bench_runner *r = s->r;
    bench_row cfg;
    if (!r->print) return;
    bench_run_row_config(s, &r->opts->pairs[0], &cfg);
    bench_table_print_header(&s->table, &cfg);
    char plan[256]; /* how the backend runs (auto: its hosts), with -v */
    if (r->opts->verbose && coll_comm_describe(r->comm, plan, sizeof plan) == 0)
        fprintf(s->table.out, "#  %s\n", plan);
}

int bench_run_close(bench_run_state *s, int rc)
{
    if (s->pooled && !s->shares_pool) bench_buffers_free(&s->pool);
    s->pooled = 0;
    if (rc == 0 && s->per_iter_failed) rc = bench_run_fail(s, COLL_ESYS, "%s", s->per_iter_err);
    bench_run_progress_clear(s);
    free(s->refused);
    s->refused = NULL;
    return rc;
}
