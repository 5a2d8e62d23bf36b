/* The TCP transport: ops table, posting, the progress loop, abort.
 * progress() first tries every connection with posted work (nonblocking, no
 * poll syscall on the fast path); when nothing moved it polls without sleeping
 * for up to spin_us, then blocks in poll(). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* CPU_COUNT */
#endif
#include "transport/transport.h"
#include "bootstrap/store.h"
#include "core/clock.h"
#include "core/env.h"
#include "transport/tcp/tcp_knobs.h"
#include "core/sock.h"
#include "transport/tcp/tcp_connect.h"
#include "transport/tcp/tcp_peer.h"
#include "coll.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Bytes one connection may move per direction before the others get a turn. */
#define ROUND_BYTES ((size_t)4 << 20)
/* How long abort() tries to deliver its ABORT headers. */
#define ABORT_FLUSH_S 0.1
/* How long destroy() after an abort reads and drops what peers still send. */
#define ABORT_DRAIN_S 0.2
/* Socket buffers: 0 leaves Linux's autotuning on, which grows them up to
 * net.ipv4.tcp_rmem/wmem[2] (6 MiB/4 MiB by default). A fixed SO_RCVBUF turns
 * autotuning off and is clamped to net.core.rmem_max (208 KiB by default), and
 * on loopback 4 MiB fixed buffers measured 2-15% slower than autotuning
 * (bench/tcp_transport.sh), so fixed sizes are opt-in: $COLL_TCP_SOCKBUF
 * (default 0, tcp_knobs.c). */

typedef struct tcp_transport {
    coll__transport base;
    tcp_peer *peers;
    struct pollfd *pfds;
    int *pfd_peer;
    int aborted;
    double spin_us; /* progress() polls this long before it sleeps (0: sleeps at once) */
    int any_last;   /* the peer probe_any named last: the next probe starts after it */
} tcp_transport;

/* This rank's world rank, for messages. */
static int me_world(const coll__transport *tp) { return coll__err_world(&tp->err, tp->rank); }

static void set_msg(coll__transport *tp, int failed_rank, const char *msg)
{
    snprintf(tp->err.msg, sizeof tp->err.msg, "%s", msg);
    tp->err.rank = failed_rank;
}

/* A peer timed out waiting for this rank and blames it, but this rank is
 * itself waiting for another (in a ring the hung rank's neighbour's neighbour
 * times out first): pass the blame to the rank we wait for. Returns 1 if so. */
static int pass_blame(tcp_transport *t, const tcp_peer *p, const tcp_error *e, tcp_error *out)
{
    int me = me_world(&t->base);
    if (e->status != COLL_ETIMEDOUT || e->rank != me) return 0;
    for (int q = 0; q < t->base.size; q++) {
        const tcp_peer *w = &t->peers[q];
        if (q == p->rank || w->fd < 0 || w->fail.status || !w->recvs.head) continue;
        *out = *e;
        out->rank = w->wrank;
        snprintf(out->msg, sizeof out->msg,
                 "rank %d timed out waiting for rank %d, which was itself waiting for rank %d "
                 "(blames rank %d)",
                 p->wrank, me, w->wrank, w->wrank);
        return 1;
    }
    return 0;
}

/* A step on p failed: fail its transfers (all of them on an ABORT, which ends
 * the job), record the first error of this progress call. */
static void handle_error(tcp_transport *t, tcp_peer *p, const tcp_error *e, int *first)
{
    if (!*first) {
        *first = e->status;
        set_msg(&t->base, e->rank, e->msg);
    }
    int job_wide = p->rhdr_got == sizeof(tcp_wire_hdr) && p->rhdr.magic == TCP_WIRE_MAGIC &&
                   p->rhdr.type == TCP_MSG_ABORT;
    if (!job_wide) {
        coll__tcp_peer_fail(p, e);
        return;
    }
    tcp_error passed;
    if (pass_blame(t, p, e, &passed)) {
        e = &passed;
        if (*first == passed.status) set_msg(&t->base, passed.rank, passed.msg);
    }
    p->broken = 1; /* the aborting rank closes after its ABORT */
    for (int r = 0; r < t->base.size; r++)
        if (t->peers[r].fd >= 0) coll__tcp_peer_fail(&t->peers[r], e);
}

