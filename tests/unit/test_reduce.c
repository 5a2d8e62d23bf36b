/* Reduction kernels and float16/bfloat16 conversions against scalar
 * references written independently of the code under test (ldexp decoding,
 * rounding by search over all values of the format, exact integer modulo). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "coll.h"
#include "core/half.h"
#include "core/reduce.h"

/* ---- deterministic random numbers (xorshift64*) ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng_next(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

/* Uniform in [lo, hi). */
static double rng_real(double lo, double hi)
{
    return lo + (hi - lo) * (double)(rng_next() >> 11) / 9007199254740992.0;
}

/* ---- reference float16 / bfloat16 ---- */

typedef struct half_format {
    int mant_bits;       /* 10 or 7 */
    int bias;            /* 15 or 127 */
    uint16_t max_finite; /* 0x7bff or 0x7f7f */
    uint16_t qnan;       /* a NaN of the format */
} half_format;

static const half_format FP16 = {10, 15, 0x7bff, 0x7e00};
static const half_format BF16 = {7, 127, 0x7f7f, 0x7fc0};

/* All-ones exponent and a nonzero mantissa: above inf (max_finite + 1). */
static int fmt_is_nan(const half_format *f, uint16_t h) { return (h & 0x7fff) > f->max_finite + 1; }

/* Value of a bit pattern; patterns past the largest finite value count as the
 * next binade's first value (for rounding), or inf/NaN when real is set. */
static double fmt_decode_raw(const half_format *f, uint16_t h)
{
    int exp = (h & 0x7fff) >> f->mant_bits;
    int mant = h & ((1 << f->mant_bits) - 1);
    double mag = exp == 0 ? ldexp(mant, 1 - f->bias - f->mant_bits)
                          : ldexp(mant + (1 << f->mant_bits), exp - f->bias - f->mant_bits);
    return (h & 0x8000) ? -mag : mag;
}

static double fmt_decode(const half_format *f, uint16_t h)
{
    if (fmt_is_nan(f, h)) return NAN;
    if ((h & 0x7fff) == f->max_finite + 1) return (h & 0x8000) ? -INFINITY : INFINITY;
    return fmt_decode_raw(f, h);
}

/* Round v to the format, nearest even, by binary search over the ordered
 * positive bit patterns: no bit tricks shared with the code under test. */
static uint16_t fmt_round(const half_format *f, double v)
{
    if (isnan(v)) return f->qnan;
    uint16_t sign = signbit(v) ? 0x8000 : 0;
    double a = fabs(v);
    uint16_t inf = (uint16_t)(f->max_finite + 1);
    if (a >= fmt_decode_raw(f, inf)) return sign | inf;
    uint16_t lo = 0, hi = inf; /* decode(lo) <= a < decode(hi) */
    while (hi - lo > 1) {
        uint16_t mid = (uint16_t)((lo + hi) / 2);
        if (fmt_decode_raw(f, mid) <= a) lo = mid;
        else hi = mid;
    }
    double below = a - fmt_decode_raw(f, lo), above = fmt_decode_raw(f, hi) - a;
    uint16_t r = below < above ? lo : above < below ? hi : (lo & 1) ? hi : lo;
    return sign | r;
}

static int fmt_bits_equal(const half_format *f, uint16_t got, uint16_t want)
{
    if (fmt_is_nan(f, want)) return fmt_is_nan(f, got);
    return got == want;
}

/* ---- conversions ---- */

static void check_exhaustive_round_trip(const half_format *f, float (*to_f)(uint16_t),
                                        uint16_t (*from_f)(float))
{
    int nans = 0;
    for (uint32_t i = 0; i < 65536; i++) {
        uint16_t h = (uint16_t)i;
        float x = to_f(h);
        uint16_t back = from_f(x);
        if (fmt_is_nan(f, h)) {
            nans++;
            if (!isnan(x) || !fmt_is_nan(f, back) || (back & 0x8000) != (h & 0x8000))
                fail_msg("NaN 0x%04x -> %g -> 0x%04x", h, (double)x, back);
            continue;
        }
        double want = fmt_decode(f, h);
        if ((double)x != want || !signbit(x) != !signbit(want) || back != h)
            fail_msg("0x%04x -> %.9g (want %.9g) -> 0x%04x", h, (double)x, want, back);
    }
    /* Two signs times (mantissa patterns - 1) NaNs: proves fmt_is_nan itself. */
    assert_int_equal(nans, 2 * ((1 << f->mant_bits) - 1));
}

