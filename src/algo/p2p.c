/* Scratch buffers and point-to-point helpers shared by the algorithms.
 * Everything here blocks in tp->ops->progress (never spins). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/algo.h"
#include "core/alloc.h"
#include "core/clock.h"
#include "core/reduce.h"

void *coll__scratch_get(coll__algo_ctx *c, int slot, size_t bytes)
{
    coll__scratch *s = c->scratch;
    if (!s || slot < 0 || slot >= COLL_SCRATCH_SLOTS) return NULL;
    if (bytes == 0) bytes = 1;
    if (s->ptr[slot] && s->cap[slot] >= bytes) return s->ptr[slot];
    /* Grow geometrically so a sweep of rising sizes reallocates rarely. */
    size_t cap = s->cap[slot] * 2;
    if (cap < bytes) cap = bytes;
    void *p = coll__alloc_aligned_to(64, cap);
    if (!p) return NULL;
    free(s->ptr[slot]);
    s->ptr[slot] = p;
    s->cap[slot] = cap;
    return p;
}

void coll__scratch_free(coll__scratch *s)
{
    if (!s) return;
    for (int i = 0; i < COLL_SCRATCH_SLOTS; i++) {
        free(s->ptr[i]);
        s->ptr[i] = NULL;
        s->cap[i] = 0;
    }
}

size_t coll__chunk_elems(const coll__algo_ctx *c, size_t esz)
{
    size_t chunk = c->chunk_bytes ? c->chunk_bytes : COLL_ALGO_DEFAULT_CHUNK;
    size_t n = esz ? chunk / esz : chunk;
    return n ? n : 1;
}

void coll__xfer_init(coll__algo_ctx *c, coll__xfer *x, coll__xfer_kind kind, int peer,
                     const void *buf, size_t len)
{
    memset(x, 0, sizeof(*x));
    x->kind = kind;
    x->peer = peer;
    x->sig = c->sig;
    x->buf = (char *)buf; /* sends never write through it */
    x->len = len;
    x->status = COLL_EAGAIN;
}

/* A failed collective leaves peers mid-protocol and this call's transfers still
 * queued in the transport, pointing into the algorithm's stack frame: abort the
 * transport now, while they are alive, so it lets go of them and peers learn of
 * the failure instead of waiting for their timeout. */
static int fail(coll__algo_ctx *c, int rc)
{
    c->tp->ops->abort(c->tp, rc, c->tp->err.rank);
    return rc;
}

int coll__p2p_post(coll__algo_ctx *c, coll__xfer *xs, int n)
{
    for (int i = 0; i < n; i++) {
        int rc = c->tp->ops->post(c->tp, &xs[i]);
        if (rc < 0) {
            if (!c->tp->err.msg[0])
                snprintf(c->tp->err.msg, sizeof(c->tp->err.msg), "cannot post %s to rank %d: %s",
                         xs[i].kind == COLL_XFER_SEND ? "send" : "receive",
                         coll__err_world(&c->tp->err, xs[i].peer), coll_strerror(rc));
            return fail(c, rc);
        }
    }
    return COLL_OK;
}

/* First failed transfer's status, else COLL_OK; *pending counts unfinished ones. */
static int scan(const coll__xfer *xs, int n, int *pending)
{
    *pending = 0;
    for (int i = 0; i < n; i++) {
        if (xs[i].status == COLL_EAGAIN) (*pending)++;
        else if (xs[i].status != COLL_OK) return xs[i].status;
    }
    return COLL_OK;
}

