/* Which plots the report draws, from the view: time and bus bandwidth vs size
 * per collective, the backend comparison at one size, time vs process count,
 * and the training step's compute/communication split. Each as PNG and SVG. */
#include "report/report_plot.h"

#include "coll.h"

#ifndef COLL_HAVE_PLPLOT

int report_plots_draw(const report_data *d, const report_view *v, const model_fits *fits,
                      const char *outdir, report_plots *out, FILE *log)
{
    (void)d, (void)v, (void)fits, (void)outdir;
    out->n = 0;
    report_plot_available(log);
    return COLL_EUNAVAIL;
}

#else

#include "report/report_grid.h"
#include "report/report_model.h"
#include "report/report_spread.h"
#include "report/report_text.h"

#include "core/atomic_file.h"
#include "rows/train_exposed.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What the plots are drawn from: the view, its backends (sorted: the key) and
 * process counts, and what the current plot shows. */
typedef struct plot_ctx {
    const report_data *d;
    const report_view *v;
    const model_fits *fits; /* the cost model's, for the time panels' dashed curves */
    const char *backends[16];
    size_t nbackends;
    int procs[16];
    size_t nprocs;
    /* what the current plot shows */
    const char *collective;
    int bandwidth;
    uint64_t small, large;
} plot_ctx;

/* A line's identity beyond collective and process count: machine, device,
 * buffer kind, node count and backend. */
static int same_ident(const report_series *a, const report_series *b)
{
    return !strcmp(a->host, b->host) && !strcmp(a->device, b->device) &&
           !strcmp(a->buffers, b->buffers) && a->nnodes == b->nnodes &&
           !strcmp(a->backend, b->backend);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}
