/* JSON result file in the docs/DESIGN.md schema, built with jansson:
 *   {"name", "world_size", "timestamp", "config": {...},
 *    "results": {"communication": {"<collective>": [rows]}, "training": {}, "memory": {}}}
 * An existing file is merged into, never clobbered: its rows and sections stay,
 * and a file that cannot be parsed is refused rather than overwritten. */
#include "core/errbuf.h"
#include "rows/result.h"
#include "coll.h"

#include <stdarg.h>
#include <stdio.h>


#ifndef COLL_HAVE_JANSSON

int bench_json_write(const char *path, const bench_json_meta *meta, const bench_row *rows, size_t n,
                     char *err, size_t errlen)
{
    (void)meta, (void)rows, (void)n;
    coll__set_err(err, errlen,
                  "cannot write %s: built without jansson (apt-get install libjansson-dev)",
                  path ? path : "JSON output");
    return COLL_EUNAVAIL;
}

int bench_json_merge_rows(const char *path, const bench_json_meta *meta, const char *section,
                          const char *group, const char *rows_json, char *err, size_t errlen)
{
    (void)meta, (void)section, (void)group, (void)rows_json;
    coll__set_err(err, errlen,
                  "cannot write %s: built without jansson (apt-get install libjansson-dev)",
                  path ? path : "JSON output");
    return COLL_EUNAVAIL;
}

int bench_json_check(const char *path, char *err, size_t errlen)
{
    return bench_json_write(path, NULL, NULL, 0, err, errlen); /* the same refusal */
}

int bench_json_set_machine(const char *path, const char *host, const char *key, double value,
                           char *err, size_t errlen)
{
    (void)host, (void)key, (void)value;
    return bench_json_write(path, NULL, NULL, 0, err, errlen); /* the same refusal */
}

#else

#include "core/atomic_file.h"
#include "core/file_check.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* 15 significant digits print every value the CSV would (3-decimal times,
 * 6-digit bandwidths) without binary noise such as 12.345599999999999. */
#define DUMP_FLAGS (JSON_INDENT(2) | JSON_REAL_PRECISION(15))

/* JSON has no NaN/Inf: such a value is written as null. */
static json_t *number(double v) { return isfinite(v) ? json_real(v) : json_null(); }

/* One row: keys and order of the CSV header. */
static json_t *row_to_json(const bench_row *r)
{
    json_t *o = json_object();
    if (!o) return NULL;
    int bad = 0;
#define SET(key, value) bad |= json_object_set_new(o, key, value)
    SET("timestamp", json_string(r->timestamp));
    SET("host", json_string(r->host));
    SET("collective", json_string(r->collective));
    SET("backend", json_string(r->backend));
    SET("algo", json_string(r->algo));
    SET("device", json_string(r->device));
    SET("buffers", json_string(r->buffers));
    SET("nprocs", json_integer(r->nprocs));
    SET("nnodes", json_integer(r->nnodes));
    SET("dtype", json_string(r->dtype));
    SET("op", json_string(r->op));
    SET("in_place", json_integer(r->in_place));
    SET("bytes", json_integer((json_int_t)r->bytes));
    SET("count", json_integer((json_int_t)r->count));
    SET("warmup", json_integer(r->warmup));
    SET("iters", json_integer(r->iters));
    SET("time_us_avg", number(r->time_us_avg));
    SET("time_us_min", number(r->time_us_min));
    SET("time_us_p25", number(r->time_us_p25));
    SET("time_us_p50", number(r->time_us_p50));
    SET("time_us_p75", number(r->time_us_p75));
    SET("time_us_p99", number(r->time_us_p99));
    SET("time_us_max", number(r->time_us_max));
    SET("algbw_GBps", number(r->algbw_GBps));
    SET("busbw_GBps", number(r->busbw_GBps));
    SET("wrong", json_integer((json_int_t)r->wrong));
    SET("pass", json_integer(r->pass));
#undef SET
    if (bad) { /* a string that is not UTF-8, or out of memory */
        json_decref(o);
        return NULL;
    }
    return o;
}

