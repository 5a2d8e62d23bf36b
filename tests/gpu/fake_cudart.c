/* A stand-in libcudart for machines without a GPU (tests only). "Device"
 * memory is a memfd mapped twice: the address handed out is PROT_NONE, so any
 * host access to a device pointer crashes (as it would on a GPU), and the
 * copies go through the second, writable mapping. Every staging and mirroring
 * path of collbench therefore has to be right to pass.
 * FAKE_CUDA_MAX_ALLOC=N makes cudaMalloc of more than N bytes fail (out of
 * memory). Loaded through COLL_CUDART_PATH. */
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_ALLOCS 4096
static struct {
    void *p;
    size_t n;
    char *backing;
} allocs[MAX_ALLOCS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int stream_token, last_error;

static int fail(int e) { return last_error = e; }

int cudaGetDeviceCount(int *n)
{
    *n = 1;
    return 0;
}
int cudaSetDevice(int d) { return d == 0 ? 0 : fail(101); }
int cudaGetDevice(int *d)
{
    *d = 0;
    return 0;
}
int cudaDriverGetVersion(int *v)
{
    *v = 12040;
    return 0;
}
int cudaRuntimeGetVersion(int *v)
{
    *v = 12040;
    return 0;
}
int cudaGetLastError(void)
{
    int e = last_error;
    last_error = 0;
    return e;
}
const char *cudaGetErrorName(int e)
{
    return e == 2 ? "cudaErrorMemoryAllocation" : e ? "cudaErrorFake" : "cudaSuccess";
}
const char *cudaGetErrorString(int e)
{
    return e == 2 ? "out of memory" : e ? "fake error" : "no error";
}

static size_t mapped(size_t n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return (n ? n + page - 1 : page) / page * page;
}

int cudaMalloc(void **p, size_t n)
{
    const char *max = getenv("FAKE_CUDA_MAX_ALLOC");
    if (max && n > strtoull(max, NULL, 10)) return fail(2);
    size_t len = mapped(n);
    int fd = memfd_create("fake-cuda", 0);
    if (fd < 0 || ftruncate(fd, (off_t)len) != 0) {
        if (fd >= 0) close(fd);
        return fail(2);
    }
    void *dev = mmap(NULL, len, PROT_NONE, MAP_SHARED, fd, 0);
    void *back = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (dev == MAP_FAILED || back == MAP_FAILED) return fail(2);
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_ALLOCS; i++)
        if (!allocs[i].p) {
            allocs[i].p = *p = dev;
            allocs[i].n = n;
            allocs[i].backing = back;
            pthread_mutex_unlock(&lock);
            return 0;
        }
    pthread_mutex_unlock(&lock);
    return fail(2);
}

int cudaFree(void *p)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_ALLOCS; i++)
        if (p && allocs[i].p == p) {
            munmap(allocs[i].p, mapped(allocs[i].n));
            munmap(allocs[i].backing, mapped(allocs[i].n));
            allocs[i].p = NULL;
        }
    pthread_mutex_unlock(&lock);
    return 0;
}

int cudaMallocHost(void **p, size_t n)
{
    *p = malloc(n);
    return *p ? 0 : fail(2);
}
int cudaFreeHost(void *p)
{
    free(p);
    return 0;
}

/* The writable address of device pointer q, or NULL when q is not device memory.
 * Exported for fake_nccl, which works on device pointers too. */
void *fake_cuda_backing(const void *q)
{
    void *b = NULL;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < MAX_ALLOCS && !b; i++)
        if (allocs[i].p && (uintptr_t)q >= (uintptr_t)allocs[i].p &&
            (uintptr_t)q < (uintptr_t)allocs[i].p + (allocs[i].n ? allocs[i].n : 1))
            b = allocs[i].backing + ((uintptr_t)q - (uintptr_t)allocs[i].p);
    pthread_mutex_unlock(&lock);
    return b;
}

static int is_device(const void *q) { return fake_cuda_backing(q) != NULL; }

int cudaPointerGetAttributes(void *attr, const void *q)
{
    int type = is_device(q) ? 2 : 0;
    memset(attr, 0, 24);
    memcpy(attr, &type, sizeof type);
    return 0;
}

/* kind 1 host->device, 2 device->host, 3 device->device, 4 inferred */
int cudaMemcpy(void *dst, const void *src, size_t n, int kind)
{
    void *d = fake_cuda_backing(dst);
    const void *sp = fake_cuda_backing(src);
    if ((kind == 1 || kind == 3) && n && !d) return fail(1);
    if ((kind == 2 || kind == 3) && n && !sp) return fail(1);
    memmove(d ? d : dst, sp ? sp : src, n);
    return 0;
}

int cudaMemset(void *p, int v, size_t n)
{
    void *b = fake_cuda_backing(p);
    if (!b) return fail(1);
    memset(b, v, n);
    return 0;
}
int cudaStreamCreate(void **s)
{
    *s = &stream_token;
    return 0;
}
int cudaStreamDestroy(void *s)
{
    (void)s;
    return 0;
}
int cudaStreamSynchronize(void *s)
{
    (void)s;
    return 0;
}
int cudaStreamQuery(void *s)
{
    (void)s;
    return 0;
}
int cudaDeviceSynchronize(void) { return 0; }

int cudaEventCreate(void **e)
{
    *e = calloc(1, sizeof(double));
    return 0;
}
int cudaEventDestroy(void *e)
{
    free(e);
    return 0;
}
int cudaEventRecord(void *e, void *s)
{
    struct timespec ts;
    (void)s;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    *(double *)e = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
    return 0;
}
int cudaEventSynchronize(void *e)
{
    (void)e;
    return 0;
}
int cudaEventElapsedTime(float *ms, void *a, void *b)
{
    *ms = (float)(*(double *)b - *(double *)a);
    return 0;
}

int cudaGetDeviceProperties(void *prop, int d)
{
    size_t mem = (size_t)16 << 30;
    if (d != 0) return fail(101);
    strcpy(prop, "Fake CUDA device");
    memcpy((char *)prop + 288, &mem, sizeof mem);
    return 0;
}
