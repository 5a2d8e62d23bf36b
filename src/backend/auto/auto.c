/* The auto backend: sub-communicators made of other backends' states, each on
 * a sub-rendezvous (own key prefix, sub rank and size) over the same store.
 *
 *   intra: the ranks of this host, over shm (or tcp: $COLL_AUTO_INTRA);
 *   inter: the ranks with this rank's local index, one per host, over tcp;
 *   flat:  every rank over tcp, for what is not hierarchical.
 *
 * One host: everything runs on intra. Several hosts: all-reduce is hierarchical
 * when every host has the same number of ranks (else flat), and the other
 * collectives run flat. */
#include "backend/auto/auto.h"
#include "backend/auto/auto_pipe.h"
#include "backend/shm/shm_backend.h"
#include "backend/tcp/tcp_backend.h"
#include "algo/algo.h"
#include "bootstrap/blame_chain.h"
#include "bootstrap/rendezvous.h"
#include "core/alloc.h"
#include "core/clock.h"
#include "core/env.h"
#include "core/reduce.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How long a rank that timed out waiting for a peer looks for that peer's own
 * report: a peer that waited for a third rank times out about as late. */
#define BLAME_GRACE_S 0.5

typedef struct sub {
    const coll__backend_ops *ops; /* NULL: this sub-communicator is not needed */
    void *state;
    const int *ranks; /* sub rank -> rank; NULL: the identity */
    int n;            /* ranks in this sub-communicator */
    const char *what; /* for messages */
} sub;

typedef struct auto_state {
    int rank, size;
    coll__store *store; /* the rendezvous store: who blamed whom */
    char prefix[64];    /* this communicator's keys in it */
    coll__host_plan plan;
    sub intra, inter, flat;
    int hier;             /* all-reduce goes intra/inter/intra */
    const char *flat_why; /* why all-reduce is flat on several hosts */
    auto_pipe *pipe;      /* runs the inter-host steps of a pipelined all-reduce */
    double pipe_bytes;    /* its chunk ($COLL_AUTO_PIPE_BYTES); 0: not pipelined */
    int piped;            /* pipe may be running on inter: only it touches inter */
} auto_state;

/* Within a host: shm, or the one $COLL_AUTO_INTRA names (shm or tcp). */
static const coll__backend_ops *intra_ops(char *why, size_t whylen, int *bad)
{
    const char *want = getenv("COLL_AUTO_INTRA");
    *bad = 0;
    if (want && *want) {
        const coll__backend_ops *ops = strcmp(want, "shm") == 0   ? &coll__backend_shm
                                       : strcmp(want, "tcp") == 0 ? &coll__backend_tcp
                                                                  : NULL;
        if (ops) {
            snprintf(why, whylen, "chosen by COLL_AUTO_INTRA");
            return ops;
        }
        snprintf(why, whylen, "COLL_AUTO_INTRA=%s: auto runs shm or tcp within a host", want);
        *bad = 1;
        return NULL;
    }
    snprintf(why, whylen, "shared memory within a host");
    return &coll__backend_shm;
}

const char *coll_auto_intra_name(char *why, size_t whylen)
{
    char buf[320];
    int bad;
    const coll__backend_ops *ops = intra_ops(buf, sizeof buf, &bad);
    if (why && whylen) snprintf(why, whylen, "%s", buf);
    return ops ? ops->name : "none";
}

static int is_identity(const sub *s)
{
    for (int r = 0; s->ranks && r < s->n; r++)
        if (s->ranks[r] != r) return 0;
    return 1;
}

/* After a message from s: which world ranks s is made of, when not the identity. */
static void note_group(const sub *s, char *msg, size_t len)
{
    if (is_identity(s)) return;
    char list[128] = "";
    size_t used = 0;
    for (int r = 0; r < s->n && r < 8 && used < sizeof list; r++) {
        int k = snprintf(list + used, sizeof list - used, "%s%d", r ? ", " : "", s->ranks[r]);
        if (k > 0) used += (size_t)k;
    }
    if (s->n > 8 && used < sizeof list)
        snprintf(list + used, sizeof list - used, " and %d more", s->n - 8);
    size_t n = strlen(msg);
    if (n < len)
        snprintf(msg + n, len - n, " (in the %s %s group of ranks %s)", s->what, s->ops->name,
                 list);
}

