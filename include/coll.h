/* libcoll: collective communication for processes on one or many hosts.
 *
 * This header is the library's whole API: libcoll.so exports exactly the
 * functions declared here (COLL_API; everything else is built hidden, and the
 * ctest design/exports checks it). What only the collbench tool asks of the
 * library is in coll_tool.h, which is not installed.
 *
 * Conventions, for every function below unless it says otherwise:
 *  - Errors: the return value is 0 (COLL_OK) or a negative coll_status; the
 *    communicator keeps a one-line message saying what went wrong
 *    (coll_comm_errmsg), naming the failed peer where there is one. A failed
 *    collective leaves the communicator unusable, except a refusal
 *    (COLL_ENOTSUP: a dtype, op or count the backend does not run), which
 *    every rank reaches before anything is sent.
 *  - Ownership: the caller owns every buffer it passes and gets back; a
 *    returned const char * is static (names, messages of the library) or owned
 *    by the communicator and valid until its next call on that communicator
 *    (coll_comm_errmsg) or its destruction. Functions copy what they keep of
 *    their arguments (coll_config's strings are read during coll_comm_create
 *    only).
 *  - Threads: functions without a communicator are thread-safe. A
 *    communicator may be used from several threads: its calls are serialised
 *    (collectives, blocking or not, run one at a time in the order they
 *    reached it), but every rank must issue its collectives in the same order,
 *    so threads sharing one communicator need an order of their own.
 *    coll_comm_destroy must not race with any other call on the communicator.
 *  - Backends: a communicator's backend is cfg->backend, else $COLL_BACKEND,
 *    else "tcp" (the library default; the collbench tool's default is "auto"
 *    where it is available). */
#ifndef COLL_H
#define COLL_H

#include <stddef.h>
#include <stdint.h>

/* The mark of an exported function (libuv's UV_EXTERN): default visibility
 * on compilers that build libcoll with -fvisibility=hidden. */
#if defined(__GNUC__) || defined(__clang__)
#define COLL_API __attribute__((visibility("default")))
#else
#define COLL_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* One table, generated into the enum and coll_strerror (libuv style). */
#define COLL_STATUS_MAP(X)                                                 \
    X(OK, 0, "success")                                                    \
    X(EINVAL, -1, "invalid argument")                                      \
    X(ENOMEM, -2, "out of memory")                                         \
    X(ETIMEDOUT, -3, "operation timed out")                                \
    X(EPEER, -4, "a peer rank failed or closed its connection")            \
    X(EMISMATCH, -5, "ranks called a collective with different arguments") \
    X(EUNAVAIL, -6, "backend unavailable")                                 \
    X(ENOTSUP, -7, "operation not supported by this backend or dtype")     \
    X(ESYS, -8, "system call failed")                                      \
    X(EPROTO, -9, "protocol error: malformed or unexpected message")       \
    X(EAUTH, -10, "connection failed authentication")                      \
    X(EAGAIN, -11, "operation not complete yet")                           \
    X(EABORTED, -12, "communicator was aborted")

typedef enum {
#define COLL_STATUS_ENUM(name, val, msg) COLL_##name = (val),
    COLL_STATUS_MAP(COLL_STATUS_ENUM)
#undef COLL_STATUS_ENUM
} coll_status;

/* --- Status codes ------------------------------------------------------- */

/* Description of a status code ("invalid argument"); "unknown error" for a
 * value not in the table. Never NULL, static. */
COLL_API const char *coll_strerror(int status);
/* Symbolic name of a status code ("COLL_EINVAL", "COLL_UNKNOWN"); never NULL, static. */
COLL_API const char *coll_status_name(int status);

/* --- Data types and reduction ops --------------------------------------- */

typedef enum {
    COLL_FLOAT32 = 0,
    COLL_FLOAT64,
    COLL_FLOAT16,
    COLL_BFLOAT16,
    COLL_INT8,
    COLL_UINT8,
    COLL_INT32,
    COLL_INT64,
    COLL_DTYPE_COUNT
} coll_dtype;

typedef enum {
    COLL_SUM = 0,
    COLL_PROD,
    COLL_MIN,
    COLL_MAX,
    COLL_AVG, /* floating-point dtypes only: sum, then divided by the world size */
    COLL_OP_COUNT
} coll_op;

