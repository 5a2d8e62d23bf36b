/* Which plots the report draws, from the view: time and bus bandwidth vs size
 * per collective, the backend comparison at one size, time vs process count,
 * and the training step's compute/communication split. Each as PNG and SVG. */
#include "report/report_plot.h"

#include "coll.h"

#ifndef COLL_HAVE_PLPLOT

int report_plots_draw(const report_data *d, const report_view *v, const char *outdir,
                      report_plots *out, FILE *log)
{
    (void)d, (void)v, (void)outdir;
    out->n = 0;
    plot_available(log);
    return COLL_EUNAVAIL;
}

#else

#include "report/report_spread.h"
#include "report/report_text.h"

#include "core/atomic_file.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A line's identity beyond collective and process count: machine, device,
 * buffer kind, node count and backend. Each has its own colour in every plot. */
typedef struct plot_ctx {
    const report_data *d;
    const report_view *v;
    const report_series *ident[32]; /* a representative series of each identity */
    size_t nident;
    const char *backends[16];
    size_t nbackends;
    int procs[16];
    size_t nprocs;
    /* what the current plot shows */
    const char *collective;
    int bandwidth;
    uint64_t small, large;
} plot_ctx;

static int same_ident(const report_series *a, const report_series *b)
{
    return !strcmp(a->host, b->host) && !strcmp(a->device, b->device) &&
           !strcmp(a->buffers, b->buffers) && a->nnodes == b->nnodes && !strcmp(a->backend, b->backend);
}

static int cmp_ident(const void *pa, const void *pb)
{
    const report_series *a = *(const report_series *const *)pa, *b = *(const report_series *const *)pb;
    int c;
    if ((c = strcmp(a->host, b->host)) || (c = strcmp(a->device, b->device)) ||
        (c = strcmp(a->buffers, b->buffers)))
        return c;
    if (a->nnodes != b->nnodes) return a->nnodes < b->nnodes ? -1 : 1;
    return strcmp(a->backend, b->backend);
}

static size_t ident_index(const plot_ctx *c, const report_series *s)
{
    for (size_t i = 0; i < c->nident; i++)
        if (same_ident(c->ident[i], s)) return i;
    return 0;
}

static size_t backend_index(const plot_ctx *c, const char *b)
{
    for (size_t i = 0; i < c->nbackends; i++)
        if (strcmp(c->backends[i], b) == 0) return i;
    return 0;
}

static size_t procs_index(const plot_ctx *c, int p)
{
    for (size_t i = 0; i < c->nprocs; i++)
        if (c->procs[i] == p) return i;
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }
static int cmp_int(const void *a, const void *b) { return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b); }

static void collect_keys(plot_ctx *c)
{
    for (size_t i = 0; i < c->v->n; i++) {
        const report_series *s = &c->v->s[i];
        size_t k = 0;
        while (k < c->nident && !same_ident(c->ident[k], s)) k++;
        if (k == c->nident && k < 32) c->ident[c->nident++] = s;
        k = 0;
        while (k < c->nbackends && strcmp(c->backends[k], s->backend)) k++;
        if (k == c->nbackends && k < 16) c->backends[c->nbackends++] = s->backend;
        k = 0;
        while (k < c->nprocs && c->procs[k] != s->nprocs) k++;
        if (k == c->nprocs && k < 16) c->procs[c->nprocs++] = s->nprocs;
    }
    qsort(c->ident, c->nident, sizeof c->ident[0], cmp_ident);
    qsort(c->backends, c->nbackends, sizeof c->backends[0], cmp_str);
    qsort(c->procs, c->nprocs, sizeof c->procs[0], cmp_int);
}

/* "shm on cpubox, coll buffers": the backend and what else varies. */
static void ident_label(const plot_ctx *c, const report_series *s, char *buf, size_t len)
{
    char where[160];
    snprintf(buf, len, "%s%s", s->backend, report_series_where(c->v, s, where, sizeof where));
}

