/* A torch profiler trace read into one rank's replay_trace (trace_import.h):
 * the file parsed whole, the communication events picked (one kind per file,
 * nested ones once), each read as a call (trace_import_event.c), the calls
 * ordered by start, and each put into a group of the trace
 * (trace_import_groups.c). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "replay/trace_import.h"

void replay_import_free(replay_import *im)
{
    if (!im) return;
    free(im->warnings);
    replay_trace_free(&im->t);
    memset(im, 0, sizeof *im);
}

#ifndef COLL_HAVE_JANSSON

int replay_import_profiler(const char *path, int rank_fallback, int world_fallback,
                           replay_import *im, char *err, size_t errlen)
{
    (void)rank_fallback, (void)world_fallback;
    memset(im, 0, sizeof *im);
    snprintf(err, errlen,
             "%s: reading a profiler trace needs jansson, which this build lacks "
             "(apt-get install libjansson-dev, then rebuild)",
             path);
    return -1;
}

#else

#include "replay/trace_import_event.h"
#include "replay/trace_import_groups.h"

/* A backend's own events: "gloo:all_reduce"; these prefixes are backends. */
static const char *const backend_prefixes[] = {"gloo:", "nccl:", "mpi:", "ucc:", "coll:", NULL};

/* The kind and collective of an event of name, or -1 when it is none of ours.
 * coll gets the collective's name (no prefix, no trailing '_'). */
/* An NCCL kernel's collective from its name ("ncclDevKernel_AllReduce_Sum_f32_RING_LL",
 * "ncclKernel_SendRecv_..."); NULL when it names none. A send/recv kernel
 * also runs an all-to-all. */
static const char *kernel_coll(const char *name)
{
    static const char *const map[][2] = {
        {"AllReduce", "allreduce"}, {"AllGather", "allgather"}, {"ReduceScatter", "reduce_scatter"},
        {"Broadcast", "broadcast"}, {"SendRecv", "send"},       {"Send", "send"},
        {"Recv", "recv"},           {"Reduce", "reduce"}};
    if (strncmp(name, "nccl", 4) != 0) return NULL;
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strstr(name, map[i][0])) return map[i][1];
    return NULL;
}

static int classify(const char *name, const char *cat, json_t *args, char *coll, size_t len,
                    import_kind *kind)
{
    if (cat && strcmp(cat, "kernel") == 0) { /* a GPU kernel: NCCL's, or none of ours */
        json_t *c = json_object_get(args, "Collective name");
        const char *k = json_is_string(c) ? json_string_value(c) : kernel_coll(name);
        if (!k) return -1;
        snprintf(coll, len, "%s", k);
        *kind = IMPORT_KERNEL;
        return 0;
    }
    if (strcmp(name, "record_param_comms") == 0) {
        json_t *c = json_object_get(args, "Collective name");
        snprintf(coll, len, "%s", json_is_string(c) ? json_string_value(c) : "");
        *kind = IMPORT_PARAM;
        return 0;
    }
    const char *rest = NULL;
    if (strncmp(name, "c10d::", 6) == 0) rest = name + 6, *kind = IMPORT_C10D;
    for (int i = 0; !rest && backend_prefixes[i]; i++)
        if (strncmp(name, backend_prefixes[i], strlen(backend_prefixes[i])) == 0)
            rest = name + strlen(backend_prefixes[i]), *kind = IMPORT_BACKEND;
    if (!rest) return -1;
    snprintf(coll, len, "%s", rest);
    coll[strcspn(coll, " ")] = '\0'; /* NCCL's p2p titles: "nccl:send 0->1" */
    size_t n = strlen(coll);
    if (n > 1 && coll[n - 1] == '_') coll[n - 1] = '\0'; /* c10d's in-place ops: allreduce_ */
    return 0;
}

