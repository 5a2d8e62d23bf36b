/* The nccl backend: NCCL on CUDA device buffers, libnccl and libcudart loaded
 * at run time (backend/nccl/nccl_lib.h, core/cuda_rt.h), so collbench builds without
 * CUDA and says what is missing when run without it.
 *
 * One GPU per rank: rank with local rank L uses device L, and a host with more
 * ranks than GPUs is refused (NCCL cannot put two ranks on one GPU). Every call
 * is enqueued on the backend's stream and waited for by polling cudaStreamQuery
 * and ncclCommGetAsyncError against the deadline (nccl-tests' -T), so a stalled
 * peer gives a timeout and ncclCommAbort instead of a hang. Host buffers are
 * staged through device memory, so the benchmark's own small all-reduces and
 * `collbench check` work unchanged. */
#include "backend/nccl/nccl_backend.h"
#include "backend/nccl/nccl_lib.h"
#include "bootstrap/rendezvous.h"
#include "core/clock.h"
#include "core/cuda_rt.h"
#include "core/errbuf.h"
#include "core/reduce.h"
#include "backend/staging.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPIN_S 100e-6       /* poll without sleeping this long: small calls stay precise */
#define MAX_SLEEP_NS 50000L /* then sleep, doubling up to this */

typedef struct nccl_state {
    const coll__nccl_lib *nc;
    const coll__cudart *rt;
    coll__nccl_comm comm;
    coll__cuda_stream stream;
    int rank, size, dev;
    int wrank, wroot; /* world ranks of this rank and the group's rank 0: messages */
    int aborted;
    coll__stager stage; /* host buffers through device memory */
    void *scratch;      /* device: barrier element, reduce off-root, in-place alltoall */
    size_t scratch_cap;
} nccl_state;

static void nccl_errmsg(const nccl_state *st, const char *what, int result, coll__err *err)
{
    const char *last = st->nc->GetLastError && st->comm ? st->nc->GetLastError(st->comm) : NULL;
    coll__err_set(err, 0, "rank %d: %s: %s%s%s%s", st->wrank, what, st->nc->GetErrorString(result),
                  last && *last ? " (" : "", last && *last ? last : "", last && *last ? ")" : "");
}

static void cuda_errmsg(const nccl_state *st, const char *what, int e, coll__err *err)
{
    char buf[200];
    coll__err_set(err, 0, "rank %d: %s: %s", st->wrank, what,
                  coll__cuda_strerror(e, buf, sizeof buf));
    st->rt->GetLastError();
}

static void *scratch(nccl_state *st, size_t bytes, coll__err *err)
{
    if (st->scratch && st->scratch_cap >= bytes) return st->scratch;
    if (st->scratch) st->rt->Free(st->scratch);
    st->scratch = NULL;
    st->scratch_cap = 0;
    int e = st->rt->Malloc(&st->scratch, bytes ? bytes : 1);
    if (e != COLL_CUDA_SUCCESS) {
        st->scratch = NULL;
        cuda_errmsg(st, "cudaMalloc of scratch memory", e, err);
        return NULL;
    }
    st->scratch_cap = bytes;
    return st->scratch;
}

/* ---- set-up ---- */

/* What this rank can do alone: libraries, enough GPUs on this host, its device, a stream. */
static int local_setup(nccl_state *st, const coll__rendezvous *rv, coll__err *err)
{
    int ndev;
    if (!(st->nc = coll__nccl_lib_load(err->msg, sizeof err->msg))) return COLL_EUNAVAIL;
    int rc = coll__cuda_device_count(&ndev, err->msg, sizeof err->msg);
    if (rc) return rc;
    st->rt = coll__cudart_loaded();
    if (rv->local_world_size > ndev) {
        return coll__err_set(
            err, COLL_EUNAVAIL,
            "%d ranks on host %s but %d CUDA device%s: NCCL needs one GPU per rank; run at "
            "most %d rank%s per host (-P), or share a GPU with --backend shm or tcp and "
            "--device cuda",
            rv->local_world_size, rv->host, ndev, ndev == 1 ? "" : "s", ndev, ndev == 1 ? "" : "s");
    }
    st->dev = rv->local_rank;
    int e = st->rt->SetDevice(st->dev);
    if (e != COLL_CUDA_SUCCESS) {
        cuda_errmsg(st, "cudaSetDevice", e, err);
        return COLL_EUNAVAIL;
    }
    if ((e = st->rt->StreamCreate(&st->stream)) != COLL_CUDA_SUCCESS) {
        st->stream = NULL;
        cuda_errmsg(st, "cudaStreamCreate", e, err);
        return COLL_ESYS;
    }
    return scratch(st, 64, err) ? COLL_OK : COLL_ENOMEM;
}

