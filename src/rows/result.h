/* One measured row: the schema of docs/DESIGN.md, shared by CSV, JSON and the table. */
#ifndef ROWS_RESULT_H
#define ROWS_RESULT_H

#include <stddef.h>
#include <stdint.h>

typedef struct bench_row {
    char timestamp[32]; /* ISO 8601 UTC, "2026-11-22T03:04:05Z" */
    char host[64];
    char collective[16]; /* allreduce, allgather, ... */
    char backend[16];
    char algo[24];   /* algorithm asked for ("auto" or a name) */
    char device[8];  /* cpu | cuda */
    char buffers[8]; /* malloc (private) | coll (coll_alloc: shm's shared heap) | cuda */
    int nprocs, nnodes;
    char dtype[12];
    char op[8];   /* "none" for collectives without a reduction */
    int in_place; /* 0 | 1 */
    uint64_t bytes, count;
    int warmup, iters;
    /* the slowest rank's time per iteration; p25/p75 give the spread the report
     * judges differences by (NaN in rows read from files that lack them) */
    double time_us_avg, time_us_min, time_us_p25, time_us_p50, time_us_p75, time_us_p99,
        time_us_max;
    double algbw_GBps, busbw_GBps;
    int64_t wrong;
    int pass; /* which pass of --passes, from 1; 0 in rows of files without the column */
} bench_row;

/* The CSV header line (no newline). */
extern const char BENCH_CSV_HEADER[];
/* The header of files written before the pass column (BENCH_CSV_HEADER less
 * its last column): read (bench_row_from_csv_v2), and appended to in that
 * schema, so a file never mixes the two. */
extern const char BENCH_CSV_HEADER_V2[];
/* The header of files written before the buffers, p25 and p75 columns: read
 * (bench_row_from_csv_v1), never appended to. */
extern const char BENCH_CSV_HEADER_V1[];
/* What rows read from such files say of their buffers. */
#define BENCH_BUFFERS_UNKNOWN "unknown"

/* One CSV line for r, no newline; returns length or -1 if it does not fit (or a
 * text field holds a line break). Times print with 3 decimals, bandwidths with
 * 6 significant digits (%.6g), integers plain; text with a comma or quote is
 * quoted as in RFC 4180. */
int bench_row_to_csv(const bench_row *r, char *buf, size_t len);
/* Parse one CSV data line (a trailing \n or \r\n is ignored); COLL_EINVAL with a
 * reason naming the field otherwise (field count, non-numbers, in_place not 0/1,
 * nprocs/nnodes < 1, text longer than its bench_row array). r is untouched on error. */
int bench_row_from_csv(const char *line, bench_row *r, char *err, size_t errlen);
/* The same for a line under BENCH_CSV_HEADER_V2: pass becomes 0 (unknown). */
int bench_row_from_csv_v2(const char *line, bench_row *r, char *err, size_t errlen);
/* The same for a line under BENCH_CSV_HEADER_V1: buffers becomes "unknown" and
 * p25/p75 NaN, since nothing recorded them. */
int bench_row_from_csv_v1(const char *line, bench_row *r, char *err, size_t errlen);

/* Append rows to a CSV file: header first if the file is new or empty; to a file
 * of BENCH_CSV_HEADER_V2, rows in that schema (no pass); refusing a file whose
 * header differs ("FILE has a different header; refusing to mix schemas",
 * COLL_EINVAL, file untouched); header and rows go in one O_APPEND write
 * + fsync (coll__file_append), so rows already there are never lost and a failed
 * write is rolled back. A device or pipe (/dev/stdout) gets a header on every call.
 * Full disk etc.: COLL_ESYS with "path: strerror" in err. */
int bench_csv_append(const char *path, const bench_row *rows, size_t n, char *err, size_t errlen);
/* Before the run: could rows be appended to path? Nothing is created (the header
 * goes in with the first row, so a run that fails leaves no header-only file).
 * 0, or an error as bench_csv_append's: a directory, a missing directory, no
 * permission, another header. */
int bench_csv_check(const char *path, char *err, size_t errlen);

typedef struct bench_json_meta {
    const char *name; /* "collbench" */
    int world_size;   /* largest process count in the run */
    int warmup_iters, benchmark_iters;
    const char *device;
    const char *extra_config_json; /* optional JSON object text merged into "config", or NULL */
} bench_json_meta;

/* Write (or merge into an existing file's "results.communication") the rows in the
 * docs/DESIGN.md schema: written to path.tmp.<pid>, fsynced, renamed. Merging keeps every
 * existing row, section and key; appends rows under their collective; world_size
 * becomes the max; "timestamp" stays the first write's; this run's config keys
 * win. An existing file that is not a JSON object (or whose results sections have
 * other types) is refused with COLL_EINVAL naming it, and left untouched; an empty
 * file counts as new. Non-finite numbers are written as null. COLL_EUNAVAIL when
 * built without jansson. */
int bench_json_write(const char *path, const bench_json_meta *meta, const bench_row *rows, size_t n,
                     char *err, size_t errlen);
/* Before the run: could bench_json_write (or bench_json_merge_rows) merge into
 * path? Nothing is created. 0, or what the write would refuse: not a JSON
 * object, results sections of other types, a directory, a missing directory,
 * no permission; COLL_EUNAVAIL when built without jansson. */
int bench_json_check(const char *path, char *err, size_t errlen);

/* Set "machines.<host>.<key>" = value in the file at path (created, with empty
 * results sections, when absent): facts about a machine recorded once per run,
 * e.g. "memcpy_GBps" (mem_copy_rate.h). Same merge and refusal rules as
 * bench_json_write; COLL_EUNAVAIL when built without jansson. */
int bench_json_set_machine(const char *path, const char *host, const char *key, double value,
                           char *err, size_t errlen);

/* Merge rows_json (the text of a JSON array of row objects) into
 * "results.<section>.<group>" (created as needed) of the file at path, under the
 * rules of bench_json_write: meta merged the same way, the file replaced
 * atomically, a file or section of another type refused and left untouched.
 * For sections other than "communication" ("training", "memory"). */
int bench_json_merge_rows(const char *path, const bench_json_meta *meta, const char *section,
                          const char *group, const char *rows_json, char *err, size_t errlen);

#endif
