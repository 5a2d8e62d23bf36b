/* coll_alltoallv: the uneven all-to-all (torch's all_to_all_single with split
 * sizes, MPI_Alltoallv with packed blocks), as pairwise exchanges over
 * coll_sendrecv: step k sends to rank r+k and receives from rank r-k, so every
 * backend runs it and each step pairs every rank with one sender and one
 * receiver (no rank floods another). Its own block is copied locally. */
#include "comm/comm.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* buf + off elements of es bytes; NULL stays NULL (a count-0 side may pass it). */
static char *at(const void *buf, size_t off, size_t es)
{
    return buf ? (char *)buf + off * es : NULL;
}

/* offs[i]: elements before block i of counts (n+1 entries); -1 when they overflow. */
static int prefix(const size_t *counts, int n, size_t *offs)
{
    offs[0] = 0;
    for (int i = 0; i < n; i++) {
        if (counts[i] > SIZE_MAX - offs[i]) return -1;
        offs[i + 1] = offs[i] + counts[i];
    }
    return 0;
}

int coll_alltoallv(coll_comm *comm, const void *sendbuf, const size_t *sendcounts, void *recvbuf,
                   const size_t *recvcounts, coll_dtype dt)
{
    if (!comm) return COLL_EINVAL;
    size_t es = coll_dtype_size(dt);
    if (!es)
        return coll__err_blame(&comm->err, COLL_EINVAL, -1, "alltoallv: invalid dtype %d", (int)dt);
    if (!sendcounts || !recvcounts)
        return coll__err_blame(&comm->err, COLL_EINVAL, -1, "alltoallv: %s is NULL",
                               sendcounts ? "recvcounts" : "sendcounts");
    int n = comm->size, r = comm->rank;
    size_t *offs = malloc(2 * ((size_t)n + 1) * sizeof *offs);
    if (!offs) return COLL_ENOMEM;
    size_t *soff = offs, *roff = offs + n + 1;
    int rc = COLL_OK;
    if (prefix(sendcounts, n, soff) || prefix(recvcounts, n, roff) || soff[n] > SIZE_MAX / es ||
        roff[n] > SIZE_MAX / es)
        rc = coll__err_blame(&comm->err, COLL_EINVAL, -1, "alltoallv: the counts overflow");
    else if ((soff[n] && !sendbuf) || (roff[n] && !recvbuf))
        rc = coll__err_blame(&comm->err, COLL_EINVAL, -1, "alltoallv: NULL %s with %zu elements",
                             sendbuf ? "recvbuf" : "sendbuf", sendbuf ? roff[n] : soff[n]);
    else if (sendcounts[r] != recvcounts[r])
        rc = coll__err_blame(&comm->err, COLL_EMISMATCH, -1,
                             "alltoallv: rank %d sends itself %zu elements but receives %zu", r,
                             sendcounts[r], recvcounts[r]);
    if (rc == COLL_OK && sendcounts[r])
        memcpy(at(recvbuf, roff[r], es), at(sendbuf, soff[r], es), sendcounts[r] * es);
    for (int k = 1; k < n && rc == COLL_OK; k++) {
        int to = (r + k) % n, from = (r - k + n) % n;
        rc = coll_sendrecv(comm, at(sendbuf, soff[to], es), sendcounts[to], to,
                           at(recvbuf, roff[from], es), recvcounts[from], from, dt);
    }
    free(offs);
    return rc;
}
