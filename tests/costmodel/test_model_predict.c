/* Predictions (src/costmodel/model_predict.c): the cluster syntax and its errors,
 * link units, a prediction worked by hand, the "what if" table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "costmodel/model_predict.h"

static void test_rates_and_times(void **state)
{
    (void)state;
    char err[256];
    double v;
    assert_int_equal(model_parse_rate("100Gbit/s", &v, err, sizeof err), 0);
    assert_true(fabs(v - 12.5e9) < 1);
    assert_int_equal(model_parse_rate("1gbit", &v, err, sizeof err), 0); /* tc's spelling */
    assert_true(fabs(v - 125e6) < 1e-3);
    assert_int_equal(model_parse_rate("12.5GB/s", &v, err, sizeof err), 0);
    assert_true(fabs(v - 12.5e9) < 1);
    assert_int_not_equal(model_parse_rate("12.5gb/s", &v, err, sizeof err), 0); /* bits or bytes? */
    assert_int_not_equal(model_parse_rate("100", &v, err, sizeof err), 0);
    assert_non_null(strstr(err, "'100'"));
    assert_int_not_equal(model_parse_rate("-1Gbit/s", &v, err, sizeof err), 0);
    assert_int_equal(model_parse_time_us("0.1ms", &v, err, sizeof err), 0);
    assert_true(fabs(v - 100) < 1e-9);
    assert_int_equal(model_parse_time_us("5us", &v, err, sizeof err), 0);
    assert_true(fabs(v - 5) < 1e-12);
    assert_int_not_equal(model_parse_time_us("5", &v, err, sizeof err), 0);
    assert_int_not_equal(model_parse_time_us("5 parsecs", &v, err, sizeof err), 0);
}

static void bad(const char *spec, const char *why)
{
    model_cluster c;
    char err[256] = "";
    assert_int_not_equal(model_cluster_parse(spec, &c, err, sizeof err), 0);
    if (!strstr(err, why)) print_error("'%s': '%s', want '%s'\n", spec, err, why);
    assert_non_null(strstr(err, why));
}

static void test_cluster_syntax(void **state)
{
    (void)state;
    model_cluster c;
    char err[256];
    assert_int_equal(model_cluster_parse("hosts=64,ranks-per-host=8,link=100Gbit/s,latency=5us", &c,
                                         err, sizeof err),
                     0);
    assert_int_equal(c.hosts, 64);
    assert_int_equal(c.per_host, 8);
    assert_true(fabs(c.link_Bps - 12.5e9) < 1);
    assert_true(fabs(c.latency_us - 5) < 1e-12);
    assert_int_equal(model_cluster_parse("hosts=3", &c, err, sizeof err), 0);
    assert_int_equal(c.per_host, 1);
    assert_true(c.link_Bps == 0);
    bad("", "empty");
    bad("ranks-per-host=8", "hosts=N is required");
    bad("hosts=0", "hosts");
    bad("hosts=2x", "hosts");
    bad("hosts=1000000,ranks-per-host=1000000", "at most");
    bad("hosts=2,speed=1", "unknown key 'speed'");
    bad("hosts=2,link", "not KEY=VALUE");
    bad("hosts=2,link=fast,latency=1us", "bad rate 'fast'");
    bad("hosts=2,link=1Gbit/s", "needs latency");
    bad("hosts=2,latency=1us", "needs link");
    bad("hosts=2,link=1Gbit/s,latency=1us,measured-link=1Gbit/s", "go together");
    bad("hosts=2,measured-link=1Gbit/s,measured-latency=1ms", "only matters with link");
}

/* A ring fitted on one host, exactly (no noise). */
static void ring_series(model_series *s, model_point *pts)
{
    const double theta[MODEL_NPARAM] = {20, 5e-4, 0, 0, 0};
    memset(s, 0, sizeof *s);
    strcpy(s->collective, "allreduce");
    strcpy(s->backend, "tcp");
    strcpy(s->algo, "ring");
    s->model = MODEL_ALGO_RING;
    s->pts = pts;
    const double sizes[] = {65536, 1048576, 16777216};
    for (int p = 2; p <= 3; p++)
        for (int i = 0; i < 3; i++) {
            model_shape sh = {"allreduce", MODEL_ALGO_RING, "tcp", 1, p, sizes[i], 1, 0};
            pts[s->npts++] = (model_point){1, p, sizes[i], model_time_us(&sh, theta), 0, 1, 1, 0};
        }
    model_fit_series(s);
    assert_true(s->ok);
}

