/* collbench suite: the main job (`make run`). Sweeps the collectives over every
 * backend x process count by running our own binary's commands as subprocesses
 * (one per process count and buffer kind, whose ranks run the backends in turn,
 * and one per mpirun or GPU configuration: a step that fails or hangs costs
 * only itself), then the training benchmark, then the report, all into one
 * results directory:
 *
 *   DIR/results.csv, DIR/results.json   every configuration's rows
 *   DIR/training.csv                    the training benchmark (when it runs)
 *   DIR/suite.log                       every step's command line and output
 *   DIR/index.html, plots, tables ...   collbench report
 *
 * Exit: 0 all ok; 1 a result was wrong (whatever else happened); 3 a step failed
 * (the others still ran); 2 bad usage; 4 a backend asked for is not available;
 * 128+signal interrupted. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/dir_make.h"
#include "engine/bench_coll.h"
#include "engine/host_label.h"
#include "engine/machine_info.h"
#include "engine/mem_copy_rate.h"
#include "engine/memory_need.h"
#include "rows/result.h"
#include "coll_tool.h"
#include "engine/opt_table.h"
#include "engine/sizes.h"
#include "cli_common.h"
#include "suite.h"
#include "train/train_blas.h"

#define MAX_BACKENDS 8
#define MAX_STEPS 512
/* A step still running after this long is stopped (a hang; the slowest step,
 * 6 ranks up to 1G, takes 1-2 minutes on a busy 2-core machine);
 * $COLLBENCH_SUITE_STEP_LIMIT (seconds) overrides it, for tests. */
#define STEP_LIMIT_S 900.0
/* What a collective's rank waits for a peer before giving up (-T). */
#define COLL_TIMEOUT_S "120"
/* In the units of collective_weight (seconds per unit are learned as the steps
 * run, bench/eta.h): training at three batch sizes took 60 s where the
 * collectives took 4.35 s a unit, so one batch size ~5 units; --quick ~1. */
#define TRAIN_WEIGHT 5.0
#define TRAIN_WEIGHT_QUICK 1.0
#define REPORT_WEIGHT 0.3

/* Defaults: the seeds' grid up to 256M (its 1G cells, at least 6 calls of
 * 0.5-2 s per backend and pass, made a 2-rank step 2.8x longer: 206 s against
 * 74 s), 1 s of timed iterations per size, in-place; docs/PERFORMANCE.md
 * ("The main job's time") has what each step costs. */
#define DEFAULT_SIZES "1M,10M,100M,256M"
#define DEFAULT_PROCS "2,4,6"
#define DEFAULT_BUDGET "1"
#define SUITE_PASSES 2
/* A size's timed iterations end once their p25-p75 spread is within 5% of the
 * median (--stop-spread): the time goes to the cells that need it. */
#define SUITE_STOP_SPREAD "0.05"
#define QUICK_SIZES "4K,64K,1M"
#define QUICK_PROCS "2,4"
#define QUICK_BUDGET "0.5"

typedef struct suite_opts {
    const char *outdir;
    const char *collectives; /* "allreduce", "all" or a list */
    const char *backends;    /* NULL: every available one */
    const char *procs, *sizes, *budget;
    const char *inplace; /* "0", "1" (default) or "2", passed to the collectives */
    int quick, no_report, no_train, force;
} suite_opts;

typedef struct suite {
    suite_opts o;
    char exe[PATH_MAX];
    char dir[PATH_MAX];
    char csv[PATH_MAX + 32], json[PATH_MAX + 32], training[PATH_MAX + 32], log_path[PATH_MAX + 32];
    const bench_coll *colls[BENCH_COLL_COUNT];
    size_t ncolls;
    char backends[MAX_BACKENDS][16];
    size_t nbackends;
    int *procs;
    size_t nprocs;
    uint64_t *sizes;
    size_t nsizes;
    suite_step *steps;
    size_t nsteps;
    FILE *log;
    struct timespec started; /* for the time the summary states */
} suite;

static volatile sig_atomic_t interrupted;

static void on_signal(int sig) { interrupted = sig; }

