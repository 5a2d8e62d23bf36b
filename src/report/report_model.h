/* The cost model in the report (docs/DESIGN.md "Cost model"): model curves
 * for the time-vs-size panels, a fit-quality line per fitted series and the
 * "what if" table, every model number labelled as a prediction. */
#ifndef REPORT_MODEL_H
#define REPORT_MODEL_H

#include "costmodel/model_fit.h"
#include "report/report_data.h"
#include "report/report_plot.h"
#include "report/report_text.h"
#include "report/report_view.h"

/* The cores each machine of d recorded (machines.<host>.cores), for
 * model_fit_rows: out holds REPORT_MAX_MACHINES and points into d. */
size_t report_model_cores(const report_data *d, model_host_cores *out);

/* The fitted series whose rows s's points are (same machine, backend, buffer
 * kind, collective, algorithm and dtype), or NULL. */
const model_series *report_model_of(const model_fits *f, const report_series *s);

/* s's model curve at s's sizes as a dashed line without markers, labelled
 * "model prediction"; 0 when s has no fit or the fit cannot predict its shape. */
int report_model_curve(const model_fits *f, const report_series *s, plot_line *l);

/* The "Cost model (predictions)" section of index.html: a fit-quality line per
 * series (or why it cannot be fitted) and, per fitted series, the "what if"
 * table. f: the fit of the report's rows (NULL: it could not be made, out of
 * memory). Nothing when the report has no communication row. */
void report_model_html(const report_data *d, const model_fits *f, sbuf *out);

#endif
