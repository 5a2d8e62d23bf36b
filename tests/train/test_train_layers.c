/* One process: every layer's gradient against finite differences, the loss
 * falling on the synthetic task, data and weights reproducible from the seed,
 * top-k selection, compression and mode parsing, and the option checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "train/compress.h"
#include "train/net.h"
#include "train/reducer.h"
#include "train/synth_data.h"
#include "train/train_options.h"
#include "train/train_rng.h"
#include "train/train_run.h"

#define B 3

/* Loss of a fixed random projection of the layer's output: L = sum(out * r). */
static double probe(train_layer *l, const float *params, const float *x, const float *r)
{
    train_layer_forward(l, params, x, B);
    double s = 0;
    for (size_t i = 0; i < B * l->out_size; i++) s += (double)l->out[i] * r[i];
    return s;
}

static void alloc_layer(train_layer *l)
{
    l->out = calloc(B * l->out_size, sizeof(float));
    if (l->kind == LAYER_CONV) l->cols = calloc(B * l->in_size * CONV_K * CONV_K, sizeof(float));
    if (l->kind == LAYER_MAXPOOL) l->argmax = calloc(B * l->out_size, sizeof(int));
}

static void free_layer(train_layer *l)
{
    free(l->out);
    free(l->cols);
    free(l->argmax);
}

/* Analytic gradients (parameters and input) vs central differences in double. */
static void grad_check(train_layer *l)
{
    alloc_layer(l);
    size_t np = l->nweight + l->nbias;
    float *params = calloc(np + 1, sizeof(float)), *grads = calloc(np + 1, sizeof(float));
    float *x = calloc(B * l->in_size, sizeof(float)), *dx = calloc(B * l->in_size, sizeof(float));
    float *r = calloc(B * l->out_size, sizeof(float));
    for (size_t i = 0; i < np; i++) params[i] = 0.5f * train_uniform(11, i);
    /* inputs well apart so max-pool and ReLU have no ties or kinks near x */
    for (size_t i = 0; i < B * l->in_size; i++) {
        float u = train_uniform(12, i);
        x[i] = u + (u >= 0 ? 0.05f : -0.05f) + 0.001f * (float)(i % 97);
    }
    for (size_t i = 0; i < B * l->out_size; i++) r[i] = train_uniform(13, i);

    probe(l, params, x, r);
    train_layer_backward(l, params, grads, x, r, dx, B, NULL); /* dL/dout = r */

    const double h = 1e-2;
    for (size_t i = 0; i < np; i += 1 + np / 50) {
        float keep = params[i];
        params[i] = keep + (float)h;
        double up = probe(l, params, x, r);
        params[i] = keep - (float)h;
        double down = probe(l, params, x, r);
        params[i] = keep;
        double num = (up - down) / (2 * h);
        assert_true(fabs(num - grads[i]) <= 2e-2 * (1 + fabs(num)));
    }
    for (size_t i = 0; i < B * l->in_size; i += 1 + B * l->in_size / 50) {
        float keep = x[i];
        x[i] = keep + (float)1e-3;
        double up = probe(l, params, x, r);
        x[i] = keep - (float)1e-3;
        double down = probe(l, params, x, r);
        x[i] = keep;
        double num = (up - down) / 2e-3;
        assert_true(fabs(num - dx[i]) <= 2e-2 * (1 + fabs(num)));
    }
    free(params), free(grads), free(x), free(dx), free(r);
    free_layer(l);
}

static void test_linear_gradient(void **state)
{
    (void)state;
    train_layer l;
    train_layer_init_linear(&l, 7, 5);
    grad_check(&l);
}

static void test_conv_gradient(void **state)
{
    (void)state;
    train_layer l;
    train_layer_init_conv(&l, 2, 6, 6, 3);
    grad_check(&l);
}

static void test_relu_gradient(void **state)
{
    (void)state;
    train_layer l;
    train_layer_init_relu(&l, 4, 3, 3);
    grad_check(&l);
}

static void test_maxpool_gradient(void **state)
{
    (void)state;
    train_layer l;
    train_layer_init_maxpool(&l, 2, 4, 6);
    grad_check(&l);
}

