/* A turn's measurements from every rank, summarized (replay_summarize), printed
 * as a table (replay_print) and turned into rows (replay_rows_jsonl; the
 * launcher writes them as CSV or JSON: replay_output.h).
 *
 * Over the ranks: total is the slowest rank's (the program ends with it);
 * communication, gaps and exposed communication (a rank's total minus the gaps
 * it spent) are the mean over ranks, and so are the times per collective and
 * size class (they add up to the communication), and so is the part of the
 * communication before a call's last rank arrived (replay_skew.h); calls are counted over all
 * ranks; busbw is every call's bytes times the engine's bus factor over the
 * calls' time. The median of one call per collective and size class, per
 * collective and overall comes from replay_median.h (the ranks' calls
 * position by position), set by the caller after replay_summarize. */
#ifndef REPLAY_REPORT_H
#define REPLAY_REPORT_H

#include <stdio.h>

#include "replay/replay_median.h"
#include "replay/replay_run.h"

typedef struct replay_summary {
    int world;
    double total_s, comm_s, gap_s, exposed_s, capped_gaps;
    int has_times; /* every rank's trace carries t0/t1 */
    double recorded_comm_s, recorded_total_s;
    double skew_s, recorded_skew_s;                  /* mean over ranks; NAN where a rank's is */
    replay_cell cell[REPLAY_OP_COUNT][REPLAY_NSIZE]; /* sums over the ranks */
    replay_medians med; /* NAN until the caller sets it (replay_median_gather) */
} replay_summary;

/* What the rows and the table say the turn was. */
typedef struct replay_turn {
    const char *trace;   /* as given on the command line */
    const char *backend; /* the communicators' backend */
    int pass, passes;    /* from 1 */
    const char *buffers; /* "malloc" | "coll" */
    const char *gaps;    /* "recorded" | "busy" | "none" */
    const char *overlap; /* "recorded" | "none": calls kept in flight as recorded or not */
    const char *bind;    /* "core" | "none" (or $COLL_BIND's): the ranks' placement */
    const char *plan;    /* "recorded": the program's plan; "probed": this machine's */
    size_t lanes;        /* communicators per group (replay_lanes); the table says so above 1 */
} replay_turn;

/* all: world measures, rank-major (the allgather's layout). */
void replay_summarize(const replay_measure *all, int world, replay_summary *s);
void replay_print(FILE *f, const replay_turn *turn, const replay_summary *s);
/* One JSON object a line: the turn's summary row (collective and size_class
 * "all"), then per collective that ran one per size class and one for the
 * collective overall (size_class "all"); their keys are the columns of
 * rows/replay_row.h. */
void replay_rows_jsonl(FILE *f, const replay_turn *turn, const replay_summary *s);

#endif
