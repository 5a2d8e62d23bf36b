/* PLplot primitives of the report: pages on the cairo drivers, log axes with
 * human tick labels (1K, 1M, 1G; 10 us, 1 ms), lines with markers, grouped and
 * stacked bars, legends outside the data. */
#include "report/report_plot.h"

#include <stdio.h>

#ifdef COLL_HAVE_PLPLOT

#include "report/report_text.h"

#include <math.h>
#include <plplot.h>
#include <string.h>

/* cmap0: 0 background, 1 ink, 2 grid, 3.. series (Tableau 10: distinct, also in print). */
static const unsigned char PALETTE[][3] = {
    {255, 255, 255}, {30, 30, 30}, {215, 215, 215},
    {31, 119, 180}, {255, 127, 14}, {44, 160, 44}, {214, 39, 40}, {148, 103, 189},
    {140, 86, 75}, {227, 119, 194}, {127, 127, 127}, {188, 189, 34}, {23, 190, 207},
};
#define NPAL (sizeof PALETTE / sizeof PALETTE[0])
#define FIRST_SERIES 3

int plot_colour(size_t i) { return FIRST_SERIES + (int)(i % (NPAL - FIRST_SERIES)); }

const char *plot_marker(size_t i)
{
    static const char *const m[] = {"●", "■", "▲", "◆", "▼", "★", "⬟", "✚"};
    return m[i % (sizeof m / sizeof m[0])];
}

int plot_line_style(size_t i) { return 1 + (int)(i % 4); }

int plot_available(FILE *log)
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
    fprintf(log, "collbench report: PLplot has no %s driver: plots skipped "
            "(apt-get install plplot-driver-cairo)\n", png ? "svgcairo" : "pngcairo");
    return 0;
}

void plot_page_begin(FILE *out, plot_format fmt, int w, int h)
{
    char geometry[32];
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

void plot_page_end(void) { plend1(); }

/* Tick labels: world coordinates are log2(bytes), log10(us), log10(GB/s). */
static void label_fn(PLINT axis, PLFLT value, char *label, PLINT length, PLPointer data)
{
    const axis_unit *u = data;
    axis_unit unit = axis == PL_X_AXIS ? u[0] : u[1];
    double v;
    switch (unit) {
    case UNIT_BYTES:
        fmt_size_short(pow(2.0, value), label, (size_t)length);
        return;
    case UNIT_TIME_US:
        v = pow(10.0, value);
        if (v < 1000.0 - 1e-9) snprintf(label, (size_t)length, "%g us", v);
        else if (v < 1e6 - 1e-6) snprintf(label, (size_t)length, "%g ms", v / 1e3);
        else snprintf(label, (size_t)length, "%g s", v / 1e6);
        return;
    case UNIT_GBPS:
        snprintf(label, (size_t)length, "%g", pow(10.0, value));
        return;
    case UNIT_COUNT:
    case UNIT_MS:
        snprintf(label, (size_t)length, "%g", value);
        return;
    }
}

static double wx(axis_unit u, double v) { return u == UNIT_BYTES ? log2(v) : v; }

/* Data range of the lines in world units; [lo, hi] widened to whole ticks. */
static void world_range(const plot_line *l, size_t n, int yaxis, axis_unit u, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
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
    if (!isfinite(*lo)) *lo = 0, *hi = 1;
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
        double pad = (*hi - *lo) * 0.08 + 0.5;
        *lo -= pad;
        *hi += pad;
    }
}

