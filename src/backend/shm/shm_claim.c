/* Chunks claimed by whichever rank runs (the direct and private all-reduce
 * engines): each rank has a home range of a call's chunks (its 1/n), which it
 * claims first, then it takes unclaimed chunks from the others' ranges. With
 * more ranks than cores the ranks that have a core do the work; a rank that is
 * not scheduled costs nothing but its arrival. Every rank counts every call's
 * chunks alike (shm_claim_state), so the shared counters need no reset
 * between calls. */
#include "backend/shm/shm_op.h"
#include "core/clock.h"

/* Next unclaimed count below end on ctr, or 0 when there is none. */
static int claim(_Atomic uint64_t *ctr, uint64_t end, uint64_t *k)
{
    uint64_t c = atomic_load(ctr);
    while (c < end)
        if (atomic_compare_exchange_weak(ctr, &c, c + 1)) {
            *k = c;
            return 1;
        }
    return 0;
}

/* Rank q's home range of a call's nchunks chunks starts here. */
static uint64_t home_lo(int q, int n, uint64_t nchunks) { return (uint64_t)q * nchunks / n; }

/* The next unclaimed chunk (0..nchunks) of this call: from this rank's home
 * range first, then from the others' in turn. 0 when every chunk is claimed. */
static int claim_chunk(shm_state *st, uint64_t nchunks, uint64_t *k)
{
    for (int j = 0; j < st->n; j++) {
        int q = (st->rank + j) % st->n;
        uint64_t lo = home_lo(q, st->n, nchunks), hi = home_lo(q + 1, st->n, nchunks), c;
        if (claim(&st->seg.ctrl[q].claimed, st->claim.home_done[q] + (hi - lo), &c)) {
            *k = lo + (c - st->claim.home_done[q]);
            return 1;
        }
    }
    return 0;
}

/* After a call: every home counter is past its range (all chunks claimed). */
static void homes_done(shm_state *st, uint64_t nchunks)
{
    for (int q = 0; q < st->n; q++)
        st->claim.home_done[q] += home_lo(q + 1, st->n, nchunks) - home_lo(q, st->n, nchunks);
}

typedef struct finished_arg {
    const shm_header *h;
    uint64_t end;
} finished_arg;

static int all_finished(const void *arg)
{
    const finished_arg *f = arg;
    return atomic_load(&f->h->finished) >= f->end;
}

/* A rank still working on a chunk (the one to name if it never finishes). */
static int busy_rank(const shm_state *st)
{
    for (int j = 1; j < st->n; j++) {
        int r = (st->rank + j) % st->n;
        if (atomic_load_explicit(&st->seg.ctrl[r].busy, memory_order_relaxed)) return r;
    }
    return (st->rank + 1) % st->n;
}

/* Until every chunk is finished, naming on a timeout whoever still holds one:
 * the wait goes in short slices, each blaming the rank busy when it starts. */
static int wait_finished(shm_op *o, const finished_arg *f)
{
    shm_waiter w = o->w;
    for (;;) {
        double now = coll__now_s();
        w.deadline = o->w.deadline < now + 0.1 ? o->w.deadline : now + 0.1;
        int rc = coll__shm_wait(&w, all_finished, f, busy_rank(o->st), "the last allreduce chunks");
        if (rc != COLL_ETIMEDOUT || w.deadline >= o->w.deadline) return rc;
    }
}

int coll__shm_claim_all(shm_op *o, uint64_t nchunks, shm_chunk_fn fn, void *arg)
{
    shm_state *st = o->st;
    shm_header *h = st->seg.hdr;
    uint64_t begin = st->claim.chunks_done, end = begin + nchunks, k;
    st->claim.chunks_done = end;
    _Atomic uint64_t *busy = &st->seg.ctrl[st->rank].busy;
    while (claim_chunk(st, nchunks, &k)) {
        atomic_store_explicit(busy, begin + k + 1, memory_order_relaxed);
        int rc = fn(o, k, arg);
        if (rc) return rc; /* busy stays set: this rank holds the chunk it failed on */
        atomic_store_explicit(busy, 0, memory_order_relaxed);
        /* Whoever finishes the last chunk wakes the ranks that sleep on it. */
        if (atomic_fetch_add(&h->finished, 1) + 1 == end) coll__shm_ring_all(&st->seg);
    }
    homes_done(st, nchunks);
    finished_arg f = {h, end};
    return all_finished(&f) ? COLL_OK : wait_finished(o, &f);
}
