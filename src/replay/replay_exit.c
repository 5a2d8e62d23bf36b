/* The ranks' recorded exit from each collective (replay_exit.h). */
#include "replay/replay_exit.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int replay_exit_lateness(const replay_trace *t, coll_comm *const *comm, const size_t *order,
                         double *late_s)
{
    memset(late_s, 0, t->ncalls * sizeof *late_s);
    int64_t *mine = malloc((t->ncalls + 1) * sizeof *mine);
    int64_t *first = malloc((t->ncalls + 1) * sizeof *first);
    size_t *at = malloc((t->ncalls + 1) * sizeof *at);
    int rc = mine && first && at ? COLL_OK : COLL_ENOMEM;
    /* every rank joins every group's allreduces, also out of memory: a rank
     * that left would hang the others; its count says so (-1) */
    for (size_t k = 0; k < t->ngroups; k++) {
        size_t g = order[k], n = 0;
        for (size_t i = 0; !rc && i < t->ncalls; i++)
            if (t->calls[i].group == g && !replay_op_is_p2p(t->calls[i].op))
                at[n] = i, mine[n++] = t->calls[i].t1;
        /* the least and the most count: equal on checked traces, but the
         * allreduce below must have one length on every rank */
        int64_t count[2] = {rc ? -1 : (int64_t)n, rc ? 1 : -(int64_t)n}, least[2];
        int r = coll_allreduce(comm[g], count, least, 2, COLL_INT64, COLL_MIN);
        int same = !r && least[0] >= 0 && least[0] == -least[1];
        if (same && n) r = coll_allreduce(comm[g], mine, first, n, COLL_INT64, COLL_MIN);
        if (r && !rc) rc = r;
        if (rc || !same) continue;
        for (size_t j = 0; j < n; j++) late_s[at[j]] = (double)(mine[j] - first[j]) * 1e-9;
    }
    if (rc) memset(late_s, 0, t->ncalls * sizeof *late_s);
    free(mine), free(first), free(at);
    return rc;
}
