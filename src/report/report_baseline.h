/* A run against an earlier one (collbench report --baseline): the cells (a
 * series' point: collective, machine, device, buffer kind, backend, process and
 * node count, size) measured in both, and those that moved beyond the report's
 * noise rule (report_spread.h: p25-p75 spreads that do not overlap, passes
 * folded). Runs of different machines are refused unless cross_machine, and
 * then every line says so. */
#ifndef REPORT_BASELINE_H
#define REPORT_BASELINE_H

#include <stddef.h>

#include "report/report_table.h"
#include "report/report_text.h"
#include "report/report_view.h"

typedef struct baseline_cell {
    const report_series *s;      /* of the run */
    const bench_row *now, *then; /* medians and spreads */
    double ratio;                /* now's time over then's: > 1 slower */
} baseline_cell;

typedef struct report_baseline {
    baseline_cell *moved; /* beyond noise, slowest first */
    size_t nmoved, nslower, compared;
    int cross; /* machines differ (allowed by cross_machine) */
    char hosts_now[128], hosts_then[128];
} report_baseline;

/* Compares now with then. 0; COLL_EINVAL with err when the machines (hosts)
 * differ and !cross_machine, or when cross_machine joins runs of more than one
 * machine each (ambiguous); COLL_ENOMEM. */
int report_baseline_compare(const report_view *now, const report_view *then, int cross_machine,
                            report_baseline *b, char *err, size_t errlen);
void report_baseline_free(report_baseline *b);

/* The finding (one sentence, a line) and the table of cells that moved. */
void report_baseline_sentence(const report_baseline *b, sbuf *out);
void report_baseline_table(const report_baseline *b, rtable *t);

/* The largest slowdown in percent (0 when none slowed). */
double report_baseline_worst_pct(const report_baseline *b);

#endif
