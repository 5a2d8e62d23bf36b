/* What the collbench tool (and the project's own tests) ask of libcoll beyond
 * its API: picking and launching backends, how ranks were launched, where they
 * listen, how they are pinned. Not installed and not exported by libcoll.so
 * (built with hidden visibility): the project links libcoll statically
 * (CMake target `coll`), so these can change with the tool. */
#ifndef COLL_TOOL_H
#define COLL_TOOL_H

#include "coll.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- The backends' questions of a program that picks and launches them --- */

/* The algorithm libcoll's tuning table runs when "auto" is asked, for
 * collective ("allreduce", ...) at bytes (the whole vector) on world ranks:
 * "rd", "rhd", "ring", ... (the tcp backend's crossovers, $COLL_TCP_*_MIN
 * and the tuning file included; not $COLL_ALGO_* overrides);
 * NULL for an unknown collective or one with nothing to choose. The cost
 * model's formula for the tcp backend's "auto". */
const char *coll_algo_auto_pick(const char *collective, size_t bytes, int world);

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
/* Bytes each of nranks ranks of one host allocates beyond its send and receive
 * buffers when backend runs collective ("allreduce") at these per-rank bytes
 * (count x element size) on private (malloc'd) buffers, at most: shm's and
 * auto's all-reduce scratch in the shared heap, by shm's plan as the ranks
 * would read its knobs here, as if every buffer lay in 4 KiB pages (its widest
 * window); 0 for a backend or collective that takes none. The launcher's
 * memory check adds it to the buffers. */
size_t coll_backend_scratch_bytes(const char *backend, const char *collective,
                                  const uint64_t *bytes, size_t nbytes, int nranks);
/* The one backend of a run that names none: "auto" where it is available, else
 * fallback (the tool's default; the library's is "tcp", coll.h). */
const char *coll_backend_preferred(const char *fallback);
/* The backend auto uses between the ranks of one host here ("shm", or "tcp"
 * while shm is not available), and why in why. */
const char *coll_auto_intra_name(char *why, size_t whylen);
/* NCCL as the nccl backend loads it (the same sonames, $COLL_NCCL_PATH): 1 with
 * its version ("2.21.5") in version and the library loaded in soname; else 0
 * and why (what is missing, how to get it). Any buffer may be NULL/0. */
int coll_nccl_version(char *version, size_t versionlen, char *soname, size_t sonamelen, char *why,
                      size_t whylen);

/* --- Tuning variables ---------------------------------------------------- */

/* Row i of every component's tuning variables (core/tuning.h's row: name,
 * kind, default, range, meaning), each backend's in coll_backend_names()'s
 * order; NULL past the last. */
struct coll__tunable;
const struct coll__tunable *coll_tuning_row(size_t i);
/* The tuning file (`collbench tune` writes it; docs/DESIGN.md "Tuning file"),
 * loaded once per process: its state, its path in where ("" when none can be
 * named) and, for FOREIGN and REFUSED, the message libcoll printed. Its values
 * sit under the environment's and above the defaults. */
enum {
    COLL_TUNING_FILE_NONE,    /* no file there: the defaults */
    COLL_TUNING_FILE_APPLIED, /* this machine's: its values in force */
    COLL_TUNING_FILE_FOREIGN, /* another machine's (CPU model, flags or kernel): ignored */
    COLL_TUNING_FILE_REFUSED, /* malformed (file and line named): ignored whole */
};
int coll_tuning_file(char *where, size_t wherelen, char *message, size_t messagelen);
/* Every set tuning variable read by its row: COLL_OK, or COLL_EINVAL with why
 * naming the first bad one (a refused tuning file first). A launcher calls it before any rank starts, so a
 * typo is a usage error at once, not a failure of some ranks after others
 * already wait for them. */
int coll_tuning_check(char *why, size_t whylen);

/* --- How ranks were launched, where they listen, how they are pinned ----- */

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
/* The world rank this process's last failed call or coll_comm_create blamed
 * (coll_comm_failed_rank's, across communicators), COLL_BLAMED_UNKNOWN when
 * it timed out naming nobody (Gloo does not say whom it waited for), or -1:
 * whom a rank that fails tells its launcher it waited on (launcher.h's blame
 * mark). */
int coll_last_blamed_rank(void);
#define COLL_BLAMED_UNKNOWN (-2)

/* The address a rank's transports listen on and publish to their peers, and why. */
typedef struct coll_listen_pick {
    char addr[64];   /* numeric IPv4 or IPv6 (unbracketed), or $COLL_LISTEN_ADDR as given */
    char ifname[32]; /* interface holding addr, "" when none is known */
    char why[200];   /* the rule that chose it, for messages and `collbench info` */
} coll_listen_pick;
/* The pick from this process's environment, in order: $COLL_LISTEN_ADDR as
 * given; $COLL_SOCKET_IFNAME (the first IPv4 address of a matching interface,
 * NCCL_SOCKET_IFNAME syntax; a global IPv6 one when none has IPv4); a job on one host: 127.0.0.1; the store's host
 * known ($MASTER_ADDR; under srun the step's first node, else
 * $SLURM_LAUNCH_NODE_IPADDR): the address of the
 * interface that routes to it; a job that spans hosts: the first interface that
 * is up, not loopback; else 127.0.0.1. COLL_OK, or COLL_EINVAL with err naming
 * the variable to set (a job that spans hosts and finds only loopback). */
int coll_listen_addr_from_env(coll_listen_pick *out, char *err, size_t errlen);
/* The same pick with store_host as the store's host (NULL or "": the one the
 * environment names), for a rank that knows where its store is (a torch group). */
int coll_listen_addr_for_store(const char *store_host, coll_listen_pick *out, char *err,
                               size_t errlen);
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

#ifdef __cplusplus
}
#endif
#endif