/* Bytes of one element; 0 for an invalid dtype. */
COLL_API size_t coll_dtype_size(coll_dtype dt);
/* "float32", ...; "invalid-dtype" for an invalid one. Static. */
COLL_API const char *coll_dtype_name(coll_dtype dt);
/* "sum", ...; "invalid-op" for an invalid one. Static. */
COLL_API const char *coll_op_name(coll_op op);
/* Name to dtype, case-insensitive, with aliases (float, half, bf16, ...):
 * COLL_OK and *out set, or COLL_EINVAL (unknown name, NULL argument). */
COLL_API int coll_dtype_parse(const char *s, coll_dtype *out);
/* Name to op ("sum", "prod", "min", "max", "avg"): COLL_OK or COLL_EINVAL. */
COLL_API int coll_op_parse(const char *s, coll_op *out);
/* COLL_OK when op makes sense for dt; COLL_EINVAL for an invalid dtype or op
 * and for avg on an integer dtype (avg is floating-point only). */
COLL_API int coll_op_valid(coll_dtype dt, coll_op op);

/* --- Configuration and backends ----------------------------------------- */

typedef struct coll_config {
    const char *backend;     /* "tcp", "shm", "auto", "mpi", "nccl", "gloo";
                                NULL: $COLL_BACKEND, else "tcp" (the library default) */
    const char *init_method; /* "env://", "tcp://host:port", "file:///path"; NULL: "env://" */
    int rank;                /* -1: from the environment (RANK, OMPI_COMM_WORLD_RANK, ...) */
    int world_size;          /* -1: from the environment */
    double timeout_s;        /* every blocking wait gives up after this; default 300 */
    const char *algo;        /* "auto", "ring", "rhd", "rd", "tree", "direct"...; NULL: "auto" */
    const char *job_token;   /* the job token (as $COLL_JOB_TOKEN); NULL: $COLL_JOB_TOKEN, else
                                $COLL_JOB_TOKEN_FILE's, else none */
} coll_config;

/* The defaults: backend, init_method and algo NULL, rank and world_size -1,
 * timeout_s 300. Call it first, then set the fields that differ (new fields
 * get defaults this way). */
COLL_API void coll_config_init(coll_config *cfg);

/* Backends this library knows, NULL-terminated: "tcp", "shm", "auto", "mpi",
 * "nccl", "gloo" (built in here or not). Static. */
COLL_API const char *const *coll_backend_names(void);
/* 1 if the backend can be used here; else 0 and why (what is missing, how to
 * get it) in why (may be NULL/0). nccl is probed by loading its library. */
COLL_API int coll_backend_available(const char *name, char *why, size_t whylen);
/* 1 if collective ("allreduce", "broadcast", ...) has algorithm algo ("auto"
 * always); 0 otherwise, NULL arguments included. */
COLL_API int coll_algo_supported(const char *collective, const char *algo);
/* The algorithms of a collective, comma separated ("ring,rhd,rd"), for
 * messages; "" for an unknown collective. Static. */
COLL_API const char *coll_algo_names(const char *collective);

/* --- Communicators ------------------------------------------------------ */

typedef struct coll_comm coll_comm;
typedef struct coll_request coll_request;

/* Collective: every rank of the job calls it with the same backend. Meets the
 * other ranks through cfg->init_method (NULL cfg: the defaults), sets up the
 * backend and stores the communicator in *out (NULL on failure). The caller
 * owns it: coll_comm_destroy frees it. Errors: COLL_EUNAVAIL (backend unknown
 * or not available here), COLL_EINVAL (bad rank, world size or init_method),
 * COLL_ETIMEDOUT (a rank did not arrive within timeout_s), COLL_EPEER,
 * COLL_ESYS...; the message is in coll_last_create_error(). */
COLL_API int coll_comm_create(const coll_config *cfg, coll_comm **out);
/* Collective: every rank calls it. Waits for pending requests, tears the
 * backend down and frees comm (NULL: COLL_EINVAL). Ends with a barrier unless
 * the communicator failed; returns its status. Safe on a failed communicator. */
COLL_API int coll_comm_destroy(coll_comm *comm);
/* This process's rank, and the number of ranks; -1 for NULL. */
COLL_API int coll_comm_rank(const coll_comm *comm);
COLL_API int coll_comm_size(const coll_comm *comm);
/* The backend's name ("tcp", ...); "" for NULL. Valid while comm lives. */
COLL_API const char *coll_comm_backend(const coll_comm *comm);
/* Last error of this communicator, one line; "" when none. With NULL, the
 * message of this thread's last failed coll_comm_create. Valid until the next
 * call on comm. */
COLL_API const char *coll_comm_errmsg(const coll_comm *comm);
/* Rank blamed for the last error (dead peer, mismatch), or -1. */
COLL_API int coll_comm_failed_rank(const coll_comm *comm);
/* Hosts among the ranks of comm, or a negative status. Collective (every rank
 * calls it): backends that know their hosts (auto) answer at once, the others
 * compare the ranks' host ids through the rendezvous store. */
