/* Are the parameters bitwise identical on every rank? A 64-bit hash of the
 * parameter bits, all-gathered and compared with rank 0's. */
#ifndef TRAIN_PARAM_HASH_H
#define TRAIN_PARAM_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "coll.h"

uint64_t train_param_hash(const float *p, size_t n);
/* 0 when every rank's hash equals rank 0's; 1 when not, with the first
 * differing rank in *bad_rank; a negative coll_status when the all-gather failed. */
int train_param_hash_check(coll_comm *comm, const float *p, size_t n, int *bad_rank);

#endif