static int store_key(const coll__rendezvous *rv, const char *name, char *key, size_t len,
                     coll__err *err)
{
    return coll__store_key(key, len, err, rv->prefix, "nccl/%s", name);
}

/* Every rank learns whether all set up: a rank that cannot (no GPU for it)
 * must not leave the others blocked in ncclCommInitRank. The first failure's
 * "status|message" is kept in the store; the last rank to arrive says done.
 * A failing rank other than 0 (the store's host) returns once it has said so:
 * it knows its verdict, and waiting would race rank 0's exit, which closes
 * the store (seen under load: "store server ... closed the connection"). */
static int agree(const coll__rendezvous *rv, int local_rc, const char *local_err, coll__err *err)
{
    coll__store *store = rv->store;
    char k_err[96], k_arrived[96], k_done[96], val[512];
    int rc = store_key(rv, "setup_error", k_err, sizeof k_err, err);
    if (!rc) rc = store_key(rv, "arrived", k_arrived, sizeof k_arrived, err);
    if (!rc) rc = store_key(rv, "setup_done", k_done, sizeof k_done, err);
    if (rc) return rc;
    int64_t arrived = 0;
    int exists = 0;
    if (local_rc) {
        int n = snprintf(val, sizeof val, "%d|rank %d: %s", local_rc,
                         coll__rendezvous_world(rv, rv->rank), local_err);
        if (n < 0) n = 0;
        if ((size_t)n >= sizeof val) n = sizeof val - 1;
        rc = coll__store_set(store, k_err, val, (size_t)n);
    }
    if (rc == COLL_OK) rc = coll__store_add(store, k_arrived, 1, &arrived);
    if (rc == COLL_OK && arrived == rv->world_size) rc = coll__store_set(store, k_done, "1", 1);
    if (rc == COLL_OK && local_rc && rv->rank != 0) {
        coll__err_set(err, 0, "%s", local_err);
        return local_rc;
    }
    const char *keys[] = {k_done};
    if (rc == COLL_OK) rc = coll__store_wait(store, keys, 1);
    if (rc == COLL_OK) rc = store->ops->check(store, k_err, &exists);
    if (rc) {
        return coll__err_set(err, rc, "rank %d: NCCL set-up: waiting for the other ranks: %s",
                             coll__rendezvous_world(rv, rv->rank),
                             store->err.msg[0] ? store->err.msg : coll_strerror(rc));
    }
    if (!exists && !local_rc) return COLL_OK;
    if (local_rc) {
        coll__err_set(err, 0, "%s", local_err);
        return local_rc;
    }
    void *v = NULL;
    size_t len = 0;
    if ((rc = coll__store_get(store, k_err, &v, &len))) return rc;
    char *bar = strchr(v, '|');
    int status = atoi(v);
    coll__err_set(err, 0, "%s", bar ? bar + 1 : (char *)v);
    free(v);
    return status < 0 ? status : COLL_EUNAVAIL;
}

