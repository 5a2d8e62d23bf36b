/* The self-contained HTML page of a report. */
#include "report/report_html.h"

#include "report/report_charts.h"
#include "report/report_model.h"

#include "coll.h"
#include "core/errbuf.h"

#include <stdlib.h>
#include <string.h>

static const char STYLE[] =
    "body{font-family:sans-serif;max-width:1100px;margin:1em auto;padding:0 1em;color:#222;"
    "background:#fff}\n"
    "h1{border-bottom:2px solid #1f77b4}h2{margin-top:1.6em;border-bottom:1px solid #ccc}\n"
    "figure{margin:1em 0}img{max-width:100%;height:auto;border:1px solid #ddd}\n"
    "figcaption{color:#555;font-size:90%}\n"
    ".scroll{overflow-x:auto}table{border-collapse:collapse;font-size:85%;margin-bottom:1em}\n"
    "th,td{border:1px solid #ccc;padding:2px 6px}th{background:#eef3f8}td.n{text-align:right;"
    "font-variant-numeric:tabular-nums}\ntr:nth-child(even){background:#f8f8f8}\n"
    "li{margin:.2em 0}\n"
    ".charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(340px,1fr));gap:12px}\n"
    ".charts>div{min-width:0}p.row{font-weight:bold;margin:.6em 0 .2em}\n"
    "#findings p{margin:.35em 0}p.note{color:#555}\n";

/* Distinct hosts of the rows, sorted, comma separated. */
static void hosts(const report_data *d, sbuf *out)
{
    const char **h = calloc(d->ncomm + d->ntrain + 1, sizeof *h);
    size_t n = 0;
    if (!h) return;
    for (size_t i = 0; i < d->ncomm + d->ntrain; i++) {
        const char *s = i < d->ncomm ? d->comm[i].host : d->train[i - d->ncomm].host;
        if (!*s) continue;
        size_t k = 0;
        while (k < n && strcmp(h[k], s)) k++;
        if (k == n) h[n++] = s;
    }
    for (size_t i = 1; i < n; i++) /* few hosts: insertion sort */
        for (size_t k = i; k > 0 && strcmp(h[k - 1], h[k]) > 0; k--) {
            const char *t = h[k];
            h[k] = h[k - 1];
            h[k - 1] = t;
        }
    for (size_t i = 0; i < n; i++) {
        if (i) report_sb_puts(out, ", ");
        report_sb_html_escaped(out, h[i]);
    }
    if (n == 0) report_sb_puts(out, "(not recorded)");
    free(h);
}

/* Analysis paragraphs: the first line of each is its heading, the rest items. */
static void analysis_html(const char *text, sbuf *out)
{
    const char *p = text;
    int first_para = 1, in_list = 0, at_para_start = 1;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        char *line = strndup(p, n);
        if (!line) return;
        if (n == 0) {
            if (in_list) report_sb_puts(out, "</ul>\n");
            in_list = 0;
            at_para_start = 1;
        } else if (at_para_start) {
            report_sb_puts(out, first_para ? "<p>" : "<h3>");
            report_sb_html_escaped(out, line);
            report_sb_puts(out, first_para ? "</p>\n" : "</h3>\n");
            first_para = 0;
            at_para_start = 0;
        } else {
            if (!in_list) report_sb_puts(out, "<ul>\n");
            in_list = 1;
            report_sb_puts(out, "<li>");
            report_sb_html_escaped(out, line);
            report_sb_puts(out, "</li>\n");
        }
        free(line);
        p += n + (nl != NULL);
    }
    if (in_list) report_sb_puts(out, "</ul>\n");
}

/* Whether any of n tables has a row: a section of none is left out. */
static int any_rows(const rtable *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (t[i].nrows) return 1;
    return 0;
}

/* A full-results table, its first REPORT_HTML_MAX_ROWS rows only: a page of
 * every row of a big run would not open. */
static void full_table(const rtable *t, sbuf *out)
{
    rtable shown = *t;
    if (shown.nrows > REPORT_HTML_MAX_ROWS) {
        shown.nrows = REPORT_HTML_MAX_ROWS;
        report_sb_printf(out,
                         "<p class=\"note\">The first %d of %zu rows; every row is in "
                         "<a href=\"full_results.md\">full_results.md</a> and "
                         "the combined CSV files.</p>\n",
                         REPORT_HTML_MAX_ROWS, t->nrows);
    }
    report_table_html_table(&shown, out);
}

