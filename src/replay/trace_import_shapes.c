/* A c10d op's or a backend's event read as a call from its shapes
 * (trace_import_event.h): "Input Dims" (per input a shape, or a list of
 * shapes for a tensor list), "Input type" (TypeMeta names: "float",
 * "c10::BFloat16"; "TensorList" and scalar tags for the rest) and "Concrete
 * Inputs" (scalars as strings: the root and the peer). The profiler writes
 * them only under record_shapes=True. Which input is what comes from the c10d
 * ops' schemas (torch/csrc/distributed/c10d/Ops.cpp). */
#ifdef COLL_HAVE_JANSSON

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/trace_import_event.h"

/* The inputs of a c10d op: index of its input and output tensors and of its
 * root or peer (-1: none). in_per_peer: the input list holds one tensor per
 * group rank (its length is the group's size). */
typedef struct c10d_schema {
    const char *name;
    int in, out, root, peer;
} c10d_schema;

static const c10d_schema schemas[] = {
    {"allreduce", 0, 0, -1, -1},
    {"allreduce_coalesced", 0, 0, -1, -1},
    {"broadcast", 0, 0, 2, -1},
    {"allgather", 1, 0, -1, -1},
    {"_allgather_base", 1, 0, -1, -1},
    {"allgather_coalesced", 1, 0, -1, -1},
    {"allgather_into_tensor_coalesced", 1, 0, -1, -1},
    {"reduce_scatter", 1, 0, -1, -1},
    {"_reduce_scatter_base", 1, 0, -1, -1},
    {"reduce_scatter_tensor_coalesced", 1, 0, -1, -1},
    {"reduce", 0, 0, 3, -1},
    {"gather", 1, 0, 3, -1},
    {"scatter", 1, 0, 3, -1},
    {"alltoall", 1, 0, -1, -1},
    {"alltoall_base", 1, 0, -1, -1},
    {"barrier", -1, -1, -1, -1},
    {"monitored_barrier", -1, -1, -1, -1},
    {"send", 0, -1, -1, 2},
    {"recv", -1, 0, -1, 2},
};

static const c10d_schema *schema_of(const char *coll)
{
    for (size_t i = 0; i < sizeof schemas / sizeof schemas[0]; i++)
        if (strcmp(schemas[i].name, coll) == 0) return &schemas[i];
    return NULL;
}

/* Elements of one shape ([d0, d1...]); -1 not a shape. */
static long long numel(json_t *shape)
{
    long long n = 1;
    size_t i;
    json_t *d;
    if (!json_is_array(shape)) return -1;
    json_array_foreach(shape, i, d)
    {
        if (!json_is_integer(d) || json_integer_value(d) < 0) return -1;
        n *= json_integer_value(d);
    }
    return n;
}

/* "Input type" names a tensor's dtype (TypeMeta: "float", "long int",
 * "c10::BFloat16"), not a tag for other inputs ("TensorList", "Scalar",
 * "ScalarList", "Int"...; capitalized) or "" (none). */
static int is_tensor_type(const char *s)
{
    return s && *s && ((*s >= 'a' && *s <= 'z') || strchr(s, ':'));
}

/* Input i's tensors: *n of them, *elems elements in all. A tensor's shape is
 * a list of integers, a tensor list's a list of shapes (nested lists of lists
 * for a list of lists). 0, or -1 when input i holds no tensor the profiler
 * sized. */
static int tensors_of(const import_ev *e, int i, long long *n, long long *elems)
{
    json_t *dims = json_array_get(json_object_get(e->args, "Input Dims"), (size_t)i);
    json_t *type = json_array_get(json_object_get(e->args, "Input type"), (size_t)i);
    const char *t = json_is_string(type) ? json_string_value(type) : "";
    *n = 0, *elems = 0;
    if (!json_is_array(dims)) return -1;
    long long one = numel(dims);
    if (one >= 0 && (json_array_size(dims) > 0 || is_tensor_type(t))) {
        *n = 1, *elems = one;
        return 0;
    }
    size_t k;
    json_t *s;
    json_array_foreach(dims, k, s)
    {
        long long m = numel(s), sub_n = 0;
        if (m < 0) { /* a list of lists: its inner shapes */
            size_t j;
            json_t *x;
            json_array_foreach(s, j, x)
            {
                long long mx = numel(x);
                if (mx < 0) return -1;
                m = (m < 0 ? 0 : m) + mx;
                sub_n++;
            }
            if (m < 0) m = 0;
        }
        *elems += m;
        *n += sub_n ? sub_n : 1;
    }
    return *n ? 0 : -1;
}

