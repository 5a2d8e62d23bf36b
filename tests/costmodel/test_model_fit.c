/* Fitting (src/costmodel/model_fit.c): rows made from known parameters with
 * noise are fitted back within tolerance; rows that cannot determine the
 * parameters are refused with a reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "costmodel/model_fit.h"

#define MAXROWS 256

typedef struct rows {
    bench_row r[MAXROWS];
    size_t n;
    uint64_t seed;
} rows;

/* Deterministic noise in [-amp, amp]. */
static double noise(rows *t, double amp)
{
    t->seed = t->seed * 6364136223846793005ull + 1442695040888963407ull;
    return amp * (2.0 * (double)(t->seed >> 11) / 9007199254740992.0 - 1);
}

static void add(rows *t, const char *backend, const char *algo, int hosts, int per_host,
                double bytes, const double theta[MODEL_NPARAM], double amp)
{
    assert_true(t->n < MAXROWS);
    bench_row *r = &t->r[t->n++];
    memset(r, 0, sizeof *r);
    strcpy(r->host, "vm");
    strcpy(r->collective, "allreduce");
    strcpy(r->backend, backend);
    strcpy(r->algo, algo);
    strcpy(r->buffers, "malloc");
    strcpy(r->dtype, "float32");
    r->nprocs = hosts * per_host;
    r->nnodes = hosts;
    r->bytes = (uint64_t)bytes;
    model_shape s = {"allreduce", (model_algo)model_algo_parse(algo),
                     backend,     hosts,
                     per_host,    bytes,
                     1,           0};
    r->time_us_p50 = model_time_us(&s, theta) * (1 + noise(t, amp));
    r->time_us_avg = r->time_us_p50;
}

static void near(const model_series *s, model_param p, double want, double tol)
{
    double got = s->theta[p];
    if (!(fabs(got - want) <= tol * want)) {
        print_error("%s: got %g, want %g within %.0f%%\n", model_param_name(p), got, want,
                    100 * tol);
        fail();
    }
}

/* Within k standard errors: the uncertainty the fit states is honest. */
static void within_se(const model_series *s, model_param p, double want, double k)
{
    double got = s->theta[p], se = s->se[p];
    if (!(se > 0 && fabs(got - want) <= k * se)) {
        print_error("%s: got %g ± %g, want %g within %g standard errors\n", model_param_name(p),
                    got, se, want, k);
        fail();
    }
}

static const double sizes[] = {65536, 262144, 1048576, 4194304, 16777216, 67108864};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static void test_ring_one_host(void **state)
{
    (void)state;
    static rows t = {.seed = 1};
    t.n = 0;
    const double theta[MODEL_NPARAM] = {20, 5e-4, 2e-4, 0, 0};
    for (int p = 2; p <= 4; p++)
        for (size_t i = 0; i < NSIZES; i++) add(&t, "tcp", "ring", 1, p, sizes[i], theta, 0.03);
    model_fits f;
    assert_int_equal(model_fit_rows(t.r, t.n, 0, NULL, 0, &f), 0);
    assert_int_equal(f.n, 1);
    const model_series *s = &f.s[0];
    if (!s->ok) print_error("refused: %s\n", s->why);
    assert_true(s->ok);
    /* beta and gamma are proportional in every ring row: gamma's share goes to beta */
    assert_int_equal(s->state[MODEL_GAMMA], MODEL_P_MERGED);
    near(s, MODEL_ALPHA_INTRA, 20, 0.25);
    near(s, MODEL_BETA_INTRA, 5e-4 + 2e-4 / 2, 0.05);
    assert_int_equal(s->state[MODEL_ALPHA_INTER], MODEL_P_ABSENT);
    assert_true(s->se[MODEL_BETA_INTRA] > 0 &&
                s->se[MODEL_BETA_INTRA] < 0.05 * s->theta[MODEL_BETA_INTRA]);
    assert_true(s->max_abs_res < 0.08);
    /* the series' own prediction at a measured point is the model's */
    double t4 = model_series_time_us(s, 1, 4, 1048576, NULL);
    assert_true(fabs(t4 - s->pts[2 * NSIZES + 2].model_us) < 1e-9 * t4);
    /* no inter-host terms were fitted: two hosts cannot be predicted from them */
    assert_true(isnan(model_series_time_us(s, 2, 2, 1048576, NULL)));
    model_fits_free(&f);
}

