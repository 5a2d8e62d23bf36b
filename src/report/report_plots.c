/* Which plots the report draws, from the view: time and bus bandwidth vs size
 * per collective, the backend comparison at 100 MiB, time vs process count,
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

#include "report/report_text.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct names {
    const char *s[16];
    size_t n;
} names;

typedef struct plot_ctx {
    const report_data *d;
    const report_view *v;
    names backends;
    int procs[16];
    size_t nprocs;
    /* what the current plot shows */
    const char *collective;
    int bandwidth;
    uint64_t small, large;
} plot_ctx;

static size_t backend_index(const plot_ctx *c, const char *b)
{
    for (size_t i = 0; i < c->backends.n; i++)
        if (strcmp(c->backends.s[i], b) == 0) return i;
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
        while (k < c->backends.n && strcmp(c->backends.s[k], s->backend)) k++;
        if (k == c->backends.n && k < 16) c->backends.s[c->backends.n++] = s->backend;
        k = 0;
        while (k < c->nprocs && c->procs[k] != s->nprocs) k++;
        if (k == c->nprocs && k < 16) c->procs[c->nprocs++] = s->nprocs;
    }
    qsort(c->backends.s, c->backends.n, sizeof c->backends.s[0], cmp_str);
    qsort(c->procs, c->nprocs, sizeof c->procs[0], cmp_int);
}

/* Lines of one collective: one per backend x process count. */
static size_t size_lines(const plot_ctx *c, plot_line *lines, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < c->v->n && n < cap; i++) {
        const report_series *s = &c->v->s[i];
        if (strcmp(s->collective, c->collective) != 0) continue;
        plot_line *l = &lines[n];
        memset(l, 0, sizeof *l);
        snprintf(l->label, sizeof l->label, "%s, %d procs", s->backend, s->nprocs);
        l->colour = plot_colour(backend_index(c, s->backend));
        l->marker = plot_marker(procs_index(c, s->nprocs));
        l->style = plot_line_style(procs_index(c, s->nprocs));
        for (size_t k = 0; k < s->n && l->n < 64; k++) {
            double y = c->bandwidth ? s->pts[k]->busbw_GBps : s->pts[k]->time_us_avg;
            if (s->pts[k]->bytes == 0 || !(y > 0)) continue;
            l->x[l->n] = (double)s->pts[k]->bytes;
            l->y[l->n++] = y;
        }
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
             c->bandwidth ? "bus bandwidth" : "time per call");
    plot_lines_panel(0.12, 0.76, 0.12, 0.91, title, "message size (bytes, log scale)", UNIT_BYTES,
                     c->bandwidth ? "bus bandwidth (GB/s, log scale)" : "time per call (log scale)",
                     c->bandwidth ? UNIT_GBPS : UNIT_TIME_US, lines, n, 1);
    free(lines);
}

/* One line per backend: time at `bytes` for each process count. */
static int has_point(const plot_ctx *c, const char *backend, uint64_t bytes)
{
    for (size_t p = 0; p < c->nprocs; p++) {
        const report_series *s = report_view_find(c->v, c->collective, backend, c->procs[p]);
        if (s && report_series_at(s, bytes)) return 1;
    }
    return 0;
}