/* Rank 0's ncclUniqueId, through the store. */
static int exchange_id(nccl_state *st, const coll__rendezvous *rv, coll__nccl_id *id,
                       coll__err *err)
{
    char key[96];
    int krc = store_key(rv, "unique_id", key, sizeof key, err);
    if (krc) return krc;
    if (st->rank == 0) {
        int r = st->nc->GetUniqueId(id);
        if (r != COLL_NCCL_SUCCESS) {
            nccl_errmsg(st, "ncclGetUniqueId", r, err);
            return COLL_ESYS;
        }
        int rc = coll__store_set(rv->store, key, id, sizeof *id);
        if (rc) coll__err_set(err, 0, "rank 0: publishing the NCCL id: %s", rv->store->err.msg);
        return rc;
    }
    void *v = NULL;
    size_t len = 0;
    int rc = coll__store_get(rv->store, key, &v, &len);
    if (rc) {
        return coll__err_set(err, rc, "rank %d: waiting for rank %d's NCCL id: %s", st->wrank,
                             st->wroot, rv->store->err.msg);
    }
    if (len != sizeof *id) {
        free(v);
        return coll__err_set(err, COLL_EPROTO,
                             "rank %d: the NCCL id from rank %d has %zu bytes, not %zu", st->wrank,
                             st->wroot, len, sizeof *id);
    }
    memcpy(id, v, sizeof *id);
    free(v);
    return COLL_OK;
}

static void nccl_fini(void *state)
{
    nccl_state *st = state;
    if (!st) return;
    if (st->comm && !st->aborted) st->nc->CommDestroy(st->comm);
    if (st->rt) {
        coll__stager_free(&st->stage);
        if (st->scratch) st->rt->Free(st->scratch);
        if (st->stream) st->rt->StreamDestroy(st->stream);
    }
    free(st);
}

static int nccl_init(const coll__rendezvous *rv, void **state, coll__err *err)
{
    nccl_state *st = calloc(1, sizeof *st);
    if (!st) return COLL_ENOMEM;
    st->rank = rv->rank;
    st->size = rv->world_size;
    st->wrank = coll__rendezvous_world(rv, rv->rank);
    st->wroot = coll__rendezvous_world(rv, 0);
    st->stage.mem = &coll__stage_host_via_device;
    coll__err local_err;
    coll__err_init(&local_err, NULL, 0);
    int rc = local_setup(st, rv, &local_err);
    rc = agree(rv, rc, local_err.msg, err);
    coll__nccl_id id;
    if (rc == COLL_OK) rc = exchange_id(st, rv, &id, err);
    if (rc == COLL_OK) {
        int r = st->nc->CommInitRank(&st->comm, st->size, id, st->rank);
        if (r != COLL_NCCL_SUCCESS) {
            st->comm = NULL;
            nccl_errmsg(st, "ncclCommInitRank", r, err);
            rc = COLL_ESYS;
        }
    }
    if (rc) {
        nccl_fini(st);
        return rc;
    }
    *state = st;
    return COLL_OK;
}

/* ---- one call ---- */

/* Until the stream is idle, an asynchronous NCCL error, or the deadline. */
static int wait_done(nccl_state *st, const char *what, double deadline, coll__err *err)
{
    double start = coll__now_s();
    long sleep_ns = 1000;
    for (;;) {
        int e = st->rt->StreamQuery(st->stream);
        if (e == COLL_CUDA_SUCCESS) return COLL_OK;
        if (e != COLL_CUDA_ERR_NOT_READY) {
            cuda_errmsg(st, what, e, err);
            return COLL_ESYS;
        }
        int async = COLL_NCCL_SUCCESS;
        st->nc->CommGetAsyncError(st->comm, &async);
        if (async != COLL_NCCL_SUCCESS && async != COLL_NCCL_IN_PROGRESS) {
            nccl_errmsg(st, what, async, err);
            return async == 6 /* ncclRemoteError */ ? COLL_EPEER : COLL_ESYS;
        }
        double now = coll__now_s();
        if (now >= deadline) {
            return coll__err_set(err, COLL_ETIMEDOUT,
                                 "rank %d: %s did not finish within %.1f s (-T): a rank stalled "
                                 "or died",
                                 st->wrank, what, now - start);
        }
        if (now - start < SPIN_S) continue;
        coll__nap_s((double)sleep_ns * 1e-9);
        if (sleep_ns < MAX_SLEEP_NS) sleep_ns *= 2;
    }
}

