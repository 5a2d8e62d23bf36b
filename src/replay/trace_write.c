/* Writing one rank's trace (trace_write.h): every line built as a jansson
 * object (so names are escaped as JSON wants), the whole file collected in
 * memory and handed to coll__file_write_atomic (temporary, fsync, rename). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/atomic_file.h"
#include "replay/trace_write.h"

#ifndef COLL_HAVE_JANSSON

int replay_trace_write(const char *path, const replay_trace *t, const replay_write_meta *meta,
                       char *err, size_t errlen)
{
    (void)t, (void)meta;
    snprintf(err, errlen,
             "%s: writing a trace needs jansson, which this build lacks "
             "(apt-get install libjansson-dev, then rebuild)",
             path);
    return -1;
}

#else

#include <jansson.h>

typedef struct buf {
    char *data;
    size_t len, cap;
    int failed;
} buf;

/* o's compact text and a newline onto b; o is released. */
static void put_line(buf *b, json_t *o)
{
    char *s = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    size_t n = s ? strlen(s) : 0;
    if (!s || b->failed) {
        b->failed = 1;
        free(s);
        return;
    }
    if (b->len + n + 2 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 2) cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d) {
            b->failed = 1;
            free(s);
            return;
        }
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len++] = '\n';
    free(s);
}

static json_t *str(const char *s) { return json_string(s ? s : ""); }

static json_t *header(const replay_trace *t, const replay_write_meta *m)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    double created = m && m->created_unix > 0 ? m->created_unix
                                              : (double)now.tv_sec + (double)now.tv_nsec / 1e9;
    json_t *h = json_pack("{s:s,s:i,s:i,s:i,s:o,s:o,s:I,s:o,s:o,s:f}", "format",
                          REPLAY_TRACE_FORMAT, "version", REPLAY_TRACE_VERSION, "rank", t->rank,
                          "world", t->world, "source", str(m && m->source ? m->source : t->source),
                          "host", str(m ? m->host : NULL), "pid", (json_int_t)(m ? m->pid : 0),
                          "torch", str(m ? m->torch : NULL), "backend", str(m ? m->backend : NULL),
                          "created_unix", created);
    if (h && t->cpus > 0) json_object_set_new(h, "cpus", json_integer(t->cpus));
    return h;
}

static json_t *group_line(const replay_group *g)
{
    json_t *ranks = json_array();
    for (int i = 0; i < g->nranks; i++) json_array_append_new(ranks, json_integer(g->ranks[i]));
    return json_pack("{s:s,s:o,s:o}", "group", g->id, "ranks", ranks, "desc", str(g->desc));
}

static json_t *list(const size_t *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++) json_array_append_new(a, json_integer((json_int_t)v[i]));
    return a;
}

static json_t *call_line(const replay_trace *t, const replay_call *c)
{
    const char *red = replay_op_has_red(c->op) ? coll_op_name(c->red) : "";
    json_t *o = json_pack("{s:I,s:s,s:s,s:s,s:s,s:I,s:I,s:I,s:i,s:i}", "seq", (json_int_t)c->seq,
                          "group", t->groups[c->group].id, "op", replay_op_name(c->op), "dtype",
                          coll_dtype_name(c->dtype), "red", red, "count", (json_int_t)c->count,
                          "in", (json_int_t)c->in, "out", (json_int_t)c->out, "root", c->root,
                          "peer", c->peer);
    if (!o) return NULL;
    if (c->sp.n) {
        json_object_set_new(o, "in_splits", list(c->sp.in, c->sp.n));
        json_object_set_new(o, "out_splits", list(c->sp.out, c->sp.n));
    }
    if (c->t0 >= 0 && c->t1 >= 0) {
        json_object_set_new(o, "t0", json_integer(c->t0));
        json_object_set_new(o, "t1", json_integer(c->t1));
    }
    json_object_set_new(o, "gap", json_integer(c->gap > 0 ? c->gap : 0));
    if (c->cpu >= 0) json_object_set_new(o, "cpu", json_integer(c->cpu));
    if (c->wait_cpu >= 0) json_object_set_new(o, "wait_cpu", json_integer(c->wait_cpu));
    if (c->blocking) json_object_set_new(o, "blocking", json_true());
    return o;
}

int replay_trace_write(const char *path, const replay_trace *t, const replay_write_meta *meta,
                       char *err, size_t errlen)
{
    buf b = {0};
    put_line(&b, header(t, meta));
    for (size_t i = 0; i < t->ngroups; i++) put_line(&b, group_line(&t->groups[i]));
    for (size_t i = 0; i < t->ngroups; i++)
        if (t->groups[i].plan)
            put_line(&b,
                     json_pack("{s:s,s:s}", "group", t->groups[i].id, "plan", t->groups[i].plan));
    for (size_t i = 0; i < t->ncalls; i++) {
        if (t->calls[i].group >= t->ngroups) {
            free(b.data);
            return snprintf(err, errlen, "%s: call seq %lld names no group of the trace", path,
                            (long long)t->calls[i].seq),
                   -1;
        }
        put_line(&b, call_line(t, &t->calls[i]));
    }
    put_line(&b,
             json_pack("{s:b,s:I,s:b}", "end", 1, "calls", (json_int_t)t->ncalls, "truncated", 0));
    if (b.failed) {
        free(b.data);
        return snprintf(err, errlen, "%s: out of memory building the trace", path), -1;
    }
    int rc = coll__file_write_atomic(path, b.data, b.len, err, errlen);
    free(b.data);
    return rc ? -1 : 0;
}

#endif
