/* Reading one rank's trace (docs/DESIGN.md "Trace format") line by line with
 * jansson: the header first, group lines before their first call, calls with
 * increasing seq, the footer last. Every problem is "PATH:LINE: what". */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "replay/trace.h"

void replay_trace_free(replay_trace *t)
{
    if (!t) return;
    for (size_t i = 0; i < t->ngroups; i++) {
        free(t->groups[i].id);
        free(t->groups[i].desc);
        free(t->groups[i].ranks);
        free(t->groups[i].plan);
    }
    free(t->groups);
    for (size_t i = 0; i < t->ncalls; i++) free(t->calls[i].sp.in), free(t->calls[i].sp.out);
    free(t->calls);
    free(t->path);
    memset(t, 0, sizeof *t);
}

long replay_trace_group(const replay_trace *t, const char *id)
{
    for (size_t i = 0; i < t->ngroups; i++)
        if (strcmp(t->groups[i].id, id) == 0) return (long)i;
    return -1;
}

#ifndef COLL_HAVE_JANSSON

int replay_trace_read(const char *path, uint64_t max_bytes, replay_trace *t, int *no_json,
                      char *err, size_t errlen)
{
    (void)max_bytes;
    memset(t, 0, sizeof *t);
    if (no_json) *no_json = 1;
    snprintf(err, errlen,
             "%s: reading a trace needs jansson, which this build lacks "
             "(apt-get install libjansson-dev, then rebuild)",
             path);
    return -1;
}

#else

#include <jansson.h>

/* Refuse what cannot be read or is too large before reading a byte. */
static int check_file(const char *path, uint64_t max_bytes, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) != 0) return snprintf(err, errlen, "%s: %s", path, strerror(errno)), -1;
    if (!S_ISREG(st.st_mode)) return snprintf(err, errlen, "%s: not a regular file", path), -1;
    if ((uint64_t)st.st_size > max_bytes)
        return snprintf(err, errlen,
                        "%s: %llu bytes, over the limit of %llu bytes (%.3g GiB) for one rank's "
                        "trace: not read",
                        path, (unsigned long long)st.st_size, (unsigned long long)max_bytes,
                        (double)max_bytes / (1024.0 * 1024 * 1024)),
               -1;
    return 0;
}

typedef struct reader {
    replay_trace *t;
    long line;
    char *err;
    size_t errlen;
    size_t cap_calls, cap_groups;
} reader;

__attribute__((format(printf, 2, 3))) static int bad(reader *r, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(r->err, r->errlen, "%s:%ld: %s", r->t->path, r->line, msg);
    return -1;
}

/* An integer field: 0 with *out set; 1 when absent and not required; -1 said. */
static int get_int(reader *r, json_t *o, const char *key, int required, long long lo,
                   long long *out)
{
    json_t *v = json_object_get(o, key);
    *out = 0;
    if (!v) return required ? bad(r, "no \"%s\"", key) : 1;
    if (!json_is_integer(v)) return bad(r, "\"%s\" is not an integer", key);
    *out = json_integer_value(v);
    if (*out < lo) {
        if (lo == 0) return bad(r, "\"%s\" is %lld: negative", key, *out);
        return bad(r, "\"%s\" is %lld: below %lld", key, *out, lo);
    }
    return 0;
}