static void test_half_round_trip_exhaustive(void **state)
{
    (void)state;
    check_exhaustive_round_trip(&FP16, coll__half_to_float, coll__float_to_half);
}

static void test_bf16_round_trip_exhaustive(void **state)
{
    (void)state;
    check_exhaustive_round_trip(&BF16, coll__bf16_to_float, coll__float_to_bf16);
}

/* Every midpoint between neighbouring finite values rounds to the even one,
 * and one float ulp either side rounds to the nearer one; both signs. */
static void check_all_midpoints(const half_format *f, uint16_t (*from_f)(float))
{
    for (uint32_t h = 0; h <= f->max_finite; h++) {
        uint16_t up = (uint16_t)(h + 1);
        double mid = (fmt_decode_raw(f, (uint16_t)h) + fmt_decode_raw(f, up)) / 2;
        float m = (float)mid;
        assert_true((double)m == mid); /* representable: the test is exact */
        uint16_t even = (h & 1) ? up : (uint16_t)h;
        for (int neg = 0; neg < 2; neg++) {
            uint16_t s = neg ? 0x8000 : 0;
            float sm = neg ? -m : m;
            float away = nextafterf(sm, neg ? -INFINITY : INFINITY);
            float toward = nextafterf(sm, 0.0f);
            if (from_f(sm) != (s | even) || from_f(away) != (s | up) || from_f(toward) != (s | h))
                fail_msg("midpoint %.9g between 0x%04x and 0x%04x: got 0x%04x 0x%04x 0x%04x",
                         (double)sm, (unsigned)(s | h), (unsigned)(s | up), from_f(sm),
                         from_f(away), from_f(toward));
        }
    }
}

static void test_half_midpoints_round_to_even(void **state)
{
    (void)state;
    check_all_midpoints(&FP16, coll__float_to_half);
}

static void test_bf16_midpoints_round_to_even(void **state)
{
    (void)state;
    check_all_midpoints(&BF16, coll__float_to_bf16);
}

static float float_of_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static void test_half_selected_values(void **state)
{
    (void)state;
    static const struct {
        float in;
        uint16_t want;
    } cases[] = {
        {0.0f, 0x0000},
        {-0.0f, 0x8000},
        {1.0f, 0x3c00},
        {-2.0f, 0xc000},
        {1.0f + 0x1p-11f, 0x3c00},            /* tie, 1.0 is even */
        {1.0f + 0x3p-11f, 0x3c02},            /* tie, up to even */
        {1.0f + 0x1p-11f + 0x1p-23f, 0x3c01}, /* just past the tie */
        {65504.0f, 0x7bff},
        {65519.0f, 0x7bff},
        {65520.0f, 0x7c00}, /* tie past the largest half: inf */
        {1e10f, 0x7c00},
        {-1e10f, 0xfc00},
        {INFINITY, 0x7c00},
        {-INFINITY, 0xfc00},
        {0x1p-14f, 0x0400}, /* smallest normal */
        {0x1p-24f, 0x0001}, /* smallest subnormal */
        {0x1p-25f, 0x0000}, /* tie between 0 and 2^-24: 0 */
        {0x3p-25f, 0x0002}, /* tie between 1 and 2 ulp: 2 */
        {0x1p-25f + 0x1p-40f, 0x0001},
        {0x1p-14f - 0x1p-25f, 0x0400}, /* tie below the smallest normal: rounds up */
        {0x1.ff8p-15f, 0x03ff},        /* largest subnormal, exactly */
        {-0x1p-24f, 0x8001},
        {0x1p-149f, 0x0000}, /* float subnormal */
        {-0x1p-140f, 0x8000},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint16_t got = coll__float_to_half(cases[i].in);
        if (got != cases[i].want)
            fail_msg("float_to_half(%a) = 0x%04x, want 0x%04x", (double)cases[i].in, got,
                     cases[i].want);
    }
    /* NaN whose payload sits in bits the half drops must not become inf. */
    assert_true(fmt_is_nan(&FP16, coll__float_to_half(float_of_bits(0x7f800001u))));
    assert_int_equal(coll__float_to_half(float_of_bits(0xff800001u)) & 0x8000, 0x8000);
    assert_true(isnan(coll__half_to_float(0x7c01)));
    assert_true(isinf(coll__half_to_float(0xfc00)) && coll__half_to_float(0xfc00) < 0);
    assert_true(coll__half_to_float(0x0001) == 0x1p-24f);
}

