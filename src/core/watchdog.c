#include "core/watchdog.h"
#include "core/clock.h"

#include <math.h>
#include <string.h>

static struct timespec abs_monotonic(double t)
{
    struct timespec ts;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) ts.tv_nsec = 999999999L;
    return ts;
}

static void *watch(void *p)
{
    coll__watchdog *w = p;
    pthread_mutex_lock(&w->mu);
    while (!w->stop) {
        if (w->deadline <= 0) {
            w->sleep_until = 0;
            pthread_cond_wait(&w->cv, &w->mu);
            continue;
        }
        double now = coll__now_s();
        if (now < w->deadline) {
            w->sleep_until = w->deadline;
            struct timespec ts = abs_monotonic(w->deadline);
            pthread_cond_timedwait(&w->cv, &w->mu, &ts);
            continue;
        }
        unsigned char what[sizeof w->what];
        memcpy(what, w->what, sizeof what);
        double waited = now - w->armed_at;
        w->deadline = 0;
        pthread_mutex_unlock(&w->mu);
        w->fire(w->arg, what, waited);
        pthread_mutex_lock(&w->mu);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

int coll__watchdog_start(coll__watchdog *w, coll__watchdog_fire fire, void *arg)
{
    memset(w, 0, sizeof *w);
    w->fire = fire;
    w->arg = arg;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* coll__now_s()'s clock */
    int e = pthread_cond_init(&w->cv, &ca);
    pthread_condattr_destroy(&ca);
    if (e) return e;
    pthread_mutex_init(&w->mu, NULL);
    e = pthread_create(&w->thread, NULL, watch, w);
    if (e) {
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->mu);
        w->fire = NULL;
    }
    return e;
}

void coll__watchdog_arm(coll__watchdog *w, double deadline, const void *what, size_t len)
{
    if (!w->fire || !isfinite(deadline)) return;
    if (len > sizeof w->what) len = sizeof w->what;
    pthread_mutex_lock(&w->mu);
    w->armed_at = coll__now_s();
    w->deadline = deadline > 0 ? deadline : 1e-9;
    memset(w->what, 0, sizeof w->what);
    if (what) memcpy(w->what, what, len);
    /* Calls re-arm with ever later deadlines: a thread already asleep until an
     * earlier one wakes then and sleeps on, so it is woken only when idle (at
     * most once per timeout, not once per call) or for an earlier deadline. */
    if (w->sleep_until <= 0 || w->deadline < w->sleep_until) pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

void coll__watchdog_disarm(coll__watchdog *w)
{
    if (!w->fire) return;
    pthread_mutex_lock(&w->mu);
    w->deadline = 0; /* the thread finds out at its next wake-up; no signal needed */
    pthread_mutex_unlock(&w->mu);
}

void coll__watchdog_stop(coll__watchdog *w)
{
    if (!w->fire) return;
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    w->fire = NULL;
}
