/* Collectives on large messages with cross-memory attach: ranks read each
 * other's buffers directly (one copy). All-reduce: each rank reduces its slice
 * from the peers' send buffers, chunk by chunk so that the partial sum and the
 * peer's chunk stay in L2, and writes each finished chunk into every rank's
 * receive buffer while it is still in the cache.
 * Each call ends with a step every rank waits for: nobody returns (and lets the
 * caller reuse a buffer) while a peer may still read it. */
#include "backend/shm/shm_op.h"

#include <stdlib.h>

#include <string.h>

#define SPAN_BYTES (1u << 20) /* plain copies: one fault point per MiB */
#define SEND(o, off) ((const char *)(o)->c->sendbuf + (off) * (o)->es)
#define RECV(o, off) ((char *)(o)->c->recvbuf + (off) * (o)->es)

static size_t min_sz(size_t a, size_t b) { return a < b ? a : b; }

/* Copy bytes from rank p's address remote into dst, a fault point per span. */
static int read_span(shm_op *o, int p, char *dst, uint64_t remote, size_t bytes)
{
    for (size_t done = 0; done < bytes;) {
        size_t len = min_sz(SPAN_BYTES, bytes - done);
        int rc = coll__shm_op_read(o, p, dst + done, remote + done, len);
        if (rc) return rc;
        coll__shm_op_moved(o, len);
        done += len;
    }
    return COLL_OK;
}

static size_t chunk_elems(shm_op *o)
{
    size_t ce = o->st->k.chunk_bytes / o->es;
    return ce ? ce : 1;
}

/* out[0..m) = mine op every peer's elements at peer_base[p] + skip (elements),
 * peers in the order me+1, me+2, ... so that ranks do not all start on one. */
static int reduce_from_peers(shm_op *o, char *out, const char *mine, const uint64_t *peer_base,
                             size_t skip, size_t m)
{
    shm_state *st = o->st;
    coll_dtype dt = o->c->dt;
    /* float16/bfloat16 sums: in float32, rounded once (coll__reduce_many's rule) */
    int once = coll__reduce_rounds_once(dt, o->c->op);
    if (once && !st->cma.wide && !(st->cma.wide = malloc(chunk_elems(o) * sizeof(float))))
        return COLL_ENOMEM;
    if (once) coll__widen(st->cma.wide, mine, m, dt, 0);
    const char *a = mine;
    for (int j = 1; j < st->n; j++) {
        int p = (st->rank + j) % st->n;
        int rc = coll__shm_op_read(o, p, st->cma.tmp, peer_base[p] + skip * o->es, m * o->es);
        if (rc) return rc;
        if (once) {
            coll__widen(st->cma.wide, st->cma.tmp, m, dt, 1);
            continue;
        }
        o->fn(out, a, st->cma.tmp, m);
        a = out;
    }
    if (once) coll__narrow(out, st->cma.wide, m, dt, o->c->op == COLL_AVG ? st->n : 1);
    else if (o->c->op == COLL_AVG) coll__scale_div(out, m, dt, st->n);
    coll__shm_op_moved(o, m * o->es * (size_t)(st->n - 1));
    return COLL_OK;
}

/* Where coll__shm_cma_whole holds rank p's input: this rank's in its send buffer,
 * peer q's in the output itself (reduced over in place), others' in tmp. */
static const char *whole_input(shm_op *o, int p, int q, size_t bytes)
{
    if (p == o->st->rank) return SEND(o, 0);
    return p == q ? RECV(o, 0) : o->st->cma.tmp + (size_t)p * bytes;
}

/* Small all-reduce out of place: every rank reads the peers' whole inputs (a
 * system call each, the first peer's straight into the output) and reduces
 * the whole vector itself, adding the inputs in rank order so that all get
 * the same bits. With 2 ranks that moves as many bytes through the kernel as
 * the slice version below (S/2 in, S/2 out) with one call fewer and nothing
 * written into a peer; the reduction, done twice, is cheap while the vector
 * is in L2. Not in place: a rank's writes would have to wait for its peers'
 * reads (a step between them), and those reads would then cross cores from
 * dirty lines (3-4.5x slower than the slice, measured). */
int coll__shm_cma_whole(shm_op *o)
{
    shm_state *st = o->st;
    size_t count = o->c->count, bytes = count * o->es;
    int q = st->rank == 0 ? 1 : 0, rc = COLL_OK;
    for (int j = 1; rc == COLL_OK && j < st->n; j++) {
        int p = (st->rank + j) % st->n;
        rc = coll__shm_op_read(o, p, (char *)whole_input(o, p, q, bytes), st->peer_send[p], bytes);
    }
    if (rc) return rc;
    /* q < 2: only in[0] or in[1] can be the output (coll__reduce_many allows that). */
    for (int p = 0; p < st->n; p++) st->red_in[p] = whole_input(o, p, q, bytes);
    coll__reduce_many(RECV(o, 0), st->red_in, st->n, count, o->c->dt, o->c->op, o->fn);
    coll__shm_op_moved(o, bytes * (size_t)(st->n - 1));
    return coll__shm_op_sync(o, "the end of allreduce");
}

