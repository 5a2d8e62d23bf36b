/* One rank's replay of its trace on one backend.
 *
 * Groups: libcoll has no sub-communicator call, so each group of the trace is
 * a communicator of its own (rank = group rank, world = group size) met on a
 * file:// store in the job's private directory, one file per turn and group.
 * Every rank creates its groups in one order all ranks agree on (sorted by
 * id): creation waits for every member, and two ranks creating two shared
 * groups in opposite orders would wait for each other for ever.
 *
 * Buffers: per group, the largest send and receive buffer its calls need,
 * allocated once (malloc or coll_alloc) and zeroed, reused by every call. */
#include "replay/replay_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "engine/bench_coll.h"

typedef struct group_comm {
    coll_comm *comm;
    void *send, *recv;
    size_t send_bytes, recv_bytes;
} group_comm;

/* The engine's collective for an op; NULL for send, recv, gather, scatter. */
static const bench_coll *coll_of(replay_op op)
{
    static const char *const names[REPLAY_OP_COUNT] = {[REPLAY_ALLREDUCE] = "allreduce",
                                                       [REPLAY_ALLGATHER] = "allgather",
                                                       [REPLAY_REDUCESCATTER] = "reducescatter",
                                                       [REPLAY_BROADCAST] = "broadcast",
                                                       [REPLAY_REDUCE] = "reduce",
                                                       [REPLAY_ALLTOALL] = "alltoall",
                                                       [REPLAY_BARRIER] = "barrier"};
    return (unsigned)op < REPLAY_OP_COUNT && names[op] ? bench_coll_find(names[op]) : NULL;
}

/* Bytes of the call's send and receive buffers on this rank. */
static void call_buffers(const replay_call *c, int nranks, size_t *send, size_t *recv)
{
    size_t dsize = coll_dtype_size(c->dtype);
    const bench_coll *bc = coll_of(c->op);
    *send = *recv = 0;
    if (c->op == REPLAY_SEND) *send = c->count * dsize;
    else if (c->op == REPLAY_RECV) *recv = c->count * dsize;
    else if (bc && bc->moves_data) {
        *send = bench_coll_send_elems(bc, c->count, nranks) * dsize;
        *recv = bench_coll_recv_elems(bc, c->count, nranks) * dsize;
    }
}

/* The bytes the engine reports for the call, and those times its bus factor. */
static void call_bytes(const replay_call *c, int nranks, double *bytes, double *busbytes)
{
    size_t dsize = coll_dtype_size(c->dtype);
    const bench_coll *bc = coll_of(c->op);
    if (!bc) bc = bench_coll_find("sendrecv"); /* send, recv: one message */
    *bytes = replay_op_is_p2p(c->op) ? (double)c->count * (double)dsize
                                     : (double)bench_coll_bytes(bc, c->count, dsize, nranks);
    *busbytes = *bytes * bc->bus_factor(nranks);
}

int replay_call_size_class(const replay_trace *t, const replay_call *c)
{
    double bytes, busbytes;
    call_bytes(c, t->groups[c->group].nranks, &bytes, &busbytes);
    return replay_size_class((uint64_t)bytes);
}

static int by_id(const void *a, const void *b, void *arg)
{
    const replay_trace *t = arg;
    return strcmp(t->groups[*(const size_t *)a].id, t->groups[*(const size_t *)b].id);
}

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int make_comm(const replay_trace *t, size_t gi, const replay_opts *o, group_comm *g,
                     char *err, size_t errlen)
{
    const replay_group *grp = &t->groups[gi];
    char method[600];
    /* the id may hold any character: its hash names the store */
    snprintf(method, sizeof method, "file://%s/t%d-%016llx", o->rdv_dir, o->turn,
             (unsigned long long)fnv1a(grp->id));
    coll_config cfg;
    coll_config_init(&cfg);
    cfg.backend = o->backend;
    cfg.init_method = method;
    cfg.rank = grp->my_rank;
    cfg.world_size = grp->nranks;
    cfg.timeout_s = o->timeout_s;
    int rc = coll_comm_create(&cfg, &g->comm);
    if (rc)
        snprintf(err, errlen, "group \"%.60s\" (%d ranks) on %s: %s", grp->id, grp->nranks,
                 o->backend ? o->backend : "the default backend",
                 *coll_last_create_error() ? coll_last_create_error() : coll_strerror(rc));
    return rc;
}

