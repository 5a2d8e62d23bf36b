/* The cost model's fits and predictions in the report (report_model.h). */
#include "report/report_model.h"

#include "costmodel/model_predict.h"
#include "costmodel/model_xval.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The link latency the "what if" table assumes (a switched data-centre link). */
#define WHATIF_LATENCY_US 5.0

size_t report_model_cores(const report_data *d, model_host_cores *out)
{
    size_t n = 0;
    for (size_t i = 0; i < d->nmachines; i++)
        if (d->machines[i].cores > 0)
            out[n++] = (model_host_cores){d->machines[i].host, d->machines[i].cores};
    return n;
}

const model_series *report_model_of(const model_fits *f, const report_series *s)
{
    if (!f || s->n == 0) return NULL;
    const bench_row *r = s->pts[0];
    for (size_t i = 0; i < f->n; i++) {
        const model_series *m = &f->s[i];
        if (!strcmp(m->host, r->host) && !strcmp(m->backend, r->backend) &&
            !strcmp(m->buffers, r->buffers) && !strcmp(m->collective, r->collective) &&
            !strcmp(m->algo, r->algo) && !strcmp(m->dtype, r->dtype))
            return m;
    }
    return NULL;
}

int report_model_curve(const model_fits *f, const report_series *s, plot_line *l)
{
    const model_series *m = report_model_of(f, s);
    memset(l, 0, sizeof *l);
    if (!m || !model_xval_trusted(m) || s->nnodes < 1) return 0;
    snprintf(l->label, sizeof l->label, "model prediction: %.30s", s->backend);
    l->colour = report_plot_backend_colour(s->backend);
    l->style = PLOT_DASHED;
    l->marker = NULL;
    for (size_t k = 0; k < s->n && l->n < sizeof l->x / sizeof l->x[0]; k++) {
        double bytes = (double)s->pts[k]->bytes;
        double us = model_series_time_us(m, s->nnodes, s->nprocs / s->nnodes, bytes, NULL);
        if (bytes <= 0 || !isfinite(us) || us <= 0) continue;
        l->x[l->n] = bytes;
        l->y[l->n++] = us;
    }
    return l->n > 1;
}

/* "allreduce ring, tcp, malloc buffers, float32, on cpubox" */
static void series_name(const model_series *m, sbuf *out)
{
    char t[256];
    snprintf(t, sizeof t, "%s %s, %s, %s buffers, %s, on %s", m->collective, m->algo, m->backend,
             m->buffers, m->dtype, m->host[0] ? m->host : "(host not recorded)");
    report_sb_html_escaped(out, t);
}

static void fit_line(const model_series *m, sbuf *out)
{
    report_sb_puts(out, "<li class=\"fit\">");
    series_name(m, out);
    if (!m->ok) {
        report_sb_puts(out, ": cannot fit a model: ");
        report_sb_html_escaped(out, m->why);
        report_sb_puts(out, "</li>\n");
        return;
    }
    const model_xval *x = &m->xval;
    char why[160];
    model_xval_why_not(m, why, sizeof why);
    if (why[0]) report_sb_puts(out, ": <b>model not shown</b>: "), report_sb_html_escaped(out, why);
    else
        report_sb_printf(
            out,
            ": model shown: held-out error median %.1f%% over %zu rows (worst count: fit "
            "%s, %.1f%%)",
            100 * x->med_err, x->n, x->folds[x->worst].fit, 100 * x->folds[x->worst].med_err);
    report_sb_printf(out,
                     ". Fitted to %zu rows: in-sample |model - measured| / measured median %.1f%%, "
                     "worst %.1f%%",
                     m->npts, 100 * m->med_abs_res, 100 * m->max_abs_res);
    if (m->cores)
        report_sb_printf(out, " (%d cores recorded: ranks beyond them share them)", m->cores);
    report_sb_puts(out, ";");
    const char *sep = "";
    for (int p = 0; p < MODEL_NPARAM; p++) {
        if (m->state[p] != MODEL_P_FITTED && m->state[p] != MODEL_P_ZERO) continue;
        int per_byte = p == MODEL_BETA_INTRA || p == MODEL_GAMMA || p == MODEL_BETA_INTER ||
                       p == MODEL_BETA_MEM;
        report_sb_printf(out, "%s %s = %.3g &plusmn; %.2g %s", sep,
                         model_param_name((model_param)p), m->theta[p], m->se[p],
                         per_byte ? "us/B" : "us");
        sep = ",";
    }
    report_sb_puts(out, "</li>\n");
}

/* The largest size among s's rows: the size the "what if" table predicts. */
static double largest_bytes(const model_series *m)
{
    double b = 0;
    for (size_t i = 0; i < m->npts; i++) b = fmax(b, m->pts[i].bytes);
    return b;
}

