/* libcudart by dlopen; see cuda_rt.h. */
#include "core/cuda_rt.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "core/dlopen_lib.h"
#include "core/errbuf.h"

static const char *const default_sonames[] = {"libcudart.so",      "libcudart.so.13",
                                              "libcudart.so.12",   "libcudart.so.11.0",
                                              "libcudart.so.10.2", NULL};

static coll__cudart rt;

/* Every symbol or the first missing one, named. */
static int bind_symbols(void *handle, char *err, size_t errlen)
{
#define SYM(field, name)                                                                  \
    do {                                                                                  \
        *(void **)(&rt.field) = dlsym(handle, name);                                      \
        if (!rt.field) {                                                                  \
            snprintf(err, errlen,                                                         \
                     "%s has no %s: a CUDA runtime older than 10.2? install a newer one", \
                     rt.soname, name);                                                    \
            return -1;                                                                    \
        }                                                                                 \
    } while (0)
    SYM(GetDeviceCount, "cudaGetDeviceCount");
    SYM(SetDevice, "cudaSetDevice");
    SYM(GetDevice, "cudaGetDevice");
    SYM(Malloc, "cudaMalloc");
    SYM(Free, "cudaFree");
    SYM(MallocHost, "cudaMallocHost");
    SYM(FreeHost, "cudaFreeHost");
    SYM(Memcpy, "cudaMemcpy");
    SYM(Memset, "cudaMemset");
    SYM(StreamCreate, "cudaStreamCreate");
    SYM(StreamDestroy, "cudaStreamDestroy");
    SYM(StreamSynchronize, "cudaStreamSynchronize");
    SYM(StreamQuery, "cudaStreamQuery");
    SYM(EventCreate, "cudaEventCreate");
    SYM(EventDestroy, "cudaEventDestroy");
    SYM(EventRecord, "cudaEventRecord");
    SYM(EventSynchronize, "cudaEventSynchronize");
    SYM(EventElapsedTime, "cudaEventElapsedTime");
    SYM(PointerGetAttributes, "cudaPointerGetAttributes");
    SYM(DriverGetVersion, "cudaDriverGetVersion");
    SYM(RuntimeGetVersion, "cudaRuntimeGetVersion");
    SYM(GetDeviceProperties, "cudaGetDeviceProperties");
    SYM(DeviceSynchronize, "cudaDeviceSynchronize");
    SYM(GetLastError, "cudaGetLastError");
    SYM(GetErrorString, "cudaGetErrorString");
    SYM(GetErrorName, "cudaGetErrorName");
#undef SYM
    if (rt.RuntimeGetVersion(&rt.runtime_version) != 0) rt.runtime_version = 0;
    return 0;
}

static const coll__lib_spec spec = {
    "CUDA runtime", COLL_CUDART_ENV, default_sonames,
    "pip install nvidia-cuda-runtime-cu12 or apt install cuda-cudart-12-x"};
static coll__lazy_lib cudart = COLL_LAZY_LIB(&spec, rt, bind_symbols);

const coll__cudart *coll__cudart_load(char *err, size_t errlen)
{
    return coll__lazy_lib_load(&cudart, err, errlen);
}

const coll__cudart *coll__cudart_loaded(void) { return coll__lazy_lib_loaded(&cudart); }

void coll__cudart_unload(void) { coll__lazy_lib_unload(&cudart); }

const char *coll__cuda_strerror(int e, char *buf, size_t len)
{
    const coll__cudart *r = coll__cudart_loaded();
    if (!r) snprintf(buf, len, "CUDA error %d", e);
    else snprintf(buf, len, "%s: %s", r->GetErrorName(e), r->GetErrorString(e));
    return buf;
}

void coll__cuda_version_string(int v, char *buf, size_t len)
{
    if (v <= 0) snprintf(buf, len, "none");
    else snprintf(buf, len, "%d.%d", v / 1000, (v % 1000) / 10);
}

/* Why cudaGetDeviceCount failed, with what to do about it. */
static void explain_count_error(const coll__cudart *r, int e, char *err, size_t errlen)
{
    char what[200], drv[16], run[16];
    int driver = 0;
    coll__cuda_strerror(e, what, sizeof what);
    r->GetLastError(); /* reset the last-error state so later calls start clean */
    if (r->DriverGetVersion(&driver) != 0) driver = 0;
    coll__cuda_version_string(driver, drv, sizeof drv);
    coll__cuda_version_string(r->runtime_version, run, sizeof run);
    if (e == COLL_CUDA_ERR_INSUFFICIENT_DRIVER && driver == 0)
        coll__set_err(err, errlen,
                      "no CUDA driver: cudaGetDeviceCount: %s (no libcuda.so.1: install the NVIDIA "
                      "driver or run on a GPU machine)",
                      what);
    else if (e == COLL_CUDA_ERR_INSUFFICIENT_DRIVER)
        coll__set_err(
            err, errlen,
            "CUDA driver too old: it supports CUDA %s but %s is CUDA %s: update the NVIDIA "
            "driver, or point %s at an older libcudart",
            drv, r->soname, run, COLL_CUDART_ENV);
    else if (e == COLL_CUDA_ERR_NO_DEVICE)
        coll__set_err(err, errlen, "no CUDA device: cudaGetDeviceCount: %s (driver %s)", what, drv);
    else
        coll__set_err(err, errlen,
                      "no usable CUDA device: cudaGetDeviceCount: %s (driver %s, runtime %s)", what,
                      drv, run);
}

