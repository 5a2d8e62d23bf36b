/* libcoll: collective communication for processes on one or many hosts.
 *
 * Every function returns 0 (COLL_OK) or a negative coll_status; the
 * communicator keeps a one-line message saying what went wrong
 * (coll_comm_errmsg), naming the failed peer where there is one. A failed
 * collective leaves the communicator unusable, except a refusal (COLL_ENOTSUP:
 * a dtype, op or count the backend does not run), which every rank reaches
 * before anything is sent. */
#ifndef COLL_H
#define COLL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One table, generated into the enum and coll_strerror (libuv style). */
#define COLL_STATUS_MAP(X)                                                       \
    X(OK,          0,   "success")                                               \
    X(EINVAL,     -1,   "invalid argument")                                      \
    X(ENOMEM,     -2,   "out of memory")                                         \
    X(ETIMEDOUT,  -3,   "operation timed out")                                   \
    X(EPEER,      -4,   "a peer rank failed or closed its connection")           \
    X(EMISMATCH,  -5,   "ranks called a collective with different arguments")   \
    X(EUNAVAIL,   -6,   "backend unavailable")                                   \
    X(ENOTSUP,    -7,   "operation not supported by this backend or dtype")      \
    X(ESYS,       -8,   "system call failed")                                    \
    X(EPROTO,     -9,   "protocol error: malformed or unexpected message")       \
    X(EAUTH,      -10,  "connection failed authentication")                      \
    X(EAGAIN,     -11,  "operation not complete yet")                            \
    X(EABORTED,   -12,  "communicator was aborted")

typedef enum {
#define COLL_STATUS_ENUM(name, val, msg) COLL_##name = (val),
    COLL_STATUS_MAP(COLL_STATUS_ENUM)
#undef COLL_STATUS_ENUM
} coll_status;

/* Name of a status code ("invalid argument"); never NULL. */
const char *coll_strerror(int status);
/* Symbolic name of a status code ("COLL_EINVAL"); never NULL. */
const char *coll_status_name(int status);

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

size_t      coll_dtype_size(coll_dtype dt);      /* 0 for an invalid dtype */
const char *coll_dtype_name(coll_dtype dt);      /* "float32", ... */
const char *coll_op_name(coll_op op);            /* "sum", ... */
int         coll_dtype_parse(const char *s, coll_dtype *out); /* accepts float, half, bf16, ... */
int         coll_op_parse(const char *s, coll_op *out);
/* COLL_OK when op makes sense for dt (avg is floating-point only). */
int         coll_op_valid(coll_dtype dt, coll_op op);

typedef struct coll_config {
    const char *backend;     /* "tcp", "shm", "auto", "mpi", "nccl", "gloo";
                                NULL: $COLL_BACKEND or "tcp" */
    const char *init_method; /* "env://", "tcp://host:port", "file:///path"; NULL: "env://" */
    int rank;                /* -1: from the environment (RANK, OMPI_COMM_WORLD_RANK, ...) */
    int world_size;          /* -1: from the environment */
    double timeout_s;        /* every blocking wait gives up after this; default 300 */
    const char *algo;        /* "auto", "ring", "rhd", "rd", "tree", "direct"...; NULL: "auto" */
} coll_config;

void coll_config_init(coll_config *cfg);

/* Backends this library knows, NULL-terminated: "tcp", "shm", "auto", "mpi", "nccl", "gloo". */
const char *const *coll_backend_names(void);
/* 1 if the backend can be used here; else 0 and why (what is missing, how to get it). */
int coll_backend_available(const char *name, char *why, size_t whylen);
/* 1 if collective ("allreduce", "broadcast", ...) has algorithm algo ("auto" always). */
int coll_algo_supported(const char *collective, const char *algo);
/* The algorithms of a collective, comma separated ("ring,rhd,rd"), for messages. */
const char *coll_algo_names(const char *collective);

/* The backends' questions of a program that picks and launches them (collbench). */
/* 1 if name is one of coll_backend_names(), built in here or not. */
int coll_backend_known(const char *name);
/* coll_backend_available, with why's "backend NAME unavailable: " lead dropped
 * (for callers that name the backend on the line already). */
int coll_backend_available_bare(const char *name, char *why, size_t whylen);
/* 1 for a backend whose ranks mpirun (or srun) must start: mpi. */
int coll_backend_needs_mpirun(const char *name);
/* 1 if a sweep with no backend named runs it: not mpi (its own sweep, through
 * mpirun), not nccl (GPU buffers). */
int coll_backend_sweeps_by_default(const char *name);
/* The backends a sweep with no backend named runs here, in coll_backend_names()'s
 * order: those that sweep by default and are available. Returns how many (at
 * most cap are stored in out). */
size_t coll_backend_default_sweep(const char **out, size_t cap);
/* The one backend of a run that names none: "auto" where it is available, else fallback. */
const char *coll_backend_preferred(const char *fallback);
/* The backend auto uses between the ranks of one host here ("shm", or "tcp"
 * while shm is not available), and why in why. */
