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

/* Reads files[0..n) and writes the report into outdir (created with its
 * parents). An existing outdir is refused unless force, which writes the report
 * files into it (overwriting them) and leaves every other file there alone, so
 * `collbench suite` can put the report next to its results. A missing, empty or
 * unreadable file, or a row that does not parse, is reported on log (stderr when
 * NULL) naming the file and line, and the rest is still processed.
 * Returns 0; REPORT_INPUT_REJECTED when something was rejected (everything
 * else written); COLL_EINVAL when outdir exists without force or the arguments
 * are bad (nothing written); COLL_ESYS when an output cannot be written.
 * Built without PLplot, plots are skipped with one line on log; that is not an
 * error. */
int report_run(const char *const *files, size_t n, const char *outdir, int force, FILE *log);

/* 1 when this build draws plots (PLplot), else 0. */
int report_have_plots(void);

#endif
