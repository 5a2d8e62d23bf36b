/* Direct (one-shot) all-reduce: every rank sends its whole vector to every
 * other rank and reduces all n of them itself. One round of latency where
 * recursive doubling takes log2(n), at n-1 times the bytes: a small-message
 * algorithm (NCCL's and xhc's "one-shot"). Every rank combines the inputs in
 * rank order, so all ranks get bitwise identical results (float16/bfloat16
 * sums in float32, rounded once: coll__reduce_many). Vectors longer than
 * one chunk go a chunk at a time, so scratch stays n chunks. */
#include "algo/algo.h"
#include "core/reduce.h"

#include <string.h>

int coll__allreduce_direct(coll__algo_ctx *c, const void *sbuf, void *rbuf, size_t count,
                           coll_dtype dt, coll_op op)
{
    size_t esz = coll_dtype_size(dt);
    coll__reduce_fn fn = coll__reduce_kernel(dt, op);
    if (!esz || !fn) return COLL_EINVAL;
    int n = c->size, r = c->rank;
    if (coll__alone(c, rbuf, sbuf, count * esz)) return COLL_OK;
    size_t ce = coll__chunk_elems(c, esz), slot = (count < ce ? count : ce) * esz;
    /* n slots: the peers' chunks by rank, and ours in place (rbuf is written
     * while the inputs are still being read). */
    char *in = coll__scratch_get(c, 1, (size_t)n * slot);
    coll__xfer *x = coll__scratch_get(c, 2, 2 * (size_t)(n - 1) * sizeof *x);
    const void **from = coll__scratch_get(c, 3, (size_t)n * sizeof *from);
    if (!in || !x || !from) return COLL_ENOMEM;
    size_t nch = count ? coll__div_up(count, ce) : 1;
    for (size_t k = 0; k < nch; k++) {
        size_t o, len;
        coll__chunk_range(count, ce, k, &o, &len);
        size_t bytes = len * esz;
        const char *mine = coll__elem(sbuf, o, esz);
        if (sbuf == rbuf && bytes) {
            memcpy(in + (size_t)r * slot, mine, bytes);
            mine = in + (size_t)r * slot;
        }
        /* Receives first (the transport may land them in place); ranks start
         * their sends at different peers so that no rank is hit by all at once. */
        int nx = 0;
        for (int j = 1; j < n; j++) {
            int from = coll__mod(r - j, n);
            coll__xfer_init(c, &x[nx++], COLL_XFER_RECV, from, in + (size_t)from * slot, bytes);
        }
        for (int j = 1; j < n; j++)
            coll__xfer_init(c, &x[nx++], COLL_XFER_SEND, coll__mod(r + j, n), mine, bytes);
        int rc = coll__p2p_post(c, x, nx);
        if (rc >= 0) rc = coll__p2p_wait(c, x, nx);
        if (rc < 0) return rc;
        if (!len) continue;
        /* the caller divides an average: this is its sum (rounded once for
         * float16/bfloat16) */
        for (int p = 0; p < n; p++) from[p] = r == p ? mine : in + (size_t)p * slot;
        coll__reduce_many(coll__elem(rbuf, o, esz), from, n, len, dt,
                          op == COLL_AVG ? COLL_SUM : op, fn);
    }
    return COLL_OK;
}