const char *coll_auto_intra_name(char *why, size_t whylen);
/* NCCL as the nccl backend loads it (the same sonames, $COLL_NCCL_PATH): 1 with
 * its version ("2.21.5") in version and the library loaded in soname; else 0
 * and why (what is missing, how to get it). Any buffer may be NULL/0. */
int coll_nccl_version(char *version, size_t versionlen, char *soname, size_t sonamelen, char *why,
                      size_t whylen);

/* For a program that launches ranks (collbench): how they were launched, where
 * they listen, how they are pinned. */

/* Ranks that were already launched: our own launcher and torchrun (RANK,
 * WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE), mpirun (OMPI_COMM_WORLD_*,
 * PMI_RANK/PMI_SIZE) and srun (SLURM_PROCID/NTASKS). */
typedef struct coll_launch_env {
    int rank, world_size;             /* -1 when unknown */
    int local_rank, local_world_size; /* -1 when unknown */
    const char *source;               /* "collbench", "torchrun", "mpirun", "pmi", "srun", NULL */
} coll_launch_env;

/* Fills env from the environment; returns 1 if a rank/world pair was found.
 * Sources, first match wins: RANK/WORLD_SIZE (+LOCAL_RANK/LOCAL_WORLD_SIZE;
 * "collbench" when COLL_LAUNCHED=1, else "torchrun"), OMPI_COMM_WORLD_RANK/SIZE
 * (+_LOCAL_RANK/_LOCAL_SIZE; "mpirun"), PMI_RANK/PMI_SIZE (+MPI_LOCALRANKID/
 * MPI_LOCALNRANKS; "pmi"), SLURM_PROCID/SLURM_NTASKS (+SLURM_LOCALID,
 * SLURM_NTASKS_PER_NODE when a plain number; "srun"). A source with invalid
 * values (not an integer, rank outside [0, world)) counts as absent, and the
 * problem is kept for coll_launch_env_error(). */
int coll_launch_env_detect(coll_launch_env *env);
/* Why the last coll_launch_env_detect() of this thread skipped a source, e.g.
 * "RANK=abc is not an integer"; "" when every variable it read was valid. */
const char *coll_launch_env_error(void);

/* The address a rank's transports listen on and publish to their peers, and why. */
typedef struct coll_listen_pick {
    char addr[64];   /* numeric IPv4, or $COLL_LISTEN_ADDR as given */
    char ifname[32]; /* interface holding addr, "" when none is known */
    char why[200];   /* the rule that chose it, for messages and `collbench info` */
} coll_listen_pick;
/* The pick from this process's environment, in order: $COLL_LISTEN_ADDR as
 * given; $COLL_SOCKET_IFNAME (the first IPv4 address of a matching interface,
 * NCCL_SOCKET_IFNAME syntax); a job on one host: 127.0.0.1; the store's host
 * known ($MASTER_ADDR, under srun $SLURM_LAUNCH_NODE_IPADDR): the address of the
 * interface that routes to it; a job that spans hosts: the first interface that
 * is up, not loopback; else 127.0.0.1. COLL_OK, or COLL_EINVAL with err naming
 * the variable to set (a job that spans hosts and finds only loopback). */
int coll_listen_addr_from_env(coll_listen_pick *out, char *err, size_t errlen);
/* 1 for "localhost", 127.x.y.z and ::1: a host that only this host reaches. */
int coll_host_is_loopback(const char *host);

/* Pinning ranks to cores (--bind core|none). A launcher puts the choice in
 * $COLL_BIND, plans one CPU per rank before forking and pins each child before
 * exec (affinity survives exec). Default: none. */
#define COLL_ENV_BIND "COLL_BIND"
typedef enum coll_bind_mode { COLL_BIND_NONE = 0, COLL_BIND_CORE = 1 } coll_bind_mode;
/* "core" or "none"; COLL_EINVAL otherwise. */
int coll_bind_parse(const char *s, coll_bind_mode *out);
const char *coll_bind_name(coll_bind_mode m);
/* $COLL_BIND, or none when it is unset or not a mode. */
coll_bind_mode coll_bind_from_env(void);
/* The CPU of each of nprocs ranks into cpus[] (-1: leave alone): with core,
 * round robin over the cores this process may run on, one hardware thread per
 * core, in hwloc's order when built with hwloc. */
int coll_bind_plan(coll_bind_mode mode, int nprocs, int *cpus);
/* Pin the calling process to cpu (no-op for -1). Only a system call: safe in a
 * forked child of a threaded process. */
int coll_bind_apply_cpu(int cpu);

typedef struct coll_comm coll_comm;
typedef struct coll_request coll_request;

