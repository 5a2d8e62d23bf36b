/* Reduction kernels for every dtype/op pair.
 *
 * out[i] = a[i] op b[i] for i < n. out may alias a or b (exactly, not partially).
 * float16/bfloat16 are computed in float32 and rounded to nearest even once.
 * Integer sum/prod wrap around (computed in unsigned arithmetic).
 * COLL_AVG reduces as COLL_SUM; the caller divides once with coll_scale_div. */
#ifndef COLL_REDUCE_H
#define COLL_REDUCE_H

#include <stddef.h>
#include "coll.h"

typedef void (*coll_reduce_fn)(void *out, const void *a, const void *b, size_t n);

/* NULL for an invalid pair (see coll_op_valid). */
coll_reduce_fn coll_reduce_kernel(coll_dtype dt, coll_op op);

/* out = a op b, convenience wrapper; returns COLL_EINVAL for an invalid pair. */
int coll_reduce(void *out, const void *a, const void *b, size_t n, coll_dtype dt, coll_op op);

/* buf[i] /= divisor (floating-point dtypes; finishes COLL_AVG). */
void coll_scale_div(void *buf, size_t n, coll_dtype dt, int divisor);

#endif