/* The auto backend on one host, hierarchical on 2 and 3 hosts with 2 and 3
 * ranks each, flat with one: all five parameters, gamma included, apart. */
static void test_auto_all_terms(void **state)
{
    (void)state;
    static rows t = {.seed = 7};
    t.n = 0;
    const double theta[MODEL_NPARAM] = {5, 1e-4, 3e-4, 100, 8e-3};
    static const int shapes[][2] = {{1, 2}, {1, 4}, {2, 1}, {3, 1}, {2, 2}, {2, 3}, {3, 2}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
        for (size_t i = 0; i < NSIZES; i++)
            add(&t, "auto", "auto", shapes[k][0], shapes[k][1], sizes[i], theta, 0.02);
    model_fits f;
    assert_int_equal(model_fit_rows(t.r, t.n, 0, NULL, 0, &f), 0);
    assert_int_equal(f.n, 1);
    const model_series *s = &f.s[0];
    if (!s->ok) print_error("refused: %s\n", s->why);
    assert_true(s->ok);
    for (int p = 0; p < MODEL_BETA_MEM; p++) assert_int_equal(s->state[p], MODEL_P_FITTED);
    /* rows without a cache effect: no knot invented */
    assert_true(s->cache_bytes == 0);
    assert_int_equal(s->state[MODEL_BETA_MEM], MODEL_P_ABSENT);
    near(s, MODEL_ALPHA_INTER, 100, 0.25);
    near(s, MODEL_BETA_INTER, 8e-3, 0.10);
    /* beta_intra and gamma share the host's part of each row, small beside
     * the link's: less certain, but the fit says how much */
    within_se(s, MODEL_BETA_INTRA, 1e-4, 3);
    within_se(s, MODEL_GAMMA, 3e-4, 3);
    near(s, MODEL_GAMMA, 3e-4, 0.5);
    model_fits_free(&f);
}

/* Rows whose bytes cost more once 1 MiB of buffers per core is passed, at 2,
 * 3, 4 and 6 ranks on 2 cores: the fit finds the knot and beta_mem. */
static void test_cache_knot(void **state)
{
    (void)state;
    static rows t = {.seed = 11};
    t.n = 0;
    const double theta[MODEL_NPARAM] = {
        [MODEL_ALPHA_INTRA] = 10, [MODEL_BETA_INTRA] = 2e-4, [MODEL_BETA_MEM] = 5e-4};
    static const int ranks[] = {2, 3, 4, 6};
    for (size_t k = 0; k < 4; k++)
        for (size_t i = 0; i < NSIZES; i++) {
            add(&t, "tcp", "ring", 1, ranks[k], sizes[i], theta, 0);
            bench_row *r = &t.r[t.n - 1];
            model_shape sh = {"allreduce", MODEL_ALGO_RING,          "tcp",  1, ranks[k],
                              sizes[i],    model_share(ranks[k], 2), 1048576};
            r->time_us_p50 = r->time_us_avg = model_time_us(&sh, theta) * (1 + noise(&t, 0.02));
        }
    model_fits f;
    assert_int_equal(model_fit_rows(t.r, t.n, 2, NULL, 0, &f), 0);
    const model_series *s = &f.s[0];
    assert_true(s->ok);
    assert_true(s->cache_bytes == 1048576);
    near(s, MODEL_BETA_INTRA, 2e-4, 0.1);
    near(s, MODEL_BETA_MEM, 5e-4, 0.1);
    model_fits_free(&f);
}

static const model_series *fit_one(rows *t, model_fits *f)
{
    assert_int_equal(model_fit_rows(t->r, t->n, 0, NULL, 0, f), 0);
    assert_int_equal(f->n, 1);
    return &f->s[0];
}

static void expect_refused(rows *t, const char *why)
{
    model_fits f;
    const model_series *s = fit_one(t, &f);
    assert_false(s->ok);
    if (!strstr(s->why, why)) print_error("why: '%s', want '%s'\n", s->why, why);
    assert_non_null(strstr(s->why, why));
    model_fits_free(&f);
}

static void test_refusals(void **state)
{
    (void)state;
    static rows t = {.seed = 3};
    const double theta[MODEL_NPARAM] = {20, 5e-4, 2e-4, 50, 8e-3};
    /* one size at several process counts */
    t.n = 0;
    for (int p = 2; p <= 4; p++) add(&t, "tcp", "ring", 1, p, 1048576, theta, 0.01);
    expect_refused(&t, "only one message size");
    /* two rows for two parameters: nothing left to judge the fit by */
    t.n = 0;
    add(&t, "tcp", "ring", 1, 2, 65536, theta, 0.01);
    add(&t, "tcp", "ring", 1, 2, 1048576, theta, 0.01);
    expect_refused(&t, "need at least 3");
    /* hierarchical rows of one shape: intra- and inter-host alpha are one number */
    t.n = 0;
    for (size_t i = 0; i < 4; i++) add(&t, "auto", "auto", 2, 2, sizes[i], theta, 0.01);
    expect_refused(&t, "cannot be told apart");
    /* an algorithm the collective does not have */
    t.n = 0;
    for (size_t i = 0; i < 4; i++) add(&t, "tcp", "ring", 1, 2, sizes[i], theta, 0.01);
    strcpy(t.r[0].algo, "tree");
    strcpy(t.r[1].algo, "tree");
    strcpy(t.r[2].algo, "tree");
    strcpy(t.r[3].algo, "tree");
    expect_refused(&t, "no cost formula");
}

/* Two rows a busy machine made 5x and 20x slower: the robust weights drop
 * them, and the rest is fitted as if they were not there. */
static void test_outliers(void **state)
{
    (void)state;
    static rows t = {.seed = 11};
    t.n = 0;
    const double theta[MODEL_NPARAM] = {20, 5e-4, 0, 0, 0};
    for (int p = 2; p <= 4; p++)
        for (size_t i = 0; i < NSIZES; i++) add(&t, "tcp", "ring", 1, p, sizes[i], theta, 0.02);
    t.r[3].time_us_p50 *= 5;
    t.r[9].time_us_p50 *= 20;
    model_fits f;
    const model_series *s = fit_one(&t, &f);
    assert_true(s->ok);
    near(s, MODEL_ALPHA_INTRA, 20, 0.25);
    near(s, MODEL_BETA_INTRA, 5e-4, 0.05);
    assert_true(s->pts[3].weight == 0 && s->pts[9].weight == 0);
    assert_true(s->pts[0].weight > 0.5);
    model_fits_free(&f);
}

static void test_rows_left_out(void **state)
{
    (void)state;
    static rows t = {.seed = 5};
    const double theta[MODEL_NPARAM] = {20, 5e-4, 0, 0, 0};
    t.n = 0;
    for (size_t i = 0; i < 4; i++) add(&t, "tcp", "ring", 1, 2, sizes[i], theta, 0.0);
    add(&t, "tcp", "ring", 1, 2, 65536, theta, 0);
    t.r[t.n - 1].wrong = 3; /* wrong results */
    add(&t, "tcp", "ring", 1, 2, 65536, theta, 0);
    t.r[t.n - 1].nprocs = 1; /* nothing communicated */
    model_fits f;
    const model_series *s = fit_one(&t, &f);
    assert_int_equal(f.skipped, 2);
    assert_int_equal(s->npts, 4);
    assert_true(s->ok);
    near(s, MODEL_ALPHA_INTRA, 20, 1e-6);
    near(s, MODEL_BETA_INTRA, 5e-4, 1e-6);
    model_fits_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_one_host), cmocka_unit_test(test_auto_all_terms),
        cmocka_unit_test(test_refusals),      cmocka_unit_test(test_outliers),
        cmocka_unit_test(test_rows_left_out), cmocka_unit_test(test_cache_knot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
