/* One shared segment per communicator: a memfd created by rank 0 and opened by
 * the others through /proc/<pid>/fd/<fd>, so it has no name in /dev/shm at all
 * and nothing can be left behind by a crash. Rank 0 closes its descriptor once
 * every rank has mapped it; the memory lives as long as a mapping does. */
#ifndef COLL_SHM_SEGMENT_H
#define COLL_SHM_SEGMENT_H

#include <stddef.h>

#include "bootstrap/store.h"
#include "backend/shm/shm_layout.h"

typedef struct shm_segment {
    void *base;
    size_t bytes;
    int rank, nranks;
    shm_header *hdr;
    shm_rank_ctrl *ctrl; /* [nranks] */
    shm_mailbox *mbox;   /* [sender * nranks + receiver] */
    char *stage;         /* [rank][parity] slots of slot_bytes */
    char *mdata;         /* [sender * nranks + receiver] buffers of mbox_bytes */
    size_t slot_bytes, mbox_bytes;
} shm_segment;

/* Collective over the store (keys under prefix). Fills seg; each rank has written
 * its pid into its ctrl and every rank has mapped the segment when it returns.
 * probe_addr/probe_value go into this rank's ctrl before the others look. */
int coll__shm_segment_create(shm_segment *seg, coll__store *store, const char *prefix, int rank,
                             int nranks, size_t slot_bytes, size_t mbox_bytes, uint64_t probe_addr,
                             uint64_t probe_value, coll__err *err);
/* Every rank calls it once more after its own set-up step: a store barrier. */
int coll__shm_segment_barrier(coll__store *store, const char *prefix, const char *name, int rank,
                              int nranks, coll__err *err); /* err's map names world ranks */
void coll__shm_segment_unmap(shm_segment *seg);

static inline char *shm_slot(const shm_segment *s, int rank, int parity)
{
    return s->stage + ((size_t)rank * 2 + (size_t)parity) * s->slot_bytes;
}
static inline shm_mailbox *shm_mbox(const shm_segment *s, int from, int to)
{
    return &s->mbox[(size_t)from * (size_t)s->nranks + (size_t)to];
}
static inline char *shm_mbox_data(const shm_segment *s, int from, int to)
{
    return s->mdata + ((size_t)from * (size_t)s->nranks + (size_t)to) * s->mbox_bytes;
}

#endif
