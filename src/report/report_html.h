/* index.html: one self-contained page (plots inlined as base64 PNG, tables as
 * HTML, no external resource) that reads offline. */
#ifndef REPORT_HTML_H
#define REPORT_HTML_H

#include "costmodel/model_fit.h"
#include "report/report_data.h"
#include "report/report_plot.h"
#include "report/report_replay.h"
#include "report/report_table.h"
#include "report/report_text.h"
#include "report/report_view.h"

typedef struct report_html_in {
    const char *outdir; /* where the PNGs of plots are */
    const report_data *d;
    const report_view *v;
    const model_fits *fits;  /* the cost model fitted to d's rows, or NULL */
    const char *chartjs;     /* the Chart.js library's text, or NULL ... */
    const char *chartjs_why; /* ... and why not (report_charts.h) */
    const report_plots *plots;
    int plots_skipped;    /* 1: say why there are none */
    const char *findings; /* report_findings' sentences, first line a heading */
    const rtable *findings_table;
    const rtable *changes; /* against a baseline run, or NULL */
    const char *analysis;  /* every comparison (report_analysis), under "details" */
    const rtable *summary; /* summary tables */
    size_t nsummary;
    const rtable *full; /* full tables */
    size_t nfull;
    const report_replay *replay; /* the replay section's tables, or NULL */
} report_html_in;

/* Appends the page to out; 0, or a negative coll_status with err when a PNG
 * cannot be read back. */
int report_html(const report_html_in *in, sbuf *out, char *err, size_t errlen);

#endif