/* Reads path into a JSON document. *root = NULL when the file is absent or
 * empty (a fresh file); an error when it exists but is not a JSON object. */
static int load_existing(const char *path, json_t **root, char *err, size_t errlen)
{
    *root = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return COLL_OK;
        coll__set_err(err, errlen, "%s: %s", path, strerror(errno));
        return COLL_ESYS;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        coll__set_err(err, errlen, "%s: not a regular file", path);
        close(fd);
        return COLL_EINVAL;
    }
    if (st.st_size == 0) {
        close(fd);
        return COLL_OK;
    }
    json_error_t jerr;
    json_t *doc = json_loadfd(fd, 0, &jerr);
    close(fd);
    if (!doc) {
        coll__set_err(err, errlen,
                      "%s exists but is not valid JSON (line %d, column %d: %s); "
                      "refusing to overwrite it",
                      path, jerr.line, jerr.column, jerr.text);
        return COLL_EINVAL;
    }
    if (!json_is_object(doc)) {
        coll__set_err(err, errlen, "%s exists but is not a JSON object; refusing to overwrite it",
                      path);
        json_decref(doc);
        return COLL_EINVAL;
    }
    *root = doc;
    return COLL_OK;
}

/* obj[key] as an object, created when missing; NULL (with err) when the key
 * holds something else, which we must not replace. */
static json_t *child_object(json_t *obj, const char *key, const char *path, const char *where,
                            char *err, size_t errlen)
{
    json_t *c = json_object_get(obj, key);
    if (!c) {
        c = json_object();
        if (!c || json_object_set_new(obj, key, c) != 0) {
            coll__set_err(err, errlen, "%s: out of memory", path);
            return NULL;
        }
    } else if (!json_is_object(c)) {
        coll__set_err(err, errlen, "%s: existing \"%s\" is not an object; refusing to overwrite it",
                      path, where);
        return NULL;
    }
    return c;
}

static void utc_now(char *buf, size_t len)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* This run's config: iterations, device and the command's extra keys. */
static json_t *run_config(const bench_json_meta *meta, const char *path, char *err, size_t errlen)
{
    json_t *c = json_object();
    int bad = !c;
    if (c) {
        bad |= json_object_set_new(c, "warmup_iters", json_integer(meta->warmup_iters));
        bad |= json_object_set_new(c, "benchmark_iters", json_integer(meta->benchmark_iters));
        if (meta->device) bad |= json_object_set_new(c, "device", json_string(meta->device));
    }
    if (c && meta->extra_config_json && *meta->extra_config_json) {
        json_error_t jerr;
        json_t *extra = json_loads(meta->extra_config_json, 0, &jerr);
        if (!json_is_object(extra)) {
            coll__set_err(err, errlen, "%s: extra config is not a JSON object (%s)", path,
                          extra ? "another JSON type" : jerr.text);
            json_decref(extra);
            json_decref(c);
            return NULL;
        }
        bad |= json_object_update(c, extra);
        json_decref(extra);
    }
    if (bad) {
        coll__set_err(err, errlen, "%s: out of memory building JSON", path);
        json_decref(c);
        return NULL;
    }
    return c;
}

/* Runs of different collectives or iterations merge into one file: "configs"
 * lists every distinct config that wrote rows here (a file written before it
 * starts with its "config"), and "config" keeps only what they all agree on:
 * a key two runs set differently is left out of it, so it never names one
 * writer's collective for another's rows. */
