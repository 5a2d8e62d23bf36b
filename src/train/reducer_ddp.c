/* DDP: gradient buckets all-reduced while backward still computes.
 *
 * Buckets are ranges of the flat gradient taken from the top down (backward
 * produces the last layers' gradients first): the first holds
 * first_bucket_bytes, the others bucket_bytes each, as torch DDP's
 * bucket_cap_mb with its smaller first bucket. Unlike torch a bucket may cut a
 * weight matrix in two; backward then cuts that matrix's gradient product at
 * the same row (grad_hook.boundary_below), so every bucket starts as soon as
 * its own rows are done. Each start is one coll_iallreduce (or iallgather for
 * top-k), run by the communicator's progress thread in call order while this
 * thread computes the next gradients. */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/errbuf.h"
#include "train/reducer.h"

static size_t boundary_below(void *arg, size_t hi)
{
    reducer *r = arg;
    for (size_t i = 0; i < r->nbuckets; i++)
        if (r->buckets[i].lo < hi) return r->buckets[i].lo;
    return 0;
}

static int start_bucket(reducer *r, ddp_bucket *b)
{
    float *g = r->m->grads;
    size_t n = b->hi - b->lo;
    switch (r->o.compress.kind) {
    case COMPRESS_NONE:
        return coll_iallreduce(r->comm, g + b->lo, g + b->lo, n, COLL_FLOAT32, COLL_AVG, &b->req);
    case COMPRESS_FP16:
    case COMPRESS_BF16: {
        uint16_t *h = r->half + b->lo;
        train_compress_to_half(r->o.compress.kind, g + b->lo, h, n);
        return coll_iallreduce(r->comm, h, h, n,
                               r->o.compress.kind == COMPRESS_FP16 ? COLL_FLOAT16 : COLL_BFLOAT16,
                               COLL_SUM, &b->req);
    }
    case COMPRESS_TOPK: {
        /* error feedback: what was not sent last time rides along */
        float *acc = r->residual + b->lo;
        for (size_t i = 0; i < n; i++) acc[i] += g[b->lo + i];
        topk_pair *send = r->pairs_send + b->pair_off;
        train_topk_select(acc, n, b->k, r->scratch, send);
        return coll_iallgather(r->comm, send, r->pairs_recv + b->pair_off * (size_t)r->world, b->k,
                               COLL_INT64, &b->req);
    }
    }
    return COLL_EINVAL;
}

static void ready(void *arg, size_t lo)
{
    reducer *r = arg;
    while (r->status == 0 && r->next < r->nbuckets && r->buckets[r->next].lo >= lo) {
        int rc = start_bucket(r, &r->buckets[r->next]);
        if (rc) {
            r->status = rc;
            coll__set_err(r->err, sizeof r->err, "ddp: starting bucket %zu: %s", r->next,
                          *coll_comm_errmsg(r->comm) ? coll_comm_errmsg(r->comm)
                                                     : coll_strerror(rc));
        }
        r->next++;
    }
}

/* The bucket's reduced values back into the gradient, averaged. */
static void finish_bucket(reducer *r, const ddp_bucket *b)
{
    float *g = r->m->grads + b->lo;
    size_t n = b->hi - b->lo;
    float inv = 1.0f / (float)r->world;
    if (r->o.compress.kind == COMPRESS_FP16 || r->o.compress.kind == COMPRESS_BF16) {
        train_compress_from_half(r->o.compress.kind, r->half + b->lo, g, n, inv);
    } else if (r->o.compress.kind == COMPRESS_TOPK) {
        /* every rank adds the same pairs in the same order: identical results */
        memset(g, 0, n * sizeof(float));
        const topk_pair *p = r->pairs_recv + b->pair_off * (size_t)r->world;
        for (size_t i = 0; i < b->k * (size_t)r->world; i++)
            if (p[i].index < n) g[p[i].index] += p[i].value;
        for (size_t i = 0; i < n; i++) g[i] *= inv;
    }
}

int train_ddp_setup(reducer *r)
{
    size_t f = sizeof(float), n = r->m->nparams;
    size_t cap = r->o.bucket_bytes / f, first = r->o.first_bucket_bytes / f;
    cap = cap ? cap : 1;
    first = first ? (first < cap ? first : cap) : cap;
    r->nbuckets = 1 + (n > first ? (n - first + cap - 1) / cap : 0);
    if (!(r->buckets = calloc(r->nbuckets, sizeof *r->buckets))) goto oom;
    size_t hi = n, pairs = 0, biggest = 0;
    for (size_t i = 0; i < r->nbuckets; i++) {
        size_t len = i == 0 ? first : cap;
        ddp_bucket *b = &r->buckets[i];
        b->hi = hi;
        b->lo = hi > len ? hi - len : 0;
        hi = b->lo;
        if (b->hi - b->lo > biggest) biggest = b->hi - b->lo;
        if (r->o.compress.kind == COMPRESS_TOPK) {
            b->k = train_topk_count(b->hi - b->lo, r->o.compress.ratio);
            b->pair_off = pairs;
            pairs += b->k;
        }
    }
    r->hook = (grad_hook){.ready = ready, .boundary_below = boundary_below, .arg = r};
    switch (r->o.compress.kind) {
    case COMPRESS_FP16:
    case COMPRESS_BF16:
        r->comm_bytes = n * sizeof(uint16_t);
        if (!(r->half = coll__alloc_aligned_to(64, r->comm_bytes))) goto oom; /* as grads */
        break;
    case COMPRESS_TOPK:
        r->comm_bytes = (n + biggest) * f + pairs * sizeof(topk_pair) * (1 + (size_t)r->world);
        r->residual = calloc(n, f);
        r->scratch = malloc(biggest * f);
        r->pairs_send = malloc(pairs * sizeof(topk_pair));
        r->pairs_recv = malloc(pairs * (size_t)r->world * sizeof(topk_pair));
        if (!r->residual || !r->scratch || !r->pairs_send || !r->pairs_recv) goto oom;
        break;
    default: break;
    }
    return 0;
oom:
    coll__set_err(r->err, sizeof r->err, "ddp: out of memory for %zu buckets' buffers",
                  r->nbuckets);
    return COLL_ENOMEM;
}

void train_ddp_begin(reducer *r)
{
    r->next = 0;
    r->status = 0;
}

int train_ddp_finish(reducer *r)
{
    ready(r, 0); /* backward without a hook call at 0 still leaves nothing behind */
    int first = r->status;
    for (size_t i = 0; i < r->nbuckets; i++) {
        ddp_bucket *b = &r->buckets[i];
        if (!b->req) continue;
        int rc = coll_wait(b->req);
        b->req = NULL;
        if (rc && !first) {
            first = rc;
            coll__set_err(r->err, sizeof r->err, "ddp: all-reduce of bucket %zu: %s", i,
                          *coll_comm_errmsg(r->comm) ? coll_comm_errmsg(r->comm)
                                                     : coll_strerror(rc));
        }
        if (!first) finish_bucket(r, b);
    }
    return first;
}
