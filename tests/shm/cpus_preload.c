/* LD_PRELOAD shim for tests/shm/oversub_agree.sh: in the rank named by
 * $CPUS_RANK, sched_getaffinity says the process may run on $CPUS_COUNT CPUs
 * (0 .. N-1), as if that rank had been given a wider CPU set than its peers
 * (taskset, a cpuset), which a machine with fewer cores cannot give. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

int sched_getaffinity(pid_t pid, size_t size, cpu_set_t *set)
{
    int (*real)(pid_t, size_t,
                cpu_set_t *) = (int (*)(pid_t, size_t, cpu_set_t *))dlsym(RTLD_NEXT,
                                                                          "sched_getaffinity");
    int rc = real ? real(pid, size, set) : -1;
    const char *rank = getenv("RANK"), *which = getenv("CPUS_RANK"), *count = getenv("CPUS_COUNT");
    if (rc != 0 || !rank || !which || !count || strcmp(rank, which) != 0) return rc;
    CPU_ZERO_S(size, set);
    for (int c = 0; c < atoi(count) && (size_t)c < size * 8; c++) CPU_SET_S((size_t)c, size, set);
    return 0;
}