/* The point r as y (median time, or bus bandwidth) with its spread as a whisker. */
static void add_point(plot_line *l, double x, const bench_row *r, int bandwidth)
{
    double t = report_row_time(r), lo, hi;
    int known = report_row_spread(r, &lo, &hi) != SPREAD_UNKNOWN;
    double y = bandwidth ? r->busbw_GBps : t;
    if (!(y > 0) || l->n >= 64) return;
    l->x[l->n] = x;
    l->y[l->n] = y;
    if (known && !bandwidth) {
        l->lo[l->n] = lo, l->hi[l->n] = hi;
    } else if (known && r->time_us_avg > 0) {
        /* bus bandwidth is bytes over the average time: scale it by the time's spread */
        l->lo[l->n] = r->busbw_GBps * r->time_us_avg / hi;
        l->hi[l->n] = r->busbw_GBps * r->time_us_avg / lo;
    }
    l->n++;
}

/* Lines of one collective: one per series (identity x process count). */
static size_t size_lines(const plot_ctx *c, plot_line *lines, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < c->v->n && n < cap; i++) {
        const report_series *s = &c->v->s[i];
        if (strcmp(s->collective, c->collective) != 0) continue;
        plot_line *l = &lines[n];
        memset(l, 0, sizeof *l);
        char id[128];
        ident_label(c, s, id, sizeof id);
        snprintf(l->label, sizeof l->label, "%.80s, %d procs", id, s->nprocs);
        l->colour = plot_colour(ident_index(c, s));
        l->marker = plot_marker(procs_index(c, s->nprocs));
        l->style = plot_line_style(procs_index(c, s->nprocs));
        for (size_t k = 0; k < s->n; k++)
            if (s->pts[k]->bytes > 0) add_point(l, (double)s->pts[k]->bytes, s->pts[k], c->bandwidth);
        if (l->n) n++;
    }
    return n;
}

static void draw_vs_size(const plot_ctx *c)
{
    plot_line *lines = calloc(32, sizeof *lines);
    if (!lines) return;
    size_t n = size_lines(c, lines, 32);
    char title[128];
    snprintf(title, sizeof title, "%s: %s vs message size", c->collective,
             c->bandwidth ? "bus bandwidth" : "time per call (median)");
    /* The legend right of the panel takes what its longest label needs. */
    size_t longest = 0;
    for (size_t i = 0; i < n; i++)
        if (strlen(lines[i].label) > longest) longest = strlen(lines[i].label);
    double x1 = 0.92 - 0.0125 * (double)longest;
    x1 = x1 > 0.76 ? 0.76 : x1 < 0.48 ? 0.48 : x1;
    plot_lines_panel(0.12, x1, 0.12, 0.91, title, "message size (bytes, log scale)", UNIT_BYTES,
                     c->bandwidth ? "bus bandwidth (GB/s, log scale)" : "time per call (log scale)",
                     c->bandwidth ? UNIT_GBPS : UNIT_TIME_US, lines, n, 1);
    free(lines);
}

/* The series of the current collective with identity like and nprocs. */
static const report_series *find_series(const plot_ctx *c, const report_series *like, int nprocs)
{
    for (size_t i = 0; i < c->v->n; i++) {
        const report_series *s = &c->v->s[i];
        if (s->nprocs == nprocs && !strcmp(s->collective, c->collective) && same_ident(s, like)) return s;
    }
    return NULL;
}

/* One line per identity: time at bytes for each process count. Identities
 * with a point at bytes or at also (so both panels list the same ones). */
