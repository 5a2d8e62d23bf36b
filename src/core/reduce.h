/* Reduction kernels for every dtype/op pair.
 *
 * out[i] = a[i] op b[i] for i < n. out may alias a or b (exactly, not partially).
 * float16/bfloat16 are computed in float32 and rounded to nearest even once.
 * Integer sum/prod wrap around (computed in unsigned arithmetic).
 * COLL_AVG reduces as COLL_SUM; the caller divides once with coll__scale_div. */
#ifndef COLL_REDUCE_H
#define COLL_REDUCE_H

#include <stddef.h>
#include "coll.h"

typedef void (*coll__reduce_fn)(void *out, const void *a, const void *b, size_t n);

/* NULL for an invalid pair (see coll_op_valid). The best version for this
 * CPU: AVX2 where the CPU has it (x86-64), else the baseline build. */
coll__reduce_fn coll__reduce_kernel(coll_dtype dt, coll_op op);
/* The baseline (SSE2 on x86-64) version whatever the CPU: tests, benchmarks. */
coll__reduce_fn coll__reduce_kernel_baseline(coll_dtype dt, coll_op op);
/* "avx2" or "baseline": the kernels coll__reduce_kernel returns, for reports. */
const char *coll__reduce_isa(void);

/* out = a op b on local buffers (coll_reduce in coll.h is the collective);
 * COLL_EINVAL for an invalid pair or a NULL buffer with n > 0. */
int coll__reduce_local(void *out, const void *a, const void *b, size_t n, coll_dtype dt,
                       coll_op op);

/* 1 for the pairs coll__reduce_many sums in float32 and rounds once per
 * element (float16 and bfloat16, sum and avg), not once per input. */
int coll__reduce_rounds_once(coll_dtype dt, coll_op op);

/* out = in[0] op in[1] op ... op in[n-1] over m elements, in that order, for
 * a process that reduces every contribution to its slice: float16/bfloat16
 * sums and averages accumulate in float32 and round once (the error of one
 * rounding, not of n - 1); the other pairs go through fn (the pair's kernel,
 * COLL_SUM's for COLL_AVG), then COLL_AVG divides. out may alias in[0] or in[1]. */
void coll__reduce_many(void *out, const void *const *in, int n, size_t m, coll_dtype dt, coll_op op,
                       coll__reduce_fn fn);

/* The steps of coll__reduce_many's rounding once, for a reduction whose
 * inputs arrive one at a time (float16/bfloat16): acc = a (add 0) or
 * acc += a (add 1) in float32; out = acc / divisor (1: none) rounded once. */
void coll__widen(float *acc, const void *a, size_t m, coll_dtype dt, int add);
void coll__narrow(void *out, const float *acc, size_t m, coll_dtype dt, int divisor);

/* buf[i] /= divisor (floating-point dtypes; finishes COLL_AVG). */
void coll__scale_div(void *buf, size_t n, coll_dtype dt, int divisor);

#endif
