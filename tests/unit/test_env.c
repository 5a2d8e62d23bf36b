/* coll__env_bytes, coll__env_count and coll__env_flag: unset or empty gives
 * the default, a number with a K/M/G suffix (bytes only) in range, or 0/1 for
 * a flag, gives its value, anything else is COLL_EINVAL with a message naming
 * the variable and leaves the output alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "coll.h"
#include "core/env.h"

#define VAR "COLL_TEST_ENV_VALUE"

static int bytes(const char *value, uint64_t lo, uint64_t hi, uint64_t *out, coll__err *e)
{
    if (value) setenv(VAR, value, 1);
    else unsetenv(VAR);
    coll__err_init(e, NULL, 0);
    *out = 7777;
    return coll__env_bytes(VAR, 42, lo, hi, out, e);
}

static void test_default_when_unset_or_empty(void **state)
{
    (void)state;
    uint64_t v;
    coll__err e;
    assert_int_equal(bytes(NULL, 0, 100, &v, &e), COLL_OK);
    assert_int_equal(v, 42);
    assert_int_equal(bytes("", 0, 100, &v, &e), COLL_OK);
    assert_int_equal(v, 42);
}

static void test_values_and_suffixes(void **state)
{
    (void)state;
    const struct {
        const char *in;
        uint64_t want;
    } ok[] = {{"0", 0},
              {"64", 64},
              {"4K", 4096},
              {"4k", 4096},
              {"3M", 3u << 20},
              {"2G", 2ull << 30},
              {"1099511627776", 1ull << 40}};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        uint64_t v;
        coll__err e;
        assert_int_equal(bytes(ok[i].in, 0, UINT64_MAX, &v, &e), COLL_OK);
        assert_int_equal(v, ok[i].want);
    }
}

static void test_bad_values_refused_by_name(void **state)
{
    (void)state;
    const char *bad[] = {"12x",         "-5",   " 5",
                         "+5",          "K",    "4KB",
                         "4K ",         "1.5M", "99999999999999999999",
                         "17179869184G"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        uint64_t v;
        coll__err e;
        assert_int_equal(bytes(bad[i], 0, UINT64_MAX, &v, &e), COLL_EINVAL);
        assert_int_equal(v, 7777);
        assert_non_null(strstr(e.msg, VAR "="));
    }
}

static void test_out_of_range_refused(void **state)
{
    (void)state;
    uint64_t v;
    coll__err e;
    assert_int_equal(bytes("32", 64, 1024, &v, &e), COLL_EINVAL);
    assert_non_null(strstr(e.msg, "from 64 to 1024"));
    assert_int_equal(bytes("2K", 64, 1024, &v, &e), COLL_EINVAL);
    assert_int_equal(bytes("1K", 64, 1024, &v, &e), COLL_OK);
    assert_int_equal(v, 1024);
}

static void test_count_takes_no_suffix(void **state)
{
    (void)state;
    uint64_t v = 0;
    coll__err e;
    coll__err_init(&e, NULL, 0);
    setenv(VAR, "5K", 1);
    assert_int_equal(coll__env_count(VAR, 1, 0, 1000000, &v, &e), COLL_EINVAL);
    assert_non_null(strstr(e.msg, "not a count"));
    setenv(VAR, "5000", 1);
    assert_int_equal(coll__env_count(VAR, 1, 0, 1000000, &v, &e), COLL_OK);
    assert_int_equal(v, 5000);
    unsetenv(VAR);
}

static void test_flag_is_0_or_1(void **state)
{
    (void)state;
    int v = 7;
    coll__err e;
    coll__err_init(&e, NULL, 0);
    unsetenv(VAR);
    assert_int_equal(coll__env_flag(VAR, 1, &v, &e), COLL_OK);
    assert_int_equal(v, 1);
    setenv(VAR, "0", 1);
    assert_int_equal(coll__env_flag(VAR, 1, &v, &e), COLL_OK);
    assert_int_equal(v, 0);
    setenv(VAR, "1", 1);
    assert_int_equal(coll__env_flag(VAR, 0, &v, &e), COLL_OK);
    assert_int_equal(v, 1);
    const char *bad[] = {"off", "no", "false", "2", "00", " 0"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        setenv(VAR, bad[i], 1);
        v = 7;
        assert_int_equal(coll__env_flag(VAR, 1, &v, &e), COLL_EINVAL);
        assert_int_equal(v, 7);
        assert_non_null(strstr(e.msg, "must be 0 or 1"));
    }
    unsetenv(VAR);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_when_unset_or_empty),
        cmocka_unit_test(test_values_and_suffixes),
        cmocka_unit_test(test_bad_values_refused_by_name),
        cmocka_unit_test(test_out_of_range_refused),
        cmocka_unit_test(test_count_takes_no_suffix),
        cmocka_unit_test(test_flag_is_0_or_1),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
