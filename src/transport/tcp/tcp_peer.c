/* Moving the bytes of one TCP connection: nonblocking sendmsg/recvmsg straight
 * between the sockets and the callers' buffers (no staging copy), with the
 * message headers checked as they arrive. */
#include "transport/tcp/tcp_peer.h"
#include "coll.h"
#include "core/fault.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#define HDR sizeof(tcp_wire_hdr)
/* Messages gathered into one sendmsg: many small sends cost one syscall. */
#define SEND_BATCH 16

static size_t min_sz(size_t a, size_t b) { return a < b ? a : b; }

/* Injected corruption (COLL_FAULT ...:corrupt): the next header sent goes out
 * with its magic flipped, once. */
static atomic_int corrupt_next;

void coll__tcp_queue_push(tcp_queue *q, coll__xfer *x)
{
    x->next = NULL;
    if (q->tail) q->tail->next = x;
    else q->head = x;
    q->tail = x;
}

static coll__xfer *queue_pop(tcp_queue *q)
{
    coll__xfer *x = q->head;
    if (x) {
        q->head = x->next;
        if (!q->head) q->tail = NULL;
        x->next = NULL;
    }
    return x;
}

static void set_error(tcp_error *e, int status, int blame, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void set_error(tcp_error *e, int status, int blame, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    e->status = status;
    e->rank = blame;
}

static int closed_error(tcp_peer *p, tcp_error *e)
{
    p->broken = 1;
    set_error(e, COLL_EPEER, p->wrank, "rank %d closed its connection (process died?)", p->wrank);
    return COLL_EPEER;
}

static int io_error(tcp_peer *p, int errnum, const char *what, tcp_error *e)
{
    if (errnum == ECONNRESET || errnum == EPIPE || errnum == ENOTCONN || errnum == ETIMEDOUT)
        return closed_error(p, e);
    p->broken = 1;
    set_error(e, COLL_ESYS, p->wrank, "%s rank %d: %s", what, p->wrank, strerror(errnum));
    return COLL_ESYS;
}

static void make_data_hdr(tcp_wire_hdr *h, const coll__xfer *x)
{
    memset(h, 0, sizeof *h);
    h->magic = TCP_WIRE_MAGIC;
    h->type = TCP_MSG_DATA;
    h->sig = x->sig;
    h->sig.pad = 0;
    h->sig.pad2 = 0;
    h->len = x->len;
}

/* n bytes left the socket: advance the queued sends, completing whole ones. */
static void account_sent(tcp_peer *p, size_t n, size_t *progressed)
{
    coll__xfer *x;
    while ((x = p->sends.head)) {
        size_t take = min_sz(n, HDR - p->shdr_off);
        p->shdr_off += take;
        n -= take;
        if (p->shdr_off < HDR) return;
        take = min_sz(n, x->len - x->done);
        x->done += take;
        n -= take;
        if (x->done < x->len) return;
        queue_pop(&p->sends);
        p->shdr_off = 0;
        if (p->sends.head) make_data_hdr(&p->shdr, p->sends.head);
        (*progressed)++;
        x->status = COLL_OK; /* last: the caller may reuse x from here on */
    }
}

/* One sendmsg over up to max_msgs queued messages, at most budget payload bytes.
 * Returns bytes written (0: socket full) or a negative status. */
static long send_once(tcp_peer *p, size_t budget, int max_msgs, size_t *want_out, tcp_error *e)
{
    struct iovec iov[2 * SEND_BATCH];
    tcp_wire_hdr hdrs[SEND_BATCH];
    int niov = 0;
    size_t want = 0;
    coll__xfer *x = p->sends.head;
    if (p->shdr_off == 0) {
        make_data_hdr(&p->shdr, x);
        if (atomic_load_explicit(&corrupt_next, memory_order_relaxed)) p->shdr.magic ^= 0xffffffffu;
    }
    for (int m = 0; x && m < max_msgs && want < budget; m++, x = x->next) {
        if (m == 0) {
            if (p->shdr_off < HDR) {
                iov[niov++] = (struct iovec){(char *)&p->shdr + p->shdr_off, HDR - p->shdr_off};
                want += HDR - p->shdr_off;
            }
        } else {
            make_data_hdr(&hdrs[m], x);
            iov[niov++] = (struct iovec){&hdrs[m], HDR};
            want += HDR;
        }
        size_t plen = x->len - x->done;
        size_t room = want < budget ? budget - want : 0;
        if (plen > room) plen = room;
        if (plen) {
            iov[niov++] = (struct iovec){x->buf + x->done, plen};
            want += plen;
        }
        if (plen < x->len - x->done) break; /* budget reached inside this message */
    }
    *want_out = want;
    struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)niov};
    for (;;) {
        ssize_t n = sendmsg(p->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n >= 0) return (long)n;
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
        return io_error(p, errno, "send to", e);
    }
}

