/* The rows rank 0 wrote, as CSV and JSON files (replay_output.h). */
#include "replay/replay_output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/atomic_file.h"
#include "rows/replay_row.h"

void replay_csv_text(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

#ifndef COLL_HAVE_JANSSON

int replay_output_write(const char *rows_path, const char *csv_path, const char *json_path,
                        char *err, size_t errlen)
{
    (void)rows_path, (void)csv_path, (void)json_path;
    snprintf(err, errlen, "result files need jansson (apt-get install libjansson-dev)");
    return -1;
}

#else

#include <jansson.h>

/* A CSV field: text as replay_csv_text writes it, numbers plain. */
static void csv_field(FILE *f, json_t *v)
{
    if (json_is_string(v)) {
        replay_csv_text(f, json_string_value(v));
    } else if (json_is_integer(v)) {
        fprintf(f, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        fprintf(f, "%.9g", json_real_value(v));
    } /* null: empty */
}

static int write_file(const char *path, const char *text, char *err, size_t errlen)
{
    char why[600];
    if (coll__file_write_atomic(path, text, strlen(text), why, sizeof why) == 0) return 0;
    snprintf(err, errlen, "%s", why);
    return -1;
}

static int read_rows(const char *rows_path, json_t *rows, char *err, size_t errlen)
{
    FILE *in = fopen(rows_path, "r");
    if (!in) return snprintf(err, errlen, "no rows from rank 0 (%s)", rows_path), -1;
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    while (rc == 0 && getline(&line, &cap, in) > 0) {
        json_error_t jerr;
        json_t *row = json_loads(line, 0, &jerr);
        if (!json_is_object(row)) rc = -1, snprintf(err, errlen, "a malformed row from rank 0");
        else json_array_append(rows, row);
        json_decref(row);
    }
    free(line);
    fclose(in);
    return rc;
}

static char *csv_text(json_t *rows)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return NULL;
    fprintf(f, "%s\n", BENCH_REPLAY_CSV_HEADER);
    size_t k;
    json_t *row;
    json_array_foreach(rows, k, row)
    {
        for (int i = 0; i < BENCH_REPLAY_COLUMNS; i++) {
            if (i) fputc(',', f);
            csv_field(f, json_object_get(row, bench_replay_fields[i].name));
        }
        fputc('\n', f);
    }
    fclose(f);
    return text;
}

int replay_output_write(const char *rows_path, const char *csv_path, const char *json_path,
                        char *err, size_t errlen)
{
    json_t *rows = json_array();
    int rc = rows ? read_rows(rows_path, rows, err, errlen) : -1;
    if (rc == 0 && csv_path) {
        char *text = csv_text(rows);
        rc = text ? write_file(csv_path, text, err, errlen) : -1;
        free(text);
    }
    if (rc == 0 && json_path) {
        json_t *doc = json_pack("{s:s, s:i, s:O}", "collbench", "replay", "version", 1, "rows",
                                rows);
        char *text = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(9)) : NULL;
        rc = text ? write_file(json_path, text, err, errlen) : -1;
        free(text);
        json_decref(doc);
    }
    json_decref(rows);
    return rc;
}

#endif