static size_t procs_lines(const plot_ctx *c, uint64_t bytes, uint64_t also, plot_line *lines)
{
    size_t n = 0;
    for (size_t b = 0; b < c->nident && n < 16; b++) {
        plot_line *l = &lines[n];
        memset(l, 0, sizeof *l);
        ident_label(c, c->ident[b], l->label, sizeof l->label);
        l->colour = plot_colour(b);
        l->marker = plot_marker(b);
        l->style = 1;
        int other = 0;
        for (size_t p = 0; p < c->nprocs; p++) {
            const report_series *s = find_series(c, c->ident[b], c->procs[p]);
            const bench_row *r = report_series_at(s, bytes);
            other |= report_series_at(s, also) != NULL;
            if (r) add_point(l, c->procs[p], r, 0);
        }
        if (l->n || other) n++;
    }
    return n;
}

static void draw_scaling(const plot_ctx *c)
{
    plot_line lines[2][16];
    char t0[128], t1[128], a[32], b[32];
    size_t n0 = procs_lines(c, c->small, c->large, lines[0]);
    size_t n1 = procs_lines(c, c->large, c->small, lines[1]);
    snprintf(t0, sizeof t0, "%s, %s", c->collective, fmt_size(c->small, a, sizeof a));
    snprintf(t1, sizeof t1, "%s, %s", c->collective, fmt_size(c->large, b, sizeof b));
    plot_lines_panel(0.12, 0.46, 0.25, 0.90, t0, "processes", UNIT_COUNT, "time per call (log scale)",
                     UNIT_TIME_US, lines[0], n0, -1);
    /* The legend (bottom, one row) once: both panels share identities and colours. */
    plot_lines_panel(0.62, 0.96, 0.25, 0.90, t1, "processes", UNIT_COUNT, "time per call (log scale)",
                     UNIT_TIME_US, lines[1], n1, 0);
}

typedef struct bars_arg {
    const plot_ctx *c;
    plot_bar_group *g;
    size_t ng;
} bars_arg;

static void draw_comparison(const bars_arg *a)
{
    const plot_ctx *c = a->c;
    /* Only the backends with a bar, keeping each backend's colour. */
    int colours[16];
    const char *names[16];
    size_t nb = 0;
    plot_bar_group *g = calloc(a->ng ? a->ng : 1, sizeof *g);
    if (!g) return;
    for (size_t b = 0; b < c->nbackends; b++) {
        int used = 0;
        for (size_t i = 0; i < a->ng; i++) used |= a->g[i].value[b] >= 0;
        if (!used) continue;
        for (size_t i = 0; i < a->ng; i++) {
            memcpy(g[i].label, a->g[i].label, sizeof g[i].label);
            g[i].value[nb] = a->g[i].value[b];
            g[i].lo[nb] = a->g[i].lo[b];
            g[i].hi[nb] = a->g[i].hi[b];
        }
        colours[nb] = plot_colour(b);
        names[nb++] = c->backends[b];
    }
    char title[128], sz[32];
    snprintf(title, sizeof title, "Backend comparison at %s", fmt_size(c->large, sz, sizeof sz));
    plot_bars(title, "bus bandwidth (GB/s, higher is better)", g, a->ng, names, nb, colours, 0, "%.3g");
    free(g);
}

typedef struct hbars_arg {
    const char *title;
    const char **labels;
    double *value, *stack;
    size_t n;
} hbars_arg;

static void draw_training(const hbars_arg *a)
{
    static const char *const series[] = {"compute", "exposed comm."};
    const int colours[] = {plot_colour(0), plot_colour(1)};
    plot_hbars(a->title, "time per step (ms)", a->labels, a->value, a->stack, a->n, series,
               colours, "%.3g ms");
}

typedef enum plot_kind { K_SIZE, K_SCALING, K_COMPARISON, K_TRAINING } plot_kind;

typedef struct job {
    plot_kind kind;
    const plot_ctx *c;
    const bars_arg *bars;
    const hbars_arg *hbars;
} job;

