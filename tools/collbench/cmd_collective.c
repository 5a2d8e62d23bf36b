/* collbench allreduce|allgather|reducescatter|broadcast|reduce|alltoall|sendrecv|barrier
 *
 * Not inside a launched rank: this process is the launcher. It runs every
 * backend x process count as one configuration (our own argv again, with
 * COLLBENCH_BACKEND and COLLBENCH_NPROCS set), and owns the --csv/--json files:
 * rank 0 sends its rows down the results pipe.
 * Inside a rank (ours, torchrun, mpirun, srun): create the communicator and run. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h> /* mallopt */
#endif

#include "engine/memory_need.h"
#include "engine/bench_coll.h"
#include "engine/bench_options.h"
#include "engine/bench_runner.h"
#include "engine/bench_sink.h"
#include "engine/host_label.h"
#include "engine/machine_info.h"
#include "rows/result.h"
#include "cli_gpu.h"
#include "cli_launch.h"
#include "coll_tool.h"

static void json_meta(const bench_options *o, char *extra, size_t len, bench_json_meta *m)
{
    snprintf(extra, len,
             "{\"collective\":\"%s\",\"check_iters\":%d,\"seed\":%llu,\"time_budget_s\":%g,"
             "\"inplace\":%d,\"algo\":\"%s\",\"timeout_s\":%g,\"passes\":%d,\"stop_spread\":%g}",
             o->coll->name, o->check, (unsigned long long)o->seed, o->time_budget_s, o->inplace,
             o->algo, o->timeout_s, o->passes, o->stop_spread);
    memset(m, 0, sizeof *m);
    m->name = "collbench";
    m->world_size = bench_options_largest_procs(o);
    m->warmup_iters = o->warmup;
    m->benchmark_iters = o->iters;
    m->device = o->device;
    m->extra_config_json = extra;
}

/* ================= inside a rank ================= */

static int create_comm(const bench_options *o, const coll_launch_env *env, const char *backend,
                       coll_comm **comm)
{
    coll_config cfg;
    coll_config_init(&cfg);
    cfg.backend = backend;
    cfg.timeout_s = o->timeout_s;
    cfg.algo = o->algo;
    cfg.init_method = o->init_method;
    int rc = coll_comm_create(&cfg, comm);
    if (rc == 0) return 0;
    char what[96] = ""; /* a refused --algo is refused for this collective */
    if (rc == COLL_ENOTSUP) snprintf(what, sizeof what, "%s --algo %s: ", o->coll->name, o->algo);
    fprintf(stderr, "collbench: rank %d: %s%s\n", env->rank, what,
            *coll_last_create_error() ? coll_last_create_error() : coll_strerror(rc));
    /* EINVAL: a bad rank/world, init method or MASTER_PORT; ENOTSUP: an --algo
     * the backend does not have; all the user's to fix */
    int usage = rc == COLL_EINVAL || rc == COLL_ENOTSUP;
    return rc == COLL_EUNAVAIL ? EXIT_UNAVAILABLE : usage ? EXIT_USAGE : EXIT_RUNTIME;
}

/* The communicator's message, with the failed rank named when it is not already. */
static void report_runtime_error(coll_comm *comm, int rc, const char *local)
{
    const char *msg = local && *local ? local : coll_comm_errmsg(comm);
    int failed = coll_comm_failed_rank(comm);
    char who[32] = "", me[32], also[48] = "";
    snprintf(who, sizeof who, "rank %d", failed);
    snprintf(me, sizeof me, "rank %d: ", coll_comm_rank(comm));
    if (!*msg) msg = coll_strerror(rc);
    if (failed >= 0 && !strstr(msg, who)) snprintf(also, sizeof also, " (failed: %s)", who);
    /* One write: the ranks share stderr, and pieces would interleave with theirs. */
    fprintf(stderr, "collbench: %s%s%s\n", strncmp(msg, me, strlen(me)) ? me : "", msg, also);
}

static int nodes_of(const coll_launch_env *env, int world)
{
    if (env->local_world_size <= 0) return 1;
    return (world + env->local_world_size - 1) / env->local_world_size;
}

/* *broken: the communicator failed (every rank sees it), not only rank 0's files.
 * pass: which pass of --passes the rows are of, from 1. */
