/* JSON result files (docs/DESIGN.md): results.communication.<collective>: rows in the
 * CSV schema; results.training and results.memory: rows of report_fields.h.
 * Each value goes through the same text parser as the CSV, so both formats
 * accept and refuse the same rows. */
#include "report/report.h"
#include "report/report_check.h"
#include "report/report_data.h"
#include "report/report_fields.h"
#include "report/report_json_budget.h"
#include "report/report_log.h"
#include "report/report_text.h"

#include "coll.h"

#include <stdio.h>
#include <math.h>
#include <string.h>

#ifndef COLL_HAVE_JANSSON

int report_read_json(report_data *d, const char *text, size_t len, report_log *log)
{
    (void)d, (void)text, (void)len;
    report_log_problem(log,
                       "%s: built without jansson, cannot read JSON "
                       "(apt-get install libjansson-dev); file skipped",
                       log->path);
    return REPORT_INPUT_REJECTED;
}

#else

#include <jansson.h>
#include <stdlib.h>

/* A JSON scalar as the text a CSV would hold; -1 for arrays and objects. */
static int scalar_text(const json_t *v, char *buf, size_t len)
{
    switch (json_typeof(v)) {
    case JSON_STRING: snprintf(buf, len, "%s", json_string_value(v)); return 0;
    case JSON_INTEGER: snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v)); return 0;
    case JSON_REAL: snprintf(buf, len, "%.17g", json_real_value(v)); return 0;
    case JSON_TRUE: snprintf(buf, len, "1"); return 0;
    case JSON_FALSE: snprintf(buf, len, "0"); return 0;
    case JSON_NULL: snprintf(buf, len, "nan"); return 0;
    default: return -1;
    }
}

/* One communication row -> CSV line in header order -> bench_row_from_csv. */
static int comm_row(const json_t *o, const char *collective, bench_row *r, char *why, size_t whylen)
{
    if (!json_is_object(o)) {
        snprintf(why, whylen, "not a JSON object");
        return -1;
    }
    sbuf line = {0};
    const char *h = BENCH_CSV_HEADER;
    int rc = 0;
    while (*h && rc == 0) {
        size_t n = strcspn(h, ",");
        char key[32], val[256];
        snprintf(key, sizeof key, "%.*s", (int)n, h);
        h += n + (h[n] == ',');
        const json_t *v = json_object_get(o, key);
        if (!v && strcmp(key, "collective") == 0) {
            snprintf(val, sizeof val, "%s", collective);
        } else if (!v && strcmp(key, "buffers") == 0) { /* files from before the column */
            snprintf(val, sizeof val, "%s", BENCH_BUFFERS_UNKNOWN);
        } else if (!v && (strcmp(key, "time_us_p25") == 0 || strcmp(key, "time_us_p75") == 0)) {
            snprintf(val, sizeof val, "nan");
        } else if (!v && strcmp(key, "pass") == 0) { /* files from before the key: unknown */
            snprintf(val, sizeof val, "0");
        } else if (!v) {
            snprintf(why, whylen, "missing key '%s'", key);
            rc = -1;
            break;
        } else if (scalar_text(v, val, sizeof val) != 0) {
            snprintf(why, whylen, "key '%s' is not a string or number", key);
            rc = -1;
            break;
        }
        if (line.len) report_sb_puts(&line, ",");
        report_sb_puts(&line, "\"");
        for (const char *s = val; *s; s++)
            report_sb_put(&line, *s == '"' ? "\"\"" : s, *s == '"' ? 2 : 1);
        report_sb_puts(&line, "\"");
    }
    if (rc == 0 && line.oom) {
        snprintf(why, whylen, "out of memory");
        rc = -1;
    }
    if (rc == 0 && (bench_row_from_csv(line.p, r, why, whylen) != COLL_OK ||
                    report_check_comm(r, why, whylen) != 0))
        rc = -1;
    report_sb_free(&line);
    return rc;
}

static int schema_row(const json_t *o, const rschema *s, void *row, char *why, size_t whylen)
{
    if (!json_is_object(o)) {
        snprintf(why, whylen, "not a JSON object");
        return -1;
    }
    for (size_t i = 0; i < s->nfields; i++) {
        const rfield *f = &s->fields[i];
        const json_t *v = json_object_get(o, f->name);
        char val[256], w[200];
        if (!v && f->optional) continue;
        if (!v) {
            snprintf(why, whylen, "missing key '%s'", f->name);
            return -1;
        }
        if (scalar_text(v, val, sizeof val) != 0) {
            snprintf(why, whylen, "key '%s' is not a string or number", f->name);
            return -1;
        }
        if (report_field_parse(f, val, row, w, sizeof w) != 0) {
            snprintf(why, whylen, "key '%s': %s", f->name, w);
            return -1;
        }
    }
    return report_check_row(s, row, why, whylen);
}

