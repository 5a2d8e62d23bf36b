/* core/err.h: the error value, its map to world ranks and its message helpers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "coll.h"
#include "core/err.h"

static void test_set_and_clear(void **unused)
{
    (void)unused;
    coll__err e;
    coll__err_init(&e, NULL, 0);
    assert_int_equal(e.rank, -1);
    assert_string_equal(coll__err_text(&e), coll_strerror(COLL_OK));
    assert_int_equal(coll__err_set(&e, COLL_ETIMEDOUT, "waited %d s", 3), COLL_ETIMEDOUT);
    assert_int_equal(e.status, COLL_ETIMEDOUT);
    assert_string_equal(e.msg, "waited 3 s");
    coll__err_prefix(&e, "tcp transport rank %d", 1);
    assert_string_equal(e.msg, "tcp transport rank 1: waited 3 s");
    coll__err_append(&e, " (%s)", "again");
    assert_string_equal(e.msg, "tcp transport rank 1: waited 3 s (again)");
    coll__err_set(&e, 0, "quoting itself: %s", e.msg);
    assert_string_equal(e.msg, "quoting itself: tcp transport rank 1: waited 3 s (again)");
    coll__err_clear(&e);
    assert_int_equal(e.status, 0);
    assert_string_equal(e.msg, "");
    assert_int_equal(coll__err_set(NULL, COLL_EPEER, "x"), COLL_EPEER);
}

static void test_world_map(void **unused)
{
    (void)unused;
    static const int peers[] = {2, 5, 8};
    coll__err e;
    coll__err_init(&e, peers, 3);
    assert_int_equal(coll__err_world(&e, 1), 5);
    assert_int_equal(coll__err_world(&e, 3), -1);
    assert_int_equal(coll__err_world(&e, -1), -1);
    coll__err_blame(&e, COLL_EPEER, 2, "rank %d died", coll__err_world(&e, 2));
    assert_int_equal(e.rank, 8);
    assert_string_equal(e.msg, "rank 8 died");
    coll__err_clear(&e);
    assert_ptr_equal(e.world_of, peers); /* the map stays */
    coll__err_init(&e, NULL, 0);
    assert_int_equal(coll__err_world(&e, 7), 7);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_and_clear),
        cmocka_unit_test(test_world_map),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
