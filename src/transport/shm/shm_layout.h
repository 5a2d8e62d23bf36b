/* Layout of a shared-memory communicator's segment. Everything another rank
 * writes sits on its own SHM_LINE so that ranks never share a cache line they
 * both write (adjacent-line prefetch pulls pairs of 64-byte lines, hence 128). */
#ifndef COLL_SHM_LAYOUT_H
#define COLL_SHM_LAYOUT_H

#include <stdatomic.h>
#include <stdint.h>

#include "core/sig.h"

#define SHM_LINE 128
#define SHM_MAGIC 0x636f6c6c73686d31ull /* "collshm1" */

/* What a rank says about one collective step: the call, and where its buffers are
 * (for peers that read them with process_vm_readv). Two of them, by step parity. */
typedef struct shm_slot_hdr {
    coll_sig sig;
    uint64_t sendbuf, recvbuf;
} shm_slot_hdr;

typedef struct shm_rank_ctrl {
    /* Steps this rank has finished: only grows; written by its owner only. */
    _Alignas(SHM_LINE) _Atomic uint64_t progress;
    /* Doorbell: peers bump it after publishing anything this rank may wait for,
     * and FUTEX_WAKE it when sleeping says the owner sleeps on it. */
    _Alignas(SHM_LINE) _Atomic uint32_t bell;
    _Atomic uint32_t sleeping;
    /* Written once at set-up, then per step by the owner (slot by parity). */
    _Alignas(SHM_LINE) int32_t pid;
    int32_t cma_ok;
    uint64_t probe_addr; /* a private word peers read to test process_vm_readv */
    uint64_t probe_value;
    shm_slot_hdr slot[2];
} shm_rank_ctrl;

/* Point-to-point channel from one sender to one receiver. */
typedef struct shm_mailbox {
    /* Sender side: chunks posted so far, and what the latest one holds. */
    _Alignas(SHM_LINE) _Atomic uint64_t post;
    coll_sig sig;      /* count/dtype of the whole message */
    uint64_t total;    /* bytes of the whole message */
    uint64_t addr;     /* != 0: the receiver reads the sender's buffer here (CMA) */
    uint64_t off, len; /* this chunk, when it travels through the mailbox buffer */
    /* Receiver side: chunks consumed so far. */
    _Alignas(SHM_LINE) _Atomic uint64_t ack;
} shm_mailbox;

typedef struct shm_header {
    _Alignas(SHM_LINE) uint64_t magic;
    int32_t nranks;
    int32_t pad;
    uint64_t slot_bytes, mbox_bytes, total_bytes;
    /* First rank to give up records why, so peers stop waiting at once. */
    _Alignas(SHM_LINE) _Atomic int32_t abort_status; /* 0: not aborted */
    int32_t abort_by, abort_rank;
} shm_header;

#endif
