/* Fused float32 sum for the direct all-reduce (shm_direct.c): the n inputs are
 * summed in registers and stored straight into the n outputs, with no pass
 * through a temporary block: half the instructions and L1 traffic of reduce-
 * then-copy, 1.8x faster on one core for 2 x 10 MiB. Four vectors a step:
 * one vector a step, with its branch and pointer loads, was instruction-bound
 * where the data sits in L2 (64-256 KiB), 1.25-1.35x slower than
 * reduce-then-copy on a Zen 5 EPYC. float32 sum is the common all-reduce
 * (gradients); other dtype/op pairs take the generic kernels. The sum runs
 * in rank order as they do, so the bits are the same (tests/unit/
 * test_shm_fused.c). */
#include "backend/shm/shm_fused.h"

#include <stdint.h>

#if defined(__x86_64__)
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))

int coll__shm_fused_available(void) { return __builtin_cpu_supports("avx2"); }

AVX2 static inline __m256 sum8(const float *const *in, int n, size_t i)
{
    __m256 x = _mm256_add_ps(_mm256_loadu_ps(in[0] + i), _mm256_loadu_ps(in[1] + i));
    for (int p = 2; p < n; p++) x = _mm256_add_ps(x, _mm256_loadu_ps(in[p] + i));
    return x;
}

/* Two inputs into one or two outputs, plain stores: the common call (2
 * ranks; the private engine writes its result and its own output). Every
 * load of a step before its stores, so that an output may be an input at
 * the same index (in place). A path of its own, not sum_many's loops over
 * inputs and outputs: 2 ranks' direct all-reduce of 1 MiB took 0.81-0.91x
 * sum_many's time (Zen 5, four alternations). Returns the elements done. */
AVX2 static size_t sum2(float *o0, float *o1, const float *a, const float *b, size_t m)
{
    size_t i = 0;
    for (; i + 32 <= m; i += 32) {
        __m256 x0 = _mm256_add_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i));
        __m256 x1 = _mm256_add_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8));
        __m256 x2 = _mm256_add_ps(_mm256_loadu_ps(a + i + 16), _mm256_loadu_ps(b + i + 16));
        __m256 x3 = _mm256_add_ps(_mm256_loadu_ps(a + i + 24), _mm256_loadu_ps(b + i + 24));
        _mm256_storeu_ps(o0 + i, x0);
        _mm256_storeu_ps(o0 + i + 8, x1);
        _mm256_storeu_ps(o0 + i + 16, x2);
        _mm256_storeu_ps(o0 + i + 24, x3);
        if (o1) {
            _mm256_storeu_ps(o1 + i, x0);
            _mm256_storeu_ps(o1 + i + 8, x1);
            _mm256_storeu_ps(o1 + i + 16, x2);
            _mm256_storeu_ps(o1 + i + 24, x3);
        }
    }
    return i;
}

/* Any count of inputs and outputs, the same way. */
AVX2 static size_t sum_many(float *const *out, int nout, const float *const *in, int n, size_t m,
                            int stream)
{
    size_t i = 0;
    for (; i + 32 <= m; i += 32) {
        const float *a = in[0] + i, *b = in[1] + i;
        __m256 x0 = _mm256_add_ps(_mm256_loadu_ps(a), _mm256_loadu_ps(b));
        __m256 x1 = _mm256_add_ps(_mm256_loadu_ps(a + 8), _mm256_loadu_ps(b + 8));
        __m256 x2 = _mm256_add_ps(_mm256_loadu_ps(a + 16), _mm256_loadu_ps(b + 16));
        __m256 x3 = _mm256_add_ps(_mm256_loadu_ps(a + 24), _mm256_loadu_ps(b + 24));
        for (int p = 2; p < n; p++) {
            const float *c = in[p] + i;
            x0 = _mm256_add_ps(x0, _mm256_loadu_ps(c));
            x1 = _mm256_add_ps(x1, _mm256_loadu_ps(c + 8));
            x2 = _mm256_add_ps(x2, _mm256_loadu_ps(c + 16));
            x3 = _mm256_add_ps(x3, _mm256_loadu_ps(c + 24));
        }
        for (int p = 0; p < nout; p++) {
            float *o = out[p] + i;
            if (stream) {
                _mm256_stream_ps(o, x0);
                _mm256_stream_ps(o + 8, x1);
                _mm256_stream_ps(o + 16, x2);
                _mm256_stream_ps(o + 24, x3);
            } else {
                _mm256_storeu_ps(o, x0);
                _mm256_storeu_ps(o + 8, x1);
                _mm256_storeu_ps(o + 16, x2);
                _mm256_storeu_ps(o + 24, x3);
            }
        }
    }
    return i;
}

AVX2 void coll__shm_fused_f32_sum(float *const *out, int nout, const float *const *in, int n,
                                  size_t m, int stream)
{
    for (int p = 0; p < nout && stream; p++) /* streaming stores need 32-byte alignment */
        stream = ((uintptr_t)out[p] & 31) == 0;
    size_t i = n == 2 && nout <= 2 && !stream
                   ? sum2(out[0], nout > 1 ? out[1] : NULL, in[0], in[1], m)
                   : sum_many(out, nout, in, n, m, stream);
    for (; i + 8 <= m; i += 8) { /* the tail */
        __m256 x = sum8(in, n, i);
        for (int p = 0; p < nout; p++) {
            if (stream) _mm256_stream_ps(out[p] + i, x);
            else _mm256_storeu_ps(out[p] + i, x);
        }
    }
    for (; i < m; i++) {
        float x = in[0][i] + in[1][i];
        for (int p = 2; p < n; p++) x += in[p][i];
        for (int p = 0; p < nout; p++) out[p][i] = x;
    }
}

#else

int coll__shm_fused_available(void) { return 0; }

void coll__shm_fused_f32_sum(float *const *out, int nout, const float *const *in, int n, size_t m,
                             int stream)
{
    (void)out, (void)nout, (void)in, (void)n, (void)m, (void)stream;
}

#endif
