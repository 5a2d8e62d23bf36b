/* Ring reduce-scatter: n-1 steps; at step s rank r sends its partial sum of
 * block r-s-1 to the right and folds block r-s-2 from the left into it, so
 * after the last step it holds block r fully reduced. Partial sums live in two
 * alternating scratch chunks (never in sbuf, which in-place callers keep);
 * large blocks run the ring once per chunk so scratch stays bounded. */
#include "algo/algo.h"

int coll__reducescatter_ring(coll__algo_ctx *c, const void *sbuf, void *rbuf, size_t recvcount,
                             coll_dtype dt, coll_op op)
{
    size_t esz = coll_dtype_size(dt);
    if (!esz) return COLL_EINVAL;
    int n = c->size, r = c->rank;
    if (coll__alone(c, rbuf, sbuf, recvcount * esz)) return COLL_OK;
    int right = coll__mod(r + 1, n), left = coll__mod(r - 1, n);
    size_t ce = coll__chunk_elems(c, esz);
    size_t cmax = recvcount < ce ? recvcount : ce;
    size_t nch = recvcount ? coll__div_up(recvcount, ce) : 1;
    char *acc = coll__scratch_get(c, 1, 2 * cmax * esz);
    if (!acc) return COLL_ENOMEM;
    char *accs[2] = {acc, acc + cmax * esz};
    for (size_t k = 0; k < nch; k++) {
        size_t o, len;
        coll__chunk_range(recvcount, ce, k, &o, &len);
        for (int s = 0; s < n - 1; s++) {
            size_t sb = (size_t)coll__mod(r - s - 1, n), rb = (size_t)coll__mod(r - s - 2, n);
            const void *src = s == 0 ? coll__elem(sbuf, sb * recvcount + o, esz)
                                     : accs[(s - 1) & 1];
            void *dst = s == n - 2 ? coll__elem(rbuf, o, esz) : accs[s & 1];
            int rc = coll__p2p_exchange_reduce(c, right, src, len, left,
                                               coll__elem(sbuf, rb * recvcount + o, esz), dst, len,
                                               dt, op);
            if (rc < 0) return rc;
        }
    }
    return COLL_OK;
}
