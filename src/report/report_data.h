/* The rows a report is made of: communication rows (bench_row, the docs/DESIGN.md
 * CSV schema), training rows, memory rows and replay rows (collbench replay's
 * --csv and -J), as read from any number of files. */
#ifndef REPORT_DATA_H
#define REPORT_DATA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rows/replay_row.h"
#include "rows/result.h"
#include "rows/train_row.h"
#include "report/report.h"

typedef train_row report_train_row; /* the rows collbench train writes */

typedef struct report_mem_row {
    char model[32];
    int batch;
    int64_t params_bytes, grads_bytes, optim_bytes, activations_bytes, comm_buffers_bytes,
        peak_rss_bytes;
} report_mem_row;

/* A fact recorded once per run for a machine (results.json "machines"). */
typedef struct report_machine {
    char host[64];      /* as in the rows' host field */
    double memcpy_GBps; /* single-thread memory-copy rate (mem_copy_rate.h); 0: not recorded */
    int cores;          /* the cores its ranks could run on; 0: not recorded */
} report_machine;
#define REPORT_MAX_MACHINES 64

typedef struct report_data {
    bench_row *comm;
    size_t ncomm, comm_cap;
    report_train_row *train;
    size_t ntrain, train_cap;
    report_mem_row *mem;
    size_t nmem, mem_cap;
    bench_replay_row *replay;
    size_t nreplay, replay_cap;
    report_machine machines[REPORT_MAX_MACHINES]; /* the last file's value wins */
    size_t nmachines;
} report_data;

/* Append one row (copied); COLL_ENOMEM. */
int report_add_comm(report_data *d, const bench_row *r);
int report_add_train(report_data *d, const report_train_row *r);
int report_add_mem(report_data *d, const report_mem_row *r);
int report_add_replay(report_data *d, const bench_replay_row *r);
void report_data_free(report_data *d);

struct report_log;

/* Reads one CSV or JSON file (told apart by its first non-blank byte: '{' is
 * JSON) into d, within the bounds of report.h. Every rejected file or row is
 * one line on log naming the file and line (JSON: the line of a syntax error,
 * else the row's JSON path), at most REPORT_LOG_SHOWN a file and then their count;
 * rows with impossible values (report_check.h) are rejected too.
 * Returns 0, REPORT_INPUT_REJECTED, or COLL_ENOMEM. */
int report_read_file(report_data *d, const char *path, FILE *log);
/* The same for a file's text (NUL-terminated at len), its messages on log. */
int report_read_text(report_data *d, const char *text, size_t len, struct report_log *log);
int report_read_csv(report_data *d, const char *text, size_t len, struct report_log *log);
int report_read_json(report_data *d, const char *text, size_t len, struct report_log *log);

/* Sorts every section into the report's order (collective, host, device,
 * buffers, node count, backend, process count, size, then the preferred variant
 * first: float32, out of place, sum, auto algorithm, newest; training rows by
 * model, mode, host, backend, process count, batch, bucket, compress) and drops exact duplicates (same CSV text), e.g. the
 * same run given as CSV and JSON. Returns how many rows were dropped. */
size_t report_sort_dedup(report_data *d);

/* Position of a collective in the report (allreduce first, unknown ones last). */
int report_collective_rank(const char *name);

#endif
