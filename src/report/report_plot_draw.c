/* PLplot primitives of the report: pages on the cairo drivers, log axes with
 * human tick labels (1K, 1M, 1G; 10 us, 1 ms), lines with markers, grouped and
 * stacked bars, legends outside the data. */
#include "report/report_plot.h"

#include <stdio.h>
#include <string.h>

/* cmap0: 0 background, 1 ink, 2 grid, 3.. series (Tableau 10: distinct, also in print). */
static const unsigned char PALETTE[][3] = {
    {255, 255, 255}, {30, 30, 30},    {215, 215, 215}, {31, 119, 180},
    {255, 127, 14},  {44, 160, 44},   {214, 39, 40},   {148, 103, 189},
    {140, 86, 75},   {227, 119, 194}, {127, 127, 127}, {188, 189, 34},
    {23, 190, 207},  {158, 202, 225}, {49, 54, 149}, /* PLOT_COMPUTE_COLOUR, PLOT_EXPOSED_COLOUR */
};
#define NPAL (sizeof PALETTE / sizeof PALETTE[0])
#define FIRST_SERIES 3
#define NSERIES 10

/* The backends collbench has, each its fixed colour; any other by its name. */
static const char *const KNOWN_BACKENDS[] = {"tcp", "shm", "auto", "mpi", "nccl", "gloo"};
#define NKNOWN (sizeof KNOWN_BACKENDS / sizeof KNOWN_BACKENDS[0])

static size_t backend_slot(const char *backend)
{
    for (size_t i = 0; i < NKNOWN; i++)
        if (strcmp(backend, KNOWN_BACKENDS[i]) == 0) return i;
    unsigned h = 0;
    for (const char *p = backend; *p; p++) h = h * 31u + (unsigned char)*p;
    return NKNOWN + h % (NSERIES - NKNOWN);
}

int report_plot_backend_colour(const char *backend)
{
    return FIRST_SERIES + (int)backend_slot(backend);
}

const char *report_plot_backend_css(const char *backend)
{
    static char css[NPAL][8];
    size_t i = FIRST_SERIES + backend_slot(backend);
    snprintf(css[i], sizeof css[i], "#%02x%02x%02x", PALETTE[i][0], PALETTE[i][1], PALETTE[i][2]);
    return css[i];
}

const char *report_plot_buffers_marker(const char *buffers)
{
    return !strcmp(buffers, "malloc") ? "●"
           : !strcmp(buffers, "coll") ? "■"
           : !strcmp(buffers, "cuda") ? "▲"
                                      : "◆";
}

#ifdef COLL_HAVE_PLPLOT

#include "report/report_text.h"

#include <math.h>
#include <plplot.h>

/* PLplot sizes text by the mean of the page's sides (plP_subpInit). */
double report_plot_text_scale(int w, int h)
{
    return (double)(REPORT_PLOT_WIDTH + REPORT_PLOT_HEIGHT) / (double)(w + h);
}

int report_plot_available(FILE *log)
{
    /* plgDevs fills caller-provided arrays (it needs room for every driver). */
    const char *menu_store[128], *name_store[128];
    const char **menu = menu_store, **names = name_store;
    int n = 128;
    plgDevs(&menu, &names, &n);
    int png = 0, svg = 0;
    for (int i = 0; i < n; i++) {
        png |= strcmp(names[i], "pngcairo") == 0;
        svg |= strcmp(names[i], "svgcairo") == 0;
    }
    if (png && svg) return 1;
    fprintf(log,
            "collbench report: PLplot has no %s driver: plots skipped "
            "(apt-get install plplot-driver-cairo)\n",
            png ? "svgcairo" : "pngcairo");
    return 0;
}

static int page_width = REPORT_PLOT_WIDTH; /* of the page being drawn */
static int plot_page_width(void) { return page_width; }

void report_plot_page_begin(FILE *out, plot_format fmt, int w, int h)
{
    char geometry[32];
    page_width = w;
    snprintf(geometry, sizeof geometry, "%dx%d", w, h);
    plsdev(fmt == PLOT_PNG ? "pngcairo" : "svgcairo");
    /* A stream, not a file name: PLplot would otherwise write the file itself,
     * ignore write errors, and on an open error prompt on stdin for a name. */
    plsfile(out);
    plsetopt("geometry", geometry);
    plscmap0n((PLINT)NPAL);
    for (size_t i = 0; i < NPAL; i++)
        plscol0((PLINT)i, PALETTE[i][0], PALETTE[i][1], PALETTE[i][2]);
    plinit();
    pladv(0);
    plschr(0, 0.95);
}

void report_plot_page_end(void) { plend1(); }

