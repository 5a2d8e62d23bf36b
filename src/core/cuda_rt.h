/* The CUDA runtime (libcudart), loaded with dlopen at first use so that libcoll
 * builds and runs without CUDA. Only the functions used are declared, here, in
 * the runtime's own C ABI (cudaError_t is an int, streams and events are
 * opaque pointers): no CUDA header is needed to build.
 *
 * Sonames tried: libcudart.so, .so.13, .so.12, .so.11.0, .so.10.2; the
 * environment variable COLL_CUDART_PATH (a path or a soname) replaces the list.
 * Every failure has one message naming the library, the sonames tried, and how
 * to get what is missing (no library, no driver, driver too old, no device). */
#ifndef COLL_CUDA_RT_H
#define COLL_CUDA_RT_H

#include <stddef.h>

#define COLL_CUDART_ENV "COLL_CUDART_PATH"

/* cudaMemcpyKind values */
#define COLL_CUDA_H2D 1
#define COLL_CUDA_D2H 2
#define COLL_CUDA_D2D 3
#define COLL_CUDA_DEFAULT 4 /* direction inferred from the pointers (unified addressing) */

/* cudaError_t values this project tests for */
#define COLL_CUDA_SUCCESS 0
#define COLL_CUDA_ERR_MEMORY 2
#define COLL_CUDA_ERR_INSUFFICIENT_DRIVER 35
#define COLL_CUDA_ERR_NO_DEVICE 100
#define COLL_CUDA_ERR_NOT_READY 600

typedef void *coll__cuda_stream;
typedef void *coll__cuda_event;

typedef struct coll__cudart {
    char soname[256];    /* the name that loaded */
    int runtime_version; /* 12040 is 12.4 */
    int (*GetDeviceCount)(int *count);
    int (*SetDevice)(int dev);
    int (*GetDevice)(int *dev);
    int (*Malloc)(void **ptr, size_t bytes);
    int (*Free)(void *ptr);
    int (*MallocHost)(void **ptr, size_t bytes); /* pinned host memory */
    int (*FreeHost)(void *ptr);
    int (*Memcpy)(void *dst, const void *src, size_t bytes, int kind);
    int (*Memset)(void *ptr, int value, size_t bytes);
    int (*StreamCreate)(coll__cuda_stream *s);
    int (*StreamDestroy)(coll__cuda_stream s);
    int (*StreamSynchronize)(coll__cuda_stream s);
    int (*StreamQuery)(coll__cuda_stream s);
    int (*EventCreate)(coll__cuda_event *e);
    int (*EventDestroy)(coll__cuda_event e);
    int (*EventRecord)(coll__cuda_event e, coll__cuda_stream s);
    int (*EventSynchronize)(coll__cuda_event e);
    int (*EventElapsedTime)(float *ms, coll__cuda_event start, coll__cuda_event end);
    int (*PointerGetAttributes)(void *attributes, const void *ptr);
    int (*DriverGetVersion)(int *version);
    int (*RuntimeGetVersion)(int *version);
    int (*GetDeviceProperties)(void *prop, int dev);
    int (*DeviceSynchronize)(void);
    int (*GetLastError)(void);
    const char *(*GetErrorString)(int err);
    const char *(*GetErrorName)(int err);
} coll__cudart;

/* Loads the runtime once (thread-safe); NULL with the reason in err. A failed
 * load is remembered: later calls give the same reason without trying again. */
const coll__cudart *coll__cudart_load(char *err, size_t errlen);
/* The runtime when an earlier coll__cudart_load succeeded, else NULL. Never loads. */
const coll__cudart *coll__cudart_loaded(void);
/* Forget the load (tests only: no CUDA memory or stream may be alive). */
void coll__cudart_unload(void);

/* Devices usable here (>= 1), or COLL_EUNAVAIL with why: the library missing,
 * no driver, driver too old for this runtime, no device. */
int coll__cuda_device_count(int *count, char *err, size_t errlen);
/* Make device local_rank % count current for this thread; *dev = the device. */
int coll__cuda_select_device(int local_rank, int *dev, char *err, size_t errlen);

/* 1 when ptr is CUDA device memory (not host, not managed). 0 whenever the
 * runtime is not loaded: only callers that asked for CUDA pay for the check. */
int coll__cuda_is_device_ptr(const void *ptr);
/* 1 when the GPU can address ptr directly (device or managed memory). */
int coll__cuda_is_gpu_accessible(const void *ptr);

/* cudaMemcpy with a message ("cudaMemcpy of N bytes: <cuda error>"). */
int coll__cuda_copy(void *dst, const void *src, size_t bytes, int kind, char *err, size_t errlen);

/* "12.4" from 12040 (CUDA's major*1000 + minor*10); "none" for 0. */
void coll__cuda_version_string(int version, char *buf, size_t len);
/* Name of device dev ("NVIDIA H100 80GB HBM3") and its memory in bytes (-1 unknown). */
int coll__cuda_device_name(int dev, char *name, size_t len, long long *total_mem);
/* "cudaErrorNoDevice: no CUDA-capable device is detected" */
const char *coll__cuda_strerror(int err, char *buf, size_t len);

#endif