static void service(tcp_transport *t, tcp_peer *p, int readable, int writable, size_t *progressed,
                    int *first)
{
    tcp_error e;
    int rc = COLL_OK;
    if (writable && p->sends.head) rc = coll__tcp_peer_send(p, ROUND_BYTES, progressed, &e);
    if (!rc && readable && !p->fail.status) {
        if (p->recvs.head) rc = coll__tcp_peer_recv(p, ROUND_BYTES, progressed, &e);
        else rc = coll__tcp_peer_peek(p, progressed, &e);
    }
    if (rc) handle_error(t, p, &e, first);
}

/* poll() on the first n pfds: without sleeping for up to spin_us (a peer a
 * few microseconds away answers before a sleep and its wake-up would end; on
 * a VM an idle vCPU's wake-up costs tens of microseconds), then blocking. */
static int wait_ready(tcp_transport *t, int n, int timeout_ms)
{
    if (t->spin_us > 0 && timeout_ms != 0) {
        double t0 = coll__now_us(), spin = t->spin_us;
        if (timeout_ms > 0 && timeout_ms * 1e3 < spin) spin = timeout_ms * 1e3;
        do {
            int ready = poll(t->pfds, (nfds_t)n, 0);
            if (ready != 0) return ready;
            sched_yield(); /* whoever we wait for may be waiting for this core */
        } while (coll__now_us() - t0 < spin);
        if (timeout_ms > 0) { /* the time spun counts against the timeout */
            timeout_ms -= (int)(spin / 1e3);
            if (timeout_ms <= 0) return 0;
        }
    }
    return poll(t->pfds, (nfds_t)n, timeout_ms);
}

static int tcp_progress(coll__transport *tp, int timeout_ms)
{
    tcp_transport *t = (tcp_transport *)tp;
    if (t->aborted) return COLL_EABORTED;
    int first = COLL_OK;
    size_t progressed = 0;
    for (int r = 0; r < tp->size; r++) {
        tcp_peer *p = &t->peers[r];
        if (p->fd >= 0 && !p->fail.status && (p->sends.head || p->recvs.head))
            service(t, p, p->recvs.head != NULL, 1, &progressed, &first);
    }
    if (first || progressed || timeout_ms == 0) return first;

    int n = 0;
    for (int r = 0; r < tp->size; r++) {
        tcp_peer *p = &t->peers[r];
        if (p->fd < 0) continue;
        /* Idle peers too: an ABORT from any rank ends the wait at once. */
        short ev = (short)((coll__tcp_peer_wants_read(p) ? POLLIN : 0) |
                           (coll__tcp_peer_wants_write(p) ? POLLOUT : 0));
        if (!ev) continue;
        t->pfds[n] = (struct pollfd){.fd = p->fd, .events = ev};
        t->pfd_peer[n++] = r;
    }
    if (n == 0) return COLL_OK;
    int ready = wait_ready(t, n, timeout_ms);
    if (ready < 0 && errno != EINTR) {
        snprintf(tp->err.msg, sizeof tp->err.msg, "tcp transport rank %d: poll: %s", me_world(tp),
                 strerror(errno));
        tp->err.rank = -1;
        return COLL_ESYS;
    }
    for (int i = 0; i < n && ready > 0; i++) {
        short rev = t->pfds[i].revents;
        if (!rev) continue;
        tcp_peer *p = &t->peers[t->pfd_peer[i]];
        if (p->fail.status) continue; /* failed by an ABORT read earlier in this loop */
        int err = (rev & (POLLERR | POLLHUP | POLLNVAL)) != 0;
        service(t, p, err || (rev & POLLIN), err || (rev & POLLOUT), &progressed, &first);
    }
    return first;
}

static int reject(coll__transport *tp, coll__xfer *x, int status, int failed_rank, const char *msg)
{
    x->status = status;
    set_msg(tp, failed_rank, msg);
    return status;
}

