/* The blame marks' verdict: see launch_blame.h. */
#include "launch/launch_blame.h"
#include "coll_tool.h"

#include <stdlib.h>

/* The one failed rank the launcher had to stop while every other failed rank
 * ended on its own, or -1. */
static int lone_stopped(const coll__launch_blame_rank *ranks, int n)
{
    int stopped = -1, others = 0;
    for (int r = 0; r < n; r++) {
        if (!ranks[r].failed) continue;
        if (!ranks[r].stopped) {
            others++;
            continue;
        }
        if (stopped >= 0) return -1;
        stopped = r;
    }
    return others > 0 ? stopped : -1;
}

/* Whom rank r's mark leads to in one hop: a rank, or -1 (the chain ends at r). */
static int next_of(const coll__launch_blame_rank *ranks, int r, int unknown_to)
{
    const coll__launch_blame_rank *p = &ranks[r];
    if (!p->failed) return -1;
    if (p->blames == COLL_BLAMED_UNKNOWN) return unknown_to != r ? unknown_to : -1;
    return p->blames;
}

/* The end of r's chain; -1 for a circle. */
static int chain_end(const coll__launch_blame_rank *ranks, int n, int r, int unknown_to)
{
    for (int hops = 0; hops <= n; hops++) {
        int next = next_of(ranks, r, unknown_to);
        if (next < 0) return r;
        r = next;
    }
    return -1;
}

coll__launch_blamed coll__launch_blame(const coll__launch_blame_rank *ranks, int n)
{
    coll__launch_blamed out = {-1, -1, 0};
    if (n < 1) return out;
    int unknown_to = lone_stopped(ranks, n);
    int *count = calloc((size_t)n, sizeof *count);
    if (!count) return out;
    for (int r = 0; r < n; r++) {
        if (next_of(ranks, r, unknown_to) < 0) continue;
        int end = chain_end(ranks, n, r, unknown_to);
        if (end >= 0 && end != r) count[end]++;
    }
    for (int r = 0; r < n; r++) {
        if (!count[r] || !ranks[r].failed) continue;
        if (out.rank < 0 || count[r] > count[out.rank] ||
            (count[r] == count[out.rank] && ranks[r].stopped > ranks[out.rank].stopped))
            out.rank = r;
    }
    out.votes = out.rank >= 0 ? count[out.rank] : 0;
    free(count);
    if (out.rank < 0) {
        out.rank = unknown_to;
        return out;
    }
    for (int r = 0; r < n; r++)
        if (next_of(ranks, r, unknown_to) == out.rank &&
            (out.direct < 0 || ranks[r].reaped < ranks[out.direct].reaped))
            out.direct = r;
    return out;
}
