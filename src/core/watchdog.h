/* A watchdog thread for calls that cannot be given a deadline themselves (MPI
 * collectives block inside the library): the caller arms it with a deadline
 * before the call and disarms it after; if the deadline passes while armed,
 * the thread calls fire() once with a copy of what was armed (bytes the
 * caller formats only then: arming costs no printf). fire() usually
 * does not return (it ends the job); if it does, the watchdog stays quiet
 * until armed again. */
#ifndef COLL_WATCHDOG_H
#define COLL_WATCHDOG_H

#include <pthread.h>
#include <stddef.h>

#define COLL_WATCHDOG_WHAT 64 /* bytes of the armed description */

typedef void (*coll_watchdog_fire)(void *arg, const void *what, double waited_s);

typedef struct coll_watchdog {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    coll_watchdog_fire fire;
    void *arg;
    double deadline;  /* coll_now_s() time; 0 when disarmed */
    double armed_at;
    double sleep_until; /* the thread's wake-up; 0 while it waits for an arming */
    int stop;
    unsigned char what[COLL_WATCHDOG_WHAT];
} coll_watchdog;

/* 0, or an errno value (the thread could not start). */
int coll_watchdog_start(coll_watchdog *w, coll_watchdog_fire fire, void *arg);
/* what: len bytes (at most COLL_WATCHDOG_WHAT) handed to fire(). */
void coll_watchdog_arm(coll_watchdog *w, double deadline, const void *what, size_t len);
void coll_watchdog_disarm(coll_watchdog *w);
void coll_watchdog_stop(coll_watchdog *w);

#endif
