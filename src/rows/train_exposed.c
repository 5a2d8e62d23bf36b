#include "rows/train_exposed.h"

#include <math.h>
#include <stdio.h>

void train_exposed_of(const train_row *r, train_exposed *e)
{
    double noise = 0;
    if (isfinite(r->step_ms_p99) && isfinite(r->step_ms_p50) && r->step_ms_p99 > r->step_ms_p50)
        noise = r->step_ms_p99 - r->step_ms_p50;
    if (isfinite(r->step_ms_avg) && isfinite(r->step_ms_p50) &&
        fabs(r->step_ms_avg - r->step_ms_p50) > noise)
        noise = fabs(r->step_ms_avg - r->step_ms_p50);
    double raw = isfinite(r->comm_exposed_ms) ? r->comm_exposed_ms : 0;
    e->noise_ms = noise;
    /* Below zero can only be noise (compute timed above the whole step): 0. */
    e->in_noise = raw <= noise;
    e->ms = raw > 0 ? raw : 0;
    e->share = r->step_ms_avg > 0 ? 100.0 * e->ms / r->step_ms_avg : 0;
}

const char *train_exposed_text(const train_exposed *e, char *buf, size_t len)
{
    if (e->in_noise) snprintf(buf, len, "%.2f ±%.2f", e->ms, e->noise_ms);
    else snprintf(buf, len, "%.2f", e->ms);
    return buf;
}