static void test_bf16_selected_values(void **state)
{
    (void)state;
    static const struct {
        float in;
        uint16_t want;
    } cases[] = {
        {1.0f, 0x3f80},
        {1.0f + 0x1p-8f, 0x3f80}, /* tie, even */
        {1.0f + 0x3p-8f, 0x3f82}, /* tie, up to even */
        {1.0f + 0x1p-8f + 0x1p-23f, 0x3f81},
        {-3.0f, 0xc040},
        {0x1.ffp127f, 0x7f80}, /* tie past the largest bf16: inf */
        {0x1.fep127f, 0x7f7f}, /* largest bf16 */
        {INFINITY, 0x7f80},
        {0x1p-133f, 0x0001}, /* smallest bf16 subnormal */
        {0x1p-134f, 0x0000}, /* tie: even */
        {0x3p-134f, 0x0002},
        {-0x1p-149f, 0x8000},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint16_t got = coll__float_to_bf16(cases[i].in);
        if (got != cases[i].want)
            fail_msg("float_to_bf16(%a) = 0x%04x, want 0x%04x", (double)cases[i].in, got,
                     cases[i].want);
    }
    assert_int_equal(coll__float_to_bf16(float_of_bits(0x7f800001u)), 0x7fc0);
    assert_int_equal(coll__float_to_bf16(float_of_bits(0xff800001u)), 0xffc0);
    assert_true(fmt_is_nan(&BF16, coll__float_to_bf16(NAN)));
}

/* Random floats over the whole range and densely around the formats' range. */
static void check_random_floats(const half_format *f, uint16_t (*from_f)(float), int lo_exp,
                                int hi_exp)
{
    for (int i = 0; i < 400000; i++) {
        uint32_t bits = (uint32_t)rng_next();
        if (i & 1) /* exponent in [lo_exp, hi_exp], any mantissa and sign */
            bits = (bits & 0x807fffffu) |
                   ((uint32_t)(lo_exp + (int)(rng_next() % (uint64_t)(hi_exp - lo_exp + 1))) << 23);
        float x = float_of_bits(bits);
        uint16_t got = from_f(x), want = fmt_round(f, (double)x);
        if (!fmt_bits_equal(f, got, want))
            fail_msg("convert(%a) = 0x%04x, want 0x%04x", (double)x, got, want);
    }
}

static void test_half_random_floats(void **state)
{
    (void)state;
    check_random_floats(&FP16, coll__float_to_half, 127 - 26, 127 + 17);
}

static void test_bf16_random_floats(void **state)
{
    (void)state;
    check_random_floats(&BF16, coll__float_to_bf16, 0, 255);
}

/* ---- kernels ---- */

static const coll_dtype all_dtypes[] = {COLL_FLOAT32, COLL_FLOAT64, COLL_FLOAT16, COLL_BFLOAT16,
                                        COLL_INT8,    COLL_UINT8,   COLL_INT32,   COLL_INT64};

static int is_float(coll_dtype dt)
{
    return dt == COLL_FLOAT32 || dt == COLL_FLOAT64 || dt == COLL_FLOAT16 || dt == COLL_BFLOAT16;
}

static size_t dtype_bytes(coll_dtype dt)
{
    switch (dt) {
    case COLL_FLOAT64:
    case COLL_INT64: return 8;
    case COLL_FLOAT32:
    case COLL_INT32: return 4;
    case COLL_FLOAT16:
    case COLL_BFLOAT16: return 2;
    default: return 1;
    }
}

/* min/max with the documented NaN rule: the second operand when unordered. */
static double ref_float_op(coll_op op, double x, double y)
{
    switch (op) {
    case COLL_SUM:
    case COLL_AVG: return x + y;
    case COLL_PROD: return x * y;
    case COLL_MIN: return x < y ? x : y;
    default: return x > y ? x : y;
    }
}

/* Exact integer result reduced modulo 2^bits into the type's range. */
static long long wrap_signed(long long v, int bits)
{
    long long m = 1ll << bits;
    v %= m;
    if (v < 0) v += m;
    return v >= m / 2 ? v - m : v;
}

static long long ref_int_op(coll_op op, long long x, long long y)
{
    switch (op) {
    case COLL_SUM: return x + y;
    case COLL_PROD: return x * y;
    case COLL_MIN: return x < y ? x : y;
    default: return x > y ? x : y;
    }
}

