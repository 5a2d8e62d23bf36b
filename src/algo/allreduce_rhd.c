/* Rabenseifner all-reduce: recursive-halving reduce-scatter, then
 * recursive-doubling all-gather, on the largest power of two p <= n ranks.
 * The first 2*(n-p) ranks pair up first: even ones fold their vector into the
 * odd neighbour and sit out, then get the result back at the end (MPICH's
 * scheme). Halving steps go through coll_p2p_exchange_reduce, so they are
 * chunked and scratch stays one chunk. */
#include "algo/algo.h"

/* Real rank of rank nr among the p participants (rem folded pairs first). */
static int real_rank(int nr, int rem) { return nr < rem ? 2 * nr + 1 : nr + rem; }

int coll_allreduce_rhd(coll_algo_ctx *c, const void *sbuf, void *rbuf, size_t count,
                       coll_dtype dt, coll_op op)
{
    size_t esz = coll_dtype_size(dt);
    if (!esz) return COLL_EINVAL;
    int n = c->size, r = c->rank, rc;
    if (n == 1) {
        coll_copy(rbuf, sbuf, count * esz);
        return COLL_OK;
    }
    int p = 1;
    while (p * 2 <= n) p *= 2;
    int rem = n - p, nr;

    if (r < 2 * rem) {
        if (r % 2 == 0) {
            rc = coll_p2p_exchange_reduce(c, r + 1, sbuf, count, -1, NULL, NULL, 0, dt, op);
            nr = -1;
        } else {
            rc = coll_p2p_exchange_reduce(c, -1, NULL, 0, r - 1, sbuf, rbuf, count, dt, op);
            nr = r / 2;
        }
        if (rc < 0) return rc;
    } else {
        coll_copy(rbuf, sbuf, count * esz);
        nr = r - rem;
    }

    if (nr >= 0) {
        int lo = 0, hi = p;
        for (int mask = p / 2; mask > 0; mask >>= 1) {
            int peer = real_rank(nr ^ mask, rem), mid = (lo + hi) / 2;
            int klo = (nr & mask) ? mid : lo, khi = (nr & mask) ? hi : mid;
            int slo = (nr & mask) ? lo : mid, shi = (nr & mask) ? mid : hi;
            size_t ko, ke, so, se, cnt;
            coll_block_range(count, p, klo, &ko, &cnt);
            coll_block_range(count, p, khi - 1, &ke, &cnt);
            ke += cnt;
            coll_block_range(count, p, slo, &so, &cnt);
            coll_block_range(count, p, shi - 1, &se, &cnt);
            se += cnt;
            rc = coll_p2p_exchange_reduce(c, peer, coll_elem(rbuf, so, esz), se - so, peer,
                                          coll_elem(rbuf, ko, esz), coll_elem(rbuf, ko, esz),
                                          ke - ko, dt, op);
            if (rc < 0) return rc;
            lo = klo;
            hi = khi;
        }
        /* Rank nr now holds block nr; double the gathered window each step. */
        for (int mask = 1; mask < p; mask <<= 1) {
            int pn = nr ^ mask, peer = real_rank(pn, rem);
            int mb = nr & ~(mask - 1), pb = pn & ~(mask - 1);
            size_t mo, me, po, pe, cnt;
            coll_block_range(count, p, mb, &mo, &cnt);
            coll_block_range(count, p, mb + mask - 1, &me, &cnt);
            me += cnt;
            coll_block_range(count, p, pb, &po, &cnt);
            coll_block_range(count, p, pb + mask - 1, &pe, &cnt);
            pe += cnt;
            rc = coll_p2p_sendrecv(c, peer, coll_elem(rbuf, mo, esz), (me - mo) * esz, peer,
                                   coll_elem(rbuf, po, esz), (pe - po) * esz);
            if (rc < 0) return rc;
        }
    }

    if (r < 2 * rem) {
        if (r % 2 == 1) rc = coll_p2p_send(c, r - 1, rbuf, count * esz);
        else rc = coll_p2p_recv(c, r + 1, rbuf, count * esz);
        if (rc < 0) return rc;
    }
    return COLL_OK;
}
