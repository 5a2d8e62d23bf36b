/* The mpi backend: every call of include/coll.h on the MPI library's own
 * collectives (Open MPI by default, MPICH with -DCOLL_MPI=mpich).
 *
 * MPI has no float16/bfloat16: they travel as 2-byte contiguous types and are
 * reduced by user-defined MPI_Ops that call libcoll's kernels. avg is a sum
 * divided once where the result lands. Each communicator works on its own
 * MPI_Comm_dup of MPI_COMM_WORLD, with MPI_ERRORS_RETURN so that failures come
 * back as coll_status with MPI_Error_string's text. Nonblocking calls run on
 * the communicator's progress thread as blocking MPI calls: MPI's own
 * nonblocking collectives progress only inside MPI calls, which would make them
 * slower, not faster. MPI calls cannot be interrupted: a watchdog thread per
 * communicator ends the whole job with MPI_Abort (exit 3) when a call outlives
 * the communicator's timeout, naming the call; nothing else would (a stopped
 * or hung peer blocks every MPI implementation forever). */
#include "backend/mpi/mpi_backend.h"
#include "bootstrap/rendezvous.h"
#include "core/env.h"
#include "core/fault.h"
#include "core/reduce.h"
#include "bootstrap/runtime_mpi.h"
#include "core/watchdog.h"

#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define P2P_TAG 0x636f /* "co": one tag, since calls on a communicator run in order */

typedef struct mpi_state {
    MPI_Comm comm;
    int rank, size;
    int level;             /* MPI's thread level */
    pthread_t init_thread; /* the only thread allowed to call below MPI_THREAD_SERIALIZED */
    coll__watchdog dog;    /* ends the job when a call outlives the timeout */
    double timeout_s;      /* -T, the timeout the watchdog enforces */
    size_t max_count;      /* MPI counts are int: the largest piece one call moves
                              * ($COLL_MPI_MAX_COUNT: tests make it small) */
} mpi_state;

/* ---- float16/bfloat16: a 2-byte type and one MPI_Op per (dtype, op) ---- */

/* MPI: inout[i] = in[i] op inout[i]; the kernels allow out == b. */
#define HALF_OP(fn, dt, op)                                             \
    static void fn(void *in, void *inout, int *len, MPI_Datatype *type) \
    {                                                                   \
        (void)type;                                                     \
        coll__reduce_kernel(dt, op)(inout, in, inout, (size_t)*len);    \
    }
HALF_OP(f16_sum, COLL_FLOAT16, COLL_SUM)
HALF_OP(f16_prod, COLL_FLOAT16, COLL_PROD)
HALF_OP(f16_min, COLL_FLOAT16, COLL_MIN)
HALF_OP(f16_max, COLL_FLOAT16, COLL_MAX)
HALF_OP(bf16_sum, COLL_BFLOAT16, COLL_SUM)
HALF_OP(bf16_prod, COLL_BFLOAT16, COLL_PROD)
HALF_OP(bf16_min, COLL_BFLOAT16, COLL_MIN)
HALF_OP(bf16_max, COLL_BFLOAT16, COLL_MAX)

static MPI_User_function *const half_fns[2][4] = {
    {f16_sum, f16_prod, f16_min, f16_max},
    {bf16_sum, bf16_prod, bf16_min, bf16_max},
};

static pthread_once_t half_once = PTHREAD_ONCE_INIT;
static int half_status = MPI_SUCCESS;
static MPI_Datatype half_type = MPI_DATATYPE_NULL;
static MPI_Op half_ops[2][4];

static void make_half_types(void)
{
    coll__mpi_lock();
    half_status = MPI_Type_contiguous(2, MPI_BYTE, &half_type);
    if (half_status == MPI_SUCCESS) half_status = MPI_Type_commit(&half_type);
    for (int d = 0; d < 2 && half_status == MPI_SUCCESS; d++)
        for (int o = 0; o < 4 && half_status == MPI_SUCCESS; o++)
            half_status = MPI_Op_create(half_fns[d][o], 1 /* commutative */, &half_ops[d][o]);
    coll__mpi_unlock();
}

static MPI_Datatype mpi_type(coll_dtype dt)
{
    switch (dt) {
    case COLL_FLOAT32: return MPI_FLOAT;
    case COLL_FLOAT64: return MPI_DOUBLE;
    case COLL_INT8: return MPI_INT8_T;
    case COLL_UINT8: return MPI_UINT8_T;
    case COLL_INT32: return MPI_INT32_T;
    case COLL_INT64: return MPI_INT64_T;
    default: return half_type; /* float16, bfloat16 */
    }
}