/* want = a op b for element i, written into want (one element). */
static void ref_elem(coll_dtype dt, coll_op op, const void *a, const void *b, size_t i, void *want)
{
    switch (dt) {
    case COLL_FLOAT32: {
        float r = (float)ref_float_op(op, ((const float *)a)[i], ((const float *)b)[i]);
        memcpy(want, &r, 4);
        break;
    }
    case COLL_FLOAT64: {
        double r = ref_float_op(op, ((const double *)a)[i], ((const double *)b)[i]);
        memcpy(want, &r, 8);
        break;
    }
    case COLL_FLOAT16:
    case COLL_BFLOAT16: {
        const half_format *f = dt == COLL_FLOAT16 ? &FP16 : &BF16;
        double x = fmt_decode(f, ((const uint16_t *)a)[i]);
        double y = fmt_decode(f, ((const uint16_t *)b)[i]);
        uint16_t r = fmt_round(f, ref_float_op(op, x, y));
        memcpy(want, &r, 2);
        break;
    }
    case COLL_INT8: {
        long long v = ref_int_op(op, ((const int8_t *)a)[i], ((const int8_t *)b)[i]);
        int8_t r = (int8_t)wrap_signed(v, 8);
        memcpy(want, &r, 1);
        break;
    }
    case COLL_UINT8: {
        long long v = ref_int_op(op, ((const uint8_t *)a)[i], ((const uint8_t *)b)[i]);
        uint8_t r = (uint8_t)(((v % 256) + 256) % 256);
        memcpy(want, &r, 1);
        break;
    }
    case COLL_INT32: {
        long long v = ref_int_op(op, ((const int32_t *)a)[i], ((const int32_t *)b)[i]);
        int32_t r = (int32_t)wrap_signed(v, 32);
        memcpy(want, &r, 4);
        break;
    }
    case COLL_INT64: {
        int64_t x = ((const int64_t *)a)[i], y = ((const int64_t *)b)[i], r;
        uint64_t ux = (uint64_t)x, uy = (uint64_t)y, ur;
        switch (op) {
        case COLL_SUM:
            ur = ux + uy;
            memcpy(&r, &ur, 8);
            break;
        case COLL_PROD:
            ur = ux * uy;
            memcpy(&r, &ur, 8);
            break;
        case COLL_MIN: r = x < y ? x : y; break;
        default: r = x > y ? x : y; break;
        }
        memcpy(want, &r, 8);
        break;
    }
    default: fail_msg("no reference for dtype %d", (int)dt);
    }
}

static int elem_equal(coll_dtype dt, const void *got, const void *want)
{
    switch (dt) {
    case COLL_FLOAT32: {
        float g, w;
        memcpy(&g, got, 4);
        memcpy(&w, want, 4);
        return isnan(w) ? isnan(g) : memcmp(got, want, 4) == 0;
    }
    case COLL_FLOAT64: {
        double g, w;
        memcpy(&g, got, 8);
        memcpy(&w, want, 8);
        return isnan(w) ? isnan(g) : memcmp(got, want, 8) == 0;
    }
    case COLL_FLOAT16:
    case COLL_BFLOAT16: {
        uint16_t g, w;
        memcpy(&g, got, 2);
        memcpy(&w, want, 2);
        return fmt_bits_equal(dt == COLL_FLOAT16 ? &FP16 : &BF16, g, w);
    }
    default: return memcmp(got, want, dtype_bytes(dt)) == 0;
    }
}

static void fill_random(coll_dtype dt, void *buf, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rng_next();
        int special = (r & 7) == 0; /* one in eight: arbitrary bits (inf, NaN, extremes) */
        switch (dt) {
        case COLL_FLOAT32: {
            float v = special ? float_of_bits((uint32_t)(r >> 32)) : (float)rng_real(-1000, 1000);
            ((float *)buf)[i] = v;
            break;
        }
        case COLL_FLOAT64: {
            double v = rng_real(-1e6, 1e6);
            if (special) memcpy(&v, &(uint64_t){rng_next()}, 8);
            ((double *)buf)[i] = v;
            break;
        }
        case COLL_FLOAT16:
        case COLL_BFLOAT16: {
            const half_format *f = dt == COLL_FLOAT16 ? &FP16 : &BF16;
            ((uint16_t *)buf)[i] = special ? (uint16_t)(r >> 48)
                                           : fmt_round(f, rng_real(-300, 300));
            break;
        }
        default: memcpy((char *)buf + i * dtype_bytes(dt), &r, dtype_bytes(dt)); break;
        }
    }
}

