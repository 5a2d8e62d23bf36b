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
 * allocated once (malloc or coll_alloc) and zeroed, reused by every call; one
 * such pair per call the group keeps in flight at once (replay_schedule.h).
 *
 * Calls in flight (opts.overlap, a trace with times): each call is issued when
 * the program issued it, relative to the events it followed (the previous
 * call's issue, the ends of the calls that had ended by then), and its time is
 * from its issue to its end as its group's completion thread sees it
 * (replay_flight.h), as the recording measured it. */
#include "replay/replay_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/clock.h"
#include "engine/bench_coll.h"
#include "replay/replay_busy.h"
#include "replay/replay_exit.h"
#include "replay/replay_flight.h"
#include "replay/replay_rdv.h"
#include "replay/replay_schedule.h"
#include "replay/replay_skew.h"

typedef struct group_comm {
    coll_comm *lane[REPLAY_LANES_MAX]; /* replay_lanes; lane 0 also blocking calls, buffers */
    size_t nlanes, next_lane;          /* its nonblocking calls dealt in turn */
    void *send, *recv;                 /* depth slots of send_bytes, recv_bytes each */
    size_t send_bytes, recv_bytes;     /* one slot's, rounded up to 64 */
    size_t depth;                      /* calls in flight at once: slots */
    size_t next_slot;
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
    else if (c->sp.n) *send = c->in * dsize, *recv = c->out * dsize; /* uneven all-to-all */
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
    if (replay_op_is_p2p(c->op)) *bytes = (double)c->count * (double)dsize;
    else if (c->sp.n) *bytes = (double)c->in * (double)dsize; /* uneven all-to-all: what it sends */
    else *bytes = (double)bench_coll_bytes(bc, c->count, dsize, nranks);
    *busbytes = *bytes * bc->bus_factor(nranks);
}

uint64_t replay_call_bytes(const replay_trace *t, const replay_call *c)
{
    double bytes, busbytes;
    call_bytes(c, t->groups[c->group].nranks, &bytes, &busbytes);
    return (uint64_t)bytes;
}

int replay_call_size_class(const replay_trace *t, const replay_call *c)
{
    return replay_size_class(replay_call_bytes(t, c));
}

static int by_id(const void *a, const void *b, void *arg)
{
    const replay_trace *t = arg;
    return strcmp(t->groups[*(const size_t *)a].id, t->groups[*(const size_t *)b].id);
}

/* The recorded plan's variables set (on 1) or taken away again (on 0): a
 * backend reads its tuning variables when a communicator is made, so they
 * are in the environment only then (on the rank's main thread, before its
 * calls start). A variable the user set stays as it is (set[i] 0), as the
 * environment stands above a tuning file. With them, shm's probes still
 * run where the program's ran, their verdicts not taken: the program paid
 * their time inside its calls (its first all-reduce of 117 MB took 304-308
 * ms with them, 37-43 replayed without: docs/PERFORMANCE.md). */
#define PLAN_PROBES "COLL_SHM_PROBE_GIVEN=1"
static void plan_env(const char *plan, int on, int set[REPLAY_PLAN_MAX_VARS + 1])
{
    char copy[REPLAY_PLAN_MAX_LEN + sizeof PLAN_PROBES + 1],
        *save = NULL; /* trace_read keeps it within */
    snprintf(copy, sizeof copy, "%s %s", plan, PLAN_PROBES);
    int i = 0;
    for (char *kv = strtok_r(copy, " ", &save); kv && i < REPLAY_PLAN_MAX_VARS + 1;
         kv = strtok_r(NULL, " ", &save), i++) {
        char *eq = strchr(kv, '=');
        if (!eq) continue;
        *eq = '\0';
        if (on) set[i] = !getenv(kv) && setenv(kv, eq + 1, 1) == 0;
        else if (set[i]) unsetenv(kv);
    }
}

static int make_lane(const replay_trace *t, size_t gi, const replay_opts *o, const char *method,
                     coll_comm **comm, char *err, size_t errlen)
{
    const replay_group *grp = &t->groups[gi];
    coll_config cfg;
    coll_config_init(&cfg);
    cfg.backend = o->backend;
    cfg.init_method = method;
    cfg.rank = grp->my_rank;
    cfg.world_size = grp->nranks;
    cfg.timeout_s = o->timeout_s;
    int set[REPLAY_PLAN_MAX_VARS + 1] = {0};
    const char *plan = o->recorded_plan ? grp->plan : NULL;
    if (plan) plan_env(plan, 1, set);
    int rc = coll_comm_create(&cfg, comm);
    if (plan) plan_env(plan, 0, set);
    if (rc)
        snprintf(err, errlen, "group \"%.60s\" (%d ranks) on %s: %s", grp->id, grp->nranks,
                 o->backend ? o->backend : "the default backend",
                 *coll_last_create_error() ? coll_last_create_error() : coll_strerror(rc));
    return rc;
}

/* Group gi's communicators, one per lane (methods: every group's lanes, the
 * group's at gi * lanes), in lane order on every rank; none left on failure. */
static int make_comm(const replay_trace *t, size_t gi, const replay_opts *o,
                     char (*methods)[REPLAY_METHOD_LEN], size_t lanes, group_comm *g, char *err,
                     size_t errlen)
{
    int rc = 0;
    for (g->nlanes = 0; !rc && g->nlanes < lanes; g->nlanes++)
        if ((rc = make_lane(t, gi, o, methods[gi * lanes + g->nlanes], &g->lane[g->nlanes], err,
                            errlen)))
            break;
    while (rc && g->nlanes > 0) coll_comm_destroy(g->lane[--g->nlanes]);
    return rc;
}

static void destroy_comm(group_comm *g)
{
    while (g->nlanes > 0) {
        coll_comm_destroy(g->lane[--g->nlanes]);
        g->lane[g->nlanes] = NULL;
    }
}

static void *buffer(const replay_opts *o, coll_comm *comm, size_t bytes)
{
    /* 64-byte aligned as torch's CPU allocator gives tensors: malloc puts a
     * block this large 16 bytes into a page, and copies into split lines run
     * slower than the program's did. */
    void *p = o->coll_buffers ? coll_alloc(comm, bytes) : coll__alloc_aligned_to(64, bytes);
    if (p) memset(p, 0, bytes); /* zeros: every reduction of every dtype stays finite */
    return p;
}

static void free_buffer(const replay_opts *o, coll_comm *comm, void *p)
{
    if (!p) return;
    if (o->coll_buffers) coll_free(comm, p);
    else free(p);
}

static const char *const overlap_names[] = {"none", "recorded", "auto"};

const char *replay_overlap_name(replay_overlap o)
{
    return (unsigned)o < 3 ? overlap_names[o] : "invalid-overlap";
}

int replay_overlap_parse(const char *name, replay_overlap *o)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(name, overlap_names[i])) return *o = (replay_overlap)i, 0;
    return -1;
}

