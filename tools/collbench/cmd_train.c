/* collbench train: the data-parallel training benchmark.
 *
 * Not inside a launched rank: this process is the launcher. It checks the
 * options (model shape, batch vs process counts, a memory estimate) before
 * anything starts, then launches our own command line for every process
 * count (1 process: the `single` baseline; more: every other mode) and
 * backend, as cmd_collective.c does. Rank 0 sends one line per measured row
 * down the results pipe; the launcher fills in the scaling efficiency against
 * the single-process row, prints the table, appends --csv and merges -J.
 * Inside a rank: one communicator, then every batch x mode (x bucket size x
 * compression for ddp) trained and timed by train_run(). */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "launch/launcher.h"
#include "cli_launch.h"
#include "coll_tool.h"
#include "engine/host_label.h"
#include "rows/result.h"
#include "train/train_blas.h"
#include "train/train_metrics.h"
#include "train/train_options.h"
#include "train/train_run.h"

#define PREFIX "collbench train"
#define MAX_ROWS 1024

/* ================= inside a rank ================= */

typedef struct rank_ctx {
    const train_options *o;
    coll_comm *comm;
    const char *backend;
    int rank, world;
    FILE *results; /* our launcher's pipe (rank 0), or NULL: write the outputs here */
    char model[32], host[64], stamp[32];
    train_row rows[MAX_ROWS];
    size_t nrows;
    train_mem_row mem[TRAIN_MAX_LIST];
    size_t nmem;
} rank_ctx;

static void utc_now(char *buf, size_t len)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int exit_code_of(int rc)
{
    if (rc == TRAIN_EMISMATCH) return EXIT_WRONG;
    if (rc == COLL_EINVAL) return EXIT_USAGE;
    return EXIT_RUNTIME;
}

/* Rank 0: one measured row out, to the launcher or to the files. */
static void emit_row(rank_ctx *c, train_row *row)
{
    char line[1024];
    if (c->results) {
        if (train_row_to_csv(row, line, sizeof line) > 0) fprintf(c->results, "T,%s\n", line);
        fflush(c->results);
        return;
    }
    if (c->nrows == 0) train_table_header(stdout);
    train_table_line(stdout, row);
    if (c->nrows < MAX_ROWS) c->rows[c->nrows++] = *row;
}

static int run_one(rank_ctx *c, const train_config *cfg, const char *compress, double bucket_mb,
                   train_mem *mem_max)
{
    train_result res;
    char err[512];
    int rc = train_run(c->comm, cfg, &res, err, sizeof err);
    char mode[24];
    train_reducer_mode_name(&cfg->red, mode, sizeof mode);
    if (rc) {
        fprintf(stderr, PREFIX ": rank %d: %s %s batch %zu: %s\n", c->rank, c->model, mode,
                cfg->batch, err);
        train_result_free(&res);
        return exit_code_of(rc);
    }
    if (c->rank == 0) {
        train_row row;
        memset(&row, 0, sizeof row);
        train_row_from_result(&row, &res, c->world, (int)cfg->batch);
        snprintf(row.timestamp, sizeof row.timestamp, "%s", c->stamp);
        snprintf(row.host, sizeof row.host, "%s", c->host);
        snprintf(row.model, sizeof row.model, "%s", c->model);
        snprintf(row.mode, sizeof row.mode, "%s", mode);
        snprintf(row.backend, sizeof row.backend, "%s", c->world == 1 ? "none" : c->backend);
        snprintf(row.compress, sizeof row.compress, "%s", compress);
        row.bucket_mb = bucket_mb;
        /* without the launcher's single-process row: one rank's compute-only throughput */
        row.scaling_eff = c->world == 1
                              ? 1.0
                              : train_scaling_eff(&row, res.compute_ms > 0
                                                            ? cfg->batch * 1e3 / res.compute_ms
                                                            : 0);
        emit_row(c, &row);
    }
    train_mem *m = &res.mem;
#define MAX_INTO(f) mem_max->f = m->f > mem_max->f ? m->f : mem_max->f
    MAX_INTO(params_bytes), MAX_INTO(grads_bytes), MAX_INTO(optim_bytes);
    MAX_INTO(activations_bytes), MAX_INTO(comm_buffers_bytes), MAX_INTO(peak_rss_bytes);
#undef MAX_INTO
    train_result_free(&res);
    return 0;
}

