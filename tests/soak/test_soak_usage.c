/* Soak mode's pieces: --duration values, and that the memory and descriptor
 * sampling sees growth (else a flat soak would prove nothing). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/soak.h"

static void durations_parse(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        double seconds;
    } ok[] = {{"60s", 60}, {"10m", 600}, {"1h", 3600}, {"90", 90}, {"1.5m", 90}, {"0.5", 0.5}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        double s = -1;
        assert_int_equal(bench_parse_duration(ok[i].text, &s), 0);
        assert_float_equal(s, ok[i].seconds, 1e-9);
    }
}

static void bad_durations_are_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {"", "0", "-5", "10x", "m", "5mm", "inf", "nan", "1 h"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double s = 42;
        assert_int_equal(bench_parse_duration(bad[i], &s), COLL_EINVAL);
        assert_true(s == 42); /* untouched */
    }
}

static void an_open_descriptor_is_counted(void **state)
{
    (void)state;
    bench_usage before, during, after;
    assert_int_equal(bench_usage_sample(&before), 0);
    assert_true(before.fds >= 3);
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(bench_usage_sample(&during), 0);
    close(fd);
    assert_int_equal(bench_usage_sample(&after), 0);
    assert_int_equal(during.fds, before.fds + 1);
    assert_int_equal(after.fds, before.fds);
}

static void touched_memory_is_resident(void **state)
{
    (void)state;
    const size_t mib = 16;
    bench_usage before, after;
    assert_int_equal(bench_usage_sample(&before), 0);
    assert_true(before.rss_kib > 0);
    char *p = malloc(mib << 20);
    assert_non_null(p);
    memset(p, 1, mib << 20);
    assert_int_equal(bench_usage_sample(&after), 0);
    assert_true(after.rss_kib - before.rss_kib >= (int64_t)(mib - 1) * 1024);
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(durations_parse),
        cmocka_unit_test(bad_durations_are_refused),
        cmocka_unit_test(an_open_descriptor_is_counted),
        cmocka_unit_test(touched_memory_is_resident),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
