/* libnccl by dlopen; see nccl_lib.h. */
#include "backend/nccl/nccl_lib.h"
#include "coll_tool.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dlopen_lib.h"
#include "core/errbuf.h"

static const char *const default_sonames[] = {"libnccl.so.2", "libnccl.so", NULL};

static coll__nccl_lib lib;

/* Every symbol (ncclGetLastError is optional), then a version new enough. */
static int bind_symbols(void *handle, char *err, size_t errlen)
{
#define SYM(field, name, required)                                                      \
    do {                                                                                \
        *(void **)(&lib.field) = dlsym(handle, name);                                   \
        if (!lib.field && (required)) {                                                 \
            snprintf(err, errlen,                                                       \
                     "%s has no %s: NCCL older than 2.7? pip install nvidia-nccl-cu12", \
                     lib.soname, name);                                                 \
            return -1;                                                                  \
        }                                                                               \
    } while (0)
    SYM(GetVersion, "ncclGetVersion", 1);
    SYM(GetUniqueId, "ncclGetUniqueId", 1);
    SYM(CommInitRank, "ncclCommInitRank", 1);
    SYM(CommDestroy, "ncclCommDestroy", 1);
    SYM(CommAbort, "ncclCommAbort", 1);
    SYM(CommGetAsyncError, "ncclCommGetAsyncError", 1);
    SYM(GetErrorString, "ncclGetErrorString", 1);
    SYM(GetLastError, "ncclGetLastError", 0);
    SYM(AllReduce, "ncclAllReduce", 1);
    SYM(Broadcast, "ncclBroadcast", 1);
    SYM(Reduce, "ncclReduce", 1);
    SYM(AllGather, "ncclAllGather", 1);
    SYM(ReduceScatter, "ncclReduceScatter", 1);
    SYM(Send, "ncclSend", 1);
    SYM(Recv, "ncclRecv", 1);
    SYM(GroupStart, "ncclGroupStart", 1);
    SYM(GroupEnd, "ncclGroupEnd", 1);
#undef SYM
    if (lib.GetVersion(&lib.version) != COLL_NCCL_SUCCESS) lib.version = 0;
    if (lib.version < COLL_NCCL_VERSION_P2P) {
        char v[32];
        coll__nccl_version_string(lib.version, v, sizeof v);
        snprintf(err, errlen,
                 "%s is NCCL %s; collbench needs 2.7 or newer: pip install nvidia-nccl-cu12",
                 lib.soname, v);
        return -1;
    }
    return 0;
}

static const coll__lib_spec spec = {"NCCL", COLL_NCCL_ENV, default_sonames,
                                    "pip install nvidia-nccl-cu12 or apt install libnccl2"};
static coll__lazy_lib nccl = COLL_LAZY_LIB(&spec, lib, bind_symbols);

const coll__nccl_lib *coll__nccl_lib_load(char *err, size_t errlen)
{
    return coll__lazy_lib_load(&nccl, err, errlen);
}

void coll__nccl_lib_unload(void) { coll__lazy_lib_unload(&nccl); }

int coll_nccl_version(char *version, size_t versionlen, char *soname, size_t sonamelen, char *why,
                      size_t whylen)
{
    char err[512];
    const coll__nccl_lib *nc = coll__nccl_lib_load(err, sizeof err);
    if (!nc) {
        if (why && whylen) snprintf(why, whylen, "%s", err);
        return 0;
    }
    if (version && versionlen) coll__nccl_version_string(nc->version, version, versionlen);
    if (soname && sonamelen) snprintf(soname, sonamelen, "%s", nc->soname);
    return 1;
}

void coll__nccl_version_string(int code, char *buf, size_t len)
{
    if (code <= 0) {
        snprintf(buf, len, "unknown");
        return;
    }
    int major = code >= 10000 ? code / 10000 : code / 1000;
    int rest = code >= 10000 ? code % 10000 : code % 1000;
    snprintf(buf, len, "%d.%d.%d", major, rest / 100, rest % 100);
}

int coll__nccl_dtype(coll_dtype dt, int version)
{
    switch (dt) {
    case COLL_INT8: return 0;
    case COLL_UINT8: return 1;
    case COLL_INT32: return 2;
    case COLL_INT64: return 4;
    case COLL_FLOAT16: return 6;
    case COLL_FLOAT32: return 7;
    case COLL_FLOAT64: return 8;
    case COLL_BFLOAT16: return version >= COLL_NCCL_VERSION_AVG ? 9 : -1;
    default: return -1;
    }
}

int coll__nccl_op(coll_op op, int version)
{
    switch (op) {
    case COLL_SUM: return 0;
    case COLL_PROD: return 1;
    case COLL_MAX: return 2;
    case COLL_MIN: return 3;
    case COLL_AVG: return version >= COLL_NCCL_VERSION_AVG ? 4 : -1;
    default: return -1;
    }
}

int coll__nccl_usable(char *why, size_t whylen)
{
    char err[512];
    int n;
    if (!coll__nccl_lib_load(err, sizeof err) ||
        coll__cuda_device_count(&n, err, sizeof err) != 0) {
        coll__set_err(why, whylen, "%s", err);
        return 0;
    }
    return 1;
}
