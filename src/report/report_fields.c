/* Training and memory row schemas: the keys the training benchmark writes. */
#include "report/report_fields.h"

#include "report/report_data.h"
#include "report/report_text.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One line each: clang-format would fold the stringized name into the braces. */
/* clang-format off */
#define TSTR(f, opt) { #f, RF_STR, offsetof(report_train_row, f), sizeof(((report_train_row *)0)->f), opt }
#define TNUM(f, k) { #f, k, offsetof(report_train_row, f), sizeof(((report_train_row *)0)->f), 0 }
/* clang-format on */
static const rfield TRAIN_FIELDS[] = {
    TSTR(timestamp, 1),
    TSTR(host, 1),
    TSTR(model, 0),
    TNUM(params, RF_I64),
    TSTR(mode, 0),
    TSTR(backend, 0),
    TNUM(nprocs, RF_INT),
    TNUM(batch, RF_INT),
    TNUM(bucket_mb, RF_DBL),
    TSTR(compress, 0),
    TNUM(steps, RF_INT),
    TNUM(step_ms_avg, RF_DBL),
    TNUM(step_ms_p50, RF_DBL),
    TNUM(step_ms_p99, RF_DBL),
    TNUM(compute_ms, RF_DBL),
    TNUM(comm_exposed_ms, RF_DBL),
    TNUM(comm_overhead_pct, RF_DBL),
    TNUM(samples_per_s, RF_DBL),
    TNUM(scaling_eff, RF_DBL),
};
const rschema REPORT_TRAIN_SCHEMA = {"training", TRAIN_FIELDS,
                                     sizeof TRAIN_FIELDS / sizeof TRAIN_FIELDS[0]};

const char REPORT_TRAIN_CSV_HEADER[] =
    "timestamp,host,model,params,mode,backend,nprocs,batch,bucket_mb,compress,steps,"
    "step_ms_avg,step_ms_p50,step_ms_p99,compute_ms,comm_exposed_ms,comm_overhead_pct,"
    "samples_per_s,scaling_eff";

/* clang-format off */
#define MNUM(f, k) { #f, k, offsetof(report_mem_row, f), sizeof(((report_mem_row *)0)->f), 0 }
/* clang-format on */
static const rfield MEM_FIELDS[] = {
    {"model", RF_STR, offsetof(report_mem_row, model), sizeof(((report_mem_row *)0)->model), 0},
    MNUM(batch, RF_INT),
    MNUM(params_bytes, RF_I64),
    MNUM(grads_bytes, RF_I64),
    MNUM(optim_bytes, RF_I64),
    MNUM(activations_bytes, RF_I64),
    MNUM(comm_buffers_bytes, RF_I64),
    MNUM(peak_rss_bytes, RF_I64),
};
const rschema REPORT_MEM_SCHEMA = {"memory", MEM_FIELDS, sizeof MEM_FIELDS / sizeof MEM_FIELDS[0]};

int report_field_parse(const rfield *f, const char *text, void *row, char *why, size_t whylen)
{
    char *p = (char *)row + f->offset, *end = NULL;
    if (f->kind == RF_STR) {
        if (strlen(text) >= f->size) {
            snprintf(why, whylen, "'%.40s' is longer than %zu characters", text, f->size - 1);
            return -1;
        }
        memcpy(p, text, strlen(text) + 1);
        return 0;
    }
    if (!*text) {
        snprintf(why, whylen, "is empty");
        return -1;
    }
    errno = 0;
    switch (f->kind) {
    case RF_INT: {
        long v = strtol(text, &end, 10);
        if (*end || errno || v < INT_MIN || v > INT_MAX) break;
        *(int *)p = (int)v;
        return 0;
    }
    case RF_I64: {
        long long v = strtoll(text, &end, 10);
        if (*end || errno) break;
        *(int64_t *)p = (int64_t)v;
        return 0;
    }
    case RF_DBL: {
        double v = strtod(text, &end);
        if (*end || errno == ERANGE) break;
        *(double *)p = v;
        return 0;
    }
    case RF_STR: break;
    }
    snprintf(why, whylen, "'%.40s' is not %s", text, f->kind == RF_DBL ? "a number" : "an integer");
    return -1;
}

/* A spreadsheet runs a cell that starts with one of these as a formula. */
static int formula_start(char c) { return c && strchr("=+-@\t\r", c) != NULL; }

void report_csv_put_text(sbuf *out, const char *s)
{
    int guard = formula_start(s[0]), quote = strpbrk(s, ",\"\r\n") != NULL;
    if (quote) report_sb_puts(out, "\"");
    if (guard) report_sb_puts(out, "'");
    for (; *s; s++) report_sb_put(out, *s == '"' ? "\"\"" : s, *s == '"' ? 2 : 1);
    if (quote) report_sb_puts(out, "\"");
}

size_t report_csv_unguard(const char *line, size_t n, char *out)
{
    size_t k = 0;
    int quoted = 0, start = 1; /* inside quotes; at a field's first character */
    for (size_t i = 0; i < n; i++) {
        char c = line[i];
        int first = start;
        start = 0;
        if (first && c == '"' && !quoted) quoted = start = 1; /* the text starts after it */
        else if (first && c == '\'' && i + 1 < n && line[i + 1] && strchr("=+-@", line[i + 1]))
            continue; /* the guard; TAB and CR never follow it: control bytes are refused */
        else if (quoted && c == '"' && i + 1 < n && line[i + 1] == '"') out[k++] = line[i++];
        else if (quoted && c == '"') quoted = 0;
        else if (!quoted && c == ',') start = 1;
        out[k++] = c;
    }
    return k;
}

void report_field_to_csv(const rfield *f, const void *row, sbuf *out)
{
    const char *p = (const char *)row + f->offset;
    switch (f->kind) {
    case RF_STR: report_csv_put_text(out, p); break;
    case RF_INT: report_sb_printf(out, "%d", *(const int *)p); break;
    case RF_I64: report_sb_printf(out, "%" PRId64, *(const int64_t *)p); break;
    case RF_DBL: report_sb_printf(out, "%.6g", *(const double *)p); break;
    }
}

int report_csv_split(const char *line, size_t len, char **fields, int max, char *store, size_t cap)
{
    const char *s = line, *end = line + len;
    while (end > s && (end[-1] == '\r' || end[-1] == '\n')) end--;
    size_t used = 0;
    int n = 0;
    for (;;) {
        char *out = used < cap ? store + used : NULL;
        size_t k = 0;
#define EMIT(c)                             \
    do {                                    \
        if (used + k + 1 >= cap) return -2; \
        out[k++] = (c);                     \
    } while (0)
        if (!out) return -2;
        if (s < end && *s == '"') {
            s++;
            for (;;) {
                if (s >= end) return -1;
                if (*s == '"') {
                    if (s + 1 < end && s[1] == '"') s++;
                    else break;
                }
                EMIT(*s);
                s++;
            }
            s++;
            if (s < end && *s != ',') return -1;
        } else {
            for (; s < end && *s != ','; s++) EMIT(*s);
        }
#undef EMIT
        out[k] = '\0';
        if (n < max) fields[n] = out;
        used += k + 1;
        n++;
        if (s >= end) break;
        s++; /* the comma */
    }
    return n;
}
