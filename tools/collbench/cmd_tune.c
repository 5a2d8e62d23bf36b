/* collbench tune [--budget SECONDS] [-o FILE] [--quick]: this machine's
 * measured crossovers into the tuning file libcoll reads (cmd_tune.h,
 * core/tuning_file.h; docs/TUNING.md). */
#include "cli_common.h"
#include "coll.h"
#include "coll_tool.h"
#include "core/atomic_file.h"
#include "core/clock.h"
#include "core/dir_make.h"
#include "core/dir_remove.h"
#include "core/env.h"
#include "core/machine_id.h"
#include "core/tuning.h"
#include "core/tuning_file.h"
#include "engine/mem_copy_rate.h"
#include "engine/opt_table.h"
#include "exit_codes.h"
#include "cmd_tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <signal.h>
#include <unistd.h>

#define DEFAULT_BUDGET_S 180.0
#define QUICK_BUDGET_S 60.0
#define MAX_ROUNDS 5

typedef struct tune_opts {
    double budget_s; /* 0: the default */
    const char *output;
    int quick;
} tune_opts;

#define TO(c) ((tune_opts *)(c)->user)

static int on_budget(bench_opt_ctx *c, const char *v)
{
    return bench_opt_double(c, v, 0, 1, 86400, 0, &TO(c)->budget_s);
}
static int on_output(bench_opt_ctx *c, const char *v)
{
    TO(c)->output = v;
    return 0;
}
static int on_quick(bench_opt_ctx *c, const char *v)
{
    (void)v;
    TO(c)->quick = 1;
    return 0;
}

static const bench_opt opt_table[] = {
    {0, "budget", "SECONDS", on_budget,
     "time for the measurements (default 180; 60 with --quick): the\n"
     "rounds are planned to fit, and it stops cleanly when it is spent"},
    {'o', "output", "FILE", on_output,
     "the tuning file to write (default: where libcoll reads it,\n"
     "$COLL_TUNING_FILE, else $XDG_CONFIG_HOME/collbench/tuning)"},
    {0, "quick", NULL, on_quick,
     "tiny sizes, 2 ranks, 2 rounds: checks the whole path in seconds\n"
     "(its values say nothing about large calls)"},
    {'h', "help", NULL, bench_opt_help, "this text"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: collbench tune [--budget SECONDS] [-o FILE] [--quick]\n\n"
               "Measures, on this machine, the choices shm all-reduce's plan makes (CMA\n"
               "slices or staging per size band, on 4 KiB and huge pages, at 2 and 4 ranks;\n"
               "the CMA chunk; streaming stores), each value against the built-in default,\n"
               "alternated round by round, and writes what is faster beyond noise into the\n"
               "tuning file libcoll reads (docs/TUNING.md), with this machine's name (CPU,\n"
               "flags, kernel, cores, memory copy rate): a file of another machine is\n"
               "ignored. Environment variables still override its values.\n\n"
               "options:\n");
    bench_opt_usage(f, opt_table, BENCH_OPT_COUNT(opt_table), 22);
    fprintf(f, "\nexit codes: 0 written; 2 bad usage; 3 a measurement failed or the file could\n"
               "not be written (nothing written then); 4 the shm backend cannot run here.\n");
}

static double budget_of(const tune_opts *o)
{
    return o->budget_s > 0 ? o->budget_s : o->quick ? QUICK_BUDGET_S : DEFAULT_BUDGET_S;
}

/* A guess of a round of d before one ran: a launch, then every size's
 * iterations at 20 us plus 1 GB/s a rank. */
static double guess_round_s(const tune_run_opts *ro, const tune_decision *d)
{
    int iters, warmup;
    cmd_tune_iters(ro, d, &iters, &warmup);
    int n = iters + warmup;
    double s = 0;
    for (int g = 0; g < d->ngroups; g++) {
        double bytes = 0;
        for (int k = 0; k < d->nsizes; k++) bytes += (double)d->sizes[k];
        s += 0.5 + d->nsizes * n * 20e-6 + bytes * d->groups[g].ranks * n / 1e9;
    }
    return s * d->narms;
}

typedef struct progress {
    int tty;
    double t0, budget;
} progress;

static void progress_show(const progress *p, int round, const tune_decision *d, int g,
                          const char *arm)
{
    if (!p->tty) return;
    fprintf(stderr, "\r\033[Ktune: round %d  %s=%s  %d ranks %s%s  %.0f of %.0f s", round + 1,
            d->knob, arm ? arm : "default", d->groups[g].ranks, d->groups[g].buffers,
            tune_place(&d->groups[g]), coll__now_s() - p->t0, p->budget);
    fflush(stderr);
}

static void progress_line(const progress *p, const char *fmt, const char *a, int n)
{
    if (p->tty) fprintf(stderr, "\r\033[K");
    fprintf(stderr, fmt, a, n, coll__now_s() - p->t0, p->budget);
    fflush(stderr);
}

