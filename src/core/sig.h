/* Signature of a collective call, stamped on every message so that ranks
 * that disagree about the call (count, dtype, op, root, which collective)
 * find out from the first message instead of exchanging wrong data. */
#ifndef COLL_SIG_H
#define COLL_SIG_H

#include <stdint.h>
#include <stddef.h>

typedef enum coll__kind {
    COLL_KIND_ALLREDUCE = 0,
    COLL_KIND_ALLGATHER,
    COLL_KIND_REDUCESCATTER,
    COLL_KIND_BROADCAST,
    COLL_KIND_REDUCE,
    COLL_KIND_ALLTOALL,
    COLL_KIND_BARRIER,
    COLL_KIND_P2P, /* send, recv, sendrecv */
    COLL_KIND_COUNT
} coll__kind;

/* 24 bytes, fixed layout: it travels in wire headers. */
typedef struct coll__sig {
    uint32_t seq;  /* collective number on the communicator (0 for p2p) */
    uint8_t kind;  /* coll__kind */
    uint8_t dtype; /* coll_dtype */
    uint8_t op;    /* coll_op */
    uint8_t pad;
    int32_t root;
    uint32_t pad2;
    uint64_t count; /* the count argument as the caller passed it */
} coll__sig;

const char *coll__kind_name(coll__kind k);
int coll__sig_equal(const coll__sig *a, const coll__sig *b);
/* "allreduce(count=100, float32, sum) #7" into buf. */
void coll__sig_format(const coll__sig *s, char *buf, size_t len);

#endif