static int run_batch(rank_ctx *c, size_t bi)
{
    const train_options *o = c->o;
    train_config cfg = {.batch = (size_t)train_options_batch(o, bi, c->world),
                        .steps = o->steps,
                        .warmup = o->warmup,
                        .compute_steps = o->compute_steps,
                        .seed = o->seed,
                        .lr = (float)o->lr,
                        .momentum = (float)o->momentum,
                        .check_every = o->check_every,
                        .inject_nan_step = o->inject_nan};
    train_options_spec(o, &cfg.spec);
    train_mem mem_max = {0};
    char cname[16];
    int code = 0;
    for (size_t mi = 0; mi < o->nmodes && !code; mi++) {
        reducer_opts r = o->modes[mi];
        if ((r.mode == MODE_SINGLE) != (c->world == 1)) continue;
        r.first_bucket_bytes = (size_t)(o->first_bucket_mb * 1048576.0);
        if (r.mode != MODE_DDP) {
            cfg.red = r;
            code = run_one(c, &cfg, "none", 0, &mem_max);
            continue;
        }
        for (size_t bk = 0; bk < o->nbucket && !code; bk++)
            for (size_t ci = 0; ci < o->ncompress && !code; ci++) {
                r.bucket_bytes = (size_t)(o->bucket_mb[bk] * 1048576.0);
                r.compress = o->compress[ci];
                train_compress_name(&r.compress, cname, sizeof cname);
                cfg.red = r;
                code = run_one(c, &cfg, cname, o->bucket_mb[bk], &mem_max);
            }
    }
    if (!code && c->rank == 0 && mem_max.params_bytes) {
        train_mem_row mr = {.batch = (int)cfg.batch, .mem = mem_max};
        snprintf(mr.model, sizeof mr.model, "%s", c->model);
        char line[512];
        if (c->results && train_mem_row_to_csv(&mr, line, sizeof line) > 0) {
            fprintf(c->results, "M,%s\n", line);
            fflush(c->results);
        } else if (!c->results && c->nmem < TRAIN_MAX_LIST) {
            c->mem[c->nmem++] = mr;
        }
    }
    return code;
}

/* Rank 0 started by someone else (torchrun, mpirun): the files are ours. */
static int write_outputs(rank_ctx *c)
{
    char err[512];
    int code = 0;
    train_mem_table(stdout, c->mem, c->nmem);
    if (c->o->csv_path && train_csv_append(c->o->csv_path, c->rows, c->nrows, err, sizeof err)) {
        fprintf(stderr, PREFIX ": --csv: %s\n", err);
        code = EXIT_RUNTIME;
    }
    if (c->o->json_path && train_json_write(c->o->json_path, c->world, NULL, c->rows, c->nrows,
                                            c->mem, c->nmem, err, sizeof err)) {
        fprintf(stderr, PREFIX ": -J: %s\n", err);
        code = EXIT_RUNTIME;
    }
    return code;
}

/* --backend's list in the shape the CLI helpers take; returns its length. */
static size_t asked_backends(const train_options *o, char *asked[8])
{
    for (size_t i = 0; i < o->nbackends; i++) asked[i] = (char *)o->backends[i];
    return o->nbackends;
}

static int run_as_rank(const train_options *o, const coll_launch_env *env)
{
    static rank_ctx c; /* big: rows */
    memset(&c, 0, sizeof c);
    c.o = o;
    char *asked[8];
    c.backend = cli_rank_backend(PREFIX, CLI_ENV_BACKEND, asked, asked_backends(o, asked),
                                 env->rank);
    train_blas_set_threads(o->blas_threads);
    /* Big buffers from mmap, back to the system on free: otherwise glibc's
     * growing mmap threshold keeps each run's model in the heap and the next
     * run's peak RSS includes it. */
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    coll_config cfg;
    coll_config_init(&cfg);
    cfg.backend = c.backend;
    cfg.timeout_s = o->timeout_s;
    int rc = coll_comm_create(&cfg, &c.comm);
    if (rc) {
        fprintf(stderr, PREFIX ": rank %d: %s\n", env->rank,
                *coll_last_create_error() ? coll_last_create_error() : coll_strerror(rc));
        return rc == COLL_EUNAVAIL ? EXIT_UNAVAILABLE
               : rc == COLL_EINVAL ? EXIT_USAGE
                                   : EXIT_RUNTIME;
    }
    c.backend = coll_comm_backend(c.comm);
    c.rank = coll_comm_rank(c.comm);
    c.world = coll_comm_size(c.comm);
    train_options_model_name(o, c.model, sizeof c.model);
    (void)bench_host_label(c.host, sizeof c.host, NULL, 0); /* checked at launch */
    utc_now(c.stamp, sizeof c.stamp);
    const char *fd = getenv(COLL_ENV_RESULTS_FD);
    if (c.rank == 0 && fd && *fd && env->source && strcmp(env->source, "collbench") == 0)
        c.results = fdopen(atoi(fd), "w");
    /* a line per write: other ranks' done marks share the pipe (launcher.h) */
    if (c.results) setvbuf(c.results, NULL, _IOLBF, 0);

    int code = 0;
    size_t nb = o->global_batch ? 1 : o->nbatches;
    for (size_t i = 0; i < nb && !code; i++) code = run_batch(&c, i);
    if (!code && c.rank == 0 && !c.results) code = write_outputs(&c);
    if (c.results) fclose(c.results);
    /* After a failure the other ranks may be stuck in a collective: leave
     * without the collective destroy and let the launcher stop them. */
    if (!code) coll_comm_destroy(c.comm);
    return code;
}

