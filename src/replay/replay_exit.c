/* The ranks' recorded exit from each collective (replay_exit.h). */
#include "replay/replay_exit.h"

#include <stdlib.h>

#include "replay/replay_skew.h"

int replay_exit_lateness(const replay_trace *t, size_t g, coll_comm *comm, double *late_s)
{
    /* ns on one clock as doubles: exact below 2^53 ns (104 days of uptime) */
    double *mine = malloc((t->ncalls + 1) * sizeof *mine);
    double *first = malloc((t->ncalls + 1) * sizeof *first);
    for (size_t i = 0; mine && first && i < t->ncalls; i++)
        first[i] = mine[i] = (double)t->calls[i].t1;
    /* joined also out of memory (NULL arrays count as that) */
    int rc = replay_group_extreme(t, g, comm, late_s ? mine : NULL, first, COLL_MIN);
    for (size_t i = 0; !rc && i < t->ncalls; i++)
        if (t->calls[i].group == g && !replay_op_is_p2p(t->calls[i].op))
            late_s[i] = (mine[i] - first[i]) * 1e-9;
    free(mine), free(first);
    return rc;
}