typedef struct scan {
    const char *path;
    import_ev *ev;
    size_t n, cap;
    char (*colls)[64]; /* the collective names ev[i].coll points into */
    size_t counts[IMPORT_KINDS], total[IMPORT_KINDS]; /* the events to import; and the bad */
    const import_ev *bad[IMPORT_KINDS]; /* per kind: the first that cannot be imported */
    int why[IMPORT_KINDS];              /* 1 unknown collective, 2 from any source */
} scan;

/* Every event of ours in events into s (all three kinds). 0, or -1 said. */
static int collect(scan *s, json_t *events, char *err, size_t errlen)
{
    size_t i;
    json_t *o;
    s->cap = json_array_size(events);
    s->ev = calloc(s->cap ? s->cap : 1, sizeof *s->ev);
    s->colls = calloc(s->cap ? s->cap : 1, sizeof *s->colls);
    if (!s->ev || !s->colls) return snprintf(err, errlen, "%s: out of memory", s->path), -1;
    json_array_foreach(events, i, o)
    {
        json_t *name = json_object_get(o, "name"), *ph = json_object_get(o, "ph");
        if (!json_is_string(name) || !json_is_string(ph) || strcmp(json_string_value(ph), "X"))
            continue; /* complete events only: the ops are; counters and flows are not */
        import_ev *e = &s->ev[s->n];
        e->name = json_string_value(name);
        e->args = json_object_get(o, "args");
        json_t *cat = json_object_get(o, "cat");
        if (classify(e->name, json_is_string(cat) ? json_string_value(cat) : NULL, e->args,
                     s->colls[s->n], sizeof s->colls[s->n], &e->kind))
            continue;
        e->coll = s->colls[s->n];
        json_t *ts = json_object_get(o, "ts"), *dur = json_object_get(o, "dur");
        e->ts = json_number_value(ts);
        e->dur = json_number_value(dur);
        e->pid = json_integer_value(json_object_get(o, "pid"));
        e->tid = json_integer_value(json_object_get(o, "tid"));
        if (!json_is_number(ts) || !json_is_number(dur) || e->dur < 0)
            return replay_import_bad(s->path, e, err, errlen, "no \"ts\"/\"dur\" (us) of its own");
        int known = replay_import_op(e->coll, &e->op);
        if (known > 0 || (known < 0 && e->kind == IMPORT_KERNEL)) continue; /* wait, init */
        /* refused only if its kind is the one imported (an NCCL trace's own
         * nccl: events do not matter when its record_param_comms do) */
        int bad = known < 0 ? 1 : replay_import_any_source(e->coll) ? 2 : 0;
        if (bad && !s->bad[e->kind]) s->bad[e->kind] = e, s->why[e->kind] = bad;
        e->dropped = bad != 0;
        s->counts[e->kind] += !bad;
        s->total[e->kind]++;
        s->n++;
    }
    return 0;
}

/* The first event of kind that cannot be imported, said; 0 when none. */
static int refuse_bad(const scan *s, import_kind kind, char *err, size_t errlen)
{
    const import_ev *e = s->bad[kind];
    if (!e) return 0;
    if (s->why[kind] == 2)
        return replay_import_bad(s->path, e, err, errlen,
                                 "a receive from any source: the profiler does not say from which "
                                 "rank, so it cannot be replayed");
    return replay_import_bad(s->path, e, err, errlen,
                             "unknown collective \"%.60s\" (the format has allreduce, allgather, "
                             "reducescatter, broadcast, reduce, alltoall, barrier, send, recv, "
                             "gather, scatter)",
                             e->coll);
}

static int by_start(const void *a, const void *b)
{
    const import_ev *x = *(import_ev *const *)a, *y = *(import_ev *const *)b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    if (x->dur != y->dur) return x->dur > y->dur ? -1 : 1; /* the outer first */
    return x < y ? -1 : x > y;
}

static int inside(const import_ev *in, const import_ev *out)
{
    return in->pid == out->pid && in->tid == out->tid && in->ts >= out->ts &&
           in->ts + in->dur <= out->ts + out->dur;
}