/* One page of j into memory, then to path atomically; 0 or out->rc set. */
static int render_file(const char *path, plot_format fmt, int w, int h, const job *j, report_plots *out)
{
    char *data = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&data, &len);
    if (!mem) {
        snprintf(out->err, sizeof out->err, "%s: cannot draw the plot: %s", path, strerror(errno));
        return out->rc = COLL_ENOMEM;
    }
    plot_page_begin(mem, fmt, w, h);
    switch (j->kind) {
    case K_SIZE: draw_vs_size(j->c); break;
    case K_SCALING: draw_scaling(j->c); break;
    case K_COMPARISON: draw_comparison(j->bars); break;
    case K_TRAINING: draw_training(j->hbars); break;
    }
    plot_page_end(); /* closes mem: data and len are final */
    if (!data || len == 0) {
        snprintf(out->err, sizeof out->err, "%s: PLplot drew nothing (out of memory?)", path);
        out->rc = COLL_ENOMEM;
    } else {
        out->rc = coll__file_write_atomic(path, data, len, out->err, sizeof out->err);
    }
    free(data);
    return out->rc;
}

static void render(const char *outdir, const char *stem, int w, int h, const job *j,
                   report_plots *out, const char *caption)
{
    for (int f = 0; f < 2 && out->rc == 0; f++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.%s", outdir, stem, f ? "svg" : "png");
        render_file(path, f ? PLOT_SVG : PLOT_PNG, w, h, j, out);
    }
    if (out->rc) return;
    if (out->n < REPORT_MAX_PLOTS) {
        report_plot_file *pf = &out->f[out->n++];
        snprintf(pf->name, sizeof pf->name, "%s.png", stem);
        snprintf(pf->caption, sizeof pf->caption, "%s", caption);
    }
}

/* Whether collective has a point of positive size and positive y. */
static int has_sized(plot_ctx *c, int bandwidth)
{
    plot_line *lines = calloc(32, sizeof *lines);
    if (!lines) return 0;
    c->bandwidth = bandwidth;
    size_t n = size_lines(c, lines, 32);
    free(lines);
    return n > 0;
}

static int bars_width(size_t bars) { int w = (int)(bars * 28 + 320); return w > REPORT_PLOT_WIDTH ? w : REPORT_PLOT_WIDTH; }

/* The comparison plot's file name says its size: backend_comparison_100MiB. */
static void comparison_stem(uint64_t bytes, char *stem, size_t len)
{
    char sz[32], compact[32];
    size_t k = 0;
    fmt_size(bytes, sz, sizeof sz);
    for (const char *p = sz; *p && k + 1 < sizeof compact; p++)
        if (*p != ' ') compact[k++] = *p;
    compact[k] = '\0';
    snprintf(stem, len, "backend_comparison_%s", compact);
}

/* Bars per comparison group (collective, machine, device, buffer kind, node
 * and process count), one per backend: only bars of one group compare. */
