/* Reductions of many inputs into one output (reduce.h, coll__reduce_many). */
#include "core/half.h"
#include "core/reduce.h"

#include <stdint.h>
#include <string.h>

/* fp32 accumulator elements per piece: 2 KiB on the stack, in L1 with its inputs. */
#define ACC_ELEMS 512

int coll__reduce_rounds_once(coll_dtype dt, coll_op op)
{
    return (dt == COLL_FLOAT16 || dt == COLL_BFLOAT16) && (op == COLL_SUM || op == COLL_AVG);
}

/* Built for the baseline and, on x86-64, for AVX2 (chosen at run time, as the
 * kernels of reduce.c are): the conversions vectorise about 2x better with
 * AVX2's blends and packs. The dtype's branch stays outside the loops. */
#define DEFINE_WIDEN(isa, attr)                                                               \
    attr static void widen##isa(float *restrict acc, const uint16_t *restrict h, size_t m,    \
                                coll_dtype dt, int add)                                       \
    {                                                                                         \
        if (dt == COLL_FLOAT16 && add)                                                        \
            for (size_t i = 0; i < m; i++) acc[i] += coll__half_to_float(h[i]);               \
        else if (dt == COLL_FLOAT16)                                                          \
            for (size_t i = 0; i < m; i++) acc[i] = coll__half_to_float(h[i]);                \
        else if (add)                                                                         \
            for (size_t i = 0; i < m; i++) acc[i] += coll__bf16_to_float(h[i]);               \
        else                                                                                  \
            for (size_t i = 0; i < m; i++) acc[i] = coll__bf16_to_float(h[i]);                \
    }                                                                                         \
    attr static void narrow##isa(uint16_t *restrict out, const float *restrict acc, size_t m, \
                                 coll_dtype dt, float d)                                      \
    {                                                                                         \
        if (dt == COLL_FLOAT16)                                                               \
            for (size_t i = 0; i < m; i++) out[i] = coll__float_to_half(acc[i] / d);          \
        else                                                                                  \
            for (size_t i = 0; i < m; i++) out[i] = coll__float_to_bf16(acc[i] / d);          \
    }

DEFINE_WIDEN(_base, )
#if defined(__x86_64__) && defined(__GNUC__) && !defined(COLL_NO_AVX2)
DEFINE_WIDEN(_avx2, __attribute__((target("avx2"))))
#define AVX2() __builtin_cpu_supports("avx2")
#else
#define AVX2() 0
#define widen_avx2 widen_base
#define narrow_avx2 narrow_base
#endif

void coll__widen(float *acc, const void *a, size_t m, coll_dtype dt, int add)
{
    if (AVX2()) widen_avx2(acc, a, m, dt, add);
    else widen_base(acc, a, m, dt, add);
}

void coll__narrow(void *out, const float *acc, size_t m, coll_dtype dt, int divisor)
{
    float d = divisor > 1 ? (float)divisor : 1.0f;
    if (AVX2()) narrow_avx2(out, acc, m, dt, d);
    else narrow_base(out, acc, m, dt, d);
}

/* Half-precision sums: every input added in float32 in rank order, the sum
 * (divided by n for an average) rounded once. */
static void sum_once(uint16_t *out, const void *const *in, int n, size_t m, coll_dtype dt,
                     int average)
{
    float acc[ACC_ELEMS];
    for (size_t q = 0; q < m; q += ACC_ELEMS) {
        size_t k = m - q < ACC_ELEMS ? m - q : ACC_ELEMS;
        for (int p = 0; p < n; p++) coll__widen(acc, (const uint16_t *)in[p] + q, k, dt, p > 0);
        coll__narrow(out + q, acc, k, dt, average ? n : 1);
    }
}

void coll__reduce_many(void *out, const void *const *in, int n, size_t m, coll_dtype dt, coll_op op,
                       coll__reduce_fn fn)
{
    if (n <= 0 || m == 0) return;
    if (n == 1) {
        if (out != in[0]) memcpy(out, in[0], m * coll_dtype_size(dt));
        return;
    }
    if (coll__reduce_rounds_once(dt, op)) {
        sum_once(out, in, n, m, dt, op == COLL_AVG);
        return;
    }
    fn(out, in[0], in[1], m);
    for (int p = 2; p < n; p++) fn(out, out, in[p], m);
    if (op == COLL_AVG) coll__scale_div(out, m, dt, n);
}
