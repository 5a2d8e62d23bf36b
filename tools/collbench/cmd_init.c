/* collbench init: what creating a communicator costs, and what re-creating it
 * every step costs compared with creating it once.
 *
 * Not inside a launched rank: this process is the launcher; it prints the
 * table header and runs every backend x process count (our argv again, with
 * COLLBENCH_BACKEND set), as cmd_collective.c does.
 * Inside a rank: the first coll_comm_create is the cold init (rendezvous and
 * connections); that communicator stays alive for the reductions and the reuse
 * loop. Each phase starts after a barrier on it, and each number is the slowest
 * rank's (MAX over ranks). Rank 0 prints the row and appends it to --csv. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/sizes.h"
#include "engine/opt_table.h"
#include "cli_launch.h"
#include "coll_tool.h"
#include "core/atomic_file.h"
#include "core/clock.h"
#include "core/file_check.h"

#define MAX_BACKENDS 8
#define MAX_PROCS 1024
#define WARM_CYCLES 3
#define CSV_HEADER                                                           \
    "backend,nprocs,count,steps,cold_init_ms,warm_init_ms,recreate_step_ms," \
    "reuse_step_ms,ratio"

typedef struct init_opts {
    int *procs;
    size_t nprocs;
    char *backends[MAX_BACKENDS];
    size_t nbackends;
    int steps;
    long count;
    double timeout_s;
    const char *csv_path;
} init_opts;

/* Slowest rank's times, ms; the order of the table's columns. */
enum { T_COLD, T_WARM, T_RECREATE, T_REUSE, T_COUNT };

/* ================= options ================= */

static void free_opts(init_opts *o)
{
    free(o->procs);
    for (size_t i = 0; i < o->nbackends; i++) free(o->backends[i]);
}

static int bad(const char *flag, const char *what, const char *value)
{
    fprintf(stderr, "collbench init: %s: '%s' %s\n", flag, value, what);
    return EXIT_USAGE;
}

/* "is not a backend (tcp, shm, ...)": the table of backends' names. */
static int not_a_backend(const char *t)
{
    char what[160] = "is not a backend (";
    for (const char *const *b = coll_backend_names(); *b; b++) {
        size_t used = strlen(what);
        snprintf(what + used, sizeof what - used, "%s%s", b == coll_backend_names() ? "" : ", ",
                 *b);
    }
    size_t used = strlen(what);
    snprintf(what + used, sizeof what - used, ")");
    return bad("--backend", what, t);
}

static int parse_backends(init_opts *o, const char *v)
{
    char *copy = strdup(v), *save = NULL;
    if (!copy) return fprintf(stderr, "collbench init: out of memory\n"), EXIT_RUNTIME;
    for (size_t i = 0; i < o->nbackends; i++) free(o->backends[i]);
    o->nbackends = 0;
    int code = 0;
    for (char *t = strtok_r(copy, ",", &save); t && !code; t = strtok_r(NULL, ",", &save)) {
        if (!coll_backend_known(t)) code = not_a_backend(t);
        else if (o->nbackends == MAX_BACKENDS)
            code = bad("--backend", "names too many backends", v);
        else if (!(o->backends[o->nbackends] = strdup(t)))
            code = bad("--backend", "cannot be copied: out of memory", t);
        else o->nbackends++;
    }
    if (!code && o->nbackends == 0) code = bad("--backend", "names no backend", v);
    free(copy);
    return code;
}

/* ---- one handler per flag (c->user is the init_opts) ---- */

#define IO(c) ((init_opts *)(c)->user)

static int on_procs(bench_opt_ctx *c, const char *v)
{
    return bench_opt_procs(c, v, MAX_PROCS, &IO(c)->procs, &IO(c)->nprocs);
}
/* parse_backends says why itself */
static int on_backend(bench_opt_ctx *c, const char *v)
{
    int code = parse_backends(IO(c), v);
    if (code) c->err[0] = '\0';
    return code ? COLL_EINVAL : 0;
}
static int on_steps(bench_opt_ctx *c, const char *v)
{
    return bench_opt_int(c, v, 1, 1000000, &IO(c)->steps);
}
static int on_count(bench_opt_ctx *c, const char *v)
{
    return bench_opt_long(c, v, 1, 1L << 28, &IO(c)->count);
}
static int on_timeout(bench_opt_ctx *c, const char *v)
{
    return bench_opt_double(c, v, 0, 1, BENCH_MAX_TIMEOUT_S, 0, &IO(c)->timeout_s);
}
static int on_csv(bench_opt_ctx *c, const char *v)
{
    return bench_opt_file(c, v, &IO(c)->csv_path);
}