static int merge_configs(json_t *root, json_t *mine, const char *path, char *err, size_t errlen)
{
    json_t *config = child_object(root, "config", path, "config", err, errlen);
    json_t *configs = json_object_get(root, "configs");
    if (!config) return COLL_EINVAL;
    if (configs && !json_is_array(configs)) {
        coll__set_err(err, errlen,
                      "%s: existing \"configs\" is not an array; refusing to "
                      "overwrite it",
                      path);
        return COLL_EINVAL;
    }
    int bad = 0;
    if (!configs) {
        bad |= !(configs = json_array()) || json_object_set_new(root, "configs", configs);
        if (!bad && json_object_size(config)) bad |= json_array_append(configs, config);
    }
    int known = 0;
    for (size_t i = 0; !bad && i < json_array_size(configs); i++)
        known |= json_equal(json_array_get(configs, i), mine);
    if (!bad && !known) bad |= json_array_append(configs, mine);
    json_t *agreed = json_object();
    bad |= !agreed;
    for (size_t i = 0; !bad && i < json_array_size(configs); i++) {
        const char *key;
        json_t *v;
        json_object_foreach(json_array_get(configs, i), key, v)
        {
            int same = 1;
            for (size_t j = 0; same && j < json_array_size(configs); j++) {
                json_t *w = json_object_get(json_array_get(configs, j), key);
                same = !w || json_equal(v, w);
            }
            if (same) bad |= json_object_set(agreed, key, v);
        }
    }
    if (!bad) bad |= json_object_set_new(root, "config", agreed);
    else json_decref(agreed);
    if (bad) {
        coll__set_err(err, errlen, "%s: out of memory building JSON", path);
        return COLL_ENOMEM;
    }
    return COLL_OK;
}

/* Top-level keys and config; existing values are kept except where this run
 * knows better (world_size grows to the max; config: merge_configs). */
static int merge_meta(json_t *root, const bench_json_meta *meta, const char *path, char *err,
                      size_t errlen)
{
    int bad = 0; /* json_object_set_new fails only without memory */
    if (!json_is_string(json_object_get(root, "name")))
        bad |= json_object_set_new(root, "name",
                                   json_string(meta->name ? meta->name : "collbench"));
    json_t *ws = json_object_get(root, "world_size");
    json_int_t old_ws = json_is_integer(ws) ? json_integer_value(ws) : 0;
    bad |= json_object_set_new(root, "world_size",
                               json_integer(old_ws > meta->world_size ? old_ws : meta->world_size));
    if (!json_is_string(json_object_get(root, "timestamp"))) {
        char now[32];
        utc_now(now, sizeof now);
        bad |= json_object_set_new(root, "timestamp", json_string(now));
    }

    if (bad) {
        coll__set_err(err, errlen, "%s: out of memory building JSON (or a text field is not UTF-8)",
                      path);
        return COLL_ENOMEM;
    }
    json_t *mine = run_config(meta, path, err, errlen);
    if (!mine) return COLL_EINVAL;
    int rc = merge_configs(root, mine, path, err, errlen);
    json_decref(mine);
    return rc;
}

static int append_rows(json_t *root, const bench_row *rows, size_t n, const char *path, char *err,
                       size_t errlen)
{
    json_t *results = child_object(root, "results", path, "results", err, errlen);
    if (!results) return COLL_EINVAL;
    json_t *comm = child_object(results, "communication", path, "results.communication", err,
                                errlen);
    if (!comm) return COLL_EINVAL;
    /* The other sections exist from the first write on, so readers need not check. */
    if (!child_object(results, "training", path, "results.training", err, errlen) ||
        !child_object(results, "memory", path, "results.memory", err, errlen))
        return COLL_EINVAL;

    for (size_t i = 0; i < n; i++) {
        const char *coll = rows[i].collective[0] ? rows[i].collective : "unknown";
        json_t *list = json_object_get(comm, coll);
        if (!list) {
            list = json_array();
            if (!list || json_object_set_new(comm, coll, list) != 0) {
                coll__set_err(err, errlen, "%s: out of memory", path);
                return COLL_ENOMEM;
            }
        } else if (!json_is_array(list)) {
            coll__set_err(err, errlen,
                          "%s: existing \"results.communication.%s\" is not an array; "
                          "refusing to overwrite it",
                          path, coll);
            return COLL_EINVAL;
        }
        json_t *row = row_to_json(&rows[i]);
        if (!row || json_array_append_new(list, row) != 0) {
            coll__set_err(err, errlen, "%s: row %zu cannot be stored as JSON (text not UTF-8?)",
                          path, i + 1);
            return COLL_EINVAL;
        }
    }
    return COLL_OK;
}