static int tcp_post(coll__transport *tp, coll__xfer *x)
{
    tcp_transport *t = (tcp_transport *)tp;
    char msg[256];
    x->next = NULL;
    x->done = 0;
    if (x->peer < 0 || x->peer >= tp->size || x->peer == tp->rank ||
        (x->kind != COLL_XFER_SEND && x->kind != COLL_XFER_RECV) || (x->len && !x->buf)) {
        snprintf(msg, sizeof msg,
                 "tcp transport rank %d: invalid transfer (%s, peer %d of %d ranks, %zu bytes)",
                 me_world(tp), x->kind == COLL_XFER_SEND ? "send" : "receive", x->peer, tp->size,
                 x->len);
        return reject(tp, x, COLL_EINVAL, -1, msg);
    }
    if (t->aborted) {
        snprintf(msg, sizeof msg, "tcp transport rank %d: transport was aborted", me_world(tp));
        return reject(tp, x, COLL_EABORTED, -1, tp->err.msg[0] ? tp->err.msg : msg);
    }
    tcp_peer *p = &t->peers[x->peer];
    if (p->fail.status) return reject(tp, x, p->fail.status, p->fail.rank, p->fail.msg);
    if (p->eof) {
        snprintf(msg, sizeof msg, "rank %d closed its connection (process died?)", p->wrank);
        tcp_error e = {.status = COLL_EPEER, .rank = p->wrank};
        snprintf(e.msg, sizeof e.msg, "%s", msg);
        coll__tcp_peer_fail(p, &e);
        return reject(tp, x, COLL_EPEER, p->wrank, msg);
    }
    x->status = COLL_EAGAIN;
    coll__tcp_queue_push(x->kind == COLL_XFER_SEND ? &p->sends : &p->recvs, x);
    return COLL_OK;
}

/* A receive from any source: the headers progress() read ahead (every peer
 * without a posted receive has its next header read into rhdr) say who sent
 * first. A header of a collective is no candidate: it waits for its call. */
static int tcp_probe_any(coll__transport *tp, int *peer)
{
    tcp_transport *t = (tcp_transport *)tp;
    char msg[256];
    int parked = -1, nparked = 0;
    *peer = -1;
    if (t->aborted) return COLL_EABORTED;
    for (int i = 1; i <= tp->size; i++) {
        int r = (t->any_last + i) % tp->size;
        tcp_peer *p = &t->peers[r];
        if (r == tp->rank) continue;
        if (p->fail.status) {
            set_msg(tp, p->fail.rank, p->fail.msg);
            return p->fail.status;
        }
        if (p->rhdr_got == sizeof(tcp_wire_hdr)) {
            if (p->rhdr.type == TCP_MSG_DATA && p->rhdr.sig.kind == COLL_KIND_P2P) {
                *peer = t->any_last = r;
                return COLL_OK;
            }
            parked = r;
            nparked++;
        } else if (p->eof) {
            snprintf(msg, sizeof msg,
                     "rank %d closed its connection (process died?) while rank %d waited for a "
                     "message from any rank",
                     p->wrank, me_world(tp));
            set_msg(tp, p->wrank, msg);
            return COLL_EPEER;
        }
    }
    if (nparked > 0 &&
        nparked == tp->size - 1) { /* each waits in a collective for this rank: none can send */
        char what[96];
        coll__sig_format(&t->peers[parked].rhdr.sig, what, sizeof what);
        snprintf(msg, sizeof msg,
                 "rank %d waits for a message from any rank, but every other rank called a "
                 "collective (rank %d: %s)",
                 me_world(tp), t->peers[parked].wrank, what);
        set_msg(tp, t->peers[parked].wrank, msg);
        return COLL_EMISMATCH;
    }
    return COLL_OK;
}

/* Delivers ABORT headers to every peer we can still write to, finishing any
 * message already half on the wire first so the header lands on a boundary.
 * Bounded by ABORT_FLUSH_S; peers not reached by then just see the close. */
