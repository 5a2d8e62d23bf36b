/* The runner: sizes x placements of one configuration; see bench_runner.h. */
#include "engine/bench_runner.h"
#include "engine/memory_need.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/bench_data.h"
#include "engine/budget.h"
#include "engine/host_label.h"
#include "engine/bench_device.h"
#include "engine/per_iter.h"
#include "engine/sizes.h"
#include "engine/soak.h"
#include "engine/stats.h"
#include "engine/table.h"
#include "core/clock.h"

#define PROGRESS_PERIOD_S 0.2

/* Everything one size needs, shared by its two placements. */
typedef struct size_ctx {
    bench_pair pair;
    uint64_t asked; /* bytes asked for */
    size_t count;   /* count argument of each call */
    void *send, *recv;
    bench_buffers buf; /* send/recv and their host views (--device cuda: mirrors) */
    int skipped;       /* --device cuda: out of device memory on some rank */
    double *times;     /* per timed iteration, us */
    double *spread;    /* the times so far, max over ranks (--stop-spread) */
    char label[48];    /* "1G" or "1G in-place", for notes and progress */
} size_ctx;

/* ---- state shared by the functions below ---- */

typedef struct run_state {
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
    bench_buffers pool; /* host buffers: one pair for every size, see alloc_pool */
    int pooled;
    int shares_pool;        /* interleaved: the pool is another runner's, not freed here */
    unsigned char *refused; /* interleaved: [npairs] the backend refused the pair */
    char *table_text;       /* interleaved: rank 0's table, held until the pass ends */
    size_t table_len;
} run_state;

static int local_fail(run_state *s, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, s->errlen, fmt, ap);
    va_end(ap);
    return status;
}

/* ---- progress line (a terminal only) ---- */

