/* One connection of the TCP transport: the queues of transfers posted for that
 * peer and the nonblocking steps that move their bytes. */
#ifndef COLL_TCP_PEER_H
#define COLL_TCP_PEER_H

#include <stddef.h>

#include "transport/tcp/tcp_wire.h"
#include "transport/transport.h"

typedef struct tcp_queue {
    coll__xfer *head, *tail;
} tcp_queue;

typedef struct tcp_peer {
    int fd;         /* -1 for this rank itself */
    int rank;       /* the peer's rank (in the transport's group) */
    int me;         /* this rank */
    int wrank, wme; /* world ranks of the peer and this rank: whom messages name and blame */
    tcp_queue sends, recvs;
    tcp_wire_hdr shdr; /* header of sends.head */
    size_t shdr_off;   /* bytes of shdr written; >0 means sends.head is on the wire */
    tcp_wire_hdr rhdr; /* header of the next incoming message */
    size_t rhdr_got;   /* bytes of rhdr read (may be read before a receive is posted) */
    int rhdr_checked;  /* rhdr was validated against recvs.head */
    int eof;           /* the peer closed while we expected nothing from it */
    int broken;        /* the connection itself failed (EOF, reset): write nothing more */
    coll__err fail;    /* status 0, or the error that failed this connection for good
                        * (whom it blames, why: repeated to later posts) */
    size_t abort_off;  /* bytes of our ABORT header written */
} tcp_peer;

/* Why a step failed: message naming the peer, and the rank to blame. */
typedef coll__err tcp_error;

void coll__tcp_queue_push(tcp_queue *q, coll__xfer *x);

/* Write queued sends (several messages per sendmsg) until the socket is full or
 * budget bytes moved. Returns 0 or a status (err filled); *moved += bytes written. */
int coll__tcp_peer_send(tcp_peer *p, size_t budget, size_t *moved, tcp_error *err);
/* Read into posted receives until the socket is empty or budget bytes moved. */
int coll__tcp_peer_recv(tcp_peer *p, size_t budget, size_t *moved, tcp_error *err);
/* No receive posted: read only the next header, to notice ABORT and EOF early.
 * Returns 0 or the status an ABORT carries (err filled). */
int coll__tcp_peer_peek(tcp_peer *p, size_t *moved, tcp_error *err);
/* Write the rest of the message already on the wire (sends.head), so that an
 * ABORT header can follow it. Returns 1 once nothing is half written, 0 if the
 * socket is full, or a status. */
int coll__tcp_peer_flush_head(tcp_peer *p, tcp_error *err);
/* Fail every posted transfer with err->status and refuse further ones. */
void coll__tcp_peer_fail(tcp_peer *p, const tcp_error *err);
/* Whether poll() should watch the peer for reading / writing. */
int coll__tcp_peer_wants_read(const tcp_peer *p);
int coll__tcp_peer_wants_write(const tcp_peer *p);

#endif