int coll__shm_cma_allreduce(shm_op *o)
{
    shm_state *st = o->st;
    size_t ce = chunk_elems(o), lo, hi;
    int rc = COLL_OK;
    /* My slice, chunk by chunk: reduced into my output, then written from the
     * cache into every peer's output. No rank waits for another's progress
     * (only the closing step), and each rank reads S and writes S: an
     * all-gather that read the peers' results back would read (n-1)/n S more.
     * In place this is safe: only this rank reads any rank's copy of this
     * slice, and it writes a chunk there only after reading it. */
    coll__shm_split(o->c->count, st->n, st->rank, &lo, &hi);
    for (size_t a = lo; a < hi; a += ce) {
        size_t m = min_sz(ce, hi - a);
        rc = reduce_from_peers(o, RECV(o, a), SEND(o, a), st->peer_send, a, m);
        for (int j = 1; rc == COLL_OK && j < st->n; j++) {
            int p = (st->rank + j) % st->n;
            rc = coll__shm_op_write(o, p, st->peer_recv[p] + a * o->es, RECV(o, a), m * o->es);
        }
        if (rc) return rc;
        coll__shm_op_moved(o, m * o->es * (size_t)(st->n - 1));
    }
    return coll__shm_op_sync(o, "the end of allreduce");
}

/* Each rank reduces its slice and writes it into the root's receive buffer. */
static int reduce(shm_op *o)
{
    shm_state *st = o->st;
    size_t ce = chunk_elems(o), lo, hi;
    int root = o->c->root;
    int rc = coll__shm_op_arrive(o, o->c->sendbuf, o->c->recvbuf);
    if (rc) return rc;
    coll__shm_split(o->c->count, st->n, st->rank, &lo, &hi);
    for (size_t a = lo; a < hi; a += ce) {
        size_t m = min_sz(ce, hi - a);
        rc = reduce_from_peers(o, st->cma.acc, SEND(o, a), st->peer_send, a, m);
        if (!rc)
            rc = coll__shm_op_write(o, root, st->peer_recv[root] + a * o->es, st->cma.acc,
                                    m * o->es);
        if (rc) return rc;
    }
    return coll__shm_op_sync(o, "the end of reduce");
}

static int reducescatter(shm_op *o)
{
    shm_state *st = o->st;
    size_t count = o->c->count, ce = chunk_elems(o), mine = (size_t)st->rank * count;
    int rc = coll__shm_op_arrive(o, o->c->sendbuf, o->c->recvbuf);
    if (rc) return rc;
    for (size_t a = 0; a < count; a += ce) {
        rc = reduce_from_peers(o, RECV(o, a), SEND(o, mine + a), st->peer_send, mine + a,
                               min_sz(ce, count - a));
        if (rc) return rc;
    }
    return coll__shm_op_sync(o, "the end of reducescatter");
}

static int allgather(shm_op *o)
{
    shm_state *st = o->st;
    size_t bytes = o->c->count * o->es;
    int rc = coll__shm_op_arrive(o, o->c->sendbuf, o->c->recvbuf);
    for (int j = 0; rc == COLL_OK && j < st->n; j++) {
        int p = (st->rank + j) % st->n;
        char *dst = RECV(o, (size_t)p * o->c->count);
        if (p != st->rank) rc = read_span(o, p, dst, st->peer_send[p], bytes);
        else if (dst != SEND(o, 0)) memcpy(dst, SEND(o, 0), bytes);
    }
    return rc ? rc : coll__shm_op_sync(o, "the end of allgather");
}

static int broadcast(shm_op *o)
{
    shm_state *st = o->st;
    int root = o->c->root;
    size_t bytes = o->c->count * o->es;
    int rc = coll__shm_op_arrive(o, o->c->sendbuf, o->c->recvbuf);
    if (rc == COLL_OK && st->rank != root)
        rc = read_span(o, root, RECV(o, 0), st->peer_send[root], bytes);
    else if (rc == COLL_OK && RECV(o, 0) != SEND(o, 0)) memcpy(RECV(o, 0), SEND(o, 0), bytes);
    return rc ? rc : coll__shm_op_sync(o, "the end of broadcast");
}

static int alltoall(shm_op *o)
{
    shm_state *st = o->st;
    size_t count = o->c->count, bytes = count * o->es;
    int rc = coll__shm_op_arrive(o, o->c->sendbuf, o->c->recvbuf);
    for (int j = 0; rc == COLL_OK && j < st->n; j++) {
        int p = (st->rank + j) % st->n;
        rc = read_span(o, p, RECV(o, (size_t)p * count),
                       st->peer_send[p] + (size_t)st->rank * bytes, bytes);
    }
    return rc ? rc : coll__shm_op_sync(o, "the end of alltoall");
}

int coll__shm_cma_run(shm_op *o)
{
    switch (o->c->kind) {
    case COLL_KIND_ALLREDUCE: { /* the plan arrives first for it: shm.c */
        int rc = o->arrived ? COLL_OK : coll__shm_op_arrive(o, o->c->sendbuf, o->c->recvbuf);
        o->arrived = 1;
        return rc ? rc : coll__shm_cma_allreduce(o);
    }
    case COLL_KIND_REDUCE: return reduce(o);
    case COLL_KIND_REDUCESCATTER: return reducescatter(o);
    case COLL_KIND_ALLGATHER: return allgather(o);
    case COLL_KIND_BROADCAST: return broadcast(o);
    case COLL_KIND_ALLTOALL: return alltoall(o);
    default: return coll__shm_stage_run(o);
    }
}
