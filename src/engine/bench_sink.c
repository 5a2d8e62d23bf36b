/* Rows to the launcher's pipe, or to the CSV and JSON files. */
#include "engine/bench_sink.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rows/per_iter.h"
#include "launch/launcher.h"
#include "coll.h"

static int results_fd_from_env(void)
{
    const char *v = getenv(COLL_ENV_RESULTS_FD);
    char *end;
    if (!v || !*v) return -1;
    long fd = strtol(v, &end, 10);
    return (*end == '\0' && fd >= 0 && fd < 65536) ? (int)fd : -1;
}

void bench_sink_init(bench_sink *s, int use_results_fd, const char *csv_path, const char *json_path,
                     const bench_json_meta *meta)
{
    memset(s, 0, sizeof *s);
    s->results_fd = use_results_fd ? results_fd_from_env() : -1;
    s->csv_path = csv_path;
    s->json_path = json_path;
    if (meta) s->meta = *meta;
}

static int remember(bench_sink *s, int status, const char *err)
{
    if (s->status == 0) {
        s->status = status;
        snprintf(s->err, sizeof s->err, "%s", err);
    }
    return status;
}

/* The whole line or an error: a pipe write of a short line is atomic anyway,
 * but a signal may still cut it. */
static int write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

static int send_to_launcher(bench_sink *s, const bench_row *r)
{
    char line[1024], err[256];
    int len = bench_row_to_csv(r, line, sizeof line - 1);
    if (len < 0) return remember(s, COLL_EINVAL, "a result row does not fit in a CSV line");
    line[len++] = '\n';
    if (write_all(s->results_fd, line, (size_t)len) != 0) {
        snprintf(err, sizeof err, "cannot send a result to the launcher (fd %d): %s", s->results_fd,
                 strerror(errno));
        return remember(s, COLL_ESYS, err);
    }
    return 0;
}

static int keep_for_json(bench_sink *s, const bench_row *r)
{
    if (s->npending == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        bench_row *grown = realloc(s->pending, cap * sizeof *grown);
        if (!grown) return remember(s, COLL_ENOMEM, "out of memory keeping rows for the JSON file");
        s->pending = grown;
        s->cap = cap;
    }
    s->pending[s->npending++] = *r;
    return 0;
}

int bench_sink_add(bench_sink *s, const bench_row *r)
{
    char err[512];
    if (s->results_fd >= 0) return send_to_launcher(s, r);
    if (s->csv_path) {
        int rc = bench_csv_append(s->csv_path, r, 1, err, sizeof err);
        if (rc != 0) remember(s, rc, err);
    }
    if (s->json_path) keep_for_json(s, r);
    return s->status;
}

int bench_sink_check(const bench_sink *s, char *err, size_t errlen)
{
    char why[512];
    int rc = 0;
    if (s->results_fd >= 0) return 0; /* the launcher writes them, and checked them */
    if (s->csv_path && (rc = bench_csv_check(s->csv_path, why, sizeof why)))
        snprintf(err, errlen, "--csv: %s", why);
    else if (s->json_path && (rc = bench_json_check(s->json_path, why, sizeof why)))
        snprintf(err, errlen, "-J: %s", why);
    return rc;
}

int bench_outputs_check(const bench_sink *s, const char *per_iter_path, char *err, size_t errlen)
{
    char why[512];
    int rc = s ? bench_sink_check(s, err, errlen) : 0;
    if (!rc && per_iter_path && (rc = bench_per_iter_check(per_iter_path, why, sizeof why)))
        snprintf(err, errlen, "--per-iter: %s", why);
    return rc;
}

int bench_sink_flush(bench_sink *s)
{
    char err[512];
    if (!s->json_path || s->npending == 0) return 0;
    int rc = bench_json_write(s->json_path, &s->meta, s->pending, s->npending, err, sizeof err);
    s->npending = 0; /* written, or not writable: either way not again */
    return rc ? remember(s, rc, err) : 0;
}

void bench_sink_free(bench_sink *s)
{
    free(s->pending);
    s->pending = NULL;
    s->npending = s->cap = 0;
}
