/* The ranks' recorded arrival at their first call (replay_arrival.h). */
#include "replay/replay_arrival.h"

#include <stdint.h>
#include <stdlib.h>

/* FNV-1a of the host's name: ranks agree on a host when these agree. */
static int64_t host_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return (int64_t)h;
}

int replay_arrival(const replay_trace *t, coll_comm *world, double *arrival_s, int *one_clock)
{
    *arrival_s = 0;
    *one_clock = 0;
    int n = coll_comm_size(world);
    int64_t mine[3] = {t->has_times && t->ncalls && t->host[0], t->ncalls ? t->calls[0].t0 : 0,
                       host_hash(t->host)};
    int64_t *all = malloc((size_t)n * sizeof mine);
    if (!all) return COLL_ENOMEM;
    int rc = coll_allgather(world, mine, all, 3, COLL_INT64);
    int64_t first = mine[1];
    int one = !rc;
    for (int r = 0; one && r < n; r++) {
        if (!all[3 * r] || all[3 * r + 2] != mine[2]) one = 0; /* no times, or another clock */
        else if (all[3 * r + 1] < first) first = all[3 * r + 1];
    }
    if (one) *arrival_s = (double)(mine[1] - first) * 1e-9, *one_clock = 1;
    free(all);
    return rc;
}
