/* Weighted linear least squares of the cost formulas: relative error is what is
 * minimised (weights 1/measured), since times span five orders of magnitude
 * from 64 KiB to 1 GiB; columns are scaled to unit norm before solving. */
#include "costmodel/model_fit.h"
#include "coll.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The order in which columns are tested for dependence: a later column that
 * the earlier ones explain is the one dropped, so gamma goes first. */
static const model_param order[MODEL_NPARAM] = {MODEL_ALPHA_INTRA, MODEL_BETA_INTRA,
                                                MODEL_ALPHA_INTER, MODEL_BETA_INTER,
                                                MODEL_GAMMA,       MODEL_BETA_MEM};
/* A column whose part not explained by the earlier ones is below this
 * (relative to its norm) is taken as dependent on them. */
#define DEPENDENT_TOL 1e-6

static model_shape shape_of(const model_series *s, const model_point *p)
{
    return (model_shape){.collective = s->collective,
                         .algo = s->model,
                         .backend = s->backend,
                         .hosts = p->hosts,
                         .per_host = p->per_host,
                         .bytes = p->bytes,
                         .share = p->share,
                         .cache_bytes = s->cache_bytes};
}

/* Inverts the k x k matrix a (row-major) into inv by Gauss-Jordan with
 * partial pivoting; -1 when singular. */
static int invert(double *a, double *inv, int k)
{
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++) inv[i * k + j] = i == j;
    for (int c = 0; c < k; c++) {
        int piv = c;
        for (int r = c + 1; r < k; r++)
            if (fabs(a[r * k + c]) > fabs(a[piv * k + c])) piv = r;
        if (!(fabs(a[piv * k + c]) > 1e-300)) return -1;
        for (int j = 0; j < k; j++) {
            double t = a[c * k + j];
            a[c * k + j] = a[piv * k + j];
            a[piv * k + j] = t;
            t = inv[c * k + j];
            inv[c * k + j] = inv[piv * k + j];
            inv[piv * k + j] = t;
        }
        double d = a[c * k + c];
        for (int j = 0; j < k; j++) a[c * k + j] /= d, inv[c * k + j] /= d;
        for (int r = 0; r < k; r++) {
            if (r == c) continue;
            double f = a[r * k + c];
            for (int j = 0; j < k; j++)
                a[r * k + j] -= f * a[c * k + j], inv[r * k + j] -= f * inv[c * k + j];
        }
    }
    return 0;
}

/* The weighted, column-scaled design matrix b (m x MODEL_NPARAM, column j
 * scaled by 1/norm[j]) and the weighted times y; columns no row uses have
 * norm 0. A row's weight: 1/scale (relative error) x its robust weight. */
static void design(const model_series *s, const double *theta, double *b, double *y, double *norm)
{
    size_t m = s->npts;
    memset(norm, 0, MODEL_NPARAM * sizeof *norm);
    for (size_t i = 0; i < m; i++) {
        model_shape sh = shape_of(s, &s->pts[i]);
        double c[MODEL_NPARAM], rw = sqrt(s->pts[i].weight);
        model_coeffs(&sh, theta, c);
        y[i] = rw * s->pts[i].measured_us / s->pts[i].scale_us;
        for (int j = 0; j < MODEL_NPARAM; j++) {
            b[i * MODEL_NPARAM + j] = c[j] * rw / s->pts[i].scale_us;
            norm[j] += b[i * MODEL_NPARAM + j] * b[i * MODEL_NPARAM + j];
        }
    }
    for (int j = 0; j < MODEL_NPARAM; j++) {
        norm[j] = sqrt(norm[j]);
        if (norm[j] > 0)
            for (size_t i = 0; i < m; i++) b[i * MODEL_NPARAM + j] /= norm[j];
    }
}

/* Which used columns the earlier ones explain (modified Gram-Schmidt). */
static void find_dependent(const double *b, size_t m, const int *use, int *dep)
{
    double *q = malloc(m * MODEL_NPARAM * sizeof *q);
    int nq = 0;
    for (int o = 0; o < MODEL_NPARAM; o++) {
        int j = order[o];
        dep[j] = 0;
        if (!use[j]) continue;
        double *v = q ? q + (size_t)nq * m : NULL;
        if (!v) {
            dep[j] = 0;
            continue;
        }
        for (size_t i = 0; i < m; i++) v[i] = b[i * MODEL_NPARAM + j];
        for (int k = 0; k < nq; k++) {
            double d = 0;
            for (size_t i = 0; i < m; i++) d += q[(size_t)k * m + i] * v[i];
            for (size_t i = 0; i < m; i++) v[i] -= d * q[(size_t)k * m + i];
        }
        double r = 0;
        for (size_t i = 0; i < m; i++) r += v[i] * v[i];
        r = sqrt(r);
        if (r < DEPENDENT_TOL) {
            dep[j] = 1;
            continue;
        }
        for (size_t i = 0; i < m; i++) v[i] /= r;
        nq++;
    }
    free(q);
}