static void *buffer(const replay_opts *o, coll_comm *comm, size_t bytes)
{
    if (bytes < 64) bytes = 64; /* never NULL, also for count 0 */
    void *p = o->coll_buffers ? coll_alloc(comm, bytes) : malloc(bytes);
    if (p) memset(p, 0, bytes); /* zeros: every reduction of every dtype stays finite */
    return p;
}

static void free_buffer(const replay_opts *o, coll_comm *comm, void *p)
{
    if (!p) return;
    if (o->coll_buffers) coll_free(comm, p);
    else free(p);
}

/* Each group's largest send and receive buffer into gs[].send_bytes, recv_bytes. */
static void group_needs(const replay_trace *t, group_comm *gs)
{
    for (size_t i = 0; i < t->ncalls; i++) {
        const replay_call *c = &t->calls[i];
        size_t s, r;
        call_buffers(c, t->groups[c->group].nranks, &s, &r);
        if (s > gs[c->group].send_bytes) gs[c->group].send_bytes = s;
        if (r > gs[c->group].recv_bytes) gs[c->group].recv_bytes = r;
    }
}

uint64_t replay_buffer_bytes(const replay_trace *t)
{
    group_comm *gs = calloc(t->ngroups + 1, sizeof *gs);
    uint64_t sum = 0;
    if (!gs) return UINT64_MAX;
    group_needs(t, gs);
    for (size_t gi = 0; gi < t->ngroups; gi++)
        sum += (uint64_t)gs[gi].send_bytes + gs[gi].recv_bytes + 128;
    free(gs);
    return sum;
}

static int make_buffers(const replay_trace *t, const replay_opts *o, group_comm *gs, char *err,
                        size_t errlen)
{
    group_needs(t, gs);
    for (size_t gi = 0; gi < t->ngroups; gi++) {
        group_comm *g = &gs[gi];
        g->send = buffer(o, g->comm, g->send_bytes);
        g->recv = buffer(o, g->comm, g->recv_bytes);
        if (!g->send || !g->recv)
            return snprintf(err, errlen, "group \"%.60s\": out of memory for %zu + %zu bytes",
                            t->groups[gi].id, g->send_bytes, g->recv_bytes),
                   COLL_ENOMEM;
    }
    return 0;
}

static int run_call(const replay_trace *t, const replay_call *c, group_comm *g)
{
    const replay_group *grp = &t->groups[c->group];
    if (c->op == REPLAY_SEND) return coll_send(g->comm, g->send, c->count, c->dtype, c->peer);
    if (c->op == REPLAY_RECV) return coll_recv(g->comm, g->recv, c->count, c->dtype, c->peer);
    const bench_coll *bc = coll_of(c->op);
    if (!bc) return COLL_ENOTSUP; /* gather, scatter: refused before the launch */
    bench_call call = {.comm = g->comm,
                       .rank = grp->my_rank,
                       .nranks = grp->nranks,
                       .send = g->send,
                       .recv = g->recv,
                       .count = c->count,
                       .dtype = c->dtype,
                       .op = c->red,
                       .root = c->root};
    return bc->run(&call);
}