int replay_keeps_in_flight(const replay_trace *t, int overlap)
{
    return t->has_times && t->ncalls > 0 && overlap != REPLAY_OVERLAP_NONE;
}

size_t replay_lanes(const replay_trace *t, int overlap, const char *backend)
{
    int gloo_on_gloo = !strcmp(t->backend, "gloo") && backend && !strcmp(backend, "gloo");
    return replay_keeps_in_flight(t, overlap) && gloo_on_gloo ? REPLAY_LANES_MAX : 1;
}

/* Each group's largest send and receive buffer (rounded up to 64 bytes) and
 * its calls in flight at once under done_by (NULL: each call alone) into gs[].
 * 0, or -1 out of memory. */
static int group_needs(const replay_trace *t, const size_t *done_by, group_comm *gs)
{
    for (size_t i = 0; i < t->ncalls; i++) {
        const replay_call *c = &t->calls[i];
        size_t s, r;
        call_buffers(c, t->groups[c->group].nranks, &s, &r);
        if (s > gs[c->group].send_bytes) gs[c->group].send_bytes = s;
        if (r > gs[c->group].recv_bytes) gs[c->group].recv_bytes = r;
    }
    for (size_t g = 0; g < t->ngroups; g++) {
        gs[g].send_bytes = (gs[g].send_bytes + 63) / 64 * 64;
        gs[g].recv_bytes = (gs[g].recv_bytes + 63) / 64 * 64;
        if (gs[g].send_bytes == 0) gs[g].send_bytes = 64; /* never NULL, also for count 0 */
        if (gs[g].recv_bytes == 0) gs[g].recv_bytes = 64;
        gs[g].depth = 1;
    }
    if (!done_by) return 0;
    size_t *depth = malloc((t->ngroups + 1) * sizeof *depth);
    int rc = depth ? replay_schedule_depth(t, done_by, depth) : -1;
    for (size_t g = 0; !rc && g < t->ngroups; g++) gs[g].depth = depth[g];
    free(depth);
    return rc;
}

