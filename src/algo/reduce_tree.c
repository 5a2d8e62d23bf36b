/* Binomial-tree reduce: each rank folds the partial results of its children
 * into an accumulator (rbuf at the root, scratch elsewhere), then sends it to
 * its parent. Vectors longer than one chunk run the tree once per chunk, so
 * scratch stays one chunk. All ops are commutative, so child order is free. */
#include "algo/algo.h"

int coll__reduce_tree(coll__algo_ctx *c, const void *sbuf, void *rbuf, size_t count, coll_dtype dt,
                      coll_op op, int root)
{
    size_t esz = coll_dtype_size(dt);
    int n = c->size, r = c->rank;
    if (!esz || root < 0 || root >= n) return COLL_EINVAL;
    int vr = coll__mod(r - root, n);
    size_t ce = coll__chunk_elems(c, esz);
    size_t nch = count ? coll__div_up(count, ce) : 1;
    char *acc = NULL;
    if (vr != 0 && !(acc = coll__scratch_get(c, 1, (count < ce ? count : ce) * esz)))
        return COLL_ENOMEM;
    for (size_t k = 0; k < nch; k++) {
        size_t o, len;
        coll__chunk_range(count, ce, k, &o, &len);
        const char *cur = coll__elem(sbuf, o, esz);
        char *dst = vr == 0 ? coll__elem(rbuf, o, esz) : acc;
        for (int mask = 1; mask < n; mask <<= 1) {
            int rc;
            if (vr & mask) {
                rc = coll__p2p_exchange_reduce(c, coll__mod(vr - mask + root, n), cur, len, -1,
                                               NULL, NULL, 0, dt, op);
                if (rc < 0) return rc;
                break;
            }
            if ((vr | mask) < n) {
                rc = coll__p2p_exchange_reduce(c, -1, NULL, 0, coll__mod((vr | mask) + root, n),
                                               cur, dst, len, dt, op);
                if (rc < 0) return rc;
                cur = dst;
            }
        }
        if (vr == 0) coll__copy(dst, cur, len * esz); /* a root without children */
    }
    return COLL_OK;
}
