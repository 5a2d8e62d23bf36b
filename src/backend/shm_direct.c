/* All-reduce on buffers every rank can address (coll_alloc'd in the shared
 * heaps, shm_heap.h). The message is cut into chunks; whoever claims a chunk
 * reduces it from all n inputs into an L1-sized block and writes that block
 * into all n outputs. So every input byte is read once and every output byte
 * written once (the least memory traffic an all-reduce can have), with no
 * system call and no staging copy. Each rank has a home range of chunks (its
 * 1/n), which it claims first; then it takes unclaimed chunks from the others'
 * ranges. So the ranks that have a core do the work (with more ranks than
 * cores, a rank that is not scheduled costs nothing but its arrival), while
 * each page is mostly touched by the same process call after call: a process's
 * first touch of a page it maps is a page fault, microseconds each on a VM,
 * and with one shared counter every process faulted in every page of all 2n
 * buffers over the first calls. Chunks are finished in any order; a rank
 * returns once every chunk is finished, so no closing step is needed. */
#include "backend/shm_op.h"
#include "backend/shm_fused.h"
#include "core/clock.h"
#include "core/populate.h"

#include <string.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

static size_t min_sz(size_t a, size_t b) { return a < b ? a : b; }

/* memcpy, with non-temporal stores when stream (no read-for-ownership of the
 * destination, no eviction of the inputs). The caller fences before publishing. */
static void copy_out(char *dst, const char *src, size_t bytes, int stream)
{
#if defined(__x86_64__)
    if (stream) {
        size_t head = (16 - ((uintptr_t)dst & 15)) & 15;
        if (head > bytes) head = bytes;
        memcpy(dst, src, head);
        size_t i = head;
        for (; i + 64 <= bytes; i += 64) {
            __m128i a = _mm_loadu_si128((const __m128i *)(src + i));
            __m128i b = _mm_loadu_si128((const __m128i *)(src + i + 16));
            __m128i c = _mm_loadu_si128((const __m128i *)(src + i + 32));
            __m128i d = _mm_loadu_si128((const __m128i *)(src + i + 48));
            _mm_stream_si128((__m128i *)(dst + i), a);
            _mm_stream_si128((__m128i *)(dst + i + 16), b);
            _mm_stream_si128((__m128i *)(dst + i + 32), c);
            _mm_stream_si128((__m128i *)(dst + i + 48), d);
        }
        memcpy(dst + i, src + i, bytes - i);
        return;
    }
#else
    (void)stream;
#endif
    memcpy(dst, src, bytes);
}

static void store_fence(void)
{
#if defined(__x86_64__)
    _mm_sfence(); /* streaming stores are weakly ordered */
#endif
}

/* Every rank's send and receive buffer as mapped here; 0 if one is private. */
static int map_buffers(shm_op *o, char **in, char **out)
{
    shm_state *st = o->st;
    size_t bytes = o->c->count * o->es;
    for (int p = 0; p < st->n; p++) {
        in[p] = shm_heap_peer(&st->heap, p, st->peer_send[p], bytes);
        out[p] = shm_heap_peer(&st->heap, p, st->peer_recv[p], bytes);
        if (!in[p] || !out[p]) return 0;
    }
    return 1;
}

/* Before the first call on a set of buffers: map every rank's buffers into this
 * process's page tables at once, not a fault at each first touch of a chunk
 * this process takes over (populate.h). Kept while a rank's buffers and its
 * count of heap frees stay the same. Up to touch_max bytes in all, every page
 * is also touched now: which chunks a process takes over changes from call to
 * call, so otherwise the first accesses (4 us a page on a VM) fall into many
 * calls (6 ranks, 10 MiB: 20 to 60 calls before the times settle). Above it,
 * touching all 2n buffers would cost more than a process ever touches of them
 * (mostly its home range), so they fault in as met. */
static void map_in(char *p, size_t bytes, int for_write, int touch)
{
    coll_populate(p, bytes, for_write);
    if (touch) coll_touch(p, bytes);
}

static void populate_peers(shm_state *st, char *const *in, char *const *out, size_t bytes)
{
    int touch = bytes * 2 * (size_t)st->n <= st->touch_max;
    for (int p = 0; p < st->n; p++) {
        shm_populated now = {st->peer_send[p], st->peer_recv[p], bytes,
                             atomic_load_explicit(&st->seg.ctrl[p].heap_frees,
                                                  memory_order_acquire)};
        if (!memcmp(&now, &st->pop[p], sizeof now)) continue;
        if (out[p] != in[p]) map_in(in[p], bytes, 0, touch);
        map_in(out[p], bytes, 1, touch);
        st->pop[p] = now;
    }
}

/* Chunk size: several chunks per rank so that ranks that run take over the
 * work of those that do not, but large enough that claiming costs nothing. */
