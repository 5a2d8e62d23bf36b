/* Steps every shm collective is made of: arrival with signature check, plain
 * synchronising steps, split of a count into parts, peer copies, fault points. */
#include "backend/shm/shm_op.h"
#include "core/fault.h"
#include "backend/shm/shm_cma.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

void coll__shm_split(size_t count, int n, int p, size_t *lo, size_t *hi)
{
    size_t q = count / (size_t)n, r = count % (size_t)n, up = (size_t)p;
    *lo = q * up + (up < r ? up : r);
    *hi = *lo + q + (up < r ? 1 : 0);
}

int coll__shm_in_place_ranks(const shm_state *st)
{
    int k = 0;
    for (int p = 0; p < st->n; p++) k += st->peer_send[p] == st->peer_recv[p];
    return k;
}

void coll__shm_op_moved(shm_op *o, size_t bytes)
{
    o->moved += bytes;
    coll__fault_hit(COLL_FAULT_COLLECTIVE, bytes);
}

int coll__shm_op_arrive(shm_op *o, const void *sendbuf, const void *recvbuf)
{
    shm_state *st = o->st;
    uint64_t g = ++st->step;
    shm_rank_ctrl *me = &st->seg.ctrl[st->rank];
    shm_post *mine = &me->post[g & 1];
    /* Peers that find us on their CPU yield it to us at once (shm_wait.c). */
    int cpu = sched_getcpu();
    if (cpu != atomic_load_explicit(&me->cpu, memory_order_relaxed))
        atomic_store_explicit(&me->cpu, cpu, memory_order_relaxed);
    mine->sig = *o->sig;
    mine->sendbuf = (uint64_t)(uintptr_t)sendbuf;
    mine->recvbuf = (uint64_t)(uintptr_t)recvbuf;
    mine->staged = o->staged;
    mine->flags = (o->plain ? SHM_POST_PLAIN : 0u) | (o->probe ? SHM_POST_PROBE : 0u) |
                  (o->c->nonblocking ? SHM_POST_NONBLOCKING : 0u);
    o->all_plain = 1;
    o->any_nonblocking = 0;
    atomic_store(&mine->seq, g); /* after the fields (and any inline data) */
    coll__shm_ring_all(&st->seg);
    int rc = coll__shm_wait_posts(&o->w, g, coll__kind_name(o->c->kind));
    if (rc) return rc;
    for (int p = 0; p < st->n; p++) {
        const shm_post *ph = &st->seg.ctrl[p].post[g & 1];
        if (!coll__sig_equal(&ph->sig, o->sig)) {
            char theirs[96], ours[96];
            coll__sig_format(&ph->sig, theirs, sizeof theirs);
            coll__sig_format(o->sig, ours, sizeof ours);
            coll__err_blame(o->w.err, 0, p, "rank %d called %s but rank %d called %s",
                            coll__err_world(o->w.err, p), theirs,
                            coll__err_world(o->w.err, st->rank), ours);
            return COLL_EMISMATCH;
        }
        st->peer_send[p] = ph->sendbuf;
        st->peer_recv[p] = ph->recvbuf;
        o->all_plain &= (ph->flags & SHM_POST_PLAIN) != 0;
        o->any_nonblocking |= (ph->flags & SHM_POST_NONBLOCKING) != 0;
    }
    /* Rank 0's word, the same for every rank at the same step. */
    if (st->seg.ctrl[0].post[g & 1].flags & SHM_POST_PROBE) st->probe.due = st->probe.on;
    return COLL_OK;
}

int coll__shm_op_sync(shm_op *o, const char *what)
{
    uint64_t g = ++o->st->step;
    coll__shm_publish(&o->st->seg, g);
    return coll__shm_wait_all(&o->w, g, what);
}

static int cma_failed(shm_op *o, int p, int e, const char *dir)
{
    shm_state *st = o->st;
    /* A peer that gave up first may have freed or unmapped its buffers, or
     * exited: blame the rank it named, not the one we were reading. */
    const shm_header *h = st->seg.hdr;
    const coll__err *map = o->w.err;                  /* group rank -> world rank */
    int aborted = atomic_load(&h->abort_status) != 0; /* first: it orders the two below */
    int blamed = atomic_load_explicit(&h->abort_rank, memory_order_relaxed); /* a world rank */
    int by = atomic_load_explicit(&h->abort_by, memory_order_relaxed);
    int g = coll__err_group(map, blamed); /* its rank here */
    if (aborted && g >= 0 && g < st->n && g != st->rank) {
        coll__err_blame(o->w.err, 0, g, "rank %d (pid %d) failed during %s (reported by rank %d)",
                        blamed, (int)st->live.pid[g], coll__kind_name(o->c->kind),
                        coll__err_world(map, by));
        return COLL_EPEER;
    }
    int wp = coll__err_world(map, p);
    if (e == -ESRCH) {
        coll__err_blame(o->w.err, 0, p, "rank %d (pid %d) died during %s", wp, (int)st->live.pid[p],
                        coll__kind_name(o->c->kind));
        return COLL_EPEER;
    }
    coll__err_blame(o->w.err, 0, p, "process_vm_%sv with rank %d (pid %d) failed: %s", dir, wp,
                    (int)st->live.pid[p], strerror(-e));
    return e == -EFAULT ? COLL_EPROTO : COLL_ESYS;
}

int coll__shm_op_read(shm_op *o, int p, void *dst, uint64_t remote, size_t bytes)
{
    if (bytes == 0) return COLL_OK;
    if (p == o->st->rank) {
        memmove(dst, (const void *)(uintptr_t)remote, bytes);
        return COLL_OK;
    }
    int e = coll__shm_cma_read(o->st->live.pid[p], dst, remote, bytes);
    return e ? cma_failed(o, p, e, "read") : COLL_OK;
}

int coll__shm_op_write(shm_op *o, int p, uint64_t remote, const void *src, size_t bytes)
{
    if (bytes == 0) return COLL_OK;
    if (p == o->st->rank) {
        memmove((void *)(uintptr_t)remote, src, bytes);
        return COLL_OK;
    }
    int e = coll__shm_cma_write(o->st->live.pid[p], remote, src, bytes);
    return e ? cma_failed(o, p, e, "write") : COLL_OK;
}
