/* The report's tables: every row (full_results.md) and one row per
 * configuration (summary_by_config.md). */
#include "report/report_spread.h"
#include "report/report_table.h"

#include "rows/train_exposed.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* A time that older files did not record (NaN) as "-". */
static const char *opt_us(double us, char *buf, size_t len)
{
    if (isfinite(us)) snprintf(buf, len, "%.3f", us);
    else snprintf(buf, len, "-");
    return buf;
}

/* #wrong, or N/A where nothing was checked (-1: barrier). */
static const char *wrong_text(int64_t wrong, char *buf, size_t len)
{
    if (wrong < 0) snprintf(buf, len, "N/A");
    else snprintf(buf, len, "%" PRId64, wrong);
    return buf;
}

void report_table_comm(const report_data *d, rtable *t)
{
    static const char *const head[] = {"collective",   "backend",  "algo",     "device",
                                       "buffers",      "procs",    "nodes",    "dtype",
                                       "op",           "in place", "size",     "bytes",
                                       "avg (us)",     "min (us)", "p25 (us)", "p50 (us)",
                                       "p75 (us)",     "p99 (us)", "max (us)", "algbw (GB/s)",
                                       "busbw (GB/s)", "#wrong",   "host",     "timestamp"};
    report_table_init(t, "Communication: every result", head, sizeof head / sizeof head[0],
                      "lllllrrlllrrrrrrrrrrrrll");
    for (size_t i = 0; i < d->ncomm; i++) {
        const bench_row *r = &d->comm[i];
        char size[32], p25[32], p75[32], wrong[32];
        report_table_row(t,
                         "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%d\t%s\t%" PRIu64
                         "\t%.3f\t%.3f\t%s\t%.3f"
                         "\t%s\t%.3f\t%.3f\t%.6g\t%.6g\t%s\t%s\t%s",
                         r->collective, r->backend, r->algo, r->device, r->buffers, r->nprocs,
                         r->nnodes, r->dtype, r->op, r->in_place,
                         report_fmt_size(r->bytes, size, sizeof size), r->bytes, r->time_us_avg,
                         r->time_us_min, opt_us(r->time_us_p25, p25, sizeof p25), r->time_us_p50,
                         opt_us(r->time_us_p75, p75, sizeof p75), r->time_us_p99, r->time_us_max,
                         r->algbw_GBps, r->busbw_GBps, wrong_text(r->wrong, wrong, sizeof wrong),
                         r->host, r->timestamp);
    }
}

void report_table_comm_summary(const report_view *v, rtable *t)
{
    static const char *const head[] = {"collective",
                                       "host",
                                       "device",
                                       "buffers",
                                       "backend",
                                       "procs",
                                       "nodes",
                                       "sizes",
                                       "smallest-size time (p50)",
                                       "compare-size time (p50)",
                                       "peak busbw (GB/s)",
                                       "peak at",
                                       "#wrong"};
    uint64_t cmp = report_comparison_bytes(v);
    char title[160], cs[32];
    snprintf(title, sizeof title, "Communication: summary by configuration (compare size %s)",
             report_fmt_size(cmp, cs, sizeof cs));
    report_table_init(t, title, head, sizeof head / sizeof head[0], "lllllrrlrrrrr");
    for (size_t i = 0; i < v->n; i++) {
        const report_series *s = &v->s[i];
        const bench_row *lo = s->pts[0], *hi = s->pts[s->n - 1], *peak = lo, *at = NULL;
        for (size_t k = 0; k < s->n; k++) {
            if (s->pts[k]->busbw_GBps > peak->busbw_GBps) peak = s->pts[k];
            if (s->pts[k]->bytes == cmp) at = s->pts[k];
        }
        char a[32], b[32], t0[32], t1[32], p[32], w[32];
        report_table_row(t, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s - %s (%zu)\t%s\t%s\t%.3g\t%s\t%s",
                         s->collective, s->host, s->device, s->buffers, s->backend, s->nprocs,
                         s->nnodes, report_fmt_size(lo->bytes, a, sizeof a),
                         report_fmt_size(hi->bytes, b, sizeof b), s->n,
                         report_fmt_time_us(report_row_time(lo), t0, sizeof t0),
                         at ? report_fmt_time_us(report_row_time(at), t1, sizeof t1) : "-",
                         peak->busbw_GBps, report_fmt_size(peak->bytes, p, sizeof p),
                         wrong_text(s->wrong, w, sizeof w));
    }
}