/* t's done_by (replay_schedule.h) when its calls are kept in flight under
 * overlap, into *done_by (the caller frees); NULL when they are not. 0, or -1
 * out of memory. */
static int schedule(const replay_trace *t, int overlap, size_t **done_by)
{
    *done_by = NULL;
    if (!replay_keeps_in_flight(t, overlap)) return 0;
    if (!(*done_by = malloc(t->ncalls * sizeof **done_by))) return -1;
    replay_schedule_done_by(t, *done_by);
    return 0;
}

uint64_t replay_buffer_bytes(const replay_trace *t, int overlap)
{
    group_comm *gs = calloc(t->ngroups + 1, sizeof *gs);
    size_t *done_by = NULL;
    uint64_t sum = 0;
    if (!gs || schedule(t, overlap, &done_by) || group_needs(t, done_by, gs))
        return free(gs), free(done_by), UINT64_MAX;
    for (size_t gi = 0; gi < t->ngroups; gi++)
        sum += (uint64_t)(gs[gi].send_bytes + gs[gi].recv_bytes) * gs[gi].depth;
    free(gs), free(done_by);
    return sum;
}

static int make_buffers(const replay_trace *t, const replay_opts *o, const size_t *done_by,
                        group_comm *gs, char *err, size_t errlen)
{
    if (group_needs(t, done_by, gs)) return snprintf(err, errlen, "out of memory"), COLL_ENOMEM;
    for (size_t gi = 0; gi < t->ngroups; gi++) {
        group_comm *g = &gs[gi];
        g->send = buffer(o, g->lane[0], g->send_bytes * g->depth);
        g->recv = buffer(o, g->lane[0], g->recv_bytes * g->depth);
        if (!g->send || !g->recv)
            return snprintf(err, errlen,
                            "group \"%.60s\": out of memory for %zu x (%zu + %zu) bytes",
                            t->groups[gi].id, g->depth, g->send_bytes, g->recv_bytes),
                   COLL_ENOMEM;
    }
    return 0;
}

/* torch's all_reduce and broadcast work on the tensor they are given, in
 * place, and the replay runs them so: a backend plans by it (shm's slices
 * took 1.1-1.3x the time out of place, 2 ranks, 16-64 MiB; its window above
 * the core window runs only out of place). */
static void *send_of(const replay_call *c, void *send, void *recv)
{
    return c->op == REPLAY_ALLREDUCE || c->op == REPLAY_BROADCAST ? recv : send;
}

static int run_call(const replay_trace *t, const replay_call *c, group_comm *g)
{
    const replay_group *grp = &t->groups[c->group];
    if (c->op == REPLAY_SEND) return coll_send(g->lane[0], g->send, c->count, c->dtype, c->peer);
    if (c->op == REPLAY_RECV) return coll_recv(g->lane[0], g->recv, c->count, c->dtype, c->peer);
    if (c->sp.n) return coll_alltoallv(g->lane[0], g->send, c->sp.in, g->recv, c->sp.out, c->dtype);
    const bench_coll *bc = coll_of(c->op);
    if (!bc) return COLL_ENOTSUP; /* gather, scatter: refused before the launch */
    bench_call call = {.comm = g->lane[0],
                       .rank = grp->my_rank,
                       .nranks = grp->nranks,
                       .send = send_of(c, g->send, g->recv),
                       .recv = g->recv,
                       .count = c->count,
                       .dtype = c->dtype,
                       .op = c->red,
                       .root = c->root};
    return bc->run(&call);
}

/* The recorded time x (ns) on the trace's clock from its first call, in s. */
static double rec_s(const replay_trace *t, int64_t x)
{
    return (double)(x - t->calls[0].t0) * 1e-9;
}

