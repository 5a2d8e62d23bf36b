/* collbench report FILE... -o DIR: result files in, a report directory out
 * (combined.csv, markdown tables, analysis.txt, PNG/SVG plots, index.html). */
#include "cli_common.h"
#include "coll.h"
#include "report/report.h"
#include "engine/opt_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct report_opts {
    const char *outdir;
    int force;
    const char **files; /* the arguments that are not flags, in order */
    size_t nfiles;
    const char **baseline; /* --baseline, in order */
    size_t nbaseline;
    int cross_machine;
    double fail_pct; /* -1: none */
} report_opts;

#define RO(c) ((report_opts *)(c)->user)

static int on_output(bench_opt_ctx *c, const char *v)
{
    RO(c)->outdir = v;
    return 0;
}
static int on_force(bench_opt_ctx *c, const char *v)
{
    (void)v;
    RO(c)->force = 1;
    return 0;
}
static int on_file(bench_opt_ctx *c, const char *arg)
{
    RO(c)->files[RO(c)->nfiles++] = arg;
    return 0;
}
static int on_baseline(bench_opt_ctx *c, const char *v)
{
    RO(c)->baseline[RO(c)->nbaseline++] = v;
    return 0;
}
static int on_cross(bench_opt_ctx *c, const char *v)
{
    (void)v;
    RO(c)->cross_machine = 1;
    return 0;
}

static int on_fail(bench_opt_ctx *c, const char *v)
{
    char *end;
    double pct = strtod(v, &end);
    if (end == v || *end || !(pct >= 0) || pct > 1e6) {
        snprintf(c->err, c->errlen, "--fail-on-regression '%s': want a percentage >= 0 (e.g. 10)",
                 v);
        return COLL_EINVAL;
    }
    RO(c)->fail_pct = pct;
    return 0;
}

static const bench_opt opt_table[] = {
    {'o', "output", "DIR", on_output, "report directory (created; must not exist unless --force)"},
    {'f', "force", NULL, on_force,
     "write into an existing DIR, replacing the report's files there"},
    {0, "baseline", "PATH", on_baseline,
     "compare with an earlier run: result files, or a directory with\n"
     "results.csv/results.json (repeatable); the same machine only"},
    {0, "fail-on-regression", "PCT", on_fail,
     "with --baseline: exit 1 when a cell slowed by more than\n"
     "PCT percent beyond noise"},
    {0, "cross-machine", NULL, on_cross,
     "with --baseline: compare runs of two different machines\n"
     "(said in every line)"},
    {'h', "help", NULL, bench_opt_help, "this text"},
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: collbench report FILE... -o DIR [--force] [--baseline PATH...\n"
            "                        [--fail-on-regression PCT] [--cross-machine]]\n\n"
            "Reads collbench result files (CSV or JSON; communication and training results;\n"
            "e.g. one from a CPU machine and one from a GPU machine), merges them and writes\n"
            "into DIR:\n"
            "  combined.csv            every communication row, deduplicated and sorted\n"
            "  combined_training.csv   the same for training rows (when there are any)\n"
            "  full_results.md         markdown tables of every row\n"
            "  summary_by_config.md    one row per collective x machine x device x buffer kind\n"
            "                          x backend x process and node count; training per batch\n"
            "  analysis.txt            fastest backend per size (within one machine, device and\n"
            "                          buffer kind; 'within noise' where the p25-p75 spreads\n"
            "                          overlap), coll vs malloc buffers, machines side by side,\n"
            "                          saturation, crossover, scaling, anomalies\n"
            "  *.png, *.svg            time_vs_size, busbw_vs_size (with spread whiskers),\n"
            "                          backend_comparison_<size>, scaling_vs_procs,\n"
            "                          training_breakdown (needs PLplot)\n"
            "  index.html              one self-contained page: the findings first, then\n"
            "                          plots, tables, and the analysis collapsed\n"
            "With --baseline the findings start with the cells that got slower or faster\n"
            "than in the baseline beyond noise (p25-p75 spreads apart), and analysis.txt and\n"
            "index.html list them with their ratio.\n\n"
            "options:\n");
    bench_opt_usage(f, opt_table, BENCH_OPT_COUNT(opt_table), 17);
    fprintf(f,
            "\n"
            "The report depends on the files only: the same files give the same bytes.\n"
            "Each FILE must be a regular file (not a pipe or device) of at most %zu MiB;\n"
            "a bad file or row is named with its line, the first %d per file, then a count.\n"
            "Every output is written to a temporary and renamed; a report that fails in a\n"
            "DIR it created removes DIR again.\n"
            "exit codes: 0 ok; 1 an input file or row was rejected (the rest is still reported),\n"
            "or a cell slowed by more than --fail-on-regression;\n"
            "2 bad usage or DIR exists; 3 an output could not be written.\n",
            REPORT_MAX_INPUT_BYTES >> 20, REPORT_LOG_SHOWN);
}

static int run(const report_opts *o);

int cmd_report(int argc, char **argv)
{
    report_opts o = {.files = calloc(argc > 0 ? (size_t)argc : 1, sizeof(const char *)),
                     .baseline = calloc(argc > 0 ? (size_t)argc : 1, sizeof(const char *)),
                     .fail_pct = -1};
    if (!o.files || !o.baseline) {
        free(o.files);
        free(o.baseline);
        return fprintf(stderr, "collbench report: out of memory\n"), EXIT_RUNTIME;
    }
    int code, rc = cli_parse_options("collbench report", opt_table, BENCH_OPT_COUNT(opt_table), &o,
                                     NULL, on_file, argc, argv);
    if (rc == BENCH_OPT_HELP) usage(stdout), code = 0;
    else if (rc) usage(stderr), code = rc;
    else code = run(&o);
    free(o.files);
    free(o.baseline);
    return code;
}

static int run(const report_opts *o)
{
    if (!o->outdir || !*o->outdir) {
        fprintf(stderr, "collbench report: -o DIR is required (where to write the report)\n");
        return EXIT_USAGE;
    }
    if (o->nfiles == 0) {
        fprintf(stderr,
                "collbench report: no result files given (FILE... : CSV or JSON from collbench)\n");
        return EXIT_USAGE;
    }
    if (!o->nbaseline && (o->fail_pct >= 0 || o->cross_machine)) {
        fprintf(
            stderr,
            "collbench report: --fail-on-regression and --cross-machine need --baseline PATH\n");
        return EXIT_USAGE;
    }
    int regressed = 0;
    report_options ro = {o->files,    o->nfiles,    o->outdir,        o->force,    stderr,
                         o->baseline, o->nbaseline, o->cross_machine, o->fail_pct, &regressed};
    int rc = report_run_opts(&ro);
    if (rc == REPORT_INPUT_REJECTED || (rc == 0 && regressed)) return EXIT_WRONG;
    if (rc == 0) return 0;
    return rc == COLL_EINVAL ? EXIT_USAGE : EXIT_RUNTIME;
}