/* avg reduces as a sum; the caller divides. */
static MPI_Op mpi_op(coll_dtype dt, coll_op op)
{
    int o = op == COLL_AVG ? 0 : (int)op; /* SUM, PROD, MIN, MAX in coll_op order */
    if (dt == COLL_FLOAT16 || dt == COLL_BFLOAT16) return half_ops[dt == COLL_BFLOAT16][o];
    static const MPI_Op builtin[4] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX};
    return builtin[o];
}

/* ---- life cycle ---- */

/* The watchdog's verdict: a call outlived the timeout. MPI offers no way to
 * cancel it, so the job ends (mpirun kills every rank, exit 3). The message
 * states the timeout; the measured wait, a little longer, is in waited_s. */
static void timed_out(void *arg, const void *what, double waited_s)
{
    (void)waited_s;
    const mpi_state *st = arg;
    coll__sig sig;
    char call[128];
    memcpy(&sig, what, sizeof sig);
    coll__sig_format(&sig, call, sizeof call);
    fprintf(stderr,
            "collbench: rank %d: %s did not complete within %.3g s (timeout -T): a peer is "
            "hung, stopped or dead; aborting the MPI job\n",
            st->rank, call, st->timeout_s);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 3);
}

static int mpi_init(const coll__rendezvous *rv, void **state, coll__err *err)
{
    int level, rank = rv->rank, size = rv->world_size;
    int rc = coll__mpi_runtime_join(rank, size, &level, err->msg, sizeof err->msg);
    if (rc) return rc;
    pthread_once(&half_once, make_half_types);
    if (half_status != MPI_SUCCESS) {
        coll__mpi_describe(half_status, "creating the float16/bfloat16 MPI_Ops", err->msg,
                           sizeof err->msg);
        return COLL_EUNAVAIL;
    }
    uint64_t max_count;
    rc = coll__tunable_read(&coll__mpi_tunables.rows[COLL__MPI_KNOB_MAX_COUNT], 0, 0, &max_count,
                            err);
    if (rc) return rc;
    mpi_state *st = calloc(1, sizeof(*st));
    if (!st) return COLL_ENOMEM;
    st->max_count = (size_t)max_count;
    st->rank = rank;
    st->size = size;
    st->timeout_s = rv->timeout_s;
    st->level = level;
    st->init_thread = pthread_self();
    int e = coll__watchdog_start(&st->dog, timed_out, st);
    if (e) {
        coll__err_set(err, 0, "cannot start the mpi backend's timeout watchdog: %s", strerror(e));
        free(st);
        return COLL_ESYS;
    }
    coll__mpi_lock();
    int mrc = MPI_Comm_dup(MPI_COMM_WORLD, &st->comm);
    if (mrc == MPI_SUCCESS) mrc = MPI_Comm_set_errhandler(st->comm, MPI_ERRORS_RETURN);
    coll__mpi_unlock();
    if (mrc != MPI_SUCCESS) {
        coll__mpi_describe(mrc, "MPI_Comm_dup", err->msg, sizeof err->msg);
        coll__watchdog_stop(&st->dog);
        free(st);
        return COLL_EPEER;
    }
    *state = st;
    return COLL_OK;
}

static void mpi_fini(void *state)
{
    mpi_state *st = state;
    if (!st) return;
    coll__watchdog_stop(&st->dog);
    coll__mpi_lock();
    MPI_Comm_free(&st->comm);
    coll__mpi_unlock();
    free(st);
}

static int mpi_set_algo(void *state, const char *algo, coll__err *err)
{
    (void)state;
    if (!algo || strcmp(algo, "auto") == 0) return COLL_OK;
    return coll__err_set(
        err, COLL_ENOTSUP,
        "the mpi backend runs the MPI library's own algorithms, not '%s' (use backend "
        "tcp for libcoll's; Open MPI picks its own with --mca "
        "coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm N)",
        algo);
}

/* Peers learn of a failure from MPI itself; what is left is not to wait in
 * MPI_Finalize for ranks that may be stuck in a collective this rank left.
 * Refusals made before any MPI call (unsupported, invalid) leave nobody stuck. */
static void mpi_abort(void *state, int status, int failed_rank)
{
    (void)state;
    (void)failed_rank;
    if (status != COLL_ENOTSUP && status != COLL_EINVAL) coll__mpi_runtime_mark_failed();
}