/* Tick labels: world coordinates are log2(bytes), log10(us), log10(GB/s). */
static void label_fn(PLINT axis, PLFLT value, char *label, PLINT length, PLPointer data)
{
    const axis_unit *u = data;
    axis_unit unit = axis == PL_X_AXIS ? u[0] : u[1];
    double v;
    switch (unit) {
    case UNIT_BYTES: report_fmt_size_short(pow(2.0, value), label, (size_t)length); return;
    case UNIT_TIME_US:
        v = pow(10.0, value);
        if (v < 1000.0 - 1e-9) snprintf(label, (size_t)length, "%g us", v);
        else if (v < 1e6 - 1e-6) snprintf(label, (size_t)length, "%g ms", v / 1e3);
        else snprintf(label, (size_t)length, "%g s", v / 1e6);
        return;
    case UNIT_GBPS: snprintf(label, (size_t)length, "%g", pow(10.0, value)); return;
    case UNIT_COUNT:
    case UNIT_MS: snprintf(label, (size_t)length, "%g", value); return;
    }
}

static double wx(axis_unit u, double v) { return u == UNIT_BYTES ? log2(v) : v; }

static void extent(const plot_line *l, size_t n, int yaxis, axis_unit u, double *lo, double *hi)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < l[i].n; k++) {
            /* y: the whiskers too, so that no spread is cut off. */
            double vs[3] = {yaxis ? log10(l[i].y[k]) : wx(u, l[i].x[k]),
                            yaxis && l[i].lo[k] > 0 ? log10(l[i].lo[k]) : NAN,
                            yaxis && l[i].hi[k] > 0 ? log10(l[i].hi[k]) : NAN};
            for (int j = 0; j < 3; j++) {
                if (!isfinite(vs[j])) continue;
                if (vs[j] < *lo) *lo = vs[j];
                if (vs[j] > *hi) *hi = vs[j];
            }
        }
}

/* [lo, hi] widened to whole ticks. */
static void pad(int yaxis, axis_unit u, double *lo, double *hi)
{
    if (!isfinite(*lo) || !isfinite(*hi)) *lo = 0, *hi = 1;
    if (yaxis) { /* whole decades, with room for markers sitting on one */
        double dlo = *lo, dhi = *hi;
        *lo = floor(*lo + 1e-9);
        *hi = ceil(*hi - 1e-9);
        if (*hi <= *lo) *lo -= 1, *hi += 1;
        if (dlo - *lo < 0.08) *lo -= 0.12;
        if (*hi - dhi < 0.08) *hi += 0.12;
    } else if (u == UNIT_BYTES) {
        *lo = floor(*lo + 1e-9) - 0.5;
        *hi = ceil(*hi - 1e-9) + 0.5;
    } else {
        double p = (*hi - *lo) * 0.08 + 0.5;
        *lo -= p;
        *hi += p;
    }
}

void report_plot_range_empty(plot_range *r)
{
    *r = (plot_range){INFINITY, -INFINITY, INFINITY, -INFINITY};
}

void report_plot_range_add(plot_range *r, const plot_line *lines, size_t n, axis_unit xu)
{
    extent(lines, n, 0, xu, &r->xlo, &r->xhi);
    extent(lines, n, 1, UNIT_TIME_US, &r->ylo, &r->yhi);
}

void report_plot_range_pad(plot_range *r, axis_unit xu)
{
    pad(0, xu, &r->xlo, &r->xhi);
    pad(1, UNIT_TIME_US, &r->ylo, &r->yhi);
}

