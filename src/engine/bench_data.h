/* Deterministic benchmark inputs whose exact result is known, and the checker
 * that recomputes each expected element on the fly (no "expected" buffer: a
 * 1 GiB run on 6 ranks has no memory to spare).
 *
 * The input of rank q at element index i is a function of (seed, iteration,
 * q, i) and the reduction op:
 *   sum, avg  small integers in [-4, 4]: every partial sum is an integer of at
 *             most 4*n, exact in float16 up to 512 ranks, in bfloat16 up to 64,
 *             in int8 up to 31 (integer dtypes wrap like the kernels otherwise).
 *   prod      1 or -1, except exactly one rank per element contributing 2.
 *   min, max, and collectives without a reduction: integers in [-100, 100]
 *             (stored modulo 256 in uint8).
 * Checks are exact except avg, where |got - sum/n| <= tol * max(1, |sum/n|)
 * with tol = 1e-12 (float64), 1e-6 (float32), 4e-3 (float16), 3.2e-2
 * (bfloat16): a few units in the last place of the dtype. */
#ifndef BENCH_DATA_H
#define BENCH_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "coll.h"

/* op value for collectives that move data without reducing it. */
#define BENCH_OP_NONE COLL_OP_COUNT

typedef struct bench_data_key {
    uint64_t seed;
    uint64_t iter; /* each checked iteration gets fresh inputs */
    int nranks;
    coll_dtype dtype;
    int op; /* coll_op, or BENCH_OP_NONE */
} bench_data_key;

/* Rank `rank`'s inputs for element indices first .. first+n-1 into buf. */
void bench_data_fill(const bench_data_key *k, int rank, uint64_t first, void *buf, size_t n);

/* Wrong elements in buf[0..n): each should be the op-reduction over all ranks of
 * their inputs at index first + j. */
uint64_t bench_data_check_reduced(const bench_data_key *k, uint64_t first, const void *buf,
                                  size_t n);

/* Wrong elements in buf[0..n): each should be rank `rank`'s input at first + j. */
uint64_t bench_data_check_copy(const bench_data_key *k, int rank, uint64_t first, const void *buf,
                               size_t n);

/* The relative tolerance used for avg on dt (0 for integer dtypes). */
double bench_data_avg_tolerance(coll_dtype dt);

#endif