static const char *get_str(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static int read_header(reader *r, json_t *o)
{
    replay_trace *t = r->t;
    const char *format = get_str(o, "format");
    long long version, rank, world;
    if (!format)
        return bad(r, "the first line is not a trace header (no \"format\":\"" REPLAY_TRACE_FORMAT
                      "\"): missing header");
    if (strcmp(format, REPLAY_TRACE_FORMAT) != 0)
        return bad(r, "format \"%.60s\" is not " REPLAY_TRACE_FORMAT, format);
    if (get_int(r, o, "version", 1, 0, &version)) return -1;
    if (version != REPLAY_TRACE_VERSION)
        return bad(r, "trace format version %lld: this collbench reads version %d", version,
                   REPLAY_TRACE_VERSION);
    if (get_int(r, o, "world", 1, 1, &world) || get_int(r, o, "rank", 1, 0, &rank)) return -1;
    if (world > 1 << 20) return bad(r, "world %lld is not a plausible number of ranks", world);
    if (rank >= world) return bad(r, "rank %lld is not a rank of world %lld", rank, world);
    t->rank = (int)rank;
    t->world = (int)world;
    const char *source = get_str(o, "source");
    snprintf(t->source, sizeof t->source, "%s", source ? source : "");
    const char *backend = get_str(o, "backend");
    snprintf(t->backend, sizeof t->backend, "%s", backend ? backend : "");
    const char *host = get_str(o, "host");
    snprintf(t->host, sizeof t->host, "%s", host ? host : "");
    long long cpus;
    if (get_int(r, o, "cpus", 0, 1, &cpus) < 0) return -1;
    if (cpus > 1 << 20) return bad(r, "\"cpus\" is %lld: not a plausible number of CPUs", cpus);
    t->cpus = (int)cpus; /* 0: not recorded */
    return 0;
}

static int read_group(reader *r, json_t *o)
{
    replay_trace *t = r->t;
    const char *id = get_str(o, "group");
    json_t *ranks = json_object_get(o, "ranks");
    if (!id || !*id) return bad(r, "a group line without a group id string");
    if (replay_trace_group(t, id) >= 0) return bad(r, "group \"%.60s\" declared twice", id);
    if (!json_is_array(ranks) || json_array_size(ranks) == 0)
        return bad(r, "group \"%.60s\": \"ranks\" is not a list of ranks", id);
    if (t->ngroups == r->cap_groups) {
        size_t cap = r->cap_groups ? 2 * r->cap_groups : 8;
        replay_group *g = realloc(t->groups, cap * sizeof *g);
        if (!g) return bad(r, "out of memory");
        t->groups = g;
        r->cap_groups = cap;
    }
    replay_group *g = &t->groups[t->ngroups++];
    memset(g, 0, sizeof *g);
    g->line = r->line;
    g->my_rank = -1;
    g->id = strdup(id);
    const char *desc = get_str(o, "desc");
    g->desc = strdup(desc ? desc : "");
    g->nranks = (int)json_array_size(ranks);
    g->ranks = calloc((size_t)g->nranks, sizeof *g->ranks);
    if (!g->id || !g->desc || !g->ranks) return bad(r, "out of memory");
    for (int i = 0; i < g->nranks; i++) {
        json_t *v = json_array_get(ranks, (size_t)i);
        long long x = json_is_integer(v) ? json_integer_value(v) : -1;
        if (x < 0 || x >= t->world)
            return bad(r, "group \"%.60s\": ranks[%d] is not a rank of world %d", id, i, t->world);
        for (int j = 0; j < i; j++)
            if (g->ranks[j] == x) return bad(r, "group \"%.60s\": rank %lld listed twice", id, x);
        g->ranks[i] = (int)x;
        if (x == t->rank) g->my_rank = i;
    }
    if (g->my_rank < 0)
        return bad(r, "group \"%.60s\": this trace's rank %d is not one of its ranks", id, t->rank);
    return 0;
}

/* A plan line: a declared group's communicator's probes' verdicts, as
 * tuning variables the replay sets while it makes that group's communicator
 * (coll_comm_plan). Only COLL_ names and plain values, within the bounds of
 * trace.h: the replay puts them in its environment. The last line of a
 * group counts. */
static int read_plan(reader *r, json_t *o)
{
    const char *id = get_str(o, "group"), *plan = get_str(o, "plan");
    long gi = id ? replay_trace_group(r->t, id) : -1;
    if (gi < 0) return bad(r, "a plan line for a group not declared before it");
    if (!plan) return bad(r, "group \"%.60s\": \"plan\" is not a string", id);
    if (strlen(plan) > REPLAY_PLAN_MAX_LEN)
        return bad(r, "group \"%.60s\": the plan is longer than %d characters", id,
                   REPLAY_PLAN_MAX_LEN);
    int n = 0;
    for (const char *p = plan; *p;) {
        size_t name = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
        size_t value = p[name] == '=' ? strspn(p + name + 1, "0123456789KMG") : 0;
        const char *end = p + name + 1 + value;
        if (strncmp(p, "COLL_", 5) || name <= 5 || !value || (*end && *end != ' ') ||
            ++n > REPLAY_PLAN_MAX_VARS)
            return bad(r, "group \"%.60s\": the plan \"%.80s\" is not COLL_NAME=VALUE pairs", id,
                       plan);
        p = *end ? end + 1 : end;
    }
    char *copy = strdup(plan);
    if (!copy) return bad(r, "out of memory");
    free(r->t->groups[gi].plan);
    r->t->groups[gi].plan = copy;
    return 0;
}

/* An optional count of ns into *v, -1 when absent. */
static int read_ns(reader *r, json_t *o, const char *key, int64_t *v)
{
    json_t *x = json_object_get(o, key);
    *v = -1;
    if (!x) return 0;
    double d = json_is_number(x) ? json_number_value(x) : -1;
    if (!(d >= 0) || !isfinite(d)) return bad(r, "\"%s\" is not a count of ns >= 0", key);
    *v = (int64_t)d;
    return 0;
}

static int read_times(reader *r, json_t *o, replay_call *c)
{
    json_t *t0 = json_object_get(o, "t0"), *t1 = json_object_get(o, "t1");
    json_t *gap = json_object_get(o, "gap");
    c->t0 = c->t1 = -1;
    if (gap && !json_is_number(gap)) return bad(r, "\"gap\" is not a number");
    /* a recorder's clocks may make an asynchronous call's gap slightly negative */
    double g = gap ? json_number_value(gap) : 0;
    c->gap = g > 0 && isfinite(g) ? (int64_t)g : 0;
    if (read_ns(r, o, "cpu", &c->cpu) || read_ns(r, o, "wait_cpu", &c->wait_cpu)) return -1;
    json_t *blocking = json_object_get(o, "blocking");
    if (blocking && !json_is_boolean(blocking)) return bad(r, "\"blocking\" is not true or false");
    c->blocking = blocking && json_is_true(blocking);
    if (!t0 && !t1) return 0;
    if (!json_is_number(t0) || !json_is_number(t1))
        return bad(r, "\"t0\" and \"t1\" must both be numbers (ns), or both absent");
    double a = json_number_value(t0), b = json_number_value(t1);
    if (!(a >= 0) || !(b >= 0) || !isfinite(a) || !isfinite(b))
        return bad(r, "\"t0\"/\"t1\" negative or not finite");
    if (b < a) return bad(r, "\"t1\" %.0f is before \"t0\" %.0f", b, a);
    c->t0 = (int64_t)a;
    c->t1 = (int64_t)b;
    return 0;
}

static int read_red(reader *r, json_t *o, replay_call *c)
{
    const char *red = get_str(o, "red");
    c->red = COLL_SUM;
    if (!replay_op_has_red(c->op)) {
        coll_op ignored;
        if (red && *red && coll_op_parse(red, &ignored) != COLL_OK)
            return bad(r, "unknown reduction \"%.40s\" (sum, prod, min, max, avg)", red);
        return 0;
    }
    if (!red) return bad(r, "%s without \"red\" (its reduction)", replay_op_name(c->op));
    if (coll_op_parse(red, &c->red) != COLL_OK)
        return bad(r, "unknown reduction \"%.40s\" (sum, prod, min, max, avg)", red);
    if (coll_op_valid(c->dtype, c->red) != COLL_OK)
        return bad(r, "reduction %s on %s: libcoll averages floating-point dtypes only", red,
                   coll_dtype_name(c->dtype));
    return 0;
}

/* root or peer: a rank of the group where the op has one, else -1. */
static int read_rank_field(reader *r, json_t *o, const char *key, int needed, const replay_group *g,
                           int *out)
{
    long long x = -1;
    *out = -1;
    if (!needed) return 0;
    if (get_int(r, o, key, 1, 0, &x)) return -1;
    if (x >= g->nranks)
        return bad(r, "%s %lld is not a rank of group \"%.60s\" (%d ranks)", key, x, g->id,
                   g->nranks);
    if (!strcmp(key, "peer") && x == g->my_rank)
        return bad(r, "peer %lld is this rank itself in group \"%.60s\"", x, g->id);
    *out = (int)x;
    return 0;
}

/* One list of splits: n non-negative integers adding up to want. */
static int read_split_list(reader *r, json_t *a, const char *key, size_t n, uint64_t want,
                           size_t *out)
{
    if (!json_is_array(a)) return bad(r, "\"%s\" is not a list of element counts", key);
    if (json_array_size(a) != n)
        return bad(r, "\"%s\" has %zu entries for a group of %zu ranks", key, json_array_size(a),
                   n);
    size_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *v = json_array_get(a, i);
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return bad(r, "\"%s\"[%zu] is not a non-negative integer", key, i);
        if ((unsigned long long)json_integer_value(v) > SIZE_MAX - sum)
            return bad(r, "\"%s\" overflows", key);
        out[i] = (size_t)json_integer_value(v);
        sum += out[i];
    }
    if (sum != want)
        return bad(r, "\"%s\" adds up to %llu elements, the call's \"%s\" says %llu", key,
                   (unsigned long long)sum, key[0] == 'i' ? "in" : "out", (unsigned long long)want);
    return 0;
}