/* What completes a call: a c10d op's backend event (gloo runs the work on
 * its own threads, a worker per group, in the order the calls came), a
 * record_param_comms call's NCCL kernel (on the GPU's stream, in order). Each
 * call gets the first one of its op not taken that starts at or after it and
 * whose size agrees; its end is when the work completed. Some work runs as
 * another op: gloo reduce-scatters through an all_reduce of the input, NCCL
 * barriers through an all-reduce and all-to-alls and receives as send/recv
 * kernels. */
static int alt_op(replay_op op, import_kind partner)
{
    if (partner == IMPORT_BACKEND) return op == REPLAY_REDUCESCATTER ? REPLAY_ALLREDUCE : -1;
    if (op == REPLAY_BARRIER) return REPLAY_ALLREDUCE;
    return op == REPLAY_ALLTOALL || op == REPLAY_RECV ? REPLAY_SEND : -1;
}

static int pair(scan *s, import_ev **list, size_t n, import_kind partner)
{
    import_ev **back = malloc(s->n * sizeof *back);
    size_t nb = 0, next[REPLAY_OP_COUNT] = {0};
    if (!back) return -1;
    for (size_t i = 0; i < s->n; i++)
        if (s->ev[i].kind == partner && !s->ev[i].dropped) back[nb++] = &s->ev[i];
    qsort(back, nb, sizeof *back, by_start);
    for (size_t i = 0; i < n; i++) {
        import_ev *c = list[i];
        long long elems = replay_import_ev_elems(c), be;
        int alt = alt_op(c->op, partner);
        size_t k = next[c->op];
        if (alt >= 0 && next[alt] < k) k = next[alt];
        for (; k < nb; k++) {
            const import_ev *b = back[k];
            if ((b->op != c->op && (int)b->op != alt) || b->ts < c->ts || b->inner) continue;
            if (elems >= 0 && (be = replay_import_ev_elems(b)) >= 0 && be != elems &&
                c->op != REPLAY_BARRIER)
                continue;
            c->inner = back[k];
            back[k]->inner = c; /* taken */
            if (k == next[c->op] && b->op == c->op) next[c->op] = k + 1;
            break;
        }
    }
    free(back);
    return 0;
}

/* The events of kind, by start, nested ones dropped; c10d events paired with
 * the backend's. *n of them in a malloc'd list; NULL: out of memory. */
static import_ev **pick(scan *s, import_kind kind, size_t *n)
{
    import_ev **list = malloc((s->n ? s->n : 1) * sizeof *list);
    *n = 0;
    if (!list) return NULL;
    for (size_t i = 0; i < s->n; i++)
        if (s->ev[i].kind == kind && !s->ev[i].dropped) list[(*n)++] = &s->ev[i];
    qsort(list, *n, sizeof *list, by_start);
    /* An event inside another on its thread counts there. The ones kept follow
     * each other on a thread (calls are synchronous spans there), so only the
     * last one kept on the thread can hold the next. The backend's events are
     * asynchronous (they end when the work does) and may overlap: all count. */
    size_t kept = 0;
    for (size_t i = 0; i < *n; i++) {
        int nested = 0;
        for (size_t j = kept; kind != IMPORT_BACKEND && j-- > 0;)
            if (list[j]->pid == list[i]->pid && list[j]->tid == list[i]->tid) {
                nested = inside(list[i], list[j]);
                break;
            }
        if (nested) list[i]->dropped = 1;
        else list[kept++] = list[i];
    }
    *n = kept;
    import_kind partner = kind == IMPORT_C10D ? IMPORT_BACKEND : IMPORT_KERNEL;
    if (kind != IMPORT_BACKEND && s->counts[partner] && pair(s, list, *n, partner)) {
        free(list);
        return NULL;
    }
    return list;
}

/* "distributedInfo": the rank, world and backend the program ran with, and its
 * groups (pg_config). */
