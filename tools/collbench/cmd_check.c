/* collbench check [--backend LIST] [-P N] [-T TIMEOUT]: is this setup usable?
 * For each backend: launch N ranks that create a communicator, barrier, all-reduce
 * values with a known sum (int32 and float32), broadcast from the last rank and
 * tear down; rank 0 reports each step PASS or FAIL with its time and reason.
 *
 * The launcher starts the ranks as every command does (cli_launch.h: mpi through
 * mpirun, --bind's default pinning) and passes the backend in COLLBENCH_BACKEND;
 * rank 0 sends one line per step down COLL_RESULTS_FD ("PASS\tstep\tms\treason"),
 * or prints it itself when started by another launcher (torchrun, a user's mpirun). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/opt_table.h"
#include "cli_gpu.h"
#include "cli_launch.h"
#include "coll_tool.h"
#include "core/clock.h"

#define MAX_BACKENDS 8
#define COUNT 64 /* elements per check buffer: small, but more than one */

static const char *const steps[] = {"init", "barrier", "allreduce", "broadcast", "teardown"};
#define N_STEPS (sizeof steps / sizeof steps[0])

typedef struct check_opts {
    char *backends[MAX_BACKENDS];
    size_t nbackends;
    char *backend_list; /* owns the strings in backends */
    int nprocs;
    double timeout_s;
} check_opts;

/* ---- one handler per flag (c->user is the check_opts) ---- */

#define CO(c) ((check_opts *)(c)->user)

static int on_backend(bench_opt_ctx *c, const char *v)
{
    check_opts *o = CO(c);
    free(o->backend_list);
    o->backend_list = strdup(v);
    o->nbackends = 0;
    if (!o->backend_list) return bench_opt_fail(c, "out of memory");
    for (char *save, *t = strtok_r(o->backend_list, ",", &save); t;
         t = strtok_r(NULL, ",", &save)) {
        if (o->nbackends == MAX_BACKENDS)
            return bench_opt_fail(c, "more than %d backends", MAX_BACKENDS);
        o->backends[o->nbackends++] = t;
    }
    if (o->nbackends == 0) return bench_opt_fail(c, "empty list");
    return 0;
}
static int on_nprocs(bench_opt_ctx *c, const char *v)
{
    return bench_opt_int(c, v, 1, 1024, &CO(c)->nprocs);
}
static int on_timeout(bench_opt_ctx *c, const char *v)
{
    return bench_opt_double(c, v, 0, 1, BENCH_MAX_TIMEOUT_S, 0, &CO(c)->timeout_s);
}

static const bench_opt opt_table[] = {
    {'b', "backend", "LIST", on_backend, "comma separated (default: every backend)"},
    {'P', "nprocs", "N", on_nprocs, "ranks per backend (default 2)"},
    {'T', "timeout", "SECONDS", on_timeout, "give up on a step after this long (default 30)"},
    {'h', "help", NULL, bench_opt_help, "this help"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: collbench check [--backend LIST] [-P N] [-T TIMEOUT]\n\n"
               "For each backend: init, barrier, all-reduce with a known result, broadcast and\n"
               "teardown on N local ranks; PASS/FAIL per step, UNAVAILABLE with the reason.\n"
               "Exit 0 when every available backend passes, 1 when a step fails, 4 when a\n"
               "backend asked for with --backend is unavailable.\n\n");
    bench_opt_usage(f, opt_table, BENCH_OPT_COUNT(opt_table), 21);
}

/* 0 to run, BENCH_OPT_HELP, or EXIT_USAGE (said). */
static int parse_opts(check_opts *o, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->nprocs = 2;
    o->timeout_s = 30;
    int rc = cli_parse_options("collbench check", opt_table, BENCH_OPT_COUNT(opt_table), o, NULL,
                               NULL, argc, argv);
    for (size_t i = 0; rc == 0 && i < o->nbackends; i++) {
        if (!coll_backend_known(o->backends[i]))
            return fprintf(stderr, "collbench check: --backend: unknown backend '%s'\n",
                           o->backends[i]),
                   EXIT_USAGE;
    }
    return rc;
}

/* ================= inside a rank ================= */

typedef struct reporter {
    int rank;
    int fd; /* results pipe, or -1: print to stdout */
    const char *backend;
    int failed;
} reporter;

static void report(reporter *r, int pass, const char *step, double ms, const char *why)
{
    if (!pass) r->failed = 1;
    if (r->rank != 0) return;
    char line[512];
    int n;
    if (r->fd >= 0) {
        n = snprintf(line, sizeof line, "%s\t%s\t%.3f\t%s\n", pass ? "PASS" : "FAIL", step, ms,
                     why ? why : "");
    } else {
        n = snprintf(line, sizeof line, "%s  %s %s (%.3f ms)%s%s\n", pass ? "PASS" : "FAIL",
                     r->backend, step, ms, why && *why ? ": " : "", why ? why : "");
    }
    if (n < 0) return;
    if ((size_t)n >= sizeof line) n = sizeof line - 1, line[n - 1] = '\n';
    if (write(r->fd >= 0 ? r->fd : STDOUT_FILENO, line, (size_t)n) != n)
        fprintf(stderr, "collbench check: rank 0: cannot report step %s\n", step);
}

