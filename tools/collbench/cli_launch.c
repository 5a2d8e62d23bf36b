/* One launch strategy for every command (cli_launch.h). */
#include "cli_launch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_mpirun.h"
#include "cli_multinode.h"
#include "coll_tool.h"
#include "core/env.h"
#include "engine/host_label.h"

void cli_plan_choose(cli_launch_plan *p, const bench_multinode *mn)
{
    memset(p, 0, sizeof *p);
    if (mn && mn->nnodes > 0) {
        p->kind = CLI_LAUNCH_MULTINODE;
        p->mn = *mn;
        return;
    }
    p->kind = CLI_LAUNCH_LOCAL;
    p->default_bind = getenv(COLL_ENV_BIND) == NULL;
}

cli_launch_kind cli_plan_kind(const cli_launch_plan *p, const char *backend)
{
    if (p->kind == CLI_LAUNCH_LOCAL && coll_backend_needs_mpirun(backend)) return CLI_LAUNCH_MPIRUN;
    return p->kind;
}

const char *cli_plan_refuses(const cli_launch_plan *p, const char *backend, char *why, size_t len)
{
    char mpirun[4096];
    if (!coll_backend_needs_mpirun(backend)) return NULL;
    if (p->kind == CLI_LAUNCH_MULTINODE) {
        snprintf(why, len,
                 "--nnodes starts its own ranks; for mpi, start them with mpirun "
                 "across the hosts instead");
        return why;
    }
    return cli_mpirun_find(mpirun, sizeof mpirun, why, len) != 0 ? why : NULL;
}

/* A multi-host job runs one backend: each would need its own store. */
static int pick_one(const cli_launch_plan *p, const char *prefix, char *const *asked, size_t nasked,
                    const char **out, size_t *n)
{
    char why[256];
    if (nasked > 1) {
        fprintf(stderr,
                "%s: --backend: a multi-host run (--nnodes) runs one backend, not %zu: "
                "run the command once per backend, each with its own --master-port\n",
                prefix, nasked);
        return EXIT_USAGE;
    }
    const char *b = nasked ? asked[0] : coll_backend_preferred("tcp");
    if (!coll_backend_available(b, why, sizeof why)) {
        fprintf(stderr, "%s: --backend %s: %s\n", prefix, b, why);
        return EXIT_UNAVAILABLE;
    }
    if (cli_plan_refuses(p, b, why, sizeof why)) {
        fprintf(stderr, "%s: --backend %s: %s\n", prefix, b, why);
        return EXIT_UNAVAILABLE;
    }
    out[(*n)++] = b;
    return 0;
}

int cli_plan_pick_backends(const cli_launch_plan *p, const char *prefix, char *const *asked,
                           size_t nasked, const char **out, size_t cap, size_t *n)
{
    char why[256];
    *n = 0;
    if (p->kind == CLI_LAUNCH_MULTINODE) return pick_one(p, prefix, asked, nasked, out, n);
    for (size_t i = 0; i < nasked && *n < cap; i++) {
        if (!coll_backend_available(asked[i], why, sizeof why) ||
            cli_plan_refuses(p, asked[i], why, sizeof why)) {
            fprintf(stderr, "%s: --backend %s: %s\n", prefix, asked[i], why);
            return EXIT_UNAVAILABLE;
        }
        out[(*n)++] = asked[i];
    }
    if (nasked > 0) return 0;
    *n = coll_backend_default_sweep(out, cap);
    if (*n == 0) {
        fprintf(stderr, "%s: no backend is available in this build\n", prefix);
        return EXIT_UNAVAILABLE;
    }
    return 0;
}

/* Fork/exec here: the ranks of one backend pinned as --bind's default says
 * (a list pins itself per backend, cli_rank_pin). */
static int launch_local(const cli_launch_plan *p, const cli_launch *l, const char *backend,
                        int nprocs)
{
    char what[96] = "";
    coll__launch_result res;
    const char *bind = p->default_bind && !strchr(backend, ',') ? cli_default_bind(backend) : NULL;
    int rc = cli_exec_ranks(l, backend, nprocs, NULL, bind, &res);
    cli_launch_note(l, rc == 0, res.message);
    if (l->what) snprintf(what, sizeof what, "%s ", l->what);
    if (rc != 0) {
        fprintf(stderr, "%s: %s%s %d ranks: cannot launch: %s\n", l->prefix, what, backend, nprocs,
                res.message);
        return EXIT_RUNTIME;
    }
    if (l->report) { /* the caller says how it went */
    } else if (l->exit_wrong && res.exit_code == l->exit_wrong)
        fprintf(stderr, "%s: %s%s %d ranks: wrong results (%s)\n", l->prefix, what, backend, nprocs,
                res.message);
    else if (res.exit_code != 0)
        fprintf(stderr, "%s: %s%s %d ranks failed: %s\n", l->prefix, what, backend, nprocs,
                res.message);
    if (res.interrupted_by) return EXIT_SIGNALLED + res.interrupted_by;
    return res.exit_code;
}

int cli_launch_one(const cli_launch_plan *p, const cli_launch *l, const char *backend, int nprocs)
{
    switch (cli_plan_kind(p, backend)) {
    case CLI_LAUNCH_MULTINODE: return cli_multinode_launch_one(&p->mn, l, backend, nprocs);
    case CLI_LAUNCH_MPIRUN: return cli_mpirun_launch_one(l, backend, nprocs);
    case CLI_LAUNCH_LOCAL: break;
    }
    return launch_local(p, l, backend, nprocs);
}

/* A bad tuning variable fails every rank, some only after others already wait
 * for them (exit 3, seconds later): the launcher refuses it before any starts. */
static int host_label_ok(const char *prefix)
{
    char host[64], why[160];
    if (bench_host_label(host, sizeof host, why, sizeof why) == 0) return 1;
    fprintf(stderr, "%s: %s\n", prefix, why);
    return 0;
}

static int tuning_ok(const char *prefix)
{
    char why[COLL__ERR_MSG];
    if (!host_label_ok(prefix)) return 0;
    /* The tuning file's one warning is ours to say, not every rank's, and not
     * ours either where a suite above us said it. */
    int said = getenv("COLL__TUNING_QUIET") != NULL;
    setenv("COLL__TUNING_QUIET", "1", 1);
    if (coll_tuning_file(NULL, 0, why, sizeof why) == COLL_TUNING_FILE_FOREIGN && !said)
        fprintf(stderr, "%s: warning: %s\n", prefix, why);
    if (coll_tuning_check(why, sizeof why) == COLL_OK) return 1;
    fprintf(stderr, "%s: %s\n", prefix, why);
    return 0;
}

cli_role cli_detect_role(const char *prefix, coll_launch_env *env)
{
    cli_multinode_rank_env(); /* a rank of a multi-host launch: the job's RANK, WORLD_SIZE */
    if (coll_launch_env_detect(env)) {
        if (!host_label_ok(prefix)) return CLI_BAD_ENV; /* a rank started by hand: unchecked */
        cli_mpirun_rank_setup(env); /* rank 0's results FIFO when launched through mpirun */
        return CLI_RANK;
    }
    if (!*coll_launch_env_error()) return tuning_ok(prefix) ? CLI_LAUNCHER : CLI_BAD_ENV;
    fprintf(stderr, "%s: bad launcher environment: %s\n", prefix, coll_launch_env_error());
    return CLI_BAD_ENV;
}