static void test_softmax_gradient(void **state)
{
    (void)state;
    enum { C = 5 };
    float z[B * C], dz[B * C];
    int labels[B] = {0, 3, 4};
    for (int i = 0; i < B * C; i++) z[i] = 2 * train_uniform(21, (uint64_t)i);
    double loss = train_softmax_xent(z, labels, B, C, dz);
    assert_true(loss > 0);
    for (int i = 0; i < B * C; i++) {
        float keep = z[i];
        z[i] = keep + 1e-3f;
        double up = train_softmax_xent(z, labels, B, C, NULL);
        z[i] = keep - 1e-3f;
        double down = train_softmax_xent(z, labels, B, C, NULL);
        z[i] = keep;
        assert_true(fabs((up - down) / 2e-3 - dz[i]) < 1e-3);
    }
}

/* The linear layer cuts its weight gradient at bucket boundaries: the hook
 * sees the offsets fall, and the gradient equals the uncut one. */
typedef struct cut_log {
    size_t boundary, calls, last;
    int rising;
} cut_log;

static void log_ready(void *arg, size_t lo)
{
    cut_log *c = arg;
    if (c->calls++ && lo > c->last) c->rising = 1;
    c->last = lo;
}

static size_t log_boundary(void *arg, size_t hi)
{
    return ((cut_log *)arg)->boundary < hi ? ((cut_log *)arg)->boundary : 0;
}

static void test_linear_cut_at_bucket(void **state)
{
    (void)state;
    train_layer l;
    train_layer_init_linear(&l, 6, 8);
    alloc_layer(&l);
    size_t np = l.nweight + l.nbias;
    float *p = calloc(np, 4), *g1 = calloc(np, 4), *g2 = calloc(np, 4), *x = calloc(B * 6, 4),
          *dy = calloc(B * 8, 4);
    for (size_t i = 0; i < np; i++) p[i] = train_uniform(1, i);
    for (size_t i = 0; i < B * 6; i++) x[i] = train_uniform(2, i);
    for (size_t i = 0; i < B * 8; i++) dy[i] = train_uniform(3, i);
    cut_log log = {.boundary = 20};
    grad_hook hook = {.ready = log_ready, .boundary_below = log_boundary, .arg = &log};
    train_layer_backward(&l, p, g1, x, dy, NULL, B, NULL);
    train_layer_backward(&l, p, g2, x, dy, NULL, B, &hook);
    assert_int_equal(log.calls, 3); /* bias, rows above the cut, rows below */
    assert_false(log.rising);
    assert_int_equal(log.last, 0);
    for (size_t i = 0; i < np; i++) assert_true(fabsf(g1[i] - g2[i]) < 1e-6f);
    free(p), free(g1), free(g2), free(x), free(dy);
    free_layer(&l);
}

static const int small_hidden[] = {32};

static train_config small_config(train_mode mode)
{
    train_config c = {
        .batch = 16, .steps = 60, .warmup = 0, .seed = 5, .lr = 0.05f, .momentum = 0.9f};
    c.spec = (net_spec){
        .kind = NET_MLP, .input = 20, .hidden = small_hidden, .nhidden = 1, .classes = 4};
    c.red.mode = mode;
    return c;
}

static void test_loss_falls(void **state)
{
    (void)state;
    train_config c = small_config(MODE_SINGLE);
    train_result res;
    char err[256];
    assert_int_equal(train_run(NULL, &c, &res, err, sizeof err), 0);
    assert_true(isfinite(res.loss_first) && isfinite(res.loss_last));
    assert_true(res.loss_last < 0.6 * res.loss_first);
    train_result_free(&res);
}

static void test_cnn_loss_falls(void **state)
{
    (void)state;
    static const int ch[] = {8}, hid[] = {32};
    train_config c = small_config(MODE_SINGLE);
    c.spec = (net_spec){.kind = NET_CNN,
                        .in_channels = 3,
                        .image = 4,
                        .channels = ch,
                        .nchannels = 1,
                        .hidden = hid,
                        .nhidden = 1,
                        .classes = 3};
    train_result res;
    char err[256];
    assert_int_equal(train_run(NULL, &c, &res, err, sizeof err), 0);
    assert_true(res.loss_last < 0.8 * res.loss_first);
    train_result_free(&res);
}

