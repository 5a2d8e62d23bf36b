/* Memory of a training run, per rank: what each component takes, the peak
 * resident size, and the estimate made before launching. */
#ifndef TRAIN_MEMORY_H
#define TRAIN_MEMORY_H

#include <stddef.h>
#include <stdint.h>

typedef struct train_mem {
    uint64_t params_bytes, grads_bytes, optim_bytes, activations_bytes, comm_buffers_bytes,
        peak_rss_bytes;
} train_mem;

/* Peak resident set of this process since the last reset (VmHWM), bytes. */
uint64_t train_peak_rss_bytes(void);
/* Start a new peak (Linux: /proc/self/clear_refs); without it, the peak of
 * the whole process. */
void train_peak_rss_reset(void);
/* What this host can give (bench_memory_available: MemAvailable, capped by
 * the cgroup's memory.max), bytes; 0 when unknown. */
uint64_t train_mem_available_bytes(void);
/* Sum of the components (the estimate of one rank), peak RSS not counted. */
uint64_t train_mem_total(const train_mem *m);

#endif
