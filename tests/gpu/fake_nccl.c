/* A stand-in libnccl for one rank (tests only): every collective of a single
 * rank is a copy, done at once; grouped sends to itself meet their receives at
 * ncclGroupEnd. With fake_cudart it runs the nccl backend's whole path
 * (store agreement, unique id, staging, waiting) without a GPU. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char internal[128];
} id_t_;
static int comm_token;
static struct {
    const void *p;
    size_t n;
} pending_send[64];
static struct {
    void *p;
    size_t n;
} pending_recv[64];
static int nsend, nrecv, grouped;

static size_t dsize(int dt)
{
    static const size_t s[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2};
    return dt >= 0 && dt < 10 ? s[dt] : 0;
}

int ncclGetVersion(int *v)
{
    *v = 22105;
    return 0;
}
int ncclGetUniqueId(id_t_ *id)
{
    memset(id, 7, sizeof *id);
    return 0;
}
int ncclCommInitRank(void **comm, int n, id_t_ id, int rank)
{
    (void)id;
    if (n != 1 || rank != 0) return 5; /* ncclInvalidUsage: one rank only */
    *comm = &comm_token;
    return 0;
}
int ncclCommDestroy(void *c)
{
    (void)c;
    return 0;
}
int ncclCommAbort(void *c)
{
    (void)c;
    return 0;
}
int ncclCommGetAsyncError(void *c, int *e)
{
    (void)c;
    *e = 0;
    return 0;
}
const char *ncclGetErrorString(int r) { return r ? "fake nccl error" : "no error"; }

/* NCCL works on device memory: the fake CUDA runtime the backend loaded
 * gives its writable address (NULL for a host pointer). */
static void *backing(const void *p)
{
    const char *path = getenv("COLL_CUDART_PATH");
    void *h = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
    void *(*fn)(const void *) = h ? (void *(*)(const void *))dlsym(h, "fake_cuda_backing") : NULL;
    if (h) dlclose(h);
    return fn ? fn(p) : NULL;
}

static int copy(void *dst, const void *src, size_t count, int dt)
{
    void *d = backing(dst), *sp = backing(src);
    if (!dsize(dt) || !d || !sp) return 4; /* ncclInvalidArgument: a host pointer */
    memmove(d, sp, count * dsize(dt));
    return 0;
}
int ncclAllReduce(const void *s, void *r, size_t n, int dt, int op, void *c, void *st)
{
    (void)op;
    (void)c;
    (void)st;
    return copy(r, s, n, dt);
}
int ncclBroadcast(const void *s, void *r, size_t n, int dt, int root, void *c, void *st)
{
    (void)root;
    (void)c;
    (void)st;
    return copy(r, s, n, dt);
}
int ncclReduce(const void *s, void *r, size_t n, int dt, int op, int root, void *c, void *st)
{
    (void)op;
    (void)root;
    (void)c;
    (void)st;
    return copy(r, s, n, dt);
}
int ncclAllGather(const void *s, void *r, size_t n, int dt, void *c, void *st)
{
    (void)c;
    (void)st;
    return copy(r, s, n, dt);
}
int ncclReduceScatter(const void *s, void *r, size_t n, int dt, int op, void *c, void *st)
{
    (void)op;
    (void)c;
    (void)st;
    return copy(r, s, n, dt);
}

int ncclGroupStart(void)
{
    grouped = 1;
    nsend = nrecv = 0;
    return 0;
}
int ncclSend(const void *s, size_t n, int dt, int peer, void *c, void *st)
{
    (void)c;
    (void)st;
    if (!grouped || peer != 0 || nsend == 64) return 5;
    if (!(pending_send[nsend].p = backing(s)) && n) return 4;
    pending_send[nsend++].n = n * dsize(dt);
    return 0;
}
int ncclRecv(void *r, size_t n, int dt, int peer, void *c, void *st)
{
    (void)c;
    (void)st;
    if (!grouped || peer != 0 || nrecv == 64) return 5;
    if (!(pending_recv[nrecv].p = backing(r)) && n) return 4;
    pending_recv[nrecv++].n = n * dsize(dt);
    return 0;
}
int ncclGroupEnd(void)
{
    grouped = 0;
    if (nsend != nrecv) return 5;
    for (int i = 0; i < nsend; i++) {
        if (pending_send[i].n != pending_recv[i].n) return 5;
        memmove(pending_recv[i].p, pending_send[i].p, pending_send[i].n);
    }
    return 0;
}