static void test_same_seed_same_run(void **state)
{
    (void)state;
    train_config c = small_config(MODE_SINGLE);
    c.steps = 5;
    c.keep_params = 1;
    train_result a, b;
    char err[256];
    assert_int_equal(train_run(NULL, &c, &a, err, sizeof err), 0);
    assert_int_equal(train_run(NULL, &c, &b, err, sizeof err), 0);
    assert_memory_equal(a.params, b.params, a.nparams * sizeof(float));
    c.seed = 6;
    train_result d;
    assert_int_equal(train_run(NULL, &c, &d, err, sizeof err), 0);
    assert_true(memcmp(a.params, d.params, a.nparams * sizeof(float)) != 0);
    train_result_free(&a), train_result_free(&b), train_result_free(&d);
}

static void test_nan_stops_with_step(void **state)
{
    (void)state;
    train_config c = small_config(MODE_SINGLE);
    c.steps = 10;
    c.inject_nan_step = 4;
    train_result res;
    char err[256];
    assert_int_equal(train_run(NULL, &c, &res, err, sizeof err), TRAIN_ENAN);
    assert_int_equal(res.bad_step, 4);
    assert_non_null(strstr(err, "step 4"));
    train_result_free(&res);
}

static void test_synth_split_matches(void **state)
{
    (void)state;
    synth_data d;
    assert_int_equal(train_synth_init(&d, 9, 3, 42), 0);
    float whole[8 * 9], part[4 * 9];
    int lw[8], lp[4];
    train_synth_batch(&d, 16, 8, whole, lw);
    train_synth_batch(&d, 20, 4, part, lp);
    assert_memory_equal(whole + 4 * 9, part, sizeof part);
    assert_memory_equal(lw + 4, lp, sizeof lp);
    int seen[3] = {0};
    float many[200 * 9];
    int lm[200];
    train_synth_batch(&d, 0, 200, many, lm);
    for (int i = 0; i < 200; i++) seen[lm[i]]++;
    for (int c = 0; c < 3; c++) assert_true(seen[c] > 10); /* every class occurs */
    train_synth_free(&d);
}

