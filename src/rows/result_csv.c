/* CSV rows of the docs/DESIGN.md schema: one line per measured configuration.
 * The columns are described once (FIELDS) and both the writer and the parser
 * walk that table, so the two can never disagree about order or format. */
#include "core/errbuf.h"
#include "rows/result.h"
#include "coll.h"
#include "core/atomic_file.h"
#include "core/file_check.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char BENCH_CSV_HEADER[] =
    "timestamp,host,collective,backend,algo,device,buffers,nprocs,nnodes,dtype,op,in_place,"
    "bytes,count,warmup,iters,time_us_avg,time_us_min,time_us_p25,time_us_p50,time_us_p75,"
    "time_us_p99,time_us_max,algbw_GBps,busbw_GBps,wrong,pass";

/* BENCH_CSV_HEADER without its last column: FIELDS less the last entry. */
const char BENCH_CSV_HEADER_V2[] =
    "timestamp,host,collective,backend,algo,device,buffers,nprocs,nnodes,dtype,op,in_place,"
    "bytes,count,warmup,iters,time_us_avg,time_us_min,time_us_p25,time_us_p50,time_us_p75,"
    "time_us_p99,time_us_max,algbw_GBps,busbw_GBps,wrong";

const char BENCH_CSV_HEADER_V1[] =
    "timestamp,host,collective,backend,algo,device,nprocs,nnodes,dtype,op,in_place,"
    "bytes,count,warmup,iters,time_us_avg,time_us_min,time_us_p50,time_us_p99,"
    "time_us_max,algbw_GBps,busbw_GBps,wrong";

enum field_kind {
    F_STR,  /* char array of `size` bytes */
    F_INT,  /* int >= min */
    F_U64,  /* uint64_t */
    F_I64,  /* int64_t */
    F_TIME, /* double, microseconds: 3 decimals (nanosecond resolution) */
    F_BW,   /* double, GB/s: 6 significant digits, so tiny sizes do not print 0 */
};

struct field {
    const char *name;
    enum field_kind kind;
    size_t offset, size;
    long min, max; /* F_INT range */
};

/* One initializer per column kind; kept on one line each (clang-format would
 * fold the stringized name into the braces). */
/* clang-format off */
#define STR(f) { #f, F_STR, offsetof(bench_row, f), sizeof(((bench_row *)0)->f), 0, 0 }
#define INT(f, lo, hi) { #f, F_INT, offsetof(bench_row, f), sizeof(int), lo, hi }
#define NUM(f, k) { #f, k, offsetof(bench_row, f), 0, 0, 0 }
/* clang-format on */

static const struct field FIELDS[] = {
    STR(timestamp),
    STR(host),
    STR(collective),
    STR(backend),
    STR(algo),
    STR(device),
    STR(buffers),
    INT(nprocs, 1, INT_MAX),
    INT(nnodes, 1, INT_MAX),
    STR(dtype),
    STR(op),
    INT(in_place, 0, 1),
    NUM(bytes, F_U64),
    NUM(count, F_U64),
    INT(warmup, 0, INT_MAX),
    INT(iters, 0, INT_MAX),
    NUM(time_us_avg, F_TIME),
    NUM(time_us_min, F_TIME),
    NUM(time_us_p25, F_TIME),
    NUM(time_us_p50, F_TIME),
    NUM(time_us_p75, F_TIME),
    NUM(time_us_p99, F_TIME),
    NUM(time_us_max, F_TIME),
    NUM(algbw_GBps, F_BW),
    NUM(busbw_GBps, F_BW),
    NUM(wrong, F_I64),
    INT(pass, 0, INT_MAX), /* last: V2 files are FIELDS without it */
};
#define NFIELDS (sizeof FIELDS / sizeof FIELDS[0])
#define NFIELDS_V2 (NFIELDS - 1)

/* BENCH_CSV_HEADER_V1's columns: read only. */
static const struct field FIELDS_V1[] = {
    STR(timestamp),
    STR(host),
    STR(collective),
    STR(backend),
    STR(algo),
    STR(device),
    INT(nprocs, 1, INT_MAX),
    INT(nnodes, 1, INT_MAX),
    STR(dtype),
    STR(op),
    INT(in_place, 0, 1),
    NUM(bytes, F_U64),
    NUM(count, F_U64),
    INT(warmup, 0, INT_MAX),
    INT(iters, 0, INT_MAX),
    NUM(time_us_avg, F_TIME),
    NUM(time_us_min, F_TIME),
    NUM(time_us_p50, F_TIME),
    NUM(time_us_p99, F_TIME),
    NUM(time_us_max, F_TIME),
    NUM(algbw_GBps, F_BW),
    NUM(busbw_GBps, F_BW),
    NUM(wrong, F_I64),
};
#define NFIELDS_V1 (sizeof FIELDS_V1 / sizeof FIELDS_V1[0])