static int sub_init(const coll__rendezvous *rv, sub *s, const char *tag, int subrank, int subsize,
                    coll__err *err)
{
    coll__rendezvous srv = *rv;
    coll__err why;
    coll__err_init(&why, s->ranks, subsize);
    srv.rank = subrank;
    srv.world_size = subsize;
    srv.local_rank = subrank;
    /* local_world_size stays this host's ranks: what tcp's waits weigh
     * against the cores (every group's ranks here share them). */
    srv.world_of = s->ranks; /* the group's backend names world ranks from the start */
    srv.nworld = s->ranks ? subsize : 0;
    if (coll__store_key(srv.prefix, sizeof srv.prefix, NULL, rv->prefix, "a%s/", tag)) {
        return coll__err_set(err, COLL_EINVAL, "auto: key prefix %sa%s/ too long for the %s group",
                             rv->prefix, tag, s->what);
    }
    s->n = subsize;
    int rc = s->ops->init(&srv, &s->state, &why);
    if (rc) {
        if (!why.msg[0]) snprintf(why.msg, sizeof why.msg, "%s", coll_strerror(rc));
        coll__err_set(err, rc, "auto: cannot set up the %s %s group: %s", s->what, s->ops->name,
                      why.msg);
        note_group(s, err->msg, sizeof err->msg);
        s->state = NULL;
    }
    return rc;
}

static void explain_flat(auto_state *st)
{
    const coll__host_plan *p = &st->plan;
    if (p->nhosts == 1) st->flat_why = "one host";
    else if (!p->regular) st->flat_why = "flat: hosts have different numbers of ranks";
    else if (p->local_size == 1) st->flat_why = "flat: one rank per host";
    else st->flat_why = "flat: COLL_AUTO_HIER=0";
}

/* Which sub-communicators this rank needs; every rank of a group decides alike
 * because the plan is the same everywhere. */
static int plan_subs(auto_state *st, coll__err *err)
{
    const coll__host_plan *p = &st->plan;
    char why[320];
    int bad;
    /* $COLL_AUTO_PIPE_BYTES: the pipeline's chunk (0 turns it off; its default
     * in auto_knobs.c). Read on one host too: junk fails wherever it is set. */
    uint64_t hier_env, pipe;
    int rc = coll__tunable_read(&coll__auto_tunables.rows[AUTO_KNOB_HIER], 0, 0, &hier_env, err);
    if (!rc)
        rc = coll__tunable_read(&coll__auto_tunables.rows[AUTO_KNOB_PIPE_BYTES], 0, 0, &pipe, err);
    if (rc) return rc;
    int multi = p->nhosts > 1;
    st->intra.what = "intra-host";
    st->inter.what = "inter-host";
    st->flat.what = "all-hosts";
    if (!multi || (p->regular && p->local_size > 1)) {
        st->intra.ops = intra_ops(why, sizeof why, &bad);
        if (!st->intra.ops) {
            return coll__err_set(err, COLL_EINVAL, "auto: %s", why);
        }
        st->intra.ranks = p->members;
    }
    if (!multi) return COLL_OK;
    st->flat.ops = &coll__backend_tcp;
    st->hier = p->regular && p->local_size > 1 && hier_env;
    st->pipe_bytes = (double)pipe;
    if (st->hier) {
        st->inter.ops = &coll__backend_tcp;
        st->inter.ranks = p->peers;
    }
    if (!st->hier) {
        explain_flat(st);
        st->intra.ops = NULL; /* nothing runs on it */
    }
    return COLL_OK;
}

static void auto_fini(void *state)
{
    auto_state *st = state;
    if (!st) return;
    coll__auto_pipe_stop(st->pipe);
    sub *subs[] = {&st->intra, &st->inter, &st->flat};
    for (size_t i = 0; i < 3; i++)
        if (subs[i]->state) subs[i]->ops->fini(subs[i]->state);
    coll__host_plan_free(&st->plan);
    free(st);
}

