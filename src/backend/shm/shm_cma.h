/* Cross-memory attach: copy straight between this process and a peer's private
 * memory (process_vm_readv/writev), one copy instead of two through the segment. */
#ifndef COLL_SHM_CMA_H
#define COLL_SHM_CMA_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Under Yama ptrace_scope=1, let the sibling ranks read and write this process
 * (on = 1), or no one again (on = 0). Only the CMA engine needs it, so it is set
 * when that engine may run and cleared when it will not: the tracer allowed is
 * our parent (the launcher: torchrun's agent, Open MPI's daemon, collbench) and
 * its descendants, not any process of the user (docs/RELIABILITY.md). Best effort. */
void coll__shm_cma_allow_peers(int on);
/* 0, or -errno (ESRCH: the peer is gone; EFAULT: a bad address; EPERM: not allowed). */
int coll__shm_cma_read(pid_t pid, void *local, uint64_t remote, size_t len);
int coll__shm_cma_write(pid_t pid, uint64_t remote, const void *local, size_t len);

#endif
