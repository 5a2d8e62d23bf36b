/* How much memory this process may use: the host's RAM, or less where its
 * cgroup says so. A container or a systemd slice caps memory below RAM with
 * cgroup v2's memory.max or v1's memory.limit_in_bytes, on the process's own
 * group or on one above it; what a process allocates past that limit calls
 * the OOM killer as surely as past RAM. */
#ifndef COLL_MEM_LIMIT_H
#define COLL_MEM_LIMIT_H

#include <stdint.h>

/* Where the files are: /proc/self/cgroup and /sys/fs/cgroup, or a fake tree
 * (tests). */
typedef struct coll__cgroup_where {
    const char *self; /* the process's groups: "0::/a/b" (v2), "4:memory:/a/b" (v1) */
    const char *root; /* the mount: v2 groups under it, v1's under root/memory */
} coll__cgroup_where;

/* The real places. */
extern const coll__cgroup_where coll__cgroup_here;

/* The lowest memory limit set on the process's group or one above it (v2
 * first, then v1), in *limit, and in *left the least room any of those groups
 * has (limit less its usage: memory.current, memory.usage_in_bytes): 0, or
 * -1 when no group sets one ("max", or v1's huge "unlimited" is no limit,
 * since it is above any RAM). */
int coll__cgroup_mem_limit(const coll__cgroup_where *at, uint64_t *limit, uint64_t *left);

/* ram, or the cgroup's limit where that is lower (ram 0: unknown, the limit
 * alone; 0 when neither is known). */
uint64_t coll__mem_limit_of(const coll__cgroup_where *at, uint64_t ram);

/* This process's: sysinfo's total RAM, capped by its cgroup's limit. */
uint64_t coll__mem_limit(void);

#endif
