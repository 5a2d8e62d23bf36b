#include "cli_common.h"
#include "cli_multinode.h"
#include "cli_mpirun.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/registry.h"
#include "bootstrap/bind.h"
#include "launch/launcher.h"
#include "coll.h"

/* Our fork launcher (coll_launch) cannot start mpi ranks; cli_launch_one hands
 * them to mpirun (cli_mpirun.c) instead. */
const char *cli_launcher_refuses(const char *backend)
{
    if (coll__backend_needs_mpirun(backend)) return "the mpi backend needs ranks started by mpirun or srun";
    return NULL;
}

int cli_pick_backends(const char *prefix, const char *cmd, char *const *asked, size_t nasked,
                      const char **out, size_t cap, size_t *n)
{
    char why[256];
    const char *refused;
    *n = 0;
    if (cli_multinode_active()) return cli_multinode_pick(prefix, asked, nasked, out, n);
    for (size_t i = 0; i < nasked && *n < cap; i++) {
        if (!coll_backend_available(asked[i], why, sizeof why)) {
            fprintf(stderr, "%s: --backend %s: %s\n", prefix, asked[i], why);
            return EXIT_UNAVAILABLE;
        }
        if (cli_mpirun_launches(asked[i])) {
            char mpirun[4096];
            if (cli_mpirun_find(mpirun, sizeof mpirun, why, sizeof why) != 0) {
                fprintf(stderr, "%s: --backend %s: %s\n", prefix, asked[i], why);
                return EXIT_UNAVAILABLE;
            }
        } else if ((refused = cli_launcher_refuses(asked[i]))) {
            fprintf(stderr, "%s: --backend %s: %s: mpirun -np 4 collbench %s --backend %s\n", prefix,
                    asked[i], refused, cmd, asked[i]);
            return EXIT_UNAVAILABLE;
        }
        out[(*n)++] = asked[i];
    }
    if (nasked > 0) return 0;
    *n = coll__backend_default_sweep(out, cap);
    if (*n == 0) {
        fprintf(stderr, "%s: no backend is available in this build\n", prefix);
        return EXIT_UNAVAILABLE;
    }
    return 0;
}

cli_role cli_detect_role(const char *prefix, coll_launch_env *env)
{
    cli_multinode_rank_env(); /* a rank of a multi-host launch: the job's RANK, WORLD_SIZE */
    if (coll_launch_env_detect(env)) {
        cli_mpirun_rank_setup(env); /* rank 0's results FIFO when launched through mpirun */
        return CLI_RANK;
    }
    if (!*coll_launch_env_error()) return CLI_LAUNCHER;
    fprintf(stderr, "%s: bad launcher environment: %s\n", prefix, coll_launch_env_error());
    return CLI_BAD_ENV;
}

const char *cli_rank_backend(const char *prefix, const char *env_var, char *const *asked,
                             size_t nasked, int rank)
{
    const char *b = getenv(env_var);
    if (b && *b) return b;
    if (nasked == 1) return asked[0];
    if (nasked > 1 && rank == 0)
        fprintf(stderr, "%s: --backend: a launched rank runs one backend, not %zu; "
                        "using the default\n", prefix, nasked);
    /* The CLI's default is auto (shm within a host, tcp across); $COLL_BACKEND,
     * the library's own default, still wins. */
    const char *lib = getenv("COLL_BACKEND");
    return lib && *lib ? NULL : coll__backend_preferred(NULL);
}

/* --bind's default per backend, measured (docs/PERFORMANCE.md, shm): pinned
 * shm ranks hand the core over faster (8 B at 4 ranks 2.3 us vs 3.3 us); tcp
 * ranks want the scheduler free to move them (8 B at 2 ranks 8.1 us pinned vs
 * 2.2 us). An explicit --bind or $COLL_BIND wins. */
static const char *default_bind(const char *backend)
{
    return strcmp(backend, "shm") == 0 || strcmp(backend, "auto") == 0 ? "core" : "none";
}

void cli_rank_pin(const char *backend, int local_rank, int local_size)
{
    static cpu_set_t all; /* the CPUs this rank was started with */
    static int saved;
    if (getenv(COLL_ENV_BIND)) return;
    if (!saved) saved = sched_getaffinity(0, sizeof all, &all) == 0;
    if (!saved || sched_setaffinity(0, sizeof all, &all) != 0) return;
    if (strcmp(default_bind(backend), "core") != 0 || local_rank < 0 || local_size <= local_rank) return;
    int *cpus = calloc((size_t)local_size, sizeof *cpus);
    if (cpus && coll_bind_plan(COLL_BIND_CORE, local_size, cpus) == COLL_OK)
        coll_bind_apply_cpu(cpus[local_rank]);
    free(cpus);
}

int cli_launch_one(const cli_launch *l, const char *backend, int nprocs)
{
    if (cli_multinode_active()) return cli_multinode_launch_one(l, backend, nprocs);
    if (cli_mpirun_launches(backend)) return cli_mpirun_launch_one(l, backend, nprocs);
    char env_backend[96], env_nprocs[64], what[96] = "";
    const char *extra_env[] = {env_backend, env_nprocs, NULL};
    char **rank_argv = calloc((size_t)l->argc + 2, sizeof *rank_argv);
    coll_launch_result res;
    if (!rank_argv) return fprintf(stderr, "%s: out of memory\n", l->prefix), EXIT_RUNTIME;
    for (int i = 0; i < l->argc; i++) rank_argv[i + 1] = l->argv[i]; /* [0] NULL: /proc/self/exe */

    snprintf(env_backend, sizeof env_backend, "%s=%s", CLI_ENV_BACKEND, backend);
    snprintf(env_nprocs, sizeof env_nprocs, "COLLBENCH_NPROCS=%d", nprocs);
    if (l->what) snprintf(what, sizeof what, "%s ", l->what);
    coll_launch_opts lo = {.nprocs = nprocs, .argv = rank_argv, .extra_env = extra_env,
                           .on_result_line = l->on_result_line, .arg = l->arg};
    fflush(stdout);
    /* a list: the ranks pin themselves per backend (cli_rank_pin) */
    int own_bind = getenv(COLL_ENV_BIND) == NULL && !strchr(backend, ',');
    if (own_bind) setenv(COLL_ENV_BIND, default_bind(backend), 1);
    int rc = coll_launch(&lo, &res);
    if (own_bind) unsetenv(COLL_ENV_BIND);
    free(rank_argv);
    if (rc != 0) {
        fprintf(stderr, "%s: %s%s %d ranks: cannot launch: %s\n", l->prefix, what, backend, nprocs,
                res.message);
        return EXIT_RUNTIME;
    }
    if (l->exit_wrong && res.exit_code == l->exit_wrong)
        fprintf(stderr, "%s: %s%s %d ranks: wrong results (%s)\n", l->prefix, what, backend, nprocs,
                res.message);
    else if (res.exit_code != 0)
        fprintf(stderr, "%s: %s%s %d ranks failed: %s\n", l->prefix, what, backend, nprocs,
                res.message);
    if (res.interrupted_by) return 128 + res.interrupted_by;
    return res.exit_code;
}

int cli_sweep(const char *const *backends, size_t nbackends, const int *procs, size_t nprocs,
              int (*one)(void *arg, const char *backend, int nprocs), void *arg)
{
    int first = 0;
    for (size_t b = 0; b < nbackends && first < 128; b++)
        for (size_t p = 0; p < nprocs && first < 128; p++) {
            int code = one(arg, backends[b], procs[p]);
            if (code && !first) first = code;
            if (code >= 128) first = code; /* interrupted: stop the sweep */
        }
    return first;
}
