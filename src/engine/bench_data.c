/* Deterministic inputs and an on-the-fly checker; see bench_data.h for the
 * value ranges and why they keep every dtype exact. Work goes in blocks of
 * BLOCK elements so the per-dtype loops stay tight and the stack stays small. */
#include "engine/bench_data.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/half.h"

#define BLOCK 512

typedef enum gen_kind { GEN_SMALL, GEN_PROD, GEN_WIDE } gen_kind;

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Hashes per (key, element): a 64-bit one for prod (it needs a bit per rank),
 * a 32-bit one, which vectorises, for everything else. */
static uint64_t key_base(const bench_data_key *k)
{
    return mix64(k->seed * 0x9e3779b97f4a7c15ULL + mix64(k->iter + 0x632be59bd9b4e019ULL));
}

static uint64_t elem_hash64(uint64_t base, uint64_t idx)
{
    return mix64(base + idx * 0x9e3779b97f4a7c15ULL);
}

static uint32_t elem_hash(uint64_t base, uint64_t idx)
{
    uint32_t x = (uint32_t)idx * 0x9e3779b9u + (uint32_t)(idx >> 32) * 0x85ebca6bu + (uint32_t)base;
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    return x ^ (x >> 16);
}

static gen_kind kind_of(int op)
{
    if (op == COLL_SUM || op == COLL_AVG) return GEN_SMALL;
    if (op == COLL_PROD) return GEN_PROD;
    return GEN_WIDE;
}

/* ---- values of one rank ----
 * An element's hash h gives a start a and a step s; rank q's value is
 * (a + q*s) mod M shifted to be centred on 0. Reductions over all ranks then
 * depend on (a, s) only, so the checker looks them up in a small table. */

#define SMALL_MOD 9u /* values -4..4 */
#define SMALL_STEPS 8u
#define WIDE_MOD 201u /* values -100..100 */
#define WIDE_STEPS 200u

static uint32_t small_a(uint32_t h) { return h % SMALL_MOD; }
static uint32_t small_s(uint32_t h) { return 1 + (h >> 24) % SMALL_STEPS; }
static uint32_t wide_a(uint32_t h) { return h % WIDE_MOD; }
static uint32_t wide_s(uint32_t h) { return 1 + (h >> 16) % WIDE_STEPS; }

static int32_t small_value_as(uint32_t a, uint32_t s, int q)
{
    return (int32_t)((a + (uint32_t)q * s) % SMALL_MOD) - 4;
}

static int32_t wide_value_as(uint32_t a, uint32_t s, int q)
{
    return (int32_t)((a + (uint32_t)q * s) % WIDE_MOD) - 100;
}

static int32_t small_value(uint32_t h, int q) { return small_value_as(small_a(h), small_s(h), q); }
static int32_t wide_value(uint32_t h, int q) { return wide_value_as(wide_a(h), wide_s(h), q); }

/* Exactly one rank (chosen per element) gives 2; the others give +-1 (bit q%40 of h). */
static int prod_special(uint64_t h, int n) { return (int)((h >> 40) % (uint64_t)n); }

static int32_t prod_value(uint64_t h, int q, int n)
{
    if (q == prod_special(h, n)) return 2;
    return ((h >> (q % 40)) & 1) ? -1 : 1;
}

/* ---- dtype representation ---- */

/* The value an integer takes once stored in dt (integer dtypes wrap). */
static double wrap_to_dtype(coll_dtype dt, int64_t v)
{
    uint64_t u = (uint64_t)v;
    switch (dt) {
    case COLL_INT8: return (double)((int64_t)(u & 0xff) - ((u & 0x80) ? 256 : 0));
    case COLL_UINT8: return (double)(u & 0xff);
    case COLL_INT32:
        return (double)((int64_t)(u & 0xffffffffULL) - ((u & 0x80000000ULL) ? 4294967296LL : 0));
    default: return (double)v; /* inputs keep every float result an exact small integer */
    }
}