/* How much later than its group's first rank out this rank left call i in
 * the recording (replay_exit.h), 0 without: spent before the compute after
 * the call, as the rank was still in the call then. */
static double late_s(const replay_opts *o, size_t i)
{
    return o->exit_late_s ? o->exit_late_s[i] : 0;
}

/* Where the program went on after call i, on the replay's clock from the
 * trace's first call: its recorded end, less its lateness against the group's
 * first rank out (replay_exit.h), which the replay's ranks, leaving together,
 * then spend as a gap. */
static double rec_end_s(const replay_trace *t, const replay_opts *o, size_t i)
{
    return rec_s(t, t->calls[i].t1) - late_s(o, i);
}

static void add_recorded(const replay_trace *t, double arrival_s, replay_measure *m)
{
    if (!t->has_times) return;
    m->has_times = 1;
    m->recorded_gap_s = arrival_s; /* from the earliest rank's first call */
    double *from = malloc(t->ncalls * sizeof *from), *to = malloc(t->ncalls * sizeof *to);
    for (size_t i = 0; i < t->ncalls; i++) {
        const replay_call *c = &t->calls[i];
        double rec = (double)(c->t1 - c->t0) * 1e-9;
        double bytes, busbytes;
        call_bytes(c, t->groups[c->group].nranks, &bytes, &busbytes);
        m->recorded_comm_s += rec;
        m->recorded_gap_s += (double)c->gap * 1e-9;
        m->cell[c->op][replay_size_class((uint64_t)bytes)].recorded_s += rec;
        if (from && to) from[i] = rec_s(t, c->t0), to[i] = rec_s(t, c->t1);
    }
    /* the sum above is the union where no two calls overlapped (and without memory) */
    double busy = from && to ? replay_busy(from, to, t->ncalls) : -1;
    if (busy >= 0) m->recorded_comm_s = busy;
    free(from), free(to);
    m->recorded_total_s = (double)(t->calls[t->ncalls - 1].t1 - t->calls[0].t0 + t->calls[0].gap) *
                              1e-9 +
                          arrival_s;
}

/* err: the call (file, line, seq, op, group) and why it failed; returns rc. */
static int call_failed(const replay_trace *t, const replay_call *c, const group_comm *g, int rc,
                       char *err, size_t errlen)
{
    const char *why = *coll_comm_errmsg(g->lane[0]) ? coll_comm_errmsg(g->lane[0])
                                                    : coll_strerror(rc);
    snprintf(err, errlen, "%s:%ld: seq %lld: %s in group \"%.60s\": %s", t->path, c->line,
             (long long)c->seq, replay_op_name(c->op), t->groups[c->group].id, why);
    return rc;
}

/* Call i took s seconds: into its op's and size's cell and the totals. */
static void account(const replay_trace *t, const replay_opts *o, size_t i, double s,
                    replay_measure *m)
{
    const replay_call *c = &t->calls[i];
    double bytes, busbytes;
    call_bytes(c, t->groups[c->group].nranks, &bytes, &busbytes);
    replay_cell *cell = &m->cell[c->op][replay_size_class((uint64_t)bytes)];
    cell->calls++;
    cell->time_s += s;
    cell->busbytes += busbytes;
    if (o->call_s) o->call_s[i] = s;
}

/* Spends a gap of s seconds as o says (capped at half of -T, counted in m). */
static void spend(const replay_opts *o, double s, replay_measure *m)
{
    if (o->gaps == REPLAY_GAPS_NONE || !(s > 0)) return;
    double cap = o->timeout_s / 2; /* the others wait in a call meanwhile */
    if (s > cap) s = cap, m->capped_gaps++;
    m->gap_s += replay_spend_gap(s, o->gaps == REPLAY_GAPS_BUSY);
}

/* 1 when the trace's CPU times are spun (--gaps recorded, times of the calling
 * thread's CPU). */
static int spins_cpu(const replay_opts *o)
{
    return o->gaps == REPLAY_GAPS_RECORDED && o->cpu_share > 0;
}

/* With --gaps recorded and a trace that has the calling thread's CPU time:
 * spins until this thread has used cpu_ns since its previous call returned
 * (its CPU clock read mark then). Returns the wall time spun. */
