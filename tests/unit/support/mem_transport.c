/* In-process transport (see mem_transport.h). One mutex guards the shared
 * world; each rank has a condition variable it sleeps on in progress(). A
 * posted send becomes a mem_msg in the FIFO of its (src, dst) pair; the
 * receiver matches it with its oldest receive from that peer. Each coll__xfer
 * is only ever touched by the thread of the rank that posted it. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mem_transport.h"

typedef struct mem_msg {
    struct mem_msg *next;      /* in the (src, dst) FIFO */
    struct mem_msg *next_mine; /* in the sender's list of unfinished sends */
    coll__sig sig;
    const char *buf;
    size_t len, done;
    int finished;
    coll__xfer *x; /* sender's transfer: touched by the sender's thread only */
} mem_msg;

typedef struct mem_world mem_world;

typedef struct mem_ep {
    coll__transport base;
    mem_world *w;
    coll__xfer **rq_head, **rq_tail; /* per peer: posted receives (own thread only) */
    mem_msg *sends;                  /* unfinished sends of this rank */
} mem_ep;

struct mem_world {
    pthread_mutex_t mu;
    int size, refs;
    size_t piece;
    pthread_cond_t *cv; /* per rank */
    mem_msg **qh, **qt; /* [src * size + dst] */
    int aborted, abort_status, abort_by, abort_blame;
    mem_ep *eps;
};

static const coll__transport_ops mem_ops;

static int ep_post(coll__transport *tp, coll__xfer *x)
{
    mem_ep *e = (mem_ep *)tp;
    mem_world *w = e->w;
    if (x->peer < 0 || x->peer >= w->size) {
        snprintf(tp->err.msg, sizeof(tp->err.msg), "mem transport: rank %d out of range 0..%d",
                 x->peer, w->size - 1);
        return COLL_EINVAL;
    }
    x->next = NULL;
    x->done = 0;
    x->status = COLL_EAGAIN;
    if (x->kind == COLL_XFER_RECV) {
        /* Only this thread reads its receive queues: no lock needed. */
        if (e->rq_tail[x->peer]) e->rq_tail[x->peer]->next = x;
        else e->rq_head[x->peer] = x;
        e->rq_tail[x->peer] = x;
        return COLL_OK;
    }
    mem_msg *m = calloc(1, sizeof(*m));
    if (!m) return COLL_ENOMEM;
    m->sig = x->sig;
    m->buf = x->buf;
    m->len = x->len;
    m->x = x;
    pthread_mutex_lock(&w->mu);
    if (w->aborted) {
        pthread_mutex_unlock(&w->mu);
        free(m);
        return COLL_EABORTED;
    }
    int q = tp->rank * w->size + x->peer;
    if (w->qt[q]) w->qt[q]->next = m;
    else w->qh[q] = m;
    w->qt[q] = m;
    m->next_mine = e->sends;
    e->sends = m;
    pthread_cond_signal(&w->cv[x->peer]);
    pthread_mutex_unlock(&w->mu);
    return COLL_OK;
}

/* Take the head message of FIFO q (it is finished: the sender frees it). */
static void pop_msg(mem_world *w, int q, int src)
{
    mem_msg *m = w->qh[q];
    w->qh[q] = m->next;
    if (!w->qh[q]) w->qt[q] = NULL;
    m->finished = 1;
    pthread_cond_signal(&w->cv[src]);
}

static void pop_recv(mem_ep *e, int peer)
{
    coll__xfer *x = e->rq_head[peer];
    e->rq_head[peer] = x->next;
    if (!e->rq_head[peer]) e->rq_tail[peer] = NULL;
    x->next = NULL;
}

/* Match and move data for this rank's receives; under the lock. Returns the
 * first error and sets *moved when something happened. */