static int run_in_comm(const bench_options *o, const coll_launch_env *env, coll_comm *comm,
                       int pass, int *broken)
{
    char extra[512], err[512];
    bench_json_meta meta;
    bench_sink sink;
    bench_runner runner;
    int world = coll_comm_size(comm), rank = coll_comm_rank(comm);

    if (o->coll->has_root && o->root >= world) {
        if (rank == 0)
            fprintf(stderr, "collbench: -r: root %d is not a rank of %d processes\n", o->root,
                    world);
        return EXIT_USAGE;
    }
    json_meta(o, extra, sizeof extra, &meta);
    meta.world_size = world; /* -P means nothing to ranks started by someone else */
    bench_sink_init(&sink, 1, o->csv_path, o->json_path, &meta);
    bench_runner_init(&runner, o, comm, nodes_of(env, world), &sink);
    runner.pass = pass;
    int rc = bench_runner_run(&runner, err, sizeof err);
    if (rc) report_runtime_error(comm, rc, err);
    *broken = rc != 0;
    if (rank == 0) bench_sink_flush(&sink);
    if (rank == 0 && sink.status) fprintf(stderr, "collbench: %s\n", sink.err);
    int code = rc ? EXIT_RUNTIME : runner.wrong > 0 ? EXIT_WRONG : sink.status ? EXIT_RUNTIME : 0;
    bench_sink_free(&sink);
    return code;
}

/* Open MPI's all-reduce mallocs and frees a GiB of scratch per call at 1G,
 * which glibc would mmap, first-touch (seconds per GiB here) and munmap every
 * call; kept in the heap it is reused, as a framework's caching allocator
 * reuses its tensors. */
static void keep_freed_memory(void)
{
#ifdef __GLIBC__
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, INT_MAX);
#endif
}

static int run_backend(const bench_options *o, const coll_launch_env *env, const char *backend,
                       int pass, int *broken)
{
    coll_comm *comm = NULL;
    int code = create_comm(o, env, backend, &comm);
    *broken = code != 0;
    if (code) return code;
    /* mpi only: on tcp it cost our buffers their huge pages (1G calls 1.7 s
     * instead of 0.7-1.0 s, two runs), and libcoll reuses its own scratch */
    if (strcmp(coll_comm_backend(comm), "mpi") == 0) keep_freed_memory();
    code = run_in_comm(o, env, comm, pass, broken);
    coll_comm_destroy(comm);
    return code;
}

/* Before a backend's turn: its pinning (shm and auto pinned, tcp free). */
typedef struct turn_pin {
    const char *backend;
    int local_rank, local_size;
} turn_pin;

static void pin_turn(void *arg)
{
    const turn_pin *t = arg;
    if (t->backend) cli_rank_pin(t->backend, t->local_rank, t->local_size);
}

/* A list of backends (--same-ranks) or --passes: every communicator made
 * first (each under its backend's pinning, which its threads keep), then the
 * runner measures them size by size, interleaved (bench_runner_run_passes). A
 * communicator that cannot be made ends the run before anything is measured. */
static int run_interleaved(const bench_options *o, const coll_launch_env *env, char **names, int nb)
{
    coll_comm *comms[BENCH_MAX_BACKENDS] = {0};
    bench_runner rs[BENCH_MAX_BACKENDS];
    turn_pin pins[BENCH_MAX_BACKENDS];
    char extra[512], err[512];
    bench_json_meta meta;
    bench_sink sink;
    int code = 0, made = 0,
        local_size = env->local_world_size > 0 ? env->local_world_size : env->world_size;
    for (; made < nb && !code; made++) {
        pins[made] = (turn_pin){names[made], env->local_rank >= 0 ? env->local_rank : env->rank,
                                local_size};
        pin_turn(&pins[made]);
        if ((code = create_comm(o, env, names[made], &comms[made]))) break;
        if (strcmp(coll_comm_backend(comms[made]), "mpi") == 0) keep_freed_memory();
    }
    if (!code) {
        coll_comm *comm0 = comms[0];
        int world = coll_comm_size(comm0), rank = coll_comm_rank(comm0);
        if (o->coll->has_root && o->root >= world) {
            if (rank == 0)
                fprintf(stderr, "collbench: -r: root %d is not a rank of %d processes\n", o->root,
                        world);
            code = EXIT_USAGE;
        }
    }
    if (!code) {
        json_meta(o, extra, sizeof extra, &meta);
        meta.world_size = coll_comm_size(comms[0]);
        bench_sink_init(&sink, 1, o->csv_path, o->json_path, &meta);
        for (int i = 0; i < nb; i++) {
            bench_runner_init(&rs[i], o, comms[i], nodes_of(env, coll_comm_size(comms[i])), &sink);
            rs[i].turn = pin_turn;
            rs[i].turn_arg = &pins[i];
        }
        size_t failed = 0;
        int64_t wrong = 0;
        int rc = bench_runner_run_passes(rs, (size_t)nb, o->passes, &failed, err, sizeof err);
        if (rc) report_runtime_error(comms[failed], rc, err);
        for (int i = 0; i < nb; i++) wrong += rs[i].wrong;
        if (coll_comm_rank(comms[0]) == 0) bench_sink_flush(&sink);
        if (coll_comm_rank(comms[0]) == 0 && sink.status)
            fprintf(stderr, "collbench: %s\n", sink.err);
        code = rc ? EXIT_RUNTIME : wrong > 0 ? EXIT_WRONG : sink.status ? EXIT_RUNTIME : 0;
        bench_sink_free(&sink);
    }
    for (int i = nb; i-- > 0;)
        if (comms[i]) coll_comm_destroy(comms[i]);
    return code;
}