static double spend_cpu(const replay_opts *o, int64_t cpu_ns, double mark, replay_measure *m)
{
    if (!spins_cpu(o) || cpu_ns < 0 || mark < 0) return 0;
    double s = replay_spend_cpu(mark + (double)cpu_ns * 1e-9 * o->cpu_share, o->timeout_s / 2);
    m->gap_s += s;
    return s;
}

/* Each call alone, in order: the call, then the next one's gap (its CPU time
 * first, where the trace has it, then the rest of its wall time). */
static int replay_one_by_one(const replay_trace *t, const replay_opts *o, group_comm *gs,
                             replay_measure *m, double start, char *err, size_t errlen)
{
    double mark = replay_thread_cpu_s();
    for (size_t i = 0; i < t->ncalls; i++) {
        const replay_call *c = &t->calls[i];
        double late = i ? late_s(o, i - 1) : 0;
        spend(o, late, m); /* still in the call, as this rank was: before its compute */
        /* alone, nothing runs beside the compute that ran beside the previous
         * call: only what fits the gap after its end is spun */
        double spun = spend_cpu(o, c->cpu > c->gap ? c->gap : c->cpu, mark, m);
        spend(o, (double)c->gap * 1e-9 - spun, m);
        double a = coll__now_s();
        if (o->issue_s) o->issue_s[i] = a - start;
        int rc = run_call(t, c, &gs[c->group]);
        double b = coll__now_s();
        mark = replay_thread_cpu_s();
        if (rc) return call_failed(t, c, &gs[c->group], rc, err, errlen);
        account(t, o, i, b - a, m);
        m->comm_s += b - a; /* one at a time: the union of the calls is their sum */
    }
    return 0;
}

/* The replay's calls in flight, in issue order (at most REPLAY_MAX_IN_FLIGHT
 * per group, so a small array). */
typedef struct in_flight {
    size_t *call;
    size_t n;
} in_flight;

/* Waits for the in-flight calls that must end before call j: those done_by
 * says, every one of group all_of (a blocking call's), the oldest one of group
 * full (its slots are all in use), call upto and the earlier ones of its group
 * (the program waited for it); (size_t)-1: none. Accounts each; *shift
 * (replay clock minus recorded clock) becomes at least each one's replay end
 * minus its recorded end. 0 or the first failure's status (err said). */
static int land(const replay_trace *t, const replay_opts *o, group_comm *gs, replay_flight *f,
                in_flight *fl, const size_t *done_by, const double *issued, double *ended, size_t j,
                size_t all_of, size_t full, size_t upto, double *shift, double *last_end,
                replay_measure *m, char *err, size_t errlen)
{
    int rc = 0;
    size_t keep = 0, oldest = (size_t)-1;
    for (size_t k = 0; full != (size_t)-1 && k < fl->n && oldest == (size_t)-1; k++)
        if (t->calls[fl->call[k]].group == full) oldest = fl->call[k];
    for (size_t k = 0; k < fl->n; k++) {
        size_t i = fl->call[k], g = t->calls[i].group;
        int waited = upto != (size_t)-1 && g == t->calls[upto].group && i <= upto;
        if (done_by[i] > j && g != all_of && i != oldest && !waited) {
            fl->call[keep++] = i;
            continue;
        }
        double done;
        int r = replay_flight_wait(f, i, &done);
        if (r && !rc) rc = call_failed(t, &t->calls[i], &gs[g], r, err, errlen);
        if (r) continue;
        account(t, o, i, done - issued[i], m);
        ended[i] = done;
        if (done - rec_end_s(t, o, i) > *shift) *shift = done - rec_end_s(t, o, i);
        if (done > *last_end) *last_end = done;
    }
    fl->n = keep;
    return rc;
}

/* Issues c on the group's next lane (*lane: which), every rank dealing a
 * group's calls to its lanes alike. */