int coll__tcp_peer_send(tcp_peer *p, size_t budget, size_t *progressed, tcp_error *err)
{
    while (p->sends.head && budget > 0) {
        size_t want;
        long n = send_once(p, budget, SEND_BATCH, &want, err);
        if (n < 0) return (int)n;
        if (n == 0) return COLL_OK;
        if (atomic_load_explicit(&corrupt_next, memory_order_relaxed) &&
            p->shdr.magic != TCP_WIRE_MAGIC)
            atomic_store(&corrupt_next, 0); /* the flipped header is leaving */
        *progressed += (size_t)n;
        budget -= min_sz((size_t)n, budget);
        account_sent(p, (size_t)n, progressed);
        coll__fault_action fa = coll__fault_hit(COLL_FAULT_COLLECTIVE, (size_t)n);
        if (fa == COLL_FAULT_CORRUPT) atomic_store(&corrupt_next, 1);
        if (fa == COLL_FAULT_CLOSE_SOCKET) {
            shutdown(p->fd, SHUT_RDWR);
            p->broken = 1;
            set_error(err, COLL_EPEER, p->wme,
                      "rank %d: injected fault: dropped its connection to rank %d", p->wme,
                      p->wrank);
            return COLL_EPEER;
        }
        if ((size_t)n < want) return COLL_OK; /* socket full: the next try would fail */
    }
    return COLL_OK;
}

int coll__tcp_peer_flush_head(tcp_peer *p, tcp_error *err)
{
    size_t ignored = 0;
    while (p->sends.head && p->shdr_off > 0) {
        size_t want;
        long n = send_once(p, (size_t)1 << 30, 1, &want, err);
        if (n < 0) return (int)n;
        if (n == 0) return 0;
        account_sent(p, (size_t)n, &ignored);
    }
    return 1;
}

static int abort_status(const tcp_wire_hdr *h)
{
    /* Only statuses this library defines; anything else still aborts. */
    uint64_t c = h->sig.count; /* from the wire: any value (fuzzed) */
    return c >= 1 && c <= (uint64_t) - (int64_t)COLL_EABORTED ? (int)-(int64_t)c : COLL_EABORTED;
}

/* rhdr is complete: is it an ABORT, garbage, or the message x expects? */
static int check_hdr(tcp_peer *p, const coll__xfer *x, tcp_error *e)
{
    const tcp_wire_hdr *h = &p->rhdr;
    if (h->magic != TCP_WIRE_MAGIC || (h->type != TCP_MSG_DATA && h->type != TCP_MSG_ABORT)) {
        p->broken = 1;
        set_error(e, COLL_EPROTO, p->wrank,
                  "corrupt message header from rank %d (magic 0x%08x, type %u)", p->wrank,
                  (unsigned)h->magic, (unsigned)h->type);
        return COLL_EPROTO;
    }
    if (h->type == TCP_MSG_ABORT) {
        int st = abort_status(h);
        int blamed = h->sig.root; /* a world rank, maybe outside this group; -1: none */
        if (blamed >= 0)
            set_error(e, st, blamed, "rank %d aborted: %s (blames rank %d)", p->wrank,
                      coll_strerror(st), blamed);
        else set_error(e, st, p->wrank, "rank %d aborted: %s", p->wrank, coll_strerror(st));
        return st;
    }
    if (!x) return COLL_OK; /* read early: checked once a receive is posted */
    if (!coll__sig_equal(&h->sig, &x->sig)) {
        char theirs[96], ours[96];
        coll__sig_format(&h->sig, theirs, sizeof theirs);
        coll__sig_format(&x->sig, ours, sizeof ours);
        set_error(e, COLL_EMISMATCH, p->wrank, "rank %d called %s but rank %d called %s", p->wrank,
                  theirs, p->wme, ours);
        return COLL_EMISMATCH;
    }
    if (h->len != x->len) {
        char ours[96];
        coll__sig_format(&x->sig, ours, sizeof ours);
        set_error(e, COLL_EPROTO, p->wrank,
                  "rank %d sent %llu bytes for %s but rank %d expected %zu bytes", p->wrank,
                  (unsigned long long)h->len, ours, p->wme, x->len);
        return COLL_EPROTO;
    }
    p->rhdr_checked = 1;
    return COLL_OK;
}

