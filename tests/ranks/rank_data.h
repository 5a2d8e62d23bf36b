/* Inputs and expected results for multi-rank tests: small integers so every
 * dtype/op result is exact (avg aside), read and written as doubles. */
#ifndef RANK_DATA_H
#define RANK_DATA_H

#include <stddef.h>
#include <stdint.h>
#include "coll.h"

double rank_get(coll_dtype dt, const void *buf, size_t i);
void rank_set(coll_dtype dt, void *buf, size_t i, double v);
/* Value rank r contributes at element i (block `salt` distinguishes buffers). */
double rank_input(coll_dtype dt, coll_op op, int r, int nranks, size_t i, size_t salt);
/* Expected reduction over all ranks of rank_input at element i. */
double rank_expected(coll_dtype dt, coll_op op, int nranks, size_t i, size_t salt);
/* Is got close enough to want for this dtype/op? */
int rank_close(coll_dtype dt, coll_op op, double got, double want);

/* The uneven all-to-all's pattern: the elements rank i sends rank j, unit
 * elements a step (0 for some pairs, also a rank to itself), and the value of
 * its element e. */
size_t rank_a2av_count(int i, int j, size_t unit);
int32_t rank_a2av_value(int i, int j, size_t e);
/* Rank me's send buffer of n ranks' blocks, packed by sc. */
void rank_a2av_fill(int32_t *s, int me, int n, const size_t *sc);
/* How many of rank me's received elements (packed by rc) are not the
 * pattern's; the first one's sender, element and value into *from, *e, *got. */
size_t rank_a2av_wrong(const int32_t *r, int me, int n, const size_t *rc, int *from, size_t *e,
                       int32_t *got);

#endif