enum alias_mode { DISTINCT, OUT_IS_A, OUT_IS_B, OUT_IS_A_IS_B, A_IS_B, ALIAS_MODES };
static const char *const alias_names[] = {"distinct", "out==a", "out==b", "out==a==b", "a==b"};

#define GUARD 0xa5

/* Runs one kernel on n elements in one aliasing mode and checks every element
 * and the guard bytes around the output. Buffers start one element past an
 * aligned address so the vector loops also meet a misaligned start. */
typedef coll__reduce_fn (*kernel_lookup)(coll_dtype, coll_op);

/* The kernels this CPU gets (AVX2 on most x86-64) and the baseline build. */
static const struct {
    const char *name;
    kernel_lookup lookup;
} variants[] = {{"dispatched", coll__reduce_kernel}, {"baseline", coll__reduce_kernel_baseline}};

static void check_kernel(int variant, coll_dtype dt, coll_op op, size_t n, enum alias_mode mode)
{
    size_t es = dtype_bytes(dt), bytes = (n + 2) * es;
    unsigned char *a0 = malloc(bytes), *b0 = malloc(bytes), *ob = malloc(bytes);
    unsigned char *ab = malloc(bytes), *bb = malloc(bytes), want[8];
    assert_non_null(a0);
    assert_non_null(b0);
    assert_non_null(ob);
    assert_non_null(ab);
    assert_non_null(bb);
    fill_random(dt, a0 + es, n);
    fill_random(dt, b0 + es, n);
    if (mode == OUT_IS_A_IS_B || mode == A_IS_B) memcpy(b0 + es, a0 + es, n * es);
    memcpy(ab, a0, bytes);
    memcpy(bb, b0, bytes);
    memset(ob, GUARD, bytes);

    unsigned char *out = ob + es, *a = ab + es, *b = bb + es;
    switch (mode) {
    case DISTINCT: break;
    case OUT_IS_A:
        memcpy(out, a, n * es);
        a = out;
        break;
    case OUT_IS_B:
        memcpy(out, b, n * es);
        b = out;
        break;
    case OUT_IS_A_IS_B:
        memcpy(out, a, n * es);
        a = b = out;
        break;
    case A_IS_B: b = a; break;
    default: break;
    }
    coll__reduce_fn fn = variants[variant].lookup(dt, op);
    assert_non_null(fn);
    fn(out, a, b, n);

    for (size_t i = 0; i < n; i++) {
        ref_elem(dt, op, a0 + es, b0 + es, i, want);
        if (!elem_equal(dt, out + i * es, want)) {
            char g[40] = "", w[40] = "";
            for (size_t k = 0; k < es; k++) {
                sprintf(g + 2 * k, "%02x", out[i * es + es - 1 - k]);
                sprintf(w + 2 * k, "%02x", want[es - 1 - k]);
            }
            fail_msg("%s %s %s n=%zu %s: element %zu is 0x%s, want 0x%s", variants[variant].name,
                     coll_dtype_name(dt), coll_op_name(op), n, alias_names[mode], i, g, w);
        }
    }
    for (size_t k = 0; k < es; k++) {
        assert_int_equal(ob[k], GUARD);
        assert_int_equal(ob[(n + 1) * es + k], GUARD);
    }
    free(a0);
    free(b0);
    free(ob);
    free(ab);
    free(bb);
}

static void check_dtype_all_ops(coll_dtype dt)
{
    static const size_t lengths[] = {0, 1, 7, 33, 1000, 4097};
    for (int v = 0; v < (int)(sizeof variants / sizeof variants[0]); v++) {
        for (int op = 0; op < COLL_OP_COUNT; op++) {
            if (op == COLL_AVG && !is_float(dt)) {
                assert_null(variants[v].lookup(dt, (coll_op)op));
                continue;
            }
            for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++)
                for (int mode = 0; mode < ALIAS_MODES; mode++)
                    check_kernel(v, dt, (coll_op)op, lengths[l], (enum alias_mode)mode);
        }
    }
}