static int auto_init(const coll__rendezvous *rv, void **state, coll__err *err)
{
    auto_state *st = calloc(1, sizeof *st);
    char prefix[96];
    if (!st) return COLL_ENOMEM;
    st->rank = rv->rank;
    st->size = rv->world_size;
    st->store = rv->store;
    snprintf(st->prefix, sizeof st->prefix, "%s", rv->prefix);
    int rc = coll__store_key(prefix, sizeof prefix, err, rv->prefix, "a/");
    if (!rc)
        rc = coll__host_plan_exchange(rv->store, prefix, rv->rank, rv->world_size, &st->plan, err);
    if (!rc) rc = plan_subs(st, err);
    const coll__host_plan *p = &st->plan;
    char tag[32];
    /* Every rank first, then the groups: a rank that hangs or dies setting up
     * its first group is then waited for by every rank, which all name it,
     * instead of by its group only while the others wait for its partners. */
    if (!rc && st->flat.ops) rc = sub_init(rv, &st->flat, "f", rv->rank, rv->world_size, err);
    if (!rc && st->intra.ops) {
        snprintf(tag, sizeof tag, "h%d", p->host);
        rc = sub_init(rv, &st->intra, tag, p->local_rank, p->local_size, err);
    }
    if (!rc && st->inter.ops) {
        snprintf(tag, sizeof tag, "x%d", p->local_rank);
        rc = sub_init(rv, &st->inter, tag, p->host, p->nhosts, err);
    }
    if (rc) {
        auto_fini(st);
        return rc;
    }
    *state = st;
    return COLL_OK;
}

static void auto_abort(void *state, int status, int failed_rank);
static void abort_sub(sub *s, int status, int failed_rank);

/* Runs c on s; a failure names the rank in the world's numbering, in
 * *failed_rank and in err: the rank that failed first when the one s blames
 * had itself stopped because of another. */
static int sub_failure(auto_state *st, sub *s, int rc, coll__err *err);

static int sub_run(auto_state *st, sub *s, const coll__call *c, const coll__sig *sig,
                   double deadline, coll__err *err)
{
    coll__err_clear(err);
    int rc = s->ops->run(s->state, c, sig, deadline, err);
    return rc ? sub_failure(st, s, rc, err) : COLL_OK;
}

/* s's call failed with rc, err blaming a world rank (s's backend knows s's
 * map: maybe a rank outside s): the group named, every group aborted, and the
 * rank that failed first looked up. */
static int sub_failure(auto_state *st, sub *s, int rc, coll__err *err)
{
    int blamed = err->rank;
    if (blamed >= st->size) blamed = -1;
    if (!err->msg[0]) { /* a bare status: say at least who, when the backend knows */
        if (blamed >= 0) coll__err_set(err, 0, "rank %d failed: %s", blamed, coll_strerror(rc));
        else coll__err_set(err, 0, "%s", coll_strerror(rc));
    }
    note_group(s, err->msg, sizeof err->msg);
    err->status = rc;
    err->rank = blamed;
    /* The other groups' peers may be waiting for this rank right now: tell
     * them before the store look-ups below, which can be slow (the store's
     * host may be the rank that died). The communicator's abort that follows
     * finds every group already aborted. */
    auto_abort(st, rc, blamed);
    /* One host is one group: nobody outside it to ask whom to blame. */
    if (st->plan.nhosts == 1) return rc;
    int root = coll__blame_chain(st->store, st->prefix, "a", st->rank, st->size, blamed,
                                 rc == COLL_ETIMEDOUT ? BLAME_GRACE_S : 0);
    if (root != blamed) {
        coll__err_append(err, "; rank %d had stopped because rank %d failed", blamed, root);
        err->rank = root;
    }
    return rc;
}

/* One step of the hierarchical all-reduce c: its call and its own signature
 * (avg steps sum; the caller divides at the end). */
