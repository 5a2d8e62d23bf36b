/* Collectives through staging rounds: each round every rank copies its part of
 * a window of elements into its slot of the segment (double-buffered by step
 * parity), takes one step, and reads what it needs from every rank's slot.
 * A rank starts round k+1 only after every peer finished round k-1's reads
 * (it waited for all of them in round k), so one step per round suffices.
 * Small messages: one round, every rank reduces all inputs itself; up to
 * SHM_INLINE bytes travel inside the arrival post, on the lines peers read anyway. */
#include "backend/shm/shm_op.h"

#include <string.h>

typedef struct stage_kind {
    size_t mult; /* slot elements per window element: n for per-destination blocks */
    void (*pack)(shm_op *o, char *slot, size_t off, size_t m);
    void (*consume)(shm_op *o, int parity, size_t off, size_t m);
} stage_kind;

#define SEND(o, off) ((const char *)(o)->c->sendbuf + (off) * (o)->es)
#define RECV(o, off) ((char *)(o)->c->recvbuf + (off) * (o)->es)

static char *stage_buf(shm_op *o, int p, int parity)
{
    if (o->inline_data) return (char *)o->st->seg.ctrl[p].post[parity].data;
    return shm_slot(&o->st->seg, p, parity);
}

/* out = in_0 op in_1 op ... in rank order, where in_p = slot_p + skip. */
static void reduce_slots(shm_op *o, char *out, int parity, size_t skip, size_t m)
{
    int n = o->st->n;
    for (int p = 0; p < n; p++) o->st->red_in[p] = stage_buf(o, p, parity) + skip;
    coll__reduce_many(out, o->st->red_in, n, m, o->c->dt, o->c->op, o->fn);
}

static void pack_own(shm_op *o, char *slot, size_t off, size_t m)
{
    memcpy(slot, SEND(o, off), m * o->es);
}

/* Block b of the send buffer (count elements each), window [off, off+m). */
static void pack_blocks(shm_op *o, char *slot, size_t off, size_t m)
{
    for (int b = 0; b < o->st->n; b++)
        memcpy(slot + (size_t)b * m * o->es, SEND(o, (size_t)b * o->c->count + off), m * o->es);
}

static void pack_root(shm_op *o, char *slot, size_t off, size_t m)
{
    if (o->st->rank == o->c->root) pack_own(o, slot, off, m);
}

static void consume_allreduce(shm_op *o, int parity, size_t off, size_t m)
{
    reduce_slots(o, RECV(o, off), parity, 0, m);
}

static void consume_reduce(shm_op *o, int parity, size_t off, size_t m)
{
    if (o->st->rank == o->c->root) reduce_slots(o, RECV(o, off), parity, 0, m);
}

static void consume_reducescatter(shm_op *o, int parity, size_t off, size_t m)
{
    reduce_slots(o, RECV(o, off), parity, (size_t)o->st->rank * m * o->es, m);
}

static void consume_allgather(shm_op *o, int parity, size_t off, size_t m)
{
    for (int p = 0; p < o->st->n; p++) {
        char *dst = RECV(o, (size_t)p * o->c->count + off);
        const char *src = p == o->st->rank ? SEND(o, off) : stage_buf(o, p, parity);
        if (dst != src) memcpy(dst, src, m * o->es);
    }
}

static void consume_broadcast(shm_op *o, int parity, size_t off, size_t m)
{
    int root = o->c->root;
    const char *src = o->st->rank == root ? SEND(o, off) : stage_buf(o, root, parity);
    if (RECV(o, off) != src) memcpy(RECV(o, off), src, m * o->es);
}

static void consume_alltoall(shm_op *o, int parity, size_t off, size_t m)
{
    size_t mine = (size_t)o->st->rank * m * o->es;
    for (int p = 0; p < o->st->n; p++)
        memcpy(RECV(o, (size_t)p * o->c->count + off), stage_buf(o, p, parity) + mine, m * o->es);
}

static int kind_of(coll__kind k, int n, stage_kind *out)
{
    switch (k) {
    case COLL_KIND_ALLREDUCE: *out = (stage_kind){1, pack_own, consume_allreduce}; return 1;
    case COLL_KIND_REDUCE: *out = (stage_kind){1, pack_own, consume_reduce}; return 1;
    case COLL_KIND_REDUCESCATTER:
        *out = (stage_kind){(size_t)n, pack_blocks, consume_reducescatter};
        return 1;
    case COLL_KIND_ALLGATHER: *out = (stage_kind){1, pack_own, consume_allgather}; return 1;
    case COLL_KIND_BROADCAST: *out = (stage_kind){1, pack_root, consume_broadcast}; return 1;
    case COLL_KIND_ALLTOALL:
        *out = (stage_kind){(size_t)n, pack_blocks, consume_alltoall};
        return 1;
    case COLL_KIND_BARRIER: *out = (stage_kind){1, NULL, NULL}; return 1;
    default: return 0;
    }
}

int coll__shm_stage_run(shm_op *o)
{
    shm_state *st = o->st;
    const coll__call *c = o->c;
    stage_kind kind_copy;
    if (!kind_of(c->kind, st->n, &kind_copy)) return COLL_ENOTSUP;
    size_t total = c->kind == COLL_KIND_BARRIER ? 0 : c->count;
    size_t window = st->seg.slot_bytes / (o->es * kind_copy.mult);
    if (window == 0) return COLL_ENOTSUP;
    size_t rounds = total ? (total + window - 1) / window : 1;
    o->inline_data = !o->arrived && total * o->es * kind_copy.mult <= SHM_INLINE;
    for (size_t k = 0; k < rounds; k++) {
        size_t off = k * window, m = total - off < window ? total - off : window;
        if (!total) m = 0;
        int parity = (int)((st->step + 1) & 1);
        if (m && kind_copy.pack) kind_copy.pack(o, stage_buf(o, st->rank, parity), off, m);
        int rc = k == 0 && !o->arrived ? coll__shm_op_arrive(o, c->sendbuf, c->recvbuf)
                                       : coll__shm_op_sync(o, coll__kind_name(c->kind));
        if (rc) return rc;
        if (m && kind_copy.consume) kind_copy.consume(o, parity, off, m);
        coll__shm_op_moved(o, m * o->es * kind_copy.mult);
    }
    return COLL_OK;
}
