/* The non-power-of-two steps shared by recursive doubling (allreduce_rd.c) and
 * Rabenseifner (allreduce_rhd.c): fold the first 2*rem ranks in pairs before
 * the power-of-two rounds, hand the result back after them. */
#include "algo/algo.h"

int coll__pow2_floor(int n)
{
    int p = 1;
    while (p * 2 <= n) p *= 2;
    return p;
}

int coll__fold_real_rank(int nr, int rem) { return nr < rem ? 2 * nr + 1 : nr + rem; }

int coll__fold_in(coll__algo_ctx *c, int rem, const void *sbuf, void *rbuf, size_t count,
                  coll_dtype dt, coll_op op, int *nr)
{
    int r = c->rank;
    if (r >= 2 * rem) {
        coll__copy(rbuf, sbuf, count * coll_dtype_size(dt));
        *nr = r - rem;
        return COLL_OK;
    }
    *nr = r % 2 ? r / 2 : -1;
    /* Chunked through coll__p2p_exchange_reduce, so scratch stays one chunk. */
    if (r % 2 == 0)
        return coll__p2p_exchange_reduce(c, r + 1, sbuf, count, -1, NULL, NULL, 0, dt, op);
    return coll__p2p_exchange_reduce(c, -1, NULL, 0, r - 1, sbuf, rbuf, count, dt, op);
}

int coll__fold_out(coll__algo_ctx *c, int rem, void *rbuf, size_t bytes)
{
    int r = c->rank;
    if (r >= 2 * rem) return COLL_OK;
    return r % 2 ? coll__p2p_send(c, r - 1, rbuf, bytes) : coll__p2p_recv(c, r + 1, rbuf, bytes);
}
