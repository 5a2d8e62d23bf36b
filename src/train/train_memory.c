#include "train/train_memory.h"

#include "engine/memory_need.h"

#include <stdio.h>
#include <sys/resource.h>

void train_peak_rss_reset(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (!f) return; /* not Linux, or no permission: the peak is the process's */
    fputs("5", f);
    fclose(f);
}

uint64_t train_peak_rss_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    unsigned long long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %llu kB", &kb) == 1) break;
    if (f) fclose(f);
    if (kb) return (uint64_t)kb * 1024;
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
    return (uint64_t)ru.ru_maxrss * 1024; /* Linux reports kilobytes */
}

uint64_t train_mem_available_bytes(void)
{
    /* the engine's reading: MemAvailable capped by the cgroup's memory.max */
    uint64_t bytes;
    return bench_memory_available(&bytes) == 0 ? bytes : 0;
}

uint64_t train_mem_total(const train_mem *m)
{
    return m->params_bytes + m->grads_bytes + m->optim_bytes + m->activations_bytes +
           m->comm_buffers_bytes;
}
