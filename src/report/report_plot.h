/* Plots of the report, drawn with PLplot (pngcairo and svgcairo drivers).
 * report_plots.c decides what to draw (small multiples: report_grid.h);
 * report_plot_draw.c holds the drawing primitives (a page, panels with log
 * axes and 1K/1M labels, lines, rows of bars, the key) and the colours and
 * markers every plot and index.html share. */
#ifndef REPORT_PLOT_H
#define REPORT_PLOT_H

#include <stddef.h>
#include <stdio.h>

#include "costmodel/model_fit.h"
#include "report/report_data.h"
#include "report/report_view.h"

#define REPORT_PLOT_WIDTH 1000
#define REPORT_PLOT_HEIGHT 650
#define REPORT_MAX_PLOTS 48

typedef struct report_plot_file {
    char name[96]; /* "time_vs_size.png" (the .svg has the same stem) */
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
 * (out->n == 0; the reason on log). fits: the cost model fitted to d's rows
 * (report_run), whose curves join the time panels. */
int report_plots_draw(const report_data *d, const report_view *v, const model_fits *fits,
                      const char *outdir, report_plots *out, FILE *log);

/* ---- primitives (report_plot_draw.c) ---- */

/* Whether the pngcairo and svgcairo drivers can be used; why not on log. */
int report_plot_available(FILE *log);

typedef enum plot_format { PLOT_PNG, PLOT_SVG } plot_format;

/* Opens a page of w x h (pixels for PNG, points for SVG) writing to out, which
 * PLplot closes in report_plot_page_end (plCloseFile), like a file it opened itself. */
void report_plot_page_begin(FILE *out, plot_format fmt, int w, int h);
void report_plot_page_end(void);

/* The visual key shared by every plot and by index.html: one colour per
 * backend (the known backends fixed, others by their name) and one marker per
 * buffer kind, whatever else the report holds. */
int report_plot_backend_colour(const char *backend);
const char *report_plot_backend_css(const char *backend); /* "#1f77b4", the same colour */
const char *report_plot_buffers_marker(const char *buffers);
/* The training breakdown's two parts: colours no backend has. */
#define PLOT_COMPUTE_COLOUR 13
#define PLOT_EXPOSED_COLOUR 14
/* Line style of a dashed series (a model curve drawn over measured lines). */
#define PLOT_DASHED 2

typedef enum axis_unit { UNIT_BYTES, UNIT_TIME_US, UNIT_GBPS, UNIT_COUNT, UNIT_MS } axis_unit;

typedef struct plot_line {
    char label[96];
    int colour, style;
    const char *marker; /* NULL: a line without markers (a model curve, PLOT_DASHED) */
    size_t n;
    double x[64], y[64];   /* data units (bytes, us, GB/s, processes) */
    double lo[64], hi[64]; /* the spread of y (a whisker); 0 where unknown */
} plot_line;

/* World ranges (x: log2 bytes or linear; y: log10) of lines, for panels that
 * share axes: start with report_plot_range_empty, add each panel's lines, then pad to
 * whole ticks. */
typedef struct plot_range {
    double xlo, xhi, ylo, yhi;
} plot_range;
void report_plot_range_empty(plot_range *r);
void report_plot_range_add(plot_range *r, const plot_line *lines, size_t n, axis_unit xu);
void report_plot_range_pad(plot_range *r, axis_unit xu);

/* One panel of a grid: viewport fractions x0..y1, world range r (padded);
 * xlabel/ylabel NULL for none (the grid labels its outer panels only); y tick
 * labels only when ylabels (panels right of the first share the row's axis).
 * Lines with marker NULL are drawn without markers (a model curve, style
 * PLOT_DASHED). text: the character scale of the page (report_plot_text_scale). */
void report_plot_panel(double x0, double x1, double y0, double y1, const plot_range *r,
                       const char *title, const char *xlabel, axis_unit xu, const char *ylabel,
                       axis_unit yu, int ylabels, const plot_line *lines, size_t n, double text);

/* Character scale that keeps text the size it has on a 1000 x 650 page
 * (PLplot sizes text by the mean of the page's sides). */
double report_plot_text_scale(int w, int h);

/* text at (x, y), fractions of the page, at size times the normal; just 0
 * starts it there, 0.5 centres it. */
void report_plot_page_text(double x, double y, double size, double just, const char *text);

/* The key of a grid in the box x0..y1 (viewport fractions), outside every
 * panel: one entry per backend (its colour), then one per buffer kind (its
 * marker), then "model prediction" (dashed) when dashed. */
void report_plot_key(double x0, double x1, double y0, double y1, const char *const *backends,
                     size_t nb, const char *const *buffers, size_t nbuf, int dashed, double text);

/* One row of a horizontal bar chart: a bar of value (with stack on it, in
 * stack_colour, when > 0; a whisker lo..hi when both > 0) and its label left
 * of the frame, the value at its end. value < 0: a heading row, its label
 * inside the frame over the rows that follow. */
typedef struct plot_hbar_row {
    const char *label;
    double value, stack, lo, hi;
    int colour, stack_colour;
} plot_hbar_row;

/* Rows of bars, readable for any n: the page is as tall as the rows need
 * (report_plot_hbars_height), labels never share a line; the key (nseries colour
 * boxes) above the frame. Linear x from 0. */
void report_plot_hbars(const char *title, const char *xlabel, const plot_hbar_row *rows, size_t n,
                       const char *const *series, const int *colours, size_t nseries,
                       const char *value_fmt);
int report_plot_hbars_height(size_t n, size_t nseries);

#endif
