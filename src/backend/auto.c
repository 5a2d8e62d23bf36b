/* The auto backend: sub-communicators made of other backends' states, each on
 * a sub-rendezvous (own key prefix, sub rank and size) over the same store.
 *
 *   intra: the ranks of this host, over shm (tcp while shm is not built in);
 *   inter: the ranks with this rank's local index, one per host, over tcp;
 *   flat:  every rank over tcp, for what is not hierarchical.
 *
 * One host: everything runs on intra. Several hosts: all-reduce is hierarchical
 * when every host has the same number of ranks (else flat), and the other
 * collectives run flat. */
#include "backend/auto.h"
#include "algo/algo.h"
#include "bootstrap/rendezvous.h"
#include "core/comm.h"
#include "core/reduce.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sub {
    const coll_backend_ops *ops; /* NULL: this sub-communicator is not needed */
    void *state;
    const int *ranks;            /* sub rank -> rank; NULL: the identity */
    const char *what;            /* for messages */
} sub;

typedef struct auto_state {
    int rank, size;
    coll_host_plan plan;
    sub intra, inter, flat;
    int hier;                    /* all-reduce goes intra/inter/intra */
    const char *flat_why;        /* why all-reduce is flat on several hosts */
} auto_state;

static const coll_backend_ops *intra_ops(char *why, size_t whylen, int *bad)
{
    char err[256];
    const char *want = getenv("COLL_AUTO_INTRA");
    *bad = 0;
    if (want && *want) {
        const coll_backend_ops *ops = coll_backend_find(want, err, sizeof err);
        if (ops && ops != &coll_backend_auto) {
            snprintf(why, whylen, "chosen by COLL_AUTO_INTRA");
            return ops;
        }
        snprintf(why, whylen, "COLL_AUTO_INTRA=%s: %s", want,
                 ops ? "auto cannot run inside itself" : err);
        *bad = 1;
        return NULL;
    }
    const coll_backend_ops *shm = coll_backend_find("shm", err, sizeof err);
    if (shm) {
        snprintf(why, whylen, "shared memory within a host");
        return shm;
    }
    (void)err; /* "not part of this build yet" and the like: info shows it per backend */
    snprintf(why, whylen, "shm is not available here");
    return &coll_backend_tcp;
}

const char *coll_auto_intra_name(char *why, size_t whylen)
{
    char buf[320];
    int bad;
    const coll_backend_ops *ops = intra_ops(buf, sizeof buf, &bad);
    if (why && whylen) snprintf(why, whylen, "%s", buf);
    return ops ? ops->name : "none";
}

static int sub_init(coll_comm *comm, const coll_rendezvous *rv, sub *s, const char *tag,
                    int subrank, int subsize, char *err, size_t errlen)
{
    coll_rendezvous srv = *rv;
    char why[256] = "";
    srv.rank = subrank;
    srv.world_size = subsize;
    srv.local_rank = subrank;
    srv.local_world_size = subsize;
    char pre[160];
    int n = snprintf(pre, sizeof pre, "%sa%s/", rv->prefix, tag);
    if (n < 0 || (size_t)n >= sizeof srv.prefix) {
        snprintf(err, errlen, "auto: key prefix %s too long for the %s group", pre, s->what);
        return COLL_EINVAL;
    }
    memcpy(srv.prefix, pre, (size_t)n + 1);
    int rc = s->ops->init(comm, &srv, &s->state, why, sizeof why);
    if (rc) {
        snprintf(err, errlen, "auto: cannot set up the %s %s group (rank %d of %d): %s", s->what,
                 s->ops->name, subrank, subsize, why[0] ? why : coll_strerror(rc));
        s->state = NULL;
    }
    return rc;
}

static void explain_flat(auto_state *st)
{
    const coll_host_plan *p = &st->plan;
    if (p->nhosts == 1) st->flat_why = "one host";
    else if (!p->regular) st->flat_why = "flat: hosts have different numbers of ranks";
    else if (p->local_size == 1) st->flat_why = "flat: one rank per host";
    else st->flat_why = "flat: COLL_AUTO_HIER=0";
}

/* Which sub-communicators this rank needs; every rank of a group decides alike
 * because the plan is the same everywhere. */