/* Least squares on the used columns: theta (unscaled) and se; -1 when singular. */
static int solve(const double *b, const double *y, const double *norm, size_t m, const int *use,
                 double *theta, double *se)
{
    int idx[MODEL_NPARAM], k = 0;
    for (int j = 0; j < MODEL_NPARAM; j++) {
        theta[j] = se[j] = 0;
        if (use[j]) idx[k++] = j;
    }
    double n[MODEL_NPARAM * MODEL_NPARAM], inv[MODEL_NPARAM * MODEL_NPARAM], rhs[MODEL_NPARAM];
    for (int a = 0; a < k; a++) {
        rhs[a] = 0;
        for (size_t i = 0; i < m; i++) rhs[a] += b[i * MODEL_NPARAM + idx[a]] * y[i];
        for (int c = 0; c < k; c++) {
            double t = 0;
            for (size_t i = 0; i < m; i++)
                t += b[i * MODEL_NPARAM + idx[a]] * b[i * MODEL_NPARAM + idx[c]];
            n[a * k + c] = t;
        }
    }
    if (invert(n, inv, k)) return -1;
    double x[MODEL_NPARAM];
    for (int a = 0; a < k; a++) {
        x[a] = 0;
        for (int c = 0; c < k; c++) x[a] += inv[a * k + c] * rhs[c];
    }
    double rss = 0;
    for (size_t i = 0; i < m; i++) {
        double r = y[i];
        for (int a = 0; a < k; a++) r -= b[i * MODEL_NPARAM + idx[a]] * x[a];
        rss += r * r;
    }
    size_t used = 0; /* rows the robust weights left in */
    for (size_t i = 0; i < m; i++) used += y[i] > 0;
    double s2 = used > (size_t)k ? rss / (double)(used - (size_t)k) : 0;
    for (int a = 0; a < k; a++) {
        theta[idx[a]] = x[a] / norm[idx[a]];
        se[idx[a]] = sqrt(s2 * inv[a * k + a]) / norm[idx[a]];
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double model_median(double *v, size_t n)
{
    if (n == 0) return NAN;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void residuals(model_series *s)
{
    double *r = malloc((s->npts ? s->npts : 1) * sizeof *r);
    s->max_abs_res = 0;
    for (size_t i = 0; i < s->npts; i++) {
        model_shape sh = shape_of(s, &s->pts[i]);
        s->pts[i].model_us = model_time_us(&sh, s->theta);
        double e = fabs(s->pts[i].model_us - s->pts[i].measured_us) / s->pts[i].measured_us;
        if (r) r[i] = e;
        if (e > s->max_abs_res) s->max_abs_res = e;
    }
    s->med_abs_res = r ? model_median(r, s->npts) : NAN;
    free(r);
}

__attribute__((format(printf, 2, 3))) static void refuse(model_series *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->why, sizeof s->why, fmt, ap);
    va_end(ap);
    s->ok = 0;
}

/* Whether the points have two different sizes (a scan, not a count: series of
 * thousands of sizes must not cost n^2). */
static int two_sizes(const model_series *s)
{
    for (size_t i = 1; i < s->npts; i++)
        if (s->pts[i].bytes != s->pts[0].bytes) return 1;
    return 0;
}

/* One weighted fit of s with the points' current weights. */
static void fit_once(model_series *s)
{
    size_t m = s->npts;
    s->ok = 0;
    s->why[0] = 0;
    for (int j = 0; j < MODEL_NPARAM; j++) s->state[j] = MODEL_P_ABSENT, s->theta[j] = s->se[j] = 0;
    if (m == 0) return refuse(s, "no usable rows");
    for (size_t i = 0; i < m; i++) {
        model_shape sh = shape_of(s, &s->pts[i]);
        double c[MODEL_NPARAM];
        if (model_coeffs(&sh, NULL, c))
            return refuse(s, "no cost formula for %s with algorithm '%s'", s->collective, s->algo);
    }
    double *b = malloc(m * (MODEL_NPARAM + 1) * sizeof *b), *y = b ? b + m * MODEL_NPARAM : NULL;
    if (!b) return refuse(s, "out of memory");
    double norm[MODEL_NPARAM], prev[MODEL_NPARAM], *theta_in = NULL;
    int use[MODEL_NPARAM], dep[MODEL_NPARAM];
    /* The pipeline's slower stage depends on theta: refit until it settles. */
    for (int iter = 0; iter < 10; iter++) {
        design(s, theta_in, b, y, norm);
        for (int j = 0; j < MODEL_NPARAM; j++) {
            use[j] = norm[j] > 0;
            s->state[j] = use[j] ? MODEL_P_FITTED : MODEL_P_ABSENT;
        }
        if (!use[MODEL_ALPHA_INTRA] && !use[MODEL_BETA_INTRA] && !use[MODEL_ALPHA_INTER] &&
            !use[MODEL_BETA_INTER]) {
            free(b);
            return refuse(s, "the rows move nothing (one rank each)");
        }
        int per_byte = use[MODEL_BETA_INTRA] || use[MODEL_BETA_INTER] || use[MODEL_GAMMA];
        if (per_byte && !two_sizes(s)) {
            free(b);
            return refuse(
                s,
                "only one message size (%.0f B) measured: per-message and per-byte "
                "costs cannot be told apart; measure at least 2 sizes (e.g. --sizes 64K,1M,16M)",
                s->pts[0].bytes);
        }
        find_dependent(b, m, use, dep);
        for (int j = 0; j < MODEL_NPARAM; j++) {
            if (!dep[j]) continue;
            if (j == MODEL_GAMMA) {
                use[j] = 0;
                s->state[j] = MODEL_P_MERGED;
                continue;
            }
            if (j == MODEL_BETA_MEM) { /* the knot's sizes tell it apart from beta_intra or not */
                use[j] = 0;
                s->state[j] = MODEL_P_ZERO;
                continue;
            }
            free(b);
            return refuse(
                s,
                "%s cannot be told apart from the other terms with these rows: measure "
                "more process counts, and for intra- and inter-host terms rows on one host "
                "and on several hosts (or other ranks per host)",
                model_param_name((model_param)j));
        }
        size_t k = 0, used = 0;
        for (int j = 0; j < MODEL_NPARAM; j++) k += (size_t)use[j];
        for (size_t i = 0; i < m; i++) used += s->pts[i].weight > 0;
        if (used < k + 1) {
            free(b);
            return refuse(s,
                          "%zu rows%s for %zu parameters: need at least %zu (more sizes or process "
                          "counts) to fit them and say how certain they are",
                          used, used < m ? " (the others too far off the rest)" : "", k, k + 1);
        }
        /* Below zero means the term is lost in the noise: hold it at 0. */
        for (;;) {
            if (solve(b, y, norm, m, use, s->theta, s->se)) {
                free(b);
                return refuse(s, "the rows give a singular system (no fit)");
            }
            int worst = -1;
            for (int j = 0; j < MODEL_NPARAM; j++)
                if (use[j] && s->theta[j] < 0 &&
                    (worst < 0 || s->theta[j] / norm[j] < s->theta[worst] / norm[worst]))
                    worst = j;
            if (worst < 0) break;
            use[worst] = 0;
            s->state[worst] = MODEL_P_ZERO;
        }
        if (theta_in && !memcmp(prev, s->theta, sizeof prev)) break;
        memcpy(prev, s->theta, sizeof prev);
        theta_in = prev;
    }
    free(b);
    s->ok = 1;
    residuals(s);
}

/* Tukey's bisquare: rows beyond BISQUARE_C robust standard deviations of the
 * relative residuals (1.4826 x their median absolute value) get weight 0;
 * MIN_SCALE keeps a near-perfect fit from calling 1% off an outlier. */
#define BISQUARE_C 4.685
#define MIN_SCALE 0.02
#define ROBUST_ROUNDS 8

/* Rounds of least absolute deviation (weights 1/|residual|) that start the
 * bisquare from a fit a third of wild rows cannot drag along, as they drag
 * least squares. */
#define LAD_ROUNDS 10
#define LAD_FLOOR 0.005

/* The symmetric relative residual |model - measured| / sqrt(model x measured),
 * with the scale of the next round set from it. */
static double sym_residual(model_point *p)
{
    double m = fmax(p->model_us, 1e-3 * p->measured_us);
    p->scale_us = sqrt(m * p->measured_us);
    return fabs(m - p->measured_us) / p->scale_us;
}

static void fit_robust(model_series *s)
{
    for (size_t i = 0; i < s->npts; i++)
        s->pts[i].weight = 1, s->pts[i].scale_us = s->pts[i].measured_us;
    fit_once(s);
    for (int round = 0; s->ok && round < LAD_ROUNDS; round++) {
        for (size_t i = 0; i < s->npts; i++)
            s->pts[i].weight = 1 / fmax(LAD_FLOOR, sym_residual(&s->pts[i]));
        fit_once(s);
    }
    if (!s->ok) { /* the weights made columns look dependent: the plain fit stands */
        for (size_t i = 0; i < s->npts; i++)
            s->pts[i].weight = 1, s->pts[i].scale_us = s->pts[i].measured_us;
        fit_once(s);
    }
    for (size_t i = 0; i < s->npts; i++) s->pts[i].weight = 1;
    double *r = malloc((s->npts ? s->npts : 1) * sizeof *r);
    for (int round = 0; r && s->ok && round < ROBUST_ROUNDS; round++) {
        for (size_t i = 0; i < s->npts; i++) r[i] = sym_residual(&s->pts[i]);
        double *sorted = malloc(s->npts * sizeof *sorted);
        if (!sorted) break;
        memcpy(sorted, r, s->npts * sizeof *r);
        qsort(sorted, s->npts, sizeof *sorted, cmp_double);
        double scale = fmax(MIN_SCALE, 1.4826 * sorted[s->npts / 2]);
        free(sorted);
        double change = 0;
        for (size_t i = 0; i < s->npts; i++) {
            double u = r[i] / (BISQUARE_C * scale), w = u < 1 ? (1 - u * u) * (1 - u * u) : 0;
            change = fmax(change, fabs(w - s->pts[i].weight));
            r[i] = s->pts[i].weight; /* kept: a round that leaves too little goes back */
            s->pts[i].weight = w;
        }
        if (change < 1e-3) break;
        fit_once(s);
        if (!s->ok) {
            for (size_t i = 0; i < s->npts; i++) s->pts[i].weight = r[i];
            fit_once(s);
            break;
        }
    }
    free(r);
}

/* Distinct sizes of s at or below k (above: 1, more than k). */
static size_t sizes_beside(const model_series *s, double k, int above)
{
    size_t d = 0;
    for (size_t i = 0; i < s->npts; i++) {
        double b = s->pts[i].bytes;
        if ((b > k) != above) continue;
        size_t j = 0;
        while (j < i && s->pts[j].bytes != b) j++;
        d += j == i;
    }
    return d;
}

/* A cache knot must lower the in-sample median residual by this fraction to
 * be kept: one more parameter always fits a little better. */
#define KNOT_GAIN 0.9

void model_fit_series(model_series *s)
{
    s->cache_bytes = 0;
    fit_robust(s);
    int one_host = 0;
    for (size_t i = 0; i < s->npts; i++) one_host |= s->pts[i].hosts == 1;
    if (!s->ok || !one_host) return;
    /* The knot: the power of two within the sizes measured that explains the
     * rows best, if any does (at most 40 fits, however many sizes). */
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < s->npts; i++)
        if (s->pts[i].bytes > 0) lo = fmin(lo, s->pts[i].bytes), hi = fmax(hi, s->pts[i].bytes);
    double best = 0, best_res = KNOT_GAIN * s->med_abs_res;
    for (double k = exp2(ceil(log2(lo))); hi > 0 && k <= hi && k < 0x1p40; k *= 2) {
        /* two sizes on each side, or the knot only renames beta_intra */
        if (sizes_beside(s, k, 0) < 2 || sizes_beside(s, k, 1) < 2) continue;
        s->cache_bytes = k;
        fit_robust(s);
        if (s->ok && s->state[MODEL_BETA_MEM] == MODEL_P_FITTED &&
            s->state[MODEL_BETA_INTRA] == MODEL_P_FITTED && s->med_abs_res < best_res)
            best = k, best_res = s->med_abs_res;
    }
    s->cache_bytes = best;
    fit_robust(s);
}

double model_series_time_us(const model_series *s, int hosts, int per_host, double bytes,
                            const double *theta)
{
    if (!s->ok) return NAN;
    model_point p = {.hosts = hosts,
                     .per_host = per_host,
                     .bytes = bytes,
                     .share = model_share(hosts * per_host, s->cores)};
    model_shape sh = shape_of(s, &p);
    double c[MODEL_NPARAM];
    if (model_coeffs(&sh, theta ? theta : s->theta, c)) return NAN;
    /* a term the rows never exercised cannot be predicted from this fit */
    if (!theta)
        for (int j = 0; j < MODEL_NPARAM; j++)
            if (c[j] != 0 && s->state[j] == MODEL_P_ABSENT) return NAN;
    return model_time_us(&sh, theta ? theta : s->theta);
}

/* ---- grouping rows into series ---- */

static int same_key(const model_series *s, const bench_row *r)
{
    return !strcmp(s->host, r->host) && !strcmp(s->backend, r->backend) &&
           !strcmp(s->buffers, r->buffers) && !strcmp(s->collective, r->collective) &&
           !strcmp(s->algo, r->algo) && !strcmp(s->dtype, r->dtype);
}

static double row_time(const bench_row *r)
{
    return isfinite(r->time_us_p50) && r->time_us_p50 > 0 ? r->time_us_p50 : r->time_us_avg;
}

#define COPY(dst, src) snprintf((dst), sizeof(dst), "%s", (src))

double model_share(int ranks, int cores)
{
    return cores > 0 && ranks > cores ? (double)ranks / cores : 1;
}

static int host_cores(const char *host, int cores, const model_host_cores *hosts, size_t nhosts)
{
    for (size_t i = 0; !cores && i < nhosts; i++)
        if (!strcmp(hosts[i].host, host)) cores = hosts[i].cores;
    return cores;
}

int model_fit_rows(const bench_row *rows, size_t n, int cores, const model_host_cores *hosts,
                   size_t nhosts, model_fits *out)
{
    *out = (model_fits){0};
    size_t cap = 0;
    for (size_t i = 0; i < n; i++) {
        const bench_row *r = &rows[i];
        double t = row_time(r);
        if (r->wrong > 0 || !(t > 0) || !isfinite(t) || r->nprocs < 2 || r->nnodes < 1 ||
            r->nprocs % r->nnodes) {
            out->skipped++;
            continue;
        }
        size_t k = 0;
        while (k < out->n && !same_key(&out->s[k], r)) k++;
        if (k == out->n) {
            if (out->n == cap) {
                size_t nc = cap ? 2 * cap : 8;
                model_series *ns = realloc(out->s, nc * sizeof *ns);
                if (!ns) return model_fits_free(out), COLL_ENOMEM;
                out->s = ns, cap = nc;
            }
            model_series *s = &out->s[out->n++];
            memset(s, 0, sizeof *s);
            COPY(s->host, r->host);
            COPY(s->backend, r->backend);
            COPY(s->buffers, r->buffers);
            COPY(s->collective, r->collective);
            COPY(s->algo, r->algo);
            COPY(s->dtype, r->dtype);
            s->cores = host_cores(r->host, cores, hosts, nhosts);
            int a = model_algo_parse(r->algo);
            s->model = a < 0 ? MODEL_ALGO_COUNT : (model_algo)a;
        }
        model_series *s = &out->s[k];
        model_point *np = realloc(s->pts, (s->npts + 1) * sizeof *np);
        if (!np) return model_fits_free(out), COLL_ENOMEM;
        s->pts = np;
        s->pts[s->npts++] = (model_point){.hosts = r->nnodes,
                                          .per_host = r->nprocs / r->nnodes,
                                          .bytes = (double)r->bytes,
                                          .measured_us = t,
                                          .share = model_share(r->nprocs, s->cores),
                                          .weight = 1,
                                          .scale_us = t};
    }
    for (size_t k = 0; k < out->n; k++) model_fit_series(&out->s[k]);
    /* the auto backend's inter-host stack is tcp's (src/backend/auto/auto.c) */
    for (size_t k = 0; k < out->n; k++) {
        model_series *a = &out->s[k];
        if (strcmp(a->backend, "auto")) continue;
        for (size_t j = 0; j < out->n && !a->stack; j++) {
            const model_series *t = &out->s[j];
            if (!strcmp(t->backend, "tcp") && !strcmp(t->host, a->host) &&
                !strcmp(t->buffers, a->buffers) && !strcmp(t->collective, a->collective) &&
                !strcmp(t->dtype, a->dtype) && t->ok)
                a->stack = t;
        }
    }
    return 0;
}

void model_fits_free(model_fits *f)
{
    for (size_t k = 0; k < f->n; k++) free(f->s[k].pts);
    free(f->s);
    *f = (model_fits){0};
}