static void test_kernels_float32(void **state)
{
    (void)state;
    check_dtype_all_ops(COLL_FLOAT32);
}
static void test_kernels_float64(void **state)
{
    (void)state;
    check_dtype_all_ops(COLL_FLOAT64);
}
static void test_kernels_float16(void **state)
{
    (void)state;
    check_dtype_all_ops(COLL_FLOAT16);
}
static void test_kernels_bfloat16(void **state)
{
    (void)state;
    check_dtype_all_ops(COLL_BFLOAT16);
}
static void test_kernels_int8(void **state)
{
    (void)state;
    check_dtype_all_ops(COLL_INT8);
}
static void test_kernels_uint8(void **state)
{
    (void)state;
    check_dtype_all_ops(COLL_UINT8);
}
static void test_kernels_int32(void **state)
{
    (void)state;
    check_dtype_all_ops(COLL_INT32);
}
static void test_kernels_int64(void **state)
{
    (void)state;
    check_dtype_all_ops(COLL_INT64);
}

static void test_kernel_table_matches_op_valid(void **state)
{
    (void)state;
    for (size_t d = 0; d < sizeof all_dtypes / sizeof all_dtypes[0]; d++) {
        for (int op = 0; op < COLL_OP_COUNT; op++) {
            int valid = coll_op_valid(all_dtypes[d], (coll_op)op) == COLL_OK;
            assert_int_equal(coll__reduce_kernel(all_dtypes[d], (coll_op)op) != NULL, valid);
            assert_int_equal(coll__reduce_kernel_baseline(all_dtypes[d], (coll_op)op) != NULL,
                             valid);
        }
        if (is_float(all_dtypes[d]))
            assert_ptr_equal(coll__reduce_kernel(all_dtypes[d], COLL_AVG),
                             coll__reduce_kernel(all_dtypes[d], COLL_SUM));
    }
    assert_null(coll__reduce_kernel(COLL_DTYPE_COUNT, COLL_SUM));
    assert_null(coll__reduce_kernel((coll_dtype)-1, COLL_SUM));
    assert_null(coll__reduce_kernel(COLL_FLOAT32, COLL_OP_COUNT));
    assert_null(coll__reduce_kernel_baseline(COLL_DTYPE_COUNT, COLL_SUM));
    /* "baseline" means the dispatcher hands out the baseline kernels. */
    const char *isa = coll__reduce_isa();
    assert_true(strcmp(isa, "avx2") == 0 || strcmp(isa, "baseline") == 0);
    if (strcmp(isa, "baseline") == 0)
        assert_ptr_equal(coll__reduce_kernel(COLL_FLOAT16, COLL_SUM),
                         coll__reduce_kernel_baseline(COLL_FLOAT16, COLL_SUM));
    else
        assert_ptr_not_equal(coll__reduce_kernel(COLL_FLOAT16, COLL_SUM),
                             coll__reduce_kernel_baseline(COLL_FLOAT16, COLL_SUM));
}

static void test_reduce_local_arguments(void **state)
{
    (void)state;
    int32_t a[3] = {1, 2, 3}, b[3] = {10, 20, 30}, out[3] = {0};
    assert_int_equal(coll__reduce_local(out, a, b, 3, COLL_INT32, COLL_SUM), COLL_OK);
    assert_int_equal(out[0], 11);
    assert_int_equal(out[2], 33);
    assert_int_equal(coll__reduce_local(out, a, b, 3, COLL_INT32, COLL_AVG), COLL_EINVAL);
    assert_int_equal(coll__reduce_local(out, a, b, 3, COLL_DTYPE_COUNT, COLL_SUM), COLL_EINVAL);
    assert_int_equal(coll__reduce_local(out, a, b, 3, COLL_INT32, COLL_OP_COUNT), COLL_EINVAL);
    assert_int_equal(coll__reduce_local(NULL, a, b, 3, COLL_INT32, COLL_SUM), COLL_EINVAL);
    assert_int_equal(coll__reduce_local(NULL, NULL, NULL, 0, COLL_INT32, COLL_SUM), COLL_OK);
    assert_int_equal(out[1], 22); /* the failed calls wrote nothing */
}