/* One backend, or with --same-ranks a list, or --passes: see run_interleaved;
 * --duration soaks each backend in turn (a soak is one backend's sizes again
 * and again), with --passes the list again, reversed every other pass. A
 * failed communicator ends the list; wrong results do not. */
static int run_as_rank(const bench_options *o, const coll_launch_env *env)
{
    const char *named = cli_rank_backend("collbench", CLI_ENV_BACKEND, o->backends, o->nbackends,
                                         env->rank);
    int code = cli_gpu_rank_setup("collbench", o->device, env->rank, env->local_rank);
    int first = 0, broken = 0;
    char why[256];
    if (code) return code;
    /* ranks another launcher started learn the world here, past the -P check */
    if (bench_options_check_world(o, env->world_size, why, sizeof why)) {
        if (env->rank == 0) fprintf(stderr, "collbench %s: %s\n", o->coll->name, why);
        return EXIT_USAGE;
    }
    if (o->passes == 1 && (!named || !strchr(named, ',')))
        return run_backend(o, env, named, 1, &broken);
    char list[256], *save = NULL, *names[BENCH_MAX_BACKENDS];
    int nb = 0;
    snprintf(list, sizeof list, "%s", named ? named : "");
    for (char *b = strtok_r(list, ",", &save); b && nb < BENCH_MAX_BACKENDS;
         b = strtok_r(NULL, ",", &save))
        names[nb++] = b;
    if (nb == 0) names[nb++] = NULL; /* the default backend */
    if (o->duration_s <= 0) return run_interleaved(o, env, names, nb);
    int local_size = env->local_world_size > 0 ? env->local_world_size : env->world_size;
    for (int pass = 0; pass < o->passes && !broken; pass++) {
        if (o->passes > 1 && env->rank == 0 && !o->quiet)
            printf("\n# pass %d of %d%s\n", pass + 1, o->passes,
                   pass % 2 ? ", backends in reverse order" : "");
        for (int i = 0; i < nb && !broken; i++) {
            const char *b = names[pass % 2 ? nb - 1 - i : i];
            if (b) cli_rank_pin(b, env->local_rank >= 0 ? env->local_rank : env->rank, local_size);
            code = run_backend(o, env, b, pass + 1, &broken);
            if (code && !first) first = code;
        }
    }
    return first;
}

/* ================= the launcher ================= */

/* libcoll's named algorithms run on tcp (shm picks its own strategies, auto on
 * one host runs on shm, mpi is MPI's): a default sweep with --algo keeps tcp
 * rather than have the others refuse. */
static void algo_backends(const bench_options *o, const cli_launch_plan *plan,
                          const char **backends, size_t *nb)
{
    size_t k = 0;
    if (o->nbackends > 0 || strcmp(o->algo, "auto") == 0 || plan->kind == CLI_LAUNCH_MULTINODE)
        return;
    for (size_t i = 0; i < *nb; i++)
        if (strcmp(backends[i], "tcp") == 0) backends[k++] = backends[i];
    if (k == 0) return;
    *nb = k;
    if (!o->quiet)
        printf("# --algo %s: backend tcp only (the others pick their own algorithms)\n", o->algo);
}

