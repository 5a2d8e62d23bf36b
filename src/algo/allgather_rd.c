/* Recursive-doubling all-gather: log2(n) steps, each swapping the contiguous
 * window of blocks gathered so far with the partner at distance 2^k. Needs a
 * power-of-two world; on other sizes it runs the ring algorithm instead
 * (coll__algo_select never picks rd there). */
#include "algo/algo.h"

int coll__allgather_rd(coll__algo_ctx *c, const void *sbuf, void *rbuf, size_t sendcount,
                       coll_dtype dt)
{
    int n = c->size, r = c->rank;
    if (n & (n - 1)) return coll__allgather_ring(c, sbuf, rbuf, sendcount, dt);
    size_t esz = coll_dtype_size(dt);
    if (!esz) return COLL_EINVAL;
    coll__copy(coll__elem(rbuf, (size_t)r * sendcount, esz), sbuf, sendcount * esz);
    for (int mask = 1; mask < n; mask <<= 1) {
        int peer = r ^ mask;
        size_t mine = (size_t)(r & ~(mask - 1)) * sendcount;
        size_t theirs = (size_t)(peer & ~(mask - 1)) * sendcount;
        size_t bytes = (size_t)mask * sendcount * esz;
        int rc = coll__p2p_sendrecv(c, peer, coll__elem(rbuf, mine, esz), bytes, peer,
                                    coll__elem(rbuf, theirs, esz), bytes);
        if (rc < 0) return rc;
    }
    return COLL_OK;
}