void report_table_train(const report_data *d, rtable *t)
{
    static const char *const head[] = {"model",
                                       "params",
                                       "mode",
                                       "backend",
                                       "procs",
                                       "batch",
                                       "bucket (MB)",
                                       "compress",
                                       "steps",
                                       "step avg (ms)",
                                       "step p50 (ms)",
                                       "step p99 (ms)",
                                       "compute (ms)",
                                       "comm exposed (ms)",
                                       "comm overhead (%)",
                                       "step - compute, raw (ms)",
                                       "samples/s",
                                       "scaling eff",
                                       "host"};
    report_table_init(t, "Training: every result", head, sizeof head / sizeof head[0],
                      "lrllrrrlrrrrrrrrrrl");
    for (size_t i = 0; i < d->ntrain; i++) {
        const report_train_row *r = &d->train[i];
        char eff[32], exposed[48];
        train_exposed e;
        train_exposed_of(r, &e);
        report_table_row(t,
                         "%s\t%" PRId64 "\t%s\t%s\t%d\t%d\t%g\t%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%s"
                         "\t%.1f\t%.3f\t%.1f\t%s\t%s",
                         r->model, r->params, r->mode, r->backend, r->nprocs, r->batch,
                         r->bucket_mb, r->compress, r->steps, r->step_ms_avg, r->step_ms_p50,
                         r->step_ms_p99, r->compute_ms,
                         train_exposed_text(&e, exposed, sizeof exposed), e.share,
                         r->comm_exposed_ms, r->samples_per_s,
                         report_scaling_eff(r, eff, sizeof eff), r->host);
    }
}

void report_table_train_summary(const report_data *d, rtable *t)
{
    static const char *const head[] = {"model",
                                       "mode",
                                       "host",
                                       "backend",
                                       "procs",
                                       "batch",
                                       "bucket (MB)",
                                       "compress",
                                       "step (ms)",
                                       "compute (ms)",
                                       "comm exposed (ms)",
                                       "comm share",
                                       "samples/s",
                                       "scaling eff"};
    report_table_init(t, "Training: summary by configuration", head, sizeof head / sizeof head[0],
                      "llllrrrlrrrrrr");
    for (size_t i = 0; i < d->ntrain; i++) {
        const report_train_row *r = &d->train[i];
        /* Rows of the same configuration sit together, newest first: keep that one. */
        if (i > 0) {
            const report_train_row *p = &d->train[i - 1];
            if (!strcmp(p->model, r->model) && !strcmp(p->mode, r->mode) &&
                !strcmp(p->host, r->host) && !strcmp(p->backend, r->backend) &&
                p->nprocs == r->nprocs && p->batch == r->batch && p->bucket_mb == r->bucket_mb &&
                !strcmp(p->compress, r->compress))
                continue;
        }
        train_exposed e;
        train_exposed_of(r, &e);
        char eff[32], exposed[48];
        report_table_row(t, "%s\t%s\t%s\t%s\t%d\t%d\t%g\t%s\t%.2f\t%.2f\t%s\t%.0f%%\t%.1f\t%s",
                         r->model, r->mode, r->host, r->backend, r->nprocs, r->batch, r->bucket_mb,
                         r->compress, r->step_ms_avg, r->compute_ms,
                         train_exposed_text(&e, exposed, sizeof exposed), e.share, r->samples_per_s,
                         report_scaling_eff(r, eff, sizeof eff));
    }
}

void report_table_mem(const report_data *d, rtable *t)
{
    static const char *const head[] = {"model",     "batch",       "params",       "grads",
                                       "optimizer", "activations", "comm buffers", "peak RSS"};
    report_table_init(t, "Training: memory", head, sizeof head / sizeof head[0], "lrrrrrrr");
    for (size_t i = 0; i < d->nmem; i++) {
        const report_mem_row *m = &d->mem[i];
        char a[6][32];
        const int64_t v[6] = {m->params_bytes,      m->grads_bytes,        m->optim_bytes,
                              m->activations_bytes, m->comm_buffers_bytes, m->peak_rss_bytes};
        for (int k = 0; k < 6; k++)
            report_fmt_size(v[k] > 0 ? (uint64_t)v[k] : 0, a[k], sizeof a[k]);
        report_table_row(t, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s", m->model, m->batch, a[0], a[1], a[2],
                         a[3], a[4], a[5]);
    }
}