static int pull(mem_ep *e, int *moved)
{
    mem_world *w = e->w;
    int me = e->base.rank, err = COLL_OK;
    for (int p = 0; p < w->size; p++) {
        coll__xfer *x = e->rq_head[p];
        int q = p * w->size + me;
        mem_msg *m = w->qh[q];
        if (!x || !m) continue;
        *moved = 1;
        if (!coll__sig_equal(&x->sig, &m->sig) || x->len != m->len) {
            int st = coll__sig_equal(&x->sig, &m->sig) ? COLL_EPROTO : COLL_EMISMATCH;
            char mine[96], theirs[96];
            coll__sig_format(&x->sig, mine, sizeof(mine));
            coll__sig_format(&m->sig, theirs, sizeof(theirs));
            if (st == COLL_EMISMATCH)
                snprintf(e->base.err.msg, sizeof(e->base.err.msg),
                         "rank %d called %s but rank %d called %s", me, mine, p, theirs);
            else
                snprintf(e->base.err.msg, sizeof(e->base.err.msg),
                         "rank %d expected %zu bytes from rank %d in %s, got %zu", me, x->len, p,
                         mine, m->len);
            e->base.err.rank = p;
            x->status = st;
            pop_recv(e, p);
            pop_msg(w, q, p); /* consumed, as a stream transport would */
            if (err == COLL_OK) err = st;
            continue;
        }
        size_t n = m->len - m->done;
        if (w->piece && n > w->piece) n = w->piece;
        if (n) memcpy(x->buf + m->done, m->buf + m->done, n);
        m->done += n;
        x->done = m->done;
        if (m->done == m->len) {
            x->status = COLL_OK;
            pop_recv(e, p);
            pop_msg(w, q, p);
        }
    }
    return err;
}

/* Report finished sends to their transfers; under the lock. */
static void sync_sends(mem_ep *e, int *moved)
{
    mem_msg **pp = &e->sends;
    while (*pp) {
        mem_msg *m = *pp;
        if (m->finished) {
            if (m->x) {
                m->x->done = m->len;
                m->x->status = COLL_OK;
            }
            *pp = m->next_mine;
            free(m);
            *moved = 1;
        } else {
            pp = &m->next_mine;
        }
    }
}

/* Fail everything still posted on this rank; under the lock. */
static int fail_all(mem_ep *e, int status)
{
    mem_world *w = e->w;
    for (int p = 0; p < w->size; p++)
        while (e->rq_head[p]) {
            e->rq_head[p]->status = status;
            pop_recv(e, p);
        }
    for (mem_msg *m = e->sends; m; m = m->next_mine)
        if (m->x) {
            m->x->status = status;
            m->x = NULL; /* the caller may free it now; the message stays queued */
        }
    if (!e->base.err.msg[0]) {
        if (w->abort_by == e->base.rank)
            snprintf(e->base.err.msg, sizeof(e->base.err.msg), "rank %d aborted the communicator",
                     w->abort_by);
        else
            snprintf(e->base.err.msg, sizeof(e->base.err.msg), "rank %d aborted (%s)", w->abort_by,
                     coll_strerror(w->abort_status));
    }
    e->base.err.rank = w->abort_blame >= 0 ? w->abort_blame : w->abort_by;
    return status;
}

static int ep_progress(coll__transport *tp, int timeout_ms)
{
    mem_ep *e = (mem_ep *)tp;
    mem_world *w = e->w;
    pthread_mutex_lock(&w->mu);
    int rc = COLL_OK;
    for (int round = 0; round < 2; round++) {
        if (w->aborted) {
            /* like tcp: the aborting rank's status reaches everyone (a mismatch
             * stays a mismatch); a status-less abort reads as a failed peer */
            int st = w->abort_status < 0 && w->abort_status != COLL_EABORTED ? w->abort_status
                                                                             : COLL_EPEER;
            rc = fail_all(e, w->abort_by == tp->rank ? COLL_EABORTED : st);
            break;
        }
        int moved = 0;
        rc = pull(e, &moved);
        sync_sends(e, &moved);
        if (moved || rc < 0 || timeout_ms == 0 || round == 1) break;
        if (timeout_ms < 0) {
            pthread_cond_wait(&w->cv[tp->rank], &w->mu);
        } else {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_sec += timeout_ms / 1000;
            ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&w->cv[tp->rank], &w->mu, &ts);
        }
    }
    pthread_mutex_unlock(&w->mu);
    return rc;
}

