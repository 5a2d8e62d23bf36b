/* The report's spread rule: p25-p75 where recorded, min-p99 for older rows
 * (and when one row lacks p25/p75), unknown without either; a difference only
 * where the two ranges do not overlap. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "report/report_spread.h"

static bench_row row(double min, double p25, double p50, double p75, double p99)
{
    bench_row r;
    memset(&r, 0, sizeof r);
    r.time_us_avg = p50;
    r.time_us_min = min;
    r.time_us_p25 = p25;
    r.time_us_p50 = p50;
    r.time_us_p75 = p75;
    r.time_us_p99 = p99;
    return r;
}

static void test_iqr_apart_differs(void **state)
{
    (void)state;
    bench_row a = row(80, 95, 100, 105, 300), b = row(150, 190, 200, 210, 400);
    spread_kind k;
    /* min-p99 would overlap (80-300 and 150-400): the interquartile range decides. */
    assert_int_equal(report_rows_differ(&a, &b, &k), DIFFERS);
    assert_int_equal(k, SPREAD_IQR);
    assert_int_equal(report_rows_differ(&b, &a, &k), DIFFERS);
}

static void test_iqr_overlap_is_noise(void **state)
{
    (void)state;
    bench_row a = row(900, 1000, 1100, 1600, 2000), b = row(1100, 1200, 1540, 1900, 2500);
    spread_kind k;
    assert_int_equal(report_rows_differ(&a, &b, &k), WITHIN_NOISE);
    assert_int_equal(k, SPREAD_IQR);
}

static void test_old_rows_use_min_p99(void **state)
{
    (void)state;
    bench_row a = row(4.5, NAN, 5, NAN, 6), b = row(5.5, NAN, 8, NAN, 9);
    spread_kind k;
    assert_int_equal(report_rows_differ(&a, &b, &k), WITHIN_NOISE);
    assert_int_equal(k, SPREAD_MIN_P99);
    b = row(7, NAN, 8, NAN, 9);
    assert_int_equal(report_rows_differ(&a, &b, &k), DIFFERS);
}

static void test_mixed_rows_compare_min_p99(void **state)
{
    (void)state;
    /* a's p25-p75 (95-105) is apart from b's p50, but b has only min-p99
     * (100-400): both are judged by min-p99, which overlap. */
    bench_row a = row(90, 95, 100, 105, 120), b = row(100, NAN, 200, NAN, 400);
    spread_kind k;
    assert_int_equal(report_rows_differ(&a, &b, &k), WITHIN_NOISE);
    assert_int_equal(k, SPREAD_MIN_P99);
}

static void test_no_spread_is_unknown(void **state)
{
    (void)state;
    bench_row a = row(0, NAN, 5, NAN, NAN), b = row(0, NAN, 50, NAN, NAN);
    spread_kind k;
    assert_int_equal(report_rows_differ(&a, &b, &k), SPREAD_UNKNOWN_VERDICT);
    assert_int_equal(k, SPREAD_UNKNOWN);
    assert_string_equal(report_spread_name(k), "unknown");
}

static void test_time_is_median_else_average(void **state)
{
    (void)state;
    bench_row a = row(1, 2, 3, 4, 5);
    a.time_us_avg = 10;
    assert_true(report_row_time(&a) == 3);
    a.time_us_p50 = NAN;
    assert_true(report_row_time(&a) == 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_iqr_apart_differs),
        cmocka_unit_test(test_iqr_overlap_is_noise),
        cmocka_unit_test(test_old_rows_use_min_p99),
        cmocka_unit_test(test_mixed_rows_compare_min_p99),
        cmocka_unit_test(test_no_spread_is_unknown),
        cmocka_unit_test(test_time_is_median_else_average),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
