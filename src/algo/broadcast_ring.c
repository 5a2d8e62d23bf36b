/* Pipelined chain broadcast for large messages: root -> root+1 -> ... in
 * chunks of c->chunk_bytes; every rank forwards chunk k while it receives
 * chunk k+1, so the time approaches bytes/bandwidth + (n-2) chunk times. */
#include "algo/algo.h"

int coll__broadcast_ring(coll__algo_ctx *c, const void *sbuf, void *rbuf, size_t count,
                         coll_dtype dt, int root)
{
    size_t esz = coll_dtype_size(dt);
    int n = c->size, r = c->rank;
    if (!esz || root < 0 || root >= n) return COLL_EINVAL;
    int vr = coll__mod(r - root, n), rc;
    int prev = vr > 0 ? coll__mod(r - 1, n) : -1, next = vr + 1 < n ? coll__mod(r + 1, n) : -1;
    if (vr == 0) coll__copy(rbuf, sbuf, count * esz);
    size_t ce = coll__chunk_elems(c, esz);
    size_t nch = count ? coll__div_up(count, ce) : 1;
    /* Two slots each way: chunk k uses slot k&1, waited on before reuse. */
    coll__xfer rx[2], sx[2];
    int sx_busy[2] = {0, 0};
    size_t o, len;
    if (prev >= 0) {
        coll__chunk_range(count, ce, 0, &o, &len);
        coll__xfer_init(c, &rx[0], COLL_XFER_RECV, prev, coll__elem(rbuf, o, esz), len * esz);
        if ((rc = coll__p2p_post(c, &rx[0], 1)) < 0) return rc;
    }
    for (size_t k = 0; k < nch; k++) {
        int i = (int)(k & 1);
        if (prev >= 0) {
            if ((rc = coll__p2p_wait(c, &rx[i], 1)) < 0) return rc;
            if (k + 1 < nch) {
                coll__chunk_range(count, ce, k + 1, &o, &len);
                coll__xfer_init(c, &rx[i ^ 1], COLL_XFER_RECV, prev, coll__elem(rbuf, o, esz),
                                len * esz);
                if ((rc = coll__p2p_post(c, &rx[i ^ 1], 1)) < 0) return rc;
            }
        }
        if (next >= 0) {
            if (sx_busy[i] && (rc = coll__p2p_wait(c, &sx[i], 1)) < 0) return rc;
            coll__chunk_range(count, ce, k, &o, &len);
            coll__xfer_init(c, &sx[i], COLL_XFER_SEND, next, coll__elem(rbuf, o, esz), len * esz);
            if ((rc = coll__p2p_post(c, &sx[i], 1)) < 0) return rc;
            sx_busy[i] = 1;
        }
    }
    for (int i = 0; i < 2; i++)
        if (sx_busy[i] && (rc = coll__p2p_wait(c, &sx[i], 1)) < 0) return rc;
    return COLL_OK;
}
