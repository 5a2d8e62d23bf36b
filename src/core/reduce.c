/* Reduction kernels: out[i] = a[i] op b[i] for every dtype/op pair.
 *
 * Vectorisation. The loops must vectorise at -O3 with gcc and clang, but out
 * may be a or b (in-place collectives), so out cannot simply be restrict.
 * Every kernel therefore has four loops, each with restrict pointers that
 * really do not alias: out distinct, out == a, out == b, and out == a == b.
 * The dispatcher picks one by comparing pointers; a and b may be equal in
 * the distinct loop because restrict only forbids aliasing of written data.
 * docs/KERNELS.md lists what vectorises and how to re-check it.
 *
 * Arithmetic. Integers add and multiply in unsigned arithmetic so overflow
 * wraps instead of being undefined. float16/bfloat16 convert to float32,
 * operate, and convert back: one rounding, and for + and * float32 is
 * wide enough (24 >= 2*11+2 bits) that this equals the correctly rounded
 * half-precision result.
 *
 * NaN and min/max. min is x < y ? x : y and max is x > y ? x : y, the form
 * that compiles to minps/maxps. A comparison with NaN is false, so the result
 * is the second operand (b[i]) whenever either operand is NaN: a NaN in b
 * propagates, a NaN in a is dropped. sum and prod propagate NaN as IEEE does. */
#include <stdint.h>

#include "core/half.h"
#include "core/reduce.h"

/* ---- element operations: name <tag>_<op>(x, y) ---- */

#define MINMAX_OPS(tag, T)                                        \
    static inline T tag##_min(T x, T y) { return x < y ? x : y; } \
    static inline T tag##_max(T x, T y) { return x > y ? x : y; }

#define FLOAT_OPS(tag, T)                                  \
    static inline T tag##_sum(T x, T y) { return x + y; }  \
    static inline T tag##_prod(T x, T y) { return x * y; } \
    MINMAX_OPS(tag, T)

/* The result is converted back from unsigned: modulo for gcc and clang
 * (implementation-defined, never undefined). */
#define INT_OPS(tag, T, UT)                                                 \
    static inline T tag##_sum(T x, T y) { return (T)(UT)((UT)x + (UT)y); }  \
    static inline T tag##_prod(T x, T y) { return (T)(UT)((UT)x * (UT)y); } \
    MINMAX_OPS(tag, T)

#define HALF_OP(tag, op, to_f, from_f, expr)                    \
    static inline uint16_t tag##_##op(uint16_t hx, uint16_t hy) \
    {                                                           \
        float x = to_f(hx), y = to_f(hy);                       \
        return from_f(expr);                                    \
    }

#define HALF_OPS(tag, to_f, from_f)                \
    HALF_OP(tag, sum, to_f, from_f, x + y)         \
    HALF_OP(tag, prod, to_f, from_f, x *y)         \
    HALF_OP(tag, min, to_f, from_f, x < y ? x : y) \
    HALF_OP(tag, max, to_f, from_f, x > y ? x : y)

FLOAT_OPS(f32, float)
FLOAT_OPS(f64, double)
HALF_OPS(f16, coll__half_to_float, coll__float_to_half)
HALF_OPS(bf16, coll__bf16_to_float, coll__float_to_bf16)
INT_OPS(i8, int8_t, uint8_t)
INT_OPS(u8, uint8_t, uint8_t)
INT_OPS(i32, int32_t, uint32_t)

/* int64 min/max: x86-64's baseline SSE2 has no 64-bit compare, so x < y is
 * computed from the sign of x - y, corrected for overflow (Hacker's Delight
 * 2-12), and applied as a mask: this vectorises with SSE2 alone. */
static inline int64_t i64_select_lt(int64_t x, int64_t y, int64_t if_lt, int64_t if_ge)
{
    uint64_t ux = (uint64_t)x, uy = (uint64_t)y, d = ux - uy;
    uint64_t lt = (d ^ ((ux ^ uy) & (d ^ ux))) >> 63;
    uint64_t mask = 0u - lt;
    return (int64_t)(((uint64_t)if_lt & mask) | ((uint64_t)if_ge & ~mask));
}
static inline int64_t i64_sum(int64_t x, int64_t y) { return (int64_t)((uint64_t)x + (uint64_t)y); }
/* Plain imul: gcc's cost model rightly keeps this scalar on SSE2 (two lanes
 * of emulated 64-bit multiply cost more than two imuls); clang vectorises it. */
static inline int64_t i64_prod(int64_t x, int64_t y)
{
    return (int64_t)((uint64_t)x * (uint64_t)y);
}
static inline int64_t i64_min(int64_t x, int64_t y) { return i64_select_lt(x, y, x, y); }
static inline int64_t i64_max(int64_t x, int64_t y) { return i64_select_lt(y, x, x, y); }

