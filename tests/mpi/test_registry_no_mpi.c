/* What a build without MPI says when asked for the mpi backend: the registry, the
 * table of backends and its entry are compiled here as they are in such a build, so one build tests both. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#undef COLL_HAVE_MPI
#include "../../src/backend/registry.c"
#include "../../src/backend/backends.c"
#include "../../src/backend/mpi/mpi_entry.c"
#include "backend/tcp/tcp_backend.h"

static const char built_without[] =
    "built without MPI: install libopenmpi-dev and openmpi-bin (scripts/deps.sh) and rebuild";

static void find_mpi_says_how_to_get_it(void **state)
{
    (void)state;
    char err[256] = "";
    assert_null(coll__backend_find("mpi", err, sizeof err));
    assert_non_null(strstr(err, built_without));
    assert_non_null(strstr(err, "backend mpi unavailable"));
}

static void available_mpi_is_no_with_the_reason(void **state)
{
    (void)state;
    char why[256] = "";
    assert_int_equal(coll_backend_available("mpi", why, sizeof why), 0);
    assert_non_null(strstr(why, built_without));
}

static void tcp_is_there_without_mpi(void **state)
{
    (void)state;
    char err[256] = "";
    assert_ptr_equal(coll__backend_find("tcp", err, sizeof err), &coll__backend_tcp);
    assert_int_equal(coll_backend_available("tcp", NULL, 0), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(find_mpi_says_how_to_get_it),
        cmocka_unit_test(available_mpi_is_no_with_the_reason),
        cmocka_unit_test(tcp_is_there_without_mpi),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