COLL_API int coll_comm_host_count(coll_comm *comm);
/* One line saying how the backend runs this communicator ("auto: 2 hosts, 2
 * ranks on this one; intra-host shm, ...") into buf (len bytes, truncated);
 * COLL_ENOTSUP where the backend has none, COLL_EINVAL for NULL. */
COLL_API int coll_comm_describe(const coll_comm *comm, char *buf, size_t len);
/* What the backend's probes decided on comm so far, as the tuning variables
 * that, set in the environment when another communicator is created, make it
 * plan alike without probing: "VAR=VALUE" pairs separated by spaces, "" where
 * none has run (shm's COLL_SHM_CORE_PROBE probes run at the first all-reduce
 * of each band; auto answers for its intra-host backend). A replay of a
 * program on the same backend runs the program's plan so. COLL_ENOTSUP where
 * the backend probes nothing, COLL_EINVAL for NULL or a buffer too short. */
COLL_API int coll_comm_plan(const coll_comm *comm, char *buf, size_t len);
/* Set the algorithm used from now on ("auto" restores the tuning table).
 * Every rank must set the same one. COLL_ENOTSUP where the backend does not
 * run it: shm, mpi and nccl pick their own and take only "auto"; auto takes
 * what its groups run. The communicator stays usable after a refusal. */
COLL_API int coll_comm_set_algo(coll_comm *comm, const char *algo);
/* Error message of the last coll_comm_create of this thread that failed
 * (thread-local; "" after one that succeeded). */
COLL_API const char *coll_last_create_error(void);

/* Buffers the backend may place in shared memory (shm, auto: collectives on
 * them skip a copy); plain aligned memory otherwise (cache line; page from 64 KiB) (also for NULL
 * comm). NULL when out of memory. Free with coll_free on the same
 * communicator, before coll_comm_destroy. */
COLL_API void *coll_alloc(coll_comm *comm, size_t bytes);
COLL_API void coll_free(coll_comm *comm, void *ptr);

/* --- Blocking collectives ----------------------------------------------- */
/* Every rank of comm calls the same collective with the same count, dtype, op
 * and root (a difference is COLL_EMISMATCH, where the backend checks it).
 * Counts are in elements. sendbuf == recvbuf (or the in-place position) is
 * in-place. They return once this rank's part is done; its buffers may be
 * reused then. Errors: COLL_EINVAL (NULL comm or buffer, bad root or peer),
 * COLL_ENOTSUP (refused before anything is sent), COLL_ETIMEDOUT, COLL_EPEER,
 * COLL_EMISMATCH, COLL_EABORTED (the communicator failed before). */

/* Every rank's recvbuf gets the reduction of every rank's sendbuf. */
COLL_API int coll_allreduce(coll_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                            coll_dtype dt, coll_op op);
/* recvbuf holds size*sendcount elements; rank r's block at offset r*sendcount.
 * In-place: sendbuf == recvbuf + rank*sendcount. */
COLL_API int coll_allgather(coll_comm *comm, const void *sendbuf, void *recvbuf, size_t sendcount,
                            coll_dtype dt);
/* sendbuf holds size*recvcount elements; rank r receives the reduced block r.
 * In-place: recvbuf == sendbuf + rank*recvcount. */
COLL_API int coll_reducescatter(coll_comm *comm, const void *sendbuf, void *recvbuf,
                                size_t recvcount, coll_dtype dt, coll_op op);
/* sendbuf is read at root only; every rank's recvbuf gets it (may equal sendbuf). */
COLL_API int coll_broadcast(coll_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                            coll_dtype dt, int root);
/* The reduction of every rank's sendbuf into root's recvbuf (written at root only). */
COLL_API int coll_reduce(coll_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                         coll_dtype dt, coll_op op, int root);
/* count elements go to each rank: sendbuf and recvbuf hold size*count elements. */
COLL_API int coll_alltoall(coll_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                           coll_dtype dt);
/* The uneven all-to-all (torch's all_to_all_single with split sizes; MPI_Alltoallv
 * with the blocks packed in rank order): sendcounts[i] elements go to rank i,
 * recvcounts[i] come from it, sendbuf and recvbuf (which must not overlap) hold
 * the blocks back to back. Rank i's sendcounts[j] must equal rank j's
 * recvcounts[i] (COLL_EMISMATCH otherwise, the sender blamed). Every backend
 * runs it as pairwise exchanges (coll_sendrecv: step k sends to rank+k and
 * receives from rank-k). */
