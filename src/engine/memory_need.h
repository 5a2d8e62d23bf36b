/* What a run's buffers will take on this host, against what the host can give,
 * checked by the launcher before any rank allocates: a run that cannot fit is
 * refused with the arithmetic instead of touching memory until the OOM killer
 * picks a process (on a shared host, perhaps another user's). */
#ifndef BENCH_MEMORY_NEED_H
#define BENCH_MEMORY_NEED_H

#include <stddef.h>
#include <stdint.h>

#include "engine/bench_options.h"

/* The send and receive buffers one of nranks ranks allocates for sizes: one
 * pair at the largest size, reused by every size (bench_size_buffers.c's
 * pool); an unused one counts 1 byte. */
void bench_pool_bytes(const bench_options *o, const uint64_t *sizes, size_t nsizes, int nranks,
                      size_t *send_bytes, size_t *recv_bytes);

/* Bytes this host can give now: /proc/meminfo's MemAvailable, capped by the
 * room left under the cgroup's limit where one applies (its group's or one
 * above: v2 memory.max less memory.current, v1 memory.limit_in_bytes less
 * memory.usage_in_bytes; core/mem_limit.h).
 * 0 and *bytes, or -1 when neither can be read. */
int bench_memory_available(uint64_t *bytes);

/* 0 when the largest -P of o (ranks on this host: --nproc-per-node with
 * --nnodes) fits what bench_memory_available says, else -1 with err:
 * "needs 80.0 GiB on this host (4 ranks x 2 buffers x 20.0 GiB), 21.3 GiB
 * available". Each rank's buffers and, on private buffers, what its backends
 * allocate beyond them (coll_backend_scratch_bytes: shm's and auto's
 * all-reduce scratch, "... + 2 ranks x 6.0 GiB of shm scratch ..."). Host
 * memory only: device (cuda) buffers are not counted. */
int bench_memory_check(const bench_options *o, char *err, size_t errlen);

#endif