static void encode_block(coll_dtype dt, const int32_t *v, void *buf, size_t n)
{
    size_t j;
    switch (dt) {
    case COLL_FLOAT32:
        for (j = 0; j < n; j++) ((float *)buf)[j] = (float)v[j];
        break;
    case COLL_FLOAT64:
        for (j = 0; j < n; j++) ((double *)buf)[j] = (double)v[j];
        break;
    case COLL_FLOAT16:
        for (j = 0; j < n; j++) ((uint16_t *)buf)[j] = coll__float_to_half((float)v[j]);
        break;
    case COLL_BFLOAT16:
        for (j = 0; j < n; j++) ((uint16_t *)buf)[j] = coll__float_to_bf16((float)v[j]);
        break;
    case COLL_INT8:
    case COLL_UINT8:
        for (j = 0; j < n; j++) ((uint8_t *)buf)[j] = (uint8_t)v[j];
        break;
    case COLL_INT32:
        for (j = 0; j < n; j++) ((uint32_t *)buf)[j] = (uint32_t)v[j];
        break;
    case COLL_INT64:
        for (j = 0; j < n; j++) ((int64_t *)buf)[j] = (int64_t)v[j];
        break;
    default: break;
    }
}

static void decode_block(coll_dtype dt, const void *buf, double *out, size_t n)
{
    size_t j;
    switch (dt) {
    case COLL_FLOAT32:
        for (j = 0; j < n; j++) out[j] = ((const float *)buf)[j];
        break;
    case COLL_FLOAT64:
        for (j = 0; j < n; j++) out[j] = ((const double *)buf)[j];
        break;
    case COLL_FLOAT16:
        for (j = 0; j < n; j++) out[j] = coll__half_to_float(((const uint16_t *)buf)[j]);
        break;
    case COLL_BFLOAT16:
        for (j = 0; j < n; j++) out[j] = coll__bf16_to_float(((const uint16_t *)buf)[j]);
        break;
    case COLL_INT8:
        for (j = 0; j < n; j++) out[j] = ((const int8_t *)buf)[j];
        break;
    case COLL_UINT8:
        for (j = 0; j < n; j++) out[j] = ((const uint8_t *)buf)[j];
        break;
    case COLL_INT32:
        for (j = 0; j < n; j++) out[j] = ((const int32_t *)buf)[j];
        break;
    case COLL_INT64:
        for (j = 0; j < n; j++) out[j] = (double)((const int64_t *)buf)[j];
        break;
    default:
        for (j = 0; j < n; j++) out[j] = NAN;
        break;
    }
}

/* elem_hash of elements first .. first+m-1 (m <= BLOCK). The index's high half
 * is constant within a run that does not cross 2^32, so the loop is all 32-bit
 * lanes and vectorises: at 1G per rank, making inputs dominated the run. */
#define HASH_RUN(lo, hi_term, h, m)                          \
    for (uint32_t j_ = 0; j_ < (uint32_t)(m); j_++) {        \
        uint32_t x_ = ((lo) + j_) * 0x9e3779b9u + (hi_term); \
        x_ ^= x_ >> 16;                                      \
        x_ *= 0x7feb352du;                                   \
        x_ ^= x_ >> 15;                                      \
        x_ *= 0x846ca68bu;                                   \
        (h)[j_] = x_ ^ (x_ >> 16);                           \
    }

static void hash_block(uint64_t base, uint64_t first, uint32_t *h, size_t m)
{
    while (m > 0) {
        uint32_t lo = (uint32_t)first;
        uint64_t to_wrap = (uint64_t)UINT32_MAX - lo + 1;
        size_t run = m < to_wrap ? m : (size_t)to_wrap;
        uint32_t hi_term = (uint32_t)(first >> 32) * 0x85ebca6bu + (uint32_t)base;
        HASH_RUN(lo, hi_term, h, run)
        h += run, first += run, m -= run;
    }
}

/* The values of `rank` for elements first .. first+m-1. */
static void rank_values(const bench_data_key *k, uint64_t base, int rank, uint64_t first,
                        int32_t *v, size_t m)
{
    uint32_t h[BLOCK];
    size_t j;
    switch (kind_of(k->op)) {
    case GEN_SMALL:
        hash_block(base, first, h, m);
        for (j = 0; j < m; j++) v[j] = small_value(h[j], rank);
        break;
    case GEN_PROD:
        for (j = 0; j < m; j++) v[j] = prod_value(elem_hash64(base, first + j), rank, k->nranks);
        break;
    default:
        hash_block(base, first, h, m);
        for (j = 0; j < m; j++) v[j] = wide_value(h[j], rank);
        break;
    }
}

