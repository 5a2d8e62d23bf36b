/* The replay section of a report (docs/DESIGN.md "The report"): collbench
 * replay's rows (rows/replay_row.h) per trace and setting (ranks, buffers,
 * gaps), each backend's passes folded (the median, and the range the passes
 * span). A finding a trace: what each backend spends in communication of the
 * trace's total and how much of it is exposed, and which backend's
 * communication is shorter beyond noise ("within noise" where the passes'
 * ranges overlap; one pass has no range to judge by, and says so); a table of
 * communication against compute (the recorded gaps) per backend; per trace the
 * largest costs first, per collective and size class, replayed beside recorded
 * where the trace had times, and one call's median time beside them
 * (replay/replay_median.h). */
#ifndef REPORT_REPLAY_H
#define REPORT_REPLAY_H

#include <stddef.h>

#include "report/report_data.h"
#include "report/report_table.h"
#include "report/report_text.h"

/* Rows of a largest-costs table shown; the rest are counted under it. */
#define REPORT_REPLAY_MAX_COSTS 24

typedef struct report_replay {
    rtable *t; /* the summary table, then one largest-costs table per setting */
    size_t n;
    int oom;
} report_replay;

/* The tables of d's replay rows (d sorted: report_sort_dedup); none without. */
void report_replay_build(const report_data *d, report_replay *r);
void report_replay_free(report_replay *r);

/* One sentence a trace and setting, each a line, appended to out. */
void report_replay_findings(const report_data *d, sbuf *out);

/* The section of index.html: a heading, what the numbers are, the tables.
 * Nothing without replay rows. */
void report_replay_html(const report_replay *r, sbuf *out);
/* The same for analysis.txt and summary_by_config.md (markdown tables). */
void report_replay_md(const report_replay *r, sbuf *out);

#endif