static int cmp_desc(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

static void test_topk_select(void **state)
{
    (void)state;
    enum { N = 1000 };
    float acc[N], copy[N], scratch[N], mags[N];
    topk_pair out[N];
    for (size_t k = 1; k <= N; k = k * 7 + 3) {
        for (int i = 0; i < N; i++)
            acc[i] = copy[i] = train_uniform(k, (uint64_t)i) * (i % 5 ? 1 : 3);
        for (int i = 0; i < N; i++) mags[i] = fabsf(copy[i]);
        qsort(mags, N, sizeof(float), cmp_desc);
        train_topk_select(acc, N, k, scratch, out);
        float sent_min = INFINITY;
        for (size_t j = 0; j < k; j++) {
            assert_true(out[j].index < N);
            assert_true(out[j].value == copy[out[j].index]);
            assert_true(acc[out[j].index] == 0); /* sent: no residual */
            if (j) assert_true(out[j].index > out[j - 1].index);
            sent_min = fminf(sent_min, fabsf(out[j].value));
        }
        assert_true(sent_min == mags[k - 1]);
    }
}

static void test_half_round_trip(void **state)
{
    (void)state;
    float src[4] = {1.0f, -2.5f, 0.125f, 3.0e-3f}, back[4];
    uint16_t h[4];
    train_compress_to_half(COMPRESS_FP16, src, h, 4);
    train_compress_from_half(COMPRESS_FP16, h, back, 4, 0.5f);
    for (int i = 0; i < 4; i++)
        assert_true(fabsf(back[i] - src[i] * 0.5f) < 1e-3f * fabsf(src[i]) + 1e-6f);
    train_compress_to_half(COMPRESS_BF16, src, h, 4);
    train_compress_from_half(COMPRESS_BF16, h, back, 4, 1.0f);
    for (int i = 0; i < 4; i++) assert_true(fabsf(back[i] - src[i]) < 1e-2f * fabsf(src[i]));
}

static void test_parse_compress_and_mode(void **state)
{
    (void)state;
    compress_spec c;
    char err[256];
    assert_int_equal(train_compress_parse("topk:0.01", &c, err, sizeof err), 0);
    assert_int_equal(c.kind, COMPRESS_TOPK);
    assert_int_equal(train_compress_parse("topk:1", &c, err, sizeof err), 0);
    assert_int_equal(train_compress_parse("topk:0", &c, err, sizeof err), COLL_EINVAL);
    assert_non_null(strstr(err, "(0,1]"));
    assert_int_equal(train_compress_parse("topk:1.5", &c, err, sizeof err), COLL_EINVAL);
    assert_int_equal(train_compress_parse("zip", &c, err, sizeof err), COLL_EINVAL);
    reducer_opts r;
    assert_int_equal(train_reducer_mode_parse("local-sgd:8", &r, err, sizeof err), 0);
    assert_int_equal(r.local_k, 8);
    char name[32];
    train_reducer_mode_name(&r, name, sizeof name);
    assert_string_equal(name, "local-sgd:8");
    assert_int_equal(train_reducer_mode_parse("local-sgd:0", &r, err, sizeof err), COLL_EINVAL);
    assert_int_equal(train_reducer_mode_parse("dp", &r, err, sizeof err), COLL_EINVAL);
}

static int parse(train_options *o, const char *line, char *err, size_t errlen)
{
    char copy[512], *argv[32];
    int argc = 0;
    snprintf(copy, sizeof copy, "train %s", line);
    for (char *t = strtok(copy, " "); t && argc < 31; t = strtok(NULL, " ")) argv[argc++] = t;
    argv[argc] = NULL;
    int rc = train_options_parse(o, argc, argv, err, errlen);
    return rc ? rc : train_options_check(o, err, errlen);
}

static void test_options_bad_input(void **state)
{
    (void)state;
    static train_options o;
    char err[768];
    assert_int_equal(parse(&o, "--quick", err, sizeof err), 0);
    assert_int_equal(parse(&o, "--hidden 64,0", err, sizeof err), COLL_EINVAL);
    assert_non_null(strstr(err, "--hidden"));
    assert_int_equal(parse(&o, "--bucket-mb 0", err, sizeof err), COLL_EINVAL);
    assert_non_null(strstr(err, "--bucket-mb"));
    assert_int_equal(parse(&o, "--global-batch 3 -P 1,4", err, sizeof err), COLL_EINVAL);
    assert_non_null(strstr(err, "4 processes"));
    assert_int_equal(parse(&o, "--compress topk:2", err, sizeof err), COLL_EINVAL);
    assert_int_equal(parse(&o, "--model cnn --image 12", err, sizeof err), COLL_EINVAL);
    assert_non_null(strstr(err, "--image"));
    assert_int_equal(parse(&o, "--hidden 40000,40000 --input 1000", err, sizeof err), COLL_EINVAL);
    assert_non_null(strstr(err, "MiB"));
    assert_int_equal(parse(&o, "--model cnn --channels 8 --image 8 --hidden 16", err, sizeof err),
                     0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_linear_gradient),     cmocka_unit_test(test_conv_gradient),
        cmocka_unit_test(test_relu_gradient),       cmocka_unit_test(test_maxpool_gradient),
        cmocka_unit_test(test_softmax_gradient),    cmocka_unit_test(test_linear_cut_at_bucket),
        cmocka_unit_test(test_loss_falls),          cmocka_unit_test(test_cnn_loss_falls),
        cmocka_unit_test(test_same_seed_same_run),  cmocka_unit_test(test_nan_stops_with_step),
        cmocka_unit_test(test_synth_split_matches), cmocka_unit_test(test_topk_select),
        cmocka_unit_test(test_half_round_trip),     cmocka_unit_test(test_parse_compress_and_mode),
        cmocka_unit_test(test_options_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