/* Ctrl-C or SIGTERM: the child has it too (our process group); we stop
 * after it, remove our temporary files and write nothing. */
static volatile sig_atomic_t interrupted;
static void on_signal(int sig) { interrupted = sig; }

/* One round of d, its arms in turn per group (reversed in odd rounds): 0; 1
 * when a run (of about run_s) would end after ro->deadline or was stopped
 * there, the round left uncounted; or -1 with why. */
static int run_round(const tune_run_opts *ro, tune_decision *d, const progress *p, double run_s,
                     char *why, size_t whylen)
{
    int r = d->rounds;
    for (int g = 0; g < d->ngroups; g++)
        for (int i = 0; i < d->narms; i++) {
            int arm = r % 2 ? d->narms - 1 - i : i;
            if (coll__now_s() + run_s > ro->deadline) return 1;
            progress_show(p, r, d, g, d->arms[arm]);
            if (interrupted) return snprintf(why, whylen, "interrupted"), -1;
            int rc = cmd_tune_run(ro, d, arm, g, d->us[r][arm][g], why, whylen);
            if (rc) return rc;
        }
    d->rounds++;
    return 0;
}

/* Rounds of every decision while the budget lasts: a decision's round is
 * started only where its last one (or the guess) still fits, and a round the
 * deadline cuts short (a slower machine than its last round) is dropped. */
static int measure(const tune_run_opts *ro, tune_decision *ds, size_t n, const progress *p,
                   int max_rounds, char *why, size_t whylen)
{
    double took[TUNE_MAX_DECISIONS];
    for (size_t i = 0; i < n; i++) took[i] = guess_round_s(ro, &ds[i]);
    for (int round = 0; round < max_rounds; round++) {
        int ran = 0;
        for (size_t i = 0; i < n; i++) {
            double now = coll__now_s();
            if (now + took[i] > ro->deadline) continue;
            int rc = run_round(ro, &ds[i], p, took[i] / (ds[i].ngroups * ds[i].narms), why, whylen);
            if (rc < 0) return -1;
            if (rc) {
                progress_line(
                    p, "tune: %s: round %d cut short by the budget, dropped (%.0f of %.0f s)\n",
                    ds[i].knob, round + 1);
                continue;
            }
            took[i] = coll__now_s() - now;
            ran = 1;
            progress_line(p, "tune: %s: round %d done (%.0f of %.0f s)\n", ds[i].knob, round + 1);
        }
        if (!ran) break;
    }
    if (p->tty) fprintf(stderr, "\r\033[K");
    return 0;
}

static const coll__tunable *row_named(const char *name)
{
    const coll__tunable *t;
    for (size_t i = 0; (t = coll_tuning_row(i)) != NULL; i++)
        if (strcmp(t->name, name) == 0) return t;
    return NULL;
}

/* 1 when value would not change the plan: the row's default, for a
 * crossover one below it (the default already stages there: nothing was
 * measured below it), for a window's end one above it. */
static int no_change(const coll__tunable *t, const tune_decision *d, const char *value)
{
    uint64_t v;
    coll__err err;
    coll__err_init(&err, NULL, 0);
    if (coll__value_bytes(t->name, value, t->lo, t->hi, &v, &err) != COLL_OK) return 0;
    if (t->when != COLL__TUNE_ALWAYS) return 0;
    return v == t->dflt || (d->kind == TUNE_THRESHOLD && v < t->dflt) ||
           (d->kind == TUNE_CEILING && v > t->dflt);
}

/* The file's text and the summary on stdout. */
static size_t compose(char *buf, size_t cap, const coll__machine_id *m, double gbps,
                      tune_decision *ds, size_t n, double budget, double spent)
{
    size_t used = 0;
    int changed_any = 0;
#define ADD(...)                                                                 \
    do {                                                                         \
        int w_ = snprintf(buf + used, used < cap ? cap - used : 0, __VA_ARGS__); \
        if (w_ > 0) used += (size_t)w_;                                          \
    } while (0)
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    ADD("%s\n# written by collbench tune at %s (%.0f s of a %g s budget); environment\n"
        "# variables override these values; a variable not set here keeps its default\n",
        COLL__TUNING_HEADER, stamp, spent, budget);
    ADD("machine.cpu = %s\nmachine.flags = %s\nmachine.kernel = %s\nmachine.cores = %d\n"
        "machine.copy_gbps = %.2f\n",
        m->cpu, m->flags, m->kernel, m->cores, gbps);
    printf("collbench tune: against the built-in defaults\n");
    for (size_t i = 0; i < n; i++) {
        const tune_decision *d = &ds[i];
        const coll__tunable *t = row_named(d->knob);
        char value[64], why[512], dflt[80];
        int changed;
        cmd_tune_choose(d, &changed, value, sizeof value, why, sizeof why);
        if (!t) continue;
        coll__tunable_format_default(t, dflt, sizeof dflt);
        if (changed && no_change(t, d, value))
            changed = 0, snprintf(why, sizeof why, "the measurements chose the default");
        if (changed) {
            ADD("%s = %s  # measured: %s (%d rounds)\n", d->knob, value, why, d->rounds);
            printf("  %s: default %s -> %s (%s)\n", d->knob, dflt, value, why);
            changed_any = 1;
        } else {
            ADD("# %s: default %s kept (%s)\n", d->knob, dflt, why);
            printf("  %s: default %s kept (%s)\n", d->knob, dflt, why);
        }
    }
    if (!changed_any) printf("  nothing changed: the defaults are as fast here\n");
#undef ADD
    return used;
}