/* Write root to path atomically (pretty, newline-terminated); consumes root. */
static int dump_atomic(json_t *root, const char *path, char *err, size_t errlen)
{
    char *text = json_dumps(root, DUMP_FLAGS);
    json_decref(root);
    if (!text) {
        coll__set_err(err, errlen, "%s: out of memory formatting JSON", path);
        return COLL_ENOMEM;
    }
    size_t len = strlen(text);
    text[len] = '\n'; /* replaces the NUL: the file ends with a newline */
    int rc = coll__file_write_atomic(path, text, len + 1, err, errlen);
    free(text);
    return rc;
}

static int bench_json_write_held(const char *path, const bench_json_meta *meta,
                                 const bench_row *rows, size_t n, char *err, size_t errlen)
{
    if (!path || !*path || !meta || (!rows && n > 0)) {
        coll__set_err(err, errlen, "bench_json_write: %s",
                      !path || !*path ? "empty path"
                      : !meta         ? "no metadata"
                                      : "no rows");
        return COLL_EINVAL;
    }
    json_t *root;
    int rc = load_existing(path, &root, err, errlen);
    if (rc != COLL_OK) return rc;
    if (!root && !(root = json_object())) {
        coll__set_err(err, errlen, "%s: out of memory", path);
        return COLL_ENOMEM;
    }
    rc = merge_meta(root, meta, path, err, errlen);
    if (rc == COLL_OK) rc = append_rows(root, rows, n, path, err, errlen);
    if (rc != COLL_OK) {
        json_decref(root);
        return rc;
    }
    return dump_atomic(root, path, err, errlen);
}

int bench_json_check(const char *path, char *err, size_t errlen)
{
    json_t *root;
    int rc = coll__file_check_writable(path, COLL_FILE_REPLACE, err, errlen);
    if (rc == COLL_OK) rc = load_existing(path, &root, err, errlen);
    if (rc != COLL_OK || !root) return rc;
    /* the sections and config a merge writes into must be objects */
    if (!child_object(root, "config", path, "config", err, errlen)) rc = COLL_EINVAL;
    if (rc == COLL_OK) rc = append_rows(root, NULL, 0, path, err, errlen);
    json_decref(root);
    return rc;
}

static int bench_json_set_machine_held(const char *path, const char *host, const char *key,
                                       double value, char *err, size_t errlen)
{
    if (!path || !*path || !host || !*host || !key || !isfinite(value)) {
        coll__set_err(err, errlen, "bench_json_set_machine: missing argument or non-finite value");
        return COLL_EINVAL;
    }
    json_t *root, *m;
    int rc = load_existing(path, &root, err, errlen);
    if (rc == COLL_OK && !root && !(root = json_object())) rc = COLL_ENOMEM;
    if (rc == COLL_OK) rc = append_rows(root, NULL, 0, path, err, errlen); /* the sections */
    if (rc == COLL_OK && (!(m = child_object(root, "machines", path, "machines", err, errlen)) ||
                          !(m = child_object(m, host, path, "machines.<host>", err, errlen))))
        rc = COLL_EINVAL;
    if (rc == COLL_OK && json_object_set_new(m, key, json_real(value)) != 0) {
        coll__set_err(err, errlen, "%s: out of memory (or the host name is not UTF-8)", path);
        rc = COLL_ENOMEM;
    }
    if (rc != COLL_OK) {
        json_decref(root);
        return rc;
    }
    return dump_atomic(root, path, err, errlen);
}