static void read_dist(json_t *root, import_groups *g, replay_import *im)
{
    json_t *d = json_object_get(root, "distributedInfo");
    json_t *rank = json_object_get(d, "rank"), *world = json_object_get(d, "world_size");
    json_t *backend = json_object_get(d, "backend");
    if (json_is_integer(rank) && json_is_integer(world)) {
        g->rank = (int)json_integer_value(rank);
        g->world = (int)json_integer_value(world);
    }
    if (json_is_string(backend))
        snprintf(im->backend, sizeof im->backend, "%s", json_string_value(backend));
    g->pg_config = json_object_get(d, "pg_config");
}

static int by_t0(const void *a, const void *b)
{
    const import_call *x = a, *y = b;
    if (x->c.t0 != y->c.t0) return x->c.t0 < y->c.t0 ? -1 : 1;
    return x->ev < y->ev ? -1 : x->ev > y->ev;
}

static const char *kind_names[] = {"record_param_comms", "c10d::<collective>",
                                   "<backend>:<collective>"};

/* The calls of the chosen events, by start, into im; the calling thread's
 * CPU times from the trace's operators (trace_import_cpu.c). */
static int read_calls(import_groups *g, import_ev **list, size_t n, json_t *events, char *err,
                      size_t errlen)
{
    replay_import *im = g->im;
    import_call *calls = calloc(n ? n : 1, sizeof *calls);
    if (!calls) return snprintf(err, errlen, "%s: out of memory", g->path), -1;
    int rc = 0;
    size_t got = 0;
    for (; got < n && rc == 0; got++)
        rc = replay_import_call_read(g->path, list[got], &calls[got], err, errlen);
    if (rc == 0) {
        qsort(calls, n, sizeof *calls, by_t0);
        rc = replay_import_dtypes_fill(g->path, im, calls, n, err, errlen);
    }
    if (rc == 0) {
        rc = replay_import_groups_place(g, calls, n, err, errlen);
    }
    if (rc == 0) {
        im->t.calls = calloc(n ? n : 1, sizeof *im->t.calls);
        if (!im->t.calls) rc = -1, snprintf(err, errlen, "%s: out of memory", g->path);
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        replay_call *c = &im->t.calls[i];
        *c = calls[i].c;
        c->seq = (int64_t)i;
        c->line = 0;
        c->gap = i ? c->t0 - im->t.calls[i - 1].t1 : 0;
        if (c->gap < 0) c->gap = 0;         /* an asynchronous call still running */
        calls[i].c.sp = (replay_splits){0}; /* the trace's now */
        im->t.ncalls++;
    }
    if (rc == 0) replay_import_cpu(events, calls, im->t.calls, n);
    for (size_t i = 0; i < got; i++) replay_import_call_free(&calls[i]);
    free(calls);
    return rc;
}

/* Calls without the backend's event of their work end when the op returned,
 * which for an asynchronous backend is before the work is done. */
static void warn_unpaired(const char *path, replay_import *im, import_ev **list, size_t n)
{
    size_t by_op[REPLAY_OP_COUNT] = {0}, total = 0, k = 0;
    char ops[512] = "";
    for (size_t i = 0; i < n; i++)
        if (!list[i]->inner) by_op[list[i]->op]++, total++;
    for (int op = 0; op < REPLAY_OP_COUNT && total; op++)
        if (by_op[op] && k < sizeof ops)
            k += (size_t)snprintf(ops + k, sizeof ops - k, "%s%s %zu", k ? ", " : "",
                                  replay_op_name((replay_op)op), by_op[op]);
    if (total)
        replay_import_warn(
            im,
            "%s: %zu calls (%s) without the backend's event of their work (gloo's, "
            "NCCL's kernel): each ends where its op returned, which may be before its "
            "work completed",
            path, total, ops);
}

