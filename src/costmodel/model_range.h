/* What a fitted series measured, and what of a prediction lies beyond it
 * (docs/DESIGN.md "Cost model", "Extrapolation"): the held-out validation
 * (bench/model_validate.sh) shows errors beyond the fit's own residuals when
 * hosts, sizes or the link leave the measured range, so the tool says so. */
#ifndef MODEL_RANGE_H
#define MODEL_RANGE_H

#include <stddef.h>

#include "costmodel/model_predict.h"

/* The range of s's rows (all of them, outliers too; zeros for no rows). */
typedef struct model_span {
    int max_hosts, max_per_host, max_ranks;
    double min_bytes, max_bytes;
} model_span;

void model_series_span(const model_series *s, model_span *out);

/* What of cluster c at sizes lo..hi bytes lies beyond s's rows, as phrases
 * joined by "; " in buf ("4 hosts (rows: up to 2)", "sizes up to 1G (rows: up
 * to 64M)", "link 5 Gbit/s (rows: 1 Gbit/s)"); returns how many (0: inside,
 * buf empty). A link given without measured-link= counts as unmeasured. */
int model_beyond(const model_series *s, const model_cluster *c, double lo, double hi, char *buf,
                 size_t len);

#endif
