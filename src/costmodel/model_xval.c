/* Leave-one-count-out validation of the fits (model_xval.h). */
#include "costmodel/model_xval.h"
#include "coll.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The count a fold of this kind holds out for p. */
static int count_of(char kind, const model_point *p)
{
    return kind == 'p' ? p->hosts * p->per_host : p->hosts;
}

/* The distinct counts of kind among s's rows, ascending; how many. */
static size_t distinct(const model_series *s, char kind, int *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < s->npts; i++) {
        int v = count_of(kind, &s->pts[i]);
        size_t k = 0;
        while (k < n && out[k] != v) k++;
        if (k == n && n < cap) out[n++] = v;
    }
    qsort(out, n, sizeof *out, cmp_int);
    return n;
}

/* "2,3 -> 4 ranks" */
static void describe(model_fold *f, const int *values, size_t nv)
{
    size_t at = 0;
    for (size_t k = 0; k < nv && at < sizeof f->fit; k++) {
        if (values[k] == f->value) continue;
        int w = snprintf(f->fit + at, sizeof f->fit - at, "%s%d", at ? "," : "", values[k]);
        at += w > 0 ? (size_t)w : 0;
    }
    if (at < sizeof f->fit)
        snprintf(f->fit + at, sizeof f->fit - at, " -> %d %s", f->value,
                 f->kind == 'p' ? "ranks" : "hosts");
}

/* Fits s without the rows of fold f and predicts them: their relative errors
 * go to errs (n of them). 0, or COLL_ENOMEM. */
static int run_fold(const model_series *s, model_fold *f, double *errs, size_t *n)
{
    model_series rest = *s;
    rest.pts = malloc(s->npts * sizeof *rest.pts);
    if (!rest.pts) return COLL_ENOMEM;
    rest.npts = 0;
    for (size_t i = 0; i < s->npts; i++)
        if (count_of(f->kind, &s->pts[i]) != f->value) rest.pts[rest.npts++] = s->pts[i];
    model_fit_series(&rest);
    size_t start = *n;
    for (size_t i = 0; rest.ok && i < s->npts; i++) {
        const model_point *p = &s->pts[i];
        if (count_of(f->kind, p) != f->value) continue;
        double us = model_series_time_us(&rest, p->hosts, p->per_host, p->bytes, NULL);
        if (!isfinite(us) || !(us > 0)) {
            *n = start; /* a fold predicts all of its rows or none */
            break;
        }
        errs[(*n)++] = fabs(us - p->measured_us) / p->measured_us;
    }
    free(rest.pts);
    f->n = *n - start;
    f->ok = f->n > 0;
    /* the fold's own errors, sorted in place: the overall median and max
     * below do not depend on their order */
    if (f->ok) f->med_err = model_median(errs + start, f->n);
    return 0;
}

static int xval_series(model_series *s)
{
    model_xval *x = &s->xval;
    memset(x, 0, sizeof *x);
    x->worst = -1;
    if (!s->ok) return 0;
    /* every row can be held out once per kind */
    double *errs = malloc(2 * s->npts * sizeof *errs);
    if (!errs) return COLL_ENOMEM;
    static const char kinds[] = {'p', 'h'};
    for (size_t k = 0; k < sizeof kinds; k++) {
        int values[MODEL_MAX_FOLDS];
        size_t nv = distinct(s, kinds[k], values, MODEL_MAX_FOLDS);
        for (size_t v = 0; nv >= 2 && v < nv && x->nfolds < MODEL_MAX_FOLDS; v++) {
            model_fold *f = &x->folds[x->nfolds++];
            *f = (model_fold){.kind = kinds[k], .value = values[v]};
            describe(f, values, nv);
            if (run_fold(s, f, errs, &x->n)) return free(errs), COLL_ENOMEM;
            if (f->ok && (x->worst < 0 || f->med_err > x->folds[x->worst].med_err))
                x->worst = (int)(f - x->folds);
        }
    }
    if (x->n) {
        for (size_t i = 0; i < x->n; i++) x->max_err = fmax(x->max_err, errs[i]);
        x->med_err = model_median(errs, x->n);
    }
    free(errs);
    return 0;
}

int model_xval_fits(model_fits *f)
{
    for (size_t i = 0; i < f->n; i++)
        if (xval_series(&f->s[i])) return COLL_ENOMEM;
    return 0;
}

int model_xval_trusted(const model_series *s)
{
    return s->ok && s->xval.n > 0 && s->xval.med_err <= MODEL_XVAL_TRUSTED;
}

void model_xval_why_not(const model_series *s, char *buf, size_t len)
{
    const model_xval *x = &s->xval;
    if (!s->ok) snprintf(buf, len, "not fitted: %s", s->why);
    else if (x->nfolds == 0)
        snprintf(buf, len, "one process count and one host count: nothing to hold out");
    else if (x->n == 0) snprintf(buf, len, "no held-out count could be predicted from the others");
    else if (x->med_err > MODEL_XVAL_TRUSTED)
        snprintf(buf, len, "held-out error %.0f%% (fit %s: %.0f%%)", 100 * x->med_err,
                 x->folds[x->worst].fit, 100 * x->folds[x->worst].med_err);
    else if (len) buf[0] = '\0';
}
