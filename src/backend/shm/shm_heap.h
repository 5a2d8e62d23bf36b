/* Per-rank shared heaps: coll_alloc() on a shm communicator hands out memory
 * from a memfd that every peer has mapped too, so collectives on such buffers
 * read and write peers' memory with plain loads and stores (no copy through
 * the segment, no process_vm_readv system call per chunk).
 *
 * Each rank owns one sparse memfd of heap_bytes (memory is only used where
 * touched), mapped by itself and by every peer at set-up. Freed ranges are
 * punched out (MADV_REMOVE) so their memory goes back at once. */
#ifndef COLL_SHM_HEAP_H
#define COLL_SHM_HEAP_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "core/err.h"

typedef struct shm_heap_block {
    size_t off, len;
    int used;
} shm_heap_block;

typedef struct shm_heap {
    int n, self;
    size_t bytes;         /* of every rank's heap */
    int fd;               /* own memfd until every peer has mapped it */
    char **map;           /* [n] where rank r's heap is mapped here */
    uint64_t *base;       /* [n] where rank r's heap is mapped in rank r */
    pthread_mutex_t lock; /* alloc/free may race a progress thread's call */
    shm_heap_block *blk;  /* own heap, sorted by offset, covering it */
    size_t nblk, capblk;
    size_t live; /* allocations not freed yet */
} shm_heap;

/* Own heap: a memfd of bytes, mapped. 0 or a negative coll_status with err. */
int coll__shm_heap_create(shm_heap *h, int n, int self, size_t bytes, coll__err *err);
/* What peers need to map this rank's heap: "pid fd base". */
void coll__shm_heap_describe(const shm_heap *h, char *buf, size_t len);
/* Map rank r's heap from its description. */
int coll__shm_heap_attach(shm_heap *h, int r, const char *desc, coll__err *err);
/* Every peer mapped ours: the descriptor is no longer needed. */
void coll__shm_heap_seal(shm_heap *h);
void coll__shm_heap_destroy(shm_heap *h);

/* NULL when the heap is full (the caller falls back to private memory). */
void *coll__shm_heap_alloc(shm_heap *h, size_t bytes);
/* 1 when ptr came from coll__shm_heap_alloc (and is now freed), else 0. */
int coll__shm_heap_free(shm_heap *h, void *ptr);

/* Rank r's address addr (bytes long) as seen here, or NULL when that range is
 * not inside rank r's heap. */
void *coll__shm_heap_peer(const shm_heap *h, int r, uint64_t addr, size_t bytes);

#endif