/* ================= the launcher ================= */

typedef struct launch_ctx {
    const train_options *o;
    cli_launch_plan plan;
    cli_launch launch;
    train_row rows[MAX_ROWS];
    size_t nrows;
    train_mem_row mem[TRAIN_MAX_LIST * 4];
    size_t nmem;
    double single[TRAIN_MAX_LIST]; /* samples/s of the single row, per batch-size index */
    int lost;
    char csv_err[512];
    int csv_failed;
} launch_ctx;

static double *baseline(launch_ctx *l, int batch)
{
    for (size_t i = 0; i < l->o->nbatches; i++)
        if (train_options_batch(l->o, i, 1) == batch) return &l->single[i];
    return NULL;
}

static void add_mem(launch_ctx *l, const train_mem_row *r)
{
    for (size_t i = 0; i < l->nmem; i++) {
        train_mem_row *m = &l->mem[i];
        if (m->batch != r->batch || strcmp(m->model, r->model) != 0) continue;
#define MAX_INTO(f) m->mem.f = r->mem.f > m->mem.f ? r->mem.f : m->mem.f
        MAX_INTO(params_bytes), MAX_INTO(grads_bytes), MAX_INTO(optim_bytes);
        MAX_INTO(activations_bytes), MAX_INTO(comm_buffers_bytes), MAX_INTO(peak_rss_bytes);
#undef MAX_INTO
        return;
    }
    if (l->nmem < sizeof l->mem / sizeof l->mem[0]) l->mem[l->nmem++] = *r;
}

static void on_result_line(const char *line, void *arg)
{
    launch_ctx *l = arg;
    char err[256];
    if (strncmp(line, "M,", 2) == 0) {
        train_mem_row m;
        if (train_mem_row_from_csv(line + 2, &m, err, sizeof err) == 0) return add_mem(l, &m);
    } else if (strncmp(line, "T,", 2) == 0) {
        train_row r;
        if (train_row_from_csv(line + 2, &r, err, sizeof err) == 0) {
            /* global batch: the single row's batch is the whole batch */
            double *base = baseline(l, l->o->global_batch ? r.batch * r.nprocs : r.batch);
            if (r.nprocs == 1 && base) *base = r.samples_per_s;
            else if (base && *base > 0) r.scaling_eff = train_scaling_eff(&r, *base);
            train_table_line(stdout, &r);
            if (l->o->csv_path && !l->csv_failed &&
                train_csv_append(l->o->csv_path, &r, 1, l->csv_err, sizeof l->csv_err))
                l->csv_failed = 1;
            if (l->nrows < MAX_ROWS) l->rows[l->nrows++] = r;
            return;
        }
    } else {
        snprintf(err, sizeof err, "unknown kind of line");
    }
    fprintf(stderr, PREFIX ": ignoring a malformed result line from rank 0 (%s): %s\n", err, line);
    l->lost++;
}

static int launch_one(void *arg, const char *backend, int nprocs)
{
    launch_ctx *l = arg;
    return cli_launch_one(&l->plan, &l->launch, backend, nprocs);
}

static int pick_backends(const train_options *o, const cli_launch_plan *plan, const char **out,
                         size_t *n)
{
    char *asked[8];
    int code = cli_plan_pick_backends(plan, PREFIX, asked, asked_backends(o, asked), out, 8, n);
    if (code || o->nbackends) return code;
    /* Unasked: one backend, the library's choice inside a host, keeps the default run short. */
    out[0] = coll_backend_preferred(out[0]);
    *n = 1;
    return 0;
}

/* Before any rank starts, and creating nothing: a run that fails later leaves
 * no header-only CSV. */
static int check_outputs(const train_options *o)
{
    char err[512];
    int rc = 0;
    if (o->csv_path && (rc = train_csv_check(o->csv_path, err, sizeof err))) {
        fprintf(stderr, PREFIX ": --csv: %s\n", err);
    } else if (o->json_path && (rc = bench_json_check(o->json_path, err, sizeof err))) {
        fprintf(stderr, PREFIX ": -J: %s\n", err);
    }
    return !rc ? 0 : rc == COLL_EUNAVAIL ? EXIT_UNAVAILABLE : EXIT_USAGE;
}

