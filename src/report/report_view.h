/* What plots and analysis look at: one line per collective x machine (host) x
 * device x buffer kind x backend x process count x node count, one point per
 * size (the first, i.e. preferred, row of that size in report_sort_dedup's
 * order, folded with the other passes of its configuration: report_passes.h).
 * Rows of two machines or two buffer kinds never share a line. */
#ifndef REPORT_VIEW_H
#define REPORT_VIEW_H

#include "report/report_data.h"

typedef struct report_series {
    const char *collective, *host, *device, *buffers, *backend;
    int nprocs, nnodes;
    const bench_row **pts; /* ascending bytes, one per size */
    size_t n;
    int64_t wrong; /* #wrong over every row of the series, not only pts; -1: none checked */
    int passes;    /* most passes behind one point (report_passes.h) */
} report_series;

typedef struct report_view {
    report_series *s;
    size_t n;
    bench_row *folded;        /* points measured in several passes, folded */
    const char **collectives; /* distinct, in report order */
    size_t ncollectives;
    /* Whether the series differ in these keys: labels name only what varies. */
    int many_hosts, many_devices, many_buffers, many_nnodes;
} report_view;

/* d must be sorted (report_sort_dedup); the view points into d. COLL_ENOMEM. */
int report_view_build(const report_data *d, report_view *v);
void report_view_free(report_view *v);

/* Same collective, machine, device, buffer kind and node count: the series
 * whose backends (and, with the same backend, process counts) may be compared. */
int report_series_same_setting(const report_series *a, const report_series *b);
/* Same setting and process count: a comparison of backends. */
int report_series_same_group(const report_series *a, const report_series *b);
/* The series like s (same setting and backend) with nprocs processes, or NULL. */
const report_series *report_view_find_procs(const report_view *v, const report_series *s,
                                            int nprocs);
/* The point of s at exactly bytes, or NULL. */
const bench_row *report_series_at(const report_series *s, uint64_t bytes);

/* Distinct sizes of g's comparison group (report_series_same_group),
 * ascending, into out (room for every point of v); how many. */
size_t report_group_sizes(const report_view *v, const report_series *g, uint64_t *out);

/* A backend's result in a comparison. */
typedef struct report_ranked {
    const report_series *s;
    const bench_row *r;
    double us; /* its median time */
} report_ranked;

/* The backends of g's group measured at bytes, fastest (median) first, into
 * out (room for v->n); how many. Only rows of one placement are ranked: the
 * one most of them have (in place on a tie). */
size_t report_rank_backends(const report_view *v, const report_series *g, uint64_t bytes,
                            report_ranked *out);

/* Of n ranked results, those that may be ranked against each other first (in
 * their order), the others after them; how many may. Results measured in
 * several interleaved passes are not ranked against one measured in a single
 * pass (a step of its own, as the suite's mpi and nccl): a transient that
 * lasts a whole step moves that step's cells only, and a rerun of both steps
 * has reversed such a claim (docs/PERFORMANCE.md). With none in several
 * passes, all may (a plain run, or older files). */
size_t report_rank_interleaved(report_ranked *rk, size_t n);

/* What tells s apart from the other series beyond collective, backend and
 * process count, to follow a name: " on cpubox, coll buffers" where machines
 * vary, ", coll buffers" where only buffer kinds do, "" when nothing varies. */
const char *report_series_where(const report_view *v, const report_series *s, char *buf,
                                size_t len);

/* The size the backend comparison uses: 100 MiB when some comparison group has
 * it for two backends or more, else the largest size measured on two backends
 * of one group, else the largest size; 0 when there is no communication row. */
uint64_t report_comparison_bytes(const report_view *v);

#endif