void report_plot_panel(double x0, double x1, double y0, double y1, const plot_range *r,
                       const char *title, const char *xlabel, axis_unit xu, const char *ylabel,
                       axis_unit yu, int ylabels, const plot_line *lines, size_t n, double text)
{
    static axis_unit units[2];
    units[0] = xu;
    units[1] = yu;
    plvpor(x0, x1, y0, y1);
    plwind(r->xlo, r->xhi, r->ylo, r->yhi);
    plslabelfunc(label_fn, units);
    plschr(0, 0.95 * text);

    /* x ticks: every power of 2, 4, 16 or 64 so that the labels (up to four
     * characters, "256M") never touch: 52 px a label (text scales keep about
     * the same pixels on every page). */
    double span = r->xhi - r->xlo, px = (x1 - x0) * (double)plot_page_width();
    double fit = px / 52.0, xtick = 1;
    while (span / xtick > fit && xtick < 64) xtick *= 2;
    PLINT xsub = xu == UNIT_BYTES ? (PLINT)xtick : 1;
    if (xu != UNIT_BYTES) xtick = 0; /* linear: PLplot's own ticks */
    plcol0(2);
    plwidth(1.0);
    plbox("g", xtick, xsub, "g", 1.0, 0);
    plcol0(1);
    plbox("bcnsto", xtick, xsub, ylabels ? "bcnstlvo" : "bcstl", 1.0, 0);
    if (xlabel) plmtex("b", 2.8, 0.5, 0.5, xlabel);
    if (ylabel) plmtex("l", 7.4, 0.5, 0.5, ylabel);
    plschr(0, 1.05 * text);
    plmtex("t", 0.8, 0.5, 0.5, title);
    plschr(0, 0.95 * text);

    for (size_t i = 0; i < n; i++) {
        const plot_line *l = &lines[i];
        PLFLT x[64], y[64], ex[64], elo[64], ehi[64];
        PLINT m = 0, me = 0;
        for (size_t k = 0; k < l->n && k < 64; k++) {
            double pxl = wx(xu, l->x[k]), py = log10(l->y[k]);
            if (!isfinite(pxl) || !isfinite(py)) continue;
            x[m] = pxl, y[m++] = py;
            if (l->lo[k] > 0 && l->hi[k] > 0)
                ex[me] = pxl, elo[me] = log10(l->lo[k]), ehi[me++] = log10(l->hi[k]);
        }
        if (m == 0) continue;
        plcol0(l->colour);
        pllsty(l->style);
        plwidth(l->marker ? 2.2 : 1.6);
        if (m > 1) plline(m, x, y);
        pllsty(1);
        plwidth(1.4);
        if (me > 0) plerry(me, ex, elo, ehi);
        if (l->marker) plstring(m, x, y, l->marker);
    }
    plwidth(1.0);
    pllsty(1);
    plcol0(1);
}

void report_plot_page_text(double x, double y, double size, double just, const char *text)
{
    plvpor(0, 1, 0, 1);
    plwind(0, 1, 0, 1);
    plschr(0, size);
    plcol0(1);
    plptex(x, y, 1, 0, just, text);
}

void report_plot_key(double x0, double x1, double y0, double y1, const char *const *backends,
                     size_t nb, const char *const *buffers, size_t nbuf, int dashed, double text)
{
    enum { MAXK = 40 };
    PLINT opt[MAXK], tc[MAXK], lc[MAXK], ls[MAXK], sc[MAXK], sn[MAXK];
    PLFLT lw[MAXK], ss[MAXK], w, h;
    const char *label[MAXK], *sym[MAXK];
    char bufname[16][48];
    size_t n = 0;
    for (size_t i = 0; i < nb && n < 16; i++, n++) {
        opt[n] = PL_LEGEND_LINE, tc[n] = 1, lc[n] = report_plot_backend_colour(backends[i]),
        ls[n] = 1;
        lw[n] = 3.0, sc[n] = 1, ss[n] = 1, sn[n] = 1, label[n] = backends[i], sym[n] = "";
    }
    for (size_t i = 0; i < nbuf && i < 16; i++, n++) {
        snprintf(bufname[i], sizeof bufname[i], "%.32s buffers", buffers[i]);
        opt[n] = PL_LEGEND_SYMBOL, tc[n] = 1, lc[n] = 1, ls[n] = 1, lw[n] = 1;
        sc[n] = 1, ss[n] = text, sn[n] = 1, label[n] = bufname[i],
        sym[n] = report_plot_buffers_marker(buffers[i]);
    }
    if (dashed) {
        opt[n] = PL_LEGEND_LINE, tc[n] = 1, lc[n] = 1, ls[n] = PLOT_DASHED, lw[n] = 1.6;
        sc[n] = 1, ss[n] = 1, sn[n] = 1, label[n] = "model prediction", sym[n] = "";
        n++;
    }
    plvpor(x0, x1, y0, y1);
    plwind(0, 1, 0, 1);
    plschr(0, 0.95 * text);
    pllegend(&w, &h, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
             PL_POSITION_TOP | PL_POSITION_LEFT | PL_POSITION_INSIDE | PL_POSITION_VIEWPORT, 0.0,
             0.0, 0.1, 0, 2, 1, (PLINT)n, 1, (PLINT)n, opt, 1.0, 0.95 * text, 2.0, 0.0, tc, label,
             NULL, NULL, NULL, NULL, lc, ls, lw, sc, ss, sn, sym);
}

#define HBAR_ROW_PX 22
#define HBAR_TOP_PX 110    /* title and the key's first row */
#define HBAR_KEY_ROW_PX 22 /* each further row of the key */
#define HBAR_BOTTOM_PX 70
#define HBAR_KEY_COLS 6

static int key_rows(size_t nseries)
{
    return nseries ? (int)((nseries + HBAR_KEY_COLS - 1) / HBAR_KEY_COLS) : 1;
}

int report_plot_hbars_height(size_t n, size_t nseries)
{
    int h = HBAR_TOP_PX + (key_rows(nseries) - 1) * HBAR_KEY_ROW_PX + HBAR_BOTTOM_PX +
            (int)n * HBAR_ROW_PX;
    return h > REPORT_PLOT_HEIGHT ? h : REPORT_PLOT_HEIGHT;
}