/* An all-to-all's in_splits and out_splits: both or neither, on an all-to-all
 * only, one entry per group rank, adding up to its in and out. */
static int read_splits(reader *r, json_t *o, replay_call *c, const replay_group *g)
{
    json_t *in = json_object_get(o, "in_splits"), *out = json_object_get(o, "out_splits");
    if (!in && !out) return 0;
    if (c->op != REPLAY_ALLTOALL)
        return bad(r, "seq %lld: %s with splits: only an alltoall has them", (long long)c->seq,
                   replay_op_name(c->op));
    if (!in || !out)
        return bad(r, "seq %lld: \"%s\" without \"%s\"", (long long)c->seq,
                   in ? "in_splits" : "out_splits", in ? "out_splits" : "in_splits");
    size_t n = (size_t)g->nranks;
    c->sp.in = malloc(n * sizeof *c->sp.in);
    c->sp.out = malloc(n * sizeof *c->sp.out);
    if (!c->sp.in || !c->sp.out) {
        free(c->sp.in), free(c->sp.out);
        c->sp = (replay_splits){0};
        return bad(r, "out of memory");
    }
    c->sp.n = n;
    return read_split_list(r, in, "in_splits", n, c->in, c->sp.in) ||
                   read_split_list(r, out, "out_splits", n, c->out, c->sp.out)
               ? -1
               : 0;
}