static void progress(run_state *s, const char *fmt, ...)
{
    if (!s->r->progress) return;
    double now = coll__now_s();
    if (now - s->last_progress < PROGRESS_PERIOD_S) return;
    s->last_progress = now;
    char line[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\r\033[K%s %s", s->what, line);
    fflush(stderr);
    s->progress_shown = 1;
}

static void progress_clear(run_state *s)
{
    if (!s->progress_shown) return;
    fprintf(stderr, "\r\033[K");
    fflush(stderr);
    s->progress_shown = 0;
    s->last_progress = 0;
}

/* ---- rows ---- */

static void utc_timestamp(char *buf, size_t len)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void copy_field(char *dst, size_t len, const char *src)
{
    snprintf(dst, len, "%s", src ? src : "");
}

static void row_config(run_state *s, const bench_pair *p, bench_row *row)
{
    const bench_runner *r = s->r;
    memset(row, 0, sizeof *row);
    utc_timestamp(row->timestamp, sizeof row->timestamp);
    copy_field(row->host, sizeof row->host, s->host);
    copy_field(row->collective, sizeof row->collective, r->opts->coll->name);
    copy_field(row->backend, sizeof row->backend, coll_comm_backend(r->comm));
    copy_field(row->algo, sizeof row->algo, r->opts->algo);
    copy_field(row->device, sizeof row->device, r->opts->device);
    copy_field(row->buffers, sizeof row->buffers, r->opts->buffers);
    row->nprocs = r->nranks;
    row->nnodes = r->nnodes;
    copy_field(row->dtype, sizeof row->dtype, coll_dtype_name(p->dtype));
    copy_field(row->op, sizeof row->op,
               p->op == BENCH_OP_NONE ? "none" : coll_op_name((coll_op)p->op));
    row->warmup = r->opts->warmup;
    row->iters = r->opts->iters;
}

static void row_times(const bench_coll *coll, const bench_stats *st, int nranks, bench_row *row)
{
    row->time_us_avg = st->avg;
    row->time_us_min = st->min;
    row->time_us_p25 = st->p25;
    row->time_us_p50 = st->p50;
    row->time_us_p75 = st->p75;
    row->time_us_p99 = st->p99;
    row->time_us_max = st->max;
    /* bytes / us = 1e6 B/s = 1e-3 GB/s */
    row->algbw_GBps = st->avg > 0 ? (double)row->bytes / st->avg * 1e-3 : 0;
    row->busbw_GBps = row->algbw_GBps * coll->bus_factor(nranks);
}

/* ---- timing ---- */

/* Test hook: COLLBENCH_TEST_DELAY=RANK:MS makes that rank sleep MS at the end
 * of every timed call, after the collective returned, so no peer waits for it:
 * only the max over ranks can put the delay into the reported time. */
static double test_delay_ms(int rank)
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

static void note_budget(run_state *s, const size_ctx *z, int warmup, int iters)
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
    progress_clear(s);
    bench_table_print_note(&s->table, text);
}

/* ---- checking ---- */

static bench_data_key data_key(const bench_runner *r, const bench_pair *p, uint64_t iter)
{
    bench_data_key k = {
        .seed = r->opts->seed, .iter = iter, .nranks = r->nranks, .dtype = p->dtype, .op = p->op};
    return k;
}

/* Inputs are made in host memory (the mirrors for --device cuda), then uploaded. */
static int fill_inputs(run_state *s, const size_ctx *z, const bench_call *c, uint64_t iter)
{
    const bench_runner *r = s->r;
    bench_data_key k = data_key(r, &z->pair, iter);
    bench_data_fill(&k, r->rank, 0, bench_buffers_host(&z->buf, c->send),
                    bench_coll_send_elems(r->opts->coll, c->count, r->nranks));
    return bench_buffers_upload(&z->buf, s->err, s->errlen);
}

/* c as seen in host memory, with the results downloaded (--device cuda). */
static int host_view(run_state *s, const size_ctx *z, const bench_call *c, bench_call *h)
{
    *h = *c;
    h->send = bench_buffers_host(&z->buf, c->send);
    h->recv = bench_buffers_host(&z->buf, c->recv);
    return bench_buffers_download(&z->buf, s->err, s->errlen);
}

/* Test hook: COLLBENCH_TEST_CORRUPT=1 makes rank 0 spoil one element of each
 * checked result, so tests can see a wrong result fail the run (exit 1). */
static void maybe_corrupt(const bench_runner *r, const bench_call *c)
{
    const char *v = getenv("COLLBENCH_TEST_CORRUPT");
    if (!v || strcmp(v, "1") != 0 || r->rank != 0 || !r->opts->coll->moves_data) return;
    if (bench_coll_recv_elems(r->opts->coll, c->count, r->nranks) == 0) return;
    unsigned char *last = (unsigned char *)c->recv + coll_dtype_size(c->dtype) - 1;
    *last ^= 0x40; /* the second-highest bit of element 0 (little-endian) */
}

/* The first checked iteration rides on the first warm-up one (warm_up). */
static int checks_in_warm_up(const bench_runner *r)
{
    return r->opts->warmup > 0 && r->opts->check > 0 && r->opts->coll->check;
}

/* The result of the call just made on inputs of key `iter`: wrong elements
 * added to *local. */
static int check_one(run_state *s, const size_ctx *z, const bench_call *c, uint64_t iter,
                     int64_t *local)
{
    const bench_runner *r = s->r;
    bench_data_key k = data_key(r, &z->pair, iter);
    bench_call h;
    int rc = host_view(s, z, c, &h);
    if (rc) return rc;
    maybe_corrupt(r, &h);
    *local += (int64_t)r->opts->coll->check(&h, &k);
    return 0;
}

/* The -c checked iterations not already made in the warm-up, on fresh inputs;
 * wrong elements of all ranks in *wrong. */
static int check_results(run_state *s, const size_ctx *z, const bench_call *c, int64_t local,
                         int64_t *wrong)
{
    const bench_runner *r = s->r;
    int rc;
    /* -1: not checked ("N/A"): -c 0, or a barrier, which has no data to check */
    *wrong = r->opts->check > 0 && r->opts->coll->check ? 0 : -1;
    if (*wrong < 0) return 0;
    for (int i = checks_in_warm_up(r) ? 2 : 1; i <= r->opts->check; i++) {
        progress(s, "%s: check %d/%d", z->label, i, r->opts->check);
        if ((rc = fill_inputs(s, z, c, (uint64_t)i))) return rc;
        if ((rc = r->opts->coll->run(c))) return rc;
        if ((rc = check_one(s, z, c, (uint64_t)i, &local))) return rc;
    }
    return coll_allreduce(c->comm, &local, wrong, 1, COLL_INT64, COLL_SUM);
}

/* ---- timing ---- */

/* One warm-up iteration; *us is the slowest rank's time, the same on every rank. */
static int probe(const bench_runner *r, const bench_call *c, double *us)
{
    int rc = timed_call(r, c, us);
    if (rc == 0) rc = coll_allreduce(c->comm, us, us, 1, COLL_FLOAT64, COLL_MAX);
    return rc;
}

/* Warm-up, every iteration a probe; decides, identically on every rank, how
 * many warm-up and timed iterations to run (budget.h). The first warm-up
 * iteration is also the first checked one (its inputs are the check's, its
 * result checked after it): at 1 GiB a call and a fill cost seconds, and a
 * warm-up's result is as good to check as any. */
static int warm_up(run_state *s, const size_ctx *z, const bench_call *c, int *warmup, int *iters,
                   int64_t *local_wrong)
{
    const bench_options *o = s->r->opts;
    double t = 0, prev;
    int done = 0, rc;
    *warmup = o->warmup;
    *iters = o->iters;
    if (o->warmup == 0) return 0; /* nothing to judge the budget by */
    progress(s, "%s: warm-up", z->label);
    do {
        prev = t;
        if ((rc = probe(s->r, c, &t))) return rc;
        if (done++ == 0 && checks_in_warm_up(s->r) && (rc = check_one(s, z, c, 1, local_wrong)))
            return rc;
    } while (!budget_stop_warmup(o->time_budget_s, o->warmup, o->iters, done, t, prev));
    *warmup = done;
    *iters = budget_timed_iters(o->time_budget_s, o->iters, t);
    if (*warmup != o->warmup || *iters != o->iters) note_budget(s, z, *warmup, *iters);
    return 0;
}

/* --per-iter: every rank's local times, before they are max-reduced. A file
 * that cannot be written is reported at the end rather than stopping rank 0
 * alone while the others wait in the next collective. */
static int write_per_iter(run_state *s, const bench_row *row, const double *times, int iters)
{
    const bench_runner *r = s->r;
    double *all = NULL;
    int rc = bench_per_iter_gather(r->comm, times, iters, &all);
    if (rc)
        return rc == COLL_ENOMEM ? local_fail(s, rc, "rank %d: --per-iter: out of memory", r->rank)
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
static int spread_tight(const size_ctx *z, const bench_call *c, int done, double bound, int *tight)
{
    bench_stats st;
    int rc = coll_allreduce(c->comm, z->times, z->spread, (size_t)done, COLL_FLOAT64, COLL_MAX);
    if (rc) return rc;
    bench_stats_compute(z->spread, (size_t)done, &st);
    *tight = budget_spread_tight(bound, st.p25, st.p50, st.p75);
    return 0;
}

/* *iters: asked for, then how many ran. */
static int time_iterations(run_state *s, const size_ctx *z, const bench_call *c, int *iters,
                           const bench_row *row, bench_stats *st)
{
    int rc, tight = 0;
    for (int i = 0; i < *iters && !tight; i++) {
        progress(s, "%s: iteration %d/%d", z->label, i + 1, *iters);
        if ((rc = timed_call(s->r, c, &z->times[i]))) return rc;
        if (budget_spread_due(s->r->opts->stop_spread, i + 1, *iters)) {
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

/* ---- one size ---- */

static void size_label(size_ctx *z, uint64_t bytes, int in_place)
{
    char human[24];
    bench_format_size(bytes, human, sizeof human);
    snprintf(z->label, sizeof z->label, "%s%s", human, in_place ? " in-place" : "");
}

static int run_placement(run_state *s, size_ctx *z, int in_place, bench_row *row)
{
    bench_runner *r = s->r;
    const bench_coll *coll = r->opts->coll;
    bench_call c = {.comm = r->comm,
                    .rank = r->rank,
                    .nranks = r->nranks,
                    .count = z->count,
                    .dtype = z->pair.dtype,
                    .root = r->opts->root,
                    .op = z->pair.op == BENCH_OP_NONE ? COLL_SUM : (coll_op)z->pair.op};
    bench_stats st;
    int64_t local_wrong = 0;
    int warmup, iters, rc;

    bench_coll_place(coll, &c, z->send, z->recv, in_place);
    size_label(z, z->asked, in_place);
    row_config(s, &z->pair, row);
    row->in_place = in_place;
    row->bytes = bench_coll_bytes(coll, z->count, coll_dtype_size(c.dtype), r->nranks);
    row->count = coll->moves_data ? row->bytes / coll_dtype_size(c.dtype) : 0;

    /* inputs of the first check, which the first warm-up iteration makes */
    if (coll->moves_data && (rc = fill_inputs(s, z, &c, checks_in_warm_up(r) ? 1 : 0))) return rc;
    if ((rc = warm_up(s, z, &c, &warmup, &iters, &local_wrong))) return rc;
    if ((rc = time_iterations(s, z, &c, &iters, row, &st))) return rc;
    row->warmup = warmup;
    row->iters = iters;
    row_times(coll, &st, r->nranks, row);
    rc = check_results(s, z, &c, local_wrong, &row->wrong);
    if (rc == 0 && row->wrong > 0) r->wrong += row->wrong;
    return rc;
}

/* --device cuda: a size some rank has no device memory for is skipped by all
 * (with a note), and the sweep goes on; any other failure stops every rank. */
static int agree_device_memory(run_state *s, size_ctx *z, int rc)
{
    const bench_runner *r = s->r;
    int64_t mine = rc == BENCH_DEVICE_OOM ? 1 : rc || !z->times ? 2 : 0, worst = 0;
    char text[480], why[320];
    if (mine == 1)
        fprintf(stderr, "collbench: rank %d: skipping %s: %s\n", r->rank, z->label, s->err);
    int arc = coll_allreduce(r->comm, &mine, &worst, 1, COLL_INT64, COLL_MAX);
    if (arc) return arc;
    snprintf(why, sizeof why, "%s", *s->err ? s->err : "out of memory");
    if (worst == 2 && mine == 2)
        return local_fail(s, COLL_ENOMEM, "rank %d: cannot allocate the buffers of %s: %s", r->rank,
                          z->label, why);
    if (worst == 2)
        return local_fail(s, COLL_ENOMEM, "rank %d: another rank cannot allocate the buffers of %s",
                          r->rank, z->label);
    z->skipped = worst == 1;
    if (z->skipped && r->print) {
        snprintf(text, sizeof text, "%s: skipped (out of device memory%s%s)", z->label,
                 mine == 1 ? ": " : " on another rank", mine == 1 ? why : "");
        progress_clear(s);
        bench_table_print_note(&s->table, text);
    }
    if (s->errlen) s->err[0] = '\0'; /* the skip is reported; nothing failed */
    return 0;
}

static bench_mem mem_kind(const bench_options *o)
{
    return bench_device_is_cuda(o->device)   ? BENCH_MEM_CUDA
           : strcmp(o->buffers, "coll") == 0 ? BENCH_MEM_COLL
           : strcmp(o->buffers, "thp") == 0  ? BENCH_MEM_THP
                                             : BENCH_MEM_MALLOC;
}

/* Which buffers the placements asked for use: in-place alone uses one. */
/* Host buffers are allocated once, at the largest size, and reused by every
 * size and placement: a fresh GiB costs seconds of first-touch page faults per
 * rank, reused pages none, and a size's inputs are written before it runs.
 * Buffers of at least one byte: coll_alloc(0) need not give a usable pointer. */
static int alloc_pool(run_state *s, const uint64_t *sizes, size_t nsizes)
{
    const bench_options *o = s->r->opts;
    const bench_runner *r = s->r;
    size_t sbytes, rbytes;
    if (mem_kind(o) == BENCH_MEM_CUDA) return 0; /* per size: a size may not fit the GPU */
    bench_pool_bytes(o, sizes, nsizes, r->nranks, &sbytes, &rbytes);
    if (bench_buffers_alloc(&s->pool, r->comm, mem_kind(o), sbytes, rbytes, s->err, s->errlen)) {
        bench_buffers_free(&s->pool);
        return local_fail(s, COLL_ENOMEM, "rank %d: cannot allocate %zu + %zu bytes of buffers",
                          r->rank, sbytes, rbytes);
    }
    s->pooled = 1;
    return 0;
}

static int alloc_buffers(run_state *s, size_ctx *z)
{
    const bench_runner *r = s->r;
    size_t esz = coll_dtype_size(z->pair.dtype);
    size_t sbytes = bench_coll_send_elems(r->opts->coll, z->count, r->nranks) * esz;
    size_t rbytes = bench_coll_recv_elems(r->opts->coll, z->count, r->nranks) * esz;
    bench_mem mem = mem_kind(r->opts);
    int rc = 0;
    if (s->pooled) z->buf = s->pool;
    else rc = bench_buffers_alloc(&z->buf, r->comm, mem, sbytes, rbytes, s->err, s->errlen);
    z->send = z->buf.send;
    z->recv = z->buf.recv;
    z->times = calloc((size_t)r->opts->iters, sizeof *z->times);
    z->spread = calloc((size_t)r->opts->iters, sizeof *z->spread);
    if (!z->spread) { /* as if the times had failed: every path below frees both */
        free(z->times);
        z->times = NULL;
    }
    if (mem == BENCH_MEM_CUDA) return agree_device_memory(s, z, rc);
    if (rc || !z->times)
        return local_fail(s, COLL_ENOMEM, "rank %d: cannot allocate %zu + %zu bytes of buffers",
                          r->rank, sbytes, rbytes);
    return 0;
}

static void free_buffers(run_state *s, size_ctx *z)
{
    if (!s->pooled) bench_buffers_free(&z->buf);
    free(z->times);
    free(z->spread);
}

static void emit_rows(run_state *s, const bench_row *oop, const bench_row *ip)
{
    bench_runner *r = s->r;
    const bench_coll *coll = r->opts->coll;
    if (r->print) {
        progress_clear(s);
        bench_table_print_row(&s->table, oop, ip, coll->has_root ? r->opts->root : -1);
    }
    if (r->sink) {
        if (oop) bench_sink_add(r->sink, oop);
        if (ip) bench_sink_add(r->sink, ip);
    }
}

static int run_size(run_state *s, const bench_pair *pair, uint64_t bytes)
{
    const bench_options *o = s->r->opts;
    size_ctx z = {.pair = *pair, .asked = bytes};
    bench_row oop, ip;
    int rc;

    z.count = bench_coll_call_count(o->coll, bytes, coll_dtype_size(pair->dtype), s->r->nranks);
    size_label(&z, bytes, 0);
    rc = alloc_buffers(s, &z);
    if (rc == 0 && z.skipped) {
        free_buffers(s, &z);
        return 0;
    }
    if (rc == 0 && o->inplace != 1) rc = run_placement(s, &z, 0, &oop);
    if (rc == 0 && o->inplace != 0) rc = run_placement(s, &z, 1, &ip);
    if (rc == 0) emit_rows(s, o->inplace != 1 ? &oop : NULL, o->inplace != 0 ? &ip : NULL);
    free_buffers(s, &z);
    return rc;
}

/* ---- public ---- */

void bench_runner_init(bench_runner *r, const bench_options *opts, coll_comm *comm, int nnodes,
                       bench_sink *sink)
{
    memset(r, 0, sizeof *r);
    r->opts = opts;
    r->comm = comm;
    r->rank = coll_comm_rank(comm);
    r->nranks = coll_comm_size(comm);
    int hosts = coll_comm_host_count(comm); /* collective: host ids compared, not guessed */
    r->nnodes = hosts > 0 ? hosts : nnodes > 0 ? nnodes : 1;
    r->sink = r->rank == 0 ? sink : NULL;
    r->print = r->rank == 0 && !opts->quiet;
    r->progress = r->print && isatty(STDERR_FILENO);
    r->test_delay_ms = test_delay_ms(r->rank);
}

/* A dtype/op pair the backend refuses (gloo has no bfloat16 arithmetic): every
 * rank got the same refusal before anything was sent, and the communicator is
 * still usable (coll.h), so the pair's sizes from here on are skipped with a
 * note and the sweep goes on; no row is written for them. A refused --algo is
 * the user's to fix and still fails. Returns rc when it is not such a refusal. */
static int skip_refused(run_state *s, const bench_pair *p, uint64_t bytes, int first, int rc)
{
    const bench_runner *r = s->r;
    char text[480], what[64], human[24];
    if (rc != COLL_ENOTSUP || strcmp(r->opts->algo, "auto") != 0) return rc;
    if (r->print) {
        snprintf(what, sizeof what, "%s%s%s", coll_dtype_name(p->dtype),
                 p->op == BENCH_OP_NONE ? "" : " ",
                 p->op == BENCH_OP_NONE ? "" : coll_op_name((coll_op)p->op));
        bench_format_size(bytes, human, sizeof human);
        snprintf(text, sizeof text, "%s%s%s: skipped (%s)", what, first ? "" : " from ",
                 first ? "" : human, coll_comm_errmsg(r->comm));
        progress_clear(s);
        bench_table_print_note(&s->table, text);
    }
    if (s->errlen) s->err[0] = '\0'; /* reported; nothing failed */
    return 0;
}

static const uint64_t *run_sizes(const bench_options *o, size_t *n)
{
    static const uint64_t no_size = 0; /* barrier: one row, nothing moved */
    *n = o->coll->moves_data ? o->nsizes : 1;
    return o->coll->moves_data ? o->sizes : &no_size;
}

static int run_pairs(run_state *s)
{
    const bench_options *o = s->r->opts;
    size_t nsizes;
    const uint64_t *sizes = run_sizes(o, &nsizes);
    for (size_t p = 0; p < o->npairs; p++)
        for (size_t i = 0; i < nsizes; i++) {
            int rc = run_size(s, &o->pairs[p], sizes[i]);
            if (rc == 0) continue;
            if ((rc = skip_refused(s, &o->pairs[p], sizes[i], i == 0, rc))) return rc;
            break; /* the pair's larger sizes would be refused too */
        }
    return 0;
}

/* --duration: the sizes again and again, usage shown by the printing rank. */
static int run_pass(void *arg) { return run_pairs(arg); }
static int run_soak(run_state *s)
{
    bench_usage growth;
    return bench_soak_run(s->r->comm, s->r->opts->duration_s, run_pass, s,
                          s->r->print ? stdout : NULL, &growth);
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
static int agree_outputs(run_state *s)
{
    const bench_runner *r = s->r;
    int64_t mine = 0, rank0 = 0;
    char why[560] = "";
    if (r->rank == 0) mine = rank0_outputs(r, why, sizeof why);
    int rc = coll_allreduce(r->comm, &mine, &rank0, 1, COLL_INT64, COLL_MAX);
    if (rc) return rc;
    s->per_iter = (int)(rank0 & 1);
    if (!(rank0 & 2)) return 0;
    if (r->rank == 0) return local_fail(s, COLL_ESYS, "%s", why);
    return local_fail(s, COLL_ESYS, "rank 0 cannot write its output files");
}

/* Everything before the first size: names, --algo, rank 0's outputs agreed. */
static int state_open(run_state *s, bench_runner *r, char *errmsg, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->r = r;
    s->err = errmsg;
    s->errlen = errlen;
    if (errlen) errmsg[0] = '\0';
    if (host_label(s->host, sizeof s->host, errmsg, errlen) != 0) return COLL_EINVAL;
    snprintf(s->what, sizeof s->what, "%s %s %d ranks", r->opts->coll->name,
             coll_comm_backend(r->comm), r->nranks);
    bench_table_init(&s->table, stdout, r->opts->verbose);
    int rc;
    if (strcmp(r->opts->algo, "auto") != 0 && (rc = coll_comm_set_algo(r->comm, r->opts->algo)))
        return rc;
    return agree_outputs(s);
}

static void print_header(run_state *s)
{
    const bench_runner *r = s->r;
    bench_row cfg;
    if (!r->print) return;
    row_config(s, &r->opts->pairs[0], &cfg);
    bench_table_print_header(&s->table, &cfg);
    char plan[256]; /* how the backend runs (auto: its hosts), with -v */
    if (r->opts->verbose && coll_comm_describe(r->comm, plan, sizeof plan) == 0)
        fprintf(s->table.out, "#  %s\n", plan);
}

static int state_close(run_state *s, int rc)
{
    if (s->pooled && !s->shares_pool) bench_buffers_free(&s->pool);
    s->pooled = 0;
    if (rc == 0 && s->per_iter_failed) rc = local_fail(s, COLL_ESYS, "%s", s->per_iter_err);
    progress_clear(s);
    free(s->refused);
    s->refused = NULL;
    return rc;
}

int bench_runner_run(bench_runner *r, char *errmsg, size_t errlen)
{
    run_state s;
    size_t nsizes;
    const uint64_t *sizes = run_sizes(r->opts, &nsizes);
    int rc = state_open(&s, r, errmsg, errlen);
    if (rc) return rc;
    print_header(&s);
    rc = alloc_pool(&s, sizes, nsizes);
    if (rc == 0) rc = r->opts->duration_s > 0 ? run_soak(&s) : run_pairs(&s);
    rc = state_close(&s, rc);
    if (r->print && rc == 0) bench_table_print_footer(&s.table);
    return rc;
}

/* ---- several runners, size by size ---- */

/* Rank 0's table of one pass goes to memory and is printed whole when the
 * pass ends: the backends' tables would otherwise interleave line by line.
 * Without memory for it, straight to stdout (rank 0 alone must not stop
 * while the others go on). */
static void table_begin(run_state *s)
{
    if (!s->r->print) return;
    FILE *mem = open_memstream(&s->table_text, &s->table_len);
    if (mem) s->table.out = mem;
    print_header(s);
}

/* What was measured is printed even when the pass failed; the footer, which
 * sums it up, only when it ended. */
static void table_end(run_state *s, int ended)
{
    if (!s->r->print) return;
    progress_clear(s);
    if (ended) bench_table_print_footer(&s->table);
    if (s->table.out == stdout) return; /* printed as it went */
    fclose(s->table.out);
    s->table.out = stdout;
    if (s->table_text) fwrite(s->table_text, 1, s->table_len, stdout);
    fflush(stdout);
    free(s->table_text);
    s->table_text = NULL;
}

/* Private buffers are anyone's: one pool serves every runner. The backends'
 * own (coll_alloc) memory is per communicator, and a pool at the largest size
 * for each would hold backends x 2 GiB a rank at 1G: those are allocated
 * size by size instead, as without a pool. */
static int share_pool(run_state *ss, size_t n)
{
    size_t nsizes;
    const uint64_t *sizes = run_sizes(ss[0].r->opts, &nsizes);
    if (n > 1 && mem_kind(ss[0].r->opts) == BENCH_MEM_COLL) return 0;
    int rc = alloc_pool(&ss[0], sizes, nsizes);
    for (size_t i = 1; i < n && rc == 0 && ss[0].pooled; i++) {
        ss[i].pool = ss[0].pool;
        ss[i].pooled = ss[i].shares_pool = 1;
    }
    return rc;
}

/* One pass: per pair and size, every runner in turn, in `order`. */
static int run_pass_interleaved(run_state *ss, const size_t *order, size_t n, size_t *failed)
{
    const bench_options *o = ss[0].r->opts;
    size_t nsizes;
    const uint64_t *sizes = run_sizes(o, &nsizes);
    for (size_t p = 0; p < o->npairs; p++)
        for (size_t i = 0; i < nsizes; i++)
            for (size_t k = 0; k < n; k++) {
                run_state *s = &ss[order[k]];
                if (s->refused[p]) continue;
                if (s->r->turn) s->r->turn(s->r->turn_arg);
                int rc = run_size(s, &o->pairs[p], sizes[i]);
                if (rc == 0) continue;
                if ((rc = skip_refused(s, &o->pairs[p], sizes[i], i == 0, rc))) {
                    *failed = order[k];
                    return rc;
                }
                s->refused[p] = 1; /* the pair's larger sizes would be refused too */
            }
    return 0;
}

int bench_runner_run_passes(bench_runner *rs, size_t n, int passes, size_t *failed, char *errmsg,
                            size_t errlen)
{
    run_state *ss = calloc(n, sizeof *ss);
    size_t *order = calloc(n, sizeof *order);
    size_t opened = 0;
    int rc = ss && order ? 0 : COLL_ENOMEM;
    *failed = 0;
    for (; rc == 0 && opened < n; opened++) {
        rc = state_open(&ss[opened], &rs[opened], errmsg, errlen);
        ss[opened].refused = calloc(rs[opened].opts->npairs, 1);
        if (rc == 0 && !ss[opened].refused) rc = COLL_ENOMEM;
        if (rc) *failed = opened;
    }
    if (rc == 0) rc = share_pool(ss, n);
    for (int pass = 0; rc == 0 && pass < passes; pass++) {
        if (rs[0].print && passes > 1) {
            printf("\n# pass %d of %d%s\n", pass + 1, passes,
                   pass % 2 ? ", backends in reverse order" : "");
            fflush(stdout);
        }
        for (size_t k = 0; k < n; k++) order[k] = pass % 2 ? n - 1 - k : k;
        for (size_t k = 0; k < n; k++) table_begin(&ss[order[k]]);
        rc = run_pass_interleaved(ss, order, n, failed);
        for (size_t k = 0; k < n; k++) table_end(&ss[order[k]], rc == 0);
    }
    /* the pool's owner closes last: the others only borrowed it */
    for (size_t i = opened; i-- > 0;) {
        int crc = state_close(&ss[i], 0);
        if (rc == 0 && crc) rc = crc, *failed = i;
    }
    free(ss);
    free(order);
    return rc;
}