/* Every rank's local verdict, so rank 0 can name the ranks that saw wrong data. */
static int gather_verdicts(coll_comm *comm, int ok, char *why, size_t len)
{
    int n = coll_comm_size(comm);
    int32_t mine = ok, *all = calloc((size_t)n, sizeof *all);
    if (!all) return snprintf(why, len, "out of memory"), COLL_ENOMEM;
    int rc = coll_allgather(comm, &mine, all, 1, COLL_INT32);
    if (rc) {
        snprintf(why, len, "gathering the verdicts: %s", coll_comm_errmsg(comm));
    } else {
        size_t used = 0;
        for (int r = 0; r < n; r++)
            if (!all[r] && used < len) {
                used += (size_t)snprintf(why + used, len - used, "%swrong on rank %d",
                                         used ? ", " : "", r);
                rc = 1;
            }
    }
    free(all);
    return rc;
}

static int step_allreduce(coll_comm *comm, char *why, size_t len)
{
    int n = coll_comm_size(comm), rank = coll_comm_rank(comm), ok = 1;
    int32_t iv[COUNT];
    float fv[COUNT];
    for (int i = 0; i < COUNT; i++) iv[i] = rank + 1 + i, fv[i] = (float)(rank + 1) * 0.5f;
    int rc = coll_allreduce(comm, iv, iv, COUNT, COLL_INT32, COLL_SUM);
    if (!rc) rc = coll_allreduce(comm, fv, fv, COUNT, COLL_FLOAT32, COLL_SUM);
    if (rc) return snprintf(why, len, "%s", coll_comm_errmsg(comm)), rc;
    /* sum over ranks of (rank+1) is n(n+1)/2: exact in float32 for these n */
    long long want = (long long)n * (n + 1) / 2;
    for (int i = 0; i < COUNT && ok; i++) {
        if (iv[i] != want + (long long)n * i) {
            fprintf(stderr, "collbench check: rank %d: allreduce int32 [%d] = %d, want %lld\n",
                    rank, i, iv[i], want + (long long)n * i);
            ok = 0;
        } else if (fv[i] != (float)want * 0.5f) {
            fprintf(stderr, "collbench check: rank %d: allreduce float32 [%d] = %g, want %g\n",
                    rank, i, (double)fv[i], (double)want * 0.5);
            ok = 0;
        }
    }
    return gather_verdicts(comm, ok, why, len);
}

static int step_broadcast(coll_comm *comm, char *why, size_t len)
{
    int n = coll_comm_size(comm), rank = coll_comm_rank(comm), root = n - 1, ok = 1;
    int32_t v[COUNT];
    for (int i = 0; i < COUNT; i++) v[i] = rank == root ? 1000 * root + i : -1;
    int rc = coll_broadcast(comm, v, v, COUNT, COLL_INT32, root);
    if (rc) return snprintf(why, len, "%s", coll_comm_errmsg(comm)), rc;
    for (int i = 0; i < COUNT && ok; i++)
        if (v[i] != 1000 * root + i) {
            fprintf(stderr,
                    "collbench check: rank %d: broadcast from rank %d: [%d] = %d, want %d\n", rank,
                    root, i, v[i], 1000 * root + i);
            ok = 0;
        }
    return gather_verdicts(comm, ok, why, len);
}

static int run_as_rank(const check_opts *o, const coll_launch_env *env, const char *backend)
{
    reporter r = {.rank = env->rank, .fd = -1, .backend = backend ? backend : "default"};
    const char *fd = getenv(COLL_ENV_RESULTS_FD);
    if (fd && *fd) r.fd = atoi(fd);
    char why[512] = "";
    coll_config cfg;
    coll_config_init(&cfg);
    cfg.backend = backend;
    cfg.timeout_s = o->timeout_s;
    coll_comm *comm = NULL;

    double t = coll__now_s();
    int rc = coll_comm_create(&cfg, &comm);
    if (rc) {
        report(&r, 0, "init", (coll__now_s() - t) * 1e3,
               *coll_last_create_error() ? coll_last_create_error() : coll_strerror(rc));
        return rc == COLL_EUNAVAIL ? EXIT_UNAVAILABLE : EXIT_WRONG;
    }
    r.backend = coll_comm_backend(comm);
    report(&r, 1, "init", (coll__now_s() - t) * 1e3, NULL);

    t = coll__now_s();
    rc = coll_barrier(comm);
    report(&r, rc == 0, "barrier", (coll__now_s() - t) * 1e3, rc ? coll_comm_errmsg(comm) : NULL);
    if (!rc) {
        t = coll__now_s();
        rc = step_allreduce(comm, why, sizeof why);
        report(&r, rc == 0, "allreduce", (coll__now_s() - t) * 1e3, why);
    }
    if (!rc) {
        t = coll__now_s();
        rc = step_broadcast(comm, why, sizeof why);
        report(&r, rc == 0, "broadcast", (coll__now_s() - t) * 1e3, why);
    }
    t = coll__now_s();
    int drc = coll_comm_destroy(comm);
    report(&r, drc == 0, "teardown", (coll__now_s() - t) * 1e3, drc ? coll_strerror(drc) : NULL);
    return r.failed ? EXIT_WRONG : 0;
}