/* ---- options: one handler per flag (c->user is the suite_opts); values are
 * checked by check_lists and pick_collectives ---- */

#define SO(c) ((suite_opts *)(c)->user)
#define STRING(name, field)                               \
    static int on_##name(bench_opt_ctx *c, const char *v) \
    {                                                     \
        SO(c)->field = v;                                 \
        return 0;                                         \
    }
#define SWITCH(name, field)                               \
    static int on_##name(bench_opt_ctx *c, const char *v) \
    {                                                     \
        (void)v;                                          \
        SO(c)->field = 1;                                 \
        return 0;                                         \
    }
STRING(output, outdir)
STRING(collectives, collectives)
STRING(backend, backends)
STRING(procs, procs)
STRING(sizes, sizes)
STRING(budget, budget)
STRING(inplace, inplace)
SWITCH(quick, quick)
SWITCH(no_train, no_train)
SWITCH(no_report, no_report)
SWITCH(force, force)
#undef STRING
#undef SWITCH

static const bench_opt opt_table[] = {
    {'o', "output", "DIR", on_output,
     "results directory (default results/<UTC time>, e.g.\n"
     "results/20261122T051500Z)"},
    {0, "collectives", "LIST", on_collectives, "allreduce (default), all, or a comma list"},
    {0, "backend", "LIST", on_backend,
     "backends (default: every available one; mpi through\n"
     "mpirun when it is installed, nccl only with a GPU)"},
    {'P', "procs", "LIST", on_procs, "process counts (default " DEFAULT_PROCS ")"},
    {0, "sizes", "LIST", on_sizes, "message sizes (default " DEFAULT_SIZES ")"},
    {0, "time-budget", "SECONDS", on_budget,
     "timed iterations per size are cut past this (default " DEFAULT_BUDGET ")"},
    {0, "inplace", "0|1|2", on_inplace,
     "out-of-place, in-place (default: the call torch's\n"
     "dist.all_reduce makes, one buffer, half the memory to\n"
     "first-touch), or both as the collectives do"},
    {0, "quick", NULL, on_quick,
     "a ~30 s version: sizes " QUICK_SIZES ", -P " QUICK_PROCS ", few iterations"},
    {0, "no-train", NULL, on_no_train, "skip the training benchmark"},
    {0, "no-report", NULL, on_no_report, "skip the report"},
    {0, "force", NULL, on_force,
     "write into an existing, non-empty -o DIR (replacing\n"
     "its results files)"},
    {'h', "help", NULL, bench_opt_help, "this help"},
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: collbench suite [options]\n"
            "The main job: every collective asked for (all-reduce by default) on every available\n"
            "backend and process count, then the training benchmark, then the report, into one\n"
            "results directory (printed at the end). Each process count is a step, a\n"
            "subprocess whose ranks run the backends one after another in the same buffers\n"
            "(--same-ranks; mpi under mpirun is a step of its own); a step that fails is\n"
            "reported and the suite goes on. shm and auto run twice: with private buffers\n"
            "(--buffers malloc) and with their own (coll).\n\n"
            "options:\n");
    bench_opt_usage(f, opt_table, BENCH_OPT_COUNT(opt_table), 25);
    fprintf(
        f,
        "\nDIR gets results.csv and results.json (every configuration), training.csv, suite.log\n"
        "(every step's command line and output) and the report (index.html, plots, tables).\n"
        "exit codes: 0 ok, 1 a result was wrong (even if a step failed too), 2 bad usage,\n"
        "3 a configuration failed, 4 a backend asked for is not available\n");
}

