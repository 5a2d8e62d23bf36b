/* The ring all-reduce of 2 ranks, pipelined: rank r keeps block r of the
 * two-block split and gives the other. It posts every chunk of the block it
 * gives at once, reduces each chunk of the peer's as its bytes arrive, and
 * sends each reduced chunk back as soon as it is whole, so both directions
 * stream without a step that waits for both sides: the plain ring waits for
 * every chunk of each of its two steps. Per peer the transport keeps order,
 * so each side sends its raw chunks, then its reduced ones, and receives the
 * same way. Each half is reduced by one rank: every rank gets the same bits. */
#include "algo/algo.h"
#include "core/reduce.h"

#define WINDOW 4 /* chunks of the peer's raw data received ahead of the reduction */

typedef struct pair_plan {
    size_t esz, ce, slot;  /* element and chunk size, bytes of a window slot */
    size_t ko, kc, go, gc; /* the kept and the given block: offset, elements */
    size_t nk, ng;         /* messages of each (at least one: it carries the signature) */
} pair_plan;

/* Chunk k of the block at off of cnt elements, as an element range. */
static void chunk(const pair_plan *p, size_t off, size_t cnt, size_t k, size_t *o, size_t *n)
{
    size_t co;
    coll__chunk_range(cnt, p->ce, k, &co, n);
    *o = off + co;
}

/* Posts the receive of the peer's raw chunk k of our kept block (window slot
 * k % WINDOW) and, after the last one, the receives of its reduced chunks. */
static int post_recv(coll__algo_ctx *c, const pair_plan *p, coll__xfer *raw_recv,
                     coll__xfer *red_recv, char *tmp, size_t k, void *rbuf)
{
    size_t o, n;
    int peer = 1 - c->rank;
    chunk(p, p->ko, p->kc, k, &o, &n);
    coll__xfer *x = &raw_recv[k % WINDOW];
    coll__xfer_init(c, x, COLL_XFER_RECV, peer, tmp + (k % WINDOW) * p->slot, n * p->esz);
    int rc = coll__p2p_post(c, x, 1);
    for (size_t g = 0; rc >= 0 && k + 1 == p->nk && g < p->ng; g++) {
        chunk(p, p->go, p->gc, g, &o, &n);
        coll__xfer_init(c, &red_recv[g], COLL_XFER_RECV, peer, coll__elem(rbuf, o, p->esz),
                        n * p->esz);
        rc = coll__p2p_post(c, &red_recv[g], 1);
    }
    return rc;
}

int coll__allreduce_pair(coll__algo_ctx *c, const void *sbuf, void *rbuf, size_t count,
                         coll_dtype dt, coll_op op)
{
    pair_plan p = {.esz = coll_dtype_size(dt)};
    coll__reduce_fn fn = coll__reduce_kernel(dt, op);
    if (!p.esz || !fn || c->size != 2) return COLL_EINVAL;
    int peer = 1 - c->rank;
    p.ce = coll__chunk_elems(c, p.esz);
    coll__block_range(count, 2, c->rank, &p.ko, &p.kc);
    coll__block_range(count, 2, peer, &p.go, &p.gc);
    p.nk = p.kc ? coll__div_up(p.kc, p.ce) : 1;
    p.ng = p.gc ? coll__div_up(p.gc, p.ce) : 1;
    p.slot = (p.kc < p.ce ? p.kc : p.ce) * p.esz;
    char *tmp = coll__scratch_get(c, 1, WINDOW * p.slot);
    /* One array, so that a wait scans them all: raw sends [ng], raw receives
     * [WINDOW], reduced sends [nk], reduced receives [ng]. */
    size_t nx = 2 * p.ng + WINDOW + p.nk;
    coll__xfer *x = coll__scratch_get(c, 2, nx * sizeof *x);
    if (!tmp || !x) return COLL_ENOMEM;
    coll__xfer *raw_send = x, *raw_recv = x + p.ng, *red_send = raw_recv + WINDOW,
               *red_recv = red_send + p.nk;
    for (size_t i = 0; i < nx; i++) { /* not posted yet: neither pending nor failed */
        coll__xfer_init(c, &x[i], COLL_XFER_SEND, peer, NULL, 0);
        x[i].status = COLL_OK;
    }

    int rc = COLL_OK;
    size_t posted = 0; /* raw receives posted */
    for (; rc >= 0 && posted < p.nk && posted < WINDOW; posted++)
        rc = post_recv(c, &p, raw_recv, red_recv, tmp, posted, rbuf);
    for (size_t k = 0; rc >= 0 && k < p.ng; k++) {
        size_t o, n;
        chunk(&p, p.go, p.gc, k, &o, &n);
        coll__xfer_init(c, &raw_send[k], COLL_XFER_SEND, peer, coll__elem(sbuf, o, p.esz),
                        n * p.esz);
        rc = coll__p2p_post(c, &raw_send[k], 1);
    }
    if (rc < 0) return rc;

    size_t k = 0, reduced = 0; /* the raw chunk being reduced, its bytes done */
    for (;;) {
        while (k < p.nk) {
            coll__xfer *r = &raw_recv[k % WINDOW];
            size_t o, n;
            chunk(&p, p.ko, p.kc, k, &o, &n);
            size_t avail = r->status == COLL_OK ? r->len : r->done - r->done % p.esz;
            if (avail > reduced) { /* out = in op the peer's, as the bytes arrive */
                fn(coll__elem(rbuf, o, p.esz) + reduced, coll__elem(sbuf, o, p.esz) + reduced,
                   r->buf + reduced, (avail - reduced) / p.esz);
                reduced = avail;
            }
            if (r->status != COLL_OK) break;
            coll__xfer_init(c, &red_send[k], COLL_XFER_SEND, peer, coll__elem(rbuf, o, p.esz),
                            n * p.esz);
            rc = coll__p2p_post(c, &red_send[k], 1);
            k++;
            reduced = 0;
            if (rc >= 0 && posted < p.nk) /* the window slides into chunk k - 1's slot */
                rc = post_recv(c, &p, raw_recv, red_recv, tmp, posted++, rbuf);
            if (rc < 0) return rc;
        }
        int pending = 0;
        for (size_t i = 0; i < nx; i++) pending += x[i].status == COLL_EAGAIN;
        if (k == p.nk && pending == 0) return COLL_OK;
        rc = coll__p2p_progress(c, x, (int)nx);
        if (rc < 0) return rc;
    }
}
