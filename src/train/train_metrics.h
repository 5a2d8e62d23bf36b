/* The rows of a training run (docs/DESIGN.md results.training / results.memory),
 * how a run becomes one, and their outputs: a CSV line (the --csv file and
 * rank 0's results pipe), a table line, and the JSON merge. */
#ifndef TRAIN_METRICS_H
#define TRAIN_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rows/train_row.h"
#include "train/train_memory.h"
#include "train/train_run.h"

typedef struct train_mem_row {
    char model[32];
    int batch;
    train_mem mem;
} train_mem_row;

extern const char TRAIN_CSV_HEADER[];

/* Fills the timing columns of row from a run of nprocs ranks of batch each.
 * scaling_eff is left at 0 (the caller knows the single-process baseline). */
void train_row_from_result(train_row *row, const train_result *res, int nprocs, int batch);
/* samples_per_s / (nprocs * baseline samples_per_s); 0 when no baseline. */
double train_scaling_eff(const train_row *row, double single_samples_per_s);

int train_row_to_csv(const train_row *r, char *buf, size_t len);
int train_row_from_csv(const char *line, train_row *r, char *err, size_t errlen);
int train_mem_row_to_csv(const train_mem_row *r, char *buf, size_t len);
int train_mem_row_from_csv(const char *line, train_mem_row *r, char *err, size_t errlen);

/* Append rows to a CSV file, header first when the file is new or empty; a
 * file with another header is refused. */
int train_csv_append(const char *path, const train_row *rows, size_t n, char *err, size_t errlen);
/* Before the run: could rows be appended to path? Nothing is created (the
 * header goes in with the first row). 0, or why not in err. */
int train_csv_check(const char *path, char *err, size_t errlen);

void train_table_header(FILE *f);
void train_table_line(FILE *f, const train_row *r);
void train_mem_table(FILE *f, const train_mem_row *rows, size_t n);

/* Merge the rows into path's results.training.<model> and results.memory.<model>
 * arrays (bench_json_merge_section). COLL_EUNAVAIL without jansson. */
int train_json_write(const char *path, int world_size, const char *config_json,
                     const train_row *rows, size_t n, const train_mem_row *mem, size_t nmem,
                     char *err, size_t errlen);

#endif