/* Backends with a point at bytes or at also (so both panels list the same ones). */
static size_t procs_lines(const plot_ctx *c, uint64_t bytes, uint64_t also, plot_line *lines)
{
    size_t n = 0;
    for (size_t b = 0; b < c->backends.n; b++) {
        plot_line *l = &lines[n];
        memset(l, 0, sizeof *l);
        snprintf(l->label, sizeof l->label, "%s", c->backends.s[b]);
        l->colour = plot_colour(b);
        l->marker = plot_marker(b);
        l->style = 1;
        for (size_t p = 0; p < c->nprocs; p++) {
            const report_series *s = report_view_find(c->v, c->collective, c->backends.s[b], c->procs[p]);
            const bench_row *r = s ? report_series_at(s, bytes) : NULL;
            if (!r || !(r->time_us_avg > 0)) continue;
            l->x[l->n] = c->procs[p];
            l->y[l->n++] = r->time_us_avg;
        }
        if (l->n || has_point(c, c->backends.s[b], also)) n++;
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
    /* The legend (bottom, one row) once: both panels share backends and colours. */
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
    /* Only the backends with a bar, keeping each backend's colour of the other plots. */
    int colours[16];
    const char *names[16];
    size_t nb = 0;
    plot_bar_group *g = calloc(a->ng ? a->ng : 1, sizeof *g);
    if (!g) return;
    for (size_t b = 0; b < c->backends.n; b++) {
        int used = 0;
        for (size_t i = 0; i < a->ng; i++) used |= a->g[i].value[b] >= 0;
        if (!used) continue;
        for (size_t i = 0; i < a->ng; i++) {
            memcpy(g[i].label, a->g[i].label, sizeof g[i].label);
            g[i].value[nb] = a->g[i].value[b];
        }
        colours[nb] = plot_colour(b);
        names[nb++] = c->backends.s[b];
    }
    char title[128], sz[32];
    snprintf(title, sizeof title, "Backend comparison at %s", fmt_size(c->large, sz, sizeof sz));
    plot_bars(title, "bus bandwidth (GB/s, higher is better)", g, a->ng, names, nb, colours, 0, "%.3g");
    free(g);
}

static void draw_training(const bars_arg *a)
{
    static const char *const series[] = {"compute", "exposed comm."};
    const int colours[] = {plot_colour(0), plot_colour(1)};
    const report_data *d = a->c->d;
    int one_model = 1;
    for (size_t i = 1; i < d->ntrain; i++) one_model &= !strcmp(d->train[i].model, d->train[0].model);
    char title[160];
    snprintf(title, sizeof title, "%s%straining step: compute + exposed comm.",
             one_model ? d->train[0].model : "", one_model ? ": " : "");
    plot_bars(title, "time per step (ms)", a->g, a->ng, series, 2, colours, 1, "%.3g ms");
}

typedef enum plot_kind { K_SIZE, K_SCALING, K_COMPARISON, K_TRAINING } plot_kind;

typedef struct job {
    plot_kind kind;
    const plot_ctx *c;
    const bars_arg *bars;
} job;

static void render(const char *outdir, const char *stem, int w, const job *j, report_plots *out,
                   const char *caption)
{
    for (int f = 0; f < 2; f++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.%s", outdir, stem, f ? "svg" : "png");
        plot_page_begin(path, f ? PLOT_SVG : PLOT_PNG, w, REPORT_PLOT_HEIGHT);
        switch (j->kind) {
        case K_SIZE: draw_vs_size(j->c); break;
        case K_SCALING: draw_scaling(j->c); break;
        case K_COMPARISON: draw_comparison(j->bars); break;
        case K_TRAINING: draw_training(j->bars); break;
        }
        plot_page_end();
    }
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

static void comparison_plot(plot_ctx *c, const char *outdir, report_plots *out)
{
    uint64_t cmp = report_comparison_bytes(c->v);
    if (cmp == 0) return;
    plot_bar_group *g = calloc(c->v->n, sizeof *g);
    size_t ng = 0;
    if (!g) return;
    for (size_t i = 0; i < c->v->n; i++) {
        const report_series *s = &c->v->s[i];
        if (!report_series_at(s, cmp)) continue;
        plot_bar_group *last = ng ? &g[ng - 1] : NULL;
        char want[2][96];
        snprintf(want[0], sizeof want[0], "%s", s->collective);
        snprintf(want[1], sizeof want[1], "%d procs", s->nprocs);
        if (!last || strcmp(last->label[0], want[0]) || strcmp(last->label[1], want[1])) {
            /* Series are sorted by backend before process count: find the group. */
            last = NULL;
            for (size_t k = 0; k < ng; k++)
                if (!strcmp(g[k].label[0], want[0]) && !strcmp(g[k].label[1], want[1])) last = &g[k];
            if (!last) {
                last = &g[ng++];
                memcpy(last->label, want, sizeof want);
                for (int k = 0; k < 16; k++) last->value[k] = -1;
            }
        }
        last->value[backend_index(c, s->backend)] = report_series_at(s, cmp)->busbw_GBps;
    }
    /* Groups in (collective, process count) order. */
    for (size_t i = 1; i < ng; i++)
        for (size_t k = i; k > 0; k--) {
            int ra = report_collective_rank(g[k - 1].label[0]), rb = report_collective_rank(g[k].label[0]);
            int before = ra < rb || (ra == rb && strcmp(g[k - 1].label[0], g[k].label[0]) < 0) ||
                         (!strcmp(g[k - 1].label[0], g[k].label[0]) && atoi(g[k - 1].label[1]) <= atoi(g[k].label[1]));
            if (before) break;
            plot_bar_group t = g[k];
            g[k] = g[k - 1];
            g[k - 1] = t;
        }
    c->large = cmp;
    bars_arg a = {c, g, ng};
    job j = {K_COMPARISON, c, &a};
    char caption[200], sz[32];
    snprintf(caption, sizeof caption, "Bus bandwidth of every backend at %s, per collective and "
             "process count", fmt_size(cmp, sz, sizeof sz));
    if (ng) render(outdir, "backend_comparison_100MB", bars_width(ng * c->backends.n), &j, out, caption);
    free(g);
}

static void training_plot(const plot_ctx *c, const char *outdir, report_plots *out)
{
    const report_data *d = c->d;
    if (d->ntrain == 0) return;
    plot_bar_group *g = calloc(d->ntrain, sizeof *g);
    size_t ng = 0;
    if (!g) return;
    int vary_bucket = 0, vary_model = 0;
    for (size_t i = 1; i < d->ntrain; i++) {
        vary_bucket |= d->train[i].bucket_mb != d->train[0].bucket_mb ||
                       strcmp(d->train[i].compress, d->train[0].compress) != 0;
        vary_model |= strcmp(d->train[i].model, d->train[0].model) != 0;
    }
    for (size_t i = 0; i < d->ntrain && ng < 40; i++) {
        const report_train_row *r = &d->train[i];
        if (i > 0) { /* newest row of a configuration only, as in the summary table */
            const report_train_row *p = &d->train[i - 1];
            if (!strcmp(p->model, r->model) && !strcmp(p->mode, r->mode) && !strcmp(p->backend, r->backend) &&
                p->nprocs == r->nprocs && p->batch == r->batch && p->bucket_mb == r->bucket_mb &&
                !strcmp(p->compress, r->compress))
                continue;
        }
        plot_bar_group *b = &g[ng++];
        /* Short lines under each bar: the mode, then what else varies. */
        if (vary_model)
            snprintf(b->label[0], sizeof b->label[0], "%s %s", r->model, r->mode);
        else
            snprintf(b->label[0], sizeof b->label[0], "%s", r->mode);
        if (vary_bucket && r->bucket_mb > 0) /* buckets mean something in ddp only */
            snprintf(b->label[1], sizeof b->label[1], "%s x%d %gMB%s%s", r->backend, r->nprocs,
                     r->bucket_mb, strcmp(r->compress, "none") ? " " : "",
                     strcmp(r->compress, "none") ? r->compress : "");
        else
            snprintf(b->label[1], sizeof b->label[1], "%s x%d", r->backend, r->nprocs);
        b->value[0] = r->compute_ms;
        b->stack[0] = r->comm_exposed_ms;
    }
    bars_arg a = {c, g, ng};
    job j = {K_TRAINING, c, &a};
    render(outdir, "training_breakdown", bars_width(ng * 6), &j, out,
           "Training step time split into compute and exposed (not overlapped) communication");
    free(g);
}

int report_plots_draw(const report_data *d, const report_view *v, const char *outdir,
                      report_plots *out, FILE *log)
{
    out->n = 0;
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
                     "x process count", c.collective, bw ? "bus bandwidth" : "time per call");
            job j = {K_SIZE, &c, NULL};
            c.bandwidth = bw;
            render(outdir, stem, REPORT_PLOT_WIDTH, &j, out, caption);
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
        snprintf(caption, sizeof caption, "%s: time per call vs process count at the smallest and a "
                 "large message size, one line per backend", primary);
        job j = {K_SCALING, &c, NULL};
        render(outdir, "scaling_vs_procs", REPORT_PLOT_WIDTH, &j, out, caption);
    }
    training_plot(&c, outdir, out);
    return 0;
}

#endif