/* ---- kernels: reduce_<tag>_<op><isa>(out, a, b, n) ---- */

/* Each kernel is built twice on x86-64: for the baseline (SSE2) and for AVX2,
 * chosen at run time. AVX2 doubles the lanes and gives the float16/bfloat16
 * conversions the blends and packs SSE2 lacks (about 2x for them). The choice
 * is a plain CPU check, not an ifunc: ifunc resolvers run before the
 * sanitizer runtimes start and crash -fsanitize=thread builds. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(COLL_NO_AVX2)
#define COLL_HAVE_AVX2 1
#define AVX2_TARGET __attribute__((target("avx2")))
#endif

#define DEFINE_KERNEL(tag, op, T, isa, attr)                                                     \
    attr static void reduce_##tag##_##op##isa##_distinct(T *restrict out, const T *restrict a,   \
                                                         const T *restrict b, size_t n)          \
    {                                                                                            \
        for (size_t i = 0; i < n; i++) out[i] = tag##_##op(a[i], b[i]);                          \
    }                                                                                            \
    attr static void reduce_##tag##_##op##isa##_into_a(T *restrict io, const T *restrict b,      \
                                                       size_t n)                                 \
    {                                                                                            \
        for (size_t i = 0; i < n; i++) io[i] = tag##_##op(io[i], b[i]);                          \
    }                                                                                            \
    attr static void reduce_##tag##_##op##isa##_into_b(T *restrict io, const T *restrict a,      \
                                                       size_t n)                                 \
    {                                                                                            \
        for (size_t i = 0; i < n; i++) io[i] = tag##_##op(a[i], io[i]);                          \
    }                                                                                            \
    attr static void reduce_##tag##_##op##isa##_self(T *restrict io, size_t n)                   \
    {                                                                                            \
        for (size_t i = 0; i < n; i++) io[i] = tag##_##op(io[i], io[i]);                         \
    }                                                                                            \
    attr static void reduce_##tag##_##op##isa(void *out, const void *a, const void *b, size_t n) \
    {                                                                                            \
        if (out != a && out != b) reduce_##tag##_##op##isa##_distinct(out, a, b, n);             \
        else if (out != b) reduce_##tag##_##op##isa##_into_a(out, b, n);                         \
        else if (out != a) reduce_##tag##_##op##isa##_into_b(out, a, n);                         \
        else reduce_##tag##_##op##isa##_self(out, n);                                            \
    }

#define DEFINE_KERNELS(tag, T, isa, attr)  \
    DEFINE_KERNEL(tag, sum, T, isa, attr)  \
    DEFINE_KERNEL(tag, prod, T, isa, attr) \
    DEFINE_KERNEL(tag, min, T, isa, attr)  \
    DEFINE_KERNEL(tag, max, T, isa, attr)

/* avg reduces as sum (the caller divides once at the end); integers have no avg. */
#define FLOAT_ROW(tag, isa)                                                           \
    {                                                                                 \
        [COLL_SUM] = reduce_##tag##_sum##isa, [COLL_PROD] = reduce_##tag##_prod##isa, \
        [COLL_MIN] = reduce_##tag##_min##isa, [COLL_MAX] = reduce_##tag##_max##isa,   \
        [COLL_AVG] = reduce_##tag##_sum##isa                                          \
    }
#define INT_ROW(tag, isa)                                                             \
    {                                                                                 \
        [COLL_SUM] = reduce_##tag##_sum##isa, [COLL_PROD] = reduce_##tag##_prod##isa, \
        [COLL_MIN] = reduce_##tag##_min##isa, [COLL_MAX] = reduce_##tag##_max##isa,   \
        [COLL_AVG] = NULL                                                             \
    }

#define DEFINE_KERNEL_TABLE(name, isa, attr)                                          \
    DEFINE_KERNELS(f32, float, isa, attr)                                             \
    DEFINE_KERNELS(f64, double, isa, attr)                                            \
    DEFINE_KERNELS(f16, uint16_t, isa, attr)                                          \
    DEFINE_KERNELS(bf16, uint16_t, isa, attr)                                         \
    DEFINE_KERNELS(i8, int8_t, isa, attr)                                             \
    DEFINE_KERNELS(u8, uint8_t, isa, attr)                                            \
    DEFINE_KERNELS(i32, int32_t, isa, attr)                                           \
    DEFINE_KERNELS(i64, int64_t, isa, attr)                                           \
    static const coll__reduce_fn name[COLL_DTYPE_COUNT][COLL_OP_COUNT] = {            \
        [COLL_FLOAT32] = FLOAT_ROW(f32, isa), [COLL_FLOAT64] = FLOAT_ROW(f64, isa),   \
        [COLL_FLOAT16] = FLOAT_ROW(f16, isa), [COLL_BFLOAT16] = FLOAT_ROW(bf16, isa), \
        [COLL_INT8] = INT_ROW(i8, isa),       [COLL_UINT8] = INT_ROW(u8, isa),        \
        [COLL_INT32] = INT_ROW(i32, isa),     [COLL_INT64] = INT_ROW(i64, isa),       \
    };

