/* Interactive plots of index.html (report_charts.h). */
#include "report/report_charts.h"

#include "report/report_grid.h"
#include "report/report_model.h"
#include "report/report_plot.h"
#include "report/report_spread.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *report_chartjs_load(char *why, size_t whylen)
{
    const char *path = getenv("COLLBENCH_CHARTJS");
    if (!path) path = REPORT_CHARTJS_PATH;
    char *text = NULL, reason[256] = "no file named";
    size_t len = 0;
    if (!*path || report_read_whole_file(path, REPORT_CHARTJS_MAX_BYTES, &text, &len, reason,
                                         sizeof reason) != 0) {
        snprintf(why, whylen, "%s: %s", *path ? path : "COLLBENCH_CHARTJS", reason);
        return NULL;
    }
    /* inlined in a <script>: a closing tag inside would end it early */
    if (strstr(text, "</script") || strstr(text, "</SCRIPT")) {
        snprintf(why, whylen, "%s: holds a </script> tag, cannot be inlined", path);
        free(text);
        return NULL;
    }
    return text;
}

/* A JSON string; '<' escaped so that nothing in it can close the <script>. */
static void json_str(sbuf *out, const char *s)
{
    report_sb_puts(out, "\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') report_sb_printf(out, "\\%c", c);
        else if (c < 0x20 || c == '<' || c == '>' || c == '&') report_sb_printf(out, "\\u%04x", c);
        else report_sb_put(out, s, 1);
    }
    report_sb_puts(out, "\"");
}

static const char *point_style(const char *buffers)
{
    return !strcmp(buffers, "malloc") ? "circle"
           : !strcmp(buffers, "coll") ? "rect"
           : !strcmp(buffers, "cuda") ? "triangle"
                                      : "rectRot";
}

/* One series as a dataset: points {x, y, lo, hi} (the spread of y). */
static void dataset(const report_series *s, int bandwidth, sbuf *out)
{
    char label[96];
    snprintf(label, sizeof label, "%s, %s buffers", s->backend, s->buffers);
    report_sb_puts(out, "{\"label\":");
    json_str(out, label);
    report_sb_printf(out, ",\"colour\":\"%s\",\"marker\":\"%s\",\"pts\":[",
                     report_plot_backend_css(s->backend), point_style(s->buffers));
    int first = 1;
    for (size_t k = 0; k < s->n; k++) {
        const bench_row *r = s->pts[k];
        double lo, hi, y = bandwidth ? r->busbw_GBps : report_row_time(r);
        int known = report_row_spread(r, &lo, &hi) != SPREAD_UNKNOWN;
        if (!(r->bytes > 0) || !(y > 0) || !isfinite(y)) continue;
        if (bandwidth) { /* bytes over the average time: scaled by the time's spread */
            double l = known && hi > 0 ? r->busbw_GBps * r->time_us_avg / hi : y;
            hi = known && lo > 0 ? r->busbw_GBps * r->time_us_avg / lo : y;
            lo = l;
        } else if (!known) {
            lo = hi = y;
        }
        report_sb_printf(out, "%s{\"x\":%llu,\"y\":%.6g,\"lo\":%.6g,\"hi\":%.6g}", first ? "" : ",",
                         (unsigned long long)r->bytes, y, lo, hi);
        first = 0;
    }
    report_sb_puts(out, "]}");
}

/* The cost model's curve for the panel's first series it can draw: a dashed
 * dataset without markers (as report_plots.c draws it); 0 when none. */
static int model_dataset(const model_fits *f, const grid_panel *p, sbuf *out)
{
    for (size_t k = 0; k < p->n && f && f->n; k++) {
        plot_line l;
        if (!report_model_curve(f, p->s[k], &l)) continue;
        report_sb_puts(out, ",{\"label\":");
        json_str(out, l.label);
        report_sb_printf(out, ",\"colour\":\"%s\",\"marker\":false,\"dashed\":1,\"pts\":[",
                         report_plot_backend_css(p->s[k]->backend));
        for (size_t i = 0; i < l.n; i++)
            report_sb_printf(out, "%s{\"x\":%.6g,\"y\":%.6g,\"lo\":%.6g,\"hi\":%.6g}", i ? "," : "",
                             l.x[i], l.y[i], l.y[i], l.y[i]);
        report_sb_puts(out, "]}");
        return 1;
    }
    return 0;
}