static int run(const tune_opts *o)
{
    char path[1024];
    if (o->output) snprintf(path, sizeof path, "%s", o->output);
    else if (coll__tuning_file_path(path, sizeof path) != 0) {
        fprintf(stderr, "collbench tune: no HOME to put the tuning file under: give -o FILE\n");
        return EXIT_USAGE;
    }
    char why_not[512];
    if (!coll_backend_available("shm", why_not, sizeof why_not)) {
        fprintf(stderr, "collbench tune: nothing to tune: %s\n", why_not);
        return EXIT_UNAVAILABLE;
    }
    const coll__tunable *t;
    for (size_t i = 0; (t = coll_tuning_row(i)) != NULL; i++)
        if (getenv(t->name) && *getenv(t->name))
            fprintf(stderr,
                    "collbench tune: note: %s is set here and will override the file's "
                    "value (the measurements run without it)\n",
                    t->name);
    char exe[1024];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) return fprintf(stderr, "collbench tune: cannot find our own binary\n"), 3;
    exe[len] = 0;
    const char *tmp = getenv("TMPDIR");
    char workbuf[1024];
    snprintf(workbuf, sizeof workbuf, "%s/collbench-tune.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    char *dir = mkdtemp(workbuf);
    if (!dir) return fprintf(stderr, "collbench tune: cannot make a temporary directory\n"), 3;

    /* The budget holds everything but writing the file: the copy rate too. */
    double budget = budget_of(o), t0 = coll__now_s();
    coll__machine_id m;
    coll__machine_id_here(&m);
    double gbps = 0;
    char err[512];
    if (bench_mem_copy_rate(o->quick ? (size_t)8 << 20 : MEM_COPY_BYTES,
                            o->quick ? 2 : MEM_COPY_REPS, &gbps, err, sizeof err) != COLL_OK)
        fprintf(stderr, "collbench tune: memory copy rate not measured: %s\n", err);

    static tune_decision ds[TUNE_MAX_DECISIONS];
    size_t n = cmd_tune_plan(ds, TUNE_MAX_DECISIONS, o->quick);
    if (n > TUNE_MAX_DECISIONS) n = TUNE_MAX_DECISIONS; /* unit/test_tune_choose: never */
    tune_run_opts ro = {exe, dir, o->quick ? 3 : 8, o->quick ? 1 : 2, 60, t0 + budget};
    progress p = {isatty(STDERR_FILENO), t0, budget};
    char why[2048];
    fprintf(stderr, "collbench tune: %s, %d cores, %.1f GB/s copy; budget %g s\n", m.cpu, m.cores,
            gbps, budget);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    int rc = measure(&ro, ds, n, &p, o->quick ? 2 : MAX_ROUNDS, why, sizeof why);
    coll__remove_flat_dir(dir);
    if (rc) {
        if (interrupted) {
            fprintf(stderr, "collbench tune: interrupted, nothing written\n");
            return EXIT_SIGNALLED + interrupted;
        }
        fprintf(stderr, "collbench tune: a measurement failed, nothing written: %s\n", why);
        return EXIT_RUNTIME;
    }
    static char text[COLL__TUNING_MAX_BYTES];
    size_t tl = compose(text, sizeof text, &m, gbps, ds, n, budget, coll__now_s() - t0);
    char parent[1024];
    snprintf(parent, sizeof parent, "%s", path);
    char *slash = strrchr(parent, '/');
    if (slash && slash != parent) {
        *slash = 0;
        if (coll__dir_make(parent, err, sizeof err) != 0) {
            fprintf(stderr, "collbench tune: %s\n", err);
            return EXIT_RUNTIME;
        }
    }
    if (tl >= sizeof text || coll__file_write_atomic(path, text, tl, err, sizeof err) != 0) {
        fprintf(stderr, "collbench tune: %s\n", tl >= sizeof text ? "file too long" : err);
        return EXIT_RUNTIME;
    }
    printf("wrote %s (%.0f s)\n", path, coll__now_s() - t0);
    return 0;
}

int cmd_tune(int argc, char **argv)
{
    tune_opts o = {0};
    int rc = cli_parse_options("collbench tune", opt_table, BENCH_OPT_COUNT(opt_table), &o, NULL,
                               NULL, argc, argv);
    if (rc == BENCH_OPT_HELP) return usage(stdout), 0;
    if (rc) return usage(stderr), rc;
    return run(&o);
}
