/* Ring all-gather: n-1 steps, each forwarding to the right the block received
 * from the left in the step before. Data lands directly in rbuf. */
#include "algo/algo.h"

int coll__allgather_ring(coll__algo_ctx *c, const void *sbuf, void *rbuf, size_t sendcount,
                         coll_dtype dt)
{
    size_t esz = coll_dtype_size(dt);
    if (!esz) return COLL_EINVAL;
    int n = c->size, r = c->rank;
    size_t bb = sendcount * esz;
    coll__copy(coll__elem(rbuf, (size_t)r * sendcount, esz), sbuf, bb);
    int right = coll__mod(r + 1, n), left = coll__mod(r - 1, n);
    for (int s = 0; s < n - 1; s++) {
        size_t sb = (size_t)coll__mod(r - s, n), rb = (size_t)coll__mod(r - s - 1, n);
        int rc = coll__p2p_sendrecv(c, right, coll__elem(rbuf, sb * sendcount, esz), bb, left,
                                    coll__elem(rbuf, rb * sendcount, esz), bb);
        if (rc < 0) return rc;
    }
    return COLL_OK;
}
