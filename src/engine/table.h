/* The nccl-tests-style table on stdout, printed row by row as sizes finish:
 *   bench_table_init -> print_header -> print_row (per size) -> print_footer
 * The footer reports the mean bus bandwidth over every printed cell (both
 * placements, as nccl-tests does) and the total of wrong elements. */
#ifndef BENCH_TABLE_H
#define BENCH_TABLE_H

#include <stdint.h>
#include <stdio.h>

#include "rows/result.h"

typedef struct bench_table {
    FILE *out;
    int verbose;      /* 1: min/p50/p99/max columns after each placement's #wrong */
    double busbw_sum; /* over cells printed since the last header */
    size_t busbw_cells;
    int64_t wrong_total; /* negative "wrong" (not checked) counts as 0 */
    size_t rows;
} bench_table;

void bench_table_init(bench_table *t, FILE *out, int verbose);

/* The configuration block and the column header. cfg gives collective, backend,
 * algo, device, nprocs, nnodes, dtype, op, warmup and iters (any row of the
 * configuration will do). Resets the footer's accumulators. */
void bench_table_print_header(bench_table *t, const bench_row *cfg);

/* One size. oop / ip: the out-of-place and in-place results; either may be NULL
 * when that placement was not run ("-" in its cells). root: -1 when the
 * collective has none. A negative "wrong" prints "N/A" (results not checked). */
void bench_table_print_row(bench_table *t, const bench_row *oop, const bench_row *ip, int root);

/* A "# text" line inside the table (e.g. "fewer iterations at 1G"). */
void bench_table_print_note(bench_table *t, const char *text);

/* "# Out of bounds values : N OK|FAILED" and "# Avg bus bandwidth    : X". */
void bench_table_print_footer(bench_table *t);

/* Mean busbw of the cells printed since the last header (0 if none). */
double bench_table_avg_busbw(const bench_table *t);

#endif
