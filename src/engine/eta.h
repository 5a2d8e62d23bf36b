/* The suite's ETA, learned from the steps already run (pure; unit-tested).
 * Steps have a weight (expected cost relative to the others: ranks x bytes) and
 * a group (steps alike: one backend and buffer kind). A step left costs its
 * weight times the seconds per unit of weight its group has shown so far, or,
 * while its group has shown nothing, the rate of every finished step: mpi's
 * steps cost several times tcp's per byte, which one rate for all missed by 40%. */
#ifndef BENCH_ETA_H
#define BENCH_ETA_H

#include <stddef.h>

typedef struct eta_step {
    double weight;
    int group;
    int done; /* finished: seconds is what it took */
    double seconds;
} eta_step;

/* Seconds left of steps[current..n) (current is running, for elapsed seconds
 * so far; current == n: none), or -1 before any step has finished. */
double bench_eta_left(const eta_step *steps, size_t n, size_t current, double elapsed);

#endif