static void comparison_plot(plot_ctx *c, const char *outdir, report_plots *out)
{
    uint64_t cmp = report_comparison_bytes(c->v);
    if (cmp == 0) return;
    plot_bar_group *g = calloc(c->v->n, sizeof *g);
    size_t ng = 0;
    if (!g) return;
    for (size_t i = 0; i < c->v->n; i++) {
        const report_series *s = &c->v->s[i];
        const bench_row *r = report_series_at(s, cmp);
        if (!r) continue;
        char want[2][96], where[160];
        snprintf(want[0], sizeof want[0], "%s, %d procs", s->collective, s->nprocs);
        report_series_where(c->v, s, where, sizeof where);
        snprintf(want[1], sizeof want[1], "%.94s", where + strspn(where, ", "));
        plot_bar_group *grp = NULL;
        for (size_t k = 0; k < ng; k++)
            if (!strcmp(g[k].label[0], want[0]) && !strcmp(g[k].label[1], want[1])) grp = &g[k];
        if (!grp) {
            grp = &g[ng++];
            memcpy(grp->label, want, sizeof want);
            for (int k = 0; k < 16; k++) grp->value[k] = -1;
        }
        plot_line one = {0};
        add_point(&one, 0, r, 1);
        size_t b = backend_index(c, s->backend);
        grp->value[b] = r->busbw_GBps;
        grp->lo[b] = one.lo[0];
        grp->hi[b] = one.hi[0];
    }
    /* A group of one backend compares nothing: left out. */
    size_t kept = 0, longest = 0;
    for (size_t i = 0; i < ng; i++) {
        int bars = 0;
        for (int k = 0; k < 16; k++) bars += g[i].value[k] >= 0;
        if (bars < 2) continue;
        g[kept++] = g[i];
        for (int l = 0; l < 2; l++)
            if (strlen(g[i].label[l]) > longest) longest = strlen(g[i].label[l]);
    }
    ng = kept;
    /* Each group as wide as its label (about 9.5 px a character; the
     * panel is 63% of the page). */
    int w = bars_width(ng * c->nbackends), need = (int)((double)ng * ((double)longest * 9.5 + 24) / 0.63);
    c->large = cmp;
    bars_arg a = {c, g, ng};
    job j = {K_COMPARISON, c, &a, NULL};
    char caption[300], sz[32], stem[96];
    comparison_stem(cmp, stem, sizeof stem);
    snprintf(caption, sizeof caption, "Bus bandwidth of every backend at %s, per collective and "
             "process count (whiskers: the time's p25-p75, or min-p99)%s", fmt_size(cmp, sz, sizeof sz),
             c->v->many_hosts || c->v->many_buffers || c->v->many_devices
                 ? " (a group per machine, device and buffer kind: compare bars within a group)" : "");
    if (ng) render(outdir, stem, need > w ? need : w, REPORT_PLOT_HEIGHT, &j, out, caption);
    free(g);
}

static int same_train_config(const report_train_row *p, const report_train_row *r)
{
    return !strcmp(p->model, r->model) && !strcmp(p->mode, r->mode) && !strcmp(p->host, r->host) &&
           !strcmp(p->backend, r->backend) && p->nprocs == r->nprocs && p->batch == r->batch &&
           p->bucket_mb == r->bucket_mb && !strcmp(p->compress, r->compress);
}

/* One row per training configuration (the newest run of each, as in the
 * summary table), its label naming everything that varies. */
static void training_plot(const plot_ctx *c, const char *outdir, report_plots *out)
{
    const report_data *d = c->d;
    if (d->ntrain == 0) return;
    char (*text)[128] = calloc(d->ntrain, sizeof *text);
    const char **labels = calloc(d->ntrain, sizeof *labels);
    double *value = calloc(d->ntrain, sizeof *value), *stack = calloc(d->ntrain, sizeof *stack);
    if (!text || !labels || !value || !stack) goto done;
    int vary_bucket = 0, vary_model = 0, vary_host = 0;
    for (size_t i = 1; i < d->ntrain; i++) {
        vary_bucket |= d->train[i].bucket_mb != d->train[0].bucket_mb ||
                       strcmp(d->train[i].compress, d->train[0].compress) != 0;
        vary_model |= strcmp(d->train[i].model, d->train[0].model) != 0;
        vary_host |= strcmp(d->train[i].host, d->train[0].host) != 0;
    }
    size_t n = 0;
    for (size_t i = 0; i < d->ntrain; i++) {
        const report_train_row *r = &d->train[i];
        if (i > 0 && same_train_config(&d->train[i - 1], r)) continue;
        int at = snprintf(text[n], sizeof text[n], "%s%s%s %s x%d, batch %d", vary_model ? r->model : "",
                          vary_model ? " " : "", r->mode, r->backend, r->nprocs, r->batch);
        if (vary_bucket && r->bucket_mb > 0 && at > 0 && (size_t)at < sizeof text[n]) /* ddp only */
            at += snprintf(text[n] + at, sizeof text[n] - (size_t)at, ", %gMB %s", r->bucket_mb, r->compress);
        if (vary_host && at > 0 && (size_t)at < sizeof text[n])
            snprintf(text[n] + at, sizeof text[n] - (size_t)at, ", %s", r->host);
        labels[n] = text[n];
        value[n] = r->compute_ms;
        stack[n++] = r->comm_exposed_ms;
    }
    char title[160];
    snprintf(title, sizeof title, "%s%straining step: compute + exposed comm.",
             vary_model ? "" : d->train[0].model, vary_model ? "" : ": ");
    hbars_arg a = {title, labels, value, stack, n};
    job j = {K_TRAINING, c, NULL, &a};
    render(outdir, "training_breakdown", REPORT_PLOT_WIDTH, plot_hbars_height(n), &j, out,
           "Training step time split into compute and exposed (not overlapped) communication, "
           "one row per configuration");
done:
    free(text);
    free(labels);
    free(value);
    free(stack);
}

