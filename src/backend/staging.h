/* Staging: a backend that can only use one kind of memory still accepts the
 * other, by copying. tcp/shm/mpi get CUDA device buffers through host memory
 * (copy in, run, copy the result back), so one GPU and several ranks can still
 * be measured; the nccl backend gets host buffers (the benchmark's own small
 * all-reduces, `collbench check`) through device memory the same way.
 *
 * A stager keeps its two staging buffers between calls (they only grow), so a
 * sweep does not allocate per iteration. In-place calls, whose send and
 * receive regions overlap, are staged as one region so the offsets survive. */
#ifndef COLL_STAGING_H
#define COLL_STAGING_H

#include <stddef.h>

#include "backend/backend.h"
#include "coll.h"

/* Memory on the other side of a stager. */
typedef struct coll__stage_mem {
    const char *what;                /* "host" or "device", for messages */
    int (*foreign)(const void *ptr); /* 1: the backend cannot use ptr, stage it */
    void *(*alloc)(size_t bytes);    /* staging memory, NULL when out of it */
    void (*release)(void *ptr);
    /* Copy between the caller's memory and staging memory (either direction). */
    int (*copy)(void *dst, const void *src, size_t bytes, coll__err *err);
} coll__stage_mem;

typedef struct coll__stager {
    const coll__stage_mem *mem;
    void *buf[2];
    size_t cap[2];
} coll__stager;

/* CUDA device buffers through (pinned) host memory: for tcp, shm, mpi. */
extern const coll__stage_mem coll__stage_device_via_host;
/* Host buffers through CUDA device memory: for nccl. */
extern const coll__stage_mem coll__stage_host_via_device;

/* Bytes a call reads from sendbuf and writes to recvbuf on this rank (0: not
 * touched there, like a broadcast's sendbuf off the root). */
void coll__call_extents(const coll__call *c, int rank, int size, size_t *send_bytes,
                        size_t *recv_bytes);

/* *staged = call with each foreign buffer replaced by staging memory that holds
 * its input; *any = 0 when no buffer was foreign (staged is then call). */
int coll__stager_begin(coll__stager *s, const coll__call *call, int rank, int size,
                       coll__call *staged, int *any, coll__err *err);
/* Copy the results from staging memory back into the caller's buffers. */
int coll__stager_end(coll__stager *s, const coll__call *call, const coll__call *staged, int rank,
                     int size, coll__err *err);
void coll__stager_free(coll__stager *s);

/* Whether call on backend b goes through host staging once the CUDA runtime is
 * loaded: not for a backend with COLL__CAP_DEVICE_BUFFERS (nccl), nor for a
 * barrier, which has no data. */
int coll__call_needs_staging(const coll__backend_ops *b, const coll__call *call);

/* The communicator's hook: run call on backend b (its state; this rank of
 * size). When the CUDA runtime has been loaded (--device cuda) and the call
 * needs staging (coll__call_needs_staging), CUDA device buffers are staged
 * through host memory of a per-thread stager. */
int coll__staged_run(const coll__backend_ops *b, void *state, int rank, int size,
                     const coll__call *call, const coll__sig *sig, double deadline, coll__err *err);

#endif