static void complete_recv(tcp_peer *p, size_t *progressed)
{
    coll__xfer *x = queue_pop(&p->recvs);
    p->rhdr_got = 0;
    p->rhdr_checked = 0;
    (*progressed)++;
    x->status = COLL_OK;
}

int coll__tcp_peer_recv(tcp_peer *p, size_t budget, size_t *progressed, tcp_error *err)
{
    while (p->recvs.head && budget > 0) {
        coll__xfer *x = p->recvs.head;
        struct iovec iov[2];
        int niov = 0;
        size_t hwant = 0;
        if (p->rhdr_got < HDR) {
            hwant = HDR - p->rhdr_got;
            iov[niov++] = (struct iovec){(char *)&p->rhdr + p->rhdr_got, hwant};
        } else if (!p->rhdr_checked) {
            int rc = check_hdr(p, x, err);
            if (rc) return rc;
        }
        /* Payload goes straight to the posted buffer, never past its length. */
        size_t plen = min_sz(x->len - x->done, budget);
        if (plen) iov[niov++] = (struct iovec){x->buf + x->done, plen};
        if (niov == 0) { /* header already here, nothing left to read */
            complete_recv(p, progressed);
            continue;
        }
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)niov};
        ssize_t n = recvmsg(p->fd, &mh, MSG_DONTWAIT);
        if (n == 0) return closed_error(p, err);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return COLL_OK;
            return io_error(p, errno, "receive from", err);
        }
        size_t got = (size_t)n;
        *progressed += got;
        budget -= min_sz(got, budget);
        size_t h = min_sz(got, hwant);
        p->rhdr_got += h;
        got -= h;
        if (p->rhdr_got == HDR && !p->rhdr_checked) {
            int rc = check_hdr(p, x, err);
            if (rc) return rc;
        }
        x->done += got;
        if (p->rhdr_checked && x->done == x->len) complete_recv(p, progressed);
        if ((size_t)n < hwant + plen) return COLL_OK; /* socket drained */
    }
    return COLL_OK;
}

int coll__tcp_peer_peek(tcp_peer *p, size_t *progressed, tcp_error *err)
{
    while (!p->recvs.head && !p->eof && p->rhdr_got < HDR) {
        ssize_t n = recv(p->fd, (char *)&p->rhdr + p->rhdr_got, HDR - p->rhdr_got, MSG_DONTWAIT);
        if (n > 0) {
            p->rhdr_got += (size_t)n;
            *progressed += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return COLL_OK;
        /* Closed while we expect nothing from it: an error only if we ever do. */
        p->eof = 1;
        return COLL_OK;
    }
    if (!p->recvs.head && p->rhdr_got == HDR) return check_hdr(p, NULL, err);
    return COLL_OK;
}

void coll__tcp_peer_fail(tcp_peer *p, const tcp_error *err)
{
    if (!p->fail.status) p->fail = *err;
    coll__xfer *x;
    while ((x = queue_pop(&p->sends))) x->status = err->status;
    while ((x = queue_pop(&p->recvs))) x->status = err->status;
}

int coll__tcp_peer_wants_read(const tcp_peer *p)
{
    return !p->fail.status && !p->eof && (p->recvs.head || p->rhdr_got < HDR);
}

int coll__tcp_peer_wants_write(const tcp_peer *p)
{
    return !p->fail.status && p->sends.head != NULL;
}