/* ---- the calls ---- */

static int status_of(int code)
{
    int cls = MPI_ERR_OTHER;
    MPI_Error_class(code, &cls);
    switch (cls) {
    case MPI_ERR_TRUNCATE: return COLL_EMISMATCH;
    case MPI_ERR_NO_MEM: return COLL_ENOMEM;
    case MPI_ERR_BUFFER:
    case MPI_ERR_COUNT:
    case MPI_ERR_TYPE:
    case MPI_ERR_OP:
    case MPI_ERR_ROOT:
    case MPI_ERR_RANK:
    case MPI_ERR_ARG: return COLL_EINVAL;
    default: return COLL_EPEER;
    }
}

/* Reductions and broadcasts of any size, in pieces of at most max_count elements:
 * element i of the result depends on element i of the inputs only. */
static int run_pieces(mpi_state *st, const coll__call *c, const char **what)
{
    size_t es = coll_dtype_size(c->dt), step = st->max_count;
    MPI_Datatype t = mpi_type(c->dt);
    MPI_Op op = mpi_op(c->dt, c->op);
    int root_here = st->rank == c->root;
    int in_place = c->sendbuf == c->recvbuf;
    if (c->kind == COLL_KIND_BROADCAST && root_here && !in_place)
        memcpy(c->recvbuf, c->sendbuf, c->count * es);
    for (size_t off = 0; off < c->count || off == 0; off += step) {
        int n = (int)(c->count - off < step ? c->count - off : step);
        const char *s = (const char *)c->sendbuf + off * es;
        char *r = c->recvbuf ? (char *)c->recvbuf + off * es : NULL;
        int rc;
        switch (c->kind) {
        case COLL_KIND_ALLREDUCE:
            *what = "MPI_Allreduce";
            rc = MPI_Allreduce(in_place ? MPI_IN_PLACE : s, r, n, t, op, st->comm);
            break;
        case COLL_KIND_REDUCE:
            *what = "MPI_Reduce";
            rc = MPI_Reduce(in_place && root_here ? MPI_IN_PLACE : s, r, n, t, op, c->root,
                            st->comm);
            break;
        default:
            *what = "MPI_Bcast";
            rc = MPI_Bcast(r, n, t, c->root, st->comm);
            break;
        }
        if (rc != MPI_SUCCESS) return rc;
        if (c->count == 0) break;
    }
    return MPI_SUCCESS;
}

static int run_blocks(mpi_state *st, const coll__call *c, const char **what)
{
    size_t es = coll_dtype_size(c->dt), blk = c->count * es;
    MPI_Datatype t = mpi_type(c->dt);
    int n = (int)c->count;
    char *r = c->recvbuf;
    switch (c->kind) {
    case COLL_KIND_ALLGATHER:
        *what = "MPI_Allgather";
        return MPI_Allgather(c->sendbuf == r + (size_t)st->rank * blk ? MPI_IN_PLACE : c->sendbuf,
                             n, t, r, n, t, st->comm);
    case COLL_KIND_ALLTOALL:
        *what = "MPI_Alltoall";
        return MPI_Alltoall(c->sendbuf == r ? MPI_IN_PLACE : c->sendbuf, n, t, r, n, t, st->comm);
    default: { /* reduce-scatter */
        *what = "MPI_Reduce_scatter_block";
        MPI_Op op = mpi_op(c->dt, c->op);
        char *s = (char *)c->sendbuf;
        if (r != s + (size_t)st->rank * blk)
            return MPI_Reduce_scatter_block(s, r, n, t, op, st->comm);
        /* in place, MPI leaves the result in block 0; ours belongs in block rank */
        int rc = MPI_Reduce_scatter_block(MPI_IN_PLACE, s, n, t, op, st->comm);
        if (rc == MPI_SUCCESS && st->rank > 0) memcpy(r, s, blk);
        return rc;
    }
    }
}