static const bench_opt opt_table[] = {
    {'P', "procs", "LIST", on_procs, "process counts to sweep (default 2,4,6)"},
    {0, "backend", "LIST", on_backend,
     "backends to sweep (default: tcp shm auto gloo, those built)"},
    {0, "steps", "K", on_steps, "steps of each loop (default 20)"},
    {0, "count", "N", on_count, "float32 elements of the all-reduce (default 1024)"},
    {'T', "timeout", "SECONDS", on_timeout, "give up on a blocked wait (default 300)"},
    {0, "csv", "FILE", on_csv, "append the rows as CSV"},
    {'h', "help", NULL, bench_opt_help, "this help"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: collbench init [options]\n"
               "Cost of creating a communicator (cold first, warm after), and K steps of a small\n"
               "float32 all-reduce with the communicator re-created every step versus reused.\n\n"
               "options:\n");
    bench_opt_usage(f, opt_table, BENCH_OPT_COUNT(opt_table), 23);
    fprintf(f, "exit codes: 0 ok, 2 bad usage, 3 runtime failure, 4 backend unavailable\n");
}

/* 0 to run, BENCH_OPT_HELP, EXIT_USAGE or EXIT_RUNTIME (said). */
static int parse_opts(init_opts *o, int argc, char **argv)
{
    static const int default_procs[] = {2, 4, 6};
    memset(o, 0, sizeof *o);
    o->steps = 20;
    o->count = 1024;
    o->timeout_s = 300;
    o->procs = malloc(sizeof default_procs);
    if (!o->procs) return fprintf(stderr, "collbench init: out of memory\n"), EXIT_RUNTIME;
    memcpy(o->procs, default_procs, sizeof default_procs);
    o->nprocs = 3;
    return cli_parse_options("collbench init", opt_table, BENCH_OPT_COUNT(opt_table), o, NULL, NULL,
                             argc, argv);
}

/* ================= inside a rank ================= */

static int create(const init_opts *o, const char *backend, coll_comm **comm)
{
    coll_config cfg;
    coll_config_init(&cfg);
    cfg.backend = backend;
    cfg.timeout_s = o->timeout_s;
    return coll_comm_create(&cfg, comm);
}

/* The phases after the cold init, local times in t[] (ms). */
static int measure(const init_opts *o, const char *backend, coll_comm *base, float *buf, double *t,
                   int *failed_create)
{
    coll_comm *c = NULL;
    int rc;
    double t0;

    if ((rc = coll_barrier(base))) return rc;
    t0 = coll__now_s();
    for (int i = 0; i < WARM_CYCLES; i++) {
        if ((rc = create(o, backend, &c))) return *failed_create = 1, rc;
        coll_comm_destroy(c);
    }
    t[T_WARM] = (coll__now_s() - t0) * 1e3 / WARM_CYCLES;

    if ((rc = coll_barrier(base))) return rc;
    t0 = coll__now_s();
    for (int i = 0; i < o->steps; i++) {
        if ((rc = create(o, backend, &c))) return *failed_create = 1, rc;
        rc = coll_allreduce(c, buf, buf, (size_t)o->count, COLL_FLOAT32, COLL_SUM);
        if (rc) {
            fprintf(stderr, "collbench init: rank %d: %s\n", coll_comm_rank(base),
                    coll_comm_errmsg(c));
            coll_comm_destroy(c);
            return rc;
        }
        coll_comm_destroy(c);
    }
    t[T_RECREATE] = (coll__now_s() - t0) * 1e3 / o->steps;

    if ((rc = coll_barrier(base))) return rc;
    t0 = coll__now_s();
    for (int i = 0; i < o->steps; i++)
        if ((rc = coll_allreduce(base, buf, buf, (size_t)o->count, COLL_FLOAT32, COLL_SUM)))
            return rc;
    t[T_REUSE] = (coll__now_s() - t0) * 1e3 / o->steps;
    return 0;
}

static void print_header(void)
{
    printf("%-8s %6s %14s %14s %18s %16s %8s\n", "backend", "ranks", "cold_init_ms", "warm_init_ms",
           "recreate_step_ms", "reuse_step_ms", "ratio");
    fflush(stdout);
}

