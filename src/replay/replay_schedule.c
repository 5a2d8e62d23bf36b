/* Calls in flight, from the recorded times (replay_schedule.h). */
#include "replay/replay_schedule.h"

#include <stdlib.h>

int replay_op_nonblocking(replay_op op)
{
    return op == REPLAY_ALLREDUCE || op == REPLAY_ALLGATHER || op == REPLAY_REDUCESCATTER ||
           op == REPLAY_BROADCAST;
}

int replay_call_nonblocking(const replay_call *c)
{
    return replay_op_nonblocking(c->op) && !c->blocking;
}

/* The first j in (i, n) with t0[j] >= end; calls are in issue order, so t0
 * does not decrease and a binary search finds it. */
static size_t first_issued_after(const replay_trace *t, size_t i, int64_t end)
{
    size_t lo = i + 1, hi = t->ncalls;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->calls[mid].t0 >= end) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

void replay_schedule_done_by(const replay_trace *t, size_t *done_by)
{
    size_t n = t->ncalls;
    for (size_t i = 0; i < n; i++) done_by[i] = first_issued_after(t, i, t->calls[i].t1);
    /* backwards per group: a blocking call waits for the group's calls before
     * it, and a call that must be done needs the group's earlier ones done */
    size_t *next = malloc((t->ngroups + 1) * sizeof *next);
    if (!next) { /* nothing overlaps: correct, only slower to build */
        for (size_t i = 0; i < n; i++) done_by[i] = i + 1;
        return;
    }
    for (size_t g = 0; g < t->ngroups; g++) next[g] = n;
    for (size_t i = n; i-- > 0;) {
        size_t g = t->calls[i].group;
        if (next[g] < done_by[i]) done_by[i] = next[g];
        /* the group's later calls: a blocking one is issued only after i ended */
        next[g] = replay_call_nonblocking(&t->calls[i]) ? done_by[i] : i;
    }
    free(next);
}

int replay_schedule_depth(const replay_trace *t, const size_t *done_by, size_t *depth)
{
    /* per group, the calls in flight are a run of its calls in issue order
     * (done_by keeps that order): the oldest one's index and the count */
    size_t *oldest = calloc(t->ngroups + 1, sizeof *oldest);
    size_t *count = calloc(t->ngroups + 1, sizeof *count);
    size_t *next_in_group = malloc((t->ncalls + 1) * sizeof *next_in_group);
    size_t *last = malloc((t->ngroups + 1) * sizeof *last);
    int rc = oldest && count && next_in_group && last ? 0 : -1;
    for (size_t g = 0; !rc && g < t->ngroups; g++) depth[g] = 1, last[g] = t->ncalls;
    for (size_t i = t->ncalls; !rc && i-- > 0;) { /* each call's successor in its group */
        size_t g = t->calls[i].group;
        next_in_group[i] = last[g];
        last[g] = i;
    }
    for (size_t j = 0; !rc && j < t->ncalls; j++) {
        size_t g = t->calls[j].group;
        while (count[g] > 0 && done_by[oldest[g]] <= j)
            oldest[g] = next_in_group[oldest[g]], count[g]--;
        if (!replay_call_nonblocking(&t->calls[j])) {
            count[g] = 0; /* it waits for them, and runs alone */
            continue;
        }
        if (count[g] == 0) oldest[g] = j;
        if (count[g] == REPLAY_MAX_IN_FLIGHT) oldest[g] = next_in_group[oldest[g]], count[g]--;
        if (++count[g] > depth[g]) depth[g] = count[g];
    }
    free(oldest), free(count), free(next_in_group), free(last);
    return rc;
}

static int by_wait(const void *a, const void *b)
{
    const replay_wait *x = a, *y = b;
    if (x->before != y->before) return x->before < y->before ? -1 : 1;
    return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

replay_wait *replay_schedule_waits(const replay_trace *t, size_t *n)
{
    *n = 0;
    replay_wait *w = malloc((t->ncalls + 1) * sizeof *w);
    for (size_t i = 0; w && t->has_times && i < t->ncalls; i++) {
        if (t->calls[i].wait_cpu < 0) continue;
        w[(*n)++] = (replay_wait){i, first_issued_after(t, i, t->calls[i].t1),
                                  t->calls[i].wait_cpu};
    }
    if (*n) qsort(w, *n, sizeof *w, by_wait);
    else free(w), w = NULL;
    return w;
}