static int read_call(reader *r, json_t *o)
{
    replay_trace *t = r->t;
    replay_call c = {.line = r->line};
    long long seq, v;
    if (get_int(r, o, "seq", 1, 0, &seq)) return -1;
    if (t->ncalls && seq <= t->calls[t->ncalls - 1].seq)
        return bad(r, "seq %lld does not increase (the call before has seq %lld)", seq,
                   (long long)t->calls[t->ncalls - 1].seq);
    c.seq = seq;
    const char *gid = get_str(o, "group"), *op = get_str(o, "op"), *dt = get_str(o, "dtype");
    if (!gid) return bad(r, "call seq %lld has no \"group\"", seq);
    long gi = replay_trace_group(t, gid);
    if (gi < 0)
        return bad(r, "call seq %lld is in group \"%.60s\", which no line before it declares", seq,
                   gid);
    c.group = (size_t)gi;
    if (!op || replay_op_parse(op, &c.op))
        return bad(r,
                   "seq %lld: unknown op \"%.40s\" (allreduce, allgather, reducescatter, "
                   "broadcast, reduce, alltoall, barrier, send, recv, gather, scatter)",
                   seq, op ? op : "");
    if (!dt || coll_dtype_parse(dt, &c.dtype) != COLL_OK)
        return bad(r, "seq %lld: unknown dtype \"%.40s\"", seq, dt ? dt : "");
    if (read_red(r, o, &c)) return -1;
    if (get_int(r, o, "count", 1, 0, &v)) return -1;
    c.count = (uint64_t)v;
    int rc = get_int(r, o, "in", 0, 0, &v);
    if (rc < 0) return -1;
    c.in = rc ? c.count : (uint64_t)v;
    if ((rc = get_int(r, o, "out", 0, 0, &v)) < 0) return -1;
    c.out = rc ? c.count : (uint64_t)v;
    const replay_group *g = &t->groups[c.group];
    if (read_rank_field(r, o, "root", replay_op_has_root(c.op), g, &c.root) ||
        read_rank_field(r, o, "peer", replay_op_is_p2p(c.op), g, &c.peer) || read_times(r, o, &c))
        return -1;
    if (read_splits(r, o, &c, g)) return free(c.sp.in), free(c.sp.out), -1;
    if (t->ncalls == r->cap_calls) {
        size_t cap = r->cap_calls ? 2 * r->cap_calls : 64;
        replay_call *calls = realloc(t->calls, cap * sizeof *calls);
        if (!calls) return free(c.sp.in), free(c.sp.out), bad(r, "out of memory");
        t->calls = calls;
        r->cap_calls = cap;
    }
    t->calls[t->ncalls++] = c;
    return 0;
}