static void send_aborts(tcp_transport *t, const tcp_wire_hdr *ah)
{
    double deadline = coll__now_s() + ABORT_FLUSH_S;
    for (;;) {
        int n = 0;
        for (int r = 0; r < t->base.size; r++) {
            tcp_peer *p = &t->peers[r];
            if (p->fd < 0 || p->broken || p->eof || p->abort_off == sizeof *ah) continue;
            tcp_error e;
            int flushed = coll__tcp_peer_flush_head(p, &e);
            while (flushed == 1 && p->abort_off < sizeof *ah) {
                ssize_t w = send(p->fd, (const char *)ah + p->abort_off, sizeof *ah - p->abort_off,
                                 MSG_NOSIGNAL | MSG_DONTWAIT);
                if (w > 0) p->abort_off += (size_t)w;
                else if (w < 0 && errno == EINTR) continue;
                else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) flushed = 0;
                else flushed = -1;
            }
            if (flushed < 0) p->broken = 1;
            else if (p->abort_off < sizeof *ah)
                t->pfds[n++] = (struct pollfd){.fd = p->fd, .events = POLLOUT};
        }
        int ms = coll__ms_until(deadline, 1000);
        if (n == 0 || ms == 0) return;
        poll(t->pfds, (nfds_t)n, ms);
    }
}

static void tcp_abort(coll__transport *tp, int status, int failed_rank)
{
    tcp_transport *t = (tcp_transport *)tp;
    if (t->aborted) return;
    if (status >= 0) status = COLL_EABORTED;
    tcp_wire_hdr ah;
    memset(&ah, 0, sizeof ah);
    ah.magic = TCP_WIRE_MAGIC;
    ah.type = TCP_MSG_ABORT;
    ah.sig.root = failed_rank;
    ah.sig.count = (uint64_t)(-(int64_t)status);
    send_aborts(t, &ah);
    t->aborted = 1;
    tcp_error e = {.status = COLL_EABORTED, .rank = failed_rank};
    snprintf(e.msg, sizeof e.msg, "tcp transport rank %d: aborted (%s)", me_world(tp),
             coll_strerror(status));
    for (int r = 0; r < tp->size; r++) {
        tcp_peer *p = &t->peers[r];
        if (p->fd < 0) continue;
        coll__tcp_peer_fail(p, &e);
        /* FIN, not RST: the peer still reads everything sent, ABORT included.
         * The read side stays open for destroy() to drain (see there). */
        shutdown(p->fd, SHUT_WR);
    }
    if (!tp->err.msg[0]) set_msg(tp, failed_rank, e.msg);
}

/* Closing a socket with unread input sends RST, and an RST makes the peer
 * drop what it has not read yet: the ABORT this rank sent, which names the
 * rank really at fault. So after an abort, read and drop the peers' input
 * until they close too (they stop sending once they read the ABORT), bounded. */
static void drain_after_abort(tcp_transport *t)
{
    double deadline = coll__now_s() + ABORT_DRAIN_S;
    char sink[65536];
    for (;;) {
        int n = 0;
        for (int r = 0; r < t->base.size; r++) {
            tcp_peer *p = &t->peers[r];
            if (p->fd < 0 || p->eof) continue;
            ssize_t got;
            while ((got = recv(p->fd, sink, sizeof sink, MSG_DONTWAIT)) > 0) {
            }
            if (got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) p->eof = 1;
            else t->pfds[n++] = (struct pollfd){.fd = p->fd, .events = POLLIN};
        }
        int ms = coll__ms_until(deadline, 1000);
        if (n == 0 || ms == 0) return;
        poll(t->pfds, (nfds_t)n, ms);
    }
}

static void tcp_destroy(coll__transport *tp)
{
    tcp_transport *t = (tcp_transport *)tp;
    if (!t) return;
    if (t->aborted) drain_after_abort(t);
    tcp_error e = {.status = COLL_EABORTED, .rank = -1, .msg = "transport destroyed"};
    for (int r = 0; r < tp->size; r++) {
        if (t->peers[r].fd < 0) continue;
        coll__tcp_peer_fail(&t->peers[r], &e);
        close(t->peers[r].fd);
    }
    free(t->peers);
    free(t->pfds);
    free(t->pfd_peer);
    free(t);
}

/* CPUs this host's ranks share: this process's affinity, unless that is one
 * CPU (a launcher's binding says nothing about the host), then the online ones. */