static void step_call(coll__kind kind, const void *sbuf, void *rbuf, size_t count,
                      const coll__call *c, const coll__sig *parent, coll__call *sc, coll__sig *sig)
{
    *sc = (coll__call){.kind = kind,
                       .sendbuf = sbuf,
                       .recvbuf = rbuf,
                       .count = count,
                       .dt = c->dt,
                       .op = c->op == COLL_AVG ? COLL_SUM : c->op,
                       .root = 0,
                       .dest = -1,
                       .source = -1};
    *sig = *parent;
    sig->kind = (uint8_t)kind;
    sig->op = (uint8_t)sc->op;
    sig->count = count;
}

/* One step run on s. */
static int step(auto_state *st, sub *s, coll__kind kind, const void *sbuf, void *rbuf, size_t count,
                const coll__call *c, const coll__sig *parent, double deadline, coll__err *err)
{
    coll__call sc;
    coll__sig sig;
    step_call(kind, sbuf, rbuf, count, c, parent, &sc, &sig);
    return sub_run(st, s, &sc, &sig, deadline, err);
}

/* One chunk's inter-host step, run on st->pipe. */
typedef struct inter_job {
    auto_state *st;
    coll__call call;
    coll__sig sig;
    double deadline;
    int rc;
    coll__err err;
} inter_job;

static void run_inter(void *arg)
{
    inter_job *j = arg;
    auto_state *st = j->st;
    coll__err_clear(&j->err);
    j->rc = st->inter.ops->run(st->inter.state, &j->call, &j->sig, j->deadline, &j->err);
    if (!j->rc) return;
    /* Stop the caller's intra-host step now (shm's abort marks the shared
     * segment, safe beside a running call); the rest of the failure is
     * handled by the caller once this thread is idle. */
    int w = j->err.rank; /* a world rank: tcp knows the group's map */
    abort_sub(&st->intra, j->rc, w < st->size ? w : -1);
}

/* Elements of a pipelined chunk of st->pipe_bytes (a multiple of the host's
 * ranks), or 0: not pipelined. */
static size_t pipe_chunk(const auto_state *st, size_t count, size_t es)
{
    size_t ls = (size_t)st->plan.local_size;
    if (!(st->pipe_bytes > 0)) return 0;
    size_t chunk = (size_t)(st->pipe_bytes / (double)es) / ls * ls;
    if (chunk < ls) chunk = ls;
    return count >= 2 * chunk ? chunk : 0;
}

/* Chunks [0, nchunks) of `chunk` elements: reduce-scatter chunk i inside the
 * host, post its inter-host all-reduce to the pipe, then all-gather chunk i-1
 * once its inter-host step is done; the pipe's step of chunk i crosses the
 * link meanwhile. On a failure the pipe is drained before anything else
 * touches the inter-host group. */
static int piped_allreduce(auto_state *st, const coll__call *c, const coll__sig *sig, size_t chunk,
                           size_t nchunks, double deadline, coll__err *err)
{
    size_t es = coll_dtype_size(c->dt), ls = (size_t)st->plan.local_size;
    size_t blk = chunk / ls, lr = (size_t)st->plan.local_rank;
    const char *sb = c->sendbuf;
    char *rb = c->recvbuf;
    inter_job jobs[2];
    uint64_t posted[2] = {0, 0}, last = 0; /* each job's ticket; the latest */
    int rc = COLL_OK;
    st->piped = 1;
    for (size_t i = 0; i <= nchunks && !rc; i++) {
        if (i < nchunks) {
            char *mine = rb + (i * chunk + lr * blk) * es;
            rc = step(st, &st->intra, COLL_KIND_REDUCESCATTER, sb + i * chunk * es, mine, blk, c,
                      sig, deadline, err);
            if (rc) break;
            inter_job *j = &jobs[i % 2];
            j->st = st;
            j->deadline = deadline;
            coll__err_init(&j->err, err->world_of, err->nworld); /* the caller's map */
            step_call(COLL_KIND_ALLREDUCE, mine, mine, blk, c, sig, &j->call, &j->sig);
            posted[i % 2] = last = coll__auto_pipe_post(st->pipe, run_inter, j);
        }
        if (i == 0) continue;
        inter_job *prev = &jobs[(i - 1) % 2];
        coll__auto_pipe_wait(st->pipe, posted[(i - 1) % 2]);
        if (prev->rc) break;
        rc = step(st, &st->intra, COLL_KIND_ALLGATHER, rb + ((i - 1) * chunk + lr * blk) * es,
                  rb + (i - 1) * chunk * es, blk, c, sig, deadline, err);
    }
    if (last) coll__auto_pipe_wait(st->pipe, last); /* in order: every job has run */
    st->piped = 0;
    /* A failed inter-host step is the cause (it stopped any intra-host step
     * that failed after it): the earliest one. */
    int first = -1;
    for (int k = 0; k < 2; k++)
        if (posted[k] && jobs[k].rc && (first < 0 || posted[k] < posted[first])) first = k;
    if (first >= 0) {
        *err = jobs[first].err;
        return sub_failure(st, &st->inter, jobs[first].rc, err);
    }
    /* An intra-host step failed: its abort skipped the pipe's group. */
    if (rc) abort_sub(&st->inter, rc, err->rank);
    return rc;
}

