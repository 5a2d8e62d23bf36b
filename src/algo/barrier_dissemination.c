/* Dissemination barrier: ceil(log2 n) rounds of zero-length messages; in
 * round k rank r signals r+2^k and waits for r-2^k. Works for any n. */
#include "algo/algo.h"

int coll__barrier_dissemination(coll__algo_ctx *c)
{
    int n = c->size, r = c->rank;
    for (int d = 1; d < n; d <<= 1) {
        int rc = coll__p2p_sendrecv(c, coll__mod(r + d, n), NULL, 0, coll__mod(r - d, n), NULL, 0);
        if (rc < 0) return rc;
    }
    return COLL_OK;
}