static void add_recorded(const replay_trace *t, replay_measure *m)
{
    if (!t->has_times) return;
    m->has_times = 1;
    for (size_t i = 0; i < t->ncalls; i++) {
        const replay_call *c = &t->calls[i];
        double rec = (double)(c->t1 - c->t0) * 1e-9;
        double bytes, busbytes;
        call_bytes(c, t->groups[c->group].nranks, &bytes, &busbytes);
        m->recorded_comm_s += rec;
        m->recorded_gap_s += (double)c->gap * 1e-9;
        m->cell[c->op][replay_size_class((uint64_t)bytes)].recorded_s += rec;
    }
    m->recorded_total_s = (double)(t->calls[t->ncalls - 1].t1 - t->calls[0].t0 + t->calls[0].gap) *
                          1e-9;
}

static int replay_calls(const replay_trace *t, const replay_opts *o, group_comm *gs,
                        replay_measure *m, char *err, size_t errlen)
{
    double cap = o->timeout_s / 2; /* the others wait in a call meanwhile */
    int rc = o->world ? coll_barrier(o->world) : 0;
    if (rc) return snprintf(err, errlen, "start barrier: %s", coll_comm_errmsg(o->world)), rc;
    double start = coll__now_s();
    for (size_t i = 0; i < t->ncalls; i++) {
        const replay_call *c = &t->calls[i];
        if (o->gaps && c->gap > 0) {
            double gap = (double)c->gap * 1e-9;
            if (gap > cap) gap = cap, m->capped_gaps++;
            m->gap_s += replay_spend_gap(gap);
        }
        double a = coll__now_s();
        rc = run_call(t, c, &gs[c->group]);
        double b = coll__now_s();
        if (rc)
            return snprintf(err, errlen, "%s:%ld: seq %lld: %s in group \"%.60s\": %s", t->path,
                            c->line, (long long)c->seq, replay_op_name(c->op),
                            t->groups[c->group].id,
                            *coll_comm_errmsg(gs[c->group].comm)
                                ? coll_comm_errmsg(gs[c->group].comm)
                                : coll_strerror(rc)),
                   rc;
        double bytes, busbytes;
        call_bytes(c, t->groups[c->group].nranks, &bytes, &busbytes);
        replay_cell *cell = &m->cell[c->op][replay_size_class((uint64_t)bytes)];
        cell->calls++;
        cell->time_s += b - a;
        cell->busbytes += busbytes;
        if (o->call_s) o->call_s[i] = b - a;
        m->comm_s += b - a;
    }
    m->total_s = coll__now_s() - start;
    return 0;
}

int replay_run(const replay_trace *t, const replay_opts *o, replay_measure *m, char *err,
               size_t errlen)
{
    memset(m, 0, sizeof *m);
    size_t *order = calloc(t->ngroups + 1, sizeof *order);
    group_comm *gs = calloc(t->ngroups + 1, sizeof *gs);
    int rc = order && gs ? 0 : COLL_ENOMEM;
    if (rc) snprintf(err, errlen, "out of memory");
    for (size_t i = 0; i < t->ngroups; i++) order[i] = i;
    if (!rc) qsort_r(order, t->ngroups, sizeof *order, by_id, (void *)t);
    size_t made = 0;
    for (; !rc && made < t->ngroups; made++)
        if ((rc = make_comm(t, order[made], o, &gs[order[made]], err, errlen))) break;
    if (!rc) rc = make_buffers(t, o, gs, err, errlen);
    if (!rc) rc = replay_calls(t, o, gs, m, err, errlen);
    if (!rc) add_recorded(t, m);
    /* every rank done before any group is taken down: a rank whose last call
     * came early would otherwise wait in a destroy's barrier for the others'
     * remaining calls, and time out there if they take longer than -T */
    if (!rc && o->world && (rc = coll_barrier(o->world)))
        snprintf(err, errlen, "end barrier: %s", coll_comm_errmsg(o->world));
    for (size_t i = made; i-- > 0;) { /* the reverse order, on every rank alike */
        group_comm *g = &gs[order[i]];
        free_buffer(o, g->comm, g->send);
        free_buffer(o, g->comm, g->recv);
        coll_comm_destroy(g->comm);
    }
    free(order);
    free(gs);
    return rc;
}
