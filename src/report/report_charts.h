/* Interactive plots in index.html: the small multiples of report_grid.h drawn
 * in the browser by Chart.js (Debian's libjs-chart.js), its file inlined into
 * the page at report time so that the page still needs no network. Hover
 * shows a point's median and spread, a click on a legend entry hides its
 * series, both axes are logarithmic. Without the library the page keeps the
 * PNG plots and says in one line how to get the interactive view. */
#ifndef REPORT_CHARTS_H
#define REPORT_CHARTS_H

#include <stddef.h>

#include "costmodel/model_fit.h"
#include "report/report_text.h"
#include "report/report_view.h"

/* Where Debian installs Chart.js; COLLBENCH_CHARTJS names another file (an
 * empty value or a missing file: no library, the images only). */
#define REPORT_CHARTJS_PATH "/usr/share/javascript/chart.js/chart.min.js"
#define REPORT_CHARTJS_MAX_BYTES ((size_t)4 << 20)

/* The library's text (malloc'd) or NULL with why (one line for the page). */
char *report_chartjs_load(char *why, size_t whylen);

/* The interactive section: a grid of charts per collective and metric (time,
 * bus bandwidth), the data as JSON, the library and the glue that draws them.
 * fits (NULL: none): the cost model fitted to the rows, whose curve (dashed,
 * labelled a prediction) joins each time panel, as in the PNG/SVG plots. */
void report_charts_html(const report_view *v, const model_fits *fits, const char *chartjs,
                        sbuf *out);

#endif