static int timed_out(coll__algo_ctx *c, const coll__xfer *xs, int n)
{
    int peer = -1;
    for (int i = 0; i < n && peer < 0; i++)
        if (xs[i].status == COLL_EAGAIN) peer = xs[i].peer;
    char what[128];
    coll__sig_format(&c->sig, what, sizeof(what));
    if (peer >= 0) peer = coll__err_world(&c->tp->err, peer); /* the group's map: a world rank */
    if (!c->tp->err.msg[0] && peer < 0) {                     /* a receive from any source */
        snprintf(c->tp->err.msg, sizeof(c->tp->err.msg),
                 "timed out after %.0f s waiting for a message from any rank in %s", c->timeout_s,
                 what);
        c->tp->err.rank = -1;
    } else if (!c->tp->err.msg[0]) {
        if (c->timeout_s > 0)
            snprintf(c->tp->err.msg, sizeof(c->tp->err.msg),
                     "timed out after %.0f s waiting for rank %d in %s", c->timeout_s, peer, what);
        else
            snprintf(c->tp->err.msg, sizeof(c->tp->err.msg), "timed out waiting for rank %d in %s",
                     peer, what);
        c->tp->err.rank = peer;
    }
    return COLL_ETIMEDOUT;
}

/* One round of waiting: COLL_OK to go on, or the error that ends the wait.
 * A deadline <= 0 means no deadline. */
static int step(coll__algo_ctx *c, coll__xfer *xs, int n)
{
    int ms = 1000;
    if (c->deadline > 0) {
        if (coll__now_s() >= c->deadline) return timed_out(c, xs, n);
        ms = coll__ms_until(c->deadline, 1000);
    }
    int rc = c->tp->ops->progress(c->tp, ms);
    if (rc < 0) {
        int pending, st = scan(xs, n, &pending);
        return st < 0 ? st : rc;
    }
    return COLL_OK;
}

int coll__p2p_wait(coll__algo_ctx *c, coll__xfer *xs, int n)
{
    for (;;) {
        int pending, st = scan(xs, n, &pending);
        if (st < 0) return fail(c, st);
        if (!pending) return COLL_OK;
        st = step(c, xs, n);
        if (st < 0) return fail(c, st);
    }
}

int coll__p2p_progress(coll__algo_ctx *c, coll__xfer *xs, int n)
{
    int pending, st = scan(xs, n, &pending);
    if (st < 0) return fail(c, st);
    st = step(c, xs, n);
    return st < 0 ? fail(c, st) : COLL_OK;
}

static int post_wait(coll__algo_ctx *c, coll__xfer *xs, int n)
{
    int rc = coll__p2p_post(c, xs, n);
    return rc < 0 ? rc : coll__p2p_wait(c, xs, n);
}

int coll__p2p_send(coll__algo_ctx *c, int peer, const void *buf, size_t len)
{
    coll__xfer x;
    coll__xfer_init(c, &x, COLL_XFER_SEND, peer, buf, len);
    return post_wait(c, &x, 1);
}

int coll__p2p_recv(coll__algo_ctx *c, int peer, void *buf, size_t len)
{
    coll__xfer x;
    coll__xfer_init(c, &x, COLL_XFER_RECV, peer, buf, len);
    return post_wait(c, &x, 1);
}

int coll__p2p_recv_any(coll__algo_ctx *c, coll__xfer *x, int *from)
{
    const coll__transport_ops *ops = c->tp->ops;
    if (!ops->probe_any) {
        snprintf(c->tp->err.msg, sizeof(c->tp->err.msg),
                 "the %s transport has no receive from any source", ops->name);
        return COLL_ENOTSUP;
    }
    for (;;) {
        int peer, rc = ops->probe_any(c->tp, &peer);
        if (rc < 0) return fail(c, rc);
        if (peer >= 0) {
            x->peer = *from = peer;
            return post_wait(c, x, 1);
        }
        rc = step(c, NULL, 0); /* progress reads the peers' next headers */
        if (rc < 0) return fail(c, rc);
    }
}

int coll__p2p_sendrecv(coll__algo_ctx *c, int to, const void *sbuf, size_t slen, int from,
                       void *rbuf, size_t rlen)
{
    coll__xfer x[2];
    int n = 0;
    /* Post the receive first: a transport may then land the data in place. */
    if (from >= 0) coll__xfer_init(c, &x[n++], COLL_XFER_RECV, from, rbuf, rlen);
    if (to >= 0) coll__xfer_init(c, &x[n++], COLL_XFER_SEND, to, sbuf, slen);
    return post_wait(c, x, n);
}