/* Appends text to buf at *pos; 0 if it does not fit. */
static int put(char *buf, size_t len, size_t *pos, const char *text, size_t n)
{
    if (*pos + n >= len) return 0;
    memcpy(buf + *pos, text, n);
    *pos += n;
    buf[*pos] = '\0';
    return 1;
}

/* A text field, quoted (RFC 4180) when it holds a comma or a quote.
 * Line breaks cannot be stored in a line-per-row file: refused. */
static int put_text(char *buf, size_t len, size_t *pos, const char *s, size_t cap)
{
    size_t n = strnlen(s, cap);
    if (memchr(s, '\n', n) || memchr(s, '\r', n)) return 0;
    if (!memchr(s, ',', n) && !memchr(s, '"', n)) return put(buf, len, pos, s, n);
    if (!put(buf, len, pos, "\"", 1)) return 0;
    for (size_t i = 0; i < n; i++)
        if (!put(buf, len, pos, s[i] == '"' ? "\"\"" : s + i, s[i] == '"' ? 2 : 1)) return 0;
    return put(buf, len, pos, "\"", 1);
}

/* r's first nfields columns of FIELDS. */
static int row_to_csv(const bench_row *r, size_t nfields, char *buf, size_t len)
{
    if (!r || !buf || len == 0) return -1;
    size_t pos = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < nfields; i++) {
        const struct field *f = &FIELDS[i];
        const char *p = (const char *)r + f->offset;
        char num[64];
        int n = 0;
        if (i > 0 && !put(buf, len, &pos, ",", 1)) return -1;
        switch (f->kind) {
        case F_STR:
            if (!put_text(buf, len, &pos, p, f->size)) return -1;
            continue;
        case F_INT: n = snprintf(num, sizeof num, "%d", *(const int *)p); break;
        case F_U64: n = snprintf(num, sizeof num, "%" PRIu64, *(const uint64_t *)p); break;
        case F_I64: n = snprintf(num, sizeof num, "%" PRId64, *(const int64_t *)p); break;
        case F_TIME: n = snprintf(num, sizeof num, "%.3f", *(const double *)p); break;
        case F_BW: n = snprintf(num, sizeof num, "%.6g", *(const double *)p); break;
        }
        if (n < 0 || (size_t)n >= sizeof num || !put(buf, len, &pos, num, (size_t)n)) return -1;
    }
    return (int)pos;
}

int bench_row_to_csv(const bench_row *r, char *buf, size_t len)
{
    return row_to_csv(r, NFIELDS, buf, len);
}

/* Next field of a CSV line into out (unquoted). Returns 1 with *p after the
 * field's comma (or at the end), 0 at end of line, -1 on a malformed quote. */
static int next_field(const char **p, const char *end, char *out, size_t outlen, int *too_long)
{
    const char *s = *p;
    size_t n = 0;
    *too_long = 0;
    if (s > end) return 0;
    if (s < end && *s == '"') {
        s++;
        for (;;) {
            if (s >= end) return -1; /* unterminated quote */
            if (*s == '"') {
                if (s + 1 < end && s[1] == '"') s++;
                else break;
            }
            if (n + 1 < outlen) out[n++] = *s;
            else *too_long = 1;
            s++;
        }
        s++; /* closing quote */
        if (s < end && *s != ',') return -1;
    } else {
        for (; s < end && *s != ','; s++) {
            if (n + 1 < outlen) out[n++] = *s;
            else *too_long = 1;
        }
    }
    out[n] = '\0';
    *p = s + 1; /* past the comma; past end when this was the last field */
    return 1;
}

static int parse_field(const struct field *f, const char *text, bench_row *r, char *why,
                       size_t whylen)
{
    char *p = (char *)r + f->offset;
    char *endp = NULL;
    if (f->kind == F_STR) {
        /* length checked by the caller */
        snprintf(p, f->size, "%s", text);
        return 0;
    }
    if (text[0] == '\0') {
        snprintf(why, whylen, "is empty");
        return -1;
    }
    if (isspace((unsigned char)text[0])) {
        snprintf(why, whylen, "'%s' starts with a blank, not a number", text);
        return -1;
    }
    errno = 0;
    switch (f->kind) {
    case F_INT: {
        long v = strtol(text, &endp, 10);
        if (*endp || errno || v < f->min || v > f->max) {
            if (f->max == 1) snprintf(why, whylen, "'%s' is not 0 or 1", text);
            else snprintf(why, whylen, "'%s' is not an integer >= %ld", text, f->min);
            return -1;
        }
        *(int *)p = (int)v;
        return 0;
    }
    case F_U64: {
        if (text[0] == '-' || text[0] == '+') {
            snprintf(why, whylen, "'%s' is not a non-negative integer", text);
            return -1;
        }
        unsigned long long v = strtoull(text, &endp, 10);
        if (*endp || errno) {
            snprintf(why, whylen, "'%s' is not a non-negative integer", text);
            return -1;
        }
        *(uint64_t *)p = (uint64_t)v;
        return 0;
    }
    case F_I64: {
        long long v = strtoll(text, &endp, 10);
        if (*endp || errno) {
            snprintf(why, whylen, "'%s' is not an integer", text);
            return -1;
        }
        *(int64_t *)p = (int64_t)v;
        return 0;
    }
    case F_TIME:
    case F_BW: {
        double v = strtod(text, &endp);
        if (*endp || errno == ERANGE) {
            snprintf(why, whylen, "'%s' is not a number", text);
            return -1;
        }
        *(double *)p = v;
        return 0;
    }
    case F_STR: break;
    }
    return 0;
}

