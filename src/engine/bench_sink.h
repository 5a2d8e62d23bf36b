/* Where measured rows go. In rank 0 under our launcher (COLL_RESULTS_FD set):
 * one CSV line per row down the results pipe, and the launcher owns the files.
 * Otherwise (the launcher itself, or a rank started by torchrun/mpirun): each
 * row is appended to --csv at once, so rows measured before a crash are kept,
 * and the rows not yet in --json are written by bench_sink_flush. */
#ifndef BENCH_SINK_H
#define BENCH_SINK_H

#include <stddef.h>

#include "rows/result.h"

typedef struct bench_sink {
    int results_fd;        /* -1: write the files here */
    const char *csv_path;  /* NULL: no CSV */
    const char *json_path; /* NULL: no JSON */
    bench_json_meta meta;
    bench_row *pending; /* rows not yet written to json_path */
    size_t npending, cap;
    int status; /* first failure (0 if none); message in err */
    char err[512];
} bench_sink;

/* use_results_fd: read COLL_RESULTS_FD from the environment (ranks only). */
void bench_sink_init(bench_sink *s, int use_results_fd, const char *csv_path, const char *json_path,
                     const bench_json_meta *meta);

/* Before the run: can the files be written? 0, or the status with "--csv: why"
 * or "-J: why" in err (COLL_EUNAVAIL: -J without jansson). Nothing is created.
 * Always 0 in a rank that sends its rows to the launcher. */
int bench_sink_check(const bench_sink *s, char *err, size_t errlen);

/* Every result file of a run: s's (may be NULL), then --per-iter's path (may
 * be NULL, "--per-iter: why" in err); 0 or bench_sink_check's status. */
int bench_outputs_check(const bench_sink *s, const char *per_iter_path, char *err, size_t errlen);

/* Hand over one row. A failure is remembered (s->status, s->err), returned, and
 * later rows still try: a full disk must not stop the benchmark. */
int bench_sink_add(bench_sink *s, const bench_row *r);

/* Write the pending rows to the JSON file (merged into what is there). */
int bench_sink_flush(bench_sink *s);

void bench_sink_free(bench_sink *s);

#endif