/* results.training / results.memory: an array of rows, or an object whose
 * values are such arrays (grouped by model, say). */
static int read_rows(report_data *d, const char *section, const json_t *sec, const rschema *s,
                     report_log *log, int *rejected)
{
    const json_t *groups[64];
    const char *names[64];
    size_t ng = 0;
    json_t *single = NULL; /* a section holding one row object: read as [row] */
    if (json_is_object(sec) && json_object_get(sec, "model")) {
        single = json_array();
        if (!single || json_array_append((json_t *)single, (json_t *)sec) != 0) {
            json_decref(single);
            return COLL_ENOMEM;
        }
        sec = single;
    }
    if (json_is_array(sec)) {
        groups[0] = sec, names[0] = NULL, ng = 1;
    } else if (json_is_object(sec)) {
        const char *k;
        const json_t *v;
        json_object_foreach((json_t *)sec, k, v)
        {
            if (ng < 64 && json_is_array(v)) groups[ng] = v, names[ng++] = k;
        }
    } else {
        report_log_problem(log, "%s: results.%s is not an array or object; section skipped",
                           log->path, section);
        *rejected = 1;
        return 0;
    }
    for (size_t g = 0; g < ng; g++) {
        size_t i;
        const json_t *o;
        json_array_foreach(groups[g], i, o)
        {
            char why[320];
            report_train_row t;
            report_mem_row m;
            void *row = s == &REPORT_MEM_SCHEMA ? (void *)&m : (void *)&t;
            memset(&t, 0, sizeof t);
            memset(&m, 0, sizeof m);
            if (schema_row(o, s, row, why, sizeof why) != 0) {
                report_log_problem(log, "%s: results.%s%s%s[%zu]: %s; row skipped", log->path,
                                   section, names[g] ? "." : "", names[g] ? names[g] : "", i, why);
                *rejected = 1;
                continue;
            }
            int rc = s == &REPORT_MEM_SCHEMA ? report_add_mem(d, &m) : report_add_train(d, &t);
            if (rc != 0) {
                json_decref(single);
                return rc;
            }
        }
    }
    json_decref(single);
    return 0;
}

/* "machines": {"<host>": {"memcpy_GBps": 7.4, "cores": 2}}; optional (older
 * files lack it, or cores). */
static void read_machines(report_data *d, const json_t *root, report_log *log, int *rejected)
{
    const json_t *ms = json_object_get(root, "machines");
    const char *host;
    const json_t *m;
    if (!ms) return;
    if (!json_is_object(ms)) {
        report_log_problem(log, "%s: \"machines\" is not an object; skipped", log->path);
        *rejected = 1;
        return;
    }
    json_object_foreach((json_t *)ms, host, m)
    {
        const json_t *v = json_object_get(m, "memcpy_GBps"), *c = json_object_get(m, "cores");
        if (!v && !c) continue;
        double g = !v ? 0 : json_is_number(v) ? json_number_value(v) : -1;
        double n = !c ? 0 : json_is_number(c) ? json_number_value(c) : -1;
        if (strlen(host) >= sizeof d->machines[0].host) {
            report_log_problem(log, "%s: machines: a host name of %zu bytes; ignored", log->path,
                               strlen(host));
            *rejected = 1;
            continue;
        }
        if (v && !(g > 0 && g < 1e6)) {
            report_log_problem(log, "%s: machines.%.64s.memcpy_GBps is not a rate in GB/s; ignored",
                               log->path, host);
            *rejected = 1;
            g = 0;
        }
        if (c && !(n >= 1 && n <= 1 << 20 && n == floor(n))) {
            report_log_problem(log, "%s: machines.%.64s.cores is not a count of cores; ignored",
                               log->path, host);
            *rejected = 1;
            n = 0;
        }
        if (g == 0 && n == 0) continue;
        size_t k = 0;
        while (k < d->nmachines && strcmp(d->machines[k].host, host)) k++;
        if (k == REPORT_MAX_MACHINES) continue;
        if (k == d->nmachines) snprintf(d->machines[d->nmachines++].host, 64, "%s", host);
        if (g > 0) d->machines[k].memcpy_GBps = g;
        if (n > 0) d->machines[k].cores = (int)n;
    }
}

/* collbench replay's -J file: {"collbench":"replay","version":1,"rows":[...]},
 * each row's keys the columns of rows/replay_row.h (null: absent; the columns
 * after BENCH_REPLAY_COLUMNS_V1 may be missing, in files from before them). */
