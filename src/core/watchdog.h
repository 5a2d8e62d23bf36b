/* A watchdog thread for calls that cannot be given a deadline themselves (a
 * message-passing library's collectives block inside it): the caller arms it with a deadline
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

typedef void (*coll__watchdog_fire)(void *arg, const void *what, double waited_s);

typedef struct coll__watchdog {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    coll__watchdog_fire fire;
    void *arg;
    double deadline; /* coll__now_s() time; 0 when disarmed */
    double armed_at;
    double sleep_until; /* the thread's wake-up; 0 while it waits for an arming */
    int stop;
    unsigned char what[COLL_WATCHDOG_WHAT];
} coll__watchdog;

/* 0, or an errno value (the thread could not start). */
int coll__watchdog_start(coll__watchdog *w, coll__watchdog_fire fire, void *arg);
/* what: len bytes (at most COLL_WATCHDOG_WHAT) handed to fire(). */
void coll__watchdog_arm(coll__watchdog *w, double deadline, const void *what, size_t len);
void coll__watchdog_disarm(coll__watchdog *w);
void coll__watchdog_stop(coll__watchdog *w);

#endif