/* Why model_whatif left cell (r, l) empty, from model_predict for that cluster. */
static void cannot_predict(const model_series *m, int r, int l, double bytes, sbuf *out)
{
    model_cluster c = {.hosts = MODEL_WHATIF_RANKS[r] / MODEL_WHATIF_PER_HOST,
                       .per_host = MODEL_WHATIF_PER_HOST,
                       .link_Bps = MODEL_WHATIF_GBITS[l] * 1e9 / 8,
                       .latency_us = WHATIF_LATENCY_US};
    model_prediction p;
    char why[256] = "";
    model_predict(m, &c, bytes, &p, why, sizeof why);
    report_sb_puts(out, "<td>cannot predict");
    if (why[0]) report_sb_puts(out, ": "), report_sb_html_escaped(out, why);
    report_sb_puts(out, "</td>");
}

static void whatif_rows(const model_series *m, sbuf *out)
{
    model_prediction cells[MODEL_WHATIF_NRANKS][MODEL_WHATIF_NLINKS];
    double bytes = largest_bytes(m);
    char size[32], t[32];
    model_whatif(m, bytes, WHATIF_LATENCY_US, cells);
    for (int r = 0; r < MODEL_WHATIF_NRANKS; r++) {
        report_sb_puts(out, "<tr><td>");
        series_name(m, out);
        report_sb_printf(out, "</td><td class=\"n\">%s</td><td class=\"n\">%d (%d hosts x %d)</td>",
                         report_fmt_size((uint64_t)bytes, size, sizeof size), MODEL_WHATIF_RANKS[r],
                         MODEL_WHATIF_RANKS[r] / MODEL_WHATIF_PER_HOST, MODEL_WHATIF_PER_HOST);
        for (int l = 0; l < MODEL_WHATIF_NLINKS; l++) {
            const model_prediction *c = &cells[r][l];
            if (isfinite(c->time_us))
                report_sb_printf(out, "<td class=\"n\">%s &plusmn; %.0f%% (busbw %.3g GB/s%s)</td>",
                                 report_fmt_time_us(c->time_us, t, sizeof t), 100 * m->xval.med_err,
                                 c->busbw_GBps, c->stack_bound ? ", stack-bound" : "");
            else cannot_predict(m, r, l, bytes, out);
        }
        report_sb_puts(out, "</tr>\n");
    }
}

void report_model_html(const report_data *d, const model_fits *f, sbuf *out)
{
    if (d->ncomm == 0) return;
    if (!f) {
        report_sb_puts(
            out, "<h2>Cost model (predictions)</h2>\n<p>The model could not be fitted: out of "
                 "memory.</p>\n");
        return;
    }
    size_t nok = 0;
    for (size_t i = 0; i < f->n; i++) nok += model_xval_trusted(&f->s[i]) != 0;
    report_sb_printf(
        out,
        "<section id=\"model\">\n<h2>Cost model (predictions)</h2>\n<p class=\"note\">The "
        "alpha-beta-gamma model of collbench model (docs/DESIGN.md \"Cost model\"), fitted to "
        "these rows. A fit explains its own rows by construction, so each series is also "
        "validated: each process count (and host count) is left out in turn, the rest "
        "fitted, and the rows left out predicted. Only a series whose held-out median error "
        "is at most %.0f%% gets a dashed \"model prediction\" line in the time plots and a "
        "row in the \"what if\" table. Per series:</p>\n<ul>\n",
        100 * MODEL_XVAL_TRUSTED);
    for (size_t i = 0; i < f->n; i++) fit_line(&f->s[i], out);
    report_sb_puts(out, "</ul>\n");
    if (nok) {
        report_sb_printf(
            out,
            "<p>What if (a prediction, not a measurement): time per call at the largest "
            "size measured, &plusmn; the series' held-out median error, on clusters of %d "
            "ranks per host over links of the given rate "
            "and %.0f us latency; the machine's own terms are the fit's (stack-bound: "
            "the backend's stack, as fast as its one-host rows, not the link, sets the "
            "time). Not modelled: "
            "contention beyond the link's rate, incast, NIC offload, stragglers.</p>\n"
            "<div class=\"scroll\"><table class=\"whatif\">\n<tr><th>series</th><th>size</th>"
            "<th>ranks</th>",
            MODEL_WHATIF_PER_HOST, WHATIF_LATENCY_US);
        for (int l = 0; l < MODEL_WHATIF_NLINKS; l++)
            report_sb_printf(out, "<th>%g Gbit/s (prediction)</th>", MODEL_WHATIF_GBITS[l]);
        report_sb_puts(out, "</tr>\n");
        for (size_t i = 0; i < f->n; i++)
            if (model_xval_trusted(&f->s[i])) whatif_rows(&f->s[i], out);
        report_sb_puts(out, "</table></div>\n");
    }
    report_sb_puts(out, "</section>\n");
}