/* Draws every figure of the JSON block: one chart per panel. */
static const char GLUE[] =
    "(function () {\n"
    "  var figs = JSON.parse(document.getElementById('collbench-charts').textContent), n = 0;\n"
    "  function bytes(v) { var u = ['', 'K', 'M', 'G', 'T'], i = 0;\n"
    "    while (v >= 1024 && i < 4) { v /= 1024; i++; } return (Math.round(v * 10) / 10) + u[i]; "
    "}\n"
    "  function time(us) { return us >= 1e6 ? (us / 1e6).toPrecision(3) + ' s' :\n"
    "    us >= 1e3 ? (us / 1e3).toPrecision(3) + ' ms' : us.toPrecision(3) + ' us'; }\n"
    "  function powers(axis, base, most) {\n"
    "    var lo = Math.ceil(Math.log(axis.min) / Math.log(base) - 1e-9),\n"
    "        hi = Math.floor(Math.log(axis.max) / Math.log(base) + 1e-9), step = 1, t = [];\n"
    "    while ((hi - lo) / step + 1 > most) step *= 2;\n"
    "    for (var e = lo; e <= hi; e += step) t.push({ value: Math.pow(base, e) });\n"
    "    axis.ticks = t;\n"
    "  }\n"
    "  figs.forEach(function (f) {\n"
    "    var fmt = f.bandwidth ? function (v) { return v.toPrecision(3) + ' GB/s'; } : time;\n"
    "    f.panels.forEach(function (p, i) {\n"
    "      new Chart(document.getElementById(f.id + '-' + i), {\n"
    "        type: 'line',\n"
    "        data: { datasets: p.lines.map(function (l) { return { label: l.label, data: l.pts,\n"
    "          borderColor: l.colour, backgroundColor: l.colour, pointStyle: l.marker,\n"
    "          pointRadius: l.dashed ? 0 : 4, borderDash: l.dashed ? [6, 4] : [],\n"
    "          borderWidth: 2 }; }) },\n"
    "        options: { animation: false, parsing: false, aspectRatio: 0.9,\n"
    "          scales: {\n"
    "            x: { type: 'logarithmic', min: f.xmin, max: f.xmax,\n"
    "                 title: { display: true, text: 'message size (bytes)' },\n"
    "                 afterBuildTicks: function (a) { powers(a, 2, 6); },\n"
    "                 ticks: { maxRotation: 0, callback: function (v) { return bytes(v); } } },\n"
    "            y: { type: 'logarithmic', min: f.ymin, max: f.ymax, title: { display: true, text: "
    "f.ylabel },\n"
    "                 afterBuildTicks: function (a) { powers(a, 10, 8); },\n"
    "                 ticks: { callback: function (v) { return fmt(v); } } } },\n"
    "          plugins: { title: { display: true, text: p.title },\n"
    "            legend: { position: 'bottom', labels: { usePointStyle: true } },\n"
    "            tooltip: { callbacks: { label: function (c) { var d = c.raw;\n"
    "              return c.dataset.label + ' at ' + bytes(d.x) + ': ' + fmt(d.y) +\n"
    "                ' (spread ' + fmt(d.lo) + ' to ' + fmt(d.hi) + ')'; } } } } } });\n"
    "      n++;\n"
    "    });\n"
    "  });\n"
    "  document.body.setAttribute('data-charts', String(n));\n"
    "})();\n";