static int host_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 1) return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int coll__tcp_transport_spin(coll__transport *tp, int host_ranks, coll__err *err)
{
    uint64_t us = 0, crowded_us = 0;
    int oversub = host_ranks > host_cpus();
    if (coll__tunable_read(&coll__tcp_tunables.rows[TCP_KNOB_SPIN_US], tp->size, oversub, &us,
                           err) ||
        coll__tunable_read(&coll__tcp_tunables.rows[TCP_KNOB_SPIN_CROWDED_US], tp->size, oversub,
                           &crowded_us, err))
        return COLL_EINVAL;
    /* More ranks than cores: whoever we wait for may need this core, so by
     * default the wait sleeps at once (the yields of a spin hand it over too,
     * measured faster at 4 ranks on 2 busy cores but not clearly at 6: opt-in). */
    ((tcp_transport *)tp)->spin_us = oversub ? (double)crowded_us : (double)us;
    return COLL_OK;
}

static const coll__transport_ops tcp_ops = {
    .size = sizeof(coll__transport_ops),
    .name = "tcp",
    .post = tcp_post,
    .progress = tcp_progress,
    .probe_any = tcp_probe_any,
    .abort = tcp_abort,
    .destroy = tcp_destroy,
};


int coll__tcp_transport_create(coll__store *store, const char *prefix, int rank, int size,
                               const char *host, const char *token, double timeout_s,
                               const int *world_of, int nworld, coll__transport **out,
                               coll__err *err)
{
    if (!store || !out || size < 1 || rank < 0 || rank >= size || timeout_s < 0) {
        return coll__err_set(err, COLL_EINVAL,
                             "tcp transport: invalid arguments (rank %d of %d, timeout %.1f s)",
                             rank, size, timeout_s);
    }
    *out = NULL;
    /* $COLL_TCP_SOCKBUF bytes (0: the kernel's autotuning, the default). */
    uint64_t sockbuf;
    if (coll__tunable_read(&coll__tcp_tunables.rows[TCP_KNOB_SOCKBUF], 0, 0, &sockbuf, err))
        return COLL_EINVAL;
    coll__err why; /* set-up's error, naming world ranks */
    coll__err_init(&why, world_of, nworld);
    tcp_transport *t = calloc(1, sizeof *t);
    int *fds = calloc((size_t)size, sizeof *fds);
    if (t) {
        t->peers = calloc((size_t)size, sizeof *t->peers);
        t->pfds = calloc((size_t)size, sizeof *t->pfds);
        t->pfd_peer = calloc((size_t)size, sizeof *t->pfd_peer);
    }
    if (!t || !fds || !t->peers || !t->pfds || !t->pfd_peer) {
        coll__err_set(err, 0, "tcp transport rank %d: out of memory for %d peers",
                      coll__err_world(&why, rank), size);
        if (t) {
            free(t->peers);
            free(t->pfds);
            free(t->pfd_peer);
        }
        free(t);
        free(fds);
        return COLL_ENOMEM;
    }
    int rc = coll__tcp_mesh_connect(store, prefix ? prefix : "", rank, size, host, token, timeout_s,
                                    (int)sockbuf, fds, &why);
    if (rc) {
        coll__err_pass(err, &why);
        err->status = rc;
    }
    t->base.ops = &tcp_ops;
    t->base.rank = rank;
    t->base.size = size;
    coll__err_init(&t->base.err, world_of, nworld);
    for (int r = 0; r < size; r++) {
        t->peers[r] = (tcp_peer){.fd = fds[r],
                                 .rank = r,
                                 .me = rank,
                                 .wrank = coll__err_world(&why, r),
                                 .wme = coll__err_world(&why, rank)};
        if (fds[r] >= 0) coll__sock_set_nonblocking(fds[r], 1);
    }
    free(fds);
    if (rc) {
        tcp_destroy(&t->base);
        return rc;
    }
    /* Every rank of the group on this host, until the caller knows better. */
    rc = coll__tcp_transport_spin(&t->base, size, err);
    if (rc) {
        tcp_destroy(&t->base);
        return rc;
    }
    *out = &t->base;
    return COLL_OK;
}