int report_html(const report_html_in *in, sbuf *out, char *err, size_t errlen)
{
    report_sb_printf(out,
                     "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                     "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                     "<title>collbench report</title>\n<style>\n%s</style>\n</head>\n<body>\n",
                     STYLE);
    report_sb_printf(out,
                     "<h1>collbench report</h1>\n<p>Results: %zu communication, %zu training, %zu "
                     "memory",
                     in->d->ncomm, in->d->ntrain, in->d->nmem);
    if (in->d->nreplay) report_sb_printf(out, ", %zu replay", in->d->nreplay);
    report_sb_puts(out, ". Hosts: ");
    hosts(in->d, out);
    report_sb_puts(out, ". Data: <a href=\"combined.csv\">combined.csv</a>");
    if (in->d->ntrain)
        report_sb_puts(out, ", <a href=\"combined_training.csv\">combined_training.csv</a>");
    report_sb_puts(out, "; tables: <a href=\"summary_by_config.md\">summary_by_config.md</a>, "
                        "<a href=\"full_results.md\">full_results.md</a>; "
                        "<a href=\"analysis.txt\">analysis.txt</a>.</p>\n");

    /* The answer first: the findings and their table, above every plot. */
    report_sb_puts(out, "<section id=\"findings\">\n<h2>Findings</h2>\n");
    const char *f = strchr(in->findings, '\n'); /* its first line is the heading */
    for (f = f ? f + 1 : in->findings; *f;) {
        const char *nl = strchr(f, '\n');
        size_t n = nl ? (size_t)(nl - f) : strlen(f);
        char *line = strndup(f, n);
        if (!line) break;
        report_sb_puts(out, "<p>");
        report_sb_html_escaped(out, line);
        report_sb_puts(out, "</p>\n");
        free(line);
        f += n + (nl != NULL);
    }
    if (in->findings_table && in->findings_table->nrows) report_table_html(in->findings_table, out);
    if (in->changes) report_table_html(in->changes, out);
    report_sb_puts(out, "</section>\n");
    if (in->replay) report_replay_html(in->replay, out); /* the user's own program, next */

    if (in->chartjs) {
        report_charts_html(in->v, in->fits, in->chartjs, out);
    } else {
        report_sb_puts(out, "<p class=\"note\">Interactive plots are not in this page (");
        report_sb_html_escaped(out, in->chartjs_why ? in->chartjs_why : "no chart library");
        report_sb_puts(out,
                       "): apt-get install libjs-chart.js, then rerun collbench report.</p>\n");
    }
    report_sb_puts(out, "<h2>Plots</h2>\n");
    if (in->plots_skipped)
        report_sb_puts(out, "<p>Plots skipped: this collbench was built without PLplot "
                            "(apt-get install libplplot-dev plplot-driver-cairo).</p>\n");
    else if (in->plots->n == 0) report_sb_puts(out, "<p>No data to plot.</p>\n");
    for (size_t i = 0; i < in->plots->n; i++) {
        const report_plot_file *f = &in->plots->f[i];
        char path[4096], *png, why[256];
        size_t len;
        snprintf(path, sizeof path, "%s/%s", in->outdir, f->name);
        /* the plots are far under the inputs' bound */
        if (report_read_whole_file(path, REPORT_MAX_INPUT_BYTES, &png, &len, why, sizeof why) !=
            0) {
            coll__set_err(err, errlen, "%s: reading back the plot: %s", path, why);
            return COLL_ESYS;
        }
        /* with interactive charts, their images are for papers and slides: collapsed */
        int folded = in->chartjs && (!strncmp(f->name, "time_vs_size", 12) ||
                                     !strncmp(f->name, "busbw_vs_size", 13));
        if (folded)
            report_sb_puts(out, "<details><summary>As an image (PNG; SVG beside it)</summary>\n");
        report_sb_puts(out, "<figure>\n<img alt=\"");
        report_sb_html_escaped(out, f->caption);
        report_sb_puts(out, "\" src=\"data:image/png;base64,");
        report_sb_base64(out, (const unsigned char *)png, len);
        free(png);
        report_sb_puts(out, "\">\n<figcaption>");
        report_sb_html_escaped(out, f->caption);
        report_sb_printf(out, " (<code>%s</code>)</figcaption>\n</figure>\n", f->name);
        if (folded) report_sb_puts(out, "</details>\n");
    }

    report_model_html(in->d, in->fits, out);
    report_sb_puts(out,
                   "<h2>Analysis</h2>\n<details><summary>Every comparison, buffer kind, machine, "
                   "saturation, crossover, scaling and anomaly behind the findings</summary>\n");
    analysis_html(in->analysis, out);
    report_sb_puts(out, "</details>\n");
    /* a report of replays alone has no rows for these: no empty sections */
    if (any_rows(in->summary, in->nsummary)) {
        report_sb_puts(out, "<h2>Summary by configuration</h2>\n");
        for (size_t i = 0; i < in->nsummary; i++) report_table_html(&in->summary[i], out);
    }
    size_t nfull = any_rows(in->full, in->nfull) ? in->nfull : 0;
    if (nfull) report_sb_puts(out, "<h2>Full results</h2>\n");
    for (size_t i = 0; i < nfull; i++) {
        report_sb_printf(out, "<details%s><summary>", in->full[i].nrows <= 40 ? " open" : "");
        report_sb_html_escaped(out, in->full[i].title);
        report_sb_printf(out, " (%zu rows)</summary>\n", in->full[i].nrows);
        full_table(&in->full[i], out);
        report_sb_puts(out, "</details>\n");
    }
    report_sb_puts(out, "</body>\n</html>\n");
    if (out->oom) {
        coll__set_err(err, errlen, "index.html: out of memory");
        return COLL_ENOMEM;
    }
    return 0;
}