/* The figure of collective and metric: its panels as JSON, its canvases. */
static void figure(const report_view *v, const model_fits *fits, const char *collective,
                   int bandwidth, int *id, sbuf *json, sbuf *html)
{
    report_grid g;
    if (report_grid_build(v, collective, &g) != 0 || g.n == 0) {
        report_grid_free(&g);
        return;
    }
    double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = 0; /* shared by every panel */
    for (size_t i = 0; i < g.n; i++)
        for (size_t k = 0; k < g.p[i].n; k++)
            for (size_t j = 0; j < g.p[i].s[k]->n; j++) {
                const bench_row *r = g.p[i].s[k]->pts[j];
                double y = bandwidth ? r->busbw_GBps : report_row_time(r);
                if (!(r->bytes > 0) || !(y > 0) || !isfinite(y)) continue;
                xmin = fmin(xmin, (double)r->bytes), xmax = fmax(xmax, (double)r->bytes);
                ymin = fmin(ymin, y), ymax = fmax(ymax, y);
            }
    if (xmax > 0) {
        char fid[32];
        snprintf(fid, sizeof fid, "chart%d", (*id)++);
        report_sb_printf(
            json,
            "%s{\"id\":\"%s\",\"bandwidth\":%d,\"ylabel\":\"%s\",\"xmin\":%.6g,\"xmax\":%.6g,"
            "\"ymin\":%.6g,\"ymax\":%.6g,\"panels\":[",
            json->len > 1 ? "," : "", fid, bandwidth,
            bandwidth ? "bus bandwidth (GB/s)" : "time per call (median)", xmin / 1.5, xmax * 1.5,
            ymin / 2, ymax * 2);
        report_sb_puts(html, "<h3>");
        report_sb_html_escaped(html, collective);
        report_sb_puts(html, bandwidth ? ": bus bandwidth vs message size</h3>\n"
                                       : ": time per call (median) vs message size</h3>\n");
        const char *row = NULL;
        for (size_t i = 0; i < g.n; i++) {
            const grid_panel *p = &g.p[i];
            if (!row || strcmp(row, p->row_title)) { /* a row of panels per machine */
                if (row) report_sb_puts(html, "</div>\n");
                if (p->row_title[0]) {
                    report_sb_puts(html, "<p class=\"row\">");
                    report_sb_html_escaped(html, p->row_title);
                    report_sb_puts(html, "</p>\n");
                }
                report_sb_puts(html, "<div class=\"charts\">\n");
                row = p->row_title;
            }
            report_sb_printf(html, "<div><canvas id=\"%s-%zu\"></canvas></div>\n", fid, i);
            report_sb_printf(json, "%s{\"title\":", i ? "," : "");
            json_str(json, p->title);
            report_sb_puts(json, ",\"lines\":[");
            for (size_t k = 0; k < p->n; k++) {
                if (k) report_sb_puts(json, ",");
                dataset(p->s[k], bandwidth, json);
            }
            if (!bandwidth) model_dataset(fits, p, json);
            report_sb_puts(json, "]}");
        }
        report_sb_puts(html, "</div>\n");
        report_sb_puts(json, "]}");
    }
    report_grid_free(&g);
}

void report_charts_html(const report_view *v, const model_fits *fits, const char *chartjs,
                        sbuf *out)
{
    sbuf json = {0}, html = {0};
    int id = 0;
    report_sb_puts(&json, "[");
    for (size_t c = 0; c < v->ncollectives; c++)
        for (int bw = 0; bw < 2; bw++) figure(v, fits, v->collectives[c], bw, &id, &json, &html);
    report_sb_puts(&json, "]");
    if (id > 0) {
        report_sb_puts(
            out, "<h2>Interactive plots</h2>\n<p>Hover a point for its median and spread (p25-p75, "
                 "min-p99 for older files); click a legend entry to hide its series. Colour: "
                 "backend; marker: buffer kind; dashed, without markers: the cost model's "
                 "prediction (\"Cost model\" below); every panel of a figure has the same "
                 "axes.</p>\n");
        report_sb_put(out, html.p, html.len);
        report_sb_puts(out, "<script type=\"application/json\" id=\"collbench-charts\">");
        report_sb_put(out, json.p, json.len);
        report_sb_puts(out, "</script>\n<script>\n");
        report_sb_puts(out, chartjs);
        report_sb_puts(out, "\n</script>\n<script>\n");
        report_sb_puts(out, GLUE);
        report_sb_puts(out, "</script>\n");
    }
    if (json.oom || html.oom) out->oom = 1;
    report_sb_free(&json);
    report_sb_free(&html);
}
