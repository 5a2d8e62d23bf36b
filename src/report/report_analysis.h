/* analysis.txt: sentences computed from the results. */
#ifndef REPORT_ANALYSIS_H
#define REPORT_ANALYSIS_H

#include "report/report_data.h"
#include "report/report_text.h"
#include "report/report_view.h"

/* p99 at least this many times p50 makes a row "noisy". */
#define REPORT_NOISY_RATIO 3.0

/* The largest size whose time the analysis calls a latency. */
#define REPORT_LATENCY_MAX_BYTES (64u << 10)

/* Appends the analysis (plain text, one sentence per line, blank lines between
 * sections) to out. d sorted; v built from d. */
void report_analysis(const report_data *d, const report_view *v, sbuf *out);

#endif