static void test_integer_wrap_around(void **state)
{
    (void)state;
    int8_t i8a[3] = {127, -128, 16}, i8b[3] = {1, -1, 16}, i8o[3];
    coll__reduce_kernel(COLL_INT8, COLL_SUM)(i8o, i8a, i8b, 2);
    assert_int_equal(i8o[0], -128);
    assert_int_equal(i8o[1], 127);
    coll__reduce_kernel(COLL_INT8, COLL_PROD)(i8o, i8a + 2, i8b + 2, 1);
    assert_int_equal(i8o[0], 0); /* 256 mod 256 */

    uint8_t u8a[2] = {255, 16}, u8b[2] = {1, 17}, u8o[2];
    coll__reduce_kernel(COLL_UINT8, COLL_SUM)(u8o, u8a, u8b, 1);
    assert_int_equal(u8o[0], 0);
    coll__reduce_kernel(COLL_UINT8, COLL_PROD)(u8o, u8a + 1, u8b + 1, 1);
    assert_int_equal(u8o[0], (16 * 17) % 256);

    int32_t i32a[2] = {INT32_MAX, 65536}, i32b[2] = {1, 65536}, i32o[2];
    coll__reduce_kernel(COLL_INT32, COLL_SUM)(i32o, i32a, i32b, 1);
    assert_int_equal(i32o[0], INT32_MIN);
    coll__reduce_kernel(COLL_INT32, COLL_PROD)(i32o, i32a + 1, i32b + 1, 1);
    assert_int_equal(i32o[0], 0);

    int64_t i64a[3] = {INT64_MAX, INT64_MIN, INT64_MIN}, i64b[3] = {1, -1, INT64_MAX}, i64o[3];
    coll__reduce_kernel(COLL_INT64, COLL_SUM)(i64o, i64a, i64b, 2);
    assert_true(i64o[0] == INT64_MIN);
    assert_true(i64o[1] == INT64_MAX);
    coll__reduce_kernel(COLL_INT64, COLL_PROD)(i64o, i64a, i64a, 1);
    assert_true(i64o[0] == 1); /* (2^63-1)^2 = 1 mod 2^64 */
    /* min/max across the full range, where x - y overflows */
    coll__reduce_kernel(COLL_INT64, COLL_MIN)(i64o, i64a + 1, i64b + 1, 2);
    assert_true(i64o[0] == INT64_MIN && i64o[1] == INT64_MIN);
    coll__reduce_kernel(COLL_INT64, COLL_MAX)(i64o, i64a + 1, i64b + 1, 2);
    assert_true(i64o[0] == -1 && i64o[1] == INT64_MAX);
}

static void test_float_min_max_nan_rule(void **state)
{
    (void)state;
    float a[2] = {NAN, 1.0f}, b[2] = {1.0f, NAN}, o[2];
    coll__reduce_kernel(COLL_FLOAT32, COLL_MIN)(o, a, b, 2);
    assert_true(o[0] == 1.0f); /* NaN in a is dropped */
    assert_true(isnan(o[1]));  /* NaN in b propagates */
    coll__reduce_kernel(COLL_FLOAT32, COLL_SUM)(o, a, b, 2);
    assert_true(isnan(o[0]) && isnan(o[1]));
}

static void test_scale_div(void **state)
{
    (void)state;
    static const int divisors[] = {1, 2, 3, 5, 6, 7};
    enum { N = 1001 };
    for (size_t d = 0; d < sizeof all_dtypes / sizeof all_dtypes[0]; d++) {
        coll_dtype dt = all_dtypes[d];
        size_t es = dtype_bytes(dt);
        unsigned char *orig = malloc(N * es), *buf = malloc(N * es);
        assert_non_null(orig);
        assert_non_null(buf);
        for (size_t k = 0; k < sizeof divisors / sizeof divisors[0]; k++) {
            int div = divisors[k];
            fill_random(dt, orig, N);
            memcpy(buf, orig, N * es);
            coll__scale_div(buf, N, dt, div);
            for (size_t i = 0; i < N; i++) {
                unsigned char want[8];
                switch (dt) {
                case COLL_FLOAT32: {
                    float w = (float)((double)((float *)orig)[i] / div);
                    memcpy(want, &w, 4);
                    break;
                }
                case COLL_FLOAT64: {
                    double w = ((double *)orig)[i] / div;
                    memcpy(want, &w, 8);
                    break;
                }
                case COLL_FLOAT16:
                case COLL_BFLOAT16: {
                    const half_format *f = dt == COLL_FLOAT16 ? &FP16 : &BF16;
                    uint16_t w = fmt_round(f, fmt_decode(f, ((uint16_t *)orig)[i]) / div);
                    memcpy(want, &w, 2);
                    break;
                }
                default: /* integers have no avg: unchanged */
                    memcpy(want, orig + i * es, es);
                    break;
                }
                if (!elem_equal(dt, buf + i * es, want))
                    fail_msg("%s / %d: element %zu wrong", coll_dtype_name(dt), div, i);
            }
        }
        free(orig);
        free(buf);
    }
    coll__scale_div(NULL, 0, COLL_FLOAT32, 2); /* nothing to do, must not crash */
    float avg[2] = {6.0f, -3.0f};
    coll__scale_div(avg, 2, COLL_FLOAT32, 4);
    assert_true(avg[0] == 1.5f && avg[1] == -0.75f);
}