static void ep_abort(coll__transport *tp, int status, int failed_rank)
{
    mem_ep *e = (mem_ep *)tp;
    mem_world *w = e->w;
    pthread_mutex_lock(&w->mu);
    if (!w->aborted) {
        w->aborted = 1;
        w->abort_status = status;
        w->abort_by = tp->rank;
        w->abort_blame = failed_rank;
        /* The aborting rank's transfers may be gone (stack frames of a failed
         * collective): never write to them again. */
        for (mem_msg *m = e->sends; m; m = m->next_mine) m->x = NULL;
        for (int r = 0; r < w->size; r++) pthread_cond_signal(&w->cv[r]);
    }
    pthread_mutex_unlock(&w->mu);
}

static void world_free(mem_world *w)
{
    for (int q = 0; q < w->size * w->size; q++)
        while (w->qh[q]) {
            mem_msg *m = w->qh[q];
            w->qh[q] = m->next;
            m->finished = 1; /* freed below from its sender's list */
        }
    for (int r = 0; r < w->size; r++) {
        mem_msg *m = w->eps[r].sends;
        while (m) {
            mem_msg *next = m->next_mine;
            free(m);
            m = next;
        }
        free(w->eps[r].rq_head);
        free(w->eps[r].rq_tail);
        pthread_cond_destroy(&w->cv[r]);
    }
    pthread_mutex_destroy(&w->mu);
    free(w->cv);
    free(w->qh);
    free(w->qt);
    free(w->eps);
    free(w);
}

static void ep_destroy(coll__transport *tp)
{
    mem_world *w = ((mem_ep *)tp)->w;
    pthread_mutex_lock(&w->mu);
    int last = --w->refs == 0;
    pthread_mutex_unlock(&w->mu);
    if (last) world_free(w);
}

static const coll__transport_ops mem_ops = {
    .size = sizeof(coll__transport_ops),
    .name = "mem",
    .post = ep_post,
    .progress = ep_progress,
    .abort = ep_abort,
    .destroy = ep_destroy,
};

int mem_transport_create(int size, size_t piece_bytes, coll__transport **eps)
{
    if (size < 1) return COLL_EINVAL;
    mem_world *w = calloc(1, sizeof(*w));
    if (!w) return COLL_ENOMEM;
    w->size = w->refs = size;
    w->piece = piece_bytes;
    w->abort_blame = -1;
    w->cv = calloc((size_t)size, sizeof(*w->cv));
    w->qh = calloc((size_t)size * (size_t)size, sizeof(*w->qh));
    w->qt = calloc((size_t)size * (size_t)size, sizeof(*w->qt));
    w->eps = calloc((size_t)size, sizeof(*w->eps));
    if (!w->cv || !w->qh || !w->qt || !w->eps) goto nomem;
    pthread_mutex_init(&w->mu, NULL);
    for (int r = 0; r < size; r++) {
        mem_ep *e = &w->eps[r];
        pthread_cond_init(&w->cv[r], NULL);
        e->base.ops = &mem_ops;
        e->base.rank = r;
        e->base.size = size;
        e->base.err.rank = -1;
        e->w = w;
        e->rq_head = calloc((size_t)size, sizeof(*e->rq_head));
        e->rq_tail = calloc((size_t)size, sizeof(*e->rq_tail));
        if (!e->rq_head || !e->rq_tail) {
            w->refs = size; /* world_free below frees what exists */
            world_free(w);
            return COLL_ENOMEM;
        }
        eps[r] = &e->base;
    }
    return COLL_OK;
nomem:
    free(w->cv);
    free(w->qh);
    free(w->qt);
    free(w->eps);
    free(w);
    return COLL_ENOMEM;
}
