/* Training step predictions (src/costmodel/model_train.c) against steps worked by
 * hand, with an all-reduce of alpha 10 us plus beta per byte (1 or 4 ns/B). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "costmodel/model_train.h"

static double linear_us(double bytes, void *arg) { return 10 + bytes * *(double *)arg; }
static double unknown_us(double bytes, void *arg)
{
    (void)bytes, (void)arg;
    return NAN;
}

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-9)

/* 4 MB of gradient, 10 ms compute of which 6 ms backward */
static model_train_job job(int ddp)
{
    return (model_train_job){.grad_bytes = 4e6,
                             .compute_ms = 10,
                             .backward_ms = 6,
                             .ddp = ddp,
                             .bucket_bytes = 1e6,
                             .first_bucket_bytes = 1e6,
                             .wire_ratio = 1};
}

static void test_sync(void **state)
{
    (void)state;
    double beta = 1e-3; /* us/B: 1 GB/s */
    model_train_job j = job(0);
    model_train_step s;
    char err[128];
    assert_int_equal(model_train_predict(&j, linear_us, &beta, &s, err, sizeof err), 0);
    /* one all-reduce of 4 MB: 10 us + 4000 us, all exposed */
    NEAR(s.comm_ms, 4.01);
    NEAR(s.exposed_ms, 4.01);
    NEAR(s.step_ms, 14.01);
    NEAR(s.eff, 10 / 14.01);
    j.wire_ratio = 0.5, j.overhead_ms = 0.5; /* fp16 with its casts */
    assert_int_equal(model_train_predict(&j, linear_us, &beta, &s, err, sizeof err), 0);
    NEAR(s.step_ms, 10 + 0.5 + 2.01);
}

static void test_ddp_hidden(void **state)
{
    (void)state;
    double beta = 1e-3;
    model_train_job j = job(1);
    model_train_step s;
    char err[128];
    assert_int_equal(model_train_predict(&j, linear_us, &beta, &s, err, sizeof err), 0);
    /* 4 buckets of 1.01 ms, ready at 1.5, 3, 4.5, 6 ms: each ends before the next
     * is ready, the last at 7.01: 1.01 ms past backward */
    assert_int_equal(s.nbuckets, 4);
    NEAR(s.comm_ms, 4.04);
    NEAR(s.exposed_ms, 1.01);
    NEAR(s.step_ms, 11.01);
}

static void test_ddp_link_bound(void **state)
{
    (void)state;
    double beta = 4e-3; /* 250 MB/s: comm outruns backward */
    model_train_job j = job(1);
    model_train_step s;
    char err[128];
    assert_int_equal(model_train_predict(&j, linear_us, &beta, &s, err, sizeof err), 0);
    /* 4.01 ms each, back to back from 1.5 ms: ends at 1.5 + 4 x 4.01 = 17.54 */
    NEAR(s.exposed_ms, 11.54);
    NEAR(s.step_ms, 21.54);
    /* a small first bucket and a remainder: 0.5 MB, 1 MB, 1 MB, 1 MB, 0.5 MB
     * (2.01, 4.01, 4.01, 4.01, 2.01 ms), ready at 0.75, 2.25, 3.75, 5.25, 6:
     * ends 2.76, 6.77, 10.78, 14.79, 16.80 */
    j.first_bucket_bytes = 0.5e6;
    assert_int_equal(model_train_predict(&j, linear_us, &beta, &s, err, sizeof err), 0);
    assert_int_equal(s.nbuckets, 5);
    NEAR(s.exposed_ms, 16.80 - 6);
    NEAR(s.comm_ms, 2 * 2.01 + 3 * 4.01);
}

static void test_refusals(void **state)
{
    (void)state;
    double beta = 1e-3;
    model_train_job j = job(1);
    model_train_step s;
    char err[128] = "";
    assert_int_not_equal(model_train_predict(&j, unknown_us, NULL, &s, err, sizeof err), 0);
    assert_non_null(strstr(err, "not predictable"));
    j.compute_ms = 0;
    assert_int_not_equal(model_train_predict(&j, linear_us, &beta, &s, err, sizeof err), 0);
    assert_non_null(strstr(err, "compute"));
    j = job(1), j.bucket_bytes = 1;
    assert_int_not_equal(model_train_predict(&j, linear_us, &beta, &s, err, sizeof err), 0);
    assert_non_null(strstr(err, "too small"));
    NEAR(model_train_wire_ratio("none"), 1);
    NEAR(model_train_wire_ratio("bf16"), 0.5);
    assert_true(model_train_wire_ratio("topk:0.01") < 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sync),
        cmocka_unit_test(test_ddp_hidden),
        cmocka_unit_test(test_ddp_link_bound),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
