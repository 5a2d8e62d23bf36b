/* The cost formulas (src/costmodel/model_formula.c) against hand-computed cases
 * (docs/DESIGN.md "Cost model"): n = 1e6 bytes unless said otherwise. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>

#include "costmodel/model_formula.h"

#define N 1e6

static void coeffs(const char *coll, const char *algo, const char *backend, int hosts, int per_host,
                   double bytes, double share, double c[MODEL_NPARAM])
{
    int a = model_algo_parse(algo);
    assert_true(a >= 0);
    model_shape s = {coll, (model_algo)a, backend, hosts, per_host, bytes, share, 0};
    assert_int_equal(model_coeffs(&s, NULL, c), 0);
}

/* expected: alpha_intra, beta_intra, gamma, alpha_inter, beta_inter */
static void expect(const double c[MODEL_NPARAM], double ai, double bi, double g, double ae,
                   double be)
{
    const double want[MODEL_NPARAM] = {ai, bi, g, ae, be};
    for (int i = 0; i < MODEL_NPARAM; i++) {
        if (fabs(c[i] - want[i]) > 1e-9 * (fabs(want[i]) + 1)) {
            print_error("%s: got %.6f, want %.6f\n", model_param_name((model_param)i), c[i],
                        want[i]);
            fail();
        }
    }
}

static void test_allreduce_one_host(void **state)
{
    (void)state;
    double c[MODEL_NPARAM];
    /* ring: 2(p-1) alpha + 2(p-1)/p n beta + (p-1)/p n gamma */
    coeffs("allreduce", "ring", "tcp", 1, 4, N, 1, c);
    expect(c, 6, 1.5 * N, 0.75 * N, 0, 0);
    /* Rabenseifner, p = 4: 2 lg p alpha, same bytes as the ring */
    coeffs("allreduce", "rhd", "tcp", 1, 4, N, 1, c);
    expect(c, 4, 1.5 * N, 0.75 * N, 0, 0);
    /* p = 6: on 4, plus a step before (alpha + n beta + n gamma) and after (alpha + n beta) */
    coeffs("allreduce", "rabenseifner", "tcp", 1, 6, N, 1, c);
    expect(c, 6, 3.5 * N, 1.75 * N, 0, 0);
    /* recursive doubling: lg p (alpha + n beta + n gamma); p = 6: 2 + 2 steps, 3 reductions */
    coeffs("allreduce", "rd", "tcp", 1, 8, N, 1, c);
    expect(c, 3, 3 * N, 3 * N, 0, 0);
    coeffs("allreduce", "rd", "tcp", 1, 6, N, 1, c);
    expect(c, 4, 4 * N, 3 * N, 0, 0);
    /* one-shot: p-1 messages of n, p-1 reductions */
    coeffs("allreduce", "direct", "tcp", 1, 4, N, 1, c);
    expect(c, 3, 3 * N, 3 * N, 0, 0);
    /* the lower bound (a backend's own choice) */
    coeffs("allreduce", "auto", "shm", 1, 4, N, 1, c);
    expect(c, 4, 1.5 * N, 0.75 * N, 0, 0);
    /* ranks outnumbering cores 2:1 double the CPU's terms, per message and per byte */
    coeffs("allreduce", "ring", "tcp", 1, 4, N, 2, c);
    expect(c, 12, 3 * N, 1.5 * N, 0, 0);
}

/* Ranks beyond the cores share them only while they work: 3 ranks on 2
 * cores (share 1.5) run Rabenseifner's rounds on 2 and its fold steps on 2,
 * so nothing waits for a core; 6 on 2 (share 3) run both on 4 (share 2). */
static void test_phases_and_cache(void **state)
{
    (void)state;
    double c[MODEL_NPARAM];
    coeffs("allreduce", "rhd", "tcp", 1, 3, N, 1.5, c);
    expect(c, 4, 3 * N, 1.5 * N, 0, 0);
    coeffs("allreduce", "rhd", "tcp", 1, 6, N, 3, c);
    expect(c, 12, 7 * N, 3.5 * N, 0, 0);
    /* the ring keeps every rank at work: the whole share */
    coeffs("allreduce", "ring", "tcp", 1, 6, N, 3, c);
    expect(c, 30, 5 * N, 2.5 * N, 0, 0);
    /* the cache knot: 4 ranks on 2 cores hold 2 n per core; past a knot of n,
     * half of each byte's copies miss: beta_mem gets half of beta_intra's coefficient */
    model_shape s = {"allreduce", MODEL_ALGO_RING, "tcp", 1, 4, N, 2, N};
    assert_int_equal(model_coeffs(&s, NULL, c), 0);
    assert_true(fabs(c[MODEL_BETA_MEM] - 1.5 * N) < 1e-9 * N);
    s.cache_bytes = 2 * N; /* all of it fits: nothing spills */
    assert_int_equal(model_coeffs(&s, NULL, c), 0);
    assert_true(c[MODEL_BETA_MEM] == 0);
    /* tcp's auto is the tuning table's algorithm: rhd at 64 KiB on 4 ranks, ring at 16 MiB */
    model_shape a = {"allreduce", MODEL_ALGO_BOUND, "tcp", 1, 4, 65536, 1, 0};
    assert_int_equal(model_algo_run(&a), MODEL_ALGO_RHD);
    a.bytes = 16777216;
    assert_int_equal(model_algo_run(&a), MODEL_ALGO_RING);
    a.backend = "gloo"; /* gloo's own choice: the lower bound */
    assert_int_equal(model_algo_run(&a), MODEL_ALGO_BOUND);
}

