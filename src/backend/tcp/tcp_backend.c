/* The tcp backend: libcoll's own algorithms (src/algo) over the TCP
 * point-to-point transport (src/transport/tcp). */
#include "backend/tcp/tcp_backend.h"
#include "backend/tcp/tcp_algo_knobs.h"
#include "algo/algo.h"
#include "bootstrap/rendezvous.h"
#include "core/clock.h"
#include "core/reduce.h"
#include "transport/tcp/tcp_knobs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct native_state {
    coll__transport *tp;
    coll__scratch scratch;
    coll__algo_id algo;
    size_t chunk_bytes;       /* $COLL_TCP_CHUNK_BYTES */
    coll__algo_limits limits; /* $COLL_TCP_*_MIN: the algorithms' crossovers */
    int rank, size;
} native_state;

static int native_set_algo(void *state, const char *algo, coll__err *err)
{
    native_state *st = state;
    coll__algo_id id;
    if (coll__algo_parse(algo, &id) != 0) {
        return coll__err_set(err, COLL_EINVAL, "unknown algorithm '%s'", algo);
    }
    st->algo = id;
    return COLL_OK;
}

static int tcp_init(const coll__rendezvous *rv, void **state, coll__err *err)
{
    native_state *st = calloc(1, sizeof(*st));
    if (!st) return COLL_ENOMEM;
    st->rank = rv->rank;
    st->size = rv->world_size;
    uint64_t chunk;
    if (coll__tunable_read(&coll__tcp_tunables.rows[TCP_KNOB_CHUNK], rv->world_size, 0, &chunk,
                           err)) {
        free(st);
        return COLL_EINVAL;
    }
    st->chunk_bytes = (size_t)chunk;
    if (coll__tcp_algo_limits(rv->world_size, &st->limits, err)) {
        free(st);
        return COLL_EINVAL;
    }
    int rc = coll__tcp_transport_create(rv->store, rv->prefix, rv->rank, rv->world_size, rv->host,
                                        rv->token, rv->timeout_s, rv->world_of, rv->nworld, &st->tp,
                                        err);
    /* Its waits spin briefly unless this host's ranks outnumber its cores. */
    if (!rc) rc = coll__tcp_transport_spin(st->tp, rv->local_world_size, err);
    if (rc) {
        if (st->tp) st->tp->ops->destroy(st->tp);
        free(st);
        return rc;
    }
    *state = st;
    return COLL_OK;
}

/* c's receive from peer (-1: recv_any picks it). */
static void init_recv(coll__algo_ctx *ctx, coll__xfer *x, const coll__call *c, int peer)
{
    coll__xfer_init(ctx, x, COLL_XFER_RECV, peer, c->recvbuf,
                    c->recvcount * coll_dtype_size(c->dt));
    x->sig.count = c->recvcount; /* what this side expects the sender to say */
}

static int run_p2p(coll__algo_ctx *ctx, const coll__call *c)
{
    coll__xfer x[2];
    int n = 0;
    if (c->dest >= 0) {
        coll__xfer_init(ctx, &x[n], COLL_XFER_SEND, c->dest, c->sendbuf,
                        c->count * coll_dtype_size(c->dt));
        n++;
    }
    if (c->source >= 0) init_recv(ctx, &x[n++], c, c->source);
    int rc = coll__p2p_post(ctx, x, n);
    if (rc == COLL_OK && c->source == COLL__ANY_SOURCE) { /* the send moves meanwhile */
        coll__xfer any;
        init_recv(ctx, &any, c, -1);
        rc = coll__p2p_recv_any(ctx, &any, c->from);
    }
    return rc ? rc : coll__p2p_wait(ctx, x, n);
}

/* avg is a sum divided once at the end, where the result lands. */
static void finish_avg(const coll__call *c, int rank, int size)
{
    if (c->op != COLL_AVG) return;
    if (c->kind == COLL_KIND_REDUCE && rank != c->root) return;
    coll__scale_div(c->recvbuf, c->count, c->dt, size);
}

static int native_run(void *state, const coll__call *c, const coll__sig *sig, double deadline,
                      coll__err *err)
{
    native_state *st = state;
    coll__algo_ctx ctx = {
        .tp = st->tp,
        .rank = st->rank,
        .size = st->size,
        .sig = *sig,
        .deadline = deadline,
        .scratch = &st->scratch,
        .chunk_bytes = st->chunk_bytes,
        .limits = &st->limits,
        .timeout_s = deadline - coll__now_s(),
    };
    int rc;
    coll__err_clear(&st->tp->err);
    if (c->kind == COLL_KIND_P2P) {
        rc = run_p2p(&ctx, c);
    } else {
        coll_op op = c->op == COLL_AVG ? COLL_SUM : c->op;
        coll__algo_id id = coll__algo_select(c->kind, st->algo,
                                             coll__algo_bytes(c->kind, c->count, c->dt, st->size),
                                             st->size, &st->limits);
        rc = coll__algo_run(&ctx, id, c->kind, c->sendbuf, c->recvbuf, c->count, c->dt, op,
                            c->root);
        if (rc == COLL_OK) finish_avg(c, st->rank, st->size);
    }
    if (rc) {
        coll__err_set(err, rc, "%s", st->tp->err.msg[0] ? st->tp->err.msg : coll_strerror(rc));
        err->rank = st->tp->err.rank;
    }
    return rc;
}

static void native_abort(void *state, int status, int failed_rank)
{
    native_state *st = state;
    st->tp->ops->abort(st->tp, status, failed_rank);
}

static void native_fini(void *state)
{
    native_state *st = state;
    if (!st) return;
    if (st->tp) st->tp->ops->destroy(st->tp);
    coll__scratch_free(&st->scratch);
    free(st);
}

const coll__backend_ops coll__backend_tcp = {
    .size = sizeof(coll__backend_ops),
    .name = "tcp",
    .init = tcp_init,
    .run = native_run,
    .set_algo = native_set_algo,
    .abort = native_abort,
    .fini = native_fini,
};
