#include "train/train_metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rows/result.h"
#include "engine/stats.h"
#include "rows/train_exposed.h"
#include "coll.h"
#include "core/atomic_file.h"
#include "core/errbuf.h"
#include "core/file_check.h"

const char TRAIN_CSV_HEADER[] =
    "timestamp,host,model,params,mode,backend,nprocs,batch,bucket_mb,compress,steps,step_ms_avg,"
    "step_ms_p50,step_ms_p99,compute_ms,comm_exposed_ms,comm_overhead_pct,samples_per_s,scaling_"
    "eff";

void train_row_from_result(train_row *row, const train_result *res, int nprocs, int batch)
{
    bench_stats st;
    bench_stats_compute(res->step_ms, (size_t)res->steps, &st);
    row->params = (int64_t)res->nparams;
    row->nprocs = nprocs;
    row->batch = batch;
    row->steps = res->steps;
    row->step_ms_avg = st.avg;
    row->step_ms_p50 = st.p50;
    row->step_ms_p99 = st.p99;
    row->compute_ms = res->compute_ms;
    row->comm_exposed_ms = st.avg - res->compute_ms;
    row->comm_overhead_pct = st.avg > 0 ? 100.0 * row->comm_exposed_ms / st.avg : 0;
    row->samples_per_s = st.avg > 0 ? (double)nprocs * batch * 1e3 / st.avg : 0;
    row->scaling_eff = 0;
}

double train_scaling_eff(const train_row *row, double single)
{
    return single > 0 ? row->samples_per_s / (row->nprocs * single) : 0;
}

int train_row_to_csv(const train_row *r, char *buf, size_t len)
{
    int n = snprintf(buf, len,
                     "%s,%s,%s,%lld,%s,%s,%d,%d,%g,%s,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%.2f,%.2f,%.4f",
                     r->timestamp, r->host, r->model, (long long)r->params, r->mode, r->backend,
                     r->nprocs, r->batch, r->bucket_mb, r->compress, r->steps, r->step_ms_avg,
                     r->step_ms_p50, r->step_ms_p99, r->compute_ms, r->comm_exposed_ms,
                     r->comm_overhead_pct, r->samples_per_s, r->scaling_eff);
    return n < 0 || (size_t)n >= len ? -1 : n;
}

/* Splits a CSV line (no quoting: our text fields never hold commas) in place. */
static int split(char *line, char **f, int max)
{
    int n = 0;
    line[strcspn(line, "\r\n")] = '\0';
    for (char *p = line; n < max;) {
        f[n++] = p;
        char *c = strchr(p, ',');
        if (!c) break;
        *c = '\0';
        p = c + 1;
    }
    return n;
}

static int text(char *dst, size_t cap, const char *src)
{
    if (strlen(src) >= cap) return -1;
    strcpy(dst, src);
    return 0;
}

static int num(const char *s, double *out)
{
    char *end;
    *out = strtod(s, &end);
    return *s && !*end ? 0 : -1;
}

int train_row_from_csv(const char *line, train_row *r, char *err, size_t errlen)
{
    char copy[1024], *f[20];
    double v[19];
    if (strlen(line) >= sizeof copy)
        return coll__set_err(err, errlen, "line too long"), COLL_EINVAL;
    strcpy(copy, line);
    if (split(copy, f, 20) != 19) return coll__set_err(err, errlen, "not 19 fields"), COLL_EINVAL;
    train_row t;
    memset(&t, 0, sizeof t);
    static const int numeric[] = {3, 6, 7, 8, 10, 11, 12, 13, 14, 15, 16, 17, 18};
    for (size_t i = 0; i < sizeof numeric / sizeof numeric[0]; i++)
        if (num(f[numeric[i]], &v[numeric[i]]))
            return coll__set_err(err, errlen, "field %d '%s' is not a number", numeric[i] + 1,
                                 f[numeric[i]]),
                   COLL_EINVAL;
    if (text(t.timestamp, sizeof t.timestamp, f[0]) || text(t.host, sizeof t.host, f[1]) ||
        text(t.model, sizeof t.model, f[2]) || text(t.mode, sizeof t.mode, f[4]) ||
        text(t.backend, sizeof t.backend, f[5]) || text(t.compress, sizeof t.compress, f[9]))
        return coll__set_err(err, errlen, "a text field is too long"), COLL_EINVAL;
    t.params = (int64_t)v[3];
    t.nprocs = (int)v[6];
    t.batch = (int)v[7];
    t.bucket_mb = v[8];
    t.steps = (int)v[10];
    t.step_ms_avg = v[11], t.step_ms_p50 = v[12], t.step_ms_p99 = v[13];
    t.compute_ms = v[14], t.comm_exposed_ms = v[15], t.comm_overhead_pct = v[16];
    t.samples_per_s = v[17], t.scaling_eff = v[18];
    *r = t;
    return 0;
}

