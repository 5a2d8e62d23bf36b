/* The suite's ETA; see eta.h. */
#include "engine/eta.h"

/* Seconds per unit of weight of finished steps (of one group, or all: group < 0). */
static double rate_of(const eta_step *steps, size_t n, int group)
{
    double w = 0, s = 0;
    for (size_t i = 0; i < n; i++)
        if (steps[i].done && (group < 0 || steps[i].group == group)) {
            w += steps[i].weight;
            s += steps[i].seconds;
        }
    return w > 0 ? s / w : -1;
}

double bench_eta_left(const eta_step *steps, size_t n, size_t current, double elapsed)
{
    double all = rate_of(steps, n, -1), left = 0;
    if (all < 0) return -1;
    for (size_t i = current; i < n; i++) {
        if (steps[i].done) continue;
        double rate = rate_of(steps, n, steps[i].group);
        double cost = steps[i].weight * (rate >= 0 ? rate : all);
        if (i == current) cost = cost > elapsed ? cost - elapsed : 0; /* overdue: ends soon */
        left += cost;
    }
    return left;
}