static int pick_collectives(suite *s)
{
    char copy[256], *save = NULL;
    if (strcmp(s->o.collectives, "all") == 0) {
        for (int i = 0; i < BENCH_COLL_COUNT; i++)
            s->colls[s->ncolls++] = bench_coll_get((bench_coll_id)i);
        return 0;
    }
    snprintf(copy, sizeof copy, "%s", s->o.collectives);
    for (char *c = strtok_r(copy, ",", &save); c; c = strtok_r(NULL, ",", &save)) {
        const bench_coll *bc = bench_coll_find(c);
        if (!bc) {
            fprintf(stderr,
                    "collbench suite: --collectives: unknown collective '%s' "
                    "(allreduce, allgather, reducescatter, broadcast, reduce, alltoall, "
                    "sendrecv, barrier, or all)\n",
                    c);
            return EXIT_USAGE;
        }
        if (s->ncolls < BENCH_COLL_COUNT) s->colls[s->ncolls++] = bc;
    }
    if (s->ncolls == 0) {
        fprintf(stderr, "collbench suite: --collectives: empty list\n");
        return EXIT_USAGE;
    }
    return 0;
}

/* Sizes, process counts and budget checked here: a typo should cost nothing. */
static int check_lists(suite *s)
{
    char why[256], *end;
    if (bench_parse_int_list(s->o.procs, &s->procs, &s->nprocs, why, sizeof why) != 0) {
        fprintf(stderr, "collbench suite: -P: %s\n", why);
        return EXIT_USAGE;
    }
    if (bench_parse_size_list(s->o.sizes, &s->sizes, &s->nsizes, why, sizeof why) != 0) {
        fprintf(stderr, "collbench suite: --sizes: %s\n", why);
        return EXIT_USAGE;
    }
    if (strcmp(s->o.inplace, "0") != 0 && strcmp(s->o.inplace, "1") != 0 &&
        strcmp(s->o.inplace, "2") != 0) {
        fprintf(stderr,
                "collbench suite: --inplace: '%s' is not 0 (out-of-place), 1 (in-place) "
                "or 2 (both)\n",
                s->o.inplace);
        return EXIT_USAGE;
    }
    double b = strtod(s->o.budget, &end);
    if (*s->o.budget == '\0' || *end != '\0' || !isfinite(b) || b < 0) {
        fprintf(stderr, "collbench suite: --time-budget: '%s' is not a number of seconds\n",
                s->o.budget);
        return EXIT_USAGE;
    }
    return 0;
}

/* ---- the results directory ---- */

static int has_entries(const char *path)
{
    DIR *d = opendir(path);
    int any = 0;
    if (!d) return 0;
    for (struct dirent *e; !any && (e = readdir(d));)
        any = strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return any;
}

static void default_dir(char *dir, size_t len)
{
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    snprintf(dir, len, "results/%s", stamp);
    for (int k = 2; access(dir, F_OK) == 0 && k < 100; k++)
        snprintf(dir, len, "results/%s-%d", stamp, k);
}

/* The directory's and its files' names, which the steps' command lines hold. */
static int name_dir(suite *s)
{
    if (s->o.outdir) snprintf(s->dir, sizeof s->dir, "%s", s->o.outdir);
    else default_dir(s->dir, sizeof s->dir);
    if (!s->dir[0])
        return fprintf(stderr, "collbench suite: -o: empty directory name\n"), EXIT_USAGE;
    snprintf(s->csv, sizeof s->csv, "%s/results.csv", s->dir);
    snprintf(s->json, sizeof s->json, "%s/results.json", s->dir);
    snprintf(s->training, sizeof s->training, "%s/training.csv", s->dir);
    snprintf(s->log_path, sizeof s->log_path, "%s/suite.log", s->dir);
    return 0;
}

static int prepare_dir(suite *s)
{
    struct stat st;
    char why[512];
    if (stat(s->dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) {
            fprintf(stderr, "collbench suite: -o %s: exists and is not a directory\n", s->dir);
            return EXIT_USAGE;
        }
        if (has_entries(s->dir) && !s->o.force) {
            fprintf(stderr,
                    "collbench suite: -o %s is not empty; use --force to write into it "
                    "(its results files are replaced), or another directory\n",
                    s->dir);
            return EXIT_USAGE;
        }
        unlink(s->csv);
        unlink(s->json);
        unlink(s->training);
        unlink(s->log_path);
    } else if (coll__dir_make(s->dir, why, sizeof why) != 0) {
        fprintf(stderr, "collbench suite: -o %s: %s\n", s->dir, why);
        return EXIT_RUNTIME;
    }
    s->log = fopen(s->log_path, "w");
    if (!s->log) {
        fprintf(stderr, "collbench suite: %s: %s\n", s->log_path, strerror(errno));
        return EXIT_RUNTIME;
    }
    return 0;
}