static void legend(const plot_line *l, size_t n, int right)
{
    PLINT opt[64], tc[64], lc[64], ls[64], sc[64], sn[64];
    PLFLT lw[64], ss[64];
    const char *text[64], *sym[64];
    if (n > 64) n = 64;
    for (size_t i = 0; i < n; i++) {
        opt[i] = PL_LEGEND_LINE | PL_LEGEND_SYMBOL;
        tc[i] = 1;
        lc[i] = sc[i] = l[i].colour;
        ls[i] = l[i].style;
        lw[i] = 2.0;
        ss[i] = 1.0;
        sn[i] = 2;
        text[i] = l[i].label;
        sym[i] = l[i].marker;
    }
    PLFLT w, h;
    PLINT pos = right ? PL_POSITION_RIGHT | PL_POSITION_OUTSIDE | PL_POSITION_VIEWPORT
                      : PL_POSITION_BOTTOM | PL_POSITION_INSIDE | PL_POSITION_SUBPAGE;
    /* Below the page: one row while three entries fit the width, else two
     * columns (labels naming machines and buffer kinds are long). */
    PLINT ncol = right ? 1 : n <= 3 ? (PLINT)n : n <= 6 ? 2 : 3;
    PLINT nrow = ((PLINT)n + ncol - 1) / ncol;
    pllegend(&w, &h, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX, pos, right ? 0.02 : 0.0,
             right ? 0.0 : 0.01, 0.08, 0, 2, 1, nrow, ncol, (PLINT)n, opt, 1.0, 0.9, 2.0, 0.0, tc,
             text, NULL, NULL, NULL, NULL, lc, ls, lw, sc, ss, sn, sym);
}

void plot_lines_panel(double x0, double x1, double y0, double y1, const char *title,
                      const char *xlabel, axis_unit xu, const char *ylabel, axis_unit yu,
                      const plot_line *lines, size_t n, int legend_right)
{
    static axis_unit units[2];
    units[0] = xu;
    units[1] = yu;
    double xlo, xhi, ylo, yhi;
    world_range(lines, n, 0, xu, &xlo, &xhi);
    world_range(lines, n, 1, yu, &ylo, &yhi);
    plvpor(x0, x1, y0, y1);
    plwind(xlo, xhi, ylo, yhi);
    plslabelfunc(label_fn, units);

    /* x ticks: every power of 2, 4 or 16, so that at most 9 labels of up to
     * four characters ("256M") fit the plot's width without touching. */
    double span = xhi - xlo;
    double xtick = span <= 8 ? 1 : span <= 18 ? 2 : 4;
    PLINT xsub = xu == UNIT_BYTES ? (PLINT)xtick : 1;
    plcol0(2);
    plwidth(1.0);
    plbox("g", xtick, xsub, "g", 1.0, 0);
    plcol0(1);
    plbox("bcnsto", xtick, xsub, "bcnstlvo", 1.0, 0);
    plmtex("b", 2.8, 0.5, 0.5, xlabel);
    plmtex("l", 6.6, 0.5, 0.5, ylabel);
    plschr(0, 1.15);
    /* A narrow panel (a wide legend beside it) would cut a centred title. */
    if (x1 - x0 < 0.5) plmtex("t", 1.2, 0.0, 0.0, title);
    else plmtex("t", 1.2, 0.5, 0.5, title);
    plschr(0, 0.95);

    for (size_t i = 0; i < n; i++) {
        const plot_line *l = &lines[i];
        PLFLT x[64], y[64], ex[64], elo[64], ehi[64];
        PLINT m = 0, me = 0;
        for (size_t k = 0; k < l->n && k < 64; k++) {
            double px = wx(xu, l->x[k]), py = log10(l->y[k]);
            if (!isfinite(px) || !isfinite(py)) continue;
            x[m] = px, y[m++] = py;
            if (l->lo[k] > 0 && l->hi[k] > 0)
                ex[me] = px, elo[me] = log10(l->lo[k]), ehi[me++] = log10(l->hi[k]);
        }
        if (m == 0) continue;
        plcol0(l->colour);
        pllsty(l->style);
        plwidth(2.2);
        if (m > 1) plline(m, x, y);
        pllsty(1);
        plwidth(1.4);
        if (me > 0) plerry(me, ex, elo, ehi);
        plstring(m, x, y, l->marker);
    }
    plwidth(1.0);
    pllsty(1);
    plcol0(1);
    if (legend_right >= 0) legend(lines, n, legend_right);
}

