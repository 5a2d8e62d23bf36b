/* Peer liveness (see shm_liveness.h). */
#include "backend/shm/shm_liveness.h"
#include "coll.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

int coll__shm_liveness_open(shm_liveness *l, const pid_t *pids, int n, int self)
{
    l->n = n;
    l->self = self;
    l->pid = calloc((size_t)n, sizeof *l->pid);
    l->pidfd = calloc((size_t)n, sizeof *l->pidfd);
    if (!l->pid || !l->pidfd) {
        coll__shm_liveness_close(l);
        return COLL_ENOMEM;
    }
    for (int r = 0; r < n; r++) {
        l->pid[r] = pids[r];
        /* pidfds are close-on-exec by definition. */
        l->pidfd[r] = r == self ? -1 : (int)syscall(SYS_pidfd_open, pids[r], 0);
    }
    return COLL_OK;
}

void coll__shm_liveness_close(shm_liveness *l)
{
    for (int r = 0; l->pidfd && r < l->n; r++)
        if (l->pidfd[r] >= 0) close(l->pidfd[r]);
    free(l->pid);
    free(l->pidfd);
    l->pid = NULL;
    l->pidfd = NULL;
}

static int is_dead(const shm_liveness *l, int r)
{
    if (l->pidfd[r] >= 0) {
        struct pollfd p = {.fd = l->pidfd[r], .events = POLLIN};
        return poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR));
    }
    return kill(l->pid[r], 0) != 0 && errno == ESRCH;
}

int coll__shm_liveness_dead(const shm_liveness *l, const unsigned char *watch)
{
    for (int r = 0; r < l->n; r++)
        if (r != l->self && (!watch || watch[r]) && is_dead(l, r)) return r;
    return -1;
}
