/* Recursive-doubling all-reduce: log2(p) rounds, each exchanging the whole
 * vector with the partner at distance 2^k; latency-optimal for small
 * messages. Non-powers of two fold the first 2*(n-p) ranks in pairs first
 * (fold.c). Vectors longer than one chunk run the rounds once per chunk, so
 * scratch stays one chunk. Every rank combines the same operands in the same
 * tree, so all ranks get bitwise identical results. */
#include "algo/algo.h"
#include "core/reduce.h"

static int rd_chunk(coll__algo_ctx *c, const char *s, char *d, size_t len, void *tmp, int p,
                    int rem, coll_dtype dt, coll_op op, coll__reduce_fn fn)
{
    size_t esz = coll_dtype_size(dt);
    int nr, rc = coll__fold_in(c, rem, s, d, len, dt, op, &nr);
    if (rc < 0) return rc;
    for (int mask = 1; nr >= 0 && mask < p; mask <<= 1) {
        int peer = coll__fold_real_rank(nr ^ mask, rem);
        /* d is being sent, so the partner's vector lands in tmp first. */
        rc = coll__p2p_sendrecv(c, peer, d, len * esz, peer, tmp, len * esz);
        if (rc < 0) return rc;
        if (len) fn(d, d, tmp, len);
    }
    return coll__fold_out(c, rem, d, len * esz);
}

int coll__allreduce_rd(coll__algo_ctx *c, const void *sbuf, void *rbuf, size_t count, coll_dtype dt,
                       coll_op op)
{
    size_t esz = coll_dtype_size(dt);
    coll__reduce_fn fn = coll__reduce_kernel(dt, op);
    if (!esz || !fn) return COLL_EINVAL;
    int n = c->size;
    if (coll__alone(c, rbuf, sbuf, count * esz)) return COLL_OK;
    int p = coll__pow2_floor(n);
    size_t ce = coll__chunk_elems(c, esz);
    size_t nch = count ? coll__div_up(count, ce) : 1;
    /* Slot 1: slot 0 is used by coll__p2p_exchange_reduce in the fold step. */
    void *tmp = coll__scratch_get(c, 1, (count < ce ? count : ce) * esz);
    if (!tmp) return COLL_ENOMEM;
    for (size_t k = 0; k < nch; k++) {
        size_t o, len;
        coll__chunk_range(count, ce, k, &o, &len);
        int rc = rd_chunk(c, coll__elem(sbuf, o, esz), coll__elem(rbuf, o, esz), len, tmp, p, n - p,
                          dt, op, fn);
        if (rc < 0) return rc;
    }
    return COLL_OK;
}
