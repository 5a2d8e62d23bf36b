/* Staging between host and CUDA device memory; see staging.h. */
#include "backend/staging.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/alloc.h"
#include "core/cuda_rt.h"

void coll__call_extents(const coll__call *c, int rank, int size, size_t *send_bytes,
                        size_t *recv_bytes)
{
    size_t es = coll_dtype_size(c->dt), n = c->count * es, all = n * (size_t)size;
    size_t s = 0, r = 0;
    switch (c->kind) {
    case COLL_KIND_ALLREDUCE: s = n, r = n; break;
    case COLL_KIND_ALLGATHER: s = n, r = all; break;
    case COLL_KIND_REDUCESCATTER: s = all, r = n; break;
    case COLL_KIND_BROADCAST: s = rank == c->root ? n : 0, r = n; break;
    case COLL_KIND_REDUCE: s = n, r = rank == c->root ? n : 0; break;
    case COLL_KIND_ALLTOALL: s = all, r = all; break;
    case COLL_KIND_P2P:
        s = c->dest >= 0 ? n : 0;
        r = coll__call_receives(c) ? c->recvcount * es : 0;
        break;
    default: break; /* barrier: no data */
    }
    *send_bytes = c->sendbuf ? s : 0;
    *recv_bytes = c->recvbuf ? r : 0;
}

/* Staging buffer i of at least bytes (grown, never shrunk). */
static void *ensure(coll__stager *s, int i, size_t bytes, coll__err *err)
{
    if (s->buf[i] && s->cap[i] >= bytes) return s->buf[i];
    if (s->buf[i]) s->mem->release(s->buf[i]);
    s->buf[i] = s->mem->alloc(bytes ? bytes : 1);
    s->cap[i] = s->buf[i] ? bytes : 0;
    if (!s->buf[i])
        coll__err_set(err, 0, "cannot allocate %zu bytes of %s memory to stage a buffer", bytes,
                      s->mem->what);
    return s->buf[i];
}

static int overlap(const char *a, size_t an, const char *b, size_t bn)
{
    return (uintptr_t)a < (uintptr_t)b + bn && (uintptr_t)b < (uintptr_t)a + an;
}

int coll__stager_begin(coll__stager *s, const coll__call *call, int rank, int size,
                       coll__call *staged, int *any, coll__err *err)
{
    size_t sb, rb;
    coll__call_extents(call, rank, size, &sb, &rb);
    const char *sp = call->sendbuf, *rp = call->recvbuf;
    int sf = sb && s->mem->foreign(sp), rf = rb && s->mem->foreign(rp);
    *staged = *call;
    *any = sf || rf;
    if (!*any) return COLL_OK;
    if (sf && rf && overlap(sp, sb, rp, rb)) { /* in-place: one region, offsets kept */
        const char *lo = (uintptr_t)sp < (uintptr_t)rp ? sp : rp;
        const char *hi = (uintptr_t)(sp + sb) > (uintptr_t)(rp + rb) ? sp + sb : rp + rb;
        char *b = ensure(s, 0, (size_t)(hi - lo), err);
        if (!b) return COLL_ENOMEM;
        int rc = s->mem->copy(b, lo, (size_t)(hi - lo), err);
        if (rc) return rc;
        staged->sendbuf = b + (sp - lo);
        staged->recvbuf = b + (rp - lo);
        return COLL_OK;
    }
    if (sf) {
        char *b = ensure(s, 0, sb, err);
        if (!b) return COLL_ENOMEM;
        int rc = s->mem->copy(b, sp, sb, err);
        if (rc) return rc;
        staged->sendbuf = b;
    }
    if (rf) {
        char *b = ensure(s, 1, rb, err);
        if (!b) return COLL_ENOMEM;
        staged->recvbuf = b; /* every collective overwrites its whole receive region */
    }
    /* A sendbuf the call does not read (broadcast off the root) follows recvbuf
     * when it was the same buffer, so the backend still sees an in-place call. */
    if (!sb && call->sendbuf == call->recvbuf) staged->sendbuf = staged->recvbuf;
    return COLL_OK;
}

int coll__stager_end(coll__stager *s, const coll__call *call, const coll__call *staged, int rank,
                     int size, coll__err *err)
{
    size_t sb, rb;
    coll__call_extents(call, rank, size, &sb, &rb);
    if (!rb || staged->recvbuf == call->recvbuf) return COLL_OK;
    return s->mem->copy(call->recvbuf, staged->recvbuf, rb, err);
}