static size_t chunk_elems(const shm_op *o)
{
    size_t bytes = o->c->count * o->es;
    size_t c = bytes / (4 * (size_t)o->st->n);
    c = c < 4096 ? 4096 : c / 4096 * 4096;
    c = min_sz(c, o->st->chunk_bytes);
    return c / o->es ? c / o->es : 1;
}

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
        if (claim(&st->seg.ctrl[q].claimed, st->home_done[q] + (hi - lo), &c)) {
            *k = lo + (c - st->home_done[q]);
            return 1;
        }
    }
    return 0;
}

/* After a call: every home counter is past its range (all chunks claimed). */
static void homes_done(shm_state *st, uint64_t nchunks)
{
    for (int q = 0; q < st->n; q++)
        st->home_done[q] += home_lo(q + 1, st->n, nchunks) - home_lo(q, st->n, nchunks);
}

/* Elements [a, b): reduce in rank order (the same bits on every rank), write out. */
static void reduce_chunk(shm_op *o, char *const *in, char *const *out, size_t a, size_t b,
                         int stream)
{
    int n = o->st->n;
    if (o->st->fused && o->c->dt == COLL_FLOAT32 && o->c->op == COLL_SUM) {
        for (int p = 0; p < n; p++) {
            o->st->at_in[p] = (const float *)(in[p] + a * o->es);
            o->st->at_out[p] = (float *)(out[p] + a * o->es);
        }
        shm_fused_f32_sum(o->st->at_out, o->st->at_in, n, b - a, stream);
        return;
    }
    size_t sub = SHM_SUB_BYTES / o->es;
    char *t = o->st->sub;
    for (size_t s = a; s < b; s += sub) {
        size_t m = min_sz(sub, b - s), off = s * o->es;
        o->fn(t, in[0] + off, in[1] + off, m);
        for (int p = 2; p < n; p++) o->fn(t, t, in[p] + off, m);
        if (o->c->op == COLL_AVG) coll_scale_div(t, m, o->c->dt, n);
        for (int j = 0; j < n; j++) { /* own output first: it is read soonest */
            int p = (o->st->rank + j) % n;
            copy_out(out[p] + off, t, m * o->es, stream);
        }
    }
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
        double now = coll_now_s();
        w.deadline = o->w.deadline < now + 0.1 ? o->w.deadline : now + 0.1;
        int rc = shm_wait(&w, all_finished, f, busy_rank(o->st), "the last allreduce chunks");
        if (rc != COLL_ETIMEDOUT || w.deadline >= o->w.deadline) return rc;
    }
}

static int direct_allreduce(shm_op *o, char *const *in, char *const *out)
{
    shm_state *st = o->st;
    shm_header *h = st->seg.hdr;
    size_t count = o->c->count, ce = chunk_elems(o);
    uint64_t nchunks = (count + ce - 1) / ce, begin = st->chunks_done, end = begin + nchunks, k;
    st->chunks_done = end;
    /* Outputs this large (all ranks together) would evict the inputs from the
     * last-level cache: they are written with streaming stores instead. */
    int stream = count * o->es * (size_t)st->n >= st->stream_min;
    _Atomic uint64_t *busy = &st->seg.ctrl[st->rank].busy;
    shm_op_moved(o, 0); /* the fault point, also on ranks that get no chunk */
    populate_peers(st, in, out, count * o->es);
    while (claim_chunk(st, nchunks, &k)) {
        size_t a = (size_t)k * ce;
        atomic_store_explicit(busy, begin + k + 1, memory_order_relaxed);
        reduce_chunk(o, in, out, a, min_sz(count, a + ce), stream);
        if (stream) store_fence();
        shm_op_moved(o, (min_sz(count, a + ce) - a) * o->es);
        atomic_store_explicit(busy, 0, memory_order_relaxed);
        /* Whoever finishes the last chunk wakes the ranks that sleep on it. */
        if (atomic_fetch_add(&h->finished, 1) + 1 == end) shm_ring_all(&st->seg);
    }
    homes_done(st, nchunks);
    finished_arg f = {h, end};
    return all_finished(&f) ? COLL_OK : wait_finished(o, &f);
}

int shm_direct_run(shm_op *o)
{
    shm_state *st = o->st;
    char **in = st->in_map, **out = st->out_map;
    int rc = shm_op_arrive(o, o->c->sendbuf, o->c->recvbuf);
    if (rc) return rc;
    o->arrived = 1;
    /* Every rank sees the same addresses and heaps: all decide alike. */
    if (map_buffers(o, in, out)) return direct_allreduce(o, in, out);
    if (st->cma && o->c->count * o->es >= st->cma_min) return shm_cma_allreduce(o);
    return shm_stage_run(o);
}
