/* Held-out validation (src/costmodel/model_xval.c): rows that follow the
 * formula are predicted within their noise when a process count is left out;
 * rows whose largest count is slower than the formula say (and are not
 * trusted); rows of one count have nothing to hold out; cores recorded per
 * host reach the fit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "costmodel/model_xval.h"

#define MAXROWS 64

static bench_row rows[MAXROWS];
static size_t nrows;

static const double theta[MODEL_NPARAM] = {[MODEL_ALPHA_INTRA] = 5, [MODEL_BETA_INTRA] = 5e-4};

/* A ring all-reduce row at ranks on one host; slow multiplies its time. */
static void add(int ranks, double bytes, double slow)
{
    assert_true(nrows < MAXROWS);
    bench_row *r = &rows[nrows++];
    memset(r, 0, sizeof *r);
    strcpy(r->host, "vm");
    strcpy(r->collective, "allreduce");
    strcpy(r->backend, "tcp");
    strcpy(r->algo, "ring");
    strcpy(r->buffers, "malloc");
    strcpy(r->dtype, "float32");
    r->nprocs = ranks;
    r->nnodes = 1;
    r->bytes = (uint64_t)bytes;
    model_shape s = {"allreduce", MODEL_ALGO_RING, "tcp", 1, ranks, bytes, 1, 0};
    r->time_us_p50 = r->time_us_avg = model_time_us(&s, theta) * slow;
}

static void grid(const int *ranks, size_t nr, double slow_at_last)
{
    nrows = 0;
    for (size_t k = 0; k < nr; k++)
        for (double b = 65536; b <= 16777216; b *= 4)
            add(ranks[k], b, k + 1 == nr ? slow_at_last : 1);
}

static void fit(model_fits *f, int cores, const model_host_cores *hc, size_t nhc)
{
    assert_int_equal(model_fit_rows(rows, nrows, cores, hc, nhc, f), 0);
    assert_int_equal(model_xval_fits(f), 0);
    assert_int_equal(f->n, 1);
    assert_true(f->s[0].ok);
}

static void test_formula_rows_trusted(void **state)
{
    (void)state;
    static const int ranks[] = {2, 3, 4};
    grid(ranks, 3, 1);
    model_fits f;
    fit(&f, 0, NULL, 0);
    const model_xval *x = &f.s[0].xval;
    assert_int_equal(x->nfolds, 3); /* 3 process counts; one host count: no host folds */
    assert_int_equal(x->n, nrows);
    assert_true(x->med_err < 0.01 && x->max_err < 0.01);
    assert_true(model_xval_trusted(&f.s[0]));
    char why[160];
    model_xval_why_not(&f.s[0], why, sizeof why);
    assert_string_equal(why, "");
    assert_string_equal(x->folds[2].fit, "2,3 -> 4 ranks");
    model_fits_free(&f);
}

static void test_slow_count_not_trusted(void **state)
{
    (void)state;
    static const int ranks[] = {2, 3, 4};
    grid(ranks, 3, 2.5); /* 4 ranks 2.5x the formula: what oversubscription did */
    model_fits f;
    fit(&f, 0, NULL, 0);
    const model_xval *x = &f.s[0].xval;
    assert_false(model_xval_trusted(&f.s[0]));
    assert_int_equal(x->folds[x->worst].value, 4);
    assert_true(x->folds[x->worst].med_err > 0.5);
    char why[160];
    model_xval_why_not(&f.s[0], why, sizeof why);
    assert_non_null(strstr(why, "(fit 2,3 -> 4 ranks: "));
    assert_true(strncmp(why, "held-out error ", 15) == 0);
    model_fits_free(&f);
}

static void test_one_count_nothing_to_hold_out(void **state)
{
    (void)state;
    static const int ranks[] = {2};
    grid(ranks, 1, 1);
    model_fits f;
    fit(&f, 0, NULL, 0);
    assert_int_equal(f.s[0].xval.nfolds, 0);
    assert_false(model_xval_trusted(&f.s[0]));
    char why[160];
    model_xval_why_not(&f.s[0], why, sizeof why);
    assert_string_equal(why, "one process count and one host count: nothing to hold out");
    model_fits_free(&f);
}

static void test_cores_per_host(void **state)
{
    (void)state;
    static const int ranks[] = {2, 4};
    grid(ranks, 2, 1);
    model_fits f;
    model_host_cores hc[] = {{"other", 8}, {"vm", 2}};
    fit(&f, 0, hc, 2);
    assert_int_equal(f.s[0].cores, 2);
    for (size_t i = 0; i < f.s[0].npts; i++)
        assert_true(f.s[0].pts[i].share == (f.s[0].pts[i].per_host == 4 ? 2.0 : 1.0));
    model_fits_free(&f);
    fit(&f, 4, hc, 2); /* --cores wins over what was recorded */
    assert_int_equal(f.s[0].cores, 4);
    model_fits_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_formula_rows_trusted),
        cmocka_unit_test(test_slow_count_not_trusted),
        cmocka_unit_test(test_one_count_nothing_to_hold_out),
        cmocka_unit_test(test_cores_per_host),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