void plot_bars(const char *title, const char *ylabel, const plot_bar_group *g, size_t ng,
               const char *const *series, size_t nseries, const int *colours, int stacked,
               const char *value_fmt)
{
    double ymax = 0;
    for (size_t i = 0; i < ng; i++)
        for (size_t s = 0; s < (stacked ? 1 : nseries); s++) {
            double v = g[i].value[s] + (stacked ? g[i].stack[0] : 0);
            if (!stacked && g[i].hi[s] > v) v = g[i].hi[s];
            if (v > ymax) ymax = v;
        }
    if (!(ymax > 0)) ymax = 1;
    size_t per = stacked ? 1 : nseries;
    double slot = 1.0, bw = 0.8 / (double)per;
    plvpor(0.09, 0.72, 0.17, 0.90);
    plwind(0, slot * (double)ng, 0, ymax * 1.15);
    plcol0(2);
    plbox("", 0, 0, "g", 0, 0);
    plcol0(1);
    plbox("bc", 0, 0, "bcnstv", 0, 0);
    plmtex("l", 4.5, 0.5, 0.5, ylabel);
    plschr(0, 1.15);
    plmtex("t", 1.2, 0.5, 0.5, title);
    plschr(0, 0.95);
    for (size_t i = 0; i < ng; i++) {
        double left = slot * (double)i + 0.1;
        for (size_t s = 0; s < per; s++) {
            double v = g[i].value[s];
            if (v < 0) continue;
            double x0 = left + bw * (double)s, x1 = x0 + bw * 0.92;
            PLFLT bx[4] = {x0, x0, x1, x1}, by[4] = {0, v, v, 0};
            plcol0(colours[s]);
            plfill(4, bx, by);
            double top = v;
            if (!stacked && g[i].lo[s] > 0 && g[i].hi[s] > 0) {
                PLFLT ex = (x0 + x1) / 2, elo = g[i].lo[s], ehi = g[i].hi[s];
                plcol0(1);
                plerry(1, &ex, &elo, &ehi);
                if (ehi > top) top = ehi; /* the value's text above the whisker */
            }
            if (stacked && g[i].stack[0] > 0) {
                PLFLT sy[4] = {v, v + g[i].stack[0], v + g[i].stack[0], v};
                plcol0(colours[1]);
                plfill(4, bx, sy);
                top += g[i].stack[0];
            }
            char txt[32];
            snprintf(txt, sizeof txt, value_fmt, stacked ? top : v);
            plcol0(1);
            plschr(0, per > 4 ? 0.6 : 0.8);
            plptex((x0 + x1) / 2, top + ymax * 0.02, 1, 0, 0.5, txt);
            plschr(0, 0.95);
        }
        double centre = (slot * (double)i + slot / 2) / (slot * (double)ng);
        plmtex("b", 1.4, centre, 0.5, g[i].label[0]);
        plmtex("b", 2.7, centre, 0.5, g[i].label[1]);
    }
    /* Legend: one colour box per series. */
    PLINT opt[16], tc[16], bc[16], bp[16];
    PLFLT bs[16], blw[16], w, h;
    size_t nl = stacked ? 2 : nseries;
    for (size_t s = 0; s < nl && s < 16; s++) {
        opt[s] = PL_LEGEND_COLOR_BOX;
        tc[s] = 1;
        bc[s] = colours[s];
        bp[s] = 0;
        bs[s] = 1.0;
        blw[s] = 1.0;
    }
    pllegend(&w, &h, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
             PL_POSITION_RIGHT | PL_POSITION_OUTSIDE | PL_POSITION_VIEWPORT, 0.02,
             0.0, 0.05, 0, 2, 1, (PLINT)nl, 1, (PLINT)nl, opt, 1.0, 0.9, 2.0, 0.0, tc,
             (const char **)series, bc, bp, bs, blw, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
}

#define HBAR_ROW_PX 22
#define HBAR_TOP_PX 110
#define HBAR_BOTTOM_PX 90

int plot_hbars_height(size_t n)
{
    int h = HBAR_TOP_PX + HBAR_BOTTOM_PX + (int)n * HBAR_ROW_PX;
    return h > REPORT_PLOT_HEIGHT ? h : REPORT_PLOT_HEIGHT;
}

void plot_hbars(const char *title, const char *xlabel, const char *const *labels,
                const double *value, const double *stack, size_t n, const char *const *series,
                const int *colours, const char *value_fmt)
{
    double xmax = 0;
    for (size_t i = 0; i < n; i++)
        if (value[i] + stack[i] > xmax) xmax = value[i] + stack[i];
    if (!(xmax > 0)) xmax = 1;
    /* Rows keep their height in pixels whatever n is: the margins are fixed
     * pixels turned into fractions of this page's height. */
    double h = plot_hbars_height(n);
    double y0 = HBAR_BOTTOM_PX / h, y1 = 1.0 - HBAR_TOP_PX / h;
    /* PLplot sizes text by the page's smaller side: a page taller than wide
     * would get larger text, so scale it back to the 1000 x 650 page's. */
    double f = (double)REPORT_PLOT_HEIGHT / (h < REPORT_PLOT_WIDTH ? h : REPORT_PLOT_WIDTH);
    plvpor(0.40, 0.92, y0, y1);
    plwind(0, xmax * 1.25, (double)n, 0); /* row 0 at the top; room for the totals */
    plcol0(2);
    plbox("g", 0, 0, "", 0, 0);
    plcol0(1);
    plschr(0, 0.85 * f);
    plbox("bcnst", 0, 0, "bc", 0, 0);
    plmtex("b", 3.0, 0.5, 0.5, xlabel);
    /* The title on its own line above the legend, from the labels' left edge. */
    plschr(0, 1.1 * f);
    plmtex("t", 4.6, -0.7, 0.0, title);
    plschr(0, 0.75 * f);
    for (size_t i = 0; i < n; i++) {
        double top = (double)i + 0.15, bot = (double)i + 0.85, v = value[i] > 0 ? value[i] : 0;
        PLFLT bx[4] = {0, 0, v, v}, by[4] = {bot, top, top, bot};
        plcol0(colours[0]);
        plfill(4, bx, by);
        if (stack[i] > 0) {
            PLFLT sx[4] = {v, v, v + stack[i], v + stack[i]};
            plcol0(colours[1]);
            plfill(4, sx, by);
        }
        char txt[32];
        snprintf(txt, sizeof txt, value_fmt, v + (stack[i] > 0 ? stack[i] : 0));
        plcol0(1);
        plptex(v + (stack[i] > 0 ? stack[i] : 0) + xmax * 0.01, (double)i + 0.5, 1, 0, 0.0, txt);
        /* The label right-aligned just left of the frame, on the bar's row. */
        plmtex("lv", 0.8, 1.0 - ((double)i + 0.5) / (double)n, 1.0, labels[i]);
    }
    plschr(0, 0.95 * f);
    PLINT opt[2], tc[2], bc[2], bp[2];
    PLFLT bs[2], blw[2], w, lh;
    for (int k = 0; k < 2; k++) {
        opt[k] = PL_LEGEND_COLOR_BOX;
        tc[k] = 1;
        bc[k] = colours[k];
        bp[k] = 0;
        bs[k] = 1.0;
        blw[k] = 1.0;
    }
    /* Above the frame, in one row: never over a bar. */
    pllegend(&w, &lh, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
             PL_POSITION_TOP | PL_POSITION_OUTSIDE | PL_POSITION_VIEWPORT, 0.0, 0.01, 0.05, 0, 2,
             1, 1, 2, 2, opt, 1.0, 0.9 * f, 2.0, 0.0, tc, (const char **)series, bc, bp, bs, blw,
             NULL, NULL, NULL, NULL, NULL, NULL, NULL);
}

#else /* without PLplot: nothing draws, plot_available says so */

int plot_available(FILE *log)
{
    fprintf(log, "collbench report: built without PLplot: plots skipped "
            "(apt-get install libplplot-dev plplot-driver-cairo, then rebuild)\n");
    return 0;
}

#endif