static int cmp_int(const void *a, const void *b)
{
    return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

static void collect_keys(plot_ctx *c)
{
    for (size_t i = 0; i < c->v->n; i++) {
        const report_series *s = &c->v->s[i];
        size_t k = 0;
        while (k < c->nbackends && strcmp(c->backends[k], s->backend)) k++;
        if (k == c->nbackends && k < 16) c->backends[c->nbackends++] = s->backend;
        k = 0;
        while (k < c->nprocs && c->procs[k] != s->nprocs) k++;
        if (k == c->nprocs && k < 16) c->procs[c->nprocs++] = s->nprocs;
    }
    qsort(c->backends, c->nbackends, sizeof c->backends[0], cmp_str);
    qsort(c->procs, c->nprocs, sizeof c->procs[0], cmp_int);
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

/* The line of series s: its backend's colour, its buffer kind's marker. */
static int series_line(const report_series *s, int bandwidth, plot_line *l)
{
    memset(l, 0, sizeof *l);
    snprintf(l->label, sizeof l->label, "%.40s, %.40s buffers", s->backend, s->buffers);
    l->colour = report_plot_backend_colour(s->backend);
    l->marker = report_plot_buffers_marker(s->buffers);
    l->style = 1;
    for (size_t k = 0; k < s->n; k++)
        if (s->pts[k]->bytes > 0) add_point(l, (double)s->pts[k]->bytes, s->pts[k], bandwidth);
    return l->n > 0;
}

/* Pixels of a small-multiples page (report_grid.h): panels in rows and
 * columns, the key right of them, the title above and the x label below; a
 * row's title (its machine) on a line of its own above the panels' titles. */
enum {
    GRID_LEFT = 110,
    GRID_GAP = 24,
    GRID_PANEL_W = 330,
    GRID_PANEL_H = 230,
    GRID_ROW_TOP = 30,
    GRID_ROW_TITLE = 24,
    GRID_ROW_BOTTOM = 36,
    GRID_TOP = 50,
    GRID_BOTTOM = 46,
    GRID_KEY = 200,
    GRID_KEY_GAP = 24
};

typedef struct grid_geom {
    int w, h;    /* the page */
    int pw, ph;  /* a panel */
    int row_top; /* above a panel: its title, and the row's title when there is one */
} grid_geom;

static void grid_page(const report_grid *g, grid_geom *q)
{
    int cols = g->ncols > 0 ? g->ncols : 1, rows = g->nrows > 0 ? g->nrows : 1;
    int fixed_w = GRID_LEFT + (cols - 1) * GRID_GAP + GRID_KEY_GAP + GRID_KEY;
    q->row_top = GRID_ROW_TOP + (g->n && g->p[0].row_title[0] ? GRID_ROW_TITLE : 0);
    q->pw = GRID_PANEL_W;
    if (fixed_w + cols * q->pw < REPORT_PLOT_WIDTH) q->pw = (REPORT_PLOT_WIDTH - fixed_w) / cols;
    q->w = fixed_w + cols * q->pw;
    int fixed_h = GRID_TOP + GRID_BOTTOM + rows * (q->row_top + GRID_ROW_BOTTOM);
    q->ph = GRID_PANEL_H;
    if (fixed_h + rows * q->ph < REPORT_PLOT_HEIGHT) q->ph = (REPORT_PLOT_HEIGHT - fixed_h) / rows;
    q->h = fixed_h + rows * q->ph;
}

/* Lines a panel can hold: its series, and one extra dashed series (a model
 * curve, style PLOT_DASHED, marker NULL) that the key then lists once. */
#define PANEL_LINES (REPORT_GRID_MAX_LINES + 1)

/* Time (or bus bandwidth) vs size of one collective as small multiples: every
 * panel shares both axes, so panels compare at a glance. */
static void draw_vs_size(const plot_ctx *c)
{
    report_grid g;
    if (report_grid_build(c->v, c->collective, &g) != 0 || g.n == 0) return;
    plot_line *lines = calloc(g.n * PANEL_LINES, sizeof *lines);
    size_t *nl = calloc(g.n, sizeof *nl);
    const model_fits *fits = c->bandwidth ? NULL : c->fits;
    int dashed = 0;
    if (!lines || !nl) goto done;
    plot_range r;
    report_plot_range_empty(&r);
    for (size_t i = 0; i < g.n; i++) {
        plot_line *pl = &lines[i * PANEL_LINES];
        for (size_t k = 0; k < g.p[i].n; k++)
            nl[i] += series_line(g.p[i].s[k], c->bandwidth, &pl[nl[i]]);
        /* the spare slot: the first series of the panel the model can draw */
        for (size_t k = 0; k < g.p[i].n && fits && fits->n; k++)
            if (report_model_curve(fits, g.p[i].s[k], &pl[nl[i]])) {
                nl[i]++, dashed = 1;
                break;
            }
        report_plot_range_add(&r, pl, nl[i], UNIT_BYTES);
    }
    report_plot_range_pad(&r, UNIT_BYTES);
    grid_geom q;
    grid_page(&g, &q);
    double w = q.w, h = q.h,
           text = 0.82 * report_plot_text_scale(q.w, q.h); /* panels are smaller than a page */
    for (size_t i = 0; i < g.n; i++) {
        const grid_panel *p = &g.p[i];
        double x0 = GRID_LEFT + p->col * (q.pw + GRID_GAP);
        double top = GRID_TOP + p->row * (q.row_top + q.ph + GRID_ROW_BOTTOM), y0 = top + q.row_top;
        if (p->col == 0 && p->row_title[0])
            report_plot_page_text(GRID_LEFT / w, 1.0 - (top + GRID_ROW_TITLE * 0.6) / h, 1.0 * text,
                                  0.0, p->row_title);
        report_plot_panel(x0 / w, (x0 + q.pw) / w, 1.0 - (y0 + q.ph) / h, 1.0 - y0 / h, &r,
                          p->title, NULL, UNIT_BYTES,
                          p->col == 0 ? (c->bandwidth ? "bus bandwidth (GB/s)" : "time per call")
                                      : NULL,
                          c->bandwidth ? UNIT_GBPS : UNIT_TIME_US, p->col == 0,
                          &lines[i * PANEL_LINES], nl[i], text);
    }
    /* The title and the shared x label on the page, the key right of the panels. */
    char title[128];
    snprintf(title, sizeof title, "%s: %s vs message size", c->collective,
             c->bandwidth ? "bus bandwidth" : "time per call (median)");
    report_plot_page_text(0.5, 1.0 - (GRID_TOP * 0.55) / h, 1.15 * text, 0.5, title);
    report_plot_page_text(0.5, (GRID_BOTTOM * 0.4) / h, 0.95 * text, 0.5,
                          "message size (bytes); log scales, the same axes in every panel");
    report_plot_key((w - GRID_KEY) / w, 1.0 - 10.0 / w, 0.1, 1.0 - (GRID_TOP + q.row_top) / h,
                    g.backends, g.nbackends, g.buffers, g.nbuffers, dashed, text);
done:
    free(lines);
    free(nl);
    report_grid_free(&g);
}

/* The series of the current collective with identity like and nprocs. */
static const report_series *find_series(const plot_ctx *c, const report_series *like, int nprocs)
{
    for (size_t i = 0; i < c->v->n; i++) {
        const report_series *s = &c->v->s[i];
        if (s->nprocs == nprocs && !strcmp(s->collective, c->collective) && same_ident(s, like))
            return s;
    }
    return NULL;
}

/* A row of the scaling figure: one row of the small multiples (a machine,
 * and a buffer kind where they split), its identities (backend x buffer kind). */
typedef struct scaling_row {
    const report_series *ident[REPORT_GRID_MAX_LINES];
    size_t n;
    const char *title;
} scaling_row;

static size_t scaling_rows(const report_grid *g, scaling_row *rows, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < g->n; i++) {
        const grid_panel *p = &g->p[i];
        for (size_t k = 0; k < p->n; k++) {
            const report_series *s = p->s[k];
            scaling_row *r = NULL;
            int known = 0;
            for (size_t j = 0; j < n && !known; j++) {
                if (strcmp(rows[j].title, p->row_title) ||
                    strcmp(rows[j].ident[0]->host, s->host) ||
                    strcmp(rows[j].ident[0]->device, s->device) ||
                    rows[j].ident[0]->nnodes != s->nnodes)
                    continue;
                for (size_t m = 0; m < rows[j].n; m++) known |= same_ident(rows[j].ident[m], s);
                if (rows[j].n < REPORT_GRID_MAX_LINES) r = &rows[j];
            }
            if (known) continue;
            if (!r) {
                if (n == cap) return n;
                r = &rows[n++];
                r->n = 0;
                r->title = p->row_title;
            }
            r->ident[r->n++] = s;
        }
    }
    return n;
}

/* The line of identity id: its time at bytes for each process count. */
static void procs_line(const plot_ctx *c, const report_series *id, uint64_t bytes, plot_line *l)
{
    memset(l, 0, sizeof *l);
    snprintf(l->label, sizeof l->label, "%.40s, %.40s buffers", id->backend, id->buffers);
    l->colour = report_plot_backend_colour(id->backend);
    l->marker = report_plot_buffers_marker(id->buffers);
    l->style = 1;
    for (size_t p = 0; p < c->nprocs; p++) {
        const bench_row *r = report_series_at(find_series(c, id, c->procs[p]), bytes);
        if (r) add_point(l, c->procs[p], r, 0);
    }
}

#define SCALING_MAX_ROWS 32

/* Time vs process count at the smallest and a large size: the rows of the
 * small multiples, a column per size, the same key. */
static void draw_scaling(const plot_ctx *c)
{
    report_grid g;
    scaling_row *rows = calloc(SCALING_MAX_ROWS, sizeof *rows);
    plot_line *lines = calloc(SCALING_MAX_ROWS * 2 * REPORT_GRID_MAX_LINES, sizeof *lines);
    if (!rows || !lines || report_grid_build(c->v, c->collective, &g) != 0) {
        free(rows);
        free(lines);
        return;
    }
    size_t nr = scaling_rows(&g, rows, SCALING_MAX_ROWS);
    const uint64_t sizes[2] = {c->small, c->large};
    plot_range r;
    report_plot_range_empty(&r);
    for (size_t i = 0; i < nr; i++)
        for (int col = 0; col < 2; col++) {
            plot_line *pl = &lines[(i * 2 + (size_t)col) * REPORT_GRID_MAX_LINES];
            for (size_t k = 0; k < rows[i].n; k++)
                procs_line(c, rows[i].ident[k], sizes[col], &pl[k]);
            report_plot_range_add(&r, pl, rows[i].n, UNIT_COUNT);
        }
    report_plot_range_pad(&r, UNIT_COUNT);
    report_grid shape = g;
    shape.ncols = 2;
    shape.nrows = (int)nr;
    grid_geom q;
    grid_page(&shape, &q);
    double w = q.w, h = q.h, text = 0.82 * report_plot_text_scale(q.w, q.h);
    for (size_t i = 0; i < nr; i++)
        for (int col = 0; col < 2; col++) {
            double x0 = GRID_LEFT + col * (q.pw + GRID_GAP);
            double top = GRID_TOP + (double)i * (q.row_top + q.ph + GRID_ROW_BOTTOM),
                   y0 = top + q.row_top;
            char t[32];
            if (col == 0 && rows[i].title[0])
                report_plot_page_text(GRID_LEFT / w, 1.0 - (top + GRID_ROW_TITLE * 0.6) / h, text,
                                      0.0, rows[i].title);
            report_plot_panel(x0 / w, (x0 + q.pw) / w, 1.0 - (y0 + q.ph) / h, 1.0 - y0 / h, &r,
                              report_fmt_size(sizes[col], t, sizeof t), NULL, UNIT_COUNT,
                              col == 0 ? "time per call" : NULL, UNIT_TIME_US, col == 0,
                              &lines[(i * 2 + (size_t)col) * REPORT_GRID_MAX_LINES], rows[i].n,
                              text);
        }
    char title[128];
    snprintf(title, sizeof title, "%s: time per call (median) vs process count", c->collective);
    report_plot_page_text(0.5, 1.0 - (GRID_TOP * 0.55) / h, 1.15 * text, 0.5, title);
    report_plot_page_text(0.5, (GRID_BOTTOM * 0.4) / h, 0.95 * text, 0.5,
                          "processes; log time scale, the same axes in every panel");
    report_plot_key((w - GRID_KEY) / w, 1.0 - 10.0 / w, 0.1, 1.0 - (GRID_TOP + q.row_top) / h,
                    g.backends, g.nbackends, g.buffers, g.nbuffers, 0, text);
    report_grid_free(&g);
    free(rows);
    free(lines);
}

/* The scaling figure's page size; 0 when out of memory. */
static int scaling_page(const plot_ctx *c, int *w, int *h)
{
    report_grid g;
    scaling_row *rows = calloc(SCALING_MAX_ROWS, sizeof *rows);
    if (!rows || report_grid_build(c->v, c->collective, &g) != 0) {
        free(rows);
        return 0;
    }
    g.nrows = (int)scaling_rows(&g, rows, SCALING_MAX_ROWS);
    g.ncols = 2;
    grid_geom q;
    grid_page(&g, &q);
    *w = q.w;
    *h = q.h;
    report_grid_free(&g);
    free(rows);
    return 1;
}

typedef struct bars_arg {
    const char *title, *xlabel, *fmt;
    const plot_hbar_row *rows;
    size_t n;
    const char *const *series;
    const int *colours;
    size_t nseries;
} bars_arg;

static void draw_bars(const bars_arg *a)
{
    report_plot_hbars(a->title, a->xlabel, a->rows, a->n, a->series, a->colours, a->nseries,
                      a->fmt);
}

typedef enum plot_kind { K_SIZE, K_SCALING, K_BARS } plot_kind;

typedef struct job {
    plot_kind kind;
    const plot_ctx *c;
    const bars_arg *bars;
} job;

/* One page of j into memory, then to path atomically; 0 or out->rc set. */
static int render_file(const char *path, plot_format fmt, int w, int h, const job *j,
                       report_plots *out)
{
    char *data = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&data, &len);
    if (!mem) {
        snprintf(out->err, sizeof out->err, "%s: cannot draw the plot: %s", path, strerror(errno));
        return out->rc = COLL_ENOMEM;
    }
    report_plot_page_begin(mem, fmt, w, h);
    switch (j->kind) {
    case K_SIZE: draw_vs_size(j->c); break;
    case K_SCALING: draw_scaling(j->c); break;
    case K_BARS: draw_bars(j->bars); break;
    }
    report_plot_page_end(); /* closes mem: data and len are final */
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
    plot_line l;
    c->bandwidth = bandwidth;
    for (size_t i = 0; i < c->v->n; i++)
        if (!strcmp(c->v->s[i].collective, c->collective) &&
            series_line(&c->v->s[i], bandwidth, &l))
            return 1;
    return 0;
}

