/* Size and list parsing: every suffix spelling, fractions, limits, bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/sizes.h"
#include "coll.h"

static uint64_t parse_ok(const char *s)
{
    uint64_t v = 12345;
    char err[256] = "";
    int rc = bench_parse_size(s, &v, err, sizeof err);
    if (rc != COLL_OK) fail_msg("'%s' refused: %s", s, err);
    return v;
}

/* Refused, with a message that quotes the input (when there is one). */
static void parse_bad(const char *s, const char *why)
{
    uint64_t v = 777;
    char err[256] = "";
    int rc = bench_parse_size(s, &v, err, sizeof err);
    if (rc != COLL_EINVAL) fail_msg("'%s' accepted as %llu", s, (unsigned long long)v);
    assert_int_equal(v, 777); /* output untouched on error */
    assert_true(strlen(err) > 0);
    if (why && !strstr(err, why)) fail_msg("'%s': message '%s' lacks '%s'", s, err, why);
}

static void test_plain_bytes(void **state)
{
    (void)state;
    assert_int_equal(parse_ok("0"), 0);
    assert_int_equal(parse_ok("64"), 64);
    assert_int_equal(parse_ok("1B"), 1);
    assert_int_equal(parse_ok("100b"), 100);
    assert_int_equal(parse_ok("  2M "), 2u << 20);
    assert_true(parse_ok("9223372036854775807") == (uint64_t)INT64_MAX);
}

static void test_every_suffix_spelling(void **state)
{
    (void)state;
    static const char *const spellings[] = {"%s", "%sB", "%sb", "%siB", "%sib"};
    static const struct {
        const char *up, *low;
        int shift;
    } units[] = {{"K", "k", 10}, {"M", "m", 20}, {"G", "g", 30}, {"T", "t", 40}};
    for (size_t u = 0; u < 4; u++) {
        for (size_t s = 0; s < 5; s++) {
            char buf[32], unit[8];
            for (int c = 0; c < 2; c++) {
                snprintf(unit, sizeof unit, "3%s", c ? units[u].low : units[u].up);
                snprintf(buf, sizeof buf, spellings[s], unit);
                uint64_t v = parse_ok(buf);
                if (v != (3ull << units[u].shift))
                    fail_msg("'%s' gave %llu", buf, (unsigned long long)v);
            }
        }
    }
}

static void test_fractions(void **state)
{
    (void)state;
    assert_int_equal(parse_ok("1.5K"), 1536);
    assert_int_equal(parse_ok("1.50K"), 1536);
    assert_int_equal(parse_ok("1.25k"), 1280);
    assert_int_equal(parse_ok("0.5M"), 512 * 1024);
    assert_int_equal(parse_ok("2.0"), 2);
    assert_int_equal(parse_ok("0.0009765625K"), 1); /* 1/1024 K */
    parse_bad("1.3", "whole number");
    parse_bad("0.5", "whole number");
    parse_bad("1.0001K", "whole number");
    parse_bad("1.", "decimal point");
    parse_bad(".5K", ".5K");
    parse_bad("1.0000000000000000000001K", "decimal places");
}

static void test_bad_sizes(void **state)
{
    (void)state;
    parse_bad("", "empty");
    parse_bad("   ", "empty");
    parse_bad("-1", "negative");
    parse_bad("-1K", "negative");
    parse_bad("10X", "10X");
    parse_bad("10KX", "suffix");
    parse_bad("1Ki", "suffix");
    parse_bad("K", "K");
    parse_bad("1e3", "suffix");
    parse_bad("1 M", "suffix");
    parse_bad("0x10", "suffix");
    parse_bad("abc", "abc");
    parse_bad(NULL, NULL);
}

static void test_overflow(void **state)
{
    (void)state;
    parse_bad("9223372036854775808", "too large"); /* 2^63 */
    parse_bad("99999999999999999999999", "too large");
    parse_bad("8589934592G", "too large"); /* 2^33 * 2^30 = 2^63 */
    assert_true(parse_ok("8589934591G") == ((1ull << 63) - (1ull << 30)));
    parse_bad("8388608T", "too large"); /* 2^23 * 2^40 = 2^63 */
}

