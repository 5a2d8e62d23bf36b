/* Layout of a shared-memory communicator's segment. Everything another rank
 * writes sits on its own SHM_LINE so that ranks never share a cache line they
 * both write (adjacent-line prefetch pulls pairs of 64-byte lines, hence 128). */
#ifndef COLL_SHM_LAYOUT_H
#define COLL_SHM_LAYOUT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "core/sig.h"

#define SHM_LINE 128
#define SHM_MAGIC 0x636f6c6c73686d31ull /* "collshm1" */

#define SHM_INLINE 64 /* bytes of data that travel inside a post */
#define SHM_POST_PLAIN 1u
#define SHM_POST_PROBE 2u
#define SHM_POST_NONBLOCKING 4u

/* What a rank posts at a collective's arrival: the call, where its buffers are
 * (for peers that map or read them), and small messages' data, all on the
 * lines a peer reads anyway; seq, stored last, says which step it is for.
 * Two of them, by step parity. */
typedef struct shm_post {
    _Alignas(SHM_LINE) _Atomic uint64_t seq;
    coll__sig sig;
    uint64_t sendbuf, recvbuf;
    /* All-reduce on private buffers: bytes of its input this rank copied into
     * its scratch before arriving (0: none; shm_direct.c). */
    uint64_t staged;
    /* SHM_POST_PLAIN: its send and receive buffers are in 4 KiB pages
     * (backend/shm/shm_page_kind.h): the plan's windows on plain pages ask
     * every rank's. SHM_POST_PROBE (rank 0's): every rank probes its plan
     * again (shm.c). SHM_POST_NONBLOCKING: the call runs on its progress
     * thread (coll__call.nonblocking). 64 bits, so that the inline data
     * after it stays 8-byte aligned (staging reduces doubles and int64s
     * straight from it). */
    uint64_t flags;
    unsigned char data[SHM_INLINE];
} shm_post;
_Static_assert(offsetof(shm_post, data) % 8 == 0,
               "a post's inline data is reduced as doubles and int64s in place");

typedef struct shm_rank_ctrl {
    /* Steps this rank has finished: only grows; written by its owner only. */
    _Alignas(SHM_LINE) _Atomic uint64_t progress;
    /* Doorbell: when sleeping says the owner sleeps on it, peers bump it after
     * publishing anything the owner may wait for, and FUTEX_WAKE it. Awake
     * owners are not disturbed: their line stays in their cache. */
    _Alignas(SHM_LINE) _Atomic uint32_t bell;
    _Atomic uint32_t sleeping;
    /* Direct all-reduce chunk this rank works on, + 1 (0: none), so that a
     * rank that hangs holding one is the rank the others name. */
    _Alignas(SHM_LINE) _Atomic uint64_t busy;
    /* Direct all-reduce: chunks of this rank's home ranges claimed (by it or
     * by a rank that ran out of its own), over the communicator's life. */
    _Alignas(SHM_LINE) _Atomic uint64_t claimed;
    /* Blocks this rank freed from its heap: a free unmaps the block's pages
     * from every process, so peers populate their mappings again (shm_direct.c). */
    _Atomic uint64_t heap_frees;
    /* All-reduce on private buffers (shm_direct.c): where this rank's copy-in
     * scratch lies in its heap (its own address; 0: none) and its bytes (the
     * first half inputs, the second results), written by the owner between an
     * arrival and the step peers wait on. */
    uint64_t scratch, scratch_bytes;
    /* Written once at set-up, then by the owner when it changes. */
    _Alignas(SHM_LINE) int32_t pid;
    int32_t cma_ok;
    int32_t heap_ok;     /* this rank mapped every peer's heap (shm_heap.h) */
    int32_t oversub;     /* it counts more ranks than its cores (shm_oversub.h) */
    int32_t probe_core;  /* the probes it would take part in, as bits (shm.c) */
    _Atomic int32_t cpu; /* where it ran at its last arrival (written on change) */
    uint64_t probe_addr; /* a private word peers read to test process_vm_readv */
    uint64_t probe_value;
    shm_post post[2];
} shm_rank_ctrl;

/* Point-to-point channel from one sender to one receiver. */
typedef struct shm_mailbox {
    /* Sender side: chunks posted so far, and what the latest one holds. */
    _Alignas(SHM_LINE) _Atomic uint64_t post;
    coll__sig sig;     /* count/dtype of the whole message */
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
    /* Atomic: another rank, or this rank's auto pipe thread, may write them
     * while a wait reads them. */
    _Atomic int32_t abort_by;   /* the rank that gave up (of this group) */
    _Atomic int32_t abort_rank; /* the world rank it blames, maybe outside the group; -1: none */
    /* Direct all-reduce (shm_direct.c): chunks finished over the communicator's
     * life; every rank knows each call's range of them. */
    _Alignas(SHM_LINE) _Atomic uint64_t finished;
} shm_header;

#endif
