/* Point-to-point transports: a small ops table, UCX style, which tcp (and the
 * tests' in-memory transport) implement and src/algo runs over. shm is not one:
 * its shared segment, heap, CMA and wait primitives are the bottom of the shm
 * backend (src/backend/shm/), whose collectives use them directly, with no
 * point-to-point layer in between.
 *
 * A transfer (coll__xfer) is posted, then progress() moves bytes for all posted
 * transfers. Transfers to one peer complete in the order posted, and likewise
 * transfers from one peer, so no tags are needed for matching. Each transfer
 * carries the signature of the collective that posted it; a receive whose
 * incoming signature differs fails with COLL_EMISMATCH on that rank. */
#ifndef COLL_TRANSPORT_H
#define COLL_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "core/err.h"
#include "core/sig.h"

typedef struct coll__transport coll__transport;
typedef struct coll__store coll__store;

typedef enum { COLL_XFER_SEND = 0, COLL_XFER_RECV = 1 } coll__xfer_kind;

typedef struct coll__xfer {
    struct coll__xfer *next; /* the transport's per-peer queue */
    coll__xfer_kind kind;
    int peer;
    coll__sig sig; /* sent in the header; compared on receive */
    char *buf;     /* send: data (not modified); recv: destination */
    size_t len;    /* bytes; a receive of a different length is COLL_EPROTO */
    size_t done;   /* bytes moved so far: algorithms read it to pipeline */
    int status;    /* COLL_EAGAIN while queued, then COLL_OK or an error */
} coll__xfer;

typedef struct coll__transport_ops {
    size_t size; /* sizeof this struct */
    const char *name;
    /* Queue a transfer (x stays owned by the caller and must live until done). */
    int (*post)(coll__transport *tp, coll__xfer *x);
    /* Move bytes on every posted transfer; block up to timeout_ms (-1 forever, 0
     * never) when nothing can move. Returns COLL_OK or the first fatal error, which
     * also fails the affected transfers (x->status) and fills tp->err. */
    int (*progress)(coll__transport *tp, int timeout_ms);
    /* Optional (NULL: no receive from any source). Never blocks: *peer = the
     * peer whose next incoming message, a point-to-point one, has announced
     * itself (its header is here; fairly: the peer after the last one named
     * first), or -1 when none has yet. progress() is what waits: it reads the
     * next header of every peer without a posted receive. Returns COLL_OK, or
     * what ends a wait for any peer (filling tp->err): a peer closed or failed
     * (any of them might have been the sender), or no peer can send one. */
    int (*probe_any)(coll__transport *tp, int *peer);
    /* Best effort: tell every peer this rank fails with status, blaming world
     * rank failed_rank (-1: none; it may be outside the group), then refuse
     * further work. */
    void (*abort)(coll__transport *tp, int status, int failed_rank);
    void (*destroy)(coll__transport *tp);
} coll__transport_ops;

struct coll__transport {
    const coll__transport_ops *ops;
    int rank, size;
    coll__err err; /* the last error: why (naming the peer) and whom to blame, in
                       * world ranks through its map (the group's, see coll__err_init) */
};

/* Full mesh of TCP connections set up through the store (keys under prefix).
 * token authenticates peers (may be NULL). host: address to listen on (NULL: 127.0.0.1).
 * world_of, nworld: the group's ranks in the world (NULL, 0: the group is the
 * world); messages and blame name world ranks. */
int coll__tcp_transport_create(coll__store *store, const char *prefix, int rank, int size,
                               const char *host, const char *token, double timeout_s,
                               const int *world_of, int nworld, coll__transport **out,
                               coll__err *err);
/* A tcp transport's waits poll without sleeping for $COLL_TCP_SPIN_US before
 * they block, unless host_ranks (the group's ranks on this host; create
 * assumes all of them) outnumber this host's cores: then for
 * $COLL_TCP_SPIN_CROWDED_US (0 by default: they block at once).
 * COLL_EINVAL (err says why) for a value out of range. */
int coll__tcp_transport_spin(coll__transport *tp, int host_ranks, coll__err *err);

#endif
