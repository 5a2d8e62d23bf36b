#include "cli_common.h"

#include <limits.h>
#include <sched.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll_tool.h"

int cli_parse_options(const char *prefix, const bench_opt *table, size_t n, void *user,
                      bench_multinode *mn, int (*positional)(bench_opt_ctx *, const char *),
                      int argc, char **argv)
{
    char err[256] = "";
    bench_opt_ctx c = {.table = table,
                       .n = n,
                       .user = user,
                       .err = err,
                       .errlen = sizeof err,
                       .mn = mn,
                       .positional = positional};
    int rc = bench_opt_parse(&c, argc, argv);
    if (rc == 0 || rc == BENCH_OPT_HELP) return rc;
    fprintf(stderr, "%s: %s\n", prefix, err[0] ? err : "bad usage");
    return EXIT_USAGE;
}

const char *cli_rank_backend(const char *prefix, const char *env_var, char *const *asked,
                             size_t nasked, int rank)
{
    const char *b = getenv(env_var);
    if (b && *b) return b;
    if (nasked == 1) return asked[0];
    if (nasked > 1 && rank == 0)
        fprintf(stderr,
                "%s: --backend: a launched rank runs one backend, not %zu; "
                "using the default\n",
                prefix, nasked);
    /* The CLI's default is auto (shm within a host, tcp across); $COLL_BACKEND,
     * the library's own default, still wins. */
    const char *lib = getenv("COLL_BACKEND");
    return lib && *lib ? NULL : coll_backend_preferred(NULL);
}

/* --bind's default per backend, measured (docs/PERFORMANCE.md, "Binding"):
 * pinned shm ranks hand the core over faster (8 B at 4 ranks 2.3 us vs 3.3
 * us); so do tcp's now that its waits spin (4 ranks 8 B 48-58 us vs 59-96,
 * 1 MiB 1.15-1.34 ms vs 1.31-1.53; unpinned, 2 ranks often share a CPU: 8 B
 * 7-24 us from launch to launch). gloo (its own threads), mpi (mpirun binds)
 * and nccl are left alone. An explicit --bind or $COLL_BIND wins. */
const char *cli_default_bind(const char *backend)
{
    return strcmp(backend, "shm") == 0 || strcmp(backend, "auto") == 0 ||
                   strcmp(backend, "tcp") == 0
               ? "core"
               : "none";
}

void cli_rank_pin(const char *backend, int local_rank, int local_size)
{
    cli_rank_pin_to(strcmp(cli_default_bind(backend), "core") == 0, local_rank, local_size);
}

void cli_rank_pin_to(int pin, int local_rank, int local_size)
{
    static cpu_set_t all; /* the CPUs this rank was started with */
    static int saved;
    if (getenv(COLL_ENV_BIND)) return;
    if (!saved) saved = sched_getaffinity(0, sizeof all, &all) == 0;
    if (!saved || sched_setaffinity(0, sizeof all, &all) != 0) return;
    if (!pin || local_rank < 0 || local_size <= local_rank) return;
    int *cpus = calloc((size_t)local_size, sizeof *cpus);
    if (cpus && coll_bind_plan(COLL_BIND_CORE, local_size, cpus) == COLL_OK)
        coll_bind_apply_cpu(cpus[local_rank]);
    free(cpus);
}

void cli_launch_note(const cli_launch *l, int started, const char *message)
{
    if (!l->report) return;
    l->report->started = started;
    snprintf(l->report->message, sizeof l->report->message, "%s", message ? message : "");
}

int cli_exec_ranks(const cli_launch *l, const char *backend, int nprocs,
                   const char *const *extra_env, const char *bind, coll__launch_result *res)
{
    char env_backend[96], env_nprocs[64];
    const char *env[16] = {env_backend, env_nprocs};
    size_t n = 2;
    for (const char *const *e = extra_env; e && *e && n < sizeof env / sizeof env[0] - 1; e++)
        env[n++] = *e;
    env[n] = NULL;
    char **rank_argv = calloc((size_t)l->argc + 2, sizeof *rank_argv);
    if (!rank_argv) {
        snprintf(res->message, sizeof res->message, "out of memory");
        return COLL_ENOMEM;
    }
    for (int i = 0; i < l->argc; i++) rank_argv[i + 1] = l->argv[i]; /* [0] NULL: /proc/self/exe */
    snprintf(env_backend, sizeof env_backend, "%s=%s", CLI_ENV_BACKEND, backend);
    snprintf(env_nprocs, sizeof env_nprocs, "COLLBENCH_NPROCS=%d", nprocs);
    coll__launch_opts lo = {.nprocs = nprocs,
                            .argv = rank_argv,
                            .extra_env = env,
                            .on_result_line = l->on_result_line,
                            .arg = l->arg,
                            .done_marks = 1}; /* main() registers the mark in every rank */
    fflush(stdout);
    if (bind) setenv(COLL_ENV_BIND, bind, 1); /* coll__launch pins the ranks it starts by it */
    int rc = coll__launch(&lo, res);
    if (bind) unsetenv(COLL_ENV_BIND);
    free(rank_argv);
    return rc;
}

/* Rank 0 holds a socket per peer and, hosting the store, one per rank: about
 * two open files a rank, plus FD_RESERVE of its own. The soft limit is raised
 * to the hard one first (the ranks inherit it). */
#define FD_RESERVE 64

int cli_max_local_ranks(long *nofile)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return *nofile = -1, INT_MAX;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl); /* best effort */
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (rlim_t)INT_MAX) return *nofile = -1, INT_MAX;
    *nofile = (long)rl.rlim_cur;
    return *nofile > 2 * FD_RESERVE ? (int)((*nofile - FD_RESERVE) / 2) : 1;
}

int cli_sweep(const char *const *backends, size_t nbackends, const int *procs, size_t nprocs,
              int (*one)(void *arg, const char *backend, int nprocs), void *arg)
{
    int first = 0;
    long nofile;
    int most = cli_max_local_ranks(&nofile);
    for (size_t p = 0; p < nprocs; p++)
        if (procs[p] > most) { /* refused before any configuration runs */
            fprintf(stderr,
                    "collbench: -P %d: at most %d ranks on this host: open files are "
                    "limited to %ld (ulimit -n), and each rank needs about 2 per rank\n",
                    procs[p], most, nofile);
            return EXIT_USAGE;
        }
    for (size_t b = 0; b < nbackends && first < EXIT_SIGNALLED; b++)
        for (size_t p = 0; p < nprocs && first < EXIT_SIGNALLED; p++) {
            int code = one(arg, backends[b], procs[p]);
            if (code && !first) first = code;
            if (code >= EXIT_SIGNALLED) first = code; /* interrupted: stop the sweep */
        }
    return first;
}
