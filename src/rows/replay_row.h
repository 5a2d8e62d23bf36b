/* One row of collbench replay's results (docs/DESIGN.md "Replay": the --csv
 * columns, the -J file's "rows"): written by the replay (src/replay, through
 * this field table), read back by collbench report. A turn's first row is its
 * summary (collective and size_class "all", total_s, comm_s, gap_s and
 * exposed_s filled); then per collective that ran one per size class and one
 * for the collective overall (size_class "all"). */
#ifndef ROWS_REPLAY_ROW_H
#define ROWS_REPLAY_ROW_H

#include <stddef.h>

typedef struct bench_replay_row {
    char trace[512]; /* as given to collbench replay */
    char backend[16];
    int pass, nprocs;                    /* pass from 1 */
    char buffers[8];                     /* malloc | coll */
    char gaps[12];                       /* recorded | busy | none */
    char collective[16], size_class[12]; /* "all" in a turn's summary row */
    double calls;                        /* over all ranks */
    double time_s;                       /* mean per rank; the summary's: its communication */
    /* NAN where absent (empty in the CSV, null in the JSON): recorded_s and
     * ratio without the trace's own times, the last four outside a summary row */
    double recorded_s, ratio, busbw_GBps, total_s, comm_s, gap_s, exposed_s;
    /* one call's time, replayed and recorded (replay/replay_median.h: each call
     * position's mean over the ranks, the median over the calls); absent in
     * files written before them and where no time was recorded */
    double median_s, recorded_median_s;
    /* recorded: calls kept in flight together as the program kept them; none:
     * each call alone; "" in files written before the column */
    char overlap[12];
    /* core: each rank pinned to a core; none: placed by the scheduler (or
     * $COLL_BIND's value); "" in files written before the column */
    char bind[16];
    /* a summary row's: of comm_s and recorded_s, the time in collectives
     * before their last rank arrived (replay/replay_skew.h); absent elsewhere,
     * in files written before them, and recorded where the traces were on
     * several clocks */
    double skew_s, recorded_skew_s;
} bench_replay_row;

typedef enum bench_replay_kind {
    BENCH_REPLAY_TEXT, /* a char array of size bytes */
    BENCH_REPLAY_INT,  /* int >= 1 */
    BENCH_REPLAY_NUM,  /* double >= 0, required */
    BENCH_REPLAY_OPT,  /* double >= 0, or absent (NAN) */
} bench_replay_kind;

/* The columns, in the CSV's order; the writer and the readers walk it. */
typedef struct bench_replay_field {
    const char *name;
    bench_replay_kind kind;
    size_t offset, size;
} bench_replay_field;
#define BENCH_REPLAY_COLUMNS 23
extern const bench_replay_field bench_replay_fields[BENCH_REPLAY_COLUMNS];
/* The oldest files have the first 17 columns, the rest absent. */
#define BENCH_REPLAY_COLUMNS_V1 17

/* The CSV header line (no newline): the names of bench_replay_fields. */
extern const char BENCH_REPLAY_CSV_HEADER[];
/* The headers collbench replay has written, newest first, each the names of
 * the first ncols fields: before the medians 17, before overlap 19, before
 * bind 20, before the skew 21. */
typedef struct bench_replay_header {
    const char *line; /* no newline */
    int ncols;
} bench_replay_header;
#define BENCH_REPLAY_HEADERS 5
extern const bench_replay_header bench_replay_headers[BENCH_REPLAY_HEADERS];

/* Clears r: text empty, numbers 0, optional numbers NAN. */
void bench_replay_row_init(bench_replay_row *r);
/* Field i of r from text ("" or "nan" is absent: allowed for an optional
 * number only). 0, or -1 with why ("'x' is not a number", "too long"). */
int bench_replay_row_set(bench_replay_row *r, int i, const char *text, char *why, size_t whylen);
/* The row as a whole: a known size class ("all" in a summary row), a summary
 * row with its four times and total_s no less than the exposed communication.
 * 0, or -1 with why. */
int bench_replay_row_check(const bench_replay_row *r, char *why, size_t whylen);
/* 1 for a turn's summary row (collective "all"). */
int bench_replay_row_is_summary(const bench_replay_row *r);

#endif
