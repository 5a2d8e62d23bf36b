/* Benchmark inputs and checker: results reduced by libcoll's own kernels verify
 * with 0 wrong, one corrupted element counts exactly 1, for every dtype x op and
 * 1..7 ranks; and each collective's check accepts a simulated correct result. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/bench_coll.h"
#include "engine/bench_data.h"
#include "coll.h"
#include "core/reduce.h"

#define COUNT 1000
#define FIRST 37 /* element indices do not start at 0 in reducescatter/alltoall */
#define MAX_RANKS 7

static bench_data_key make_key(int nranks, coll_dtype dt, int op)
{
    bench_data_key k = {.seed = 42, .iter = 3, .nranks = nranks, .dtype = dt, .op = op};
    return k;
}

/* Flip the second-highest bit: changes every dtype's value by a lot (0 -> 2.0
 * for float32), so even avg's tolerance cannot hide it. */
static void corrupt(void *buf, size_t index, coll_dtype dt)
{
    size_t esz = coll_dtype_size(dt);
    unsigned char *elem = (unsigned char *)buf + index * esz;
    elem[esz - 1] ^= 0x40; /* little-endian: the last byte holds the top bits */
}

/* The reduction over n ranks, computed by the library's kernels. */
static void *reduce_ranks(const bench_data_key *k)
{
    size_t esz = coll_dtype_size(k->dtype);
    void *acc = malloc(COUNT * esz), *in = malloc(COUNT * esz);
    coll_op op = k->op == COLL_AVG ? COLL_SUM : (coll_op)k->op;
    assert_non_null(acc);
    assert_non_null(in);
    bench_data_fill(k, 0, FIRST, acc, COUNT);
    for (int q = 1; q < k->nranks; q++) {
        bench_data_fill(k, q, FIRST, in, COUNT);
        assert_int_equal(coll__reduce_local(acc, acc, in, COUNT, k->dtype, op), 0);
    }
    if (k->op == COLL_AVG) coll__scale_div(acc, COUNT, k->dtype, k->nranks);
    free(in);
    return acc;
}

static void test_reduced_every_pair(void **state)
{
    (void)state;
    for (int dt = 0; dt < COLL_DTYPE_COUNT; dt++)
        for (int op = 0; op < COLL_OP_COUNT; op++) {
            if (coll_op_valid((coll_dtype)dt, (coll_op)op) != COLL_OK) continue;
            for (int n = 1; n <= MAX_RANKS; n++) {
                bench_data_key k = make_key(n, (coll_dtype)dt, op);
                void *res = reduce_ranks(&k);
                assert_int_equal(bench_data_check_reduced(&k, FIRST, res, COUNT), 0);
                corrupt(res, 123, k.dtype);
                assert_int_equal(bench_data_check_reduced(&k, FIRST, res, COUNT), 1);
                free(res);
            }
        }
}

/* int8 sums stay exact up to 31 ranks: [-4,4] * 31 fits. */
static void test_sum_int8_31_ranks(void **state)
{
    (void)state;
    bench_data_key k = make_key(31, COLL_INT8, COLL_SUM);
    void *res = reduce_ranks(&k);
    assert_int_equal(bench_data_check_reduced(&k, FIRST, res, COUNT), 0);
    free(res);
}

static void test_copy_every_dtype(void **state)
{
    (void)state;
    for (int dt = 0; dt < COLL_DTYPE_COUNT; dt++) {
        bench_data_key k = make_key(5, (coll_dtype)dt, BENCH_OP_NONE);
        void *buf = malloc(COUNT * coll_dtype_size(k.dtype));
        assert_non_null(buf);
        bench_data_fill(&k, 3, FIRST, buf, COUNT);
        assert_int_equal(bench_data_check_copy(&k, 3, FIRST, buf, COUNT), 0);
        /* another rank's data, or another offset, is not this rank's */
        assert_true(bench_data_check_copy(&k, 2, FIRST, buf, COUNT) > COUNT / 2);
        assert_true(bench_data_check_copy(&k, 3, FIRST + 1, buf, COUNT) > COUNT / 2);
        corrupt(buf, COUNT - 1, k.dtype);
        assert_int_equal(bench_data_check_copy(&k, 3, FIRST, buf, COUNT), 1);
        free(buf);
    }
}