/* ---- steps ---- */

static suite_step *new_step(suite *s, suite_kind kind, double weight)
{
    if (s->nsteps == MAX_STEPS) return NULL;
    suite_step *st = &s->steps[s->nsteps++];
    memset(st, 0, sizeof *st);
    st->kind = kind;
    st->weight = weight;
    st->code = -1;
    suite_step_arg(st, "%s", s->exe);
    return st;
}

/* Expected cost: start-up, plus bytes moved per rank (ranks share 2 cores). */
static double collective_weight(const suite *s, const bench_coll *c, int nprocs)
{
    double bytes = 0;
    if (c->moves_data)
        for (size_t i = 0; i < s->nsizes; i++) bytes += (double)s->sizes[i];
    return 0.3 + nprocs * bytes / (256.0 * 1024 * 1024);
}

/* backends: one, or a comma-separated list that one launch runs in turn
 * (--same-ranks); buffers: --buffers of the step, NULL for none (nccl:
 * --device cuda); both: the list also runs with the other kind, so titles say which. */
static int add_collective(suite *s, const bench_coll *c, const char *backends, int nbackends,
                          const char *buffers, int both, int nprocs)
{
    /* room kept for the training and report steps */
    suite_step *st = s->nsteps < MAX_STEPS - 2
                         ? new_step(s, SUITE_COLLECTIVE,
                                    nbackends * collective_weight(s, c, nprocs))
                         : NULL;
    if (!st)
        return fprintf(stderr, "collbench suite: more than %d steps\n", MAX_STEPS - 2), EXIT_USAGE;
    snprintf(st->group, sizeof st->group, "%s %s%s%s", c->name, backends, both ? "/" : "",
             both ? buffers : "");
    snprintf(st->title, sizeof st->title, "%s %d ranks", st->group, nprocs);
    int bad = suite_step_arg(st, "%s", c->name) | suite_step_arg(st, "--backend") |
              suite_step_arg(st, "%s", backends) | suite_step_arg(st, "-P") |
              suite_step_arg(st, "%d", nprocs) | suite_step_arg(st, "--sizes") |
              suite_step_arg(st, "%s", s->o.sizes) | suite_step_arg(st, "--time-budget") |
              suite_step_arg(st, "%g", atof(s->o.budget) / (nbackends > 1 ? SUITE_PASSES : 1)) |
              suite_step_arg(st, "--stop-spread") | suite_step_arg(st, SUITE_STOP_SPREAD) |
              suite_step_arg(st, "-T") | suite_step_arg(st, COLL_TIMEOUT_S) |
              suite_step_arg(st, "--csv") | suite_step_arg(st, "%s", s->csv);
#ifdef COLL_HAVE_JANSSON
    bad |= suite_step_arg(st, "-J") | suite_step_arg(st, "%s", s->json);
#endif
    /* Backends compared within a step run in SUITE_PASSES passes, size by
     * size, the order reversed in each (A B, B A), at the same total time budget. */
    if (nbackends > 1)
        bad |= suite_step_arg(st, "--same-ranks") | suite_step_arg(st, "--passes") |
               suite_step_arg(st, "%d", SUITE_PASSES);
    /* in-place is the same call with one buffer: only where the collective has it */
    if (c->has_inplace)
        bad |= suite_step_arg(st, "--inplace") | suite_step_arg(st, "%s", s->o.inplace);
    if (strcmp(backends, "nccl") == 0)
        bad |= suite_step_arg(st, "--device") | suite_step_arg(st, "cuda");
    if (buffers) bad |= suite_step_arg(st, "--buffers") | suite_step_arg(st, "%s", buffers);
    if (s->o.quick)
        bad |= suite_step_arg(st, "-w") | suite_step_arg(st, "1") | suite_step_arg(st, "-n") |
               suite_step_arg(st, "5");
    if (bad) return fprintf(stderr, "collbench suite: command line too long\n"), EXIT_USAGE;
    return 0;
}

