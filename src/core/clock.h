/* Monotonic time in seconds and microseconds; sleeping. */
#ifndef COLL_CLOCK_H
#define COLL_CLOCK_H

#include <errno.h>
#include <time.h>

static inline double coll__now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline double coll__now_us(void) { return coll__now_s() * 1e6; }

/* Milliseconds left until deadline, clamped to [0, cap_ms]; for poll(). */
static inline int coll__ms_until(double deadline, int cap_ms)
{
    double ms = (deadline - coll__now_s()) * 1e3;
    if (ms <= 0) return 0;
    if (ms > cap_ms) return cap_ms;
    return (int)ms + 1;
}

/* s seconds as a timespec for nanosleep (s > 0, finite). */
static inline struct timespec coll__timespec_s(double s)
{
    if (s > 1e9) s = 1e9;
    time_t whole = (time_t)s;
    long ns = (long)((s - (double)whole) * 1e9);
    if (ns > 999999999L) ns = 999999999L;
    return (struct timespec){whole, ns};
}

/* Sleeps s seconds (nothing for s <= 0 or NaN), resuming after a signal with
 * the time left. */
static inline void coll__sleep_s(double s)
{
    if (!(s > 0)) return;
    struct timespec ts = coll__timespec_s(s);
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

/* One nanosleep of s seconds that a signal cuts short: for poll loops, which
 * look at their condition again anyway. */
static inline void coll__nap_s(double s)
{
    if (!(s > 0)) return;
    struct timespec ts = coll__timespec_s(s);
    nanosleep(&ts, NULL);
}

#endif