static void config_json(const train_options *o, char *buf, size_t len)
{
    char model[32];
    train_options_model_name(o, model, sizeof model);
    snprintf(buf, len,
             "{\"train_net\":\"%s\",\"train_steps\":%d,\"train_warmup\":%d,"
             "\"train_seed\":%llu,\"train_lr\":%g,\"train_momentum\":%g}",
             model, o->steps, o->warmup, (unsigned long long)o->seed, o->lr, o->momentum);
}

static int run_as_launcher(const train_options *asked, int argc, char **argv)
{
    static launch_ctx l; /* big: rows */
    static train_options o_node;
    const train_options *o = asked;
    if (!bench_multinode_writes(&asked->mn)) { /* node 0 writes the results */
        o_node = *asked;
        o_node.csv_path = o_node.json_path = NULL;
        o = &o_node;
    }
    memset(&l, 0, sizeof l);
    l.o = o;
    cli_plan_choose(&l.plan, &asked->mn);
    l.launch = (cli_launch){.prefix = PREFIX,
                            .what = "train",
                            .argc = argc,
                            .argv = argv,
                            .exit_wrong = EXIT_WRONG,
                            .on_result_line = on_result_line,
                            .arg = &l};
    const char *backends[8];
    size_t nb;
    int code = pick_backends(o, &l.plan, backends, &nb);
    if (code || (code = check_outputs(o))) return code;

    net_spec spec;
    train_layer layers[NET_MAX_LAYERS];
    size_t nl, np;
    char err[512];
    train_options_spec(o, &spec);
    train_net_plan(&spec, layers, &nl, &np, err, sizeof err);
    char model[32];
    train_options_model_name(o, model, sizeof model);
    printf("# %s: %zu parameters (%.1f MiB), steps %d (+%d warm-up), seed %llu\n", model, np,
           np * 4.0 / 1048576, o->steps, o->warmup, (unsigned long long)o->seed);
    train_table_header(stdout);

    int first = 0, maxp = 1;
    for (size_t p = 0; p < o->nprocs && first < EXIT_SIGNALLED; p++) {
        int n = o->procs[p];
        maxp = n > maxp ? n : maxp;
        /* one process runs only `single`, which needs no backend: launch it once */
        int c = n == 1 ? launch_one(&l, backends[0], 1)
                       : cli_sweep(backends, nb, &n, 1, launch_one, &l);
        if (c && (!first || c >= EXIT_SIGNALLED)) first = c;
    }
    train_mem_table(stdout, l.mem, l.nmem);
    if (l.csv_failed) fprintf(stderr, PREFIX ": --csv: %s\n", l.csv_err);
    if (o->json_path && (l.nrows || l.nmem)) {
        char extra[512];
        config_json(o, extra, sizeof extra);
        if (train_json_write(o->json_path, maxp, extra, l.rows, l.nrows, l.mem, l.nmem, err,
                             sizeof err)) {
            fprintf(stderr, PREFIX ": -J: %s\n", err);
            if (!first) first = EXIT_RUNTIME;
        }
    }
    if (!first && (l.csv_failed || l.lost)) first = EXIT_RUNTIME;
    return first;
}

/* ================= the command ================= */

int cmd_train(int argc, char **argv)
{
    static train_options o;
    coll_launch_env env;
    char err[768];
    int rc = train_options_parse(&o, argc, argv, err, sizeof err);
    if (rc == TRAIN_OPTIONS_HELP) {
        train_options_usage(stdout);
        return 0;
    }
    if (rc) {
        fprintf(stderr, PREFIX ": %s\n", err);
        return EXIT_USAGE;
    }
    if (!train_blas_available()) {
        fprintf(stderr, PREFIX ": " TRAIN_BLAS_MISSING "\n");
        return EXIT_UNAVAILABLE;
    }
    cli_role role = cli_detect_role(PREFIX, &env);
    if (role == CLI_BAD_ENV) return EXIT_USAGE;
    /* ranks trust the launcher's checks; ranks of another launcher check too */
    if ((role == CLI_LAUNCHER || !env.source || strcmp(env.source, "collbench") != 0) &&
        train_options_check(&o, err, sizeof err)) {
        if (role == CLI_LAUNCHER || env.rank == 0) fprintf(stderr, PREFIX ": %s\n", err);
        return EXIT_USAGE;
    }
    return role == CLI_RANK ? run_as_rank(&o, &env) : run_as_launcher(&o, argc, argv);
}
