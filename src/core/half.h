/* float16 (IEEE binary16) and bfloat16 conversions, branch-free so loops over
 * them vectorise. Round to nearest even; NaN stays NaN; overflow gives inf.
 *
 * They are static inline because the reduction kernels call them once per
 * element: an out-of-line call would stop the loops from vectorising. Every
 * case (normal, subnormal, overflow, NaN) is computed and the result picked
 * with a ?: select, which compilers turn into a vector blend, never a branch.
 * Only x86-64 baseline (SSE2) instructions are needed, no F16C. */
#ifndef COLL_HALF_H
#define COLL_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t coll__float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float coll__bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* cond ? a : b for cond 0 or 1, as masks: with a ?: gcc moves the float
 * arithmetic of the unused case into a branch, which stops vectorisation. */
static inline uint32_t coll__select_u32(uint32_t cond, uint32_t a, uint32_t b)
{
    uint32_t mask = 0u - cond;
    return (a & mask) | (b & ~mask);
}

static inline float coll__half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t em = (uint32_t)(h & 0x7fffu) << 13; /* exponent+mantissa, float position */
    uint32_t exp = em & 0x0f800000u;
    uint32_t normal = em + 0x38000000u; /* rebias exponent 15 -> 127 */
    uint32_t infnan = em + 0x70000000u; /* exponent 31 -> 255, mantissa (NaN payload) kept */
    /* Subnormal m * 2^-24: build 2^-14 * (1 + m/1024) and let the FPU subtract
     * 2^-14, which normalises exactly (no count-leading-zeros needed). */
    float sub = coll__bits_float(em + 0x38800000u) - coll__bits_float(0x38800000u);
    uint32_t bits = coll__select_u32(exp == 0x0f800000u, infnan,
                                     coll__select_u32(exp == 0, coll__float_bits(sub), normal));
    return coll__bits_float(bits | sign);
}

static inline uint16_t coll__float_to_half(float f)
{
    uint32_t x = coll__float_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t ax = x & 0x7fffffffu;
    /* Normal halves: rebias 127 -> 15 (add -0x38000000) and round the 13
     * dropped bits to nearest even (add 0xfff, plus 1 when the kept lsb is odd). */
    uint32_t normal = (ax + 0xc8000fffu + ((ax >> 13) & 1u)) >> 13;
    /* Subnormal halves (|f| < 2^-14): adding 0.5 puts the half's lsb (2^-24)
     * at the float's lsb, so the FPU rounds to nearest even for us. */
    uint32_t sub = coll__float_bits(coll__bits_float(ax) + 0.5f) - 0x3f000000u;
    uint32_t nan = 0x7e00u | ((ax >> 13) & 0x3ffu); /* quiet, keeps the payload's top bits */
    uint32_t finite = coll__select_u32(ax >= 0x38800000u, normal, sub);
    /* >= 65520 rounds past 65504, the largest half: inf */
    uint32_t bits = coll__select_u32(ax > 0x7f800000u, nan,
                                     coll__select_u32(ax >= 0x477ff000u, 0x7c00u, finite));
    return (uint16_t)(bits | sign);
}

static inline float coll__bf16_to_float(uint16_t h) { return coll__bits_float((uint32_t)h << 16); }

static inline uint16_t coll__float_to_bf16(float f)
{
    uint32_t x = coll__float_bits(f);
    /* Round the low 16 bits to nearest even; a carry into the exponent is
     * right, including the overflow of the largest floats to inf. */
    uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
    uint32_t nan = (x >> 16) | 0x40u; /* quiet bit, so truncation cannot make an inf */
    return (uint16_t)((x & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

#endif
