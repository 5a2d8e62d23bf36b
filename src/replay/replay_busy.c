/* The union of a rank's call intervals: see replay_busy.h. */
#include "replay/replay_busy.h"

#include <stdlib.h>

typedef struct span {
    double a, b;
} span;

static int by_start(const void *x, const void *y)
{
    double a = ((const span *)x)->a, b = ((const span *)y)->a;
    return (a > b) - (a < b);
}

double replay_busy(const double *start, const double *end, size_t n)
{
    span *s = malloc((n ? n : 1) * sizeof *s);
    if (!s) return -1;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (end[i] > start[i]) s[m++] = (span){start[i], end[i]};
    qsort(s, m, sizeof *s, by_start);
    double busy = 0, until = 0;
    for (size_t i = 0; i < m; i++) {
        if (i == 0 || s[i].a >= until) busy += s[i].b - s[i].a, until = s[i].b;
        else if (s[i].b > until) busy += s[i].b - until, until = s[i].b;
    }
    free(s);
    return busy;
}