int coll__cuda_device_count(int *count, char *err, size_t errlen)
{
    *count = 0;
    const coll__cudart *r = coll__cudart_load(err, errlen);
    if (!r) return COLL_EUNAVAIL;
    int n = 0, e = r->GetDeviceCount(&n);
    if (e != COLL_CUDA_SUCCESS) {
        explain_count_error(r, e, err, errlen);
        return COLL_EUNAVAIL;
    }
    if (n <= 0) {
        coll__set_err(err, errlen, "no CUDA device: cudaGetDeviceCount found none");
        return COLL_EUNAVAIL;
    }
    *count = n;
    return COLL_OK;
}

int coll__cuda_select_device(int local_rank, int *dev, char *err, size_t errlen)
{
    int n, rc = coll__cuda_device_count(&n, err, errlen);
    if (rc) return rc;
    const coll__cudart *r = coll__cudart_loaded();
    int d = (local_rank < 0 ? 0 : local_rank) % n;
    int e = r->SetDevice(d);
    if (e != COLL_CUDA_SUCCESS) {
        char what[200];
        coll__set_err(err, errlen, "cudaSetDevice(%d) for local rank %d: %s", d, local_rank,
                      coll__cuda_strerror(e, what, sizeof what));
        return COLL_EUNAVAIL;
    }
    if (dev) *dev = d;
    return COLL_OK;
}

/* cudaPointerAttributes (CUDA >= 10): enum cudaMemoryType type; int device; ...
 * type: 0 unregistered host, 1 host (pinned), 2 device, 3 managed. */
static int memory_type(const void *ptr)
{
    const coll__cudart *r = coll__cudart_loaded();
    if (!r || !ptr) return 0;
    union {
        int type;
        char bytes[128];
    } attr;
    memset(&attr, 0, sizeof attr);
    if (r->PointerGetAttributes(&attr, ptr) != COLL_CUDA_SUCCESS) {
        r->GetLastError(); /* CUDA < 11 fails for plain host memory: not an error for us */
        return 0;
    }
    return attr.type;
}

int coll__cuda_is_device_ptr(const void *ptr) { return memory_type(ptr) == 2; }

int coll__cuda_is_gpu_accessible(const void *ptr)
{
    int t = memory_type(ptr);
    return t == 2 || t == 3;
}

int coll__cuda_copy(void *dst, const void *src, size_t bytes, int kind, char *err, size_t errlen)
{
    const coll__cudart *r = coll__cudart_load(err, errlen);
    if (!r) return COLL_EUNAVAIL;
    if (bytes == 0) return COLL_OK;
    int e = r->Memcpy(dst, src, bytes, kind);
    if (e == COLL_CUDA_SUCCESS) return COLL_OK;
    char what[200];
    coll__set_err(err, errlen, "cudaMemcpy of %zu bytes: %s", bytes,
                  coll__cuda_strerror(e, what, sizeof what));
    return COLL_ESYS;
}

int coll__cuda_device_name(int dev, char *name, size_t len, long long *total_mem)
{
    const coll__cudart *r = coll__cudart_loaded();
    /* cudaDeviceProp starts with char name[256]; 16-byte uuid, 8-byte luid and a
     * 4-byte mask follow, then size_t totalGlobalMem at offset 288 (CUDA 10-13).
     * The buffer is far larger than the struct of any version. */
    static _Thread_local union {
        char bytes[8192];
        size_t align;
    } prop;
    if (total_mem) *total_mem = -1;
    if (!r) return COLL_EUNAVAIL;
    memset(&prop, 0, sizeof prop);
    if (r->GetDeviceProperties(&prop, dev) != COLL_CUDA_SUCCESS) {
        r->GetLastError();
        snprintf(name, len, "unknown");
        return COLL_ESYS;
    }
    prop.bytes[255] = '\0';
    snprintf(name, len, "%s", prop.bytes);
    if (total_mem) {
        size_t mem;
        memcpy(&mem, prop.bytes + 288, sizeof mem);
        *total_mem = (long long)mem;
    }
    return COLL_OK;
}
