/* Ring all-reduce: ring reduce-scatter then ring all-gather over the
 * coll__block_range blocks. Bandwidth-optimal (2(n-1)/n of the vector crosses
 * each link). Large vectors run the whole ring once per chunk slice of the
 * blocks, so scratch stays one chunk, and each chunk's reduction overlaps its
 * own transfer inside coll__p2p_exchange_reduce. 2 ranks take the same two
 * steps pipelined, without a wait between them (allreduce_pair.c). */
#include "algo/algo.h"

int coll__allreduce_ring(coll__algo_ctx *c, const void *sbuf, void *rbuf, size_t count,
                         coll_dtype dt, coll_op op)
{
    size_t esz = coll_dtype_size(dt);
    if (!esz) return COLL_EINVAL;
    int n = c->size, r = c->rank;
    if (coll__alone(c, rbuf, sbuf, count * esz)) return COLL_OK;
    if (n == 2) return coll__allreduce_pair(c, sbuf, rbuf, count, dt, op);
    int right = coll__mod(r + 1, n), left = coll__mod(r - 1, n);
    size_t off0, bmax; /* block 0 is the largest */
    coll__block_range(count, n, 0, &off0, &bmax);
    size_t ce = coll__chunk_elems(c, esz);
    size_t nch = bmax ? coll__div_up(bmax, ce) : 1;

    for (size_t k = 0; k < nch; k++) {
        /* Reduce-scatter: after n-1 steps rank r owns block r+1 reduced. Out of
         * place, step 0 sends straight from sbuf and every reduction reads the
         * local contribution from sbuf, so rbuf needs no initial copy. */
        for (int s = 0; s < n - 1; s++) {
            size_t so, sc, ro, rcnt;
            coll__block_chunk(count, n, coll__mod(r - s, n), ce, k, &so, &sc);
            coll__block_chunk(count, n, coll__mod(r - s - 1, n), ce, k, &ro, &rcnt);
            const void *src = s == 0 ? sbuf : rbuf;
            int rc = coll__p2p_exchange_reduce(c, right, coll__elem(src, so, esz), sc, left,
                                               coll__elem(sbuf, ro, esz), coll__elem(rbuf, ro, esz),
                                               rcnt, dt, op);
            if (rc < 0) return rc;
        }
        /* All-gather the reduced blocks around the same ring. */
        for (int s = 0; s < n - 1; s++) {
            size_t so, sc, ro, rcnt;
            coll__block_chunk(count, n, coll__mod(r - s + 1, n), ce, k, &so, &sc);
            coll__block_chunk(count, n, coll__mod(r - s, n), ce, k, &ro, &rcnt);
            int rc = coll__p2p_sendrecv(c, right, coll__elem(rbuf, so, esz), sc * esz, left,
                                        coll__elem(rbuf, ro, esz), rcnt * esz);
            if (rc < 0) return rc;
        }
    }
    return COLL_OK;
}