/* Rank 0: the row on stdout and, with --csv, appended to the file. */
static int emit_row(const init_opts *o, const char *backend, int world, const double *t)
{
    double ratio = t[T_REUSE] > 0 ? t[T_RECREATE] / t[T_REUSE] : 0;
    char row[512], err[320];
    printf("%-8s %6d %14.3f %14.3f %18.3f %16.3f %8.1f\n", backend, world, t[T_COLD], t[T_WARM],
           t[T_RECREATE], t[T_REUSE], ratio);
    fflush(stdout);
    if (!o->csv_path) return 0;
    int n = snprintf(row, sizeof row, "%s,%d,%ld,%d,%.4f,%.4f,%.4f,%.4f,%.3f\n", backend, world,
                     o->count, o->steps, t[T_COLD], t[T_WARM], t[T_RECREATE], t[T_REUSE], ratio);
    if (coll__csv_append(o->csv_path, CSV_HEADER, row, (size_t)n, err, sizeof err) != 0) {
        fprintf(stderr, "collbench init: --csv: %s\n", err);
        return EXIT_RUNTIME;
    }
    return 0;
}

static int run_as_rank(const init_opts *o, const coll_launch_env *env)
{
    const char *backend = cli_rank_backend("collbench init", CLI_ENV_BACKEND, o->backends,
                                           o->nbackends, env->rank);
    coll_comm *base = NULL;
    double t[T_COUNT] = {0}, slowest[T_COUNT];
    int failed_create = 0;

    double t0 = coll__now_s();
    int rc = create(o, backend, &base);
    t[T_COLD] = (coll__now_s() - t0) * 1e3;
    if (rc) {
        fprintf(stderr, "collbench init: rank %d: %s\n", env->rank,
                *coll_last_create_error() ? coll_last_create_error() : coll_strerror(rc));
        return rc == COLL_EUNAVAIL ? EXIT_UNAVAILABLE
               : rc == COLL_EINVAL ? EXIT_USAGE
                                   : EXIT_RUNTIME;
    }
    float *buf = calloc((size_t)o->count, sizeof *buf);
    if (!buf) rc = COLL_ENOMEM;
    if (rc == 0) rc = measure(o, backend, base, buf, t, &failed_create);
    if (rc == 0) rc = coll_allreduce(base, t, slowest, T_COUNT, COLL_FLOAT64, COLL_MAX);
    int code = 0;
    if (rc) {
        const char *msg = failed_create ? coll_last_create_error() : coll_comm_errmsg(base);
        fprintf(stderr, "collbench init: rank %d: %s\n", env->rank,
                msg && *msg ? msg : coll_strerror(rc));
        code = EXIT_RUNTIME;
    } else if (coll_comm_rank(base) == 0) {
        if (!env->source || strcmp(env->source, "collbench") != 0) print_header();
        code = emit_row(o, coll_comm_backend(base), coll_comm_size(base), slowest);
    }
    free(buf);
    coll_comm_destroy(base);
    return code;
}

/* ================= the launcher ================= */

typedef struct init_launch {
    cli_launch_plan plan;
    cli_launch launch;
} init_launch;

static int launch_one(void *arg, const char *backend, int nprocs)
{
    init_launch *l = arg;
    return cli_launch_one(&l->plan, &l->launch, backend, nprocs);
}

static int run_as_launcher(const init_opts *o, int argc, char **argv)
{
    const char *backends[MAX_BACKENDS];
    size_t nb;
    char err[320];
    init_launch l = {.launch = {.prefix = "collbench init", .argc = argc, .argv = argv}};
    cli_plan_choose(&l.plan, NULL);
    int code = cli_plan_pick_backends(&l.plan, "collbench init", o->backends, o->nbackends,
                                      backends, MAX_BACKENDS, &nb);
    if (code) return code;
    /* Refuse an unwritable --csv before the sweep, not after; creating nothing,
     * so a failed sweep leaves no empty file (the header goes with the first row). */
    if (o->csv_path && (coll__file_check_writable(o->csv_path, COLL_FILE_APPEND, err, sizeof err) ||
                        coll__csv_check_header(o->csv_path, CSV_HEADER, err, sizeof err))) {
        fprintf(stderr, "collbench init: --csv: %s\n", err);
        return EXIT_USAGE;
    }
    print_header();
    return cli_sweep(backends, nb, o->procs, o->nprocs, launch_one, &l);
}

/* ================= the command ================= */

int cmd_init(int argc, char **argv)
{
    init_opts o;
    coll_launch_env env;
    int code = parse_opts(&o, argc, argv);
    if (code == BENCH_OPT_HELP) {
        usage(stdout);
        code = 0;
    } else if (code == 0) {
        cli_role role = cli_detect_role("collbench init", &env);
        code = role == CLI_RANK       ? run_as_rank(&o, &env)
               : role == CLI_LAUNCHER ? run_as_launcher(&o, argc, argv)
                                      : EXIT_USAGE;
    }
    free_opts(&o);
    return code;
}
