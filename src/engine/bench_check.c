/* Checking: seeded inputs and the -c checked iterations, wrong elements summed. */
#include "engine/bench_run.h"

#include <stdlib.h>
#include <string.h>

#include "engine/bench_data.h"

static bench_data_key data_key(const bench_runner *r, const bench_pair *p, uint64_t iter)
{
    bench_data_key k = {
        .seed = r->opts->seed, .iter = iter, .nranks = r->nranks, .dtype = p->dtype, .op = p->op};
    return k;
}

/* Inputs are made in host memory (the mirrors for --device cuda), then uploaded. */
int bench_run_fill_inputs(bench_run_state *s, const bench_size *z, const bench_call *c,
                          uint64_t iter)
{
    const bench_runner *r = s->r;
    bench_data_key k = data_key(r, &z->pair, iter);
    bench_data_fill(&k, r->rank, 0, bench_buffers_host(&z->buf, c->send),
                    bench_coll_send_elems(r->opts->coll, c->count, r->nranks));
    return bench_buffers_upload(&z->buf, s->err, s->errlen);
}

/* c as seen in host memory, with the results downloaded (--device cuda). */
static int host_view(bench_run_state *s, const bench_size *z, const bench_call *c, bench_call *h)
{
    *h = *c;
    h->send = bench_buffers_host(&z->buf, c->send);
    h->recv = bench_buffers_host(&z->buf, c->recv);
    return bench_buffers_download(&z->buf, s->err, s->errlen);
}

/* Test hook: COLLBENCH_TEST_CORRUPT=1 makes rank 0 spoil one element of each
 * checked result, so tests can see a wrong result fail the run (exit 1). */
static void maybe_corrupt(const bench_runner *r, const bench_call *c)
{
    const char *v = getenv("COLLBENCH_TEST_CORRUPT");
    if (!v || strcmp(v, "1") != 0 || r->rank != 0 || !r->opts->coll->moves_data) return;
    if (bench_coll_recv_elems(r->opts->coll, c->count, r->nranks) == 0) return;
    unsigned char *last = (unsigned char *)c->recv + coll_dtype_size(c->dtype) - 1;
    *last ^= 0x40; /* the second-highest bit of element 0 (little-endian) */
}

/* The first checked iteration rides on the first warm-up one (bench_run_warm_up). */
int bench_run_checks_in_warm_up(const bench_runner *r)
{
    return r->opts->warmup > 0 && r->opts->check > 0 && r->opts->coll->check;
}

/* The result of the call just made on inputs of key `iter`: wrong elements
 * added to *local. */
int bench_run_check_one(bench_run_state *s, const bench_size *z, const bench_call *c, uint64_t iter,
                        int64_t *local)
{
    const bench_runner *r = s->r;
    bench_data_key k = data_key(r, &z->pair, iter);
    bench_call h;
    int rc = host_view(s, z, c, &h);
    if (rc) return rc;
    maybe_corrupt(r, &h);
    *local += (int64_t)r->opts->coll->check(&h, &k);
    return 0;
}

/* The -c checked iterations not already made in the warm-up, on fresh inputs;
 * wrong elements of all ranks in *wrong. */
int bench_run_check_results(bench_run_state *s, const bench_size *z, const bench_call *c,
                            int64_t local, int64_t *wrong)
{
    const bench_runner *r = s->r;
    int rc;
    /* -1: not checked ("N/A"): -c 0, or a barrier, which has no data to check */
    *wrong = r->opts->check > 0 && r->opts->coll->check ? 0 : -1;
    if (*wrong < 0) return 0;
    for (int i = bench_run_checks_in_warm_up(r) ? 2 : 1; i <= r->opts->check; i++) {
        bench_run_progress(s, "%s: check %d/%d", z->label, i, r->opts->check);
        if ((rc = bench_run_fill_inputs(s, z, c, (uint64_t)i))) return rc;
        if ((rc = r->opts->coll->run(c))) return rc;
        if ((rc = bench_run_check_one(s, z, c, (uint64_t)i, &local))) return rc;
    }
    return coll_allreduce(c->comm, &local, wrong, 1, COLL_INT64, COLL_SUM);
}
