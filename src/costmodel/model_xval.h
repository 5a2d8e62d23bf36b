/* Held-out validation of the cost model (docs/DESIGN.md "Cost model"): a fit
 * explains its own rows by construction, so its residual says little of what
 * it predicts. Each process count, then each host count, is left out in turn,
 * the rest fitted, and the rows left out predicted; the error of those
 * predictions is the error to expect of a prediction, and the report draws a
 * series' model only where it is small (MODEL_XVAL_TRUSTED). */
#ifndef MODEL_XVAL_H
#define MODEL_XVAL_H

#include "costmodel/model_fit.h"

/* The held-out median error at or below which a series' model is shown. */
#define MODEL_XVAL_TRUSTED 0.25

/* Fills every fitted series' xval (refused series keep nfolds 0).
 * 0 or COLL_ENOMEM. */
int model_xval_fits(model_fits *f);

/* Whether s's model may be shown: fitted, validated, held-out median error at
 * most MODEL_XVAL_TRUSTED. */
int model_xval_trusted(const model_series *s);

/* Why s's model is not shown, or "" when it is: "held-out error 55% (fit
 * 2,3 -> 4 ranks: 61%)", "one process count and one host count: nothing to
 * hold out". */
void model_xval_why_not(const model_series *s, char *buf, size_t len);

#endif