/* Stale data from an earlier iteration must not pass the check. */
static void test_iterations_differ(void **state)
{
    (void)state;
    bench_data_key k = make_key(4, COLL_FLOAT32, COLL_SUM);
    void *res = reduce_ranks(&k);
    k.iter++;
    assert_true(bench_data_check_reduced(&k, FIRST, res, COUNT) > COUNT / 2);
    free(res);
}

static void test_fill_is_deterministic_and_in_range(void **state)
{
    (void)state;
    bench_data_key k = make_key(6, COLL_INT32, COLL_SUM);
    int32_t a[COUNT], b[COUNT];
    bench_data_fill(&k, 2, 0, a, COUNT);
    bench_data_fill(&k, 2, 0, b, COUNT);
    assert_memory_equal(a, b, sizeof a);
    for (int i = 0; i < COUNT; i++) assert_in_range(a[i] + 4, 0, 8);

    k.op = COLL_PROD; /* +-1 everywhere but exactly one rank's 2 per element */
    int32_t v[6][COUNT];
    for (int q = 0; q < 6; q++) bench_data_fill(&k, q, 0, v[q], COUNT);
    for (int i = 0; i < COUNT; i++) {
        int twos = 0;
        for (int q = 0; q < 6; q++) {
            assert_true(v[q][i] == 1 || v[q][i] == -1 || v[q][i] == 2);
            twos += v[q][i] == 2;
        }
        assert_int_equal(twos, 1);
    }
}

/* ---- each collective's check against a simulated correct result ---- */

typedef struct sim {
    const bench_coll *coll;
    int n;
    size_t count;
    coll_dtype dt;
    int op;
    void *send[MAX_RANKS], *recv[MAX_RANKS];
} sim;

static bench_call sim_call(const sim *s, int rank)
{
    bench_call c = {.rank = rank,
                    .nranks = s->n,
                    .send = s->send[rank],
                    .recv = s->recv[rank],
                    .count = s->count,
                    .dtype = s->dt,
                    .op = s->op == BENCH_OP_NONE ? COLL_SUM : (coll_op)s->op,
                    .root = s->n - 1};
    return c;
}

static void *elem(void *buf, size_t i, coll_dtype dt)
{
    return (char *)buf + i * coll_dtype_size(dt);
}

/* Block `block` of the reduction of every rank's send buffer into out. */
static void sim_reduce_block(sim *s, size_t block, void *out)
{
    size_t bytes = s->count * coll_dtype_size(s->dt);
    memcpy(out, elem(s->send[0], block * s->count, s->dt), bytes);
    for (int q = 1; q < s->n; q++)
        coll__reduce_local(out, out, elem(s->send[q], block * s->count, s->dt), s->count, s->dt,
                           (coll_op)s->op);
}

/* What rank r's receive buffer holds after a correct call. */
static void sim_result(sim *s, int r)
{
    size_t bytes = s->count * coll_dtype_size(s->dt);
    int root = s->n - 1;
    switch (s->coll->id) {
    case BENCH_ALLREDUCE: sim_reduce_block(s, 0, s->recv[r]); break;
    case BENCH_REDUCE:
        if (r == root) sim_reduce_block(s, 0, s->recv[r]);
        break;
    case BENCH_REDUCESCATTER: sim_reduce_block(s, (size_t)r, s->recv[r]); break;
    case BENCH_BROADCAST: memcpy(s->recv[r], s->send[root], bytes); break;
    case BENCH_SENDRECV: memcpy(s->recv[r], s->send[(r + s->n - 1) % s->n], bytes); break;
    case BENCH_ALLGATHER:
        for (int q = 0; q < s->n; q++)
            memcpy(elem(s->recv[r], q * s->count, s->dt), s->send[q], bytes);
        break;
    case BENCH_ALLTOALL:
        for (int q = 0; q < s->n; q++)
            memcpy(elem(s->recv[r], q * s->count, s->dt), elem(s->send[q], r * s->count, s->dt),
                   bytes);
        break;
    default: break;
    }
}