static void test_prediction_by_hand(void **state)
{
    (void)state;
    model_series s;
    model_point pts[8];
    ring_series(&s, pts);
    /* 4 hosts x 1 over 8 Gbit/s (1e9 B/s, 1e-3 us/B), 10 us: each of the ring's
     * 6 steps costs 10 + 20 us, each byte 1e-3 + 5e-4 us (link + the stack) */
    model_cluster c;
    char err[256];
    assert_int_equal(model_cluster_parse("hosts=4,link=8Gbit/s,latency=10us", &c, err, sizeof err),
                     0);
    model_prediction p;
    assert_int_equal(model_predict(&s, &c, 1e6, &p, err, sizeof err), 0);
    double want = 6 * 30 + 1.5e6 * 1.5e-3;
    assert_true(fabs(p.time_us - want) < 1e-6 * want);
    assert_true(fabs(p.algbw_GBps - 1e6 / want / 1e3) < 1e-9);
    assert_true(fabs(p.busbw_GBps - p.algbw_GBps * 1.5) < 1e-9); /* 2(n-1)/n */
    /* without a link, one host's fit cannot say what a link costs */
    assert_int_equal(model_cluster_parse("hosts=4", &c, err, sizeof err), 0);
    assert_int_not_equal(model_predict(&s, &c, 1e6, &p, err, sizeof err), 0);
    assert_non_null(strstr(err, "one host only"));
    assert_true(isnan(p.time_us));
    /* shm does not leave its host */
    strcpy(s.backend, "shm");
    assert_int_equal(model_cluster_parse("hosts=2,link=8Gbit/s,latency=10us", &c, err, sizeof err),
                     0);
    assert_int_not_equal(model_predict(&s, &c, 1e6, &p, err, sizeof err), 0);
    assert_non_null(strstr(err, "inside one host"));
}

/* measured-link=: what a byte cost beyond the measured link's rate (4% here:
 * headers) is a share of the link's time: at a 5x faster link it is 5x
 * smaller; the per-message cost beyond the measured latency carries over. */
static void test_measured_link_scales(void **state)
{
    (void)state;
    model_series s;
    model_point pts[8];
    ring_series(&s, pts);
    s.state[MODEL_ALPHA_INTER] = s.state[MODEL_BETA_INTER] = MODEL_P_FITTED;
    s.theta[MODEL_ALPHA_INTER] = 30;         /* 10 us latency + 20 us software */
    s.theta[MODEL_BETA_INTER] = 8e-3 * 1.04; /* 1 Gbit/s: 8e-3 us/B, + 4% */
    model_cluster c;
    char err[256];
    double theta[MODEL_NPARAM];
    assert_int_equal(model_cluster_parse("hosts=2,link=5Gbit/s,latency=2us,measured-link=1Gbit/s,"
                                         "measured-latency=10us",
                                         &c, err, sizeof err),
                     0);
    assert_int_equal(model_cluster_theta(&s, &c, theta, err, sizeof err), 0);
    assert_true(fabs(theta[MODEL_BETA_INTER] - 1.6e-3 * 1.04) < 1e-9);
    assert_true(fabs(theta[MODEL_ALPHA_INTER] - 22) < 1e-9);
}

static void test_whatif(void **state)
{
    (void)state;
    model_series s;
    model_point pts[8];
    ring_series(&s, pts);
    model_prediction w[MODEL_WHATIF_NRANKS][MODEL_WHATIF_NLINKS];
    model_whatif(&s, 1 << 30, 5, w);
    for (int r = 0; r < MODEL_WHATIF_NRANKS; r++)
        for (int l = 0; l < MODEL_WHATIF_NLINKS; l++) {
            assert_true(w[r][l].time_us > 0);
            /* 8 ranks are one host: no link; more hosts are faster on faster links */
            if (l && r == 0) assert_true(w[r][l].time_us == w[r][l - 1].time_us);
            if (l && r > 0) assert_true(w[r][l].time_us < w[r][l - 1].time_us);
            if (r) assert_true(w[r][l].time_us > w[r - 1][l].time_us); /* more ring steps */
        }
}