/* ================= the launcher ================= */

typedef struct check_run {
    const char *backend;
    int reported[N_STEPS];
    int failed;
} check_run;

static void on_line(const char *line, void *arg)
{
    check_run *c = arg;
    char verdict[8] = "", step[32] = "";
    double ms = 0;
    int off = 0;
    if (sscanf(line, "%7[^\t]\t%31[^\t]\t%lf\t%n", verdict, step, &ms, &off) < 3 || off == 0) {
        fprintf(stderr, "collbench check: ignoring a malformed line from rank 0: %s\n", line);
        return;
    }
    const char *why = line + off;
    for (size_t i = 0; i < N_STEPS; i++)
        if (strcmp(steps[i], step) == 0) c->reported[i] = 1;
    if (strcmp(verdict, "PASS") != 0) c->failed = 1;
    printf("%s  %s %s (%.3f ms)%s%s\n", verdict, c->backend, step, ms, *why ? ": " : "", why);
    fflush(stdout);
}

/* Returns 0 when every step passed, else EXIT_WRONG. */
static int check_backend(const check_opts *o, const cli_launch_plan *plan, int argc, char **argv,
                         const char *backend)
{
    int nprocs = cli_gpu_check_nprocs(backend, o->nprocs); /* nccl: at most one rank per GPU */
    check_run c = {.backend = backend};
    cli_launch_report rep = {0};
    cli_launch l = {.prefix = "collbench check",
                    .argc = argc,
                    .argv = argv,
                    .on_result_line = on_line,
                    .arg = &c,
                    .report = &rep};
    int code = cli_launch_one(plan, &l, backend, nprocs);
    if (!rep.started) {
        printf("FAIL  %s init (0.000 ms): cannot launch %d ranks: %s\n", backend, nprocs,
               rep.message);
        return EXIT_WRONG;
    }
    if (code != 0) {
        /* the step rank 0 never reported is the one that did not finish */
        size_t i = 0;
        while (i < N_STEPS && c.reported[i]) i++;
        if (!c.failed) /* rank 0 reported no failure: say what stopped the run */
            printf("FAIL  %s %s: %s\n", backend, i < N_STEPS ? steps[i] : "teardown",
                   *rep.message ? rep.message : "a rank failed");
        c.failed = 1;
    }
    fflush(stdout);
    if (code >= EXIT_SIGNALLED) return code;
    return c.failed ? EXIT_WRONG : 0;
}

static int run_as_launcher(const check_opts *o, int argc, char **argv)
{
    cli_launch_plan plan;
    cli_plan_choose(&plan, NULL);
    const char *const *names = o->nbackends ? (const char *const *)o->backends
                                            : coll_backend_names();
    size_t n = o->nbackends;
    if (!n)
        while (names[n]) n++;
    int failed = 0, unavailable = 0;
    char why[256];
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], "nccl") == 0) cli_gpu_check_report(); /* versions, devices */
    for (size_t i = 0; i < n; i++) {
        const char *b = names[i];
        if (!coll_backend_available_bare(b, why,
                                         sizeof why)) { /* the name is on the line already */
            printf("UNAVAILABLE  %s: %s\n", b, why);
            unavailable |= o->nbackends > 0;
            continue;
        }
        if (cli_plan_refuses(&plan, b, why, sizeof why)) { /* mpi without mpirun */
            printf("UNAVAILABLE  %s: %s\n", b, why);
            unavailable |= o->nbackends > 0;
            continue;
        }
        int code = check_backend(o, &plan, argc, argv, b);
        if (code >= EXIT_SIGNALLED) return code;
        if (code) failed = 1;
    }
    fflush(stdout);
    return failed ? EXIT_WRONG : unavailable ? EXIT_UNAVAILABLE : 0;
}

int cmd_check(int argc, char **argv)
{
    check_opts o;
    coll_launch_env env;
    int code, rc = parse_opts(&o, argc, argv);
    if (rc == BENCH_OPT_HELP) {
        usage(stdout);
        code = 0;
    } else if (rc) {
        code = rc;
    } else {
        cli_role role = cli_detect_role("collbench check", &env);
        code = role == CLI_RANK       ? run_as_rank(&o, &env,
                                                    cli_rank_backend("collbench check", CLI_ENV_BACKEND,
                                                                     o.backends, o.nbackends, env.rank))
               : role == CLI_LAUNCHER ? run_as_launcher(&o, argc, argv)
                                      : EXIT_USAGE;
    }
    free(o.backend_list);
    return code;
}