static int read_footer(reader *r, json_t *o)
{
    long long calls;
    json_t *trunc = json_object_get(o, "truncated");
    if (!json_is_true(json_object_get(o, "end"))) return bad(r, "a footer without \"end\":true");
    if (json_is_true(trunc))
        return bad(r, "the trace is truncated (the recorder's size cap, COLL_TRACE_MAX_BYTES, "
                      "stopped it): replay refuses a truncated trace");
    if (trunc && !json_is_false(trunc)) return bad(r, "\"truncated\" is not true or false");
    if (get_int(r, o, "calls", 1, 0, &calls)) return -1;
    if ((unsigned long long)calls != r->t->ncalls)
        return bad(r, "the footer says %lld calls, the file has %zu", calls, r->t->ncalls);
    return 0;
}

static int blank(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n') s++;
    return *s == '\0';
}

/* One line: 0 read, 1 the footer, -1 said. */
static int read_line(reader *r, const char *text, int header_seen)
{
    json_error_t jerr;
    json_t *o = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
    int rc;
    if (!o) return bad(r, "not JSON: %s", jerr.text);
    if (!json_is_object(o)) rc = bad(r, "not a JSON object");
    else if (!header_seen) rc = read_header(r, o);
    else if (json_object_get(o, "format")) rc = bad(r, "a second header");
    else if (json_object_get(o, "end")) rc = read_footer(r, o) ? -1 : 1;
    else if (json_object_get(o, "seq")) rc = read_call(r, o);
    else if (json_object_get(o, "plan")) rc = read_plan(r, o);
    else if (json_object_get(o, "group")) rc = read_group(r, o);
    else rc = bad(r, "neither a group, a call nor the footer");
    json_decref(o);
    return rc;
}

int replay_trace_read(const char *path, uint64_t max_bytes, replay_trace *t, int *no_json,
                      char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    if (no_json) *no_json = 0;
    if (check_file(path, max_bytes, err, errlen)) return -1;
    reader r = {.t = t, .err = err, .errlen = errlen};
    if (!(t->path = strdup(path))) return snprintf(err, errlen, "%s: out of memory", path), -1;
    FILE *f = fopen(path, "r");
    if (!f) return snprintf(err, errlen, "%s: %s", path, strerror(errno)), -1;
    char *buf = NULL;
    size_t cap = 0;
    int rc = 0, header_seen = 0, footer_seen = 0;
    while (rc == 0 && getline(&buf, &cap, f) >= 0) {
        r.line++;
        if (blank(buf)) continue;
        if (footer_seen) {
            rc = bad(&r, "a line after the footer");
            break;
        }
        int got = read_line(&r, buf, header_seen);
        if (got < 0) rc = -1;
        header_seen = 1;
        footer_seen = got == 1;
    }
    if (rc == 0 && ferror(f)) rc = -1, snprintf(err, errlen, "%s: %s", path, strerror(errno));
    else if (rc == 0 && !header_seen)
        rc = -1, snprintf(err, errlen, "%s: empty: no header line (missing header)", path);
    else if (rc == 0 && !footer_seen)
        rc = -1, snprintf(err, errlen,
                          "%s:%ld: no footer ({\"end\":true,...}) after the last line: the trace "
                          "is incomplete (cut short?)",
                          path, r.line);
    free(buf);
    fclose(f);
    if (rc == 0) {
        t->has_times = t->ncalls > 0;
        for (size_t i = 0; i < t->ncalls; i++)
            if (t->calls[i].t0 < 0) t->has_times = 0;
    }
    return rc;
}

#endif