COLL_API int coll_alltoallv(coll_comm *comm, const void *sendbuf, const size_t *sendcounts,
                            void *recvbuf, const size_t *recvcounts, coll_dtype dt);
/* Point to point, between two ranks only (not collective): count elements to
 * or from peer; the other side calls the matching one with the same count. */
COLL_API int coll_send(coll_comm *comm, const void *buf, size_t count, coll_dtype dt, int peer);
COLL_API int coll_recv(coll_comm *comm, void *buf, size_t count, coll_dtype dt, int peer);
/* Receive count elements from whichever peer's next point-to-point message
 * (coll_send, coll_sendrecv) arrives first, and set *source to that peer
 * (-1 on failure). Messages from one peer still arrive in the order sent.
 * Every backend but nccl runs it (nccl has no receive from any source:
 * COLL_ENOTSUP, the communicator stays usable); gloo refuses count 0 (Gloo
 * moves no message for it). Errors: COLL_EINVAL (NULL source, NULL buffer
 * with a count, world size 1), COLL_EMISMATCH or COLL_EPROTO (the message
 * taken has another count or dtype: the sender is blamed), COLL_ETIMEDOUT
 * (no message within the timeout), COLL_EPEER (a peer died while this rank
 * waited: any of them might have been the sender). */
COLL_API int coll_recv_any(coll_comm *comm, void *buf, size_t count, coll_dtype dt, int *source);
/* coll_recv_any while sending sendcount elements to dest, both at once (as
 * coll_sendrecv, MPI_Sendrecv with MPI_ANY_SOURCE): two ranks that each send
 * to the other and receive from any never deadlock, even where a send waits
 * for its receiver (gloo). */
COLL_API int coll_sendrecv_any(coll_comm *comm, const void *sendbuf, size_t sendcount, int dest,
                               void *recvbuf, size_t recvcount, coll_dtype dt, int *source);
/* Send to one peer and receive from another at once (no deadlock in a ring). */
COLL_API int coll_sendrecv(coll_comm *comm, const void *sendbuf, size_t sendcount, int dest,
                           void *recvbuf, size_t recvcount, int source, coll_dtype dt);
/* Returns once every rank has entered it. */
COLL_API int coll_barrier(coll_comm *comm);
/* Monitored barrier (like torch's monitored_barrier): rank 0 waits up to timeout_s
 * for every other rank to arrive, then tells every rank which ranks never did.
 * Returns COLL_OK when all arrived; else COLL_ETIMEDOUT on every rank that waited,
 * with the missing ranks (ascending, at most max_missing of them) in missing,
 * their total number in *nmissing (both may be NULL/0), and an errmsg naming them
 * ("ranks 2, 5 did not reach the monitored barrier within 1.0 s"). Rank 0 itself
 * not answering within timeout_s + 1 s is reported as rank 0 missing. Runs over
 * the rendezvous store, not the transport, so a timeout leaves the communicator
 * usable; a later collective with a dead rank still fails at the comm's timeout. */
COLL_API int coll_monitored_barrier(coll_comm *comm, double timeout_s, int *missing,
                                    int max_missing, int *nmissing);

/* --- Nonblocking collectives -------------------------------------------- */
/* Progressed by the communicator's progress thread. Collectives (blocking or
 * not) run in the order they were called. On COLL_OK *req holds a request the
 * caller owns until coll_wait frees it; the buffers belong to the collective
 * until then (neither read nor written by the caller). An argument error is
 * returned at once (and *req is NULL); a failure while running, by
 * coll_test/coll_wait. */
COLL_API int coll_iallreduce(coll_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                             coll_dtype dt, coll_op op, coll_request **req);
COLL_API int coll_iallgather(coll_comm *comm, const void *sendbuf, void *recvbuf, size_t sendcount,
                             coll_dtype dt, coll_request **req);
COLL_API int coll_ireducescatter(coll_comm *comm, const void *sendbuf, void *recvbuf,
                                 size_t recvcount, coll_dtype dt, coll_op op, coll_request **req);
COLL_API int coll_ibroadcast(coll_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                             coll_dtype dt, int root, coll_request **req);
/* *done = 1 once finished; the request stays valid until coll_wait. Returns the
 * collective's status once done (COLL_OK while not done). */
COLL_API int coll_test(coll_request *req, int *done);
/* Waits, frees the request and returns the collective's status. */
COLL_API int coll_wait(coll_request *req);

#ifdef __cplusplus
}
#endif
#endif