/* Grouped sends and receives: alltoall and p2p. */
static int enqueue_p2p(nccl_state *st, const coll__call *c, int dt, size_t es)
{
    const coll__nccl_lib *nc = st->nc;
    int r = nc->GroupStart(), r2;
    if (r != COLL_NCCL_SUCCESS) return r;
    if (c->kind == COLL_KIND_ALLTOALL) {
        for (int p = 0; p < st->size && r == COLL_NCCL_SUCCESS; p++) {
            size_t off = (size_t)p * c->count * es;
            r = nc->Send((const char *)c->sendbuf + off, c->count, dt, p, st->comm, st->stream);
            if (r == COLL_NCCL_SUCCESS)
                r = nc->Recv((char *)c->recvbuf + off, c->count, dt, p, st->comm, st->stream);
        }
    } else {
        if (c->dest >= 0) r = nc->Send(c->sendbuf, c->count, dt, c->dest, st->comm, st->stream);
        if (r == COLL_NCCL_SUCCESS && c->source >= 0)
            r = nc->Recv(c->recvbuf, c->recvcount, dt, c->source, st->comm, st->stream);
    }
    r2 = nc->GroupEnd();
    return r != COLL_NCCL_SUCCESS ? r : r2;
}

static int enqueue(nccl_state *st, coll__call *c, int dt, int op, coll__err *err)
{
    const coll__nccl_lib *nc = st->nc;
    size_t es = coll_dtype_size(c->dt);
    switch (c->kind) {
    case COLL_KIND_ALLREDUCE:
        return nc->AllReduce(c->sendbuf, c->recvbuf, c->count, dt, op, st->comm, st->stream);
    case COLL_KIND_ALLGATHER:
        return nc->AllGather(c->sendbuf, c->recvbuf, c->count, dt, st->comm, st->stream);
    case COLL_KIND_REDUCESCATTER:
        return nc->ReduceScatter(c->sendbuf, c->recvbuf, c->count, dt, op, st->comm, st->stream);
    case COLL_KIND_BROADCAST:
        return nc->Broadcast(c->sendbuf, c->recvbuf, c->count, dt, c->root, st->comm, st->stream);
    case COLL_KIND_REDUCE:
        if (!c->recvbuf && !(c->recvbuf = scratch(st, c->count * es, err))) return -1;
        return nc->Reduce(c->sendbuf, c->recvbuf, c->count, dt, op, c->root, st->comm, st->stream);
    case COLL_KIND_ALLTOALL:
        if (c->sendbuf == c->recvbuf &&
            c->count) { /* grouped sends would read overwritten blocks */
            size_t bytes = c->count * es * (size_t)st->size;
            void *copy = scratch(st, bytes, err);
            if (!copy) return -1;
            int e = st->rt->Memcpy(copy, c->sendbuf, bytes, COLL_CUDA_D2D);
            if (e != COLL_CUDA_SUCCESS) {
                cuda_errmsg(st, "cudaMemcpy for an in-place alltoall", e, err);
                return -1;
            }
            c->sendbuf = copy;
        }
        return enqueue_p2p(st, c, dt, es);
    case COLL_KIND_P2P: return enqueue_p2p(st, c, dt, es);
    default: {
        float *one = scratch(st, sizeof(float), err); /* barrier: one tiny all-reduce */
        if (!one) return -1;
        return nc->AllReduce(one, one, 1, coll__nccl_dtype(COLL_FLOAT32, nc->version), 0, st->comm,
                             st->stream);
    }
    }
}

