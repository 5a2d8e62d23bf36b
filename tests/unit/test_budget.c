/* The --time-budget decisions on synthetic warm-up times: warm-up runs in full
 * within the budget, stops after 2 when the time is flat and over it, goes on
 * while the time still falls (page faults), and the timed count fits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "engine/budget.h"

/* Warm-ups run for a sequence of iteration times (us), as the runner does. */
static int warmups_for(double budget_s, int warmup, int iters, const double *t_us, int n)
{
    double t = 0, prev;
    int done = 0;
    do {
        prev = t;
        t = t_us[done < n ? done : n - 1];
        done++;
    } while (!bench_budget_stop_warmup(budget_s, warmup, iters, done, t, prev));
    return done;
}

static void test_within_budget_runs_everything(void **state)
{
    (void)state;
    const double fast[] = {900, 100, 100, 100, 100}; /* 25 x 100 us << 1 s */
    assert_int_equal(warmups_for(1, 5, 20, fast, 5), 5);
    assert_int_equal(bench_budget_timed_iters(1, 20, 100), 20);
    assert_int_equal(warmups_for(0, 5, 20, (const double[]){5e6}, 1), 5); /* no budget */
    assert_int_equal(bench_budget_timed_iters(0, 20, 5e6), 20);
}

static void test_flat_over_budget_stops_after_two(void **state)
{
    (void)state;
    const double flat[] = {5e5, 4.9e5, 5e5, 5e5, 5e5}; /* 0.5 s each, budget 1 s */
    assert_int_equal(warmups_for(1, 5, 20, flat, 5), 2);
    assert_int_equal(bench_budget_timed_iters(1, 20, 5e5), 3); /* 2 fit; at least 3 */
    assert_int_equal(bench_budget_timed_iters(1, 20, 1e5), 10);
    assert_int_equal(warmups_for(1, 1, 20, flat, 5), 1); /* -w 1: one is all */
}

static void test_falling_times_keep_warming_up(void **state)
{
    (void)state;
    /* 1 GiB on shm, 2 ranks, on a VM with slow page faults (measured). */
    const double faults[] = {7.0e6, 4.8e6, 0.62e6, 0.18e6, 0.11e6};
    assert_int_equal(warmups_for(1, 5, 20, faults, 5), 5);
    assert_int_equal(bench_budget_timed_iters(1, 20, 0.11e6), 9);
    /* Settled at the third: stop there. */
    const double settle[] = {7.0e6, 0.2e6, 0.19e6, 0.19e6, 0.19e6};
    assert_int_equal(warmups_for(1, 5, 20, settle, 5), 3);
    /* Never past -w, even while still falling. */
    const double falling[] = {8e6, 4e6, 2e6, 1e6, 5e5, 2.5e5, 1.2e5};
    assert_int_equal(warmups_for(1, 5, 20, falling, 7), 5);
}

/* --stop-spread: looked at every 8 timed iterations while more are left, and
 * tight when p25-p75 is within the bound of the median. */
static void test_stop_spread(void **state)
{
    (void)state;
    assert_false(bench_budget_spread_due(0, 8, 20)); /* off */
    assert_false(bench_budget_spread_due(0.05, 7, 20));
    assert_true(bench_budget_spread_due(0.05, 8, 20));
    assert_true(bench_budget_spread_due(0.05, 16, 20));
    assert_false(bench_budget_spread_due(0.05, 8, 8));             /* nothing left to save */
    assert_true(bench_budget_spread_tight(0.05, 98, 100, 103));    /* 5% */
    assert_false(bench_budget_spread_tight(0.05, 98, 100, 103.5)); /* 5.5% */
    assert_false(bench_budget_spread_tight(0, 100, 100, 100));     /* off */
    assert_false(bench_budget_spread_tight(0.05, 0, 0, 0));        /* no time measured */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_within_budget_runs_everything),
        cmocka_unit_test(test_flat_over_budget_stops_after_two),
        cmocka_unit_test(test_falling_times_keep_warming_up),
        cmocka_unit_test(test_stop_spread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
