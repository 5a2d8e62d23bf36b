/* coll__blame_chain over an in-process store: a rank's word is published, a
 * chain of words is followed to its end, two ranks blaming each other stop
 * the walk, a word that arrives within the grace period is waited for, and
 * without a store (or with nobody to blame) the blamed rank comes back. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "coll.h"
#include "bootstrap/blame_chain.h"
#include "core/clock.h"

#define P "c0/"

static coll__store *mem_store(void)
{
    coll__store *s = NULL;
    assert_int_equal(coll__mem_store_create(2.0, &s), COLL_OK);
    return s;
}

static char *word_of(coll__store *s, int rank)
{
    char key[64];
    snprintf(key, sizeof key, P "g/blame/%d", rank);
    void *v = NULL;
    size_t n = 0;
    int exists = 0;
    assert_int_equal(s->ops->check(s, key, &exists), COLL_OK);
    if (!exists) return NULL;
    assert_int_equal(coll__store_get(s, key, &v, &n), COLL_OK);
    char *out = calloc(1, n + 1);
    memcpy(out, v, n);
    free(v);
    return out;
}

static void test_follows_the_chain_to_its_end(void **state)
{
    (void)state;
    coll__store *s = mem_store();
    /* rank 2 died; rank 1 saw it and said so before it exited; rank 3 blamed 1 */
    assert_int_equal(coll__blame_chain(s, P, "g", 1, 4, 2, 0), 2);
    assert_int_equal(coll__blame_chain(s, P, "g", 3, 4, 1, 0), 2);
    /* rank 0 saw rank 3 go first: 3 -> 2 (rank 3 published the end too) */
    assert_int_equal(coll__blame_chain(s, P, "g", 0, 4, 3, 0), 2);
    char *w = word_of(s, 0);
    assert_non_null(w);
    assert_string_equal(w, "2");
    free(w);
    /* another tag is another chain */
    assert_int_equal(coll__blame_chain(s, P, "a", 0, 4, 3, 0), 3);
    coll__store_destroy(s);
}

static void test_mutual_blame_stops(void **state)
{
    (void)state;
    coll__store *s = mem_store();
    assert_int_equal(coll__blame_chain(s, P, "g", 1, 3, 2, 0), 2);
    assert_int_equal(coll__blame_chain(s, P, "g", 2, 3, 1, 0), 1); /* 1 blames 2: each other */
    int end = coll__blame_chain(s, P, "g", 0, 3, 1, 0); /* 1 -> 2 -> 1 ...: the walk ends */
    assert_true(end == 1 || end == 2);
    coll__store_destroy(s);
}

typedef struct late {
    coll__store *s;
    double after_s;
} late;

static void *say_later(void *arg)
{
    late *l = arg;
    coll__sleep_s(l->after_s);
    coll__store_set(l->s, P "g/blame/1", "2", 1);
    return NULL;
}

static void test_waits_for_a_late_word(void **state)
{
    (void)state;
    coll__store *s = mem_store();
    /* no word from rank 1 and no grace: rank 1 itself, at once */
    assert_int_equal(coll__blame_chain(s, P, "g", 0, 3, 1, 0), 1);
    /* rank 1 speaks 0.1 s into a 1 s grace: its word is taken */
    late l = {s, 0.1};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, say_later, &l), 0);
    double t0 = coll__now_s();
    assert_int_equal(coll__blame_chain(s, P, "g", 0, 3, 1, 1.0), 2);
    double took = coll__now_s() - t0;
    pthread_join(t, NULL);
    assert_true(took >= 0.1 && took < 1.9); /* rank 2 never speaks: the grace's end */
    coll__store_destroy(s);
}

static void test_nothing_to_follow(void **state)
{
    (void)state;
    coll__store *s = mem_store();
    assert_int_equal(coll__blame_chain(NULL, P, "g", 0, 3, 1, 0), 1);
    assert_int_equal(coll__blame_chain(s, P, "g", 0, 3, -1, 0), -1);
    assert_int_equal(coll__blame_chain(s, P, "g", 0, 3, 0, 0), 0); /* itself */
    assert_int_equal(coll__blame_chain(s, P, "g", 0, 3, 7, 0), 7); /* not a rank */
    assert_null(word_of(s, 0));                                    /* none said anything */
    coll__store_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_follows_the_chain_to_its_end),
        cmocka_unit_test(test_mutual_blame_stops),
        cmocka_unit_test(test_waits_for_a_late_word),
        cmocka_unit_test(test_nothing_to_follow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