static void test_other_collectives(void **state)
{
    (void)state;
    double c[MODEL_NPARAM];
    coeffs("allgather", "ring", "tcp", 1, 4, N, 1, c);
    expect(c, 3, 0.75 * N, 0, 0, 0);
    coeffs("allgather", "rd", "tcp", 1, 4, N, 1, c);
    expect(c, 2, 0.75 * N, 0, 0, 0);
    coeffs("allgather", "rd", "tcp", 1, 3, 3e6, 1, c); /* not a power of two: the ring runs */
    expect(c, 2, 2e6, 0, 0, 0);
    coeffs("reducescatter", "ring", "tcp", 1, 4, N, 1, c);
    expect(c, 3, 0.75 * N, 0.75 * N, 0, 0);
    coeffs("broadcast", "binomial", "tcp", 1, 5, N, 1, c); /* ceil(lg 5) = 3 rounds of n */
    expect(c, 3, 3 * N, 0, 0, 0);
    /* chain of 4 chunks of 1 MiB over 4 ranks: p - 2 + k = 6 chunk steps */
    coeffs("broadcast", "ring", "tcp", 1, 4, 4 * 1048576.0, 1, c);
    expect(c, 6, 6 * 1048576.0, 0, 0, 0);
    coeffs("reduce", "tree", "tcp", 1, 4, N, 1, c);
    expect(c, 2, 2 * N, 2 * N, 0, 0);
    coeffs("alltoall", "pairwise", "tcp", 1, 4, N, 1, c);
    expect(c, 3, 0.75 * N, 0, 0, 0);
    coeffs("barrier", "dissemination", "tcp", 1, 5, 0, 1, c);
    expect(c, 3, 0, 0, 0, 0);
}

static void test_several_hosts(void **state)
{
    (void)state;
    double c[MODEL_NPARAM];
    /* flat rd over 2 hosts x 2: every step on the link, which both ranks of a host share */
    coeffs("allreduce", "rd", "tcp", 2, 2, N, 1, c);
    expect(c, 0, 0, 2 * N, 2, 4 * N);
    /* a ring crosses each link once a step */
    coeffs("allreduce", "ring", "tcp", 2, 2, N, 1, c);
    expect(c, 0, 0, 0.75 * N, 6, 1.5 * N);
    /* the auto backend, 2 hosts x 2, below 2 pipeline chunks: intra reduce-scatter
     * and all-gather (1 + 1 alpha, n/2 + n/2 beta, n/2 gamma), inter all-reduce of
     * n/2 on 2 hosts (2 alpha, n/2 per rank, two ranks on the link: n; n/4 gamma) */
    coeffs("allreduce", "auto", "auto", 2, 2, N, 1, c);
    expect(c, 2, N, 0.75 * N, 2, N);
    /* 16 MiB: 4 chunks of 4 MiB; with no theta the inter stage is the slower */
    double m = 4 * 1048576.0;
    coeffs("allreduce", "auto", "auto", 2, 2, 4 * m, 1, c);
    expect(c, 2, m, 0.75 * m + 3 * 0.25 * m, 2 + 3 * 2, m + 3 * m);
    /* ... and with a theta where the host's stages are slower, they set the pace */
    model_shape s = {"allreduce", MODEL_ALGO_BOUND, "auto", 2, 2, 4 * m, 1, 0};
    const double slow_host[MODEL_NPARAM] = {1, 1e-3, 0, 1, 1e-6};
    assert_int_equal(model_coeffs(&s, slow_host, c), 0);
    expect(c, 2 + 3 * 2, m + 3 * m, 0.75 * m + 3 * 0.5 * m, 2, m);
    /* one rank per host: the auto backend runs flat */
    coeffs("allreduce", "auto", "auto", 2, 1, N, 1, c);
    expect(c, 0, 0, 0.5 * N, 2, N);
}

static void test_unknown(void **state)
{
    (void)state;
    double c[MODEL_NPARAM];
    model_shape s = {"allreduce", MODEL_ALGO_TREE, "tcp", 1, 4, N, 1, 0};
    assert_int_equal(model_coeffs(&s, NULL, c), -1);
    s.collective = "frobnicate";
    s.algo = MODEL_ALGO_RING;
    assert_int_equal(model_coeffs(&s, NULL, c), -1);
    assert_true(isnan(model_time_us(&s, c)));
    assert_int_equal(model_algo_parse("nonsense"), -1);
    assert_int_equal(model_algo_parse("one-shot"), MODEL_ALGO_DIRECT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allreduce_one_host),
        cmocka_unit_test(test_phases_and_cache),
        cmocka_unit_test(test_other_collectives),
        cmocka_unit_test(test_several_hosts),
        cmocka_unit_test(test_unknown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
