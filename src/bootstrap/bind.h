/* Pinning ranks to cores (--bind core|none). The benchmark commands put the
 * choice in $COLL_BIND; our launcher reads it, plans one CPU per rank before
 * forking and pins each child before exec (affinity survives exec), so every
 * rank of any program it launches is pinned the same way.
 *
 * Default here: none. The collbench command line picks per backend (core for
 * shm and auto, none for tcp: tools/collbench/cli_common.c, measured in
 * docs/PERFORMANCE.md). */
#ifndef COLL_BIND_H
#define COLL_BIND_H

#include <stddef.h>

#define COLL_ENV_BIND "COLL_BIND"

typedef enum coll_bind_mode { COLL_BIND_NONE = 0, COLL_BIND_CORE = 1 } coll_bind_mode;

#define COLL_BIND_DEFAULT COLL_BIND_NONE

/* "core" or "none"; COLL_EINVAL otherwise. */
int coll_bind_parse(const char *s, coll_bind_mode *out);
const char *coll_bind_name(coll_bind_mode m);
/* $COLL_BIND, or the default when it is unset or not a mode. */
coll_bind_mode coll_bind_from_env(void);
/* The CPU of each of nprocs ranks into cpus[] (-1: leave alone): with core,
 * round robin over the cores this process may run on, one hardware thread per
 * core, in hwloc's order when built with hwloc. */
int coll_bind_plan(coll_bind_mode mode, int nprocs, int *cpus);
/* Pin the calling process to cpu (no-op for -1). Only a system call: safe in a
 * forked child of a threaded process. */
int coll_bind_apply_cpu(int cpu);

#endif