/* shm and auto have memory of their own (coll_alloc: shm's shared heap, read
 * without copies): the suite runs them with it and with private memory. */
static int both_buffer_kinds(const char *backend)
{
    return strcmp(backend, "shm") == 0 || strcmp(backend, "auto") == 0;
}

/* Backends our launcher starts with host buffers share their ranks
 * (--same-ranks): per process count one launch, whose malloc buffers are
 * first-touched once rather than once per backend (seconds per GiB here). mpi
 * (mpirun) and nccl (--device cuda) have steps of their own. */
static int shares_ranks(const char *backend) { return coll_backend_sweeps_by_default(backend); }

/* The backends of kind k (0 malloc, 1 coll) that share ranks, comma-separated. */
static int shared_list(const suite *s, const bench_coll *c, int k, char *list, size_t len)
{
    size_t used = 0;
    int n = 0;
    list[0] = '\0';
    for (size_t b = 0; b < s->nbackends; b++) {
        const char *be = s->backends[b];
        if (!shares_ranks(be) || (k == 1 && !(c->moves_data && both_buffer_kinds(be)))) continue;
        int w = snprintf(list + used, len - used, "%s%s", used ? "," : "", be);
        if (w < 0 || (size_t)w >= len - used) break;
        used += (size_t)w;
        n++;
    }
    return n;
}

static int plan_collective(suite *s, const bench_coll *c)
{
    char list[2][128];
    int n[2], rc;
    for (int k = 0; k < 2; k++) n[k] = shared_list(s, c, k, list[k], sizeof list[k]);
    for (int k = 0; k < 2; k++)
        for (size_t p = 0; n[k] > 0 && p < s->nprocs; p++)
            if ((rc = add_collective(s, c, list[k], n[k], k ? "coll" : "malloc", n[1 - k] > 0,
                                     s->procs[p])))
                return rc;
    for (size_t b = 0; b < s->nbackends; b++) {
        const char *be = s->backends[b];
        if (shares_ranks(be)) continue;
        for (size_t p = 0; p < s->nprocs; p++)
            if ((rc = add_collective(s, c, be, 1, strcmp(be, "nccl") == 0 ? NULL : "malloc", 0,
                                     s->procs[p])))
                return rc;
    }
    return 0;
}

static int plan(suite *s)
{
    int rc;
    s->steps = calloc(MAX_STEPS, sizeof *s->steps);
    if (!s->steps) return fprintf(stderr, "collbench suite: out of memory\n"), EXIT_RUNTIME;
    for (size_t c = 0; c < s->ncolls; c++)
        if ((rc = plan_collective(s, s->colls[c]))) return rc;
    suite_step *st;
    if (!s->o.no_train &&
        (st = new_step(s, SUITE_TRAIN, s->o.quick ? TRAIN_WEIGHT_QUICK : TRAIN_WEIGHT)))
        snprintf(st->title, sizeof st->title, "training benchmark");
    if (!s->o.no_report && (st = new_step(s, SUITE_REPORT, REPORT_WEIGHT)))
        snprintf(st->title, sizeof st->title, "report");
    for (size_t i = 0; i < s->nsteps; i++)
        if (!s->steps[i].group[0]) /* training, report: a group each */
            snprintf(s->steps[i].group, sizeof s->steps[i].group, "%.90s", s->steps[i].title);
    return 0;
}

/* What every collective step checks before it runs (its options, by the
 * collective's own parser, its sizes against its -P, then the memory its
 * largest -P needs: what the collective's launcher checks), checked on
 * the planned command lines before anything is created: a size that every
 * step would refuse (0, 64G) is one exit 2, not a failed step each and a
 * results directory left behind. */
