/* Communication spent waiting for a collective's last rank (replay_skew.h). */
#include "replay/replay_skew.h"

#include <stdint.h>
#include <stdlib.h>

#include "replay/replay_busy.h"

int replay_group_extreme(const replay_trace *t, size_t g, coll_comm *comm, const double *mine,
                         double *out, coll_op op)
{
    double *in = malloc((t->ncalls + 1) * sizeof *in);
    double *res = malloc((t->ncalls + 1) * sizeof *res);
    size_t *at = malloc((t->ncalls + 1) * sizeof *at);
    int oom = !mine || !out || !in || !res || !at;
    size_t n = 0;
    for (size_t i = 0; !oom && i < t->ncalls; i++)
        if (t->calls[i].group == g && !replay_op_is_p2p(t->calls[i].op))
            at[n] = i, in[n++] = mine[i];
    /* every rank joins both allreduces, also out of memory (its count -1): a
     * rank that left would hang the others. The least and the most count are
     * equal on checked traces, but the second allreduce must have one length
     * on every rank. */
    int64_t count[2] = {oom ? -1 : (int64_t)n, oom ? 1 : -(int64_t)n}, least[2];
    int rc = coll_allreduce(comm, count, least, 2, COLL_INT64, COLL_MIN);
    int same = !rc && least[0] >= 0 && least[0] == -least[1];
    if (same && n) rc = coll_allreduce(comm, in, res, n, COLL_FLOAT64, op);
    if (!rc && oom) rc = COLL_ENOMEM;
    if (!rc && same)
        for (size_t j = 0; j < n; j++) out[at[j]] = res[j];
    free(in), free(res), free(at);
    return rc;
}

double replay_skew_of(const double *start, const double *end, const double *last, size_t n)
{
    double *from = malloc((n ? n : 1) * sizeof *from);
    if (!from) return -1;
    for (size_t i = 0; i < n; i++) from[i] = last[i] > start[i] ? last[i] : start[i];
    double all = replay_busy(start, end, n), after = replay_busy(from, end, n);
    free(from);
    return all < 0 || after < 0 ? -1 : all - after;
}
