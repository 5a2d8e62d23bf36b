/* Rank pinning (coll_tool.h: coll_bind_*). Default here: none; the collbench command
 * line picks per backend (core for shm and auto, none for tcp:
 * tools/collbench/cli_common.c, measured in docs/PERFORMANCE.md). */
#include "coll_tool.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef COLL_HAVE_HWLOC
#include <hwloc.h>
#endif

int coll_bind_parse(const char *s, coll_bind_mode *out)
{
    if (s && strcmp(s, "core") == 0) *out = COLL_BIND_CORE;
    else if (s && strcmp(s, "none") == 0) *out = COLL_BIND_NONE;
    else return COLL_EINVAL;
    return COLL_OK;
}

const char *coll_bind_name(coll_bind_mode m) { return m == COLL_BIND_CORE ? "core" : "none"; }

coll_bind_mode coll_bind_from_env(void)
{
    coll_bind_mode m;
    return coll_bind_parse(getenv(COLL_ENV_BIND), &m) == COLL_OK ? m : COLL_BIND_NONE;
}

#ifdef COLL_HAVE_HWLOC
/* First allowed hardware thread of each core, in topology order. */
static int cores_hwloc(int *out, int cap)
{
    hwloc_topology_t topo;
    int n = 0;
    if (hwloc_topology_init(&topo) != 0) return 0;
    if (hwloc_topology_load(topo) == 0) {
        int ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
        hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset(topo);
        for (int i = 0; i < ncores && n < cap; i++) {
            hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, i);
            hwloc_bitmap_t set = hwloc_bitmap_dup(core->cpuset);
            hwloc_bitmap_and(set, set, allowed);
            int first = hwloc_bitmap_first(set);
            hwloc_bitmap_free(set);
            if (first >= 0) out[n++] = first;
        }
    }
    hwloc_topology_destroy(topo);
    return n;
}
#endif

/* Without hwloc: every CPU we may use counts as a core. */
static int cores_affinity(int *out, int cap)
{
    cpu_set_t set;
    int n = 0;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
    for (int c = 0; c < CPU_SETSIZE && n < cap; c++)
        if (CPU_ISSET(c, &set)) out[n++] = c;
    return n;
}

int coll_bind_plan(coll_bind_mode mode, int nprocs, int *cpus)
{
    for (int r = 0; r < nprocs; r++) cpus[r] = -1;
    if (mode == COLL_BIND_NONE) return COLL_OK;
    int *cores = calloc(CPU_SETSIZE, sizeof *cores);
    if (!cores) return COLL_ENOMEM;
    int n = 0;
#ifdef COLL_HAVE_HWLOC
    n = cores_hwloc(cores, CPU_SETSIZE);
#endif
    if (n == 0) n = cores_affinity(cores, CPU_SETSIZE);
    for (int r = 0; r < nprocs && n > 0; r++) cpus[r] = cores[r % n];
    free(cores);
    return n > 0 ? COLL_OK : COLL_ESYS;
}

int coll_bind_apply_cpu(int cpu)
{
    if (cpu < 0) return COLL_OK;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set) == 0 ? COLL_OK : COLL_ESYS;
}