static int check_steps(suite *s)
{
    for (size_t i = 0; i < s->nsteps; i++) {
        suite_step *st = &s->steps[i];
        const bench_coll *c = st->kind == SUITE_COLLECTIVE ? bench_coll_find(st->argv[1]) : NULL;
        bench_options o;
        char err[512];
        if (!c) continue;
        /* argv[0] is our binary, argv[1] the collective: the command's own argv */
        int rc = bench_options_parse(&o, c, st->argc - 1, st->argv + 1, err, sizeof err), mem = 0;
        if (rc == 0) rc = bench_options_check_procs(&o, err, sizeof err);
        if (rc == 0) rc = mem = bench_memory_check(&o, err, sizeof err);
        bench_options_free(&o);
        if (rc) {
            fprintf(stderr, "collbench suite: %s: %s%s\n", st->title, err,
                    mem ? " (--force-memory is the collective command's, not the suite's)" : "");
            return EXIT_USAGE;
        }
    }
    return 0;
}

/* The training benchmark's default comparison. Its flags are train_options.c's
 * (linked in); whether it can run here is train_blas.h's answer, the same one
 * `collbench train` exits 4 on. */
static int fill_train(suite *s, suite_step *st)
{
    if (!train_blas_available()) {
        st->unavailable = 1;
        snprintf(st->note, sizeof st->note, "collbench train: " TRAIN_BLAS_MISSING);
        return -1;
    }
    suite_step_arg(st, "train");
    suite_step_arg(st, "--csv"), suite_step_arg(st, "%s", s->training);
#ifdef COLL_HAVE_JANSSON
    suite_step_arg(st, "-J"), suite_step_arg(st, "%s", s->json);
#endif
    if (s->o.quick) suite_step_arg(st, "--quick");
    /* One batch size, the seeds' 64: the modes x ranks comparison is the
     * question; batch sweeps tripled the step (collbench train sweeps them). */
    else suite_step_arg(st, "--batch-sizes"), suite_step_arg(st, "64");
    return 0;
}

static void fill_report(suite *s, suite_step *st)
{
    suite_step_arg(st, "report");
    /* One source per run: results.json holds every row of results.csv and
     * training.csv, and more (the cores, the memory rate); the CSV files are
     * the report's input only where no JSON was written. */
    if (access(s->json, F_OK) == 0) suite_step_arg(st, "%s", s->json);
    else {
        if (access(s->csv, F_OK) == 0) suite_step_arg(st, "%s", s->csv);
        if (access(s->training, F_OK) == 0) suite_step_arg(st, "%s", s->training);
    }
    suite_step_arg(st, "-o");
    suite_step_arg(st, "%s", s->dir);
    suite_step_arg(st, "--force");
}

static void log_command(FILE *log, const suite_step *st, size_t i, size_t n)
{
    fprintf(log, "\n==== [%zu/%zu] %s:", i, n, st->title);
    for (int a = 0; a < st->argc; a++) fprintf(log, " %s", st->argv[a]);
    fprintf(log, "\n");
    fflush(log);
}

static const char *outcome(const suite_step *st, char *buf, size_t len)
{
    if (st->unavailable) snprintf(buf, len, "skipped (%s)", st->note);
    else if (st->timed_out > 0)
        snprintf(buf, len, "FAILED (still running after %g s: stopped)", st->timed_out);
    else if (st->code == 0) snprintf(buf, len, "ok");
    else if (st->code == EXIT_WRONG && st->kind != SUITE_REPORT)
        snprintf(buf, len, "WRONG RESULTS");
    else if (st->code > EXIT_SIGNALLED && interrupted)
        snprintf(buf, len, "INTERRUPTED (signal %d)", st->code - EXIT_SIGNALLED);
    else if (st->code > EXIT_SIGNALLED)
        snprintf(buf, len, "FAILED (signal %d)", st->code - EXIT_SIGNALLED);
    else snprintf(buf, len, "FAILED (exit %d)", st->code);
    return buf;
}

static double step_limit(void)
{
    const char *v = getenv("COLLBENCH_SUITE_STEP_LIMIT");
    char *end;
    double x = v ? strtod(v, &end) : 0;
    return v && *v && *end == '\0' && x > 0 ? x : STEP_LIMIT_S;
}

