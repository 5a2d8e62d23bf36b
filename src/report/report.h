/* collbench report: result files (CSV and JSON, communication and training) in;
 * combined.csv, markdown tables, analysis.txt, PNG/SVG plots and a
 * self-contained index.html out. The output depends on the input files only
 * (rows are sorted, nothing says "now"), so the same files give the same bytes. */
#ifndef REPORT_REPORT_H
#define REPORT_REPORT_H

#include <stddef.h>
#include <stdio.h>

/* report_run's "done, but some input was rejected" result (the CLI's exit 1). */
#define REPORT_INPUT_REJECTED 1

/* Bounds on one input file, far above what collbench writes (a suite's
 * results are well under a megabyte, a CSV line under 1 KiB): past them the
 * file or line is refused with the limit named, never read without end; a
 * file's bad lines are shown up to REPORT_LOG_SHOWN, then counted. */
#define REPORT_MAX_INPUT_BYTES ((size_t)64 << 20)
#define REPORT_MAX_LINE_BYTES ((size_t)64 << 10)
#define REPORT_LOG_SHOWN 5

/* Bounds on one report, checked after reading and merging, before anything is
 * written: past one, the report is refused (COLL_EINVAL, exit 2) naming the
 * count and the limit. The cost model's time grows faster than its rows (5,000
 * rows: 10 s on 2 cores), and PLplot draws nothing past some hundreds of lines
 * in one plot (350 failed). A suite writes a few thousand rows. */
#define REPORT_MAX_ROWS 20000 /* communication, training and replay rows */
#define REPORT_MAX_SERIES 128 /* lines of one collective's plots (report_view.h) */
#define REPORT_MAX_SIZES 1000 /* points of one line */
/* index.html shows at most this many rows of a full-results table (the
 * first ones, saying so); full_results.md and combined.csv have every row. */
#define REPORT_HTML_MAX_ROWS 1000

/* Reads files[0..n) and writes the report into outdir (created with its
 * parents). An existing outdir is refused unless force, which writes the report
 * files into it (overwriting them) and leaves every other file there alone, so
 * `collbench suite` can put the report next to its results. A missing, empty or
 * unreadable file, or a row that does not parse, is reported on log (stderr when
 * NULL) naming the file and line, and the rest is still processed.
 * Returns 0; REPORT_INPUT_REJECTED when something was rejected (everything
 * else written); COLL_EINVAL when outdir exists without force or the arguments
 * are bad (nothing written); COLL_ESYS when an output cannot be written
 * (every output goes through a temporary and a rename, so no file is left cut;
 * an outdir this call created is removed again, so a rerun is not refused).
 * Built without PLplot, plots are skipped with one line on log; that is not an
 * error. */
int report_run(const char *const *files, size_t n, const char *outdir, int force, FILE *log);

/* report_run with a baseline (collbench report --baseline): the run is
 * compared with earlier results of the same machine and configuration
 * (report_baseline.h); results of another machine are refused (COLL_EINVAL,
 * nothing written) unless cross_machine. */
typedef struct report_options {
    const char *const *files;
    size_t nfiles;
    const char *outdir;
    int force;
    FILE *log;
    const char *const *baseline; /* files, or directories holding results.csv/.json */
    size_t nbaseline;
    int cross_machine;
    double fail_pct; /* >= 0: *regressed = 1 when a cell slowed by more than this percentage */
    int *regressed;
} report_options;
int report_run_opts(const report_options *o);

/* 1 when this build draws plots (PLplot), else 0. */
int report_have_plots(void);

#endif
