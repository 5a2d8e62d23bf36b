/* send, recv and sendrecv over per-pair mailboxes. A message travels in chunks
 * through the pair's buffer (post/ack counters, one chunk in flight), or, when
 * it is large and CMA works, as one posted address the receiver reads from
 * directly while the sender waits for the ack. Sending and receiving advance
 * together in one loop, so a ring of sendrecv calls cannot deadlock. */
#include "backend/shm/shm_op.h"

#include <stdio.h>
#include <string.h>

typedef struct p2p_side {
    int active, peer; /* receive from any source: peer -1 until a message shows who */
    shm_mailbox *mb;
    char *data;
    size_t total, done;
    int direct; /* sender: the receiver reads our buffer */
    int posted; /* sender: every chunk posted */
} p2p_side;

typedef struct p2p_ctx {
    p2p_side s, r;
    const shm_state *st;
} p2p_ctx;

static int can_post(const p2p_side *s)
{
    return atomic_load(&s->mb->ack) == atomic_load(&s->mb->post);
}

/* A chunk posted and not yet taken. */
static int holds_chunk(shm_mailbox *mb) { return atomic_load(&mb->post) > atomic_load(&mb->ack); }

static int can_take(const p2p_side *r) { return holds_chunk(r->mb); }

/* A receive from any source: the first peer (after the one taken last, for
 * fairness) whose mailbox to this rank holds a message, or -1. post > ack
 * there is always a message's first chunk: receives take whole messages. */
static int any_posted(const shm_state *st)
{
    for (int i = 1; i <= st->n; i++) {
        int r = (st->p2p.any_last + i) % st->n;
        if (r == st->rank) continue;
        if (holds_chunk(shm_mbox(&st->seg, r, st->rank))) return r;
    }
    return -1;
}

static int something_to_do(const void *arg)
{
    const p2p_ctx *x = arg;
    return (x->s.active && can_post(&x->s)) ||
           (x->r.active && (x->r.mb ? can_take(&x->r) : any_posted(x->st) >= 0));
}

static void post_chunk(shm_op *o, p2p_side *s)
{
    shm_mailbox *mb = s->mb;
    size_t len = s->direct ? s->total : s->total - s->done;
    if (len > o->st->seg.mbox_bytes) len = o->st->seg.mbox_bytes;
    if (s->direct) len = s->total;
    mb->sig = *o->sig;
    mb->sig.count = o->c->count;
    mb->total = s->total;
    mb->addr = s->direct ? (uint64_t)(uintptr_t)o->c->sendbuf : 0;
    mb->off = s->done;
    mb->len = len;
    if (!s->direct) memcpy(s->data, (const char *)o->c->sendbuf + s->done, len);
    atomic_fetch_add(&mb->post, 1);
    coll__shm_ring(&o->st->seg, s->peer);
    s->done += len;
    s->posted = s->done >= s->total;
    coll__shm_op_moved(o, len);
}

static int take_chunk(shm_op *o, p2p_side *r)
{
    shm_mailbox *mb = r->mb;
    if (mb->sig.count != o->c->recvcount || mb->sig.dtype != o->c->dt) {
        coll__err_blame(o->w.err, 0, r->peer,
                        "rank %d sent count=%llu %s but rank %d posted a receive of count=%zu %s",
                        coll__err_world(o->w.err, r->peer), (unsigned long long)mb->sig.count,
                        coll_dtype_name((coll_dtype)mb->sig.dtype),
                        coll__err_world(o->w.err, o->st->rank), o->c->recvcount,
                        coll_dtype_name(o->c->dt));
        return COLL_EMISMATCH;
    }
    if (mb->off != r->done || mb->off + mb->len > r->total) {
        coll__err_blame(o->w.err, 0, r->peer,
                        "rank %d sent bytes [%llu, %llu) of a %zu-byte "
                        "message out of order",
                        coll__err_world(o->w.err, r->peer), (unsigned long long)mb->off,
                        (unsigned long long)(mb->off + mb->len), r->total);
        return COLL_EPROTO;
    }
    char *dst = (char *)o->c->recvbuf + r->done;
    int rc = COLL_OK;
    if (mb->addr) rc = coll__shm_op_read(o, r->peer, dst, mb->addr, mb->len);
    else memcpy(dst, r->data, mb->len);
    if (rc) return rc;
    r->done += mb->len;
    atomic_fetch_add(&mb->ack, 1);
    coll__shm_ring(&o->st->seg, r->peer);
    coll__shm_op_moved(o, mb->len);
    if (r->done >= r->total) r->active = 0;
    return COLL_OK;
}

/* The receive side from peer, watched from now on. */
static void open_recv(shm_op *o, p2p_side *r, int peer)
{
    shm_state *st = o->st;
    r->peer = peer;
    r->mb = shm_mbox(&st->seg, peer, st->rank);
    r->data = shm_mbox_data(&st->seg, peer, st->rank);
    st->p2p.watch[peer] = 1;
}

/* A receive from any source needs no doorbell of its own: every sender rings
 * the receiver's one after posting to any of its mailboxes (post_chunk), so it
 * sleeps on it like every other wait, with every peer watched until a message
 * shows who sent (any of them might have been the sender: its death ends it). */
int coll__shm_p2p_run(shm_op *o)
{
    shm_state *st = o->st;
    const coll__call *c = o->c;
    p2p_ctx x;
    memset(&x, 0, sizeof x);
    x.st = st;
    memset(st->p2p.watch, 0, (size_t)st->n);
    if (c->dest >= 0) {
        x.s = (p2p_side){.active = 1,
                         .peer = c->dest,
                         .mb = shm_mbox(&st->seg, st->rank, c->dest),
                         .data = shm_mbox_data(&st->seg, st->rank, c->dest),
                         .total = c->count * o->es};
        x.s.direct = st->cma.ok && x.s.total > st->seg.mbox_bytes;
        st->p2p.watch[c->dest] = 1;
    }
    if (coll__call_receives(c)) {
        x.r = (p2p_side){.active = 1, .peer = -1, .total = c->recvcount * o->es};
        if (c->source >= 0) open_recv(o, &x.r, c->source);
    }
    o->w.watch = x.r.active && x.r.peer < 0 ? NULL : st->p2p.watch;
    while (x.s.active || x.r.active) {
        int progressed = 0;
        if (x.s.active && can_post(&x.s)) {
            if (x.s.posted) { /* the receiver has taken the last chunk */
                x.s.active = 0;
            } else {
                post_chunk(o, &x.s);
                /* Copied out already: done unless the receiver reads our buffer. */
                if (x.s.posted && !x.s.direct) x.s.active = 0;
            }
            progressed = 1;
        }
        int from;
        if (x.r.active && !x.r.mb && (from = any_posted(st)) >= 0) {
            open_recv(o, &x.r, from);
            st->p2p.any_last = *c->from = from;
            o->w.watch = st->p2p.watch;
        }
        if (x.r.active && x.r.mb && can_take(&x.r)) {
            int rc = take_chunk(o, &x.r);
            if (rc) return rc;
            progressed = 1;
        }
        if (!progressed && (x.s.active || x.r.active)) {
            int who = x.r.active ? x.r.peer : x.s.peer;
            int rc = coll__shm_wait(&o->w, something_to_do, &x, who,
                                    !x.r.active ? "a message to be received"
                                    : x.r.mb    ? "a message to arrive"
                                                : "a message from any rank");
            if (rc) return rc;
        }
    }
    return COLL_OK;
}
