/* One profiler event read as a call (trace_import_event.h).
 *
 * record_param_comms (ParamCommsUtils as torch 2.x's profiler writes it,
 * torch/csrc/profiler/util.cpp saveNcclMeta): "Collective name", "dtype" (a
 * ScalarType name), "In msg nelems"/"Out msg nelems", "Group size", "In split
 * size"/"Out split size" and "Process Group Ranks" (lists written as strings,
 * "[0, 1]"; past 30 entries cut to "[0, ..., 29, ...]"), "Process Group
 * Name"/"Process Group Description", "Global rank start"/"Global rank stride",
 * and "Rank": the root's group rank for rooted collectives and the peer's for
 * send/recv (ProcessGroupNCCL passes them there), this rank's otherwise.
 *
 * c10d ops and backend events (record_shapes=True): "Input Dims" (per input a
 * shape, or a list of shapes for a tensor list) and "Input type" (TypeMeta
 * names), and "Concrete Inputs" (scalars as strings) for the root and peer. */
#ifdef COLL_HAVE_JANSSON

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/trace_import_event.h"

void replay_import_call_free(import_call *c)
{
    free(c->c.sp.in);
    free(c->c.sp.out);
    free(c->ranks);
    memset(c, 0, sizeof *c);
}

/* ---- argument values: numbers may come as numbers or as strings ---- */

/* 0 with *out, 1 absent, -1 not an integer. */
static int arg_int(json_t *args, const char *key, long long *out)
{
    json_t *v = json_object_get(args, key);
    if (!v) return 1;
    if (json_is_integer(v)) return *out = json_integer_value(v), 0;
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (d != floor(d) || fabs(d) > 9e15) return -1;
        return *out = (long long)d, 0;
    }
    if (!json_is_string(v)) return -1;
    const char *s = json_string_value(v);
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (end == s || *end || errno) return -1;
    return *out = x, 0;
}

