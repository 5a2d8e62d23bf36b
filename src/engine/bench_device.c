/* Benchmark buffers on the host or on a CUDA device; see bench_device.h. */
#include "engine/bench_device.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/cuda_rt.h"
#include "core/errbuf.h"
#include "core/populate.h"

int bench_device_is_cuda(const char *device) { return device && strcmp(device, "cuda") == 0; }

int bench_device_open(const char *device, int local_rank, int *ngpus, char *err, size_t errlen)
{
    int n = 0;
    if (ngpus) *ngpus = 0;
    if (!bench_device_is_cuda(device)) return COLL_OK;
    int rc = coll__cuda_device_count(&n, err, errlen);
    if (rc == COLL_OK && local_rank >= 0)
        rc = coll__cuda_select_device(local_rank, NULL, err, errlen);
    if (ngpus) *ngpus = n;
    return rc;
}

static void *device_alloc(size_t bytes, char *err, size_t errlen)
{
    const coll__cudart *rt = coll__cudart_loaded();
    void *p = NULL;
    int e = rt->Malloc(&p, bytes);
    if (e == COLL_CUDA_SUCCESS) return p;
    char why[200];
    coll__set_err(err, errlen, "cudaMalloc of %zu bytes: %s", bytes,
                  coll__cuda_strerror(e, why, sizeof why));
    rt->GetLastError();
    return NULL;
}

#define HUGE_PAGE ((size_t)2 << 20)
#define MALLOC_ALIGN 64 /* PyTorch's CPU allocator's alignment (c10 gAlignment) */

/* What a private buffer occupies: thp maps whole huge pages. */
static size_t mapped_len(size_t bytes, int huge)
{
    return huge ? (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE : bytes;
}

/* Buffers freed and kept for the next allocation of the same kind and length:
 * a process that runs several communicators in turn (collbench --same-ranks)
 * first-touches its buffers once, not once per backend. Single-threaded, like
 * the benchmark that calls it; what is kept goes with the process. */
#define KEPT 2
static struct kept_buf {
    void *p;
    size_t len;
    int huge;
} kept[KEPT];

static void *take_kept(size_t len, int huge)
{
    for (int i = 0; i < KEPT; i++)
        if (kept[i].p && kept[i].len == len && kept[i].huge == huge) {
            void *p = kept[i].p;
            kept[i].p = NULL;
            return p;
        }
    return NULL;
}

/* thp: anonymous, 2 MiB aligned and MADV_HUGEPAGE: the first write of a
 * fresh GiB costs seconds in 4 KiB page faults (bench/first_touch.c) and far
 * less in 2 MiB ones where THP is "madvise" (Debian's and Ubuntu's default).
 * Frameworks do not allocate so, and kernel copies (CMA, MPI's) run faster
 * on huge pages: it is a kind of its own, not what malloc rows measure. */
static void *huge_alloc(size_t len)
{
    char *p = mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
                   0);
    if (p == MAP_FAILED) return NULL;
    size_t head = (HUGE_PAGE - (uintptr_t)p % HUGE_PAGE) % HUGE_PAGE;
    if (head) munmap(p, head);
    munmap(p + head + len, HUGE_PAGE - head);
    p += head;
#ifdef MADV_HUGEPAGE
    madvise(p, len, MADV_HUGEPAGE); /* a hint: where THP is off, 4 KiB pages as before */
#endif
    return p;
}

/* Private host memory of either kind. Not zeroed: a kept buffer holds what
 * was last written, and every size writes its inputs first. */
static void *private_alloc(size_t bytes, int huge)
{
    size_t len = mapped_len(bytes, huge);
    void *p = take_kept(len, huge);
    if (p) return p;
    if (huge) return huge_alloc(len);
    return posix_memalign(&p, MALLOC_ALIGN, len) ? NULL : p;
}

static void release(const struct kept_buf *k)
{
    if (!k->p) return;
    if (k->huge) munmap(k->p, k->len);
    else free(k->p);
}

/* Kept in place of the oldest kept buffer, which is released. */
static void private_free(void *p, size_t bytes, int huge)
{
    if (!p) return;
    release(&kept[KEPT - 1]);
    memmove(&kept[1], &kept[0], (KEPT - 1) * sizeof kept[0]);
    kept[0] = (struct kept_buf){p, mapped_len(bytes, huge), huge};
}

int bench_buffers_alloc(bench_buffers *b, coll_comm *comm, bench_mem mem, size_t send_bytes,
                        size_t recv_bytes, char *err, size_t errlen)
{
    memset(b, 0, sizeof *b);
    b->cuda = mem == BENCH_MEM_CUDA;
    b->mem = mem;
    b->comm = comm;
    b->send_bytes = send_bytes ? send_bytes : 1;
    b->recv_bytes = recv_bytes ? recv_bytes : 1;
    if (mem == BENCH_MEM_COLL) {
        b->send = b->send_host = coll_alloc(comm, b->send_bytes);
        b->recv = b->recv_host = coll_alloc(comm, b->recv_bytes);
    } else if (mem == BENCH_MEM_MALLOC || mem == BENCH_MEM_THP) {
        b->send = b->send_host = private_alloc(b->send_bytes, mem == BENCH_MEM_THP);
        b->recv = b->recv_host = private_alloc(b->recv_bytes, mem == BENCH_MEM_THP);
    } else {
        if (!coll__cudart_loaded()) {
            coll__set_err(err, errlen, "--device cuda: the CUDA runtime is not loaded");
            return COLL_EUNAVAIL;
        }
        if (!(b->send = device_alloc(b->send_bytes, err, errlen)) ||
            !(b->recv = device_alloc(b->recv_bytes, err, errlen)))
            return BENCH_DEVICE_OOM;
        /* zeroed: the parts of a mirror no input fills are uploaded too */
        b->send_host = calloc(1, b->send_bytes);
        b->recv_host = calloc(1, b->recv_bytes);
    }
    if (!b->send || !b->recv || !b->send_host || !b->recv_host) {
        coll__set_err(err, errlen, "cannot allocate %zu + %zu bytes of host buffers", b->send_bytes,
                      b->recv_bytes);
        return COLL_ENOMEM;
    }
    if (!b->cuda) { /* one system call instead of a page fault a page (shm's heap has no THP) */
        coll__populate(b->send, b->send_bytes, 1);
        coll__populate(b->recv, b->recv_bytes, 1);
    }
    return COLL_OK;
}

