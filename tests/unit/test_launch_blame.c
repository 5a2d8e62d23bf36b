/* coll__launch_blame: the launcher's verdict from the ranks' blame marks. A
 * ring's chain (1 -> 0 -> 3 -> 2) ends at the hung rank, whatever order the
 * ranks were reaped in; a rank that timed out naming nobody ("?") leads to the
 * one rank the launcher had to stop; without marks that lone stopped rank is
 * named; with two stopped ranks and no marks, nobody; a circle names nobody. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "coll_tool.h"
#include "launch/launch_blame.h"

#define U COLL_BLAMED_UNKNOWN

/* {failed, stopped, blames, reaped} */
static void test_ring_chain_ends_at_the_hung_rank(void **state)
{
    (void)state;
    /* rank 1 timed out on 0, 0 passed it on to 3, 3 to 2; 2 hung (SIGTERM) */
    coll__launch_blame_rank r[4] = {{1, 0, 3, 2}, {1, 0, 0, 1}, {1, 1, -1, 4}, {1, 0, 2, 3}};
    coll__launch_blamed b = coll__launch_blame(r, 4);
    assert_int_equal(b.rank, 2);
    assert_int_equal(b.direct, 3);
    assert_int_equal(b.votes, 3);
}

static void test_unknown_wait_leads_to_the_lone_stopped_rank(void **state)
{
    (void)state;
    /* Gloo: rank 3 timed out naming nobody, 0 and 1 lost rank 3's connection */
    coll__launch_blame_rank r[4] = {{1, 0, 3, 1}, {1, 0, 3, 2}, {1, 1, -1, 4}, {1, 0, U, 3}};
    coll__launch_blamed b = coll__launch_blame(r, 4);
    assert_int_equal(b.rank, 2);
    assert_int_equal(b.direct, 3);
    assert_int_equal(b.votes, 3);
}

static void test_no_marks_name_the_lone_stopped_rank(void **state)
{
    (void)state;
    coll__launch_blame_rank r[3] = {{1, 0, -1, 1}, {1, 2, -1, 3}, {1, 0, -1, 2}};
    coll__launch_blamed b = coll__launch_blame(r, 3);
    assert_int_equal(b.rank, 1);
    assert_int_equal(b.direct, -1);
}

static void test_no_evidence_names_nobody(void **state)
{
    (void)state;
    coll__launch_blame_rank two_stopped[3] = {{1, 0, -1, 1}, {1, 1, -1, 2}, {1, 1, -1, 3}};
    assert_int_equal(coll__launch_blame(two_stopped, 3).rank, -1);
    coll__launch_blame_rank circle[2] = {{1, 0, 1, 1}, {1, 0, 0, 2}};
    assert_int_equal(coll__launch_blame(circle, 2).rank, -1);
    coll__launch_blame_rank only_stopped[2] = {{0, 0, -1, 1}, {1, 1, -1, 2}};
    assert_int_equal(coll__launch_blame(only_stopped, 2).rank, -1);
}

static void test_a_rank_that_finished_is_not_named(void **state)
{
    (void)state;
    /* rank 1 blames rank 0, which ended normally: that is no verdict */
    coll__launch_blame_rank r[2] = {{0, 0, -1, 1}, {1, 0, 0, 2}};
    assert_int_equal(coll__launch_blame(r, 2).rank, -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_chain_ends_at_the_hung_rank),
        cmocka_unit_test(test_unknown_wait_leads_to_the_lone_stopped_rank),
        cmocka_unit_test(test_no_marks_name_the_lone_stopped_rank),
        cmocka_unit_test(test_no_evidence_names_nobody),
        cmocka_unit_test(test_a_rank_that_finished_is_not_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
