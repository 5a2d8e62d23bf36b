/* The auto backend's host plan (which ranks share a host), host ids, and the
 * rendezvous checks multi-host launches rely on (world size, duplicate ranks). */
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

static void test_plan_regular_hosts(void **state)
{
    (void)state;
    /* ranks interleaved over two hosts: a b a b */
    const char *ids[] = {"a", "b", "a", "b"};
    coll__host_plan p;
    assert_int_equal(coll__host_plan_build(ids, 4, 3, &p), COLL_OK);
    assert_int_equal(p.nhosts, 2);
    assert_int_equal(p.host, 1); /* hosts numbered by lowest rank: a=0, b=1 */
    assert_int_equal(p.local_rank, 1);
    assert_int_equal(p.local_size, 2);
    assert_true(p.regular);
    assert_int_equal(p.members[0], 1);
    assert_int_equal(p.members[1], 3);
    assert_non_null(p.peers); /* local index 1 on each host */
    assert_int_equal(p.peers[0], 2);
    assert_int_equal(p.peers[1], 3);
    assert_int_equal(p.host_of[2], 0);
    assert_int_equal(p.local_of[2], 1);
    coll__host_plan_free(&p);
}

static void test_plan_uneven_hosts(void **state)
{
    (void)state;
    const char *ids[] = {"x", "x", "y"};
    coll__host_plan p;
    assert_int_equal(coll__host_plan_build(ids, 3, 2, &p), COLL_OK);
    assert_int_equal(p.nhosts, 2);
    assert_int_equal(p.local_size, 1);
    assert_false(p.regular);
    assert_null(p.peers);
    coll__host_plan_free(&p);
    assert_int_equal(coll__host_plan_build(ids, 3, 3, &p), COLL_EINVAL);
}

static void test_plan_one_host(void **state)
{
    (void)state;
    const char *ids[] = {"h", "h", "h"};
    coll__host_plan p;
    assert_int_equal(coll__host_plan_build(ids, 3, 1, &p), COLL_OK);
    assert_int_equal(p.nhosts, 1);
    assert_int_equal(p.local_rank, 1);
    assert_int_equal(p.local_size, 3);
    coll__host_plan_free(&p);
}

static void test_host_id_overrides(void **state)
{
    (void)state;
    char a[COLL_HOST_ID_MAX], b[COLL_HOST_ID_MAX];
    unsetenv("COLL_HOST_ID");
    unsetenv("COLL_AUTO_RANKS_PER_HOST");
    assert_int_equal(coll__host_id(0, a, sizeof a, NULL), COLL_OK);
    assert_int_equal(coll__host_id(5, b, sizeof b, NULL), COLL_OK);
    assert_string_equal(a, b);          /* one process, one host */
    assert_non_null(strstr(a, "/net")); /* the network namespace is part of it */
    setenv("COLL_HOST_ID", "node\n7", 1);
    assert_int_equal(coll__host_id(0, a, sizeof a, NULL), COLL_OK);
    assert_string_equal(a, "node_7"); /* one line: ids travel joined by newlines */
    setenv("COLL_AUTO_RANKS_PER_HOST", "2", 1);
    coll__host_id(1, a, sizeof a, NULL);
    coll__host_id(2, b, sizeof b, NULL);
    assert_string_equal(a, "node_7/emu0");
    assert_string_equal(b, "node_7/emu1");
    /* not a count: refused by name, not read as 0 (one host for all) */
    coll__err e;
    coll__err_init(&e, NULL, 0);
    setenv("COLL_AUTO_RANKS_PER_HOST", "two", 1);
    assert_int_equal(coll__host_id(1, a, sizeof a, &e), COLL_EINVAL);
    assert_non_null(strstr(e.msg, "COLL_AUTO_RANKS_PER_HOST=two"));
    unsetenv("COLL_HOST_ID");
    unsetenv("COLL_AUTO_RANKS_PER_HOST");
}

/* ---- rendezvous checks over an in-process store, one thread per rank ---- */

typedef struct verify_arg {
    coll__rendezvous rv;
    int rc;
    coll__err err;
} verify_arg;

static void *verify_thread(void *p)
{
    verify_arg *a = p;
    a->rc = coll__rendezvous_verify(&a->rv, &a->err);
    return NULL;
}

/* Runs verify for n ranks given as (rank, world) pairs at once. */
static void run_verify(int n, const int *ranks, const int *worlds, verify_arg *out)
{
    coll__store *store;
    pthread_t t[8];
    assert_int_equal(coll__mem_store_create(5.0, &store), COLL_OK);
    for (int i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        out[i].rv.rank = ranks[i];
        out[i].rv.world_size = worlds[i];
        out[i].rv.store = store;
        out[i].rv.timeout_s = 5.0;
        snprintf(out[i].rv.prefix, sizeof out[i].rv.prefix, "c0/");
        assert_int_equal(pthread_create(&t[i], NULL, verify_thread, &out[i]), 0);
    }
    for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
    coll__store_destroy(store);
}

static void test_verify_ok(void **state)
{
    (void)state;
    int ranks[] = {2, 0, 1}, worlds[] = {3, 3, 3};
    verify_arg a[3];
    run_verify(3, ranks, worlds, a);
    for (int i = 0; i < 3; i++) assert_int_equal(a[i].rc, COLL_OK);
}

static void test_verify_world_mismatch(void **state)
{
    (void)state;
    int ranks[] = {0, 1, 2}, worlds[] = {3, 3, 4};
    verify_arg a[3];
    run_verify(3, ranks, worlds, a);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(a[i].rc, COLL_EINVAL);
        assert_non_null(strstr(a[i].err.msg, "world size mismatch"));
    }
}

static void test_verify_duplicate_rank(void **state)
{
    (void)state;
    int ranks[] = {1, 0, 1}, worlds[] = {3, 3, 3};
    verify_arg a[3];
    run_verify(3, ranks, worlds, a);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(a[i].rc, COLL_EINVAL);
        assert_non_null(strstr(a[i].err.msg, "duplicate rank"));
        assert_non_null(strstr(a[i].err.msg, "rank 1 of 3"));
    }
}

static void test_verify_missing_rank_times_out(void **state)
{
    (void)state;
    coll__store *store;
    verify_arg a;
    assert_int_equal(coll__mem_store_create(0.3, &store), COLL_OK);
    memset(&a, 0, sizeof a);
    a.rv = (coll__rendezvous){.rank = 0, .world_size = 2, .store = store, .timeout_s = 0.3};
    snprintf(a.rv.prefix, sizeof a.rv.prefix, "c0/");
    verify_thread(&a);
    assert_int_equal(a.rc, COLL_ETIMEDOUT);
    assert_non_null(strstr(a.err.msg, "only 1 of 2 ranks"));
    coll__store_destroy(store);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_regular_hosts),
        cmocka_unit_test(test_plan_uneven_hosts),
        cmocka_unit_test(test_plan_one_host),
        cmocka_unit_test(test_host_id_overrides),
        cmocka_unit_test(test_verify_ok),
        cmocka_unit_test(test_verify_world_mismatch),
        cmocka_unit_test(test_verify_duplicate_rank),
        cmocka_unit_test(test_verify_missing_rank_times_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
