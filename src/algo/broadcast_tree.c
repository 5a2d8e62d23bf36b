/* Binomial-tree broadcast: ceil(log2 n) rounds; each rank receives the whole
 * vector from its parent once, then sends it to its children (all posted at
 * once). Latency-optimal for small messages. */
#include "algo/algo.h"

int coll__broadcast_tree(coll__algo_ctx *c, const void *sbuf, void *rbuf, size_t count,
                         coll_dtype dt, int root)
{
    size_t esz = coll_dtype_size(dt);
    int n = c->size, r = c->rank;
    if (!esz || root < 0 || root >= n) return COLL_EINVAL;
    size_t bytes = count * esz;
    int vr = coll__mod(r - root, n), mask = 1, rc;
    if (vr == 0) coll__copy(rbuf, sbuf, bytes);
    while (mask < n) {
        if (vr & mask) {
            rc = coll__p2p_recv(c, coll__mod(vr - mask + root, n), rbuf, bytes);
            if (rc < 0) return rc;
            break;
        }
        mask <<= 1;
    }
    coll__xfer xs[32];
    int nx = 0;
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < n)
            coll__xfer_init(c, &xs[nx++], COLL_XFER_SEND, coll__mod(vr + mask + root, n), rbuf,
                            bytes);
    rc = coll__p2p_post(c, xs, nx);
    return rc < 0 ? rc : coll__p2p_wait(c, xs, nx);
}
