/* Merging rows from many files: one order for every output (so the report of
 * the same files is the same bytes), preferred variants first (what plots and
 * analysis pick), exact duplicates dropped; and the combined CSV files. */
#include "report/report_data.h"
#include "report/report_fields.h"
#include "report/report_merge.h"
#include "report/report_text.h"

#include "coll.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const COLLECTIVE_ORDER[] = {
    "allreduce", "allgather", "reducescatter", "broadcast",
    "reduce",    "alltoall",  "sendrecv",      "barrier",
};

int report_collective_rank(const char *name)
{
    for (size_t i = 0; i < sizeof COLLECTIVE_ORDER / sizeof COLLECTIVE_ORDER[0]; i++)
        if (strcmp(name, COLLECTIVE_ORDER[i]) == 0) return (int)i;
    return 100;
}

/* 0 when a is the preferred value, else 1: preferred sorts first. */
static int not_pref(const char *a, const char *p1, const char *p2)
{
    return !(strcmp(a, p1) == 0 || (p2 && strcmp(a, p2) == 0));
}

#define CMP(a, b)                                  \
    do {                                           \
        if ((a) != (b)) return (a) < (b) ? -1 : 1; \
    } while (0)
#define CMPS(a, b)             \
    do {                       \
        int c_ = strcmp(a, b); \
        if (c_) return c_;     \
    } while (0)

static int comm_line(const bench_row *r, char *buf, size_t len)
{
    return bench_row_to_csv(r, buf, len) < 0 ? (buf[0] = '\0', -1) : 0;
}

static int cmp_comm(const void *pa, const void *pb)
{
    const bench_row *a = pa, *b = pb;
    CMP(report_collective_rank(a->collective), report_collective_rank(b->collective));
    CMPS(a->collective, b->collective);
    /* A series (report_view.h) is a contiguous run: its keys come first. */
    CMPS(a->host, b->host);
    CMPS(a->device, b->device);
    CMPS(a->buffers, b->buffers);
    CMP(a->nnodes, b->nnodes);
    CMPS(a->backend, b->backend);
    CMP(a->nprocs, b->nprocs);
    CMP(a->bytes, b->bytes);
    CMP(not_pref(a->dtype, "float32", NULL), not_pref(b->dtype, "float32", NULL));
    CMPS(a->dtype, b->dtype);
    CMP(!a->in_place, !b->in_place); /* in place first: what torch and the suite measure */
    /* the suite runs shm and auto with both kinds: plots show malloc, the default */
    CMP(not_pref(a->buffers, "malloc", NULL), not_pref(b->buffers, "malloc", NULL));
    CMPS(a->buffers, b->buffers);
    CMP(not_pref(a->op, "sum", "none"), not_pref(b->op, "sum", "none"));
    CMPS(a->op, b->op);
    CMP(not_pref(a->algo, "auto", NULL), not_pref(b->algo, "auto", NULL));
    CMPS(a->algo, b->algo);
    CMPS(b->timestamp, a->timestamp); /* newest first */
    char la[2048], lb[2048];
    comm_line(a, la, sizeof la);
    comm_line(b, lb, sizeof lb);
    return strcmp(la, lb);
}

static void schema_line(const rschema *s, const void *row, sbuf *out)
{
    for (size_t i = 0; i < s->nfields; i++) {
        if (i) report_sb_puts(out, ",");
        report_field_to_csv(&s->fields[i], row, out);
    }
}

static int cmp_schema_text(const rschema *s, const void *a, const void *b)
{
    sbuf x = {0}, y = {0};
    schema_line(s, a, &x);
    schema_line(s, b, &y);
    int c = strcmp(x.p ? x.p : "", y.p ? y.p : "");
    report_sb_free(&x);
    report_sb_free(&y);
    return c;
}