/* The page size of collective's small multiples; 0 when out of memory. */
static int size_page(const plot_ctx *c, int *w, int *h)
{
    report_grid g;
    grid_geom q;
    if (report_grid_build(c->v, c->collective, &g) != 0) return 0;
    grid_page(&g, &q);
    *w = q.w;
    *h = q.h;
    report_grid_free(&g);
    return 1;
}

/* The comparison plot's file name says its size: backend_comparison_100MiB. */
static void comparison_stem(uint64_t bytes, char *stem, size_t len)
{
    char sz[32], compact[32];
    size_t k = 0;
    report_fmt_size(bytes, sz, sizeof sz);
    for (const char *p = sz; *p && k + 1 < sizeof compact; p++)
        if (*p != ' ') compact[k++] = *p;
    compact[k] = '\0';
    snprintf(stem, len, "backend_comparison_%s", compact);
}

/* Bars per comparison group (collective, machine, device, buffer kind, node
 * and process count), a heading over one bar per backend: only bars of one
 * group compare. Rows, not columns, so no two labels ever share a line. */
static void comparison_plot(plot_ctx *c, const char *outdir, report_plots *out)
{
    uint64_t cmp = report_comparison_bytes(c->v);
    if (cmp == 0) return;
    const report_view *v = c->v;
    plot_hbar_row *rows = calloc(2 * v->n, sizeof *rows);
    char(*heads)[224] = calloc(v->n, sizeof *heads);
    size_t n = 0, nh = 0;
    if (!rows || !heads) goto done;
    for (size_t i = 0; i < v->n; i++) {
        const report_series *g = &v->s[i];
        int seen = 0, members = 0;
        for (size_t j = 0; j < i; j++) seen |= report_series_same_group(&v->s[j], g);
        for (size_t j = 0; j < v->n; j++)
            members += report_series_same_group(&v->s[j], g) && report_series_at(&v->s[j], cmp);
        if (seen || members < 2) continue; /* a group of one backend compares nothing */
        char where[160];
        report_series_where(v, g, where, sizeof where);
        snprintf(heads[nh], sizeof heads[nh], "%s, %d %s%s", g->collective, g->nprocs,
                 g->nprocs == 1 ? "process" : "processes", where);
        rows[n++] = (plot_hbar_row){heads[nh++], -1, 0, 0, 0, 1, 1};
        for (size_t j = 0; j < v->n; j++) {
            const report_series *s = &v->s[j];
            const bench_row *r = report_series_at(s, cmp);
            if (!report_series_same_group(s, g) || !r) continue;
            plot_line one = {0};
            add_point(&one, 0, r, 1);
            rows[n++] = (plot_hbar_row){s->backend, r->busbw_GBps,
                                        0,          one.lo[0],
                                        one.hi[0],  report_plot_backend_colour(s->backend),
                                        0};
        }
    }
    if (nh == 0) goto done;
    int colours[16];
    for (size_t b = 0; b < c->nbackends; b++)
        colours[b] = report_plot_backend_colour(c->backends[b]);
    char title[128], caption[300], sz[32], stem[96];
    report_fmt_size(cmp, sz, sizeof sz);
    snprintf(title, sizeof title, "Backend comparison at %s", sz);
    bars_arg a = {title,   "bus bandwidth (GB/s, higher is better; whiskers: the time's spread)",
                  "%.3g",  rows,
                  n,       c->backends,
                  colours, c->nbackends};
    job j = {K_BARS, c, &a};
    comparison_stem(cmp, stem, sizeof stem);
    snprintf(caption, sizeof caption,
             "Bus bandwidth of every backend at %s, a group per collective "
             "and process count%s (whiskers: the time's p25-p75, or min-p99): compare bars within "
             "a group",
             sz,
             v->many_hosts || v->many_buffers || v->many_devices
                 ? ", machine, device and buffer kind"
                 : "");
    render(outdir, stem, REPORT_PLOT_WIDTH, report_plot_hbars_height(n, c->nbackends), &j, out,
           caption);
done:
    free(rows);
    free(heads);
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
    char(*text)[128] = calloc(d->ntrain, sizeof *text);
    plot_hbar_row *rows = calloc(d->ntrain, sizeof *rows);
    if (!text || !rows) goto done;
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
        int at = snprintf(text[n], sizeof text[n], "%s%s%s %s x%d, batch %d",
                          vary_model ? r->model : "", vary_model ? " " : "", r->mode, r->backend,
                          r->nprocs, r->batch);
        if (vary_bucket && r->bucket_mb > 0 && at > 0 && (size_t)at < sizeof text[n]) /* ddp only */
            at += snprintf(text[n] + at, sizeof text[n] - (size_t)at, ", %gMB %s", r->bucket_mb,
                           r->compress);
        if (vary_host && at > 0 && (size_t)at < sizeof text[n])
            snprintf(text[n] + at, sizeof text[n] - (size_t)at, ", %s", r->host);
        train_exposed e;
        train_exposed_of(r, &e); /* never below zero: train_exposed.h */
        rows[n] = (plot_hbar_row){text[n],
                                  r->compute_ms > 0 ? r->compute_ms : 0,
                                  e.ms,
                                  0,
                                  0,
                                  PLOT_COMPUTE_COLOUR,
                                  PLOT_EXPOSED_COLOUR};
        n++;
    }
    char title[160];
    snprintf(title, sizeof title, "%s%straining step: compute + exposed comm.",
             vary_model ? "" : d->train[0].model, vary_model ? "" : ": ");
    static const char *const series[] = {"compute", "exposed comm."};
    static const int colours[] = {PLOT_COMPUTE_COLOUR, PLOT_EXPOSED_COLOUR};
    bars_arg a = {title, "time per step (ms)", "%.3g ms", rows, n, series, colours, 2};
    job j = {K_BARS, c, &a};
    render(outdir, "training_breakdown", REPORT_PLOT_WIDTH, report_plot_hbars_height(n, 2), &j, out,
           "Training step time split into compute and exposed (not overlapped) communication, "
           "one row per configuration");
