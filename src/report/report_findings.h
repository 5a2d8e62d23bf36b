/* The answer first: at most about eight sentences and one compact table at the
 * top of analysis.txt and index.html. Per machine, which backend is fastest
 * for which sizes and process counts (with its margin over the runner-up, or
 * "within noise" by the report's spread rule, passes folded: report_spread.h,
 * report_passes.h), what the backend's own buffers gain over private ones,
 * what communication costs a training step and what overlap saves, what a
 * replayed trace spends in communication per backend (report_replay.h), and the
 * anomalies; every comparison behind it stays below, in the analysis. */
#ifndef REPORT_FINDINGS_H
#define REPORT_FINDINGS_H

#include "report/report_data.h"
#include "report/report_table.h"
#include "report/report_text.h"
#include "report/report_view.h"

/* Machines named in the sentences; further ones are in the table only. */
#define REPORT_FINDINGS_MACHINES 3

/* Appends the heading "Findings", lead (sentences that go first, e.g. the
 * comparison with a baseline; NULL for none), the sentences (one a line) to
 * out, and fills t (report_table_init'ed here;
 * the caller frees it): one row per machine, buffer kind, process count and
 * range of sizes with the same fastest backend, of the first collective. */
void report_findings(const report_data *d, const report_view *v, const char *lead, sbuf *out,
                     rtable *t);

#endif