static int bench_json_merge_rows_held(const char *path, const bench_json_meta *meta,
                                      const char *section, const char *group, const char *rows_json,
                                      char *err, size_t errlen)
{
    if (!path || !*path || !meta || !section || !group || !rows_json) {
        coll__set_err(err, errlen, "bench_json_merge_rows: missing argument");
        return COLL_EINVAL;
    }
    json_error_t jerr;
    json_t *rows = json_loads(rows_json, 0, &jerr);
    if (!json_is_array(rows)) {
        coll__set_err(err, errlen, "%s: rows for results.%s.%s are not a JSON array (%s)", path,
                      section, group, rows ? "another JSON type" : jerr.text);
        json_decref(rows);
        return COLL_EINVAL;
    }
    json_t *root;
    int rc = load_existing(path, &root, err, errlen);
    if (rc == COLL_OK && !root && !(root = json_object())) rc = COLL_ENOMEM;
    if (rc == COLL_OK) rc = merge_meta(root, meta, path, err, errlen);
    if (rc == COLL_OK) rc = append_rows(root, NULL, 0, path, err, errlen); /* the sections */
    json_t *sec = NULL, *list = NULL;
    char where[128];
    snprintf(where, sizeof where, "results.%s", section);
    if (rc == COLL_OK &&
        !(sec = child_object(json_object_get(root, "results"), section, path, where, err, errlen)))
        rc = COLL_EINVAL;
    if (rc == COLL_OK) {
        list = json_object_get(sec, group);
        if (!list) {
            if (!(list = json_array()) || json_object_set_new(sec, group, list) != 0)
                rc = COLL_ENOMEM;
        } else if (!json_is_array(list)) {
            coll__set_err(err, errlen,
                          "%s: existing \"results.%s.%s\" is not an array; "
                          "refusing to overwrite it",
                          path, section, group);
            rc = COLL_EINVAL;
        }
    }
    if (rc == COLL_OK && json_array_extend(list, rows) != 0) rc = COLL_ENOMEM;
    json_decref(rows);
    if (rc != COLL_OK) {
        if (rc == COLL_ENOMEM) coll__set_err(err, errlen, "%s: out of memory", path);
        json_decref(root);
        return rc;
    }
    return dump_atomic(root, path, err, errlen);
}

/* The public writers: each read-merge-replace under the file's lock, so runs
 * that share one -J file keep every row (core/atomic_file.h). */
#define UNDER_LOCK(call)                                             \
    do {                                                             \
        int lock_, rc_ = coll__file_lock(path, &lock_, err, errlen); \
        if (rc_ == COLL_OK) rc_ = (call);                            \
        coll__file_unlock(lock_);                                    \
        return rc_;                                                  \
    } while (0)

int bench_json_write(const char *path, const bench_json_meta *meta, const bench_row *rows, size_t n,
                     char *err, size_t errlen)
{
    if (!path || !*path) return bench_json_write_held(path, meta, rows, n, err, errlen);
    UNDER_LOCK(bench_json_write_held(path, meta, rows, n, err, errlen));
}

int bench_json_set_machine(const char *path, const char *host, const char *key, double value,
                           char *err, size_t errlen)
{
    if (!path || !*path) return bench_json_set_machine_held(path, host, key, value, err, errlen);
    UNDER_LOCK(bench_json_set_machine_held(path, host, key, value, err, errlen));
}

int bench_json_merge_rows(const char *path, const bench_json_meta *meta, const char *section,
                          const char *group, const char *rows_json, char *err, size_t errlen)
{
    if (!path || !*path)
        return bench_json_merge_rows_held(path, meta, section, group, rows_json, err, errlen);
    UNDER_LOCK(bench_json_merge_rows_held(path, meta, section, group, rows_json, err, errlen));
}

#endif /* COLL_HAVE_JANSSON */