static void wrap_block(coll_dtype dt, const int32_t *v, double *out, size_t m)
{
    if (dt != COLL_INT8 && dt != COLL_UINT8 && dt != COLL_INT32) {
        for (size_t j = 0; j < m; j++) out[j] = (double)v[j];
        return;
    }
    for (size_t j = 0; j < m; j++) out[j] = wrap_to_dtype(dt, v[j]);
}

/* ---- expected reductions ---- */

static int64_t prod_over_ranks(uint64_t h, int n)
{
    int special = prod_special(h, n), negatives = 0;
    for (int q = 0; q < n; q++)
        if (q != special && ((h >> (q % 40)) & 1)) negatives++;
    return (negatives & 1) ? -2 : 2;
}

/* min (want_max 0) or max over ranks of (a, s)'s values, as the dtype stores them. */
static double extreme_over_ranks(coll_dtype dt, uint32_t a, uint32_t s, int n, int want_max)
{
    double best = wrap_to_dtype(dt, wide_value_as(a, s, 0));
    for (int q = 1; q < n; q++) {
        double v = wrap_to_dtype(dt, wide_value_as(a, s, q));
        if (want_max ? v > best : v < best) best = v;
    }
    return best;
}

/* The reduction over all ranks depends only on an element's (a, s): tables of
 * it, built once per call, keep the check O(1) per element for any rank count. */
typedef struct expect_table {
    double small[SMALL_MOD * SMALL_STEPS]; /* sum (as stored) or avg */
    int16_t *wide;                         /* min or max; NULL: computed per element */
} expect_table;

static void table_init(expect_table *t, const bench_data_key *k)
{
    int n = k->nranks;
    t->wide = NULL;
    if (k->op == COLL_SUM || k->op == COLL_AVG) {
        for (uint32_t a = 0; a < SMALL_MOD; a++)
            for (uint32_t s = 1; s <= SMALL_STEPS; s++) {
                int64_t sum = 0;
                for (int q = 0; q < n; q++) sum += small_value_as(a, s, q);
                t->small[a * SMALL_STEPS + s - 1] = k->op == COLL_AVG
                                                        ? (double)sum / n
                                                        : wrap_to_dtype(k->dtype, sum);
            }
    } else if (k->op == COLL_MIN || k->op == COLL_MAX) {
        t->wide = malloc(WIDE_MOD * WIDE_STEPS * sizeof *t->wide);
        for (uint32_t a = 0; t->wide && a < WIDE_MOD; a++)
            for (uint32_t s = 1; s <= WIDE_STEPS; s++)
                t->wide[a * WIDE_STEPS + s - 1] = (int16_t)extreme_over_ranks(k->dtype, a, s, n,
                                                                              k->op == COLL_MAX);
    }
}

static void expected_block(const expect_table *t, const bench_data_key *k, uint64_t base,
                           uint64_t first, double *out, size_t m)
{
    size_t j;
    uint32_t h, hs[BLOCK];
    int want_max = k->op == COLL_MAX;
    switch (k->op) {
    case COLL_SUM:
    case COLL_AVG:
        hash_block(base, first, hs, m);
        for (j = 0; j < m; j++)
            out[j] = t->small[small_a(hs[j]) * SMALL_STEPS + small_s(hs[j]) - 1];
        break;
    case COLL_PROD:
        for (j = 0; j < m; j++)
            out[j] = wrap_to_dtype(k->dtype,
                                   prod_over_ranks(elem_hash64(base, first + j), k->nranks));
        break;
    case COLL_MIN:
    case COLL_MAX:
        for (j = 0; j < m; j++) {
            h = elem_hash(base, first + j);
            out[j] = t->wide
                         ? t->wide[wide_a(h) * WIDE_STEPS + wide_s(h) - 1]
                         : extreme_over_ranks(k->dtype, wide_a(h), wide_s(h), k->nranks, want_max);
        }
        break;
    default:
        for (j = 0; j < m; j++) out[j] = NAN; /* no reduction: nothing is expected */
        break;
    }
}