static int issue(const replay_call *c, group_comm *g, size_t *lane, coll_request **req)
{
    size_t slot = g->next_slot++ % g->depth;
    void *recv = (char *)g->recv + slot * g->recv_bytes;
    void *send = send_of(c, (char *)g->send + slot * g->send_bytes, recv);
    *lane = g->next_lane++ % g->nlanes;
    coll_comm *comm = g->lane[*lane];
    switch (c->op) {
    case REPLAY_ALLREDUCE:
        return coll_iallreduce(comm, send, recv, c->count, c->dtype, c->red, req);
    case REPLAY_ALLGATHER: return coll_iallgather(comm, send, recv, c->count, c->dtype, req);
    case REPLAY_REDUCESCATTER:
        return coll_ireducescatter(comm, send, recv, c->count, c->dtype, c->red, req);
    case REPLAY_BROADCAST:
        return coll_ibroadcast(comm, send, recv, c->count, c->dtype, c->root, req);
    default: return COLL_ENOTSUP;
    }
}

/* The calls kept in flight as the program kept them (replay_schedule.h): call
 * j is issued at its recorded time after the latest event it followed (the
 * previous issue, the ends it waited for), shifted to the replay's clock;
 * where the calling thread waited for a call (a blocking call, or wait_cpu),
 * the shift starts again from that call's end, so that a rank late to a call
 * its peers waited in is no later after it than the program was.
 * With the calling thread's CPU times (--gaps recorded), the gap before j
 * spins that CPU while the calls in flight run, and waits for a call where
 * the program blocked for it (wait_cpu: after that much of the CPU). */
static int replay_overlapped(const replay_trace *t, const replay_opts *o, const size_t *done_by,
                             group_comm *gs, replay_measure *m, double start, char *err,
                             size_t errlen)
{
    const size_t n = t->ncalls, none = (size_t)-1;
    double *issued = calloc(n, sizeof *issued), *ended = calloc(n, sizeof *ended);
    size_t *inflight = malloc((t->ngroups * REPLAY_MAX_IN_FLIGHT + 1) * sizeof *inflight);
    size_t *count = calloc(t->ngroups + 1, sizeof *count); /* in flight per group */
    replay_flight *f = replay_flight_new(n, t->ngroups * REPLAY_LANES_MAX); /* one per lane */
    in_flight fl = {.call = inflight};
    int rc = issued && ended && inflight && count && f ? 0 : COLL_ENOMEM;
    if (rc) snprintf(err, errlen, "out of memory");
    size_t nwait = 0, w = 0;
    replay_wait *waits = spins_cpu(o) ? replay_schedule_waits(t, &nwait) : NULL;
    double shift = start, last_end = start, mark = replay_thread_cpu_s();
    for (size_t j = 0; !rc && j <= n; j++) {
        for (; !rc && w < nwait && waits[w].before == j; w++) {
            spend_cpu(o, waits[w].cpu, mark, m);
            rc = land(t, o, gs, f, &fl, done_by, issued, ended, 0, none, none, waits[w].call,
                      &shift, &last_end, m, err, errlen);
            /* the program went on when the call it waited for ended: a lateness
             * of this rank's before the wait is absorbed there, as the program's
             * was (a rank that came late to a call others had waited in) */
            if (!rc) shift = coll__now_s() - rec_end_s(t, o, waits[w].call);
            spend(o, late_s(o, waits[w].call), m);
        }
        if (rc || j == n) break;
        const replay_call *c = &t->calls[j];
        size_t g = c->group;
        int nb = replay_call_nonblocking(c);
        /* the program computed while its calls ran, then waited for their ends */
        spend_cpu(o, c->cpu, mark, m);
        rc = land(t, o, gs, f, &fl, done_by, issued, ended, j, nb ? none : g,
                  nb && count[g] == gs[g].depth ? g : none, none, &shift, &last_end, m, err,
                  errlen);
        if (rc) break;
        memset(count, 0, t->ngroups * sizeof *count);
        for (size_t k = 0; k < fl.n; k++) count[t->calls[fl.call[k]].group]++;
        spend(o, rec_s(t, c->t0) + shift - coll__now_s(), m);
        double a = issued[j] = coll__now_s();
        if (a - rec_s(t, c->t0) > shift) shift = a - rec_s(t, c->t0);
        if (!nb) {
            rc = run_call(t, c, &gs[g]);
            double b = coll__now_s();
            mark = replay_thread_cpu_s();
            if (rc) {
                call_failed(t, c, &gs[g], rc, err, errlen);
                break;
            }
            account(t, o, j, b - a, m);
            ended[j] = b;
            if (b > last_end) last_end = b;
            /* the program went on when the call returned, whenever it came */
            shift = b - rec_end_s(t, o, j);
            spend(o, late_s(o, j), m);
            continue;
        }
        coll_request *req = NULL;
        size_t lane = 0;
        if ((rc = issue(c, &gs[g], &lane, &req))) {
            call_failed(t, c, &gs[g], rc, err, errlen);
            break;
        }
        fl.call[fl.n++] = j, count[g]++;
        if ((rc = replay_flight_add(f, g * REPLAY_LANES_MAX + lane, j, req)))
            snprintf(err, errlen, "cannot start a completion thread for group \"%.60s\"",
                     t->groups[g].id);
        mark = replay_thread_cpu_s();
    }
    free(waits);
    /* the calls still in flight end before the turn does (also after a failure) */
    int last = f ? land(t, o, gs, f, &fl, done_by, issued, ended, n, none, none, none, &shift,
                        &last_end, m, rc ? NULL : err, rc ? 0 : errlen)
                 : 0;
    if (!rc) rc = last;
    replay_flight_free(f);
    for (size_t i = 0; o->issue_s && issued && i < n; i++) o->issue_s[i] = issued[i] - start;
    /* calls in flight at once count once; a failed one never ended (0) */
    if (ended) {
        double busy = replay_busy(issued, ended, n);
        if (busy >= 0) m->comm_s = busy;
        else if (!rc) rc = COLL_ENOMEM, snprintf(err, errlen, "out of memory");
    }
    free(issued), free(ended), free(inflight), free(count);
    m->total_s = last_end - start;
    return rc;
}