/* The dtype of the event: its first input of a tensor type. 0; 1 none
 * named; -1 said (a dtype libcoll has not). */
static int dtype_of(const char *path, const import_ev *e, coll_dtype *dt, char *err, size_t errlen)
{
    json_t *types = json_object_get(e->args, "Input type"), *t;
    size_t i;
    json_array_foreach(types, i, t)
    {
        const char *s = json_is_string(t) ? json_string_value(t) : "";
        if (!is_tensor_type(s)) continue;
        if (replay_import_dtype(s, dt) == 0) return 0;
        return replay_import_bad(path, e, err, errlen,
                                 "unknown dtype \"%.40s\" (libcoll has float32, float64, float16, "
                                 "bfloat16, int8, uint8, int32, int64)",
                                 s);
    }
    return 1;
}

/* Concrete input i as an integer (the root, the peer); 0, or 1 absent. */
static int concrete_int(const import_ev *e, int i, long long *out)
{
    json_t *c = json_array_get(json_object_get(e->args, "Concrete Inputs"), (size_t)i);
    if (json_is_integer(c)) return *out = json_integer_value(c), 0;
    if (!json_is_string(c)) return 1;
    char *end;
    const char *s = json_string_value(c);
    long long x = strtoll(s, &end, 10);
    if (end == s || *end) return 1;
    *out = x;
    return 0;
}

/* in, out and the group size the shapes tell (c->size; -1 when they do not). */
static int sizes_c10d(const char *path, const import_ev *e, const c10d_schema *s, import_call *c,
                      char *err, size_t errlen)
{
    long long nin = 0, ein = 0, nout = 0, eout = 0;
    int have_in = s->in >= 0 && tensors_of(e, s->in, &nin, &ein) == 0;
    int have_out = s->out >= 0 && tensors_of(e, s->out, &nout, &eout) == 0;
    if (!have_in && !have_out && e->inner) { /* sizes only on the backend's event */
        have_in = tensors_of(e->inner, 0, &nin, &ein) == 0;
        eout = ein, nout = nin, have_out = have_in;
    }
    if ((s->in >= 0 && !have_in && s->out < 0) || (s->out >= 0 && !have_out && s->in < 0) ||
        (!have_in && !have_out && (s->in >= 0 || s->out >= 0)))
        return replay_import_bad(path, e, err, errlen,
                                 "no tensor sizes in \"Input Dims\" for its %s",
                                 s->in >= 0 ? "input" : "output");
    if (!have_in) ein = eout, nin = nout;
    if (!have_out) eout = ein, nout = nin;
    c->c.in = (uint64_t)ein;
    c->c.out = (uint64_t)eout;
    switch (c->c.op) {
    case REPLAY_ALLGATHER: /* out: a list of one tensor per rank, or one tensor size x in */
        if (strcmp(s->name, "allgather") == 0 && nout > 1) c->size = (int)nout;
        else if (ein > 0 && eout % ein == 0 && eout >= ein) c->size = (int)(eout / ein);
        break;
    case REPLAY_REDUCESCATTER:
        if (strcmp(s->name, "reduce_scatter") == 0 && nin > 1) c->size = (int)nin;
        else if (eout > 0 && ein % eout == 0 && ein >= eout) c->size = (int)(ein / eout);
        break;
    case REPLAY_ALLTOALL:
        if (strcmp(s->name, "alltoall") == 0 && nin > 1) c->size = (int)nin;
        break;
    default: break;
    }
    if (c->size == 1 && c->c.op != REPLAY_BARRIER) c->size = -1; /* a lone tensor: unknown */
    return 0;
}

long long replay_import_ev_elems(const import_ev *e)
{
    long long n, elems;
    if (e->kind == IMPORT_PARAM || e->kind == IMPORT_KERNEL) {
        json_t *v = json_object_get(e->args, "In msg nelems");
        return json_is_integer(v) ? json_integer_value(v) : -1;
    }
    const c10d_schema *s = e->kind == IMPORT_C10D ? schema_of(e->coll) : NULL;
    int i = e->kind == IMPORT_BACKEND ? 0 : s ? (s->in >= 0 ? s->in : s->out) : -1;
    if (i < 0 || tensors_of(e, i, &n, &elems)) return -1;
    return elems;
}