double bench_data_avg_tolerance(coll_dtype dt)
{
    switch (dt) {
    case COLL_FLOAT64: return 1e-12;
    case COLL_FLOAT32: return 1e-6;
    case COLL_FLOAT16: return 4e-3;
    case COLL_BFLOAT16: return 3.2e-2;
    default: return 0;
    }
}

static uint64_t count_wrong(const double *expected, const double *got, size_t n, double tol)
{
    uint64_t wrong = 0;
    if (tol == 0) {
        for (size_t j = 0; j < n; j++) wrong += got[j] != expected[j];
        return wrong;
    }
    for (size_t j = 0; j < n; j++) {
        double bound = tol * fmax(1.0, fabs(expected[j]));
        wrong += !(fabs(got[j] - expected[j]) <= bound); /* NaN counts as wrong */
    }
    return wrong;
}

/* ---- public ---- */

void bench_data_fill(const bench_data_key *k, int rank, uint64_t first, void *buf, size_t n)
{
    int32_t v[BLOCK];
    uint64_t base = key_base(k);
    size_t esz = coll_dtype_size(k->dtype);
    for (size_t off = 0; off < n; off += BLOCK) {
        size_t m = n - off < BLOCK ? n - off : BLOCK;
        rank_values(k, base, rank, first + off, v, m);
        encode_block(k->dtype, v, (char *)buf + off * esz, m);
    }
}

/* float32 sum, the benchmarks' default, in one pass (half the time of the
 * general path): expected from the table (exact small integers), compared as
 * floats (a NaN is unequal, so wrong). */
static uint64_t check_f32_sum(const expect_table *t, uint64_t base, uint64_t first,
                              const float *got, size_t n)
{
    float tab[SMALL_MOD * SMALL_STEPS];
    uint32_t h[BLOCK];
    uint64_t wrong = 0;
    for (size_t i = 0; i < SMALL_MOD * SMALL_STEPS; i++) tab[i] = (float)t->small[i];
    for (size_t off = 0; off < n; off += BLOCK) {
        size_t m = n - off < BLOCK ? n - off : BLOCK;
        uint32_t bad = 0;
        hash_block(base, first + off, h, m);
        for (size_t j = 0; j < m; j++)
            bad += got[off + j] != tab[small_a(h[j]) * SMALL_STEPS + small_s(h[j]) - 1];
        wrong += bad;
    }
    return wrong;
}

uint64_t bench_data_check_reduced(const bench_data_key *k, uint64_t first, const void *buf,
                                  size_t n)
{
    double expected[BLOCK], got[BLOCK];
    uint64_t base = key_base(k), wrong = 0;
    size_t esz = coll_dtype_size(k->dtype);
    double tol = k->op == COLL_AVG ? bench_data_avg_tolerance(k->dtype) : 0;
    expect_table table;
    table_init(&table, k);
    if (k->dtype == COLL_FLOAT32 && k->op == COLL_SUM)
        return check_f32_sum(&table, base, first, buf, n);
    for (size_t off = 0; off < n; off += BLOCK) {
        size_t m = n - off < BLOCK ? n - off : BLOCK;
        expected_block(&table, k, base, first + off, expected, m);
        decode_block(k->dtype, (const char *)buf + off * esz, got, m);
        wrong += count_wrong(expected, got, m, tol);
    }
    free(table.wide);
    return wrong;
}

uint64_t bench_data_check_copy(const bench_data_key *k, int rank, uint64_t first, const void *buf,
                               size_t n)
{
    double expected[BLOCK], got[BLOCK];
    int32_t v[BLOCK];
    uint64_t base = key_base(k), wrong = 0;
    size_t esz = coll_dtype_size(k->dtype);
    for (size_t off = 0; off < n; off += BLOCK) {
        size_t m = n - off < BLOCK ? n - off : BLOCK;
        rank_values(k, base, rank, first + off, v, m);
        wrap_block(k->dtype, v, expected, m);
        decode_block(k->dtype, (const char *)buf + off * esz, got, m);
        wrong += count_wrong(expected, got, m, 0);
    }
    return wrong;
}
