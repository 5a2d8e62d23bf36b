/* The table of backends (src/backend/backends.c) is the one list: each line's
 * name is its entry's, every entry can answer, the names coll.h lists are the
 * table's, and the tuning variables gathered through it are each one row. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "backend/backends.h"
#include "coll.h"
#include "coll_tool.h"
#include "core/tuning.h"

static void each_line_names_its_entry(void **state)
{
    (void)state;
    size_t n = 0;
    const char *const *names = coll_backend_names();
    for (; coll__backends[n]; n++) {
        const coll__backend_entry *e = coll__backends[n];
        assert_string_equal(e->name, coll__backend_names[n]);
        assert_non_null(names[n]);
        assert_string_equal(names[n], e->name);
        assert_non_null(e->probe);
        assert_true(coll_backend_known(e->name));
    }
    assert_true(n >= 1);
    assert_null(coll__backend_names[n]);
    assert_null(names[n]);
}

/* A backend the table lacks is refused with the table's names. */
static void unknown_lists_the_table(void **state)
{
    (void)state;
    char err[256] = "";
    assert_null(coll__backend_find("loop", err, sizeof err));
    assert_non_null(strstr(err, "unknown backend 'loop'"));
    for (size_t i = 0; coll__backends[i]; i++)
        assert_non_null(strstr(err, coll__backends[i]->name));
    assert_false(coll_backend_known("loop"));
}

/* Probing says yes with ops of that name, or no with why. */
static void probe_gives_ops_or_why(void **state)
{
    (void)state;
    for (size_t i = 0; coll__backends[i]; i++) {
        char why[512] = "";
        const coll__backend_ops *ops = coll__backends[i]->probe(why, sizeof why);
        if (ops) assert_string_equal(ops->name, coll__backends[i]->name);
        else assert_true(why[0] != '\0');
    }
}

static void tuning_rows_are_each_once(void **state)
{
    (void)state;
    size_t n = 0;
    const struct coll__tunable *t;
    for (; (t = coll_tuning_row(n)) != NULL; n++) {
        assert_int_equal(strncmp(t->name, "COLL_", 5), 0);
        assert_true(t->lo <= t->hi);
        assert_non_null(t->meaning);
        for (size_t j = 0; j < n; j++) assert_string_not_equal(coll_tuning_row(j)->name, t->name);
    }
    assert_true(n >= 1);
    char why[256] = "";
    assert_int_equal(coll_tuning_check(why, sizeof why), COLL_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_line_names_its_entry),
        cmocka_unit_test(unknown_lists_the_table),
        cmocka_unit_test(probe_gives_ops_or_why),
        cmocka_unit_test(tuning_rows_are_each_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
