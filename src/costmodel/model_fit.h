/* Fitting the cost formulas (model_formula.h) to measured rows: one series per
 * (machine, backend, buffers, collective, algorithm, dtype), weighted least
 * squares on relative error (relative to the geometric mean of measured and
 * model time, so that 5x too high weighs as 5x too low), made robust (Tukey's bisquare: rows far off the
 * rest count less, down to not at all), with standard errors and per-row
 * residuals.
 * This is the model's API for the tool and the report (docs/DESIGN.md "Cost
 * model"). */
#ifndef MODEL_FIT_H
#define MODEL_FIT_H

#include <stddef.h>

#include "rows/result.h"
#include "costmodel/model_formula.h"

/* What became of a parameter in a fit. */
typedef enum model_pstate {
    MODEL_P_ABSENT, /* no row depends on it (e.g. inter-host terms of one-host rows) */
    MODEL_P_FITTED,
    MODEL_P_MERGED, /* gamma: proportional to beta in every row, so its share is in beta */
    MODEL_P_ZERO,   /* fitted below zero: held at 0 */
} model_pstate;

typedef struct model_point {
    int hosts, per_host;
    double bytes, measured_us, model_us;
    double share;    /* ranks per core (model_shape's share) */
    double weight;   /* the robust fit's weight, 0..1 (below 0.5: an outlier) */
    double scale_us; /* what the residual is relative to: sqrt(measured x model) */
} model_point;

/* One fold of the held-out validation (model_xval.h): the rows of one process
 * count (or host count) predicted by a fit of the other rows. */
typedef struct model_fold {
    char kind; /* 'p': a process count left out, 'h': a host count */
    int value; /* the count left out */
    int ok;    /* 0: the other rows could not be fitted, or cannot predict these */
    size_t n;  /* rows predicted */
    double med_err;
    char fit[48]; /* "2,3 -> 4 ranks": the counts fitted -> the count predicted */
} model_fold;
#define MODEL_MAX_FOLDS 16

typedef struct model_xval {
    size_t nfolds; /* 0: one process count and one host count, nothing to hold out */
    model_fold folds[MODEL_MAX_FOLDS];
    size_t n;                /* rows predicted while held out, over every fold */
    double med_err, max_err; /* |predicted - measured| / measured over those rows */
    int worst;               /* the fold with the largest median error (-1: none) */
} model_xval;

typedef struct model_series {
    char host[64], backend[16], buffers[8], collective[16], algo[24], dtype[12];
    model_algo model; /* the formula used */
    int ok;           /* 0: refused, why says why */
    char why[256];
    model_pstate state[MODEL_NPARAM];
    double theta[MODEL_NPARAM], se[MODEL_NPARAM]; /* us, us/B; se: standard error */
    model_point *pts;                             /* the rows used, in input order */
    size_t npts;
    double med_abs_res, max_abs_res; /* |model - measured| / measured over pts */
    int cores;                       /* the cores the rows' ranks shared (0: not given) */
    double cache_bytes;              /* the cache knot (model_shape), chosen by the fit; 0: none */
    /* The auto backend's: the tcp series of the same machine, buffers,
     * collective and dtype (its inter-host stack; NULL: none in the rows),
     * whose one-host rows give the stack's ceiling (model_stack_beta). */
    const struct model_series *stack;
    model_xval xval; /* filled by model_xval_fits; zero until then */
} model_series;

typedef struct model_fits {
    model_series *s;
    size_t n;
    size_t skipped; /* rows left out: wrong results, no time, 1 rank */
} model_fits;

/* The cores of the machine a host label's rows ran on (results.json's
 * machines.<host>.cores, recorded by the run). */
typedef struct model_host_cores {
    const char *host;
    int cores;
} model_host_cores;

/* Groups rows into series and fits each (a refused series has ok == 0 and a
 * reason). A row's time is its median (time_us_p50), else its average.
 * cores: the cores all ranks of a row shared (one machine: one host, or hosts
 * emulated on it); 0: each series' host's from hosts (nhosts of them), and
 * where a host is not there, taken as not outnumbered. 0 or COLL_ENOMEM. */
int model_fit_rows(const bench_row *rows, size_t n, int cores, const model_host_cores *hosts,
                   size_t nhosts, model_fits *out);

/* The median of v[0..n) (sorted in place); NAN for none. */
double model_median(double *v, size_t n);

/* Ranks per core for ranks sharing cores (>= 1; 1 when cores is 0). */
double model_share(int ranks, int cores);
void model_fits_free(model_fits *f);

/* Fits s from s->pts (s->model, s->collective and s->backend set): fills
 * ok/why, state, theta, se, the points' model_us and the residual summary. */
void model_fit_series(model_series *s);

/* The series' prediction in microseconds for hosts x per_host ranks at bytes,
 * on the rows' machine (its cores shared as in the fit), with its fitted parameters (theta may override them: NULL for the fit's
 * own). NAN for a refused series or a shape the fit has no terms for (inter-host
 * terms of a series fitted on one host only). For the report's model curves. */
double model_series_time_us(const model_series *s, int hosts, int per_host, double bytes,
                            const double *theta);

#endif