static void run_steps(suite *s)
{
    double limit = step_limit();
    char text[512];
    suite_progress p;
    eta_step *eta = calloc(s->nsteps ? s->nsteps : 1, sizeof *eta);
    if (!eta) return;
    for (size_t i = 0; i < s->nsteps; i++) {
        eta[i].weight = s->steps[i].weight;
        eta[i].group = (int)i;
        for (size_t j = 0; j < i; j++)
            if (strcmp(s->steps[j].group, s->steps[i].group) == 0) {
                eta[i].group = eta[j].group;
                break;
            }
    }
    suite_progress_init(&p, s->nsteps, eta);
    for (size_t i = 0; i < s->nsteps && !interrupted; i++) {
        suite_step *st = &s->steps[i];
        suite_progress_begin(&p, i + 1, st->title);
        if (st->kind == SUITE_TRAIN && fill_train(s, st) != 0) {
            eta[i].weight = 0; /* skipped in no time: no rate to learn */
            fprintf(s->log, "\n==== [%zu/%zu] %s: skipped: %s\n", i + 1, s->nsteps, st->title,
                    st->note);
            suite_progress_end(&p, outcome(st, text, sizeof text), 0);
            continue;
        }
        if (st->kind == SUITE_REPORT) fill_report(s, st);
        log_command(s->log, st, i + 1, s->nsteps);
        suite_exec(st, s->log, &p, limit, &interrupted);
        /* train and report exit 4 while not built in: noted, not a failure */
        if (st->kind != SUITE_COLLECTIVE && st->code == EXIT_UNAVAILABLE) st->unavailable = 1;
        fprintf(s->log, "==== %s: %s, %.1f s\n", st->title, outcome(st, text, sizeof text),
                st->seconds);
        suite_progress_end(&p, text, st->seconds);
    }
    suite_progress_clear(&p);
    free(eta);
}

/* ---- the end ---- */

static int summarize(suite *s)
{
    size_t ok = 0, ran = 0, wrong = 0, failed = 0;
    char text[512];
    for (size_t i = 0; i < s->nsteps; i++) {
        const suite_step *st = &s->steps[i];
        if (st->code < 0 || st->unavailable) continue;
        ran++;
        if (st->code == 0) ok++;
        else if (st->code == EXIT_WRONG && st->kind != SUITE_REPORT) wrong++;
        else failed++;
    }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double took = (double)(now.tv_sec - s->started.tv_sec) +
                  (double)(now.tv_nsec - s->started.tv_nsec) * 1e-9;
    printf("collbench suite: %zu of %zu steps ok", ok, s->nsteps);
    if (wrong) printf(", %zu with WRONG RESULTS", wrong);
    if (failed) printf(", %zu FAILED", failed);
    if (ran + wrong + failed < s->nsteps && !interrupted) printf(", %zu skipped", s->nsteps - ran);
    printf(", in %d min %02d s\n", (int)(took / 60), (int)fmod(took, 60.0));
    for (size_t i = 0; i < s->nsteps; i++) {
        const suite_step *st = &s->steps[i];
        if (st->code == 0 || (st->code < 0 && !st->unavailable)) continue;
        printf("  %-28s %s", st->title, outcome(st, text, sizeof text));
        if (!st->unavailable && *st->note) printf(": %s", st->note);
        printf("\n");
    }
    if (interrupted) printf("  interrupted: the steps after the one running were not run\n");
    printf("log: %s\n", s->log_path);
    if (!s->o.no_report && access(s->dir, F_OK) == 0) {
        char index[PATH_MAX + 16];
        snprintf(index, sizeof index, "%s/index.html", s->dir);
        if (access(index, F_OK) == 0) printf("report: %s\n", index);
    }
    printf("results: %s\n", s->dir);
    fflush(stdout);
    if (interrupted) return EXIT_SIGNALLED + interrupted;
    return wrong ? EXIT_WRONG : failed ? EXIT_RUNTIME : 0;
}

