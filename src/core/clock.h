/* Monotonic time in seconds and microseconds. */
#ifndef COLL_CLOCK_H
#define COLL_CLOCK_H

#include <time.h>

static inline double coll_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline double coll_now_us(void) { return coll_now_s() * 1e6; }

/* Milliseconds left until deadline, clamped to [0, cap_ms]; for poll(). */
static inline int coll_ms_until(double deadline, int cap_ms)
{
    double ms = (deadline - coll_now_s()) * 1e3;
    if (ms <= 0) return 0;
    if (ms > cap_ms) return cap_ms;
    return (int)ms + 1;
}

#endif
