/* The watchdog behind the mpi backend's -T: fires once after an armed
 * deadline with the bytes it was armed with, never when disarmed in time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/watchdog.h"

typedef struct fired {
    atomic_int count;
    char what[COLL_WATCHDOG_WHAT];
    double waited, at;
} fired;

static void on_fire(void *arg, const void *what, double waited_s)
{
    fired *f = arg;
    memcpy(f->what, what, sizeof f->what);
    f->waited = waited_s;
    f->at = coll__now_s();
    atomic_fetch_add(&f->count, 1);
}

static void wait_for(fired *f, int n, double limit_s)
{
    double end = coll__now_s() + limit_s;
    while (atomic_load(&f->count) < n && coll__now_s() < end) usleep(1000);
}

static void test_fires_after_deadline_with_what(void **state)
{
    (void)state;
    static fired f;
    coll__watchdog w;
    assert_int_equal(coll__watchdog_start(&w, on_fire, &f), 0);
    double t0 = coll__now_s();
    coll__watchdog_arm(&w, t0 + 0.05, "allreduce #7", sizeof "allreduce #7");
    double armed = coll__now_s(); /* the watchdog's armed_at lies in [t0, armed] */
    wait_for(&f, 1, 5.0);
    assert_int_equal(atomic_load(&f.count), 1);
    assert_string_equal(f.what, "allreduce #7");
    assert_true(f.at - t0 >= 0.05);
    /* waited runs from the arming, not from t0: under a sanitizer or a loaded
     * machine the arming itself can take milliseconds of the 50 */
    assert_true(f.waited >= t0 + 0.05 - armed - 1e-6 && f.waited < 5.0);
    usleep(100 * 1000); /* fires once per arming */
    assert_int_equal(atomic_load(&f.count), 1);
    coll__watchdog_stop(&w);
}

static void test_disarmed_in_time_never_fires(void **state)
{
    (void)state;
    static fired f;
    coll__watchdog w;
    assert_int_equal(coll__watchdog_start(&w, on_fire, &f), 0);
    for (int i = 0; i < 200; i++) { /* calls that finish well within their deadline */
        coll__watchdog_arm(&w, coll__now_s() + 0.05, "call", 5);
        coll__watchdog_disarm(&w);
    }
    usleep(150 * 1000);
    assert_int_equal(atomic_load(&f.count), 0);
    /* a later, longer deadline replaces an earlier one */
    coll__watchdog_arm(&w, coll__now_s() + 0.02, "short", 6);
    coll__watchdog_arm(&w, coll__now_s() + 0.3, "long", 5);
    usleep(100 * 1000);
    assert_int_equal(atomic_load(&f.count), 0);
    wait_for(&f, 1, 5.0);
    assert_int_equal(atomic_load(&f.count), 1);
    assert_string_equal(f.what, "long");
    coll__watchdog_stop(&w);
}

static void test_stop_while_armed_and_long_what(void **state)
{
    (void)state;
    static fired f;
    coll__watchdog w;
    char big[3 * COLL_WATCHDOG_WHAT];
    memset(big, 'x', sizeof big);
    assert_int_equal(coll__watchdog_start(&w, on_fire, &f), 0);
    coll__watchdog_arm(&w, coll__now_s() + 0.01, big, sizeof big); /* cut to the buffer */
    wait_for(&f, 1, 5.0);
    assert_int_equal(atomic_load(&f.count), 1);
    assert_int_equal(f.what[COLL_WATCHDOG_WHAT - 1], 'x');
    coll__watchdog_arm(&w, coll__now_s() + 60, "never", 6);
    double t0 = coll__now_s();
    coll__watchdog_stop(&w); /* does not wait for the deadline */
    assert_true(coll__now_s() - t0 < 5.0);
    assert_int_equal(atomic_load(&f.count), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fires_after_deadline_with_what),
        cmocka_unit_test(test_disarmed_in_time_never_fires),
        cmocka_unit_test(test_stop_while_armed_and_long_what),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
