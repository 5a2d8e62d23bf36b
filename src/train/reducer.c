/* The reducer's modes except ddp (reducer_ddp.c): single, allreduce-sync, ps,
 * local-sgd, and the dispatch. */
#include "train/reducer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/clock.h"
#include "core/errbuf.h"

int train_reducer_mode_parse(const char *s, reducer_opts *o, char *err, size_t errlen)
{
    o->local_k = 0;
    if (strcmp(s, "single") == 0) return o->mode = MODE_SINGLE, 0;
    if (strcmp(s, "allreduce-sync") == 0) return o->mode = MODE_ALLREDUCE_SYNC, 0;
    if (strcmp(s, "ddp") == 0) return o->mode = MODE_DDP, 0;
    if (strcmp(s, "ps") == 0) return o->mode = MODE_PS, 0;
    if (strcmp(s, "local-sgd") == 0) return o->mode = MODE_LOCAL_SGD, o->local_k = 4, 0;
    if (strncmp(s, "local-sgd:", 10) == 0) {
        char *end;
        long k = strtol(s + 10, &end, 10);
        if (s[10] == '\0' || *end != '\0' || k < 1 || k > 1000000) {
            coll__set_err(err, errlen, "--mode: local-sgd:K needs K from 1 to 1000000, not '%s'",
                          s + 10);
            return COLL_EINVAL;
        }
        o->mode = MODE_LOCAL_SGD;
        o->local_k = (int)k;
        return 0;
    }
    coll__set_err(err, errlen,
                  "--mode: '%s' is not single, allreduce-sync, ddp, ps or local-sgd[:K]", s);
    return COLL_EINVAL;
}

void train_reducer_mode_name(const reducer_opts *o, char *buf, size_t len)
{
    static const char *names[] = {"single", "allreduce-sync", "ddp", "ps", "local-sgd"};
    if (o->mode == MODE_LOCAL_SGD) snprintf(buf, len, "local-sgd:%d", o->local_k);
    else snprintf(buf, len, "%s", names[o->mode]);
}

size_t train_reducer_comm_bytes_estimate(const reducer_opts *o, size_t nparams, int world, int rank)
{
    size_t f = sizeof(float);
    if (o->mode == MODE_PS) return rank == 0 && world > 1 ? nparams * f : 0;
    if (o->mode != MODE_DDP) return 0;
    switch (o->compress.kind) {
    case COMPRESS_FP16:
    case COMPRESS_BF16: return nparams * sizeof(uint16_t);
    case COMPRESS_TOPK: {
        size_t biggest = o->bucket_bytes / f > nparams ? nparams : o->bucket_bytes / f + 1;
        size_t k = train_topk_count(nparams, o->compress.ratio) +
                   nparams / (o->bucket_bytes / f + 1) + 2;
        return nparams * f + biggest * f + k * sizeof(topk_pair) * (1 + (size_t)world);
    }
    default: return 0;
    }
}

int train_reducer_create(reducer *r, const reducer_opts *o, coll_comm *comm, train_net *m, sgd *opt)
{
    memset(r, 0, sizeof *r);
    r->o = *o;
    r->comm = comm;
    r->m = m;
    r->opt = opt;
    r->rank = comm ? coll_comm_rank(comm) : 0;
    r->world = comm ? coll_comm_size(comm) : 1;
    if (!comm && o->mode != MODE_SINGLE) {
        coll__set_err(r->err, sizeof r->err, "mode needs a communicator");
        return COLL_EINVAL;
    }
    r->synced = 1;
    if (o->mode == MODE_DDP) return train_ddp_setup(r);
    if (o->mode == MODE_PS && r->rank == 0 && r->world > 1) {
        r->comm_bytes = m->nparams * sizeof(float);
        if (!(r->ps_recv = coll__alloc_aligned_to(64, r->comm_bytes))) { /* as grads */
            coll__set_err(r->err, sizeof r->err,
                          "out of memory for the ps receive buffer (%zu bytes)", r->comm_bytes);
            return COLL_ENOMEM;
        }
    }
    return 0;
}

const grad_hook *train_reducer_begin_step(reducer *r)
{
    if (r->o.mode != MODE_DDP) return NULL;
    train_ddp_begin(r);
    return &r->hook;
}

static void timed_step(reducer *r)
{
    double t0 = coll__now_s();
    train_sgd_step(r->opt, r->m->params, r->m->grads);
    r->opt_ms = (coll__now_s() - t0) * 1e3;
}

static int failed(reducer *r, int rc, const char *what)
{
    coll__set_err(r->err, sizeof r->err, "%s: %s", what,
                  *coll_comm_errmsg(r->comm) ? coll_comm_errmsg(r->comm) : coll_strerror(rc));
    return rc;
}

/* Gather to rank 0 (point to point, one peer after the other: rank 0's link
 * carries everything, which is the point of the comparison), average, step
 * there, broadcast the parameters back. */
static int ps_step(reducer *r)
{
    train_net *m = r->m;
    size_t n = m->nparams;
    int rc;
    if (r->rank == 0) {
        for (int peer = 1; peer < r->world; peer++) {
            if ((rc = coll_recv(r->comm, r->ps_recv, n, COLL_FLOAT32, peer)))
                return failed(r, rc, "ps: receiving gradients");
            for (size_t i = 0; i < n; i++) m->grads[i] += r->ps_recv[i];
        }
        float inv = 1.0f / (float)r->world;
        for (size_t i = 0; i < n; i++) m->grads[i] *= inv;
        timed_step(r);
    } else {
        r->opt_ms = 0;
        if ((rc = coll_send(r->comm, m->grads, n, COLL_FLOAT32, 0)))
            return failed(r, rc, "ps: sending gradients to rank 0");
    }
    if ((rc = coll_broadcast(r->comm, m->params, m->params, n, COLL_FLOAT32, 0)))
        return failed(r, rc, "ps: broadcasting parameters");
    return 0;
}

int train_reducer_end_step(reducer *r, int step)
{
    train_net *m = r->m;
    int rc;
    if (r->world == 1 && r->o.mode != MODE_DDP) { /* nothing to meet: the single-process step */
        timed_step(r);
        return 0;
    }
    switch (r->o.mode) {
    case MODE_SINGLE: timed_step(r); return 0;
    case MODE_ALLREDUCE_SYNC:
        if ((rc = coll_allreduce(r->comm, m->grads, m->grads, m->nparams, COLL_FLOAT32, COLL_AVG)))
            return failed(r, rc, "allreduce-sync: all-reduce of the gradients");
        timed_step(r);
        return 0;
    case MODE_DDP:
        if ((rc = train_ddp_finish(r))) return rc;
        timed_step(r);
        return 0;
    case MODE_PS: return ps_step(r);
    case MODE_LOCAL_SGD:
        timed_step(r);
        r->synced = (step + 1) % r->o.local_k == 0;
        if (r->synced && (rc = coll_allreduce(r->comm, m->params, m->params, m->nparams,
                                              COLL_FLOAT32, COLL_AVG)))
            return failed(r, rc, "local-sgd: averaging the parameters");
        return 0;
    }
    return COLL_EINVAL;
}

void train_reducer_free(reducer *r)
{
    /* A bucket still in flight (an error cut the step short) must finish before
     * its buffers go. */
    for (size_t i = 0; i < r->nbuckets; i++)
        if (r->buckets[i].req) coll_wait(r->buckets[i].req);
    free(r->buckets);
    free(r->half);
    free(r->residual);
    free(r->scratch);
    free(r->pairs_send);
    free(r->pairs_recv);
    free(r->ps_recv);
    memset(r, 0, sizeof *r);
}
