/* Where the benchmark's buffers live (--device cpu|cuda).
 *
 * cpu: coll_alloc memory (the backend's own: shm's shared heap, which its
 * all-reduce reads without copies), or with --buffers malloc private memory
 * as a framework's tensors are, or with --buffers thp private memory in huge
 * pages; the "host" view is the buffer itself.
 * cuda: cudaMalloc memory on the rank's GPU (local rank % GPUs), plus host
 * mirrors of the same size: inputs are made in the mirrors and uploaded, results
 * downloaded into them and checked there (bench_data works on host memory).
 * A cudaMalloc that fails is BENCH_DEVICE_OOM, so the runner can skip that size
 * and go on with the sweep. */
#ifndef BENCH_DEVICE_H
#define BENCH_DEVICE_H

#include <stddef.h>

#include "coll.h"

#define BENCH_DEVICE_OOM 1 /* bench_buffers_alloc: the device is out of memory */

/* coll: coll_alloc; malloc: posix_memalign'd, no advice, as PyTorch's CPU
 * allocator, NumPy and the OSU/IMB benchmarks allocate; thp: 2 MiB-aligned
 * anonymous memory with MADV_HUGEPAGE (huge pages where THP is "madvise");
 * cuda: cudaMalloc. */
typedef enum bench_mem {
    BENCH_MEM_COLL,
    BENCH_MEM_MALLOC,
    BENCH_MEM_THP,
    BENCH_MEM_CUDA
} bench_mem;

typedef struct bench_buffers {
    int cuda;
    bench_mem mem;
    coll_comm *comm;
    void *send, *recv;           /* what the collectives get */
    void *send_host, *recv_host; /* host views: mirrors (cuda) or send/recv (cpu) */
    size_t send_bytes, recv_bytes;
} bench_buffers;

/* 1 for --device cuda. */
int bench_device_is_cuda(const char *device);

/* cuda: load the CUDA runtime and make this rank's GPU current. Launcher and
 * rank alike: COLL_EUNAVAIL with why (no library, no driver, no device). */
int bench_device_open(const char *device, int local_rank, int *ngpus, char *err, size_t errlen);

/* Allocate buffers of at least one byte each. 0, BENCH_DEVICE_OOM (err says
 * which size) or COLL_ENOMEM (host memory). Free with bench_buffers_free either way. */
int bench_buffers_alloc(bench_buffers *b, coll_comm *comm, bench_mem mem, size_t send_bytes,
                        size_t recv_bytes, char *err, size_t errlen);
void bench_buffers_free(bench_buffers *b);

/* The host view of p, a pointer into send or recv (same offset in the mirror). */
void *bench_buffers_host(const bench_buffers *b, const void *p);
/* cuda: copy both mirrors to the device / both device buffers to the mirrors. */
int bench_buffers_upload(const bench_buffers *b, char *err, size_t errlen);
int bench_buffers_download(const bench_buffers *b, char *err, size_t errlen);

/* Wait until the current device is idle (inside the timed region); nothing
 * when the CUDA runtime was never loaded (--device cpu). */
int bench_device_sync(void);

/* Device-to-device cudaMemcpy bandwidth of a buffer of `bytes` on the current
 * GPU, best of iters copies timed with CUDA events: the physical reference for
 * GPU collectives. *gbps counts bytes copied (each is read once and written once). */
int bench_device_d2d_bandwidth(size_t bytes, int iters, double *gbps, double *us, char *err,
                               size_t errlen);

#endif
