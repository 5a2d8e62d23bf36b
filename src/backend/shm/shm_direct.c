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
#include "backend/shm/shm_op.h"
#include "backend/shm/shm_fused.h"
#include "core/copy_stream.h"
#include "core/populate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t min_sz(size_t a, size_t b) { return a < b ? a : b; }

/* Every rank's send and receive buffer as mapped here; 0 if one is private. */
int coll__shm_direct_map(shm_op *o)
{
    shm_state *st = o->st;
    char **in = st->direct.in_map, **out = st->direct.out_map;
    size_t bytes = o->c->count * o->es;
    if (!st->direct.ok) return 0;
    for (int p = 0; p < st->n; p++) {
        in[p] = coll__shm_heap_peer(&st->heap, p, st->peer_send[p], bytes);
        out[p] = coll__shm_heap_peer(&st->heap, p, st->peer_recv[p], bytes);
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
    coll__populate(p, bytes, for_write);
    if (touch) coll__touch(p, bytes);
}

/* 1 when rank p's buffer set {send, recv, bytes} is in this process's cache of
 * populated sets; else it goes in, the least recently used way of its hash
 * line out (shm_pages, shm_direct.h). Rank p's heap frees (a free unmaps
 * pages from every process) void p's sets. */
static int pop_hit(shm_state *st, int p, uint64_t send, uint64_t recv, uint64_t bytes)
{
    uint64_t frees = atomic_load_explicit(&st->seg.ctrl[p].heap_frees, memory_order_acquire);
    uint64_t hash = (send * 0x9e3779b97f4a7c15ull) ^ (recv * 0xc2b2ae3d27d4eb4full) ^
                    (bytes * 0x165667b19e3779f9ull);
    size_t line = (size_t)(hash >> 40) % SHM_POP_SETS;
    shm_populated *set = &st->pages.set[((size_t)p * SHM_POP_SETS + line) * SHM_POP_WAYS],
                  *lru = set;
    uint64_t now = ++st->pages.clock;
    for (int i = 0; i < SHM_POP_WAYS; i++) {
        shm_populated *e = &set[i];
        if (e->used && e->frees != frees) e->used = 0; /* stale: that heap changed */
        if (e->used && e->send == send && e->recv == recv && e->bytes == bytes) {
            e->used = now;
            return 1;
        }
        if (e->used < lru->used) lru = e;
    }
    *lru = (shm_populated){send, recv, bytes, frees, now};
    return 0;
}

static void populate_peers(shm_state *st, const uint64_t *send, const uint64_t *recv,
                           char *const *in, char *const *out, size_t bytes)
{
    int touch = bytes * 2 * (size_t)st->n <= st->k.touch_max;
    for (int p = 0; p < st->n; p++) {
        if (pop_hit(st, p, send[p], recv[p], bytes)) continue;
        if (out[p] != in[p]) map_in(in[p], bytes, 0, touch);
        map_in(out[p], bytes, 1, touch);
    }
}

/* Chunk size: several chunks per rank so that ranks that run take over the
 * work of those that do not, but large enough that claiming costs nothing. */
static size_t chunk_elems(const shm_op *o)
{
    size_t bytes = o->c->count * o->es;
    size_t c = bytes / (4 * (size_t)o->st->n);
    c = c < 4096 ? 4096 : c / 4096 * 4096;
    c = min_sz(c, o->st->k.chunk_bytes);
    return c / o->es ? c / o->es : 1;
}

/* Elements [a, b): reduce in rank order (the same bits on every rank), write out. */
static void reduce_chunk(shm_op *o, char *const *in, char *const *out, size_t a, size_t b,
                         int stream)
{
    int n = o->st->n;
    if (o->st->fused.on && o->c->dt == COLL_FLOAT32 && o->c->op == COLL_SUM) {
        for (int p = 0; p < n; p++) {
            o->st->fused.in[p] = (const float *)(in[p] + a * o->es);
            o->st->fused.out[p] = (float *)(out[p] + a * o->es);
        }
        coll__shm_fused_f32_sum(o->st->fused.out, n, o->st->fused.in, n, b - a, stream);
        return;
    }
    size_t sub = SHM_SUB_BYTES / o->es;
    char *t = o->st->direct.sub;
    for (size_t s = a; s < b; s += sub) {
        size_t m = min_sz(sub, b - s), off = s * o->es;
        for (int p = 0; p < n; p++) o->st->red_in[p] = in[p] + off;
        coll__reduce_many(t, o->st->red_in, n, m, o->c->dt, o->c->op, o->fn);
        for (int j = 0; j < n; j++) { /* own output first: it is read soonest */
            int p = (o->st->rank + j) % n;
            coll__copy_stream(out[p] + off, t, m * o->es, stream);
        }
    }
}

/* A call's chunks as the direct and private engines run them (coll__shm_claim_all). */
typedef struct chunk_arg {
    char *const *in;
    char *const *out; /* direct: every rank's output */
    char *res;        /* private: rank 0's result half */
    size_t ce;
    int stream;
} chunk_arg;

static int direct_chunk(shm_op *o, uint64_t k, void *arg)
{
    const chunk_arg *d = arg;
    size_t a = (size_t)k * d->ce, b = min_sz(o->c->count, a + d->ce);
    reduce_chunk(o, d->in, d->out, a, b, d->stream);
    if (d->stream) coll__store_fence();
    coll__shm_op_moved(o, (b - a) * o->es);
    return COLL_OK;
}

int coll__shm_direct_allreduce(shm_op *o)
{
    shm_state *st = o->st;
    char *const *in = st->direct.in_map, *const *out = st->direct.out_map;
    size_t count = o->c->count, ce = chunk_elems(o);
    /* Outputs this large (all ranks together) would evict the inputs from the
     * last-level cache: out of place they are written with streaming stores. */
    int stream = coll__shm_streams(&st->k, count * o->es * (size_t)st->n,
                                   coll__shm_in_place_ranks(st) > 0);
    chunk_arg d = {in, out, NULL, ce, stream};
    coll__shm_op_moved(o, 0); /* the fault point, also on ranks that get no chunk */
    populate_peers(st, st->peer_send, st->peer_recv, in, out, count * o->es);
    return coll__shm_claim_all(o, (count + ce - 1) / ce, direct_chunk, &d);
}

/* All-reduce on private buffers (issue 18): no process can address another's
 * buffers, so each rank copies its input once into the first half of a
 * scratch area in its own shared heap; then the direct engine above runs on
 * those copies (chunks claimed home range first), whoever reduces a chunk
 * writing the result into the second half of rank 0's scratch and into its
 * own output at once; last, each rank copies the chunks others reduced from
 * there into its output. Per rank about 2 S read and 2 S written, with no
 * system call, against the CMA engine's system call and page pinning per
 * chunk.
 * The copy-in runs before the arrival step when the scratch is large enough
 * (the post says so), so the arrival is also the step that says every input
 * is in place: no other step than the arrival. That is safe because nobody
 * reads an input half after the last chunk of a call is finished, and every
 * rank waits for that before it returns; the result half is written only
 * after the next arrival, when every peer has copied the last results out.
 * The scratch grows (freed, allocated again) only after an arrival, then the
 * copy-in is followed by a step. */
static void copy_in(shm_op *o, size_t bytes)
{
    shm_state *st = o->st;
    coll__copy_stream(st->priv.scratch, o->c->sendbuf, bytes,
                      coll__shm_private_streams(&st->k, bytes * (size_t)st->n));
    coll__store_fence();
    coll__shm_op_moved(o, bytes);
    o->staged = bytes;
}

void coll__shm_private_stage(shm_op *o)
{
    shm_state *st = o->st;
    size_t bytes = o->c->count * o->es;
    o->staged = 0;
    if (st->priv.scratch && st->priv.scratch_bytes / 2 >= bytes) copy_in(o, bytes);
}

void coll__shm_private_release(shm_state *st)
{
    shm_rank_ctrl *me = &st->seg.ctrl[st->rank];
    if (st->priv.scratch && coll__shm_heap_free(&st->heap, st->priv.scratch))
        atomic_fetch_add_explicit(&me->heap_frees, 1, memory_order_release);
    st->priv.scratch = NULL;
    st->priv.scratch_bytes = 0;
    me->scratch = 0;
    me->scratch_bytes = 0;
}

/* After the arrival: a scratch of at least 2 x bytes and the input in it, or 0
 * when the heap has no room (the step after tells every rank). */
static int scratch_ready(shm_op *o, size_t bytes)
{
    shm_state *st = o->st;
    shm_rank_ctrl *me = &st->seg.ctrl[st->rank];
    if (st->priv.scratch_bytes / 2 < bytes) {
        /* Every peer returned from the last call that read it (the arrival). */
        coll__shm_private_release(st);
        size_t want = coll__shm_private_scratch(bytes); /* the memory check counts it so */
        st->priv.scratch = coll__shm_heap_alloc(&st->heap, want);
        st->priv.scratch_bytes = st->priv.scratch ? want : 0;
        me->scratch = (uint64_t)(uintptr_t)st->priv.scratch;
        me->scratch_bytes = st->priv.scratch_bytes;
    }
    if (!st->priv.scratch) return 0;
    if (o->staged < bytes) copy_in(o, bytes);
    return 1;
}

/* Chunks this rank did not reduce: from rank 0's results into the output, in
 * runs of consecutive ones. */
static void copy_back(shm_op *o, const char *res, uint64_t nchunks, size_t ce, int stream)
{
    shm_state *st = o->st;
    size_t count = o->c->count;
    char *recv = o->c->recvbuf;
    for (uint64_t k = 0; k < nchunks;) {
        if (st->priv.mine[k]) {
            k++;
            continue;
        }
        uint64_t j = k;
        while (j < nchunks && !st->priv.mine[j]) j++;
        size_t a = (size_t)k * ce, b = min_sz(count, (size_t)j * ce);
        coll__copy_stream(recv + a * o->es, res + a * o->es, (b - a) * o->es, stream);
        coll__shm_op_moved(o, (b - a) * o->es);
        k = j;
    }
    if (stream) coll__store_fence();
}

/* Elements [a, b) of the scratch copies in[]: reduced in rank order (the same
 * bits as the other engines), written to rank 0's results and this output. */
static void reduce_chunk2(shm_op *o, char *const *in, char *res, size_t a, size_t b, int stream)
{
    shm_state *st = o->st;
    int n = st->n;
    char *outs[2] = {res + a * o->es, (char *)o->c->recvbuf + a * o->es};
    if (st->fused.on && o->c->dt == COLL_FLOAT32 && o->c->op == COLL_SUM) {
        for (int p = 0; p < n; p++) st->fused.in[p] = (const float *)(in[p] + a * o->es);
        st->fused.out[0] = (float *)outs[0];
        st->fused.out[1] = (float *)outs[1];
        coll__shm_fused_f32_sum(st->fused.out, 2, st->fused.in, n, b - a, stream);
        return;
    }
    size_t sub = SHM_SUB_BYTES / o->es;
    char *t = st->direct.sub;
    for (size_t s = a; s < b; s += sub) {
        size_t m = min_sz(sub, b - s), off = (s - a) * o->es, at = s * o->es;
        for (int p = 0; p < n; p++) st->red_in[p] = in[p] + at;
        coll__reduce_many(t, st->red_in, n, m, o->c->dt, o->c->op, o->fn);
        coll__copy_stream(outs[1] + off, t, m * o->es, 0); /* own output: read soonest */
        coll__copy_stream(outs[0] + off, t, m * o->es, stream);
    }
}

static int private_chunk(shm_op *o, uint64_t k, void *arg)
{
    const chunk_arg *pa = arg;
    size_t a = (size_t)k * pa->ce, b = min_sz(o->c->count, a + pa->ce);
    reduce_chunk2(o, pa->in, pa->res, a, b, pa->stream);
    o->st->priv.mine[k] = 1;
    coll__store_fence();
    coll__shm_op_moved(o, (b - a) * o->es);
    return COLL_OK;
}

int coll__shm_private_allreduce(shm_op *o)
{
    shm_state *st = o->st;
    size_t count = o->c->count, bytes = count * o->es, ce = chunk_elems(o);
    uint64_t g = st->step; /* the arrival's */
    int all_staged = 1, rc;
    for (int p = 0; p < st->n; p++) all_staged &= st->seg.ctrl[p].post[g & 1].staged >= bytes;
    coll__shm_op_moved(o, 0); /* the fault point, also on ranks that get no chunk */
    if (!all_staged) {
        (void)scratch_ready(o, bytes);
        rc = coll__shm_op_sync(o, "allreduce copy-in");
        if (rc) return rc;
    }
    char **in = st->direct.in_map;
    int ok = 1;
    for (int p = 0; p < st->n; p++) {
        const shm_rank_ctrl *pc = &st->seg.ctrl[p];
        in[p] = pc->scratch_bytes / 2 >= bytes
                    ? coll__shm_heap_peer(&st->heap, p, pc->scratch, pc->scratch_bytes)
                    : NULL;
        ok &= in[p] != NULL;
    }
    /* A heap too full for some rank's scratch: every rank saw it, all fall back. */
    if (!ok) return SHM_NO_ROOM;
    char *res = in[0] + st->seg.ctrl[0].scratch_bytes / 2;
    uint64_t nchunks = (count + ce - 1) / ce;
    if (st->priv.mine_cap < nchunks) {
        unsigned char *m = realloc(st->priv.mine, nchunks);
        if (!m) {
            coll__err_set(o->w.err, 0, "shm: out of memory");
            return COLL_ENOMEM;
        }
        st->priv.mine = m;
        st->priv.mine_cap = nchunks;
    }
    memset(st->priv.mine, 0, nchunks);
    /* the results go to a scratch, then out with a copy: never onto lines just read */
    int stream = coll__shm_private_streams(&st->k, bytes * (size_t)st->n);
    int touch = st->seg.ctrl[0].scratch_bytes * (size_t)st->n <= st->k.touch_max;
    for (int p = 0; p < st->n; p++) { /* every scratch whole, once */
        uint64_t at = st->seg.ctrl[p].scratch, len = st->seg.ctrl[p].scratch_bytes;
        if (!pop_hit(st, p, at, at, len)) map_in(in[p], len, 1, touch);
    }
    chunk_arg pa = {in, NULL, res, ce, stream};
    rc = coll__shm_claim_all(o, nchunks, private_chunk, &pa);
    if (rc) return rc;
    copy_back(o, res, nchunks, ce, stream);
    return COLL_OK;
}