typedef struct launch_ctx {
    const bench_options *o;
    bench_sink sink;
    int lines_lost;
    int ngpus; /* --device cuda: GPUs on this host */
    cli_launch_plan plan;
    cli_launch launch;
} launch_ctx;

/* A row from rank 0: into the CSV at once, kept for the JSON. */
static void on_result_line(const char *line, void *arg)
{
    launch_ctx *l = arg;
    bench_row row;
    char err[256];
    if (bench_row_from_csv(line, &row, err, sizeof err) != 0) {
        fprintf(stderr, "collbench: ignoring a malformed result line from rank 0: %s\n", err);
        l->lines_lost++;
        return;
    }
    bench_sink_add(&l->sink, &row); /* a failure is reported once, at the end */
}

static int check_root(const bench_options *o)
{
    if (!o->coll->has_root) return 0;
    for (size_t i = 0; i < o->nprocs; i++)
        if (o->root >= o->procs[i]) {
            fprintf(stderr, "collbench: -r: root %d is not a rank of %d processes (-P)\n", o->root,
                    o->procs[i]);
            return EXIT_USAGE;
        }
    return 0;
}

/* One backend x process count; returns its exit code (0 ok). */
static int launch_one(void *arg, const char *backend, int nprocs)
{
    launch_ctx *l = arg;
    if (cli_gpu_skip("collbench", l->o->coll->name, l->o->device, backend, nprocs, l->ngpus,
                     l->o->quiet))
        return 0;
    if (!l->o->quiet) printf("\n");
    int code = cli_launch_one(&l->plan, &l->launch, backend, nprocs);
    bench_sink_flush(&l->sink);
    return code;
}

/* --same-ranks: per process count one launch runs every backend our launcher
 * starts here, in turn (run_as_rank); those mpirun or --nnodes starts are swept apart. */
static int sweep_same_ranks(launch_ctx *l, const char **backends, size_t nb)
{
    const char *apart[BENCH_MAX_BACKENDS];
    char list[256] = "";
    size_t napart = 0, used = 0;
    for (size_t i = 0; i < nb; i++) {
        if (cli_plan_kind(&l->plan, backends[i]) != CLI_LAUNCH_LOCAL) {
            apart[napart++] = backends[i];
            continue;
        }
        int n = snprintf(list + used, sizeof list - used, "%s%s", used ? "," : "", backends[i]);
        if (n < 0 || (size_t)n >= sizeof list - used) return EXIT_USAGE; /* 8 short names fit */
        used += (size_t)n;
    }
    const char *joined = list;
    int first = used ? cli_sweep(&joined, 1, l->o->procs, l->o->nprocs, launch_one, l) : 0;
    if (first < EXIT_SIGNALLED && napart) {
        int code = cli_sweep(apart, napart, l->o->procs, l->o->nprocs, launch_one, l);
        if (code && (!first || code >= EXIT_SIGNALLED)) first = code;
    }
    return first;
}

/* Refuse an output file we cannot write before minutes of benchmarking, not
 * after. Nothing is created: a run that fails later leaves no empty or
 * header-only file. */
static int check_outputs(const bench_options *o, const bench_sink *sink)
{
    char err[600];
    /* Only node 0 writes results: on a shared filesystem the other nodes must not
     * even create the file, or two headers race into it. */
    if (!bench_multinode_writes(&o->mn)) return 0;
    int rc = bench_outputs_check(sink, o->per_iter_path, err, sizeof err);
    if (!rc) return 0;
    fprintf(stderr, "collbench: %s\n", err);
    return rc == COLL_EUNAVAIL ? EXIT_UNAVAILABLE : EXIT_USAGE;
}

/* A size that gives a rank of some -P less than one element: refused before
 * any configuration runs (bench_options_check_world). */
static int check_sizes(const bench_options *o)
{
    char err[256];
    if (bench_options_check_procs(o, err, sizeof err) == 0) return 0;
    fprintf(stderr, "collbench %s: %s\n", o->coll->name, err);
    return EXIT_USAGE;
}

/* Our launcher hands rank 0 the store's socket and the ranks MASTER_PORT: env://
 * is the only init method it needs. A file:// store would need a fresh file per
 * configuration and tcp:// a port free for each; not worth the surprises. */
static int check_init_method(const bench_options *o)
{
    if (!o->init_method || strcmp(o->init_method, "env://") == 0) return 0;
    fprintf(stderr, "collbench: --init-method is for ranks started by another launcher; "
                    "collbench's own launcher uses env://\n");
    return EXIT_USAGE;
}

