/* Field tables of the training and memory rows (the communication row's is
 * bench_row's, in src/rows/result_csv.c): one table walked by the CSV and the
 * JSON reader and by the training CSV writer, so they cannot disagree. */
#ifndef REPORT_FIELDS_H
#define REPORT_FIELDS_H

#include <stddef.h>

typedef enum rf_kind { RF_STR, RF_INT, RF_I64, RF_DBL } rf_kind;

typedef struct rfield {
    const char *name;
    rf_kind kind;
    size_t offset, size;
    int optional; /* may be missing from a JSON row (timestamp, host) */
} rfield;

typedef struct rschema {
    const char *what; /* "training", "memory" */
    const rfield *fields;
    size_t nfields;
} rschema;

extern const rschema REPORT_TRAIN_SCHEMA; /* report_train_row */
extern const rschema REPORT_MEM_SCHEMA;   /* report_mem_row */

/* The training CSV header (no newline). */
extern const char REPORT_TRAIN_CSV_HEADER[];

/* Parses text into f's member of row; -1 with why ("'x' is not a number"). */
int report_field_parse(const rfield *f, const char *text, void *row, char *why, size_t whylen);
/* f's member of row as CSV text (quoted when needed) appended to out. */
struct sbuf;
void report_field_to_csv(const rfield *f, const void *row, struct sbuf *out);

/* s as a CSV text field: quoted (RFC 4180) when it holds a comma, quote or
 * line break; led by ' when it starts with = + - @ TAB or CR, so a spreadsheet
 * shows it as text instead of running it as a formula (OWASP CSV injection). */
void report_csv_put_text(struct sbuf *out, const char *s);
/* line[0..n) without the ' report_csv_put_text put before a field starting = + - @,
 * into out (room for n bytes): what combined.csv says reads back as it was
 * read. Returns the new length. */
size_t report_csv_unguard(const char *line, size_t n, char *out);

/* Splits one CSV line (RFC 4180 quotes; trailing \r ignored) into at most max
 * NUL-terminated fields written into store (cap bytes). Returns the number of
 * fields (may exceed max: the extras are counted, not stored), -1 on a
 * malformed quote, -2 when store is too small. */
int report_csv_split(const char *line, size_t len, char **fields, int max, char *store, size_t cap);

#endif
