/* The messages about one input file of the report. A file of junk must not
 * flood the terminal (at most REPORT_LOG_SHOWN problems are shown, the rest
 * counted), and text echoed from the file must not drive it (control bytes
 * are written as \xNN). */
#ifndef REPORT_LOG_H
#define REPORT_LOG_H

#include <stddef.h>
#include <stdio.h>

#include "report/report.h" /* REPORT_LOG_SHOWN */

typedef struct report_log {
    FILE *f;          /* where the messages go */
    const char *path; /* the input file they are about */
    size_t problems;  /* how many were reported, shown or not */
} report_log;

/* One problem: "collbench report: <message>" on its own line while fewer than
 * REPORT_LOG_SHOWN were shown, else only counted. */
__attribute__((format(printf, 2, 3))) void report_log_problem(report_log *l, const char *fmt, ...);

/* After the file: "... and N more bad lines in PATH" when some were not shown. */
void report_log_done(const report_log *l);

/* s[0..n) with control bytes (NUL included) as \xNN, cut to fit out (with
 * "..." when cut); returns out. */
const char *report_log_escape(const char *s, size_t n, char *out, size_t outlen);
/* The same with bytes over 0x7f as \xNN too: where an invisible byte (a BOM,
 * a UTF-16 file) is what is wrong. */
const char *report_log_escape_ascii(const char *s, size_t n, char *out, size_t outlen);

#endif