static int plan_subs(auto_state *st, char *err, size_t errlen)
{
    const coll_host_plan *p = &st->plan;
    char why[320];
    int bad;
    const char *hier_env = getenv("COLL_AUTO_HIER");
    int multi = p->nhosts > 1;
    st->intra.what = "intra-host";
    st->inter.what = "inter-host";
    st->flat.what = "all-hosts";
    if (!multi || (p->regular && p->local_size > 1)) {
        st->intra.ops = intra_ops(why, sizeof why, &bad);
        if (!st->intra.ops) {
            snprintf(err, errlen, "auto: %s", why);
            return COLL_EINVAL;
        }
        st->intra.ranks = p->members;
    }
    if (!multi) return COLL_OK;
    st->flat.ops = &coll_backend_tcp;
    st->hier = p->regular && p->local_size > 1 && !(hier_env && strcmp(hier_env, "0") == 0);
    if (st->hier) {
        st->inter.ops = &coll_backend_tcp;
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
    sub *subs[] = {&st->intra, &st->inter, &st->flat};
    for (size_t i = 0; i < 3; i++)
        if (subs[i]->state) subs[i]->ops->fini(subs[i]->state);
    coll_host_plan_free(&st->plan);
    free(st);
}

static int auto_init(coll_comm *comm, const coll_rendezvous *rv, void **state, char *err,
                     size_t errlen)
{
    auto_state *st = calloc(1, sizeof *st);
    char prefix[96];
    if (!st) return COLL_ENOMEM;
    st->rank = rv->rank;
    st->size = rv->world_size;
    snprintf(prefix, sizeof prefix, "%sa/", rv->prefix);
    int rc = coll_host_plan_exchange(rv->store, prefix, rv->rank, rv->world_size, &st->plan, err,
                                     errlen);
    if (!rc) rc = plan_subs(st, err, errlen);
    const coll_host_plan *p = &st->plan;
    char tag[32];
    if (!rc && st->intra.ops) {
        snprintf(tag, sizeof tag, "h%d", p->host);
        rc = sub_init(comm, rv, &st->intra, tag, p->local_rank, p->local_size, err, errlen);
    }
    if (!rc && st->inter.ops) {
        snprintf(tag, sizeof tag, "x%d", p->local_rank);
        rc = sub_init(comm, rv, &st->inter, tag, p->host, p->nhosts, err, errlen);
    }
    if (!rc && st->flat.ops) rc = sub_init(comm, rv, &st->flat, "f", rv->rank, rv->world_size, err, errlen);
    if (rc) {
        auto_fini(st);
        return rc;
    }
    *state = st;
    return COLL_OK;
}

/* Runs c on s; a failure names the rank in the world's numbering. */
static int sub_run(sub *s, const coll_call *c, const coll_sig *sig, double deadline, char *err,
                   size_t errlen, int *failed_rank)
{
    int sub_failed = -1;
    int rc = s->ops->run(s->state, c, sig, deadline, err, errlen, &sub_failed);
    if (rc) {
        *failed_rank = sub_failed >= 0 && s->ranks ? s->ranks[sub_failed] : sub_failed;
        if (s->ranks && sub_failed >= 0) {
            size_t n = strlen(err);
            snprintf(err + n, errlen - n, " (%s %s group: its rank %d is rank %d)", s->what,
                     s->ops->name, sub_failed, *failed_rank);
        }
    }
    return rc;
}

/* One step of the hierarchical all-reduce on s, stamped with its own signature. */
static int step(sub *s, coll_kind kind, const void *sbuf, void *rbuf, size_t count,
                const coll_call *c, const coll_sig *parent, double deadline, char *err,
                size_t errlen, int *failed_rank)
{
    coll_call sc = {.kind = kind, .sendbuf = sbuf, .recvbuf = rbuf, .count = count, .dt = c->dt,
                    .op = COLL_SUM, .root = 0, .dest = -1, .source = -1};
    if (c->op != COLL_AVG) sc.op = c->op;
    coll_sig sig = *parent;
    sig.kind = (uint8_t)kind;
    sig.op = (uint8_t)sc.op;
    sig.count = count;
    return sub_run(s, &sc, &sig, deadline, err, errlen, failed_rank);
}

/* Intra-host reduce-scatter, inter-host all-reduce of this rank's block,
 * intra-host all-gather. The count % local_size elements past the blocks go
 * through an intra-host all-reduce, then the inter-host one. */
static int hier_allreduce(auto_state *st, const coll_call *c, const coll_sig *sig,
                          double deadline, char *err, size_t errlen, int *failed_rank)
{
    size_t es = coll_dtype_size(c->dt), ls = (size_t)st->plan.local_size;
    size_t blk = c->count / ls, bulk = blk * ls, rem = c->count - bulk;
    const char *sb = c->sendbuf;
    char *rb = c->recvbuf, *mine = rb + (size_t)st->plan.local_rank * blk * es;
    int rc = COLL_OK;
    if (blk) {
        rc = step(&st->intra, COLL_KIND_REDUCESCATTER, sb, mine, blk, c, sig, deadline, err,
                  errlen, failed_rank);
        if (!rc)
            rc = step(&st->inter, COLL_KIND_ALLREDUCE, mine, mine, blk, c, sig, deadline, err,
                      errlen, failed_rank);
        if (!rc)
            rc = step(&st->intra, COLL_KIND_ALLGATHER, mine, rb, blk, c, sig, deadline, err, errlen,
                      failed_rank);
    }
    if (!rc && rem) {
        rc = step(&st->intra, COLL_KIND_ALLREDUCE, sb + bulk * es, rb + bulk * es, rem, c, sig,
                  deadline, err, errlen, failed_rank);
        if (!rc)
            rc = step(&st->inter, COLL_KIND_ALLREDUCE, rb + bulk * es, rb + bulk * es, rem, c, sig,
                      deadline, err, errlen, failed_rank);
    }
    if (!rc && c->op == COLL_AVG) coll_scale_div(rb, c->count, c->dt, st->size);
    return rc;
}

static int auto_run(void *state, const coll_call *c, const coll_sig *sig, double deadline,
                    char *err, size_t errlen, int *failed_rank)
{
    auto_state *st = state;
    *failed_rank = -1;
    if (st->plan.nhosts == 1) return sub_run(&st->intra, c, sig, deadline, err, errlen, failed_rank);
    if (c->kind == COLL_KIND_ALLREDUCE && st->hier)
        return hier_allreduce(st, c, sig, deadline, err, errlen, failed_rank);
    return sub_run(&st->flat, c, sig, deadline, err, errlen, failed_rank);
}

/* The algorithm applies inside every group; a group's backend without that
 * choice (COLL_ENOTSUP) keeps its own. */
static int auto_set_algo(void *state, const char *algo, char *err, size_t errlen)
{
    auto_state *st = state;
    coll_algo_id id;
    if (coll_algo_parse(algo, &id) != 0) {
        snprintf(err, errlen, "unknown algorithm '%s'", algo);
        return COLL_EINVAL;
    }
    sub *subs[] = {&st->intra, &st->inter, &st->flat};
    for (size_t i = 0; i < 3; i++) {
        if (!subs[i]->state) continue;
        int rc = subs[i]->ops->set_algo(subs[i]->state, algo, err, errlen);
        if (rc && rc != COLL_ENOTSUP) return rc;
    }
    return COLL_OK;
}

static void auto_abort(void *state, int status, int failed_rank)
{
    auto_state *st = state;
    sub *subs[] = {&st->intra, &st->inter, &st->flat};
    for (size_t i = 0; i < 3; i++)
        if (subs[i]->state)
            subs[i]->ops->abort(subs[i]->state, status, subs[i]->ranks ? -1 : failed_rank);
}

/* Buffers come from the intra-host backend (its shared segment) when it has one. */
static void *auto_alloc(void *state, size_t bytes)
{
    auto_state *st = state;
    if (st->intra.state && st->intra.ops->alloc) return st->intra.ops->alloc(st->intra.state, bytes);
    void *p = NULL;
    if (posix_memalign(&p, bytes >= 65536 ? 4096 : 64, bytes ? bytes : 1)) return NULL;
    return p;
}

static void auto_free(void *state, void *ptr)
{
    auto_state *st = state;
    if (st->intra.state && st->intra.ops->free) st->intra.ops->free(st->intra.state, ptr);
    else free(ptr);
}

const coll_backend_ops coll_backend_auto = {
    .size = sizeof(coll_backend_ops),
    .name = "auto",
    .init = auto_init,
    .run = auto_run,
    .set_algo = auto_set_algo,
    .abort = auto_abort,
    .fini = auto_fini,
    .alloc = auto_alloc,
    .free = auto_free,
};

int coll_auto_nhosts(const coll_comm *comm)
{
    if (!comm || comm->backend != &coll_backend_auto || !comm->state) return -1;
    return ((const auto_state *)comm->state)->plan.nhosts;
}

int coll_auto_describe(const coll_comm *comm, char *buf, size_t len)
{
    if (coll_auto_nhosts(comm) < 0) return COLL_EINVAL;
    const auto_state *st = comm->state;
    const coll_host_plan *p = &st->plan;
    const char *intra = st->intra.ops ? st->intra.ops->name : "tcp";
    if (p->nhosts == 1)
        snprintf(buf, len, "auto: 1 host, %d ranks, all collectives on %s", p->local_size, intra);
    else
        snprintf(buf, len, "auto: %d hosts, %d ranks on this one; intra-host %s, inter-host tcp; "
                 "all-reduce %s", p->nhosts, p->local_size, st->hier ? intra : "tcp",
                 st->hier ? "hierarchical" : st->flat_why);
    return COLL_OK;
}
