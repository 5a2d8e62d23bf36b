/* Cross-memory attach helpers (see shm_cma.h). */
#include "backend/shm/shm_cma.h"

#include <errno.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

void coll__shm_cma_allow_peers(int on)
{
#ifdef PR_SET_PTRACER
    /* Fails with EINVAL without Yama: nothing to allow then. The ranks of one
     * host share the launcher that forked them: it and its descendants may
     * attach, where PR_SET_PTRACER_ANY let every process of the user do so. */
    (void)prctl(PR_SET_PTRACER, on ? (unsigned long)getppid() : 0UL, 0, 0, 0);
#else
    (void)on;
#endif
}

/* The kernel may copy less than asked (page boundaries, signals): loop. */
static int cma_loop(pid_t pid, char *local, uint64_t remote, size_t len, int write)
{
    while (len > 0) {
        struct iovec l = {.iov_base = local, .iov_len = len};
        struct iovec r = {.iov_base = (void *)(uintptr_t)remote, .iov_len = len};
        ssize_t got = write ? process_vm_writev(pid, &l, 1, &r, 1, 0)
                            : process_vm_readv(pid, &l, 1, &r, 1, 0);
        if (got < 0) {
            if (errno == EINTR) continue;
            return -errno;
        }
        if (got == 0) return -EFAULT;
        local += got;
        remote += (uint64_t)got;
        len -= (size_t)got;
    }
    return 0;
}

int coll__shm_cma_read(pid_t pid, void *local, uint64_t remote, size_t len)
{
    return cma_loop(pid, local, remote, len, 0);
}

int coll__shm_cma_write(pid_t pid, uint64_t remote, const void *local, size_t len)
{
    return cma_loop(pid, (char *)local, remote, len, 1);
}