int report_plots_draw(const report_data *d, const report_view *v, const char *outdir,
                      report_plots *out, FILE *log)
{
    out->n = 0;
    out->rc = 0;
    if (!plot_available(log)) return COLL_EUNAVAIL;
    plot_ctx c;
    memset(&c, 0, sizeof c);
    c.d = d;
    c.v = v;
    collect_keys(&c);

    /* Per collective its two plots; the first collective's carry the plain names. */
    const char *primary = NULL, *first[2] = {NULL, NULL};
    for (size_t i = 0; i < v->ncollectives; i++) {
        for (int bw = 0; bw < 2; bw++) {
            c.collective = v->collectives[i];
            if (!has_sized(&c, bw)) continue;
            if (!primary) primary = c.collective;
            if (!first[bw]) first[bw] = c.collective;
            char stem[96], caption[200];
            const char *base = bw ? "busbw_vs_size" : "time_vs_size";
            if (c.collective == first[bw]) snprintf(stem, sizeof stem, "%s", base);
            else snprintf(stem, sizeof stem, "%s_%s", base, c.collective);
            snprintf(caption, sizeof caption, "%s: %s vs message size (log-log), one line per backend "
                     "x process count%s; whiskers: p25-p75 (min-p99 for files without p25/p75)",
                     c.collective, bw ? "bus bandwidth" : "median time per call",
                     v->many_hosts ? " x machine" : "");
            job j = {K_SIZE, &c, NULL, NULL};
            c.bandwidth = bw;
            render(outdir, stem, REPORT_PLOT_WIDTH, REPORT_PLOT_HEIGHT, &j, out, caption);
        }
    }
    comparison_plot(&c, outdir, out);
    if (primary) {
        c.collective = primary;
        c.small = UINT64_MAX;
        c.large = 0;
        for (size_t i = 0; i < v->n; i++) {
            const report_series *s = &v->s[i];
            if (strcmp(s->collective, primary)) continue;
            for (size_t k = 0; k < s->n; k++) {
                uint64_t b = s->pts[k]->bytes;
                if (b > 0 && b < c.small) c.small = b;
                if (b > c.large) c.large = b;
            }
        }
        uint64_t cmp = report_comparison_bytes(v);
        for (size_t i = 0; i < v->n; i++)
            if (!strcmp(v->s[i].collective, primary) && report_series_at(&v->s[i], cmp)) c.large = cmp;
        char caption[200];
        snprintf(caption, sizeof caption, "%s: median time per call vs process count at the smallest "
                 "and a large message size, one line per backend%s; whiskers: p25-p75 (min-p99 for "
                 "files without p25/p75)", primary,
                 v->many_hosts || v->many_buffers || v->many_devices ? " x machine, device and buffer kind" : "");
        job j = {K_SCALING, &c, NULL, NULL};
        render(outdir, "scaling_vs_procs", REPORT_PLOT_WIDTH, REPORT_PLOT_HEIGHT, &j, out, caption);
    }
    training_plot(&c, outdir, out);
    return out->rc;
}

#endif