/* Refuse a run whose buffers cannot fit this host before any rank allocates
 * (memory_need.h): the OOM killer might otherwise pick any process here. */
static int check_memory(const bench_options *o)
{
    char err[400];
    if (o->force_memory || bench_memory_check(o, err, sizeof err) == 0) return 0;
    fprintf(stderr, "collbench: %s\n", err);
    return EXIT_USAGE;
}

/* The cores the ranks of this host shared, once per run beside the rows in
 * results.json (machines.<host>.cores): the cost model's fit needs them where
 * ranks outnumber them. The launcher's own mask, before any rank is pinned. */
static void record_cores(const char *json_path, bench_sink *sink)
{
#ifdef COLL_HAVE_JANSSON
    char host[64] = "", err[512];
    if (!json_path || access(json_path, F_OK) != 0) return; /* no rows written */
    if (bench_host_label(host, sizeof host, err, sizeof err) == 0 &&
        bench_json_set_machine(json_path, host, "cores", bench_machine_usable_cores(), err,
                               sizeof err) == 0)
        return;
    sink->status = COLL_ESYS;
    snprintf(sink->err, sizeof sink->err, "-J: the machine's cores not recorded: %.400s", err);
#else
    (void)json_path, (void)sink;
#endif
}

static int run_as_launcher(const bench_options *o, int argc, char **argv)
{
    const char *backends[BENCH_MAX_BACKENDS];
    size_t nb;
    char extra[512];
    bench_json_meta meta;
    launch_ctx l = {.o = o,
                    .launch = {.prefix = "collbench",
                               .what = o->coll->name,
                               .argc = argc,
                               .argv = argv,
                               .exit_wrong = EXIT_WRONG,
                               .on_result_line = on_result_line,
                               .arg = &l}};
    cli_plan_choose(&l.plan, &o->mn);
    json_meta(o, extra, sizeof extra, &meta);
    int writes = bench_multinode_writes(&o->mn);
    bench_sink_init(&l.sink, 0, writes ? o->csv_path : NULL, writes ? o->json_path : NULL, &meta);
    int code = check_init_method(o);
    if (code || (code = check_root(o)) || (code = check_sizes(o)) ||
        (code = cli_gpu_check_launch("collbench", o->device, o->backends, o->nbackends,
                                     &l.ngpus)) ||
        (code = cli_plan_pick_backends(&l.plan, "collbench", o->backends, o->nbackends, backends,
                                       BENCH_MAX_BACKENDS, &nb)) ||
        (code = check_outputs(o, &l.sink)) || (code = check_memory(o)))
        return code;
    cli_gpu_default_backends(o->device, o->nbackends, backends, BENCH_MAX_BACKENDS, &nb);
    algo_backends(o, &l.plan, backends, &nb);

    int first = o->same_ranks ? sweep_same_ranks(&l, backends, nb)
                              : cli_sweep(backends, nb, o->procs, o->nprocs, launch_one, &l);
    if (writes && !l.sink.status) record_cores(o->json_path, &l.sink);
    if (l.sink.status) fprintf(stderr, "collbench: %s\n", l.sink.err);
    if (!first && (l.sink.status || l.lines_lost)) first = EXIT_RUNTIME;
    bench_sink_free(&l.sink);
    return first;
}

/* ================= the command ================= */

int cmd_collective(int argc, char **argv)
{
    const bench_coll *coll = bench_coll_find(argv[0]);
    bench_options o;
    coll_launch_env env;
    char err[512];
    int code;

    if (!coll) return fprintf(stderr, "collbench: unknown collective '%s'\n", argv[0]), EXIT_USAGE;
    int rc = bench_options_parse(&o, coll, argc, argv, err, sizeof err);
    if (rc == BENCH_OPTIONS_HELP) {
        bench_options_usage(stdout, coll);
        code = 0;
    } else if (rc != 0) {
        fprintf(stderr, "collbench %s: %s\n", coll->name, err);
        code = EXIT_USAGE;
    } else {
        cli_role role = cli_detect_role("collbench", &env);
        code = role == CLI_RANK       ? run_as_rank(&o, &env)
               : role == CLI_LAUNCHER ? run_as_launcher(&o, argc, argv)
                                      : EXIT_USAGE;
    }
    bench_options_free(&o);
    return code;
}
