/* CSV result files: the communication schema (bench_row), the training
 * schema or collbench replay's (rows/replay_row.h), told apart by the header line. A bad row is skipped with a message
 * naming file and line; the rest of the file is still read. */
#include "report/report.h"
#include "report/report_check.h"
#include "report/report_data.h"
#include "report/report_fields.h"
#include "report/report_log.h"
#include "report/report_text.h"

#include "coll.h"

#include <stdlib.h>
#include <string.h>

enum csv_kind {
    CSV_COMM,
    CSV_COMM_V2,
    CSV_COMM_V1,
    CSV_TRAIN,
    CSV_REPLAY /* one of bench_replay_headers */
};

/* 1 when line (without its end of line) equals header. */
static int is_header_raw(const char *line, size_t len, const char *header)
{
    while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == '\n')) len--;
    return len == strlen(header) && memcmp(line, header, len) == 0;
}

/* The same, its fields also taken unquoted: spreadsheets and pandas write
 * "timestamp","host",... */
static int is_header(const char *line, size_t len, const char *header)
{
    if (is_header_raw(line, len, header)) return 1;
    if (len == 0 || line[0] != '"') return 0;
    enum { MAXF = 40 };
    char *f[MAXF], store[1024], plain[1024];
    int n = report_csv_split(line, len, f, MAXF, store, sizeof store);
    size_t k = 0;
    for (int i = 0; i < n && i < MAXF; i++)
        k += (size_t)snprintf(plain + k, k < sizeof plain ? sizeof plain - k : 0, "%s%s",
                              i ? "," : "", f[i]);
    return n > 0 && n <= MAXF && k < sizeof plain && is_header_raw(plain, k, header);
}

static int parse_train(const char *line, size_t len, report_train_row *r, char *why, size_t whylen)
{
    enum { MAXF = 32 };
    char *f[MAXF], store[4096];
    int n = report_csv_split(line, len, f, MAXF, store, sizeof store);
    const rschema *s = &REPORT_TRAIN_SCHEMA;
    if (n < 0) {
        snprintf(why, whylen, n == -1 ? "unterminated or misplaced quote" : "line too long");
        return -1;
    }
    if ((size_t)n != s->nfields) {
        snprintf(why, whylen, "CSV line has %d fields, expected %zu", n, s->nfields);
        return -1;
    }
    report_train_row tmp;
    memset(&tmp, 0, sizeof tmp);
    for (size_t i = 0; i < s->nfields; i++) {
        char w[200];
        if (report_field_parse(&s->fields[i], f[i], &tmp, w, sizeof w) != 0) {
            snprintf(why, whylen, "CSV field %zu (%s): %s", i + 1, s->fields[i].name, w);
            return -1;
        }
    }
    *r = tmp;
    return 0;
}

/* ncols: the file's header's (bench_replay_headers): the later columns left
 * absent. */
static int parse_replay(const char *line, size_t len, int ncols, bench_replay_row *r, char *why,
                        size_t whylen)
{
    enum { MAXF = 32 };
    char *f[MAXF], store[4096];
    int n = report_csv_split(line, len, f, MAXF, store, sizeof store);
    if (n < 0) {
        snprintf(why, whylen, n == -1 ? "unterminated or misplaced quote" : "line too long");
        return -1;
    }
    if (n != ncols) {
        snprintf(why, whylen, "CSV line has %d fields, expected %d", n, ncols);
        return -1;
    }
    bench_replay_row_init(r);
    for (int i = 0; i < n; i++) {
        char w[200];
        if (bench_replay_row_set(r, i, f[i], w, sizeof w) != 0) {
            snprintf(why, whylen, "CSV field %d (%s): %s", i + 1, bench_replay_fields[i].name, w);
            return -1;
        }
    }
    return bench_replay_row_check(r, why, whylen);
}

/* Why line[0..n) cannot be a row before it is parsed, or NULL. */
static const char *line_problem(const char *line, size_t n, char *why, size_t whylen)
{
    char limit[32];
    if (n > REPORT_MAX_LINE_BYTES)
        snprintf(why, whylen, "line is %zu bytes, over the limit of %s (not a collbench CSV?)", n,
                 report_fmt_size(REPORT_MAX_LINE_BYTES, limit, sizeof limit));
    else if (memchr(line, '\0', n)) snprintf(why, whylen, "line holds a NUL byte (binary data?)");
    else return NULL;
    return why;
}

/* The number of columns of the replay header line is (bench_replay_headers)
 * into *header, or 0. */
static int replay_header(const char *line, size_t len, const char **header)
{
    for (int i = 0; i < BENCH_REPLAY_HEADERS; i++)
        if (is_header(line, len, bench_replay_headers[i].line))
            return *header = bench_replay_headers[i].line, bench_replay_headers[i].ncols;
    return 0;
}

