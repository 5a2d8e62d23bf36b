/* Summary statistics: hand-computed values, numpy's percentile convention,
 * and the caller's samples left in their order. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "engine/stats.h"

#define assert_near(a, b) assert_true(fabs((a) - (b)) < 1e-9)

static void test_known_sample(void **state)
{
    (void)state;
    const double s[] = {1, 2, 3, 4, 5};
    bench_stats st;
    bench_stats_compute(s, 5, &st);
    assert_near(st.avg, 3.0);
    assert_near(st.min, 1.0);
    assert_near(st.max, 5.0);
    assert_near(st.p50, 3.0);
    assert_near(st.p99, 4.96); /* rank 0.99*4 = 3.96: 4 + 0.96*(5-4) */
}

static void test_interpolation_even_count(void **state)
{
    (void)state;
    const double s[] = {40, 10, 30, 20};
    bench_stats st;
    bench_stats_compute(s, 4, &st);
    assert_near(st.avg, 25.0);
    assert_near(st.p50, 25.0); /* rank 1.5 between 20 and 30 */
    assert_near(st.p99, 39.7); /* rank 2.97: 30 + 0.97*10 */
    assert_near(st.min, 10.0);
    assert_near(st.max, 40.0);
}

static void test_hundred_shuffled(void **state)
{
    (void)state;
    double s[100];
    for (int i = 0; i < 100; i++) s[i] = (double)((i * 37) % 100 + 1); /* 1..100 permuted */
    bench_stats st;
    bench_stats_compute(s, 100, &st);
    assert_near(st.avg, 50.5);
    assert_near(st.p50, 50.5);  /* rank 49.5 */
    assert_near(st.p99, 99.01); /* rank 98.01 */
    assert_near(st.min, 1.0);
    assert_near(st.max, 100.0);
}

static void test_single_sample(void **state)
{
    (void)state;
    const double s[] = {7.25};
    bench_stats st;
    bench_stats_compute(s, 1, &st);
    assert_near(st.avg, 7.25);
    assert_near(st.min, 7.25);
    assert_near(st.p50, 7.25);
    assert_near(st.p99, 7.25);
    assert_near(st.max, 7.25);
}

static void test_empty_gives_zeros(void **state)
{
    (void)state;
    bench_stats st;
    memset(&st, 0x7f, sizeof st);
    bench_stats_compute(NULL, 0, &st);
    assert_true(st.avg == 0 && st.min == 0 && st.p50 == 0 && st.p99 == 0 && st.max == 0);
    const double one[] = {3};
    memset(&st, 0x7f, sizeof st);
    bench_stats_compute(one, 0, &st);
    assert_true(st.avg == 0 && st.max == 0);
}

static void test_input_not_modified(void **state)
{
    (void)state;
    double s[] = {9, 1, 8, 2, 7, 3, 6, 4, 5};
    double copy[9];
    memcpy(copy, s, sizeof s);
    bench_stats st;
    bench_stats_compute(s, 9, &st);
    assert_memory_equal(s, copy, sizeof s);
    assert_near(st.p50, 5.0);
    assert_near(st.min, 1.0);
    assert_near(st.max, 9.0);
    /* Same answer as on sorted input. */
    const double sorted[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    bench_stats st2;
    bench_stats_compute(sorted, 9, &st2);
    assert_near(st.p99, st2.p99);
    assert_near(st.p99, 8.92); /* rank 7.92 */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_sample),      cmocka_unit_test(test_interpolation_even_count),
        cmocka_unit_test(test_hundred_shuffled),  cmocka_unit_test(test_single_sample),
        cmocka_unit_test(test_empty_gives_zeros), cmocka_unit_test(test_input_not_modified),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