/* Intra-host reduce-scatter, inter-host all-reduce of this rank's block,
 * intra-host all-gather, on the elements [from, count) of c, one step after
 * another. The count % local_size elements past the blocks go through an
 * intra-host all-reduce, then the inter-host one. */
static int hier_steps(auto_state *st, const coll__call *c, size_t from, const coll__sig *sig,
                      double deadline, coll__err *err)
{
    size_t es = coll_dtype_size(c->dt), ls = (size_t)st->plan.local_size;
    size_t count = c->count - from, blk = count / ls, bulk = blk * ls, rem = count - bulk;
    const char *sb = (const char *)c->sendbuf + from * es;
    char *rb = (char *)c->recvbuf + from * es, *mine = rb + (size_t)st->plan.local_rank * blk * es;
    int rc = COLL_OK;
    if (blk) {
        rc = step(st, &st->intra, COLL_KIND_REDUCESCATTER, sb, mine, blk, c, sig, deadline, err);
        if (!rc)
            rc = step(st, &st->inter, COLL_KIND_ALLREDUCE, mine, mine, blk, c, sig, deadline, err);
        if (!rc)
            rc = step(st, &st->intra, COLL_KIND_ALLGATHER, mine, rb, blk, c, sig, deadline, err);
    }
    if (!rc && rem) {
        rc = step(st, &st->intra, COLL_KIND_ALLREDUCE, sb + bulk * es, rb + bulk * es, rem, c, sig,
                  deadline, err);
        if (!rc)
            rc = step(st, &st->inter, COLL_KIND_ALLREDUCE, rb + bulk * es, rb + bulk * es, rem, c,
                      sig, deadline, err);
    }
    return rc;
}

/* The hierarchical all-reduce: whole chunks pipelined (the inter-host step of
 * one chunk overlapping the intra-host steps of its neighbours) when the call
 * is large enough and the pipe's thread runs, the rest step by step. */
static int hier_allreduce(auto_state *st, const coll__call *c, const coll__sig *sig,
                          double deadline, coll__err *err)
{
    size_t chunk = pipe_chunk(st, c->count, coll_dtype_size(c->dt)), from = 0;
    int rc = COLL_OK;
    if (chunk && !st->pipe) st->pipe = coll__auto_pipe_start();
    if (chunk && st->pipe) {
        size_t n = c->count / chunk;
        rc = piped_allreduce(st, c, sig, chunk, n, deadline, err);
        from = n * chunk;
    }
    if (!rc && from < c->count) rc = hier_steps(st, c, from, sig, deadline, err);
    if (!rc && c->op == COLL_AVG) coll__scale_div(c->recvbuf, c->count, c->dt, st->size);
    return rc;
}

/* Point-to-point calls run on a group of every rank, numbered as the world
 * (intra on one host, flat on several), so a receive from any source is that
 * group's: one wait over every peer (shm's doorbell, tcp's poll), no polling
 * of two backends in turn. */
static int auto_run(void *state, const coll__call *c, const coll__sig *sig, double deadline,
                    coll__err *err)
{
    auto_state *st = state;
    if (st->plan.nhosts == 1) return sub_run(st, &st->intra, c, sig, deadline, err);
    if (c->kind == COLL_KIND_ALLREDUCE && st->hier)
        return hier_allreduce(st, c, sig, deadline, err);
    return sub_run(st, &st->flat, c, sig, deadline, err);
}