DEFINE_KERNEL_TABLE(kernels_baseline, , )
#ifdef COLL_HAVE_AVX2
DEFINE_KERNEL_TABLE(kernels_avx2, _avx2, AVX2_TARGET)
#endif

/* Reads only what libgcc's constructor filled in: safe from any thread. */
static int cpu_has_avx2(void)
{
#ifdef COLL_HAVE_AVX2
    return __builtin_cpu_supports("avx2");
#else
    return 0;
#endif
}

const char *coll__reduce_isa(void) { return cpu_has_avx2() ? "avx2" : "baseline"; }

static int pair_in_range(coll_dtype dt, coll_op op)
{
    return (int)dt >= 0 && dt < COLL_DTYPE_COUNT && (int)op >= 0 && op < COLL_OP_COUNT;
}

coll__reduce_fn coll__reduce_kernel_baseline(coll_dtype dt, coll_op op)
{
    return pair_in_range(dt, op) ? kernels_baseline[dt][op] : NULL;
}

coll__reduce_fn coll__reduce_kernel(coll_dtype dt, coll_op op)
{
    if (!pair_in_range(dt, op)) return NULL;
#ifdef COLL_HAVE_AVX2
    if (cpu_has_avx2()) return kernels_avx2[dt][op];
#endif
    return kernels_baseline[dt][op];
}

int coll__reduce_local(void *out, const void *a, const void *b, size_t n, coll_dtype dt, coll_op op)
{
    coll__reduce_fn fn = coll__reduce_kernel(dt, op);
    if (!fn) return COLL_EINVAL;
    if (n == 0) return COLL_OK;
    if (!out || !a || !b) return COLL_EINVAL;
    fn(out, a, b, n);
    return COLL_OK;
}

/* ---- scaling for avg: divide (not multiply by 1/d, which would round twice) ---- */

#define DEFINE_SCALE(isa, attr)                                                      \
    attr static void scale_f32##isa(float *buf, size_t n, float d)                   \
    {                                                                                \
        for (size_t i = 0; i < n; i++) buf[i] = buf[i] / d;                          \
    }                                                                                \
    attr static void scale_f64##isa(double *buf, size_t n, double d)                 \
    {                                                                                \
        for (size_t i = 0; i < n; i++) buf[i] = buf[i] / d;                          \
    }                                                                                \
    attr static void scale_f16##isa(uint16_t *buf, size_t n, float d)                \
    {                                                                                \
        for (size_t i = 0; i < n; i++)                                               \
            buf[i] = coll__float_to_half(coll__half_to_float(buf[i]) / d);           \
    }                                                                                \
    attr static void scale_bf16##isa(uint16_t *buf, size_t n, float d)               \
    {                                                                                \
        for (size_t i = 0; i < n; i++)                                               \
            buf[i] = coll__float_to_bf16(coll__bf16_to_float(buf[i]) / d);           \
    }                                                                                \
    /* Integer dtypes are left unchanged: they have no avg (coll_op_valid). */       \
    attr static void scale_div##isa(void *buf, size_t n, coll_dtype dt, int divisor) \
    {                                                                                \
        switch (dt) {                                                                \
        case COLL_FLOAT32: scale_f32##isa(buf, n, (float)divisor); break;            \
        case COLL_FLOAT64: scale_f64##isa(buf, n, (double)divisor); break;           \
        case COLL_FLOAT16: scale_f16##isa(buf, n, (float)divisor); break;            \
        case COLL_BFLOAT16: scale_bf16##isa(buf, n, (float)divisor); break;          \
        default: break;                                                              \
        }                                                                            \
    }

DEFINE_SCALE(, )
#ifdef COLL_HAVE_AVX2
DEFINE_SCALE(_avx2, AVX2_TARGET)
#endif

void coll__scale_div(void *buf, size_t n, coll_dtype dt, int divisor)
{
    if (!buf || n == 0) return;
#ifdef COLL_HAVE_AVX2
    if (cpu_has_avx2()) {
        scale_div_avx2(buf, n, dt, divisor);
        return;
    }
#endif
    scale_div(buf, n, dt, divisor);
}