/* One line under the header whose columns are fields[0..nfields) into tmp. */
static int parse_line(const char *line, const struct field *fields, size_t nfields,
                      const char *header, bench_row *tmp, char *err, size_t errlen)
{
    if (!line) {
        coll__set_err(err, errlen, "no CSV line to parse");
        return COLL_EINVAL;
    }
    const char *end = line + strlen(line);
    while (end > line && (end[-1] == '\n' || end[-1] == '\r')) end--;

    const char *p = line;
    size_t i = 0;
    char text[256], why[320];
    int too_long, got;
    while ((got = next_field(&p, end, text, sizeof text, &too_long)) == 1) {
        if (i >= nfields) {
            i++;
            continue; /* count them all for the message */
        }
        const struct field *f = &fields[i];
        if (f->kind == F_STR && (too_long || strlen(text) >= f->size)) {
            coll__set_err(err, errlen, "CSV field %zu (%s): '%.40s' is longer than %zu characters",
                          i + 1, f->name, text, f->size - 1);
            return COLL_EINVAL;
        }
        if (too_long || parse_field(f, text, tmp, why, sizeof why) != 0) {
            if (too_long) snprintf(why, sizeof why, "value too long");
            coll__set_err(err, errlen, "CSV field %zu (%s): %s", i + 1, f->name, why);
            return COLL_EINVAL;
        }
        i++;
    }
    if (got < 0) {
        coll__set_err(err, errlen, "CSV field %zu (%s): unterminated or misplaced quote", i + 1,
                      i < nfields ? fields[i].name : "extra");
        return COLL_EINVAL;
    }
    if (i != nfields) {
        coll__set_err(err, errlen, "CSV line has %zu fields, expected %zu (%s)", i, nfields,
                      header);
        return COLL_EINVAL;
    }
    return COLL_OK;
}

/* A row parsed onto start (what columns the schema lacks keep start's values);
 * r is written only on success. */
static int parse_row(const char *line, const struct field *fields, size_t nfields,
                     const char *header, const bench_row *start, bench_row *r, char *err,
                     size_t errlen)
{
    bench_row tmp = *start;
    int rc = parse_line(r ? line : NULL, fields, nfields, header, &tmp, err, errlen);
    if (rc == COLL_OK) *r = tmp;
    return rc;
}

int bench_row_from_csv(const char *line, bench_row *r, char *err, size_t errlen)
{
    static const bench_row zero;
    return parse_row(line, FIELDS, NFIELDS, BENCH_CSV_HEADER, &zero, r, err, errlen);
}

int bench_row_from_csv_v2(const char *line, bench_row *r, char *err, size_t errlen)
{
    static const bench_row unknown_pass; /* pass 0: not recorded */
    return parse_row(line, FIELDS, NFIELDS_V2, BENCH_CSV_HEADER_V2, &unknown_pass, r, err, errlen);
}

int bench_row_from_csv_v1(const char *line, bench_row *r, char *err, size_t errlen)
{
    bench_row start = {.buffers = BENCH_BUFFERS_UNKNOWN, .time_us_p25 = NAN, .time_us_p75 = NAN};
    return parse_row(line, FIELDS_V1, NFIELDS_V1, BENCH_CSV_HEADER_V1, &start, r, err, errlen);
}

/* What the file at path holds: absent/empty, our header, or something else.
 * *ends_with_newline tells whether a row can be appended directly. */
enum csv_state { CSV_NEW, CSV_OURS, CSV_V2, CSV_V1, CSV_OTHER };

/* Does the file's first line (head, n bytes) equal header? */
static int first_line_is(const char *head, size_t n, const char *header)
{
    size_t hlen = strlen(header);
    return n >= hlen && memcmp(head, header, hlen) == 0 &&
           (n == hlen || head[hlen] == '\n' ||
            (head[hlen] == '\r' && (n == hlen + 1 || head[hlen + 1] == '\n')));
}