/* The recorded exit lateness of t's calls into a new *late (replay_exit.h),
 * group by group in the order every rank makes them. */
static int exit_lateness(const replay_trace *t, const group_comm *gs, const size_t *order,
                         double **late, char *err, size_t errlen)
{
    *late = calloc(t->ncalls + 1, sizeof **late);
    int rc = COLL_OK;
    for (size_t k = 0; k < t->ngroups; k++) {
        int r = replay_exit_lateness(t, order[k], gs[order[k]].lane[0], *late);
        if (r && !rc) rc = r;
    }
    if (rc) snprintf(err, errlen, "exchanging the calls' recorded ends: %s", coll_strerror(rc));
    return rc;
}

/* One turn of t's calls; done_by: NULL, each call alone, else the calls kept
 * in flight under it; *start: the turn's start on this rank's clock. */
static int replay_calls(const replay_trace *t, const replay_opts *o, const size_t *done_by,
                        group_comm *gs, replay_measure *m, double *start, char *err, size_t errlen)
{
    int rc = coll_barrier(o->world);
    if (rc) return snprintf(err, errlen, "start barrier: %s", coll_comm_errmsg(o->world)), rc;
    *start = coll__now_s();
    spend(o, o->arrival_s, m); /* as late as the recording's first call was */
    if (done_by) return replay_overlapped(t, o, done_by, gs, m, *start, err, errlen);
    rc = replay_one_by_one(t, o, gs, m, *start, err, errlen);
    m->total_s = coll__now_s() - *start;
    return rc;
}

/* The skew of n calls (replay_skew.h) from each one's start and end on this
 * rank, on a clock every rank of its group reads alike: each group's last
 * arrivals, in the order every rank visits its groups. */
static int skew_of(const replay_trace *t, const group_comm *gs, const size_t *order,
                   const double *start, const double *end, double *skew_s)
{
    double *last = malloc((t->ncalls + 1) * sizeof *last);
    for (size_t i = 0; last && i < t->ncalls; i++) last[i] = start[i];
    int rc = 0;
    for (size_t k = 0; k < t->ngroups; k++) { /* every group, also after a failure */
        int r = replay_group_extreme(t, order[k], gs[order[k]].lane[0], last ? start : NULL, last,
                                     COLL_MAX);
        if (r && !rc) rc = r;
    }
    if (!rc) *skew_s = replay_skew_of(start, end, last, t->ncalls);
    if (!rc && *skew_s < 0) rc = COLL_ENOMEM;
    free(last);
    return rc;
}

/* How much of this rank's communication, replayed and recorded, waited for a
 * collective's last rank. The replay's times from the turn's start, which
 * every rank leaves a barrier for together, or on the host's clock where the
 * traces name one host (a barrier's ranks leave it apart by a scheduler's
 * wake-up with more ranks than cores); the recording's on its one clock. */
