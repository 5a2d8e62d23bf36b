/* What a build without Gloo says when asked for the gloo backend (the CLI's
 * exit 4): the registry, the table of backends and its entry are compiled here as
 * they are in such a build. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#undef COLL_HAVE_GLOO
#include "../../src/backend/registry.c"
#include "../../src/backend/backends.c"
#include "../../src/backend/gloo/gloo_entry.c"
#include "backend/tcp/tcp_backend.h"

static const char built_without[] =
    "built without Gloo: install libgloo-dev and g++ (scripts/deps.sh) and rebuild";

static void find_gloo_says_how_to_get_it(void **state)
{
    (void)state;
    char err[256] = "";
    assert_null(coll__backend_find("gloo", err, sizeof err));
    assert_non_null(strstr(err, "backend gloo unavailable"));
    assert_non_null(strstr(err, built_without));
}

static void available_gloo_is_no_with_the_reason(void **state)
{
    (void)state;
    char why[256] = "";
    assert_int_equal(coll_backend_available("gloo", why, sizeof why), 0);
    assert_non_null(strstr(why, built_without));
}

static void gloo_is_a_known_name(void **state)
{
    (void)state;
    int found = 0;
    for (const char *const *b = coll_backend_names(); *b; b++) found |= strcmp(*b, "gloo") == 0;
    assert_true(found); /* so --backend gloo is "unavailable" (exit 4), not "unknown" (exit 2) */
}

static void gloo_algorithms_need_gloo(void **state)
{
    (void)state;
    assert_int_equal(coll_algo_supported("allreduce", "halving_doubling"), 0);
    assert_int_equal(coll_algo_supported("allreduce", "bcube"), 0);
    assert_int_equal(coll_algo_supported("allreduce", "ring"), 1); /* libcoll's own */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(find_gloo_says_how_to_get_it),
        cmocka_unit_test(available_gloo_is_no_with_the_reason),
        cmocka_unit_test(gloo_is_a_known_name),
        cmocka_unit_test(gloo_algorithms_need_gloo),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