done:
    free(text);
    free(rows);
}

int report_plots_draw(const report_data *d, const report_view *v, const model_fits *fits,
                      const char *outdir, report_plots *out, FILE *log)
{
    out->n = 0;
    out->rc = 0;
    if (!report_plot_available(log)) return COLL_EUNAVAIL;
    plot_ctx c;
    memset(&c, 0, sizeof c);
    c.d = d;
    c.v = v;
    c.fits = fits;
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
            snprintf(caption, sizeof caption,
                     "%s: %s vs message size (log-log), a panel per %s"
                     "process count; colour: backend, marker: buffer kind; whiskers: p25-p75 "
                     "(min-p99 for files without p25/p75)",
                     c.collective, bw ? "bus bandwidth" : "median time per call",
                     v->many_hosts || v->many_devices ? "machine and " : "");
            job j = {K_SIZE, &c, NULL};
            c.bandwidth = bw;
            int w, h;
            if (!size_page(&c, &w, &h)) {
                snprintf(out->err, sizeof out->err, "%s/%s.png: out of memory", outdir, stem);
                return out->rc = COLL_ENOMEM;
            }
            render(outdir, stem, w, h, &j, out, caption);
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
            if (!strcmp(v->s[i].collective, primary) && report_series_at(&v->s[i], cmp))
                c.large = cmp;
        char caption[200];
        snprintf(caption, sizeof caption,
                 "%s: median time per call vs process count at the smallest "
                 "and a large message size, one line per backend%s; whiskers: p25-p75 (min-p99 for "
                 "files without p25/p75)",
                 primary,
                 v->many_hosts || v->many_buffers || v->many_devices
                     ? " x machine, device and buffer kind"
                     : "");
        job j = {K_SCALING, &c, NULL};
        int w, h;
        if (!scaling_page(&c, &w, &h)) {
            snprintf(out->err, sizeof out->err, "%s/scaling_vs_procs.png: out of memory", outdir);
            return out->rc = COLL_ENOMEM;
        }
        render(outdir, "scaling_vs_procs", w, h, &j, out, caption);
    }
    training_plot(&c, outdir, out);
    return out->rc;
}

#endif