void coll__stager_free(coll__stager *s)
{
    for (int i = 0; i < 2; i++) {
        if (s->buf[i]) s->mem->release(s->buf[i]);
        s->buf[i] = NULL;
        s->cap[i] = 0;
    }
}

/* ---- the two kinds of memory ---- */

static int stage_copy(void *dst, const void *src, size_t bytes, coll__err *err)
{
    return coll__cuda_copy(dst, src, bytes, COLL_CUDA_DEFAULT, err->msg, sizeof err->msg);
}

/* Pinned host memory copies at full PCIe speed; plain memory when pinning fails.
 * A small header remembers which, for release. */
#define HOST_HEADER 64
static void *host_alloc(size_t bytes)
{
    const coll__cudart *rt = coll__cudart_loaded();
    char *p = NULL;
    int pinned = rt && rt->MallocHost((void **)&p, bytes + HOST_HEADER) == COLL_CUDA_SUCCESS;
    if (!pinned) {
        if (rt) rt->GetLastError();
        if (!(p = coll__alloc_aligned_to(HOST_HEADER, bytes + HOST_HEADER))) return NULL;
    }
    p[0] = (char)pinned;
    return p + HOST_HEADER;
}

static void host_release(void *ptr)
{
    char *p = (char *)ptr - HOST_HEADER;
    const coll__cudart *rt = coll__cudart_loaded();
    if (p[0] && rt) rt->FreeHost(p);
    else free(p);
}

static void *device_alloc(size_t bytes)
{
    const coll__cudart *rt = coll__cudart_loaded();
    void *p = NULL;
    if (!rt || rt->Malloc(&p, bytes) != COLL_CUDA_SUCCESS) {
        if (rt) rt->GetLastError();
        return NULL;
    }
    return p;
}

static void device_release(void *ptr)
{
    const coll__cudart *rt = coll__cudart_loaded();
    if (rt) rt->Free(ptr);
}

static int not_gpu_accessible(const void *ptr) { return !coll__cuda_is_gpu_accessible(ptr); }

const coll__stage_mem coll__stage_device_via_host = {.what = "host",
                                                     .foreign = coll__cuda_is_device_ptr,
                                                     .alloc = host_alloc,
                                                     .release = host_release,
                                                     .copy = stage_copy};

const coll__stage_mem coll__stage_host_via_device = {.what = "device",
                                                     .foreign = not_gpu_accessible,
                                                     .alloc = device_alloc,
                                                     .release = device_release,
                                                     .copy = stage_copy};

/* ---- the communicator's hook ---- */

/* One stager per thread: a communicator runs one call at a time per thread
 * (caller or progress thread), and a thread-local one needs no lock. */
static pthread_key_t stager_key;
static pthread_once_t stager_once = PTHREAD_ONCE_INIT;
static int stager_key_ok;

static void stager_destroy(void *p)
{
    coll__stager_free(p);
    free(p);
}

static void stager_key_init(void)
{
    stager_key_ok = pthread_key_create(&stager_key, stager_destroy) == 0;
}

static coll__stager *thread_stager(void)
{
    pthread_once(&stager_once, stager_key_init);
    if (!stager_key_ok) return NULL;
    coll__stager *s = pthread_getspecific(stager_key);
    if (s) return s;
    s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->mem = &coll__stage_device_via_host;
    if (pthread_setspecific(stager_key, s) != 0) {
        free(s);
        return NULL;
    }
    return s;
}

int coll__call_needs_staging(const coll__backend_ops *b, const coll__call *call)
{
    return !(b->caps & COLL__CAP_DEVICE_BUFFERS) && call->kind != COLL_KIND_BARRIER;
}

int coll__staged_run(const coll__backend_ops *b, void *state, int rank, int size,
                     const coll__call *call, const coll__sig *sig, double deadline, coll__err *err)
{
    if (!coll__cudart_loaded() || !coll__call_needs_staging(b, call))
        return b->run(state, call, sig, deadline, err);
    coll__stager *s = thread_stager();
    if (!s) {
        return coll__err_set(err, COLL_ENOMEM,
                             "rank %d: out of memory for the staging of device buffers", rank);
    }
    coll__call staged;
    int any, rc = coll__stager_begin(s, call, rank, size, &staged, &any, err);
    if (rc) return rc;
    rc = b->run(state, any ? &staged : call, sig, deadline, err);
    if (rc == COLL_OK && any) rc = coll__stager_end(s, call, &staged, rank, size, err);
    return rc;
}
