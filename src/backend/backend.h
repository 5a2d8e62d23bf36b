/* Backends: a small vtable that each backend's folder (src/backend/NAME/)
 * provides, found through the table of backends (backends.h). A backend runs one call at a time: the
 * communicator serialises calls and hands nonblocking ones to its progress thread. */
#ifndef COLL_BACKEND_H
#define COLL_BACKEND_H

#include <stddef.h>
#include "coll.h"
#include "core/err.h"
#include "core/sig.h"

typedef struct coll__rendezvous coll__rendezvous;

/* coll__call.source of coll_recv_any and coll_sendrecv_any: whichever peer's
 * next point-to-point message arrives first (dest may send meanwhile); the
 * backend writes the peer it took to *call->from (a rank of its own group). */
#define COLL__ANY_SOURCE (-2)

/* One call, as the user made it (coll.h meaning of each field). */
typedef struct coll__call {
    coll__kind kind;
    const void *sendbuf;
    void *recvbuf;
    size_t count; /* count, sendcount or recvcount as in coll.h */
    coll_dtype dt;
    coll_op op;
    int root;         /* broadcast/reduce */
    int dest, source; /* p2p: -1 when that direction is unused; source may be COLL__ANY_SOURCE */
    size_t recvcount; /* p2p receive count */
    int *from;        /* source COLL__ANY_SOURCE: where the peer received from goes */
    int nonblocking;  /* issued by coll_i*: it runs on the progress thread, beside the caller's
                         own work */
} coll__call;

/* The call receives (from a named peer or from any). */
static inline int coll__call_receives(const coll__call *c)
{
    return c->source >= 0 || c->source == COLL__ANY_SOURCE;
}

/* coll__backend_ops.caps: what callers would otherwise guess from the name. */
#define COLL__CAP_DEVICE_BUFFERS 0x1u /* takes CUDA device buffers itself: no host staging */

typedef struct coll__backend_ops {
    size_t size; /* sizeof this struct */
    const char *name;
    unsigned caps; /* COLL__CAP_* bits */
    /* Set up on an existing rendezvous; *state is the backend's own. err: why not. */
    int (*init)(const coll__rendezvous *rv, void **state, coll__err *err);
    /* Run one call with signature sig. On error, fill err: status, message and
     * the rank to blame (err->rank, -1 for nobody). */
    int (*run)(void *state, const coll__call *call, const coll__sig *sig, double deadline,
               coll__err *err);
    /* Algorithm for later calls (COLL_ENOTSUP if the backend has no such choice). */
    int (*set_algo)(void *state, const char *algo, coll__err *err);
    /* Tell peers this rank is failing (best effort). */
    void (*abort)(void *state, int status, int failed_rank);
    void (*fini)(void *state);
    /* Optional: allocate/free memory suited to this backend (shared segment, ...). */
    void *(*alloc)(void *state, size_t bytes);
    void (*free)(void *state, void *ptr);
    /* Optional: hosts among the ranks, when the backend knows them (> 0). */
    int (*nhosts)(const void *state);
    /* Optional: one line saying how the backend runs; COLL_OK, or ENOTSUP. */
    int (*describe)(const void *state, char *buf, size_t len);
    /* Optional: the tuning variables its probes set, "VAR=VALUE ..." (coll_comm_plan). */
    int (*plan)(const void *state, char *buf, size_t len);
} coll__backend_ops;

/* The ops of the backend of that name in the table of backends (backends.h);
 * NULL and a message in err when it is unknown or not usable here. */
const coll__backend_ops *coll__backend_find(const char *name, char *err, size_t errlen);

#endif
