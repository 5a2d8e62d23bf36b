/* More ranks than cores, agreed by every rank (shm_oversub.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "backend/shm/shm_oversub.h"

#include <sched.h>
#include <unistd.h>

int coll__shm_cpus(void)
{
    cpu_set_t set;
    long host = sysconf(_SC_NPROCESSORS_ONLN);
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 1) return CPU_COUNT(&set);
    return host > 0 ? (int)host : 1;
}

int coll__shm_oversub_mine(int n) { return n > coll__shm_cpus(); }

/* The OR, not rank 0's: a rank that shares its cores slows every step of a
 * collective, so the windows measured with shared cores are the ones that fit. */
int coll__shm_oversub_agree(const shm_rank_ctrl *ctrl, int n)
{
    for (int r = 0; r < n; r++)
        if (ctrl[r].oversub) return 1;
    return 0;
}