static int cmp_train(const void *pa, const void *pb)
{
    const report_train_row *a = pa, *b = pb;
    CMPS(a->model, b->model);
    CMPS(a->mode, b->mode);
    CMPS(a->host, b->host);
    CMPS(a->backend, b->backend);
    CMP(a->nprocs, b->nprocs);
    CMP(a->batch, b->batch);
    CMP(a->bucket_mb, b->bucket_mb);
    CMPS(a->compress, b->compress);
    CMPS(b->timestamp, a->timestamp);
    return cmp_schema_text(&REPORT_TRAIN_SCHEMA, a, b);
}

static int cmp_mem(const void *pa, const void *pb)
{
    const report_mem_row *a = pa, *b = pb;
    CMPS(a->model, b->model);
    CMP(a->batch, b->batch);
    return cmp_schema_text(&REPORT_MEM_SCHEMA, a, b);
}

/* One measurement written to a CSV and to a JSON file comes back with its
 * numbers rounded differently (the training CSV keeps 3-4 decimals, JSON all of
 * them): equal within the CSV's rounding is the same row. */
static int same_schema_row(const rschema *s, const void *a, const void *b)
{
    for (size_t i = 0; i < s->nfields; i++) {
        const rfield *f = &s->fields[i];
        const char *x = (const char *)a + f->offset, *y = (const char *)b + f->offset;
        if (f->kind == RF_DBL) {
            double u = *(const double *)x, v = *(const double *)y;
            double tol = 5e-4 * (fabs(u) > fabs(v) ? fabs(u) : fabs(v)) + 5e-4;
            if (fabs(u - v) > tol) return 0;
        } else if (f->kind == RF_STR ? strcmp(x, y) != 0 : memcmp(x, y, f->size) != 0) {
            return 0;
        }
    }
    return 1;
}

static int same_train(const void *a, const void *b)
{
    return same_schema_row(&REPORT_TRAIN_SCHEMA, a, b);
}
static int same_mem(const void *a, const void *b)
{
    return same_schema_row(&REPORT_MEM_SCHEMA, a, b);
}
static int same_comm(const void *a, const void *b) { return cmp_comm(a, b) == 0; }

/* Replay rows: a turn's summary first, then its collectives and size classes. */
static int replay_class_rank(const char *c)
{
    static const char *const order[] = {"all", "<64K", "64K-1M", "1M-16M", ">=16M"};
    for (int k = 0; k < 5; k++)
        if (!strcmp(c, order[k])) return k;
    return 5;
}
static int cmp_replay(const void *pa, const void *pb)
{
    const bench_replay_row *a = pa, *b = pb;
    CMPS(a->trace, b->trace);
    CMP(a->nprocs, b->nprocs);
    CMPS(a->buffers, b->buffers);
    CMPS(a->gaps, b->gaps);
    CMPS(a->overlap, b->overlap);
    CMPS(a->bind, b->bind);
    CMPS(a->backend, b->backend);
    CMP(a->pass, b->pass);
    CMP(!bench_replay_row_is_summary(a), !bench_replay_row_is_summary(b));
    CMP(report_collective_rank(a->collective), report_collective_rank(b->collective));
    CMPS(a->collective, b->collective);
    CMP(replay_class_rank(a->size_class), replay_class_rank(b->size_class));
    return 0;
}
/* The same turn's row read from its CSV and its JSON (both %.9g). */
static int same_replay(const void *pa, const void *pb)
{
    const bench_replay_row *a = pa, *b = pb;
    if (cmp_replay(a, b)) return 0;
    for (int i = 0; i < BENCH_REPLAY_COLUMNS; i++) {
        const bench_replay_field *f = &bench_replay_fields[i];
        if (f->kind != BENCH_REPLAY_NUM && f->kind != BENCH_REPLAY_OPT) continue;
        double u = *(const double *)((const char *)a + f->offset),
               v = *(const double *)((const char *)b + f->offset);
        if (isnan(u) != isnan(v) || (!isnan(u) && fabs(u - v) > 1e-8 * fmax(fabs(u), fabs(v))))
            return 0;
    }
    return 1;
}