/* One data line into d: 0, 1 with why (row skipped), or COLL_ENOMEM
 * (ncols: a replay file's columns). */
static int read_row(report_data *d, enum csv_kind kind, int ncols, const char *text, size_t n,
                    char *why, size_t whylen)
{
    if (line_problem(text, n, why, whylen)) return 1;
    /* combined.csv's formula guards come off first (report_csv_put_text) */
    char *copy = malloc(n + 1);
    if (!copy) return COLL_ENOMEM;
    n = memchr(text, '\'', n) ? report_csv_unguard(text, n, copy) : (memcpy(copy, text, n), n);
    copy[n] = '\0';
    if (kind == CSV_TRAIN) {
        report_train_row r;
        int bad = parse_train(copy, n, &r, why, whylen) != 0 ||
                  report_check_row(&REPORT_TRAIN_SCHEMA, &r, why, whylen) != 0;
        free(copy);
        if (bad) return 1;
        return report_add_train(d, &r) ? COLL_ENOMEM : 0;
    }
    if (kind == CSV_REPLAY) {
        bench_replay_row r;
        int bad = parse_replay(copy, n, ncols, &r, why, whylen) != 0;
        free(copy);
        if (bad) return 1;
        return report_add_replay(d, &r) ? COLL_ENOMEM : 0;
    }
    bench_row r;
    int rc = (kind == CSV_COMM      ? bench_row_from_csv
              : kind == CSV_COMM_V2 ? bench_row_from_csv_v2
                                    : bench_row_from_csv_v1)(copy, &r, why, whylen);
    free(copy);
    if (rc != COLL_OK || report_check_comm(&r, why, whylen) != 0) return 1;
    return report_add_comm(d, &r) ? COLL_ENOMEM : 0;
}

int report_read_csv(report_data *d, const char *text, size_t len, report_log *log)
{
    const char *path = log->path;
    const char *end = text + len, *line = text;
    const char *nl = memchr(line, '\n', len);
    size_t hlen = nl ? (size_t)(nl - line) : len;
    enum csv_kind kind;
    const char *header;
    int ncols = 0;
    if (is_header(line, hlen, BENCH_CSV_HEADER)) kind = CSV_COMM, header = BENCH_CSV_HEADER;
    else if (is_header(line, hlen, BENCH_CSV_HEADER_V2))
        kind = CSV_COMM_V2, header = BENCH_CSV_HEADER_V2;
    else if (is_header(line, hlen, BENCH_CSV_HEADER_V1))
        kind = CSV_COMM_V1, header = BENCH_CSV_HEADER_V1;
    else if (is_header(line, hlen, REPORT_TRAIN_CSV_HEADER))
        kind = CSV_TRAIN, header = REPORT_TRAIN_CSV_HEADER;
    else if ((ncols = replay_header(line, hlen, &header)) > 0) kind = CSV_REPLAY;
    else {
        size_t shown = hlen > 60 ? 60 : hlen;
        while (shown > 0 && line[shown - 1] == '\r') shown--;
        char text60[256];
        report_log_problem(log,
                           "%s:1: unknown CSV header '%s%s' (expected the communication header "
                           "'%.40s...', the training header '%.40s...' or collbench replay's "
                           "'%.40s...'); file skipped",
                           path, report_log_escape_ascii(line, shown, text60, sizeof text60),
                           hlen > 60 ? "..." : "", BENCH_CSV_HEADER, REPORT_TRAIN_CSV_HEADER,
                           BENCH_REPLAY_CSV_HEADER);
        return REPORT_INPUT_REJECTED;
    }
    int result = 0;
    size_t lineno = 1;
    for (line = nl ? nl + 1 : end; line < end; line = nl ? nl + 1 : end) {
        lineno++;
        nl = memchr(line, '\n', (size_t)(end - line));
        size_t n = nl ? (size_t)(nl - line) : (size_t)(end - line);
        size_t blank = 0;
        while (blank < n && (line[blank] == ' ' || line[blank] == '\t' || line[blank] == '\r'))
            blank++;
        if (blank == n) continue;
        /* Appends to a pipe repeat the header: not a row, not an error. */
        if (is_header(line, n, header)) continue;
        char why[512];
        int rc = read_row(d, kind, ncols, line, n, why, sizeof why);
        if (rc == COLL_ENOMEM) return rc;
        if (rc != 0) {
            report_log_problem(log, "%s:%zu: %s; row skipped", path, lineno, why);
            result = REPORT_INPUT_REJECTED;
        }
    }
    return result;
}