static const char *arg_str(json_t *args, const char *key)
{
    json_t *v = json_object_get(args, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

/* A list of integers given as a JSON list or as the string "[a, b, ...]".
 * *out malloc'd (NULL when empty); *cut set when torch cut it ("..."). 0, 1
 * absent, -1 malformed. */
static int arg_list(json_t *args, const char *key, long long **out, size_t *n, int *cut)
{
    json_t *v = json_object_get(args, key);
    *out = NULL, *n = 0, *cut = 0;
    if (!v) return 1;
    size_t cap = json_is_array(v)    ? json_array_size(v)
                 : json_is_string(v) ? strlen(json_string_value(v)) / 2 + 1
                                     : 0;
    if (!json_is_array(v) && !json_is_string(v)) return -1;
    long long *a = cap ? malloc(cap * sizeof *a) : NULL;
    if (cap && !a) return -1;
    if (json_is_array(v)) {
        for (size_t i = 0; i < cap; i++) {
            json_t *x = json_array_get(v, i);
            if (!json_is_integer(x)) return free(a), -1;
            a[(*n)++] = json_integer_value(x);
        }
        *out = a;
        return 0;
    }
    const char *s = json_string_value(v);
    while (*s == ' ') s++;
    if (*s++ != '[') return free(a), -1;
    for (;;) {
        while (*s == ' ' || *s == ',') s++;
        if (*s == ']') break;
        if (strncmp(s, "...", 3) == 0) {
            *cut = 1;
            s += 3;
            continue;
        }
        char *end;
        errno = 0;
        long long x = strtoll(s, &end, 10);
        if (end == s || errno || *n == cap) return free(a), -1;
        a[(*n)++] = x;
        s = end;
    }
    *out = a;
    return 0;
}

/* ---- record_param_comms ---- */

/* The group's ranks as the event says them: the list, else start and stride
 * (which torch builds the list from). Leaves c->ranks NULL when neither. */
static int param_ranks(const char *path, const import_ev *e, import_call *c, char *err,
                       size_t errlen)
{
    long long *list, start = -1, stride = -1;
    size_t n;
    int cut, rc = arg_list(e->args, "Process Group Ranks", &list, &n, &cut);
    if (rc < 0)
        return replay_import_bad(path, e, err, errlen,
                                 "\"Process Group Ranks\" is not a list of ranks");
    int have_start = arg_int(e->args, "Global rank start", &start) == 0;
    int have_stride = arg_int(e->args, "Global rank stride", &stride) == 0;
    if (rc == 0 && n > 0 && !cut) {
        if (c->size > 0 && (long long)n != c->size) {
            free(list);
            return replay_import_bad(
                path, e, err, errlen,
                "\"Process Group Ranks\" lists %zu ranks, \"Group size\" says %d", n, c->size);
        }
        c->nranks = (int)n;
    } else if (have_start && have_stride && start >= 0 && stride > 0 && c->size > 0) {
        free(list);
        list = malloc((size_t)c->size * sizeof *list);
        if (!list) return replay_import_bad(path, e, err, errlen, "out of memory");
        for (int i = 0; i < c->size; i++) list[i] = start + i * stride;
        c->nranks = c->size;
    } else {
        free(list); /* cut short and no stride: the importer asks distributedInfo */
        return 0;
    }
    c->ranks = malloc((size_t)c->nranks * sizeof *c->ranks);
    if (!c->ranks) return free(list), replay_import_bad(path, e, err, errlen, "out of memory");
    for (int i = 0; i < c->nranks; i++) {
        if (list[i] < 0 || list[i] > 1 << 20) {
            free(list);
            return replay_import_bad(path, e, err, errlen, "\"Process Group Ranks\" has rank %lld",
                                     list[i]);
        }
        c->ranks[i] = (int)list[i];
    }
    free(list);
    return 0;
}

static int param_splits(const char *path, const import_ev *e, import_call *c, char *err,
                        size_t errlen)
{
    long long *in, *out;
    size_t nin, nout;
    int cut_in, cut_out;
    int ri = arg_list(e->args, "In split size", &in, &nin, &cut_in);
    int ro = arg_list(e->args, "Out split size", &out, &nout, &cut_out);
    int rc = 0;
    if (ri < 0 || ro < 0)
        rc = replay_import_bad(path, e, err, errlen,
                               "\"In split size\"/\"Out split size\" is not a list");
    else if (nin == 0 && nout == 0) rc = 0; /* even splits */
    else if (cut_in || cut_out)
        rc = replay_import_bad(
            path, e, err, errlen,
            "the all-to-all's splits were cut short by the profiler (over 30 peers): "
            "its sizes per peer are unknown");
    else if (nin != nout || (c->size > 0 && (long long)nin != c->size))
        rc = replay_import_bad(path, e, err, errlen,
                               "%zu input splits, %zu output splits, group size %d", nin, nout,
                               c->size);
    else if (!(c->c.sp.in = malloc(nin * sizeof *c->c.sp.in)) ||
             !(c->c.sp.out = malloc(nin * sizeof *c->c.sp.out)))
        rc = replay_import_bad(path, e, err, errlen, "out of memory");
    else {
        c->c.sp.n = nin;
        for (size_t i = 0; i < nin && rc == 0; i++) {
            if (in[i] < 0 || out[i] < 0)
                rc = replay_import_bad(path, e, err, errlen, "a negative split");
            c->c.sp.in[i] = (size_t)in[i];
            c->c.sp.out[i] = (size_t)out[i];
        }
    }
    free(in);
    free(out);
    return rc;
}

static int read_param(const char *path, const import_ev *e, import_call *c, char *err,
                      size_t errlen)
{
    long long in = 0, out = 0, size = -1, rank = -1;
    const char *dt = arg_str(e->args, "dtype");
    if (arg_int(e->args, "In msg nelems", &in) < 0 || arg_int(e->args, "Out msg nelems", &out) < 0)
        return replay_import_bad(path, e, err, errlen,
                                 "\"In msg nelems\"/\"Out msg nelems\" is not a number");
    if (in < 0 || out < 0)
        return replay_import_bad(path, e, err, errlen, "a negative element count");
    if (arg_int(e->args, "Group size", &size) < 0 || size == 0 || size > 1 << 20)
        return replay_import_bad(path, e, err, errlen, "\"Group size\" is not a number of ranks");
    c->size = (int)size;
    c->c.in = (uint64_t)in;
    c->c.out = (uint64_t)out;
    if (dt && replay_import_dtype(dt, &c->c.dtype))
        return replay_import_bad(
            path, e, err, errlen,
            "unknown dtype \"%.40s\" (libcoll has float32, float64, float16, bfloat16, "
            "int8, uint8, int32, int64)",
            dt);
    if (!dt && c->c.op != REPLAY_BARRIER)
        return replay_import_bad(path, e, err, errlen, "no \"dtype\"");
    c->pg_name = arg_str(e->args, "Process Group Name");
    c->pg_desc = arg_str(e->args, "Process Group Description");
    if (param_ranks(path, e, c, err, errlen) || param_splits(path, e, c, err, errlen)) return -1;
    int has_rank = arg_int(e->args, "Rank", &rank) == 0;
    if (replay_op_has_root(c->c.op) || replay_op_is_p2p(c->c.op)) {
        const char *what = replay_op_is_p2p(c->c.op) ? "peer" : "root";
        if (!has_rank || rank < 0 || (c->size > 0 && rank >= c->size))
            return replay_import_bad(path, e, err, errlen,
                                     "a %s without its %s (\"Rank\", a rank of the group)",
                                     replay_op_name(c->c.op), what);
        *(replay_op_is_p2p(c->c.op) ? &c->c.peer : &c->c.root) = (int)rank;
    } else if (has_rank && rank >= 0) {
        c->rank_arg = (int)rank;
    }
    return replay_import_set_count(path, e, c, err, errlen);
}

int replay_import_call_read(const char *path, const import_ev *e, import_call *out, char *err,
                            size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->ev = e;
    out->size = -1;
    out->rank_arg = -1;
    out->c.op = e->op;
    out->c.root = out->c.peer = -1;
    out->c.red = COLL_SUM;
    out->c.dtype = COLL_FLOAT32;
    out->c.t0 = replay_import_ns(e->ts);
    out->c.t1 = out->c.t0 + replay_import_ns(e->dur);
    if (e->inner) {
        int64_t t1 = replay_import_ns(e->inner->ts) + replay_import_ns(e->inner->dur);
        if (t1 > out->c.t1) out->c.t1 = t1;
    }
    if (e->kind == IMPORT_PARAM) return read_param(path, e, out, err, errlen);
    return replay_import_shapes_read(path, e, out, err, errlen);
}

#endif