static int inspect_csv(const char *path, enum csv_state *state, int *ends_with_newline, char *err,
                       size_t errlen)
{
    *state = CSV_NEW;
    *ends_with_newline = 1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return COLL_OK; /* created by the append */
        coll__set_err(err, errlen, "%s: %s", path, strerror(errno));
        return COLL_ESYS;
    }
    /* A device or pipe (/dev/stdout, /dev/full) has no header to read: every
     * append to it writes its own header. */
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return COLL_OK;
    }
    char head[sizeof BENCH_CSV_HEADER + 2];
    ssize_t n = pread(fd, head, sizeof head - 1, 0);
    if (n < 0) {
        coll__set_err(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
        return COLL_ESYS;
    }
    if (n == 0) {
        close(fd);
        return COLL_OK;
    }
    head[n] = '\0';
    *state = first_line_is(head, (size_t)n, BENCH_CSV_HEADER)      ? CSV_OURS
             : first_line_is(head, (size_t)n, BENCH_CSV_HEADER_V2) ? CSV_V2
             : first_line_is(head, (size_t)n, BENCH_CSV_HEADER_V1) ? CSV_V1
                                                                   : CSV_OTHER;

    char last = '\n';
    if (st.st_size > 0 && pread(fd, &last, 1, st.st_size - 1) != 1) last = '\n';
    *ends_with_newline = last == '\n';
    close(fd);
    return COLL_OK;
}

/* inspect_csv, refusing a file whose rows we must not append to. */
static int inspect_appendable(const char *path, enum csv_state *state, int *newline_ok, char *err,
                              size_t errlen)
{
    int rc = inspect_csv(path, state, newline_ok, err, errlen);
    if (rc != COLL_OK) return rc;
    if (*state == CSV_V1) {
        coll__set_err(
            err, errlen,
            "%s has the older collbench header (no buffers, time_us_p25 and "
            "time_us_p75 columns); refusing to mix schemas: write to a new file (collbench "
            "report reads both)",
            path);
        return COLL_EINVAL;
    }
    if (*state == CSV_OTHER) {
        coll__set_err(err, errlen, "%s has a different header; refusing to mix schemas", path);
        return COLL_EINVAL;
    }
    return COLL_OK;
}

int bench_csv_check(const char *path, char *err, size_t errlen)
{
    enum csv_state state;
    int newline_ok;
    int rc = coll__file_check_writable(path, COLL_FILE_APPEND, err, errlen);
    return rc ? rc : inspect_appendable(path, &state, &newline_ok, err, errlen);
}

int bench_csv_append(const char *path, const bench_row *rows, size_t n, char *err, size_t errlen)
{
    if (!path || !*path || (!rows && n > 0)) {
        coll__set_err(err, errlen, "bench_csv_append: %s",
                      path && *path ? "no rows" : "empty path");
        return COLL_EINVAL;
    }
    /* Header (if new) and every row in one buffer: one write, one fsync. */
    const size_t line_max = 2048;
    size_t cap = sizeof BENCH_CSV_HEADER + 2 + n * line_max;
    char *buf = malloc(cap);
    if (!buf) {
        coll__set_err(err, errlen, "%s: out of memory for %zu rows", path, n);
        return COLL_ENOMEM;
    }
    /* The header's look and the append under one lock: two runs starting one
     * file must not both write a header (core/atomic_file.h). */
    enum csv_state state;
    int newline_ok, lock;
    int rc = coll__file_lock(path, &lock, err, errlen);
    if (rc == COLL_OK) rc = inspect_appendable(path, &state, &newline_ok, err, errlen);
    if (rc != COLL_OK) {
        coll__file_unlock(lock);
        free(buf);
        return rc;
    }
    /* A file of the previous schema keeps it (rows without pass): one file
     * never mixes schemas, and its readers keep working. */
    size_t pos = 0, nfields = state == CSV_V2 ? NFIELDS_V2 : NFIELDS;
    if (!newline_ok) buf[pos++] = '\n'; /* a previous writer died mid-line */
    if (state == CSV_NEW) pos += (size_t)snprintf(buf + pos, cap - pos, "%s\n", BENCH_CSV_HEADER);
    for (size_t i = 0; i < n; i++) {
        int len = row_to_csv(&rows[i], nfields, buf + pos, line_max - 1);
        if (len < 0) {
            coll__set_err(err, errlen,
                          "%s: row %zu cannot be written as CSV (a text field has a "
                          "line break or is too long)",
                          path, i + 1);
            coll__file_unlock(lock);
            free(buf);
            return COLL_EINVAL;
        }
        pos += (size_t)len;
        buf[pos++] = '\n';
    }
    rc = coll__file_append(path, buf, pos, err, errlen);
    coll__file_unlock(lock);
    free(buf);
    return rc;
}
