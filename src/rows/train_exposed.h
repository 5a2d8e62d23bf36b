/* The exposed communication of a training row as a person may read it.
 * collbench train records it as step time minus compute time (avg - compute),
 * a difference of two measurements: with noise it can come out negative,
 * which no step can have. Every table and plot shows it through here: never
 * below 0, and with the step's measured spread where the difference is
 * inside it ("0 ±0.28", "3.10 ±5.00"). The raw difference stays in the result
 * files. */
#ifndef ROWS_TRAIN_EXPOSED_H
#define ROWS_TRAIN_EXPOSED_H

#include <stddef.h>

#include "rows/train_row.h"

typedef struct train_exposed {
    double ms;       /* what to show: the raw difference, 0 where it is negative */
    double noise_ms; /* the step's spread: p99 - p50 and |avg - p50|, the wider */
    double share;    /* ms as a percentage of the step (avg), >= 0 */
    int in_noise;    /* raw <= noise_ms: shown with the spread */
} train_exposed;

void train_exposed_of(const train_row *r, train_exposed *e);

/* "12.34" (ms, 2 decimals), or "3.10 ±5.00" inside the noise (the spread, ms). */
const char *train_exposed_text(const train_exposed *e, char *buf, size_t len);

#endif
