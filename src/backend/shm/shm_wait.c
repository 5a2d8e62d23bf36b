/* Doorbells, futex sleeps and the checks made while waiting (see shm_wait.h). */
#include "backend/shm/shm_wait.h"
#include "coll.h"
#include "core/clock.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <linux/futex.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SLICE_NS 50000000L /* 50 ms between liveness checks while asleep */
#define PLAIN_SPIN_US 2.0  /* spin without yielding for this long, ranks <= cores */

/* No PAUSE while spinning: under KVM, pause-loop exiting turns a spinning vCPU
 * into a VM exit and a yield of the host CPU, which cost 2-ranks latency 100x
 * on the development VM. A compiler barrier keeps the loop honest. */
static inline void cpu_relax(void) { __asm__ __volatile__("" ::: "memory"); }

static void futex_wait(_Atomic uint32_t *addr, uint32_t val, long ns)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = ns};
    /* Shared (not PRIVATE): the word lives in a mapping of several processes. */
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT, val, &ts, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *addr)
{
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

void coll__shm_ring(shm_segment *seg, int rank)
{
    /* The caller published with a seq_cst store; the sleeper set sleeping with
     * one before its last look at the condition: one of us sees the other. */
    shm_rank_ctrl *c = &seg->ctrl[rank];
    if (!atomic_load(&c->sleeping)) return;
    atomic_fetch_add(&c->bell, 1);
    futex_wake(&c->bell);
}

void coll__shm_ring_all(shm_segment *seg)
{
    for (int r = 0; r < seg->nranks; r++)
        if (r != seg->rank) coll__shm_ring(seg, r);
}

void coll__shm_publish(shm_segment *seg, uint64_t step)
{
    atomic_store(&seg->ctrl[seg->rank].progress, step);
    coll__shm_ring_all(seg);
}

void coll__shm_abort_mark(shm_segment *seg, int status, int failed_rank)
{
    shm_header *h = seg->hdr;
    int32_t expected = 0;
    atomic_store_explicit(&h->abort_by, seg->rank, memory_order_relaxed);
    atomic_store_explicit(&h->abort_rank, failed_rank, memory_order_relaxed);
    /* First failure wins; the fields above may be overwritten by a racing rank,
     * which only changes who is blamed in a message. */
    atomic_compare_exchange_strong(&h->abort_status, &expected, (int32_t)status);
    coll__shm_ring_all(seg);
}

/* Why the wait must stop, or 0 to keep waiting. */
static int check_failures(const shm_waiter *w, int who, const char *what)
{
    shm_segment *seg = w->seg;
    int st = atomic_load(&seg->hdr->abort_status);
    const coll__err *map = w->err; /* group rank -> world rank */
    int by = atomic_load_explicit(&seg->hdr->abort_by, memory_order_relaxed);
    int blamed = atomic_load_explicit(&seg->hdr->abort_rank,
                                      memory_order_relaxed); /* a world rank */
    int g = coll__err_group(map, blamed); /* blamed's rank here, -1: none or outside */
    int member = g >= 0 && g != seg->rank && g < seg->nranks;
    /* A peer that gave up first names the culprit: ranks that saw it fail may
     * have exited since, and must not be blamed for it. */
    int dead = st && member && coll__shm_liveness_dead(w->live, NULL) >= 0
                   ? g
                   : coll__shm_liveness_dead(w->live, w->watch);
    if (dead >= 0 && (!st || dead == g || g < 0)) {
        coll__err_blame(w->err, 0, dead, "rank %d (pid %d) died while rank %d waited for %s",
                        coll__err_world(map, dead), (int)w->live->pid[dead],
                        coll__err_world(map, seg->rank), what);
        return COLL_EPEER;
    }
    if (st) {
        if (member) {
            coll__err_blame(w->err, 0, g, "rank %d (pid %d) failed: %s (reported by rank %d)",
                            blamed, (int)w->live->pid[g], coll_strerror(st),
                            coll__err_world(map, by));
            return COLL_EPEER;
        }
        coll__err_blame(w->err, 0, by, "rank %d aborted the communicator: %s",
                        coll__err_world(map, by), coll_strerror(st));
        if (blamed >= 0 && g < 0) { /* a rank outside this group failed first */
            coll__err_append(w->err, " (blames rank %d)", blamed);
            w->err->rank = blamed;
        }
        return st == COLL_EMISMATCH ? COLL_EMISMATCH : COLL_EPEER;
    }
    if (coll__now_s() > w->deadline) {
        if (who < 0) coll__err_blame(w->err, 0, -1, "timed out waiting for %s", what);
        else
            coll__err_blame(w->err, 0, who, "timed out waiting for rank %d (%s)",
                            coll__err_world(map, who), what);
        return COLL_ETIMEDOUT;
    }
    return 0;
}

int coll__shm_wait(const shm_waiter *w, shm_cond_fn cond, const void *arg, int who,
                   const char *what)
{
    /* Spin for up to w->spin microseconds before sleeping on the futex: first
     * a plain spin (ranks <= cores and the peer last seen on another CPU: a
     * system call per check would add its cost to the latency), then yielding
     * the CPU at every miss: whoever we wait for may wait for this CPU (more
     * ranks than cores, or another program took the other core), and handing
     * the core over that way costs one context switch where a futex sleep and
     * wake-up cost several. */
    const shm_rank_ctrl *peer = who >= 0 && who < w->seg->nranks ? &w->seg->ctrl[who] : NULL;
    int shared_cpu = peer &&
                     atomic_load_explicit(&peer->cpu, memory_order_relaxed) == sched_getcpu();
    double now = coll__now_us(), yield_from = now + (w->yield || shared_cpu ? 0 : PLAIN_SPIN_US);
    double spin_until = now + w->spin;
    for (unsigned i = 1; w->spin > 0; i++) {
        if (cond(arg)) return COLL_OK;
        if (now >= yield_from) sched_yield();
        else cpu_relax();
        if (now >= yield_from || i % 64 == 0) {
            now = coll__now_us();
            if (now > spin_until) break;
        }
    }
    shm_rank_ctrl *me = &w->seg->ctrl[w->seg->rank];
    for (;;) {
        uint32_t bell = atomic_load(&me->bell);
        atomic_store(&me->sleeping, 1);
        /* Checked after announcing the sleep: a writer either sees sleeping and
         * wakes us, or published before we look again here (all seq_cst). */
        if (cond(arg)) {
            atomic_store(&me->sleeping, 0);
            return COLL_OK;
        }
        futex_wait(&me->bell, bell, SLICE_NS);
        atomic_store(&me->sleeping, 0);
        if (cond(arg)) return COLL_OK;
        int rc = check_failures(w, who, what);
        if (rc) return rc;
    }
}

typedef struct progress_arg {
    shm_segment *seg;
    int peer;
    uint64_t step;
} progress_arg;

static int progress_reached(const void *p)
{
    const progress_arg *a = p;
    return atomic_load(&a->seg->ctrl[a->peer].progress) >= a->step;
}

int coll__shm_wait_progress(const shm_waiter *w, int peer, uint64_t step, const char *what)
{
    progress_arg a = {w->seg, peer, step};
    if (progress_reached(&a)) return COLL_OK;
    return coll__shm_wait(w, progress_reached, &a, peer, what);
}

typedef struct post_arg {
    shm_segment *seg;
    int peer;
    uint64_t step;
} post_arg;

static int post_reached(const void *p)
{
    const post_arg *a = p;
    return atomic_load(&a->seg->ctrl[a->peer].post[a->step & 1].seq) >= a->step;
}

int coll__shm_wait_posts(const shm_waiter *w, uint64_t step, const char *what)
{
    for (int r = 0; r < w->seg->nranks; r++) {
        post_arg a = {w->seg, r, step};
        if (r == w->seg->rank || post_reached(&a)) continue;
        int rc = coll__shm_wait(w, post_reached, &a, r, what);
        if (rc) return rc;
    }
    return COLL_OK;
}

int coll__shm_wait_all(const shm_waiter *w, uint64_t step, const char *what)
{
    for (int r = 0; r < w->seg->nranks; r++) {
        if (r == w->seg->rank) continue;
        int rc = coll__shm_wait_progress(w, r, step, what);
        if (rc) return rc;
    }
    return COLL_OK;
}