int train_mem_row_to_csv(const train_mem_row *r, char *buf, size_t len)
{
    const train_mem *m = &r->mem;
    int n = snprintf(buf, len, "%s,%d,%llu,%llu,%llu,%llu,%llu,%llu", r->model, r->batch,
                     (unsigned long long)m->params_bytes, (unsigned long long)m->grads_bytes,
                     (unsigned long long)m->optim_bytes, (unsigned long long)m->activations_bytes,
                     (unsigned long long)m->comm_buffers_bytes,
                     (unsigned long long)m->peak_rss_bytes);
    return n < 0 || (size_t)n >= len ? -1 : n;
}

int train_mem_row_from_csv(const char *line, train_mem_row *r, char *err, size_t errlen)
{
    char copy[512], *f[8];
    double v[8];
    if (strlen(line) >= sizeof copy)
        return coll__set_err(err, errlen, "line too long"), COLL_EINVAL;
    strcpy(copy, line);
    if (split(copy, f, 8) != 8) return coll__set_err(err, errlen, "not 8 fields"), COLL_EINVAL;
    for (int i = 1; i < 8; i++)
        if (num(f[i], &v[i]))
            return coll__set_err(err, errlen, "field %d '%s' is not a number", i + 1, f[i]),
                   COLL_EINVAL;
    train_mem_row t;
    memset(&t, 0, sizeof t);
    if (text(t.model, sizeof t.model, f[0]))
        return coll__set_err(err, errlen, "model name too long"), COLL_EINVAL;
    t.batch = (int)v[1];
    t.mem = (train_mem){(uint64_t)v[2], (uint64_t)v[3], (uint64_t)v[4],
                        (uint64_t)v[5], (uint64_t)v[6], (uint64_t)v[7]};
    *r = t;
    return 0;
}

int train_csv_check(const char *path, char *err, size_t errlen)
{
    int rc = coll__file_check_writable(path, COLL_FILE_APPEND, err, errlen);
    return rc ? rc : coll__csv_check_header(path, TRAIN_CSV_HEADER, err, errlen);
}

int train_csv_append(const char *path, const train_row *rows, size_t n, char *err, size_t errlen)
{
    size_t cap = n * 1024 + 1, used = 0;
    char *buf = malloc(cap);
    if (!buf) return coll__set_err(err, errlen, "%s: out of memory", path), COLL_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        int len = train_row_to_csv(&rows[i], buf + used, cap - used - 1);
        if (len < 0) {
            free(buf);
            return coll__set_err(err, errlen, "%s: row %zu does not fit a CSV line", path, i + 1),
                   COLL_EINVAL;
        }
        used += (size_t)len;
        buf[used++] = '\n';
    }
    int rc = coll__csv_append(path, TRAIN_CSV_HEADER, buf, used, err, errlen);
    free(buf);
    return rc;
}

void train_table_header(FILE *f)
{
    fprintf(f, "%-22s %10s %-15s %-7s %3s %5s %6s %-9s %9s %9s %9s %9s %14s %6s %10s %6s\n",
            "model", "params", "mode", "backend", "np", "batch", "bucket", "compress", "step_ms",
            "p50", "p99", "compute", "exposed", "comm%", "samples/s", "eff");
    fflush(f);
}

void train_table_line(FILE *f, const train_row *r)
{
    char bucket[16] = "-";
    if (r->bucket_mb > 0) snprintf(bucket, sizeof bucket, "%gM", r->bucket_mb);
    train_exposed e;
    char exposed[48];
    train_exposed_of(r, &e); /* never a negative time: inside the noise it is 0 ± noise */
    fprintf(f,
            "%-22s %10lld %-15s %-7s %3d %5d %6s %-9s %9.2f %9.2f %9.2f %9.2f %15s %6.1f %10.1f "
            "%6.3f\n",
            r->model, (long long)r->params, r->mode, r->backend, r->nprocs, r->batch, bucket,
            r->compress, r->step_ms_avg, r->step_ms_p50, r->step_ms_p99, r->compute_ms,
            train_exposed_text(&e, exposed, sizeof exposed), e.share, r->samples_per_s,
            r->scaling_eff);
    fflush(f);
}

static double mib(uint64_t b) { return (double)b / (1024.0 * 1024.0); }

void train_mem_table(FILE *f, const train_mem_row *rows, size_t n)
{
    if (n == 0) return;
    fprintf(f, "\nmemory per rank (MiB):\n%-22s %5s %9s %9s %9s %11s %9s %9s\n", "model", "batch",
            "params", "grads", "optim", "activations", "comm_buf", "peak_rss");
    for (size_t i = 0; i < n; i++) {
        const train_mem *m = &rows[i].mem;
        fprintf(f, "%-22s %5d %9.1f %9.1f %9.1f %11.1f %9.1f %9.1f\n", rows[i].model, rows[i].batch,
                mib(m->params_bytes), mib(m->grads_bytes), mib(m->optim_bytes),
                mib(m->activations_bytes), mib(m->comm_buffers_bytes), mib(m->peak_rss_bytes));
    }
    fflush(f);
}
