/* The fused float32 sum of shm's direct and private all-reduce
 * (src/backend/shm/shm_fused.c): for every count of inputs and outputs the
 * engines call it with, every length around its vector steps (the four-
 * vector loops, the one-vector tail, the scalar tail), plain and streaming
 * stores, out of place and in place (an output that is an input), every
 * output holds the inputs' sum in rank order, bit for bit, and nothing
 * past the end is written. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "backend/shm/shm_fused.h"
#include "core/alloc.h"

#define MAX_N 6
#define GUARD 8 /* elements after the end that must stay as they were */

/* Values whose sums round (so that another order of adding shows). */
static float value(int p, size_t i) { return (float)(p + 1) * 0.1f + (float)i * 1.0e-3f; }

static float ref_sum(int n, size_t i)
{
    float x = value(0, i) + value(1, i);
    for (int p = 2; p < n; p++) x += value(p, i);
    return x;
}

/* One call: n inputs, nout outputs, m elements; in_place makes out[0] in[0].
 * Buffers are 64-byte aligned plus shift elements (shift 0: streaming may
 * run; 1: it must fall back to plain stores). */
static void check(int n, int nout, size_t m, int stream, int in_place, size_t shift)
{
    float *in_buf[MAX_N], *out_buf[MAX_N];
    const float *in[MAX_N];
    float *out[MAX_N];
    size_t len = (m + shift + GUARD) * sizeof(float);
    for (int p = 0; p < n; p++) {
        in_buf[p] = coll__alloc_aligned_to(64, len);
        assert_non_null(in_buf[p]);
        in[p] = in_buf[p] + shift;
        for (size_t i = 0; i < m + GUARD; i++) in_buf[p][shift + i] = value(p, i);
    }
    for (int q = 0; q < nout; q++) {
        out_buf[q] = coll__alloc_aligned_to(64, len);
        assert_non_null(out_buf[q]);
        out[q] = out_buf[q] + shift;
        for (size_t i = 0; i < m + GUARD; i++) out[q][i] = -1.0f;
    }
    if (in_place) out[0] = (float *)in[0];
    coll__shm_fused_f32_sum(out, nout, in, n, m, stream);
    for (int q = 0; q < nout; q++) {
        for (size_t i = 0; i < m; i++) {
            float want = ref_sum(n, i);
            if (memcmp(&out[q][i], &want, sizeof want) != 0)
                fail_msg("n %d nout %d m %zu stream %d in_place %d shift %zu: out[%d][%zu] = %.9g, "
                         "want %.9g",
                         n, nout, m, stream, in_place, shift, q, i, (double)out[q][i],
                         (double)want);
        }
        for (size_t i = m; i < m + GUARD; i++)
            if (out[q][i] != (q == 0 && in_place ? value(0, i) : -1.0f))
                fail_msg("n %d nout %d m %zu: out[%d][%zu] written past the end", n, nout, m, q, i);
    }
    for (int p = 0; p < n; p++) free(in_buf[p]);
    for (int q = 0; q < nout; q++) free(out_buf[q]);
}

static void test_every_shape(void **state)
{
    (void)state;
    if (!coll__shm_fused_available()) skip(); /* no AVX2: the engines never call it */
    static const size_t lengths[] = {0, 1, 7, 8, 9, 31, 32, 33, 40, 63, 64, 65, 1000, 4099};
    static const int shapes[][2] = {{2, 1}, {2, 2}, {3, 2}, {3, 3}, {4, 2}, {4, 4}, {6, 2}, {6, 6}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++)
            for (int stream = 0; stream < 2; stream++)
                for (int in_place = 0; in_place < 2; in_place++)
                    for (size_t shift = 0; shift < 2; shift++)
                        check(shapes[s][0], shapes[s][1], lengths[l], stream, in_place, shift);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_every_shape)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