static int run_p2p(mpi_state *st, const coll__call *c, const char **what, coll__err *err,
                   int *status)
{
    MPI_Datatype t = mpi_type(c->dt);
    MPI_Status ms;
    int rc, got = 0, any = c->source == COLL__ANY_SOURCE;
    int source = any ? MPI_ANY_SOURCE : c->source;
    if (c->dest >= 0 && coll__call_receives(c)) {
        *what = any ? "MPI_Sendrecv from MPI_ANY_SOURCE" : "MPI_Sendrecv";
        rc = MPI_Sendrecv(c->sendbuf, (int)c->count, t, c->dest, P2P_TAG, c->recvbuf,
                          (int)c->recvcount, t, source, P2P_TAG, st->comm, &ms);
    } else if (c->dest >= 0) {
        *what = "MPI_Send";
        return MPI_Send(c->sendbuf, (int)c->count, t, c->dest, P2P_TAG, st->comm);
    } else {
        *what = any ? "MPI_Recv from MPI_ANY_SOURCE" : "MPI_Recv";
        rc = MPI_Recv(c->recvbuf, (int)c->recvcount, t, source, P2P_TAG, st->comm, &ms);
    }
    int from = any && rc == MPI_SUCCESS ? (*c->from = ms.MPI_SOURCE) : c->source;
    if (rc == MPI_SUCCESS && from >= 0 && MPI_Get_count(&ms, t, &got) == MPI_SUCCESS &&
        (size_t)got != c->recvcount) {
        coll__err_set(err, 0, "rank %d sent %d elements where rank %d expected %zu", from, got,
                      st->rank, c->recvcount);
        err->rank = coll__err_world(err, from);
        *status = COLL_EMISMATCH;
    }
    return rc;
}

static int too_large(const mpi_state *st, const coll__call *c)
{
    size_t limit = st->max_count;
    switch (c->kind) {
    case COLL_KIND_ALLGATHER:
    case COLL_KIND_ALLTOALL:
    case COLL_KIND_REDUCESCATTER: return c->count > limit;
    case COLL_KIND_P2P: return c->count > limit || c->recvcount > limit;
    default: return 0; /* run in pieces */
    }
}

static int mpi_run(void *state, const coll__call *c, const coll__sig *sig, double deadline,
                   coll__err *err)
{
    mpi_state *st = state;
    const char *what = "MPI";
    int rc, status = COLL_OK;
    if (st->level < MPI_THREAD_SERIALIZED && !pthread_equal(st->init_thread, pthread_self())) {
        return coll__err_set(err, COLL_ENOTSUP,
                             "MPI was initialised below MPI_THREAD_SERIALIZED: only blocking "
                             "calls from the thread that created the communicator work");
    }
    if (too_large(st, c)) {
        return coll__err_set(err, COLL_ENOTSUP,
                             "%s of more than %zu elements per rank: MPI counts are int",
                             coll__kind_name(c->kind), st->max_count);
    }
    /* the fault point: a call's bytes count as sent when it starts */
    coll__fault_hit(COLL_FAULT_COLLECTIVE, c->count * coll_dtype_size(c->dt));
    _Static_assert(sizeof *sig <= COLL_WATCHDOG_WHAT, "the watchdog holds a coll__sig");
    coll__watchdog_arm(&st->dog, deadline, sig, sizeof *sig);
    coll__mpi_lock();
    switch (c->kind) {
    case COLL_KIND_ALLREDUCE:
    case COLL_KIND_REDUCE:
    case COLL_KIND_BROADCAST: rc = run_pieces(st, c, &what); break;
    case COLL_KIND_ALLGATHER:
    case COLL_KIND_ALLTOALL:
    case COLL_KIND_REDUCESCATTER: rc = run_blocks(st, c, &what); break;
    case COLL_KIND_BARRIER:
        what = "MPI_Barrier";
        rc = MPI_Barrier(st->comm);
        break;
    default: rc = run_p2p(st, c, &what, err, &status); break;
    }
    coll__mpi_unlock();
    coll__watchdog_disarm(&st->dog);
    if (rc != MPI_SUCCESS) {
        coll__mpi_describe(rc, what, err->msg, sizeof err->msg);
        return status_of(rc);
    }
    if (status) return status;
    if (c->op == COLL_AVG &&
        (c->kind == COLL_KIND_ALLREDUCE || c->kind == COLL_KIND_REDUCESCATTER ||
         (c->kind == COLL_KIND_REDUCE && st->rank == c->root)))
        coll__scale_div(c->recvbuf, c->count, c->dt, st->size);
    return COLL_OK;
}

const coll__backend_ops coll__backend_mpi = {
    .size = sizeof(coll__backend_ops),
    .name = "mpi",
    .init = mpi_init,
    .run = mpi_run,
    .set_algo = mpi_set_algo,
    .abort = mpi_abort,
    .fini = mpi_fini,
};
