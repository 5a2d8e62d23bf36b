/* The suite's ETA (bench/eta.h): learned per group from finished steps, the
 * overall rate for a group not seen yet, the running step's elapsed time
 * taken off, and nothing to say before any step finished. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "engine/eta.h"

static void test_nothing_done_is_unknown(void **state)
{
    (void)state;
    eta_step s[2] = {{.weight = 1, .group = 0}, {.weight = 1, .group = 0}};
    assert_true(bench_eta_left(s, 2, 0, 5) < 0);
}

static void test_group_rate_is_learned(void **state)
{
    (void)state;
    /* tcp (group 0) took 2 s per unit, mpi (group 1) 10 s per unit */
    eta_step s[5] = {{1, 0, 1, 2.0}, {1, 1, 1, 10.0}, {2, 0, 0, 0}, {3, 1, 0, 0}, {1, 0, 0, 0}};
    /* 2*2 + 3*10 + 1*2, nothing running yet */
    assert_true(bench_eta_left(s, 5, 2, 0) == 36.0);
    /* the running step (4 s expected) has run 3 s: 1 s of it left */
    assert_true(bench_eta_left(s, 5, 2, 3) == 33.0);
    /* overdue: it counts as ending now, the others unchanged */
    assert_true(bench_eta_left(s, 5, 2, 100) == 32.0);
}

static void test_unseen_group_uses_overall_rate(void **state)
{
    (void)state;
    /* 4 s over weight 2 done: 2 s per unit for the training step (group 7) */
    eta_step s[3] = {{1, 0, 1, 1.0}, {1, 1, 1, 3.0}, {5, 7, 0, 0}};
    assert_true(bench_eta_left(s, 3, 2, 0) == 10.0);
    /* all done: nothing left */
    assert_true(bench_eta_left(s, 3, 3, 0) == 0.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nothing_done_is_unknown),
        cmocka_unit_test(test_group_rate_is_learned),
        cmocka_unit_test(test_unseen_group_uses_overall_rate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
