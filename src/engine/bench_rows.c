/* Result rows: a run's configuration and times, to the table and the sink. */
#include "engine/bench_run.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "engine/bench_data.h"

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

void bench_run_row_config(bench_run_state *s, const bench_pair *p, bench_row *row)
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
    row->pass = r->pass;
}

void bench_run_row_times(const bench_coll *coll, const bench_stats *st, int nranks, bench_row *row)
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

void bench_run_emit_rows(bench_run_state *s, const bench_row *oop, const bench_row *ip)
{
    bench_runner *r = s->r;
    const bench_coll *coll = r->opts->coll;
    if (r->print) {
        bench_run_progress_clear(s);
        bench_table_print_row(&s->table, oop, ip, coll->has_root ? r->opts->root : -1);
    }
    if (r->sink) {
        if (oop) bench_sink_add(r->sink, oop);
        if (ip) bench_sink_add(r->sink, ip);
    }
}