/* coll__reduce_many: float16/bfloat16 sums and averages of 6 inputs equal the
 * float32 sum in input order rounded once (over 1,000 elements: more than one
 * 512-element piece); other pairs equal the pairwise kernel, the output may
 * be the first input; one input is a copy. */
static void test_reduce_many(void **state)
{
    (void)state;
    enum { N = 6, M = 1000 };
    static uint16_t h[N][M], out[M];
    const void *in[N];
    for (int t = 0; t < 2; t++) {
        coll_dtype dt = t ? COLL_BFLOAT16 : COLL_FLOAT16;
        for (int p = 0; p < N; p++) {
            for (int i = 0; i < M; i++) {
                float x = (float)((double)(rng_next() >> 11) / 9007199254740992.0 * 2 - 1);
                h[p][i] = dt == COLL_FLOAT16 ? coll__float_to_half(x) : coll__float_to_bf16(x);
            }
            in[p] = h[p];
        }
        for (int avg = 0; avg < 2; avg++) {
            coll__reduce_many(out, in, N, M, dt, avg ? COLL_AVG : COLL_SUM,
                              coll__reduce_kernel(dt, COLL_SUM));
            for (int i = 0; i < M; i++) {
                float acc = 0;
                for (int p = 0; p < N; p++)
                    acc += dt == COLL_FLOAT16 ? coll__half_to_float(h[p][i])
                                              : coll__bf16_to_float(h[p][i]);
                if (avg) acc /= N;
                uint16_t want = dt == COLL_FLOAT16 ? coll__float_to_half(acc)
                                                   : coll__float_to_bf16(acc);
                assert_int_equal(out[i], want);
            }
        }
    }
    /* int32 max through the kernel, out aliasing in[0] */
    static int32_t a[M], b[M], c[M], want[M];
    for (int i = 0; i < M; i++) {
        a[i] = (int32_t)rng_next(), b[i] = (int32_t)rng_next(), c[i] = (int32_t)rng_next();
        int32_t m = a[i] > b[i] ? a[i] : b[i];
        want[i] = m > c[i] ? m : c[i];
    }
    const void *ints[3] = {a, b, c};
    coll__reduce_many(a, ints, 3, M, COLL_INT32, COLL_MAX,
                      coll__reduce_kernel(COLL_INT32, COLL_MAX));
    assert_memory_equal(a, want, sizeof want);
    const void *one[1] = {b};
    coll__reduce_many(c, one, 1, M, COLL_INT32, COLL_SUM,
                      coll__reduce_kernel(COLL_INT32, COLL_SUM));
    assert_memory_equal(c, b, sizeof b);
    assert_int_equal(coll__reduce_rounds_once(COLL_BFLOAT16, COLL_MAX), 0);
    assert_int_equal(coll__reduce_rounds_once(COLL_FLOAT32, COLL_SUM), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_half_round_trip_exhaustive),
        cmocka_unit_test(test_bf16_round_trip_exhaustive),
        cmocka_unit_test(test_half_midpoints_round_to_even),
        cmocka_unit_test(test_bf16_midpoints_round_to_even),
        cmocka_unit_test(test_half_selected_values),
        cmocka_unit_test(test_bf16_selected_values),
        cmocka_unit_test(test_half_random_floats),
        cmocka_unit_test(test_bf16_random_floats),
        cmocka_unit_test(test_kernels_float32),
        cmocka_unit_test(test_kernels_float64),
        cmocka_unit_test(test_kernels_float16),
        cmocka_unit_test(test_kernels_bfloat16),
        cmocka_unit_test(test_kernels_int8),
        cmocka_unit_test(test_kernels_uint8),
        cmocka_unit_test(test_kernels_int32),
        cmocka_unit_test(test_kernels_int64),
        cmocka_unit_test(test_kernel_table_matches_op_valid),
        cmocka_unit_test(test_reduce_local_arguments),
        cmocka_unit_test(test_integer_wrap_around),
        cmocka_unit_test(test_float_min_max_nan_rule),
        cmocka_unit_test(test_scale_div),
        cmocka_unit_test(test_reduce_many),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