static int skew(const replay_trace *t, const replay_opts *o, const group_comm *gs,
                const size_t *order, double start, replay_measure *m, char *err, size_t errlen)
{
    m->skew_s = m->recorded_skew_s = NAN;
    if (!o->issue_s || !o->call_s) return 0; /* alike on every rank: nobody exchanges */
    size_t n = t->ncalls;
    double *a = malloc((n + 1) * sizeof *a), *b = malloc((n + 1) * sizeof *b);
    double from = o->one_clock ? start : 0;
    for (size_t i = 0; a && b && i < n; i++)
        a[i] = from + o->issue_s[i], b[i] = a[i] + o->call_s[i];
    int rc = skew_of(t, gs, order, a && b ? a : NULL, b, &m->skew_s);
    if (!rc && o->one_clock && t->has_times) {
        /* ns on one clock as doubles: exact below 2^53 ns (104 days of uptime) */
        for (size_t i = 0; a && b && i < n; i++)
            a[i] = (double)t->calls[i].t0, b[i] = (double)t->calls[i].t1;
        if (!(rc = skew_of(t, gs, order, a && b ? a : NULL, b, &m->recorded_skew_s)))
            m->recorded_skew_s *= 1e-9;
    }
    if (rc)
        snprintf(err, errlen, "exchanging the calls' arrivals: %s",
                 rc == COLL_ENOMEM ? "out of memory" : coll_strerror(rc));
    free(a), free(b);
    return rc;
}

int replay_run(const replay_trace *t, const replay_opts *o, replay_measure *m, char *err,
               size_t errlen)
{
    memset(m, 0, sizeof *m);
    size_t *order = calloc(t->ngroups + 1, sizeof *order);
    group_comm *gs = calloc(t->ngroups + 1, sizeof *gs);
    size_t *done_by = NULL; /* computed once: the buffers' depth and the calls both read it */
    int rc = order && gs && schedule(t, o->overlap, &done_by) == 0 ? 0 : COLL_ENOMEM;
    if (rc) snprintf(err, errlen, "out of memory");
    for (size_t i = 0; i < t->ngroups; i++) order[i] = i;
    if (!rc) qsort_r(order, t->ngroups, sizeof *order, by_id, (void *)t);
    size_t lanes = replay_lanes(t, o->overlap, o->backend);
    char(*methods)[REPLAY_METHOD_LEN] = calloc(t->ngroups * lanes + 1, sizeof *methods);
    if (!rc && !methods) rc = COLL_ENOMEM, snprintf(err, errlen, "out of memory");
    if (!rc) rc = replay_group_methods(t, o->world, lanes, methods, err, errlen);
    size_t made = 0;
    for (; !rc && made < t->ngroups; made++)
        if ((rc = make_comm(t, order[made], o, methods, lanes, &gs[order[made]], err, errlen)))
            break;
    free(methods);
    replay_opts own = *o;
    double *late = NULL;
    if (!rc && o->exit_late && t->has_times) rc = exit_lateness(t, gs, order, &late, err, errlen);
    own.exit_late_s = late;
    if (!rc) rc = make_buffers(t, o, done_by, gs, err, errlen);
    double start = 0;
    if (!rc) rc = replay_calls(t, &own, done_by, gs, m, &start, err, errlen);
    if (!rc) add_recorded(t, o->arrival_s, m);
    /* every rank done before any group is taken down or exchanges its calls'
     * arrivals: a rank whose last call came early would otherwise wait there
     * for the others' remaining calls, and time out if they take longer than -T */
    if (!rc && (rc = coll_barrier(o->world)))
        snprintf(err, errlen, "end barrier: %s", coll_comm_errmsg(o->world));
    if (!rc) rc = skew(t, o, gs, order, start, m, err, errlen);
    for (size_t i = made; i-- > 0;) { /* the reverse order, on every rank alike */
        group_comm *g = &gs[order[i]];
        free_buffer(o, g->lane[0], g->send);
        free_buffer(o, g->lane[0], g->recv);
        destroy_comm(g);
    }
    free(order);
    free(gs);
    free(done_by);
    free(late);
    return rc;
}
