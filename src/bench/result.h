/* One measured row: the schema of DESIGN.md, shared by CSV, JSON and the table. */
#ifndef BENCH_RESULT_H
#define BENCH_RESULT_H

#include <stddef.h>
#include <stdint.h>

typedef struct bench_row {
    char timestamp[32];   /* ISO 8601 UTC, "2026-11-22T03:04:05Z" */
    char host[64];
    char collective[16];  /* allreduce, allgather, ... */
    char backend[16];
    char algo[16];        /* algorithm asked for ("auto" or a name) */
    char device[8];       /* cpu | cuda */
    int nprocs, nnodes;
    char dtype[12];
    char op[8];           /* "none" for collectives without a reduction */
    int in_place;         /* 0 | 1 */
    uint64_t bytes, count;
    int warmup, iters;
    double time_us_avg, time_us_min, time_us_p50, time_us_p99, time_us_max;
    double algbw_GBps, busbw_GBps;
    int64_t wrong;
} bench_row;

/* The CSV header line (no newline). */
extern const char BENCH_CSV_HEADER[];

/* One CSV line for r, no newline; returns length or -1 if it does not fit. */
int bench_row_to_csv(const bench_row *r, char *buf, size_t len);
/* Parse one CSV data line; COLL_EINVAL with a reason naming the field otherwise. */
int bench_row_from_csv(const char *line, bench_row *r, char *err, size_t errlen);

/* Append rows to a CSV file: header first if the file is new or empty, refusing a
 * file whose header differs; O_APPEND and fsync, so rows already there are never
 * lost. Full disk etc.: COLL_ESYS with the path and strerror in err. */
int bench_csv_append(const char *path, const bench_row *rows, size_t n, char *err, size_t errlen);

typedef struct bench_json_meta {
    const char *name;       /* "collbench" */
    int world_size;         /* largest process count in the run */
    int warmup_iters, benchmark_iters;
    const char *device;
    const char *extra_config_json; /* optional JSON object text merged into "config", or NULL */
} bench_json_meta;

/* Write (or merge into an existing file's "results.communication") the rows in the
 * DESIGN.md schema: written to path.tmp, fsynced, renamed. COLL_EUNAVAIL when
 * built without jansson. */
int bench_json_write(const char *path, const bench_json_meta *meta, const bench_row *rows,
                     size_t n, char *err, size_t errlen);

#endif
