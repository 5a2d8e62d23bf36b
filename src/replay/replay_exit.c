/* The ranks' recorded exit from each collective (replay_exit.h). */
#include "replay/replay_exit.h"

#include <stdint.h>
#include <stdlib.h>

int replay_exit_lateness(const replay_trace *t, size_t g, coll_comm *comm, double *late_s)
{
    int64_t *mine = malloc((t->ncalls + 1) * sizeof *mine);
    int64_t *first = malloc((t->ncalls + 1) * sizeof *first);
    size_t *at = malloc((t->ncalls + 1) * sizeof *at);
    int oom = !late_s || !mine || !first || !at;
    size_t n = 0;
    for (size_t i = 0; !oom && i < t->ncalls; i++)
        if (t->calls[i].group == g && !replay_op_is_p2p(t->calls[i].op))
            at[n] = i, mine[n++] = t->calls[i].t1;
    /* every rank joins both allreduces, also out of memory (its count -1): a
     * rank that left would hang the others. The least and the most count are
     * equal on checked traces, but the second allreduce must have one length
     * on every rank. */
    int64_t count[2] = {oom ? -1 : (int64_t)n, oom ? 1 : -(int64_t)n}, least[2];
    int rc = coll_allreduce(comm, count, least, 2, COLL_INT64, COLL_MIN);
    int same = !rc && least[0] >= 0 && least[0] == -least[1];
    if (same && n) rc = coll_allreduce(comm, mine, first, n, COLL_INT64, COLL_MIN);
    if (!rc && oom) rc = COLL_ENOMEM;
    if (!rc && same)
        for (size_t j = 0; j < n; j++) late_s[at[j]] = (double)(mine[j] - first[j]) * 1e-9;
    free(mine), free(first), free(at);
    return rc;
}
