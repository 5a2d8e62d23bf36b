/* Is a peer process still alive? pidfds (readable once the process has exited,
 * zombie or not) where the kernel has them, else kill(pid, 0). */
#ifndef COLL_SHM_LIVENESS_H
#define COLL_SHM_LIVENESS_H

#include <sys/types.h>

typedef struct shm_liveness {
    int n, self;
    pid_t *pid; /* [n] */
    int *pidfd; /* [n], -1 when not open (self, or no pidfd support) */
} shm_liveness;

int coll__shm_liveness_open(shm_liveness *l, const pid_t *pids, int n, int self);
void coll__shm_liveness_close(shm_liveness *l);
/* The first dead rank among those with watch[r] != 0 (watch NULL: all), else -1. */
int coll__shm_liveness_dead(const shm_liveness *l, const unsigned char *watch);

#endif
