/* libnccl.so.2 loaded with dlopen at first use; only the functions the nccl
 * backend calls are declared, here, in NCCL's C ABI (ncclResult_t, ncclDataType_t
 * and ncclRedOp_t are int-sized enums; ncclUniqueId is 128 bytes passed by value).
 * COLL_NCCL_PATH (a path or a soname) replaces the sonames tried. */
#ifndef COLL_NCCL_LIB_H
#define COLL_NCCL_LIB_H

#include <stddef.h>

#include "coll.h"
#include "core/cuda_rt.h"

#define COLL_NCCL_ENV "COLL_NCCL_PATH"

/* NCCL_VERSION_CODE of 2.10.0: ncclAvg and ncclBfloat16 appeared there. */
#define COLL_NCCL_VERSION_AVG 21000
/* 2.7.0: ncclSend/ncclRecv. */
#define COLL_NCCL_VERSION_P2P 2700

#define COLL_NCCL_SUCCESS 0
#define COLL_NCCL_IN_PROGRESS 7

typedef struct coll__nccl_id {
    char internal[128];
} coll__nccl_id;

typedef struct coll__nccl_comm_s *coll__nccl_comm;

typedef struct coll__nccl_lib {
    char soname[256];
    int version; /* NCCL_VERSION_CODE: 22105 is 2.21.5 */
    int (*GetVersion)(int *version);
    int (*GetUniqueId)(coll__nccl_id *id);
    int (*CommInitRank)(coll__nccl_comm *comm, int nranks, coll__nccl_id id, int rank);
    int (*CommDestroy)(coll__nccl_comm comm);
    int (*CommAbort)(coll__nccl_comm comm);
    int (*CommGetAsyncError)(coll__nccl_comm comm, int *async_error);
    const char *(*GetErrorString)(int result);
    const char *(*GetLastError)(coll__nccl_comm comm); /* NULL before NCCL 2.13 */
    int (*AllReduce)(const void *send, void *recv, size_t count, int dt, int op,
                     coll__nccl_comm comm, coll__cuda_stream stream);
    int (*Broadcast)(const void *send, void *recv, size_t count, int dt, int root,
                     coll__nccl_comm comm, coll__cuda_stream stream);
    int (*Reduce)(const void *send, void *recv, size_t count, int dt, int op, int root,
                  coll__nccl_comm comm, coll__cuda_stream stream);
    int (*AllGather)(const void *send, void *recv, size_t sendcount, int dt, coll__nccl_comm comm,
                     coll__cuda_stream stream);
    int (*ReduceScatter)(const void *send, void *recv, size_t recvcount, int dt, int op,
                         coll__nccl_comm comm, coll__cuda_stream stream);
    int (*Send)(const void *send, size_t count, int dt, int peer, coll__nccl_comm comm,
                coll__cuda_stream stream);
    int (*Recv)(void *recv, size_t count, int dt, int peer, coll__nccl_comm comm,
                coll__cuda_stream stream);
    int (*GroupStart)(void);
    int (*GroupEnd)(void);
} coll__nccl_lib;

/* Loads once (thread-safe); NULL with the reason in err (remembered). */
const coll__nccl_lib *coll__nccl_lib_load(char *err, size_t errlen);
/* Forget the load (tests only: no NCCL communicator may be alive). */
void coll__nccl_lib_unload(void);

/* "2.21.5" from a NCCL_VERSION_CODE (major*10000+minor*100+patch since 2.9,
 * major*1000+minor*100+patch before). */
void coll__nccl_version_string(int code, char *buf, size_t len);

/* ncclDataType_t of dt; -1 when this NCCL has none (bfloat16 before 2.10). */
int coll__nccl_dtype(coll_dtype dt, int version);
/* ncclRedOp_t of op; -1 for avg before 2.10 (the backend sums, then divides). */
int coll__nccl_op(coll_op op, int version);

/* Is the nccl backend usable here? 1, or 0 with why: the library, the CUDA
 * runtime or a device missing, and how to get it. */
int coll__nccl_usable(char *why, size_t whylen);

#endif
