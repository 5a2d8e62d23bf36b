/* Inputs and expected results for multi-rank tests: small integers so every
 * dtype/op result is exact (avg aside), read and written as doubles. */
#ifndef RANK_DATA_H
#define RANK_DATA_H

#include <stddef.h>
#include "coll.h"

double rank_get(coll_dtype dt, const void *buf, size_t i);
void rank_set(coll_dtype dt, void *buf, size_t i, double v);
/* Value rank r contributes at element i (block `salt` distinguishes buffers). */
double rank_input(coll_dtype dt, coll_op op, int r, int nranks, size_t i, size_t salt);
/* Expected reduction over all ranks of rank_input at element i. */
double rank_expected(coll_dtype dt, coll_op op, int nranks, size_t i, size_t salt);
/* Is got close enough to want for this dtype/op? */
int rank_close(coll_dtype dt, coll_op op, double got, double want);

#endif
