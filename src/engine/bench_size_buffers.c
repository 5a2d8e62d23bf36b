/* The sizes a run measures and their buffers: the pool shared by every size,
 * and one size's buffers and times. */
#include "engine/bench_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/memory_need.h"

const uint64_t *bench_run_sizes(const bench_options *o, size_t *n)
{
    static const uint64_t no_size = 0; /* barrier: one row, nothing moved */
    *n = o->coll->moves_data ? o->nsizes : 1;
    return o->coll->moves_data ? o->sizes : &no_size;
}

static bench_mem mem_kind(const bench_options *o)
{
    return bench_device_is_cuda(o->device)   ? BENCH_MEM_CUDA
           : strcmp(o->buffers, "coll") == 0 ? BENCH_MEM_COLL
           : strcmp(o->buffers, "thp") == 0  ? BENCH_MEM_THP
                                             : BENCH_MEM_MALLOC;
}

/* Which buffers the placements asked for use: in-place alone uses one. */
/* Host buffers are allocated once, at the largest size, and reused by every
 * size and placement: a fresh GiB costs seconds of first-touch page faults per
 * rank, reused pages none, and a size's inputs are written before it runs.
 * Buffers of at least one byte: coll_alloc(0) need not give a usable pointer. */
int bench_run_alloc_pool(bench_run_state *s, const uint64_t *sizes, size_t nsizes)
{
    const bench_options *o = s->r->opts;
    const bench_runner *r = s->r;
    size_t sbytes, rbytes;
    if (mem_kind(o) == BENCH_MEM_CUDA) return 0; /* per size: a size may not fit the GPU */
    bench_pool_bytes(o, sizes, nsizes, r->nranks, &sbytes, &rbytes);
    if (bench_buffers_alloc(&s->pool, r->comm, mem_kind(o), sbytes, rbytes, s->err, s->errlen)) {
        bench_buffers_free(&s->pool);
        return bench_run_fail(s, COLL_ENOMEM, "rank %d: cannot allocate %zu + %zu bytes of buffers",
                              r->rank, sbytes, rbytes);
    }
    s->pooled = 1;
    return 0;
}

/* Private buffers are anyone's: one pool serves every runner. The backends'
 * own (coll_alloc) memory is per communicator, and a pool at the largest size
 * for each would hold backends x 2 GiB a rank at 1G: those are allocated
 * size by size instead, as without a pool. */
int bench_run_share_pool(bench_run_state *ss, size_t n)
{
    size_t nsizes;
    const uint64_t *sizes = bench_run_sizes(ss[0].r->opts, &nsizes);
    if (n > 1 && mem_kind(ss[0].r->opts) == BENCH_MEM_COLL) return 0;
    int rc = bench_run_alloc_pool(&ss[0], sizes, nsizes);
    for (size_t i = 1; i < n && rc == 0 && ss[0].pooled; i++) {
        ss[i].pool = ss[0].pool;
        ss[i].pooled = ss[i].shares_pool = 1;
    }
    return rc;
}

/* --device cuda: a size some rank has no device memory for is skipped by all
 * (with a note), and the sweep goes on; any other failure stops every rank. */
static int agree_device_memory(bench_run_state *s, bench_size *z, int rc)
{
    const bench_runner *r = s->r;
    int64_t mine = rc == BENCH_DEVICE_OOM ? 1 : rc || !z->times ? 2 : 0, worst = 0;
    char text[480], why[320];
    if (mine == 1)
        fprintf(stderr, "collbench: rank %d: skipping %s: %s\n", r->rank, z->label, s->err);
    int arc = coll_allreduce(r->comm, &mine, &worst, 1, COLL_INT64, COLL_MAX);
    if (arc) return arc;
    snprintf(why, sizeof why, "%s", *s->err ? s->err : "out of memory");
    if (worst == 2 && mine == 2)
        return bench_run_fail(s, COLL_ENOMEM, "rank %d: cannot allocate the buffers of %s: %s",
                              r->rank, z->label, why);
    if (worst == 2)
        return bench_run_fail(s, COLL_ENOMEM,
                              "rank %d: another rank cannot allocate the buffers of %s", r->rank,
                              z->label);
    z->skipped = worst == 1;
    if (z->skipped && r->print) {
        snprintf(text, sizeof text, "%s: skipped (out of device memory%s%s)", z->label,
                 mine == 1 ? ": " : " on another rank", mine == 1 ? why : "");
        bench_run_progress_clear(s);
        bench_table_print_note(&s->table, text);
    }
    if (s->errlen) s->err[0] = '\0'; /* the skip is reported; nothing failed */
    return 0;
}

int bench_run_alloc_size(bench_run_state *s, bench_size *z)
{
    const bench_runner *r = s->r;
    size_t esz = coll_dtype_size(z->pair.dtype);
    size_t sbytes = bench_coll_send_elems(r->opts->coll, z->count, r->nranks) * esz;
    size_t rbytes = bench_coll_recv_elems(r->opts->coll, z->count, r->nranks) * esz;
    bench_mem mem = mem_kind(r->opts);
    int rc = 0;
    if (s->pooled) z->buf = s->pool;
    else rc = bench_buffers_alloc(&z->buf, r->comm, mem, sbytes, rbytes, s->err, s->errlen);
    z->send = z->buf.send;
    z->recv = z->buf.recv;
    z->times = calloc((size_t)r->opts->iters, sizeof *z->times);
    z->spread = calloc((size_t)r->opts->iters, sizeof *z->spread);
    if (!z->spread) { /* as if the times had failed: every path below frees both */
        free(z->times);
        z->times = NULL;
    }
    if (mem == BENCH_MEM_CUDA) return agree_device_memory(s, z, rc);
    if (rc || !z->times)
        return bench_run_fail(s, COLL_ENOMEM, "rank %d: cannot allocate %zu + %zu bytes of buffers",
                              r->rank, sbytes, rbytes);
    return 0;
}

void bench_run_free_size(bench_run_state *s, bench_size *z)
{
    if (!s->pooled) bench_buffers_free(&z->buf);
    free(z->times);
    free(z->spread);
}
