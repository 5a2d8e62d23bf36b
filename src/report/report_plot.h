/* Plots of the report, drawn with PLplot (pngcairo and svgcairo drivers).
 * report_plots.c decides what to draw; report_plot_draw.c holds the drawing
 * primitives (a page, log axes with 1K/1M labels, lines, bars, legends). */
#ifndef REPORT_PLOT_H
#define REPORT_PLOT_H

#include <stddef.h>
#include <stdio.h>

#include "report/report_data.h"
#include "report/report_view.h"

#define REPORT_PLOT_WIDTH 1000
#define REPORT_PLOT_HEIGHT 650
#define REPORT_MAX_PLOTS 48

typedef struct report_plot_file {
    char name[96];     /* "time_vs_size.png" (the .svg has the same stem) */
    char caption[200];
} report_plot_file;

typedef struct report_plots {
    report_plot_file f[REPORT_MAX_PLOTS];
    size_t n;
    int rc;         /* the first file that could not be written stops the plots */
    char err[4200]; /* and says which, and why */
} report_plots;

/* Draws every plot the data allows into outdir, as PNG and SVG; lists the PNGs
 * in out (for index.html). Each file is drawn in memory and written through
 * coll__file_write_atomic, so a full disk leaves no cut or empty plot. 0;
 * COLL_ESYS (or COLL_ENOMEM) with out->err naming the file that failed; or
 * COLL_EUNAVAIL when built without PLplot or its cairo drivers are missing
 * (out->n == 0; the reason on log). */
int report_plots_draw(const report_data *d, const report_view *v, const char *outdir,
                      report_plots *out, FILE *log);

/* ---- primitives (report_plot_draw.c) ---- */

/* Whether the pngcairo and svgcairo drivers can be used; why not on log. */
int plot_available(FILE *log);

typedef enum plot_format { PLOT_PNG, PLOT_SVG } plot_format;

/* Opens a page of w x h (pixels for PNG, points for SVG) writing to out, which
 * PLplot closes in plot_page_end (plCloseFile), like a file it opened itself. */
void plot_page_begin(FILE *out, plot_format fmt, int w, int h);
void plot_page_end(void);

/* The colour of the i-th backend/series (cmap0 index) and the marker glyph and
 * line style of the i-th process count. */
int plot_colour(size_t i);
const char *plot_marker(size_t i);
int plot_line_style(size_t i);

typedef enum axis_unit { UNIT_BYTES, UNIT_TIME_US, UNIT_GBPS, UNIT_COUNT, UNIT_MS } axis_unit;

typedef struct plot_line {
    char label[96];
    int colour, style;
    const char *marker;
    size_t n;
    double x[64], y[64]; /* data units (bytes, us, GB/s, processes) */
    double lo[64], hi[64]; /* the spread of y (a whisker); 0 where unknown */
} plot_line;

/* A framed panel in viewport fractions (x0, x1, y0, y1) with lines and their
 * spread as whiskers; x log2 (bytes) or linear (UNIT_COUNT), y log10. A legend right of the panel when
 * legend_right > 0, below the page's bottom edge in one row when 0, none
 * when < 0. */
void plot_lines_panel(double x0, double x1, double y0, double y1, const char *title,
                      const char *xlabel, axis_unit xu, const char *ylabel, axis_unit yu,
                      const plot_line *lines, size_t n, int legend_right);

typedef struct plot_bar_group {
    char label[2][96]; /* two lines under the group */
    double value[16];  /* per series; < 0: no bar */
    double stack[16];  /* stacked on value (0 when none) */
    double lo[16], hi[16]; /* the spread of value, a whisker (0 when unknown) */
} plot_bar_group;

/* A table-like plot of n rows, one per configuration: its label left, a
 * horizontal bar of value (series 0) with stack (series 1) on it, the total
 * at its end. Readable for any n: the page is as tall as the rows need
 * (plot_hbars_height). */
void plot_hbars(const char *title, const char *xlabel, const char *const *labels,
                const double *value, const double *stack, size_t n, const char *const *series,
                const int *colours, const char *value_fmt);
int plot_hbars_height(size_t n);

/* Grouped bars (nseries per group, colours per series) or, with stacked,
 * one bar per group made of value (series 0) and stack (series 1). Linear y from 0. */
void plot_bars(const char *title, const char *ylabel, const plot_bar_group *g, size_t ng,
               const char *const *series, size_t nseries, const int *colours, int stacked,
               const char *value_fmt);

#endif