static void say_plan(const suite *s)
{
    size_t ncoll = 0;
    for (size_t i = 0; i < s->nsteps; i++) ncoll += s->steps[i].kind == SUITE_COLLECTIVE;
    fprintf(stderr, "collbench suite: %zu collective step%s (%s on", ncoll, ncoll == 1 ? "" : "s",
            s->o.collectives);
    for (size_t b = 0; b < s->nbackends; b++) fprintf(stderr, " %s", s->backends[b]);
    fprintf(stderr, "; -P %s; sizes %s)%s%s -> %s\n", s->o.procs, s->o.sizes,
            s->o.no_train ? "" : ", training benchmark", s->o.no_report ? "" : ", report", s->dir);
}

static int install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* no SA_RESTART: poll() returns at once */
    sigemptyset(&sa.sa_mask);
    return sigaction(SIGINT, &sa, NULL) | sigaction(SIGTERM, &sa, NULL);
}

/* This machine's memory-copy rate, once per run, into results.json where the
 * report compares bus bandwidth with it; a failure costs only that sentence. */
static void record_copy_rate(suite *s)
{
#ifdef COLL_HAVE_JANSSON
    char host[64] = "", err[512]; /* a row's host field holds 63 bytes */
    double gbps;
    (void)bench_host_label(host, sizeof host, err, sizeof err); /* checked at launch */
    int rc = bench_mem_copy_rate(MEM_COPY_BYTES, MEM_COPY_REPS, &gbps, err, sizeof err);
    if (rc == 0) rc = bench_json_set_machine(s->json, host, "memcpy_GBps", gbps, err, sizeof err);
    /* the cost model's fit needs them where ranks outnumber the cores */
    int cores = bench_machine_usable_cores();
    if (rc == 0) rc = bench_json_set_machine(s->json, host, "cores", cores, err, sizeof err);
    if (rc == 0)
        fprintf(s->log, "collbench suite: memory-copy rate %.2f GB/s, %d cores\n", gbps, cores);
    else fprintf(s->log, "collbench suite: memory-copy rate not recorded: %s\n", err);
#else
    (void)s;
#endif
}

static int run_suite(suite *s)
{
    ssize_t n = readlink("/proc/self/exe", s->exe, sizeof s->exe - 1);
    if (n <= 0) {
        fprintf(stderr, "collbench suite: cannot find our own binary (/proc/self/exe): %s\n",
                strerror(errno));
        return EXIT_RUNTIME;
    }
    s->exe[n] = '\0';
    int rc = pick_collectives(s);
    if (rc || (rc = check_lists(s)) || (rc = suite_tuning_check("collbench suite")) ||
        (rc = suite_pick_backends(s->o.backends, s->backends, MAX_BACKENDS, &s->nbackends,
                                  stderr)) ||
        (rc = name_dir(s)) || (rc = plan(s)) || (rc = check_steps(s)) || (rc = prepare_dir(s)))
        return rc;
    clock_gettime(CLOCK_MONOTONIC, &s->started);
    say_plan(s);
    suite_tuning_note(s->log);
    fprintf(s->log, "collbench suite: results in %s\n", s->dir);
    record_copy_rate(s);
    install_signals();
    run_steps(s);
    return summarize(s);
}

int cmd_suite(int argc, char **argv)
{
    suite s;
    memset(&s, 0, sizeof s);
    int rc = cli_parse_options("collbench suite", opt_table, BENCH_OPT_COUNT(opt_table), &s.o, NULL,
                               NULL, argc, argv);
    if (rc == BENCH_OPT_HELP) return usage(stdout), 0;
    if (rc) return rc;
    if (!s.o.collectives) s.o.collectives = "allreduce";
    if (!s.o.procs) s.o.procs = s.o.quick ? QUICK_PROCS : DEFAULT_PROCS;
    if (!s.o.sizes) s.o.sizes = s.o.quick ? QUICK_SIZES : DEFAULT_SIZES;
    if (!s.o.inplace) s.o.inplace = "1";
    if (!s.o.budget) s.o.budget = s.o.quick ? QUICK_BUDGET : DEFAULT_BUDGET;
    rc = run_suite(&s);
    if (s.log) fclose(s.log);
    free(s.steps);
    free(s.procs);
    free(s.sizes);
    return rc;
}
