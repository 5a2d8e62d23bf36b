/* The replay row's field table and its parser (replay_row.h). */
#include "rows/replay_row.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One initializer per column kind, on one line each (clang-format would fold
 * the stringized name into the braces). */
/* clang-format off */
#define TEXT(f) { #f, BENCH_REPLAY_TEXT, offsetof(bench_replay_row, f), sizeof(((bench_replay_row *)0)->f) }
#define INT(f) { #f, BENCH_REPLAY_INT, offsetof(bench_replay_row, f), sizeof(int) }
#define NUM(f) { #f, BENCH_REPLAY_NUM, offsetof(bench_replay_row, f), sizeof(double) }
#define OPT(f) { #f, BENCH_REPLAY_OPT, offsetof(bench_replay_row, f), sizeof(double) }
/* clang-format on */

const bench_replay_field bench_replay_fields[BENCH_REPLAY_COLUMNS] = {
    TEXT(trace),
    TEXT(backend),
    INT(pass),
    INT(nprocs),
    TEXT(buffers),
    TEXT(gaps),
    TEXT(collective),
    TEXT(size_class),
    NUM(calls),
    NUM(time_s),
    OPT(recorded_s),
    OPT(ratio),
    NUM(busbw_GBps),
    OPT(total_s),
    OPT(comm_s),
    OPT(gap_s),
    OPT(exposed_s),
    OPT(median_s),
    OPT(recorded_median_s),
    TEXT(overlap),
    TEXT(bind),
    OPT(skew_s),
    OPT(recorded_skew_s),
};

#define HEADER_V1                                                                                 \
    "trace,backend,pass,nprocs,buffers,gaps,collective,size_class,calls,time_s,recorded_s,ratio," \
    "busbw_GBps,total_s,comm_s,gap_s,exposed_s"
#define HEADER_V2 HEADER_V1 ",median_s,recorded_median_s"
#define HEADER_V3 HEADER_V2 ",overlap"
#define HEADER_V4 HEADER_V3 ",bind"
#define HEADER HEADER_V4 ",skew_s,recorded_skew_s"
const char BENCH_REPLAY_CSV_HEADER[] = HEADER;
const bench_replay_header bench_replay_headers[BENCH_REPLAY_HEADERS] = {
    {HEADER, BENCH_REPLAY_COLUMNS},       {HEADER_V4, 21}, {HEADER_V3, 20}, {HEADER_V2, 19},
    {HEADER_V1, BENCH_REPLAY_COLUMNS_V1},
};

void bench_replay_row_init(bench_replay_row *r)
{
    memset(r, 0, sizeof *r);
    for (int i = 0; i < BENCH_REPLAY_COLUMNS; i++)
        if (bench_replay_fields[i].kind == BENCH_REPLAY_OPT)
            *(double *)((char *)r + bench_replay_fields[i].offset) = NAN;
}

int bench_replay_row_set(bench_replay_row *r, int i, const char *text, char *why, size_t whylen)
{
    if (i < 0 || i >= BENCH_REPLAY_COLUMNS) return snprintf(why, whylen, "no such column"), -1;
    const bench_replay_field *f = &bench_replay_fields[i];
    char *p = (char *)r + f->offset, *end = NULL;
    if (f->kind == BENCH_REPLAY_TEXT) {
        if (strlen(text) >= f->size)
            return snprintf(why, whylen, "%zu bytes, over the %zu it may hold", strlen(text),
                            f->size - 1),
                   -1;
        snprintf(p, f->size, "%s", text);
        return 0;
    }
    if ((!text[0] || !strcmp(text, "nan")) && f->kind == BENCH_REPLAY_OPT) {
        *(double *)p = NAN;
        return 0;
    }
    if (!text[0] || isspace((unsigned char)text[0]))
        return snprintf(why, whylen, "'%s' is not a number", text), -1;
    errno = 0;
    if (f->kind == BENCH_REPLAY_INT) {
        long v = strtol(text, &end, 10);
        if (*end || errno || v < 1 || v > 1 << 24)
            return snprintf(why, whylen, "'%s' is not an integer >= 1", text), -1;
        *(int *)p = (int)v;
        return 0;
    }
    double v = strtod(text, &end);
    if (*end || errno || !isfinite(v) || v < 0)
        return snprintf(why, whylen, "'%s' is not a number >= 0", text), -1;
    *(double *)p = v;
    return 0;
}

int bench_replay_row_is_summary(const bench_replay_row *r) { return !strcmp(r->collective, "all"); }

int bench_replay_row_check(const bench_replay_row *r, char *why, size_t whylen)
{
    static const char *const classes[] = {"all", "<64K", "64K-1M", "1M-16M", ">=16M"};
    int known = 0;
    for (size_t k = 0; k < sizeof classes / sizeof classes[0]; k++)
        known |= !strcmp(r->size_class, classes[k]);
    if (!known) return snprintf(why, whylen, "unknown size_class '%s'", r->size_class), -1;
    if (!r->trace[0] || !r->backend[0] || !r->collective[0])
        return snprintf(why, whylen, "trace, backend and collective must not be empty"), -1;
    if (bench_replay_row_is_summary(r) && strcmp(r->size_class, "all"))
        return snprintf(why, whylen, "a summary row (collective 'all') with size_class '%s'",
                        r->size_class),
               -1;
    if (!bench_replay_row_is_summary(r)) return 0;
    if (!isfinite(r->total_s) || !isfinite(r->comm_s) || !isfinite(r->gap_s) ||
        !isfinite(r->exposed_s))
        return snprintf(why, whylen, "a summary row without total_s, comm_s, gap_s or exposed_s"),
               -1;
    /* exposed = total - gaps per rank, so it cannot pass the slowest rank's total */
    if (r->exposed_s > r->total_s * (1 + 1e-6) + 1e-9)
        return snprintf(why, whylen, "exposed_s %g above total_s %g", r->exposed_s, r->total_s), -1;
    return 0;
}
