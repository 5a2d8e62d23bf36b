#include "rank_data.h"
#include "core/half.h"

#include <math.h>
#include <stdint.h>

double rank_get(coll_dtype dt, const void *buf, size_t i)
{
    switch (dt) {
    case COLL_FLOAT32: return ((const float *)buf)[i];
    case COLL_FLOAT64: return ((const double *)buf)[i];
    case COLL_FLOAT16: return coll__half_to_float(((const uint16_t *)buf)[i]);
    case COLL_BFLOAT16: return coll__bf16_to_float(((const uint16_t *)buf)[i]);
    case COLL_INT8: return ((const int8_t *)buf)[i];
    case COLL_UINT8: return ((const uint8_t *)buf)[i];
    case COLL_INT32: return ((const int32_t *)buf)[i];
    case COLL_INT64: return (double)((const int64_t *)buf)[i];
    default: return NAN;
    }
}

void rank_set(coll_dtype dt, void *buf, size_t i, double v)
{
    switch (dt) {
    case COLL_FLOAT32: ((float *)buf)[i] = (float)v; break;
    case COLL_FLOAT64: ((double *)buf)[i] = v; break;
    case COLL_FLOAT16: ((uint16_t *)buf)[i] = coll__float_to_half((float)v); break;
    case COLL_BFLOAT16: ((uint16_t *)buf)[i] = coll__float_to_bf16((float)v); break;
    case COLL_INT8: ((int8_t *)buf)[i] = (int8_t)v; break;
    case COLL_UINT8: ((uint8_t *)buf)[i] = (uint8_t)v; break;
    case COLL_INT32: ((int32_t *)buf)[i] = (int32_t)v; break;
    case COLL_INT64: ((int64_t *)buf)[i] = (int64_t)v; break;
    default: break;
    }
}

double rank_input(coll_dtype dt, coll_op op, int r, int nranks, size_t i, size_t salt)
{
    size_t h = (i * 2654435761u + (size_t)r * 40503u + salt * 977u) % 9; /* 0..8 */
    if (op == COLL_PROD) /* one rank contributes 2, the others +-1: |product| == 2 */
        return (i + salt) % (size_t)nranks == (size_t)r
                   ? 2.0
                   : (h % 2 && dt != COLL_UINT8 ? -1.0 : 1.0); /* uint8 has no -1 */
    int centre = (op == COLL_SUM || op == COLL_AVG) && dt != COLL_UINT8;
    return (double)h - (centre ? 4.0 : 0.0); /* sums stay exact in every dtype */
}

double rank_expected(coll_dtype dt, coll_op op, int nranks, size_t i, size_t salt)
{
    double acc = rank_input(dt, op, 0, nranks, i, salt);
    for (int r = 1; r < nranks; r++) {
        double v = rank_input(dt, op, r, nranks, i, salt);
        switch (op) {
        case COLL_SUM:
        case COLL_AVG: acc += v; break;
        case COLL_PROD: acc *= v; break;
        case COLL_MIN: acc = v < acc ? v : acc; break;
        case COLL_MAX: acc = v > acc ? v : acc; break;
        default: break;
        }
    }
    return op == COLL_AVG ? acc / nranks : acc;
}

int rank_close(coll_dtype dt, coll_op op, double got, double want)
{
    if (op != COLL_AVG) return got == want;
    double tol = dt == COLL_FLOAT16    ? 1e-3
                 : dt == COLL_BFLOAT16 ? 8e-3
                 : dt == COLL_FLOAT32  ? 1e-6
                                       : 1e-12;
    return fabs(got - want) <= tol * fmax(1.0, fabs(want));
}

size_t rank_a2av_count(int i, int j, size_t unit) { return (size_t)((i + 2 * j) % 4) * unit; }

int32_t rank_a2av_value(int i, int j, size_t e)
{
    return (i << 24) ^ (j << 16) ^ (int32_t)(e % 65521);
}

void rank_a2av_fill(int32_t *s, int me, int n, const size_t *sc)
{
    for (int j = 0; j < n; s += sc[j], j++)
        for (size_t e = 0; e < sc[j]; e++) s[e] = rank_a2av_value(me, j, e);
}

size_t rank_a2av_wrong(const int32_t *r, int me, int n, const size_t *rc, int *from, size_t *e,
                       int32_t *got)
{
    size_t wrong = 0;
    for (int i = 0; i < n; r += rc[i], i++)
        for (size_t k = 0; k < rc[i]; k++)
            if (r[k] != rank_a2av_value(i, me, k) && wrong++ == 0) *from = i, *e = k, *got = r[k];
    return wrong;
}