void report_plot_hbars(const char *title, const char *xlabel, const plot_hbar_row *rows, size_t n,
                       const char *const *series, const int *colours, size_t nseries,
                       const char *value_fmt)
{
    double xmax = 0;
    for (size_t i = 0; i < n; i++) {
        double v = rows[i].value + (rows[i].stack > 0 ? rows[i].stack : 0);
        if (rows[i].hi > v) v = rows[i].hi;
        if (rows[i].value >= 0 && v > xmax) xmax = v;
    }
    if (!(xmax > 0)) xmax = 1;
    /* Rows keep their height in pixels whatever n is: the margins are fixed
     * pixels turned into fractions of this page's height, the text its size. */
    double h = report_plot_hbars_height(n, nseries),
           top = HBAR_TOP_PX + (key_rows(nseries) - 1) * HBAR_KEY_ROW_PX;
    double y0 = HBAR_BOTTOM_PX / h, y1 = 1.0 - top / h;
    double f = report_plot_text_scale(REPORT_PLOT_WIDTH, (int)h);
    plvpor(0.30, 0.90, y0, y1);
    plwind(0, xmax * 1.3, (double)n, 0); /* row 0 at the top; room for the values */
    plcol0(2);
    plbox("g", 0, 0, "", 0, 0);
    plcol0(1);
    plschr(0, 0.85 * f);
    plbox("bcnst", 0, 0, "bc", 0, 0);
    plmtex("b", 3.0, 0.5, 0.5, xlabel);
    plschr(0, 1.1 * f);
    plmtex("t", 4.6 + (key_rows(nseries) - 1) * 1.4, -0.45, 0.0, title);
    plschr(0, 0.75 * f);
    for (size_t i = 0; i < n; i++) {
        const plot_hbar_row *r = &rows[i];
        double rt = (double)i + 0.15, rb = (double)i + 0.85, mid = (double)i + 0.5;
        if (r->value < 0) { /* a heading: its text inside the frame, over its rows */
            plcol0(1);
            plptex(xmax * 0.01, mid, 1, 0, 0.0, r->label);
            continue;
        }
        double v = r->value, end = v;
        PLFLT bx[4] = {0, 0, v, v}, by[4] = {rb, rt, rt, rb};
        plcol0(r->colour);
        plfill(4, bx, by);
        if (r->stack > 0) {
            PLFLT sx[4] = {v, v, v + r->stack, v + r->stack};
            plcol0(r->stack_colour);
            plfill(4, sx, by);
            end += r->stack;
        }
        char txt[32];
        snprintf(txt, sizeof txt, value_fmt, end);
        if (r->lo > 0 && r->hi > 0) {
            PLFLT ey = mid, elo = r->lo, ehi = r->hi;
            plcol0(1);
            plerrx(1, &elo, &ehi, &ey);
            if (ehi > end) end = ehi; /* the value right of the whisker */
        }
        plcol0(1);
        plptex(end + xmax * 0.015, mid, 1, 0, 0.0, txt);
        /* The label right-aligned just left of the frame, on the bar's row. */
        plmtex("lv", 0.8, 1.0 - mid / (double)n, 1.0, r->label);
    }
    plschr(0, 0.95 * f);
    PLINT opt[16], tc[16], bc[16], bp[16];
    PLFLT bs[16], blw[16], w, lh;
    if (nseries > 16) nseries = 16;
    for (size_t k = 0; k < nseries; k++) {
        opt[k] = PL_LEGEND_COLOR_BOX;
        tc[k] = 1;
        bc[k] = colours[k];
        bp[k] = 0;
        bs[k] = 1.0;
        blw[k] = 1.0;
    }
    /* Above the frame, in rows of up to six: never over a bar. */
    PLINT ncol = nseries < HBAR_KEY_COLS ? (PLINT)nseries : HBAR_KEY_COLS;
    if (nseries)
        pllegend(&w, &lh, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
                 PL_POSITION_TOP | PL_POSITION_OUTSIDE | PL_POSITION_VIEWPORT, 0.0, 0.01, 0.05, 0,
                 2, 1, key_rows(nseries), ncol, (PLINT)nseries, opt, 1.0, 0.9 * f, 2.0, 0.0, tc,
                 (const char **)series, bc, bp, bs, blw, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
}

#else /* without PLplot: nothing draws, report_plot_available says so */

int report_plot_available(FILE *log)
{
    fprintf(log, "collbench report: built without PLplot: plots skipped "
                 "(apt-get install libplplot-dev plplot-driver-cairo, then rebuild)\n");
    return 0;
}

#endif