/* One-host rows whose stack slows past 1 MiB (the 16M rows cost 5e-3 us/B on 2
 * ranks, 1e-2 on 3: a CPU shared by more ranks) cap a fast link; a slow link
 * stays the bound; the auto backend's cap is its tcp series'. */
static void test_stack_ceiling(void **state)
{
    (void)state;
    model_series s;
    model_point pts[8];
    ring_series(&s, pts);
    const double big = 16777216;
    for (size_t i = 0; i < s.npts; i++)
        if (pts[i].bytes == big) {
            model_shape sh = {"allreduce", MODEL_ALGO_RING, "tcp", 1, pts[i].per_host, big, 1, 0};
            double c[MODEL_NPARAM];
            assert_int_equal(model_coeffs(&sh, s.theta, c), 0);
            double beta = pts[i].per_host == 2 ? 5e-3 : 1e-2;
            pts[i].measured_us = c[MODEL_ALPHA_INTRA] * s.theta[MODEL_ALPHA_INTRA] +
                                 c[MODEL_BETA_INTRA] * beta;
        }
    model_cluster c;
    char err[256];
    model_prediction p;
    assert_int_equal(model_cluster_parse("hosts=4,link=100Gbit/s,latency=0us", &c, err, sizeof err),
                     0);
    assert_true(fabs(model_stack_beta(&s, &c, big) - 5e-3) < 1e-9);
    assert_true(fabs(model_stack_beta(&s, &c, 1048576) - s.theta[MODEL_BETA_INTRA]) < 1e-6);
    assert_int_equal(model_predict(&s, &c, big, &p, err, sizeof err), 0);
    assert_true(p.stack_bound);
    /* the ring's 6 steps at alpha 20 (the stack's share over the link) + 1.5 n x 5e-3 */
    double want = 6 * 20 + 1.5 * big * 5e-3;
    assert_true(fabs(p.time_us - want) < 1e-6 * want);
    /* at 1 MiB the stack is fast: the link (+ the stack's beta) is the cost */
    assert_int_equal(model_predict(&s, &c, 1048576, &p, err, sizeof err), 0);
    assert_false(p.stack_bound);
    /* hosts emulated on one machine: the 4 ranks share its CPU, the 3-rank row is nearest */
    assert_int_equal(model_cluster_parse("hosts=4,link=100Gbit/s,latency=0us,shared-cores=2", &c,
                                         err, sizeof err),
                     0);
    assert_true(fabs(model_stack_beta(&s, &c, big) - 1e-2) < 1e-9);
    /* a slow link stays the bound */
    assert_int_equal(model_cluster_parse("hosts=4,link=100Mbit/s,latency=0us", &c, err, sizeof err),
                     0);
    assert_int_equal(model_predict(&s, &c, big, &p, err, sizeof err), 0);
    assert_false(p.stack_bound);
    assert_true(fabs(p.time_us - (6 * 20 + 1.5 * big * (8e-2 + 5e-4))) < 1e-3 * p.time_us);
    /* the auto backend's one-host rows are shm's: no ceiling from them, but from
     * the tcp series beside it; hierarchical (2 ranks a host) half of it per link byte */
    model_series a = s;
    strcpy(a.backend, "auto");
    strcpy(a.algo, "auto");
    a.model = MODEL_ALGO_BOUND;
    assert_true(model_stack_beta(&a, &c, big) == 0);
    a.stack = &s;
    assert_true(fabs(model_stack_beta(&a, &c, big) - 5e-3) < 1e-9);
    assert_int_equal(
        model_cluster_parse("hosts=2,ranks-per-host=2,link=100Gbit/s,latency=0us,shared-cores=2",
                            &c, err, sizeof err),
        0);
    assert_true(fabs(model_stack_beta(&s, &c, big) - 1e-2) < 1e-9);
    assert_true(fabs(model_stack_beta(&a, &c, big) - 0.5e-2) < 1e-9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rates_and_times),    cmocka_unit_test(test_cluster_syntax),
        cmocka_unit_test(test_prediction_by_hand), cmocka_unit_test(test_whatif),
        cmocka_unit_test(test_stack_ceiling),      cmocka_unit_test(test_measured_link_scales),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
