/* A rank that never arrives is named: by the rendezvous checks (ranks started
 * by another launcher) and by the auto backend's host-id exchange, on every
 * rank that waits for it, rank 0 (which gathers) and the others alike. Ranks
 * are threads over an in-process store with a short timeout. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/auto/auto.h"
#include "bootstrap/rendezvous.h"

#define TIMEOUT_S 0.4
#define MAX_RANKS 8

typedef struct rank_arg {
    coll__rendezvous rv;
    int host_exchange; /* 0: coll__rendezvous_verify, 1: coll__host_plan_exchange */
    coll__host_plan plan;
    int rc;
    coll__err err;
} rank_arg;

static void *rank_thread(void *p)
{
    rank_arg *a = p;
    if (a->host_exchange)
        a->rc = coll__host_plan_exchange(a->rv.store, "c0/a/", a->rv.rank, a->rv.world_size,
                                         &a->plan, &a->err);
    else a->rc = coll__rendezvous_verify(&a->rv, &a->err);
    return NULL;
}

/* Runs the given ranks of a world of `world` at once; the others never come. */
static void run_ranks(int host_exchange, int world, int n, const int *ranks, rank_arg *out)
{
    coll__store *store;
    pthread_t t[MAX_RANKS];
    assert_int_equal(coll__mem_store_create(TIMEOUT_S, &store), COLL_OK);
    for (int i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        out[i].host_exchange = host_exchange;
        out[i].rv.rank = ranks[i];
        out[i].rv.world_size = world;
        out[i].rv.store = store;
        out[i].rv.timeout_s = TIMEOUT_S;
        snprintf(out[i].rv.prefix, sizeof out[i].rv.prefix, "c0/");
        assert_int_equal(pthread_create(&t[i], NULL, rank_thread, &out[i]), 0);
    }
    for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
    coll__store_destroy(store);
}

static void expect_named(const rank_arg *a, const char *want)
{
    if (!strstr(a->err.msg, want))
        fail_msg("rank %d: want \"%s\" in: %s", a->rv.rank, want, a->err.msg);
}

static void test_verify_names_the_missing_rank(void **state)
{
    (void)state;
    int ranks[] = {0, 1};
    rank_arg a[2];
    run_ranks(0, 3, 2, ranks, a);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(a[i].rc, COLL_ETIMEDOUT);
        expect_named(&a[i], "only 2 of 3 ranks");
        expect_named(&a[i], "rank 2 is missing");
    }
}

static void test_verify_names_every_missing_rank(void **state)
{
    (void)state;
    int ranks[] = {1};
    rank_arg a[1];
    run_ranks(0, 4, 1, ranks, a);
    assert_int_equal(a[0].rc, COLL_ETIMEDOUT);
    expect_named(&a[0], "ranks 0, 2, 3 are missing");
}

static void test_host_ids_all_arrive(void **state)
{
    (void)state;
    int ranks[] = {2, 0, 1};
    rank_arg a[3];
    unsetenv("COLL_HOST_ID");
    unsetenv("COLL_AUTO_RANKS_PER_HOST");
    run_ranks(1, 3, 3, ranks, a);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(a[i].rc, COLL_OK);
        assert_int_equal(a[i].plan.nhosts, 1);
        assert_int_equal(a[i].plan.local_rank, a[i].rv.rank);
        coll__host_plan_free(&a[i].plan);
    }
}

/* Rank 0 gives up first and says why in the list's place; the others repeat
 * it (or, when slower than rank 0 by the margin, ask the store themselves). */
static void test_host_ids_name_a_missing_rank(void **state)
{
    (void)state;
    int ranks[] = {0, 1};
    rank_arg a[2];
    run_ranks(1, 3, 2, ranks, a);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(a[i].rc, COLL_ETIMEDOUT);
        expect_named(&a[i], "rank 2 never published its host id");
    }
    assert_null(strstr(a[0].err.msg, "reported by rank 0"));
}

/* Rank 0 itself missing: the others ask the store who is missing. */
static void test_host_ids_name_a_missing_rank_0(void **state)
{
    (void)state;
    int ranks[] = {1, 3};
    rank_arg a[2];
    run_ranks(1, 4, 2, ranks, a);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(a[i].rc, COLL_ETIMEDOUT);
        expect_named(&a[i], "ranks 0, 2 never published their host id");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_verify_names_the_missing_rank),
        cmocka_unit_test(test_verify_names_every_missing_rank),
        cmocka_unit_test(test_host_ids_all_arrive),
        cmocka_unit_test(test_host_ids_name_a_missing_rank),
        cmocka_unit_test(test_host_ids_name_a_missing_rank_0),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
