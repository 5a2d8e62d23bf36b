/* Small multiples: the panels of a "vs size" figure of one collective. A
 * panel is one machine (host, device, node count) and process count, its
 * lines the backends (colour) x buffer kinds (marker); where that would put
 * more than REPORT_GRID_MAX_LINES lines in a panel, the machine's panels are
 * split by buffer kind, then in chunks. A machine (and buffer kind, when
 * split) starts a row of panels, wrapped at REPORT_GRID_MAX_COLS. The plots
 * (PNG/SVG) and the interactive charts of index.html use the same panels. */
#ifndef REPORT_GRID_H
#define REPORT_GRID_H

#include <stddef.h>

#include "report/report_view.h"

#define REPORT_GRID_MAX_LINES 8
#define REPORT_GRID_MAX_COLS 3

typedef struct grid_panel {
    char title[32];     /* "4 processes", "4 processes (2)" */
    char row_title[96]; /* what the row is: "cpubox, cpu, coll buffers"; "" when one machine */
    const report_series *s[REPORT_GRID_MAX_LINES];
    size_t n;
    int row, col;
} grid_panel;

typedef struct report_grid {
    grid_panel *p;
    size_t n;
    int nrows, ncols;
    /* every backend and buffer kind of the panels, for the key */
    const char *backends[16], *buffers[8];
    size_t nbackends, nbuffers;
} report_grid;

/* The panels of collective's series in v (none: g->n == 0). 0 or COLL_ENOMEM. */
int report_grid_build(const report_view *v, const char *collective, report_grid *g);
void report_grid_free(report_grid *g);

#endif