void bench_buffers_free(bench_buffers *b)
{
    if (b->mem == BENCH_MEM_COLL) {
        if (b->send) coll_free(b->comm, b->send);
        if (b->recv) coll_free(b->comm, b->recv);
    } else if (b->mem == BENCH_MEM_MALLOC || b->mem == BENCH_MEM_THP) {
        private_free(b->send, b->send_bytes, b->mem == BENCH_MEM_THP);
        private_free(b->recv, b->recv_bytes, b->mem == BENCH_MEM_THP);
    } else {
        const coll__cudart *rt = coll__cudart_loaded();
        if (rt && b->send) rt->Free(b->send);
        if (rt && b->recv) rt->Free(b->recv);
        free(b->send_host);
        free(b->recv_host);
    }
    memset(b, 0, sizeof *b);
}

static int inside(const void *p, const void *base, size_t len)
{
    return base && (uintptr_t)p >= (uintptr_t)base && (uintptr_t)p < (uintptr_t)base + len;
}

void *bench_buffers_host(const bench_buffers *b, const void *p)
{
    if (!b->cuda) return (void *)p;
    if (inside(p, b->send, b->send_bytes))
        return (char *)b->send_host + ((uintptr_t)p - (uintptr_t)b->send);
    if (inside(p, b->recv, b->recv_bytes))
        return (char *)b->recv_host + ((uintptr_t)p - (uintptr_t)b->recv);
    return (void *)p;
}

int bench_buffers_upload(const bench_buffers *b, char *err, size_t errlen)
{
    if (!b->cuda) return COLL_OK;
    int rc = coll__cuda_copy(b->send, b->send_host, b->send_bytes, COLL_CUDA_H2D, err, errlen);
    return rc ? rc
              : coll__cuda_copy(b->recv, b->recv_host, b->recv_bytes, COLL_CUDA_H2D, err, errlen);
}

int bench_buffers_download(const bench_buffers *b, char *err, size_t errlen)
{
    if (!b->cuda) return COLL_OK;
    int rc = coll__cuda_copy(b->send_host, b->send, b->send_bytes, COLL_CUDA_D2H, err, errlen);
    return rc ? rc
              : coll__cuda_copy(b->recv_host, b->recv, b->recv_bytes, COLL_CUDA_D2H, err, errlen);
}

int bench_device_sync(void)
{
    const coll__cudart *rt = coll__cudart_loaded();
    if (!rt) return COLL_OK;
    return rt->DeviceSynchronize() == COLL_CUDA_SUCCESS ? COLL_OK : COLL_ESYS;
}

int bench_device_d2d_bandwidth(size_t bytes, int iters, double *gbps, double *us, char *err,
                               size_t errlen)
{
    const coll__cudart *rt = coll__cudart_load(err, errlen);
    void *a = NULL, *b = NULL;
    coll__cuda_event start = NULL, stop = NULL;
    char why[200];
    int e = 0, rc = COLL_OK;
    float best_ms = -1;
    if (!rt) return COLL_EUNAVAIL;
    if (!(a = device_alloc(bytes, err, errlen)) || !(b = device_alloc(bytes, err, errlen))) {
        rc = BENCH_DEVICE_OOM;
        goto out;
    }
    if ((e = rt->EventCreate(&start)) || (e = rt->EventCreate(&stop)) ||
        (e = rt->Memset(a, 1, bytes)) || (e = rt->Memcpy(b, a, bytes, COLL_CUDA_D2D)) /* warm-up */)
        goto cuda_fail;
    for (int i = 0; i < iters; i++) {
        float ms = 0;
        if ((e = rt->EventRecord(start, NULL)) || (e = rt->Memcpy(b, a, bytes, COLL_CUDA_D2D)) ||
            (e = rt->EventRecord(stop, NULL)) || (e = rt->EventSynchronize(stop)) ||
            (e = rt->EventElapsedTime(&ms, start, stop)))
            goto cuda_fail;
        if (best_ms < 0 || ms < best_ms) best_ms = ms;
    }
    *us = best_ms * 1e3;
    *gbps = best_ms > 0 ? (double)bytes / (best_ms * 1e-3) / 1e9 : 0;
    goto out;
cuda_fail:
    coll__set_err(err, errlen, "device-to-device copy of %zu bytes: %s", bytes,
                  coll__cuda_strerror(e, why, sizeof why));
    rt->GetLastError();
    rc = COLL_ESYS;
out:
    if (start) rt->EventDestroy(start);
    if (stop) rt->EventDestroy(stop);
    if (a) rt->Free(a);
    if (b) rt->Free(b);
    return rc;
}
