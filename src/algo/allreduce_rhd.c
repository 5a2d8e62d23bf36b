/* Rabenseifner all-reduce: recursive-halving reduce-scatter, then
 * recursive-doubling all-gather, on the largest power of two p <= n ranks.
 * The first 2*(n-p) ranks fold in pairs first and get the result back at the
 * end (fold.c). Halving steps go through coll__p2p_exchange_reduce, so they are
 * chunked and scratch stays one chunk. */
#include "algo/algo.h"

int coll__allreduce_rhd(coll__algo_ctx *c, const void *sbuf, void *rbuf, size_t count,
                        coll_dtype dt, coll_op op)
{
    size_t esz = coll_dtype_size(dt);
    if (!esz) return COLL_EINVAL;
    int n = c->size;
    if (coll__alone(c, rbuf, sbuf, count * esz)) return COLL_OK;
    int p = coll__pow2_floor(n), rem = n - p;
    int nr, rc = coll__fold_in(c, rem, sbuf, rbuf, count, dt, op, &nr);
    if (rc < 0) return rc;

    if (nr >= 0) {
        int lo = 0, hi = p;
        for (int mask = p / 2; mask > 0; mask >>= 1) {
            int peer = coll__fold_real_rank(nr ^ mask, rem), mid = (lo + hi) / 2;
            int klo = (nr & mask) ? mid : lo, khi = (nr & mask) ? hi : mid;
            int slo = (nr & mask) ? lo : mid, shi = (nr & mask) ? mid : hi;
            size_t ko, kc, so, sc;
            coll__blocks_span(count, p, klo, khi, &ko, &kc);
            coll__blocks_span(count, p, slo, shi, &so, &sc);
            rc = coll__p2p_exchange_reduce(c, peer, coll__elem(rbuf, so, esz), sc, peer,
                                           coll__elem(rbuf, ko, esz), coll__elem(rbuf, ko, esz), kc,
                                           dt, op);
            if (rc < 0) return rc;
            lo = klo;
            hi = khi;
        }
        /* Rank nr now holds block nr; double the gathered window each step. */
        for (int mask = 1; mask < p; mask <<= 1) {
            int pn = nr ^ mask, peer = coll__fold_real_rank(pn, rem);
            int mb = nr & ~(mask - 1), pb = pn & ~(mask - 1);
            size_t mo, mc, po, pc;
            coll__blocks_span(count, p, mb, mb + mask, &mo, &mc);
            coll__blocks_span(count, p, pb, pb + mask, &po, &pc);
            rc = coll__p2p_sendrecv(c, peer, coll__elem(rbuf, mo, esz), mc * esz, peer,
                                    coll__elem(rbuf, po, esz), pc * esz);
            if (rc < 0) return rc;
        }
    }
    return coll__fold_out(c, rem, rbuf, count * esz);
}