/* Sorts and removes rows that are the same as their predecessor. */
static size_t sort_unique(void *base, size_t *n, size_t size,
                          int (*cmp)(const void *, const void *),
                          int (*same)(const void *, const void *))
{
    if (*n < 2) return 0;
    qsort(base, *n, size, cmp);
    char *p = base;
    size_t out = 1;
    for (size_t i = 1; i < *n; i++) {
        if (same(p + (out - 1) * size, p + i * size)) continue;
        if (out != i) memcpy(p + out * size, p + i * size, size);
        out++;
    }
    size_t dropped = *n - out;
    *n = out;
    return dropped;
}

size_t report_sort_dedup(report_data *d)
{
    return sort_unique(d->comm, &d->ncomm, sizeof *d->comm, cmp_comm, same_comm) +
           sort_unique(d->train, &d->ntrain, sizeof *d->train, cmp_train, same_train) +
           sort_unique(d->mem, &d->nmem, sizeof *d->mem, cmp_mem, same_mem) +
           sort_unique(d->replay, &d->nreplay, sizeof *d->replay, cmp_replay, same_replay);
}

/* Whether a text field of r would start a spreadsheet formula. */
static int comm_needs_guard(const bench_row *r)
{
    const char *text[] = {r->timestamp, r->host,    r->collective, r->backend, r->algo,
                          r->device,    r->buffers, r->dtype,      r->op};
    for (size_t i = 0; i < sizeof text / sizeof text[0]; i++)
        if (text[i][0] && strchr("=+-@\t\r", text[i][0])) return 1;
    return 0;
}

/* 1 when column i of BENCH_CSV_HEADER is text (a negative number is not guarded). */
static int comm_text_column(size_t i)
{
    static const char *const names[] = {"timestamp", "host",    "collective", "backend", "algo",
                                        "device",    "buffers", "dtype",      "op"};
    const char *h = BENCH_CSV_HEADER;
    for (; i > 0 && h; i--) h = strchr(h, ',') ? strchr(h, ',') + 1 : NULL;
    size_t len = h ? strcspn(h, ",") : 0;
    for (size_t k = 0; h && k < sizeof names / sizeof names[0]; k++)
        if (strlen(names[k]) == len && !strncmp(h, names[k], len)) return 1;
    return 0;
}

/* r's combined.csv line: bench_row's text, its text fields guarded by
 * report_csv_put_text where a spreadsheet would take them for a formula. */
static void comm_line_guarded(const bench_row *r, sbuf *out)
{
    enum { MAXF = 40 };
    char line[2048], store[2048], *f[MAXF];
    if (comm_line(r, line, sizeof line) != 0) return;
    int n = comm_needs_guard(r) ? report_csv_split(line, strlen(line), f, MAXF, store, sizeof store)
                                : -1;
    if (n <= 0 || n > MAXF) {
        report_sb_printf(out, "%s\n", line);
        return;
    }
    for (int i = 0; i < n; i++) {
        if (i) report_sb_puts(out, ",");
        if (comm_text_column((size_t)i)) report_csv_put_text(out, f[i]);
        else report_sb_puts(out, f[i]);
    }
    report_sb_puts(out, "\n");
}

int report_write_combined(const report_data *d, const char *outdir, char *err, size_t errlen)
{
    sbuf b = {0};
    char path[4096];
    report_sb_printf(&b, "%s\n", BENCH_CSV_HEADER);
    for (size_t i = 0; i < d->ncomm; i++) comm_line_guarded(&d->comm[i], &b);
    snprintf(path, sizeof path, "%s/combined.csv", outdir);
    int rc = report_write_sbuf(path, &b, err, errlen);
    report_sb_free(&b);
    if (rc != 0 || d->ntrain == 0) return rc;

    report_sb_printf(&b, "%s\n", REPORT_TRAIN_CSV_HEADER);
    for (size_t i = 0; i < d->ntrain; i++) {
        schema_line(&REPORT_TRAIN_SCHEMA, &d->train[i], &b);
        report_sb_puts(&b, "\n");
    }
    snprintf(path, sizeof path, "%s/combined_training.csv", outdir);
    rc = report_write_sbuf(path, &b, err, errlen);
    report_sb_free(&b);
    return rc;
}
