/* The replay's result files: the rows rank 0 wrote (JSON lines, in the job's
 * private directory) as --csv and -J files, each written atomically
 * (core/atomic_file.h: a reader sees the old file or the new one). */
#ifndef REPLAY_OUTPUT_H
#define REPLAY_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

/* csv_path and json_path may be NULL (not written). 0, or -1 with err saying
 * which file and why (nothing half-written). Without jansson: -1. */
int replay_output_write(const char *rows_path, const char *csv_path, const char *json_path,
                        char *err, size_t errlen);

/* A CSV text field: quoted where it holds a comma, a quote or a line break
 * (quotes doubled); the rows above and --calls (replay_calls.h) alike. */
void replay_csv_text(FILE *f, const char *s);

#endif