int replay_import_profiler(const char *path, int rank_fallback, int world_fallback,
                           replay_import *im, char *err, size_t errlen)
{
    memset(im, 0, sizeof *im);
    im->t.path = strdup(path);
    im->warnings = strdup("");
    snprintf(im->t.source, sizeof im->t.source, "torch-profiler");
    if (!im->t.path || !im->warnings) return snprintf(err, errlen, "%s: out of memory", path), -1;
    struct stat st;
    if (stat(path, &st) != 0) return snprintf(err, errlen, "%s: %s", path, strerror(errno)), -1;
    if (!S_ISREG(st.st_mode)) return snprintf(err, errlen, "%s: not a regular file", path), -1;
    if ((uint64_t)st.st_size > REPLAY_IMPORT_MAX_BYTES)
        return snprintf(err, errlen, "%s: %llu bytes, over the limit of %llu for a profiler trace",
                        path, (unsigned long long)st.st_size,
                        (unsigned long long)REPLAY_IMPORT_MAX_BYTES),
               -1;
    FILE *f = fopen(path, "rb");
    unsigned char magic[2] = {0};
    if (!f) return snprintf(err, errlen, "%s: %s", path, strerror(errno)), -1;
    size_t got = fread(magic, 1, 2, f);
    fclose(f);
    if (got == 2 && magic[0] == 0x1f && magic[1] == 0x8b) /* tensorboard_trace_handler's .gz */
        return snprintf(err, errlen, "%s: gzip-compressed: gunzip it first", path), -1;
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    if (!root)
        return snprintf(err, errlen,
                        "%s: not JSON (line %d, column %d: %s): not a torch profiler trace", path,
                        jerr.line, jerr.column, jerr.text),
               -1;
    json_t *events = json_object_get(root, "traceEvents");
    scan s = {.path = path};
    import_groups g = {.path = path, .im = im, .rank = -1, .world = -1};
    import_ev **list = NULL;
    size_t n = 0;
    int rc = -1;
    if (!json_is_object(root) || !json_is_array(events)) {
        snprintf(err, errlen,
                 "%s: no \"traceEvents\" list: not a torch profiler trace (the JSON "
                 "prof.export_chrome_trace writes)",
                 path);
        goto out;
    }
    read_dist(root, &g, im);
    if (collect(&s, events, err, errlen)) goto out;
    import_kind kind = s.total[IMPORT_PARAM]  ? IMPORT_PARAM
                       : s.total[IMPORT_C10D] ? IMPORT_C10D
                                              : IMPORT_BACKEND;
    if (refuse_bad(&s, kind, err, errlen)) goto out;
    if (!s.counts[kind]) {
        snprintf(err, errlen,
                 "%s: no communication events among its %zu events (no record_param_comms, "
                 "c10d::<collective> or gloo:<collective>): was the profiler running around the "
                 "program's collectives?",
                 path, json_array_size(events));
        goto out;
    }
    if (!(list = pick(&s, kind, &n))) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto out;
    }
    g.rank_fallback = rank_fallback;
    g.world_fallback = world_fallback;
    char kind_name[48];
    const char *colon = strchr(list[0]->name, ':');
    if (kind == IMPORT_BACKEND && colon) /* "gloo:<collective>" */
        snprintf(kind_name, sizeof kind_name, "%.*s<collective>", (int)(colon - list[0]->name + 1),
                 list[0]->name);
    else snprintf(kind_name, sizeof kind_name, "%s", kind_names[kind]);
    g.kind_name = kind_name;
    rc = read_calls(&g, list, n, events, err, errlen);
    if (rc == 0 && (kind == IMPORT_C10D || (kind == IMPORT_PARAM && s.counts[IMPORT_KERNEL])))
        warn_unpaired(path, im, list, n);
    size_t c10d = 0;
    import_ev **ops = rc == 0 && kind == IMPORT_PARAM && s.counts[IMPORT_C10D]
                          ? pick(&s, IMPORT_C10D, &c10d)
                          : NULL;
    free(ops);
    if (c10d > n)
        replay_import_warn(
            im,
            "%s: %zu c10d ops but %zu record_param_comms calls: the calls of ops the "
            "backend wrote no record_param_comms for are not imported",
            path, c10d, n);
out:
    replay_import_groups_free(&g);
    free(list);
    free(s.ev);
    free(s.colls);
    json_decref(root);
    return rc;
}

#endif