/* One host: every call runs on intra, so intra must honour the algorithm
 * (shm honours only auto). Several hosts: tcp between hosts honours it (the
 * flat calls and the inter-host step of a hierarchical all-reduce), while the
 * intra-host steps keep their backend's own choice. */
static int auto_set_algo(void *state, const char *algo, coll__err *err)
{
    auto_state *st = state;
    coll__algo_id id;
    if (coll__algo_parse(algo, &id) != 0) {
        return coll__err_set(err, COLL_EINVAL, "unknown algorithm '%s'", algo);
    }
    if (st->plan.nhosts == 1) {
        int rc = st->intra.ops->set_algo(st->intra.state, algo, err);
        if (rc)
            coll__err_prefix(err, "backend auto runs every call of one host on %s",
                             st->intra.ops->name);
        return rc;
    }
    sub *subs[] = {&st->inter, &st->flat, &st->intra};
    for (size_t i = 0; i < 3; i++) {
        if (!subs[i]->state) continue;
        int rc = subs[i]->ops->set_algo(subs[i]->state, algo, err);
        if (rc && !(rc == COLL_ENOTSUP && subs[i] == &st->intra)) return rc;
    }
    coll__err_clear(err); /* intra's refusal is no error here */
    return COLL_OK;
}

/* s's peers learn whom to blame: world rank failed_rank, which may be outside
 * s (its backend carries world ranks on its wire or segment). */
static void abort_sub(sub *s, int status, int failed_rank)
{
    if (s->state) s->ops->abort(s->state, status, failed_rank);
}

static void auto_abort(void *state, int status, int failed_rank)
{
    auto_state *st = state;
    abort_sub(&st->intra, status, failed_rank);
    /* While the pipe may be running on inter, only it touches inter (a tcp
     * abort writes to the sockets a running call uses): piped_allreduce
     * aborts it once the pipe is idle. */
    if (!st->piped) abort_sub(&st->inter, status, failed_rank);
    abort_sub(&st->flat, status, failed_rank);
}

/* Buffers come from the intra-host backend (its shared segment) when it has one. */
static void *auto_alloc(void *state, size_t bytes)
{
    auto_state *st = state;
    if (st->intra.state && st->intra.ops->alloc)
        return st->intra.ops->alloc(st->intra.state, bytes);
    return coll__alloc_aligned(bytes);
}

static void auto_free(void *state, void *ptr)
{
    auto_state *st = state;
    if (st->intra.state && st->intra.ops->free) st->intra.ops->free(st->intra.state, ptr);
    else free(ptr);
}

static int auto_nhosts(const void *state) { return ((const auto_state *)state)->plan.nhosts; }

static int auto_describe(const void *state, char *buf, size_t len)
{
    const auto_state *st = state;
    const coll__host_plan *p = &st->plan;
    const char *intra = st->intra.ops ? st->intra.ops->name : "tcp";
    if (p->nhosts == 1)
        snprintf(buf, len, "auto: 1 host, %d ranks, all collectives on %s", p->local_size, intra);
    else
        snprintf(buf, len,
                 "auto: %d hosts, %d ranks on this one; intra-host %s, inter-host tcp; "
                 "all-reduce %s",
                 p->nhosts, p->local_size, st->hier ? intra : "tcp",
                 st->hier ? "hierarchical" : st->flat_why);
    return COLL_OK;
}

static int auto_plan(const void *state, char *buf, size_t len)
{
    const auto_state *st = state;
    if (!st->intra.state || !st->intra.ops->plan) return COLL_ENOTSUP;
    return st->intra.ops->plan(st->intra.state, buf, len);
}

const coll__backend_ops coll__backend_auto = {
    .size = sizeof(coll__backend_ops),
    .name = "auto",
    .init = auto_init,
    .run = auto_run,
    .set_algo = auto_set_algo,
    .abort = auto_abort,
    .fini = auto_fini,
    .alloc = auto_alloc,
    .free = auto_free,
    .nhosts = auto_nhosts,
    .describe = auto_describe,
    .plan = auto_plan,
};
