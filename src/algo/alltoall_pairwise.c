/* Pairwise-exchange all-to-all: at step k (1..n-1) rank r sends its block for
 * rank r+k and receives the block from rank r-k, so every step is a perfect
 * matching and no rank is hit by two senders at once. sbuf == rbuf works: the
 * input is copied to scratch first. */
#include "algo/algo.h"

int coll__alltoall_pairwise(coll__algo_ctx *c, const void *sbuf, void *rbuf, size_t count,
                            coll_dtype dt)
{
    size_t esz = coll_dtype_size(dt);
    if (!esz) return COLL_EINVAL;
    int n = c->size, r = c->rank;
    size_t bb = count * esz;
    const char *src = sbuf;
    if (sbuf == rbuf && n > 1 && bb) {
        char *copy = coll__scratch_get(c, 1, (size_t)n * bb);
        if (!copy) return COLL_ENOMEM;
        memcpy(copy, sbuf, (size_t)n * bb);
        src = copy;
    }
    coll__copy(coll__elem(rbuf, (size_t)r * count, esz), coll__elem(src, (size_t)r * count, esz),
               bb);
    for (int k = 1; k < n; k++) {
        int to = coll__mod(r + k, n), from = coll__mod(r - k, n);
        int rc = coll__p2p_sendrecv(c, to, coll__elem(src, (size_t)to * count, esz), bb, from,
                                    coll__elem(rbuf, (size_t)from * count, esz), bb);
        if (rc < 0) return rc;
    }
    return COLL_OK;
}