/* avg on NCCL before 2.10: summed on the GPU, divided here. */
static int divide_on_host(nccl_state *st, const coll__call *c, coll__err *err)
{
    size_t bytes = c->count * coll_dtype_size(c->dt);
    void *h = malloc(bytes ? bytes : 1);
    if (!h) return coll__err_set(err, 0, "rank %d: out of memory for avg", st->wrank), COLL_ENOMEM;
    int rc = coll__cuda_copy(h, c->recvbuf, bytes, COLL_CUDA_D2H, err->msg, sizeof err->msg);
    if (rc == COLL_OK) {
        coll__scale_div(h, c->count, c->dt, st->size);
        rc = coll__cuda_copy(c->recvbuf, h, bytes, COLL_CUDA_H2D, err->msg, sizeof err->msg);
    }
    free(h);
    return rc;
}

static int nccl_run(void *state, const coll__call *call, const coll__sig *sig, double deadline,
                    coll__err *err)
{
    nccl_state *st = state;
    char what[96];
    (void)sig;
    if (call->source == COLL__ANY_SOURCE) /* first: refused alike, before anything is touched */
        return coll__err_set(err, COLL_ENOTSUP,
                             "NCCL has no receive from any source (ncclRecv takes one peer, and "
                             "no call says which peer sent first)");
    if (st->aborted) {
        return coll__err_set(err, COLL_EABORTED, "rank %d: the NCCL communicator was aborted",
                             st->wrank);
    }
    int dt = call->kind == COLL_KIND_BARRIER ? 0 : coll__nccl_dtype(call->dt, st->nc->version);
    int op = coll__nccl_op(call->op, st->nc->version);
    int avg_by_hand = call->op == COLL_AVG && op < 0;
    if (dt < 0) {
        char v[32];
        coll__nccl_version_string(st->nc->version, v, sizeof v);
        return coll__err_set(err, COLL_ENOTSUP, "NCCL %s has no %s (needs NCCL 2.10 or newer)", v,
                             coll_dtype_name(call->dt));
    }
    if (avg_by_hand) op = 0; /* ncclSum */
    snprintf(what, sizeof what, "nccl %s", coll__kind_name(call->kind));
    st->rt->SetDevice(st->dev); /* the progress thread too */

    coll__call c;
    int staged, rc = coll__stager_begin(&st->stage, call, st->rank, st->size, &c, &staged, err);
    if (rc) return rc;
    int r = enqueue(st, &c, dt, op, err);
    if (r < 0) return COLL_ESYS; /* scratch memory or a copy failed: err says which */
    if (r != COLL_NCCL_SUCCESS) {
        nccl_errmsg(st, what, r, err);
        return r == 4 || r == 5 ? COLL_EINVAL
                                : COLL_ESYS; /* ncclInvalidArgument, ncclInvalidUsage */
    }
    rc = wait_done(st, what, deadline, err);
    int holds_result = call->kind != COLL_KIND_REDUCE || st->rank == call->root;
    if (rc == COLL_OK && avg_by_hand && holds_result) rc = divide_on_host(st, &c, err);
    if (rc == COLL_OK && staged)
        rc = coll__stager_end(&st->stage, call, &c, st->rank, st->size, err);
    return rc;
}

static int nccl_set_algo(void *state, const char *algo, coll__err *err)
{
    (void)state;
    if (strcmp(algo, "auto") == 0) return COLL_OK;
    return coll__err_set(err, COLL_ENOTSUP,
                         "--algo %s: NCCL picks its own algorithms (set NCCL_ALGO=Ring or Tree "
                         "in the environment instead)",
                         algo);
}

/* A failed or timed-out call leaves NCCL kernels that may never finish:
 * ncclCommAbort stops them (ncclCommDestroy would wait forever). */
static void nccl_abort(void *state, int status, int failed_rank)
{
    nccl_state *st = state;
    (void)status;
    (void)failed_rank;
    if (st->comm && !st->aborted) st->nc->CommAbort(st->comm);
    st->aborted = 1;
}

const coll__backend_ops coll__backend_nccl = {
    .size = sizeof(coll__backend_ops),
    .name = "nccl",
    .caps = COLL__CAP_DEVICE_BUFFERS,
    .init = nccl_init,
    .run = nccl_run,
    .set_algo = nccl_set_algo,
    .abort = nccl_abort,
    .fini = nccl_fini,
};