int  coll_comm_create(const coll_config *cfg, coll_comm **out);
/* Collective: every rank calls it. Safe on a failed communicator. */
int  coll_comm_destroy(coll_comm *comm);
int  coll_comm_rank(const coll_comm *comm);
int  coll_comm_size(const coll_comm *comm);
const char *coll_comm_backend(const coll_comm *comm);
/* Last error of this communicator, one line; "" when none. */
const char *coll_comm_errmsg(const coll_comm *comm);
/* Rank blamed for the last error (dead peer, mismatch), or -1. */
int  coll_comm_failed_rank(const coll_comm *comm);
/* Hosts among the ranks of comm, or a negative status. Collective (every rank
 * calls it): backends that know their hosts (auto) answer at once, the others
 * compare the ranks' host ids through the rendezvous store. */
int  coll_comm_host_count(coll_comm *comm);
/* One line saying how the backend runs this communicator ("auto: 2 hosts, 2
 * ranks on this one; intra-host shm, ..."); COLL_ENOTSUP where it has none. */
int  coll_comm_describe(const coll_comm *comm, char *buf, size_t len);
/* Set the algorithm used from now on ("auto" restores the tuning table).
 * COLL_ENOTSUP where the backend does not run it: shm, mpi and nccl pick
 * their own and take only "auto"; auto takes what its groups run. */
int  coll_comm_set_algo(coll_comm *comm, const char *algo);
/* Error message of a communicator that could not be created (thread-local). */
const char *coll_last_create_error(void);

/* Buffers the backend may place in shared memory; plain aligned memory otherwise. */
void *coll_alloc(coll_comm *comm, size_t bytes);
void  coll_free(coll_comm *comm, void *ptr);

/* Blocking collectives. sendbuf == recvbuf (or the in-place position) is in-place.
 * Counts are in elements. */
int coll_allreduce(coll_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                   coll_dtype dt, coll_op op);
/* recvbuf holds size*sendcount elements; rank r's block at offset r*sendcount.
 * In-place: sendbuf == recvbuf + rank*sendcount. */
int coll_allgather(coll_comm *comm, const void *sendbuf, void *recvbuf, size_t sendcount,
                   coll_dtype dt);
/* sendbuf holds size*recvcount elements; rank r receives the reduced block r.
 * In-place: recvbuf == sendbuf + rank*recvcount. */
int coll_reducescatter(coll_comm *comm, const void *sendbuf, void *recvbuf, size_t recvcount,
                       coll_dtype dt, coll_op op);
/* sendbuf is read at root only; every rank's recvbuf gets it (may equal sendbuf). */
int coll_broadcast(coll_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                   coll_dtype dt, int root);
/* recvbuf is written at root only. */
int coll_reduce(coll_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                coll_dtype dt, coll_op op, int root);
/* count elements go to each rank: sendbuf and recvbuf hold size*count elements. */
int coll_alltoall(coll_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                  coll_dtype dt);
int coll_send(coll_comm *comm, const void *buf, size_t count, coll_dtype dt, int peer);
int coll_recv(coll_comm *comm, void *buf, size_t count, coll_dtype dt, int peer);
/* Send to one peer and receive from another at once (no deadlock in a ring). */
int coll_sendrecv(coll_comm *comm, const void *sendbuf, size_t sendcount, int dest,
                  void *recvbuf, size_t recvcount, int source, coll_dtype dt);
int coll_barrier(coll_comm *comm);
/* Monitored barrier (like torch's monitored_barrier): rank 0 waits up to timeout_s
 * for every other rank to arrive, then tells every rank which ranks never did.
 * Returns COLL_OK when all arrived; else COLL_ETIMEDOUT on every rank that waited,
 * with the missing ranks (ascending, at most max_missing of them) in missing,
 * their total number in *nmissing (both may be NULL/0), and an errmsg naming them
 * ("ranks 2, 5 did not reach the monitored barrier within 1.0 s"). Rank 0 itself
 * not answering within timeout_s + 1 s is reported as rank 0 missing. Runs over
 * the rendezvous store, not the transport, so a timeout leaves the communicator
 * usable; a later collective with a dead rank still fails at the comm's timeout. */
int coll_monitored_barrier(coll_comm *comm, double timeout_s, int *missing, int max_missing,
                           int *nmissing);

/* Nonblocking collectives, progressed by the communicator's progress thread.
 * Collectives (blocking or not) run in the order they were called. */
int coll_iallreduce(coll_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                    coll_dtype dt, coll_op op, coll_request **req);
int coll_iallgather(coll_comm *comm, const void *sendbuf, void *recvbuf, size_t sendcount,
                    coll_dtype dt, coll_request **req);
int coll_ireducescatter(coll_comm *comm, const void *sendbuf, void *recvbuf, size_t recvcount,
                        coll_dtype dt, coll_op op, coll_request **req);
int coll_ibroadcast(coll_comm *comm, const void *sendbuf, void *recvbuf, size_t count,
                    coll_dtype dt, int root, coll_request **req);
/* *done = 1 once finished; the request stays valid until coll_wait. Returns the
 * collective's status once done. */
int coll_test(coll_request *req, int *done);
/* Waits, frees the request and returns the collective's status. */
int coll_wait(coll_request *req);

#ifdef __cplusplus
}
#endif
#endif