static void sim_run(const bench_coll *coll, int n, coll_dtype dt)
{
    sim s = {
        .coll = coll, .n = n, .count = 50, .dt = dt, .op = coll->has_op ? COLL_MAX : BENCH_OP_NONE};
    if (!coll->check) return; /* barrier: no data, nothing checked (#wrong N/A) */
    bench_data_key k = make_key(n, dt, s.op);
    size_t esz = coll_dtype_size(dt);
    for (int r = 0; r < n; r++) {
        s.send[r] = calloc(bench_coll_send_elems(coll, s.count, n), esz);
        s.recv[r] = calloc(bench_coll_recv_elems(coll, s.count, n), esz);
        bench_data_fill(&k, r, 0, s.send[r], bench_coll_send_elems(coll, s.count, n));
    }
    for (int r = 0; r < n; r++) {
        bench_call c = sim_call(&s, r);
        sim_result(&s, r);
        if (!coll->check) { /* barrier: nothing to check, so rows say N/A */
            assert_false(coll->moves_data);
            continue;
        }
        assert_int_equal(coll->check(&c, &k), 0);
        if (coll->moves_data && (coll->id != BENCH_REDUCE || r == n - 1)) {
            corrupt(c.recv, bench_coll_recv_elems(coll, s.count, n) - 1, dt);
            assert_int_equal(coll->check(&c, &k), 1);
        }
    }
    for (int r = 0; r < n; r++) {
        free(s.send[r]);
        free(s.recv[r]);
    }
}

static void test_collective_checks(void **state)
{
    (void)state;
    for (int id = 0; id < BENCH_COLL_COUNT; id++)
        for (int n = 1; n <= MAX_RANKS; n++) {
            sim_run(bench_coll_get((bench_coll_id)id), n, COLL_FLOAT32);
            sim_run(bench_coll_get((bench_coll_id)id), n, COLL_UINT8);
        }
}

static void test_counts_and_bytes(void **state)
{
    (void)state;
    const bench_coll *ag = bench_coll_find("allgather"), *ar = bench_coll_find("allreduce");
    assert_non_null(ag);
    assert_null(bench_coll_find("allgatherv"));
    /* 1000 bytes of float32 over 3 ranks: 83 per rank, 996 bytes really moved */
    assert_int_equal(bench_coll_call_count(ag, 1000, 4, 3), 83);
    assert_int_equal(bench_coll_bytes(ag, 83, 4, 3), 996);
    assert_int_equal(bench_coll_call_count(ar, 1000, 4, 3), 250);
    assert_int_equal(bench_coll_bytes(ar, 250, 4, 3), 1000);
    assert_true(ar->bus_factor(4) == 1.5);
    assert_true(ag->bus_factor(4) == 0.75);
    assert_true(bench_coll_find("barrier")->bus_factor(4) == 0.0);
}

static void test_inplace_placement(void **state)
{
    (void)state;
    float send[12], recv[12];
    bench_call c = {.rank = 2, .nranks = 3, .count = 4, .dtype = COLL_FLOAT32};
    bench_coll_place(bench_coll_find("allgather"), &c, send, recv, 1);
    assert_ptr_equal(c.recv, recv);
    assert_ptr_equal(c.send, recv + 8);
    bench_coll_place(bench_coll_find("reducescatter"), &c, send, recv, 1);
    assert_ptr_equal(c.send, send);
    assert_ptr_equal(c.recv, send + 8);
    bench_coll_place(bench_coll_find("allreduce"), &c, send, recv, 1);
    assert_ptr_equal(c.send, recv);
    assert_ptr_equal(c.recv, recv);
    bench_coll_place(bench_coll_find("allreduce"), &c, send, recv, 0);
    assert_ptr_equal(c.send, send);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reduced_every_pair),
        cmocka_unit_test(test_sum_int8_31_ranks),
        cmocka_unit_test(test_copy_every_dtype),
        cmocka_unit_test(test_iterations_differ),
        cmocka_unit_test(test_fill_is_deterministic_and_in_range),
        cmocka_unit_test(test_collective_checks),
        cmocka_unit_test(test_counts_and_bytes),
        cmocka_unit_test(test_inplace_placement),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
