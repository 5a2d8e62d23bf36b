/* What this machine can do: the single-thread memory-copy rate, the physical
 * reference the report compares host bus bandwidth with. `collbench info`
 * prints it; `collbench suite` records it once per run in results.json. */
#ifndef BENCH_MEM_COPY_RATE_H
#define BENCH_MEM_COPY_RATE_H

#include <stddef.h>

#define MEM_COPY_BYTES ((size_t)64 << 20) /* well past any last-level cache */
#define MEM_COPY_REPS 5
#define MEM_COPY_MIN_BYTES ((size_t)4096)

/* memcpy of bytes between two malloc'd buffers (first-touched before timing),
 * reps times on one thread; *gbps = bytes / best time / 1e9. A copy reads and
 * writes each byte, so the memory traffic is twice that rate. COLL_EINVAL
 * (err says why) for fewer than MEM_COPY_MIN_BYTES bytes or reps < 1,
 * COLL_ENOMEM when the buffers cannot be had. */
int bench_mem_copy_rate(size_t bytes, int reps, double *gbps, char *err, size_t errlen);

#endif