/* Send (to >= 0) while receiving (from >= 0) rlen bytes into tmp; reduce
 * out = in op tmp over each stretch of whole elements as soon as it arrives. */
static int exchange_reduce_bytes(coll__algo_ctx *c, int to, const void *sbuf, size_t slen, int from,
                                 void *tmp, const void *in, void *out, size_t rlen, coll_dtype dt,
                                 coll_op op)
{
    size_t esz = coll_dtype_size(dt);
    coll__reduce_fn fn = coll__reduce_kernel(dt, op);
    if (!esz || !fn || rlen % esz) return COLL_EINVAL;
    coll__xfer x[2];
    int n = 0, ri = -1;
    if (from >= 0) {
        ri = n;
        coll__xfer_init(c, &x[n++], COLL_XFER_RECV, from, tmp, rlen);
    }
    if (to >= 0) coll__xfer_init(c, &x[n++], COLL_XFER_SEND, to, sbuf, slen);
    int rc = coll__p2p_post(c, x, n);
    if (rc < 0) return rc;
    size_t reduced = 0; /* bytes of out already final */
    for (;;) {
        int pending, st = scan(x, n, &pending);
        if (st < 0) return fail(c, st);
        if (ri >= 0) {
            size_t avail = x[ri].status == COLL_OK ? rlen : x[ri].done - x[ri].done % esz;
            if (avail > reduced) {
                fn((char *)out + reduced, (const char *)in + reduced, (char *)tmp + reduced,
                   (avail - reduced) / esz);
                reduced = avail;
            }
        }
        if (!pending) return COLL_OK;
        st = step(c, x, n);
        if (st < 0) return fail(c, st);
    }
}

int coll__p2p_sendrecv_reduce(coll__algo_ctx *c, int to, const void *sbuf, size_t slen, int from,
                              void *tmp, const void *in, void *out, size_t rlen, coll_dtype dt,
                              coll_op op)
{
    return exchange_reduce_bytes(c, to, sbuf, slen, from, tmp, in, out, rlen, dt, op);
}

int coll__p2p_exchange_reduce(coll__algo_ctx *c, int to, const void *sbuf, size_t scnt, int from,
                              const void *in, void *out, size_t rcnt, coll_dtype dt, coll_op op)
{
    size_t esz = coll_dtype_size(dt);
    if (!esz) return COLL_EINVAL;
    size_t ce = coll__chunk_elems(c, esz);
    size_t ns = to >= 0 ? coll__div_up(scnt, ce) : 0, nr = from >= 0 ? coll__div_up(rcnt, ce) : 0;
    if (to >= 0 && ns == 0) ns = 1; /* one zero-length message */
    if (from >= 0 && nr == 0) nr = 1;
    void *tmp = NULL;
    if (from >= 0) {
        size_t tb = (rcnt < ce ? rcnt : ce) * esz;
        tmp = coll__scratch_get(c, 0, tb);
        if (!tmp) return COLL_ENOMEM;
    }
    size_t steps = ns > nr ? ns : nr;
    for (size_t k = 0; k < steps; k++) {
        int t = k < ns ? to : -1, f = k < nr ? from : -1;
        size_t so = k * ce, ro = k * ce;
        size_t sl = t >= 0 && scnt > so ? (scnt - so < ce ? scnt - so : ce) : 0;
        size_t rl = f >= 0 && rcnt > ro ? (rcnt - ro < ce ? rcnt - ro : ce) : 0;
        /* Offsets only on buffers that are used: they may be NULL otherwise. */
        const char *sp = t >= 0 ? (const char *)sbuf + so * esz : NULL;
        const char *ip = f >= 0 ? (const char *)in + ro * esz : NULL;
        char *op_ = f >= 0 ? (char *)out + ro * esz : NULL;
        int rc = exchange_reduce_bytes(c, t, sp, sl * esz, f, tmp, ip, op_, rl * esz, dt, op);
        if (rc < 0) return rc;
    }
    return COLL_OK;
}