static void test_size_list(void **state)
{
    (void)state;
    uint64_t *v = NULL;
    size_t n = 0;
    char err[256] = "";
    assert_int_equal(bench_parse_size_list("1M,10M,100M,1G", &v, &n, err, sizeof err), COLL_OK);
    assert_int_equal(n, 4);
    assert_int_equal(v[0], 1u << 20);
    assert_int_equal(v[1], 10u << 20);
    assert_int_equal(v[2], 100u << 20);
    assert_int_equal(v[3], 1u << 30);
    free(v);

    assert_int_equal(bench_parse_size_list("4K, 8K", &v, &n, err, sizeof err), COLL_OK);
    assert_int_equal(n, 2);
    assert_int_equal(v[1], 8192);
    free(v);

    static const struct {
        const char *in, *why;
    } bad[] = {
        {"", "empty"},     {"1M,,2M", "item 2"}, {"1M,", "item 2"},
        {",1M", "item 1"}, {"1M,10X", "10X"},    {"1M, -2", "negative"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = (uint64_t *)&n; /* must be reset to NULL */
        err[0] = '\0';
        assert_int_equal(bench_parse_size_list(bad[i].in, &v, &n, err, sizeof err), COLL_EINVAL);
        assert_null(v);
        assert_int_equal(n, 0);
        if (!strstr(err, bad[i].why))
            fail_msg("'%s': message '%s' lacks '%s'", bad[i].in, err, bad[i].why);
    }
}

static void test_int_list(void **state)
{
    (void)state;
    int *v = NULL;
    size_t n = 0;
    char err[256] = "";
    assert_int_equal(bench_parse_int_list("2,4,6", &v, &n, err, sizeof err), COLL_OK);
    assert_int_equal(n, 3);
    assert_int_equal(v[0], 2);
    assert_int_equal(v[1], 4);
    assert_int_equal(v[2], 6);
    free(v);
    assert_int_equal(bench_parse_int_list("2147483647", &v, &n, err, sizeof err), COLL_OK);
    assert_int_equal(v[0], 2147483647);
    free(v);

    static const struct {
        const char *in, *why;
    } bad[] = {
        {"0", "positive"},       {"-2", "positive"},        {"2,0", "positive"},
        {"x", "not an integer"}, {"3.5", "not an integer"}, {"4K", "not an integer"},
        {"", "empty"},           {"1,,2", "item 2"},        {"2147483648", "too large"},
        {"2,", "item 2"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        assert_int_equal(bench_parse_int_list(bad[i].in, &v, &n, err, sizeof err), COLL_EINVAL);
        assert_null(v);
        if (!strstr(err, bad[i].why))
            fail_msg("'%s': message '%s' lacks '%s'", bad[i].in, err, bad[i].why);
    }
}

static void test_format_size(void **state)
{
    (void)state;
    static const struct {
        uint64_t bytes;
        const char *text;
    } cases[] = {
        {0, "0"},
        {8, "8"},
        {1000, "1000"},
        {1023, "1023"},
        {1024, "1K"},
        {1025, "1025"},
        {1536, "1.5K"},
        {1280, "1.25K"},
        {1u << 20, "1M"},
        {10u << 20, "10M"},
        {100u << 20, "100M"},
        {1u << 30, "1G"},
        {3ull << 29, "1.5G"},
        {1ull << 40, "1T"},
        {(1u << 20) + 1, "1048577"},
    };
    char buf[32];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bench_format_size(cases[i].bytes, buf, sizeof buf);
        assert_string_equal(buf, cases[i].text);
    }
    /* Whatever it prints, the parser reads back the same number. */
    for (uint64_t b = 1; b < (1ull << 62); b = b * 3 + (b & 1)) {
        bench_format_size(b, buf, sizeof buf);
        assert_true(parse_ok(buf) == b);
    }
    for (int shift = 0; shift <= 60; shift++) /* 5 << 60 < 2^63 */ {
        uint64_t b = 5ull << shift;
        bench_format_size(b, buf, sizeof buf);
        assert_true(parse_ok(buf) == b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_bytes), cmocka_unit_test(test_every_suffix_spelling),
        cmocka_unit_test(test_fractions),   cmocka_unit_test(test_bad_sizes),
        cmocka_unit_test(test_overflow),    cmocka_unit_test(test_size_list),
        cmocka_unit_test(test_int_list),    cmocka_unit_test(test_format_size),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