static int read_replay(report_data *d, const json_t *root, report_log *log)
{
    const json_t *rows = json_object_get(root, "rows");
    const json_t *version = json_object_get(root, "version");
    if (!json_is_integer(version) || json_integer_value(version) != 1) {
        report_log_problem(log, "%s: a replay file of a version other than 1; file skipped",
                           log->path);
        return REPORT_INPUT_REJECTED;
    }
    if (!json_is_array(rows)) {
        report_log_problem(log, "%s: a replay file without a \"rows\" array; file skipped",
                           log->path);
        return REPORT_INPUT_REJECTED;
    }
    int rejected = 0;
    size_t i;
    const json_t *o;
    json_array_foreach(rows, i, o)
    {
        char why[320] = "not a JSON object";
        bench_replay_row r;
        bench_replay_row_init(&r);
        int bad = !json_is_object(o);
        for (int c = 0; !bad && c < BENCH_REPLAY_COLUMNS; c++) {
            const json_t *v = json_object_get(o, bench_replay_fields[c].name);
            char val[600], w[200];
            if (!v && c >= BENCH_REPLAY_COLUMNS_V1) {
                val[0] = '\0'; /* a file from before the medians, overlap, bind or skew: absent */
            } else if (!v) {
                snprintf(why, sizeof why, "missing key '%s'", bench_replay_fields[c].name);
                bad = 1;
            } else if (json_is_null(v)) {
                val[0] = '\0';
            } else if (scalar_text(v, val, sizeof val) != 0) {
                snprintf(why, sizeof why, "key '%s' is not a string or number",
                         bench_replay_fields[c].name);
                bad = 1;
            }
            if (!bad && bench_replay_row_set(&r, c, val, w, sizeof w) != 0) {
                snprintf(why, sizeof why, "key '%s': %s", bench_replay_fields[c].name, w);
                bad = 1;
            }
        }
        if (!bad) bad = bench_replay_row_check(&r, why, sizeof why) != 0;
        if (bad) {
            report_log_problem(log, "%s: rows[%zu]: %s; row skipped", log->path, i, why);
            rejected = 1;
            continue;
        }
        if (report_add_replay(d, &r) != 0) return COLL_ENOMEM;
    }
    return rejected ? REPORT_INPUT_REJECTED : 0;
}

/* The sections of a parsed file into d. */
static int read_results(report_data *d, const json_t *root, report_log *log)
{
    const char *path = log->path;
    const json_t *kind = json_object_get(root, "collbench");
    if (json_is_string(kind) && !strcmp(json_string_value(kind), "replay"))
        return read_replay(d, root, log);
    const json_t *results = json_object_get(root, "results");
    if (!json_is_object(results)) {
        report_log_problem(
            log, "%s:1: no \"results\" object (not a collbench result file); file skipped", path);
        return REPORT_INPUT_REJECTED;
    }
    int rejected = 0, rc = 0;
    const json_t *comm = json_object_get(results, "communication");
    if (comm && !json_is_object(comm)) {
        report_log_problem(log, "%s: results.communication is not an object; section skipped",
                           path);
        rejected = 1;
    } else if (comm) {
        const char *coll;
        const json_t *rows;
        json_object_foreach((json_t *)comm, coll, rows)
        {
            if (!json_is_array(rows)) {
                report_log_problem(log, "%s: results.communication.%s is not an array; skipped",
                                   path, coll);
                rejected = 1;
                continue;
            }
            size_t i;
            const json_t *o;
            json_array_foreach(rows, i, o)
            {
                char why[512];
                bench_row r;
                if (comm_row(o, coll, &r, why, sizeof why) != 0) {
                    report_log_problem(log, "%s: results.communication.%s[%zu]: %s; row skipped",
                                       path, coll, i, why);
                    rejected = 1;
                    continue;
                }
                if ((rc = report_add_comm(d, &r)) != 0) return rc;
            }
        }
    }
    const json_t *train = json_object_get(results, "training");
    const json_t *mem = json_object_get(results, "memory");
    read_machines(d, root, log, &rejected);
    if (train) rc = read_rows(d, "training", train, &REPORT_TRAIN_SCHEMA, log, &rejected);
    if (!rc && mem) rc = read_rows(d, "memory", mem, &REPORT_MEM_SCHEMA, log, &rejected);
    return rc ? rc : rejected ? REPORT_INPUT_REJECTED : 0;
}

int report_read_json(report_data *d, const char *text, size_t len, report_log *log)
{
    json_error_t jerr;
    int rc = REPORT_INPUT_REJECTED;
    report_json_budget_begin();
    json_t *root = json_loadb(text, len, 0, &jerr);
    if (root) rc = read_results(d, root, log);
    json_decref(root);
    int over = report_json_budget_end();
    char limit[32];
    if (!root && over)
        report_log_problem(log,
                           "%s: parsed, this JSON would take more than %s of memory (the limit); "
                           "file skipped",
                           log->path,
                           report_fmt_size(REPORT_JSON_BUDGET_BYTES, limit, sizeof limit));
    else if (!root)
        report_log_problem(log, "%s:%d: invalid JSON at column %d: %s; file skipped", log->path,
                           jerr.line, jerr.column, jerr.text);
    return rc;
}

#endif
