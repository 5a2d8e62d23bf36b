/* The memory-copy probe (engine/mem_copy_rate.h): a positive finite rate for a
 * real copy, a clear refusal for sizes and repetitions it cannot time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "coll.h"
#include "engine/mem_copy_rate.h"

static void test_rate_is_positive_and_finite(void **state)
{
    (void)state;
    double gbps = -1;
    char err[256] = "";
    /* 8 MiB keeps the test short under sanitizers; the code path is the same */
    assert_int_equal(bench_mem_copy_rate((size_t)8 << 20, 3, &gbps, err, sizeof err), COLL_OK);
    assert_true(isfinite(gbps));
    assert_true(gbps > 0);
}

static void test_bad_size_is_refused(void **state)
{
    (void)state;
    double gbps = -1;
    char err[256] = "";
    assert_int_equal(bench_mem_copy_rate(0, 3, &gbps, err, sizeof err), COLL_EINVAL);
    assert_non_null(strstr(err, "size"));
    assert_int_equal(bench_mem_copy_rate(MEM_COPY_MIN_BYTES - 1, 3, &gbps, err, sizeof err),
                     COLL_EINVAL);
    assert_int_equal(bench_mem_copy_rate(MEM_COPY_MIN_BYTES, 0, &gbps, err, sizeof err),
                     COLL_EINVAL);
    assert_non_null(strstr(err, "repetitions"));
    assert_true(gbps == -1); /* untouched when refused */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rate_is_positive_and_finite),
        cmocka_unit_test(test_bad_size_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
