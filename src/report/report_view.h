/* What plots and analysis look at: one line per collective x backend x process
 * count, one point per size (the first, i.e. preferred, row of that size in
 * report_sort_dedup's order). */
#ifndef REPORT_VIEW_H
#define REPORT_VIEW_H

#include "report/report_data.h"

typedef struct report_series {
    const char *collective, *backend;
    int nprocs;
    const bench_row **pts; /* ascending bytes, one per size */
    size_t n;
    int64_t wrong;          /* #wrong over every row of the series, not only pts */
} report_series;

typedef struct report_view {
    report_series *s;
    size_t n;
    const char **collectives; /* distinct, in report order */
    size_t ncollectives;
} report_view;

/* d must be sorted (report_sort_dedup); the view points into d. COLL_ENOMEM. */
int report_view_build(const report_data *d, report_view *v);
void report_view_free(report_view *v);

/* The series of v for (collective, backend, nprocs), or NULL. */
const report_series *report_view_find(const report_view *v, const char *collective,
                                      const char *backend, int nprocs);
/* The point of s at exactly bytes, or NULL. */
const bench_row *report_series_at(const report_series *s, uint64_t bytes);

/* The size the backend comparison uses: 100 MiB when some collective has it
 * for two backends or more, else the largest size measured on two backends,
 * else the largest size; 0 when there is no communication row. */
uint64_t report_comparison_bytes(const report_view *v);

#endif