int replay_import_shapes_read(const char *path, const import_ev *e, import_call *c, char *err,
                              size_t errlen)
{
    const import_ev *sized = e;
    if (!json_object_get(e->args, "Input Dims") && e->inner) sized = e->inner;
    if (!json_object_get(sized->args, "Input Dims"))
        return replay_import_bad(
            path, e, err, errlen,
            "no \"Input Dims\": the profiler writes the sizes of %s events only "
            "under record_shapes=True (torch.profiler.profile(record_shapes=True))",
            e->kind == IMPORT_C10D ? "c10d" : "the backend's");
    int rc = dtype_of(path, e, &c->c.dtype, err, errlen);
    if (rc > 0 && e->inner) rc = dtype_of(path, e->inner, &c->c.dtype, err, errlen);
    if (rc < 0) return -1;
    /* a c10d op's tensor list has no dtype, and its backend event may be
     * missing or cut (the profiler stopped while it ran, no arguments) */
    if (rc > 0 && c->c.op != REPLAY_BARRIER && e->kind == IMPORT_C10D) c->no_dtype = 1;
    else if (rc > 0 && c->c.op != REPLAY_BARRIER)
        return replay_import_bad(path, e, err, errlen, "no tensor dtype in \"Input type\"");
    if (e->kind == IMPORT_BACKEND) {
        /* a backend's event lists its tensors, nothing else: every input */
        if (replay_op_has_root(c->c.op) || replay_op_is_p2p(c->c.op))
            return replay_import_bad(path, e, err, errlen,
                                     "a %s whose %s the backend's event does not carry (the c10d "
                                     "events do: profile with torch 2.x)",
                                     replay_op_name(c->c.op),
                                     replay_op_is_p2p(c->c.op) ? "peer" : "root");
        long long n = 0, elems = 0;
        if (c->c.op != REPLAY_BARRIER && tensors_of(e, 0, &n, &elems))
            return replay_import_bad(path, e, err, errlen, "no tensor sizes in \"Input Dims\"");
        c->c.in = c->c.out = (uint64_t)elems;
        return replay_import_set_count(path, e, c, err, errlen);
    }
    const c10d_schema *s = schema_of(e->coll);
    if (!s)
        return replay_import_bad(path, e, err, errlen,
                                 "c10d op \"%.60s\": its inputs are not known here", e->coll);
    if (sizes_c10d(path, e, s, c, err, errlen)) return -1;
    long long x;
    if (s->root >= 0) {
        if (concrete_int(e, s->root, &x) || x < 0)
            return replay_import_bad(path, e, err, errlen, "no root in \"Concrete Inputs\"[%d]",
                                     s->root);
        c->c.root = (int)x;
    }
    if (s->peer >= 0) {
        if (concrete_int(e, s->peer, &x) || x < 0)
            return replay_import_bad(path, e, err, errlen, "no peer in \"Concrete Inputs\"[%d]",
                                     s->peer);
        c->c.peer = (int)x;
    }
    return replay_import_set_count(path, e, c, err, errlen);
}

#endif

int replay_import_dtypes_fill(const char *path, replay_import *im, import_call *calls, size_t n,
                              char *err, size_t errlen)
{
    size_t filled = 0;
    for (size_t i = 0; i < n; i++) {
        replay_call *c = &calls[i].c;
        if (!calls[i].no_dtype) continue;
        size_t j = i;
        while (j-- > 0)
            if (!calls[j].no_dtype && calls[j].c.op == c->op && calls[j].c.count == c->count) break;
        if (j == (size_t)-1)
            return replay_import_bad(path, calls[i].ev, err, errlen,
                                     "no tensor dtype in \"Input type\" (a c10d op's tensor list "
                                     "has none, and its backend event is missing or carries no "
                                     "arguments), nor an earlier %s of %llu elements to take it "
                                     "from",
                                     replay_op_name(c->op), (unsigned long long)c->count);
        c->dtype = calls[j].c.dtype;
        calls[i].no_dtype = 0;
        filled++;
    }
    if (filled)
        replay_import_warn(im,
                           "%s: %zu calls whose events carry no dtype (the backend's event missing "
                           "or cut by the profiler's stop) took that of the previous call of the "
                           "same collective and size",
                           path, filled);
    return 0;
}
