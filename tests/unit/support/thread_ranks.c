/* Threads as ranks over the mem transport (see thread_ranks.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "mem_transport.h"
#include "thread_ranks.h"

typedef struct rank_thread {
    pthread_t tid;
    coll__algo_ctx ctx;
    coll__scratch scratch;
    thread_rank_fn fn;
    void *arg;
    int no_abort;
    int status;
} rank_thread;

static void *rank_main(void *p)
{
    rank_thread *t = p;
    t->status = t->fn(&t->ctx, t->arg);
    if (t->status != COLL_OK && !t->no_abort)
        t->ctx.tp->ops->abort(t->ctx.tp, t->status, t->ctx.tp->err.rank);
    return NULL;
}

void thread_ranks_stamp(coll__algo_ctx *c, coll__kind kind, size_t count, coll_dtype dt, coll_op op,
                        int root)
{
    uint32_t seq = c->sig.seq + 1;
    memset(&c->sig, 0, sizeof(c->sig));
    c->sig.seq = seq;
    c->sig.kind = (uint8_t)kind;
    c->sig.dtype = (uint8_t)dt;
    c->sig.op = (uint8_t)op;
    c->sig.root = root;
    c->sig.count = count;
    c->deadline = coll__now_s() + c->timeout_s;
}

int thread_ranks_run(int n, const thread_ranks_opts *o, thread_rank_fn fn, void *arg, int *status)
{
    coll__transport **eps = calloc((size_t)n, sizeof(*eps));
    rank_thread *ts = calloc((size_t)n, sizeof(*ts));
    int rc = eps && ts ? mem_transport_create(n, o->piece_bytes, eps) : COLL_ENOMEM;
    if (rc < 0) {
        free(eps);
        free(ts);
        return rc;
    }
    int started = 0;
    for (int r = 0; r < n; r++) {
        rank_thread *t = &ts[r];
        t->ctx.tp = eps[r];
        t->ctx.rank = r;
        t->ctx.size = n;
        t->ctx.scratch = &t->scratch;
        t->ctx.chunk_bytes = o->chunk_bytes;
        t->ctx.timeout_s = o->timeout_s > 0 ? o->timeout_s : 30;
        t->ctx.deadline = coll__now_s() + t->ctx.timeout_s;
        t->fn = fn;
        t->arg = arg;
        t->no_abort = o->no_abort;
        if (pthread_create(&t->tid, NULL, rank_main, t) != 0) {
            t->status = COLL_ESYS;
            eps[r]->ops->abort(eps[r], COLL_ESYS, -1);
            break;
        }
        started++;
    }
    rc = COLL_OK;
    for (int r = 0; r < n; r++) {
        if (r < started) pthread_join(ts[r].tid, NULL);
        if (status) status[r] = ts[r].status;
        if (rc == COLL_OK && ts[r].status != COLL_OK) rc = ts[r].status;
        coll__scratch_free(&ts[r].scratch);
    }
    for (int r = 0; r < n; r++) eps[r]->ops->destroy(eps[r]);
    free(eps);
    free(ts);
    return rc;
}
