/* collbench model FILE... [--predict CLUSTER --sizes LIST]: the cost model
 * (src/costmodel, docs/DESIGN.md "Cost model") fitted to result files, and its
 * predictions for a cluster the user does not have; for training rows
 * (--train) or a program's trace (--trace) as the workload. */
#include "cli_common.h"
#include "coll.h"
#include "coll_tool.h"
#include "engine/bench_coll.h"
#include "engine/opt_table.h"
#include "engine/sizes.h"
#include "costmodel/model_fit.h"
#include "costmodel/model_predict.h"
#include "costmodel/model_range.h"
#include "costmodel/model_xval.h"
#include "cmd_model_trace.h"
#include "cmd_model_train.h"
#include "report/report.h"
#include "report/report_data.h"
#include "report/report_model.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct model_opts {
    const char **files;
    size_t nfiles;
    const char *predict[8];   /* --predict, each a cluster */
    model_cluster cluster[8]; /* each parsed, checked before any file is read */
    size_t npredict;
    const char *train; /* --train: training rows */
    const char *trace; /* --trace: a program's trace (read before the result files) */
    uint64_t *sizes;
    size_t nsizes;
    const char *collective, *backend;
    int no_rows, cores;
} model_opts;

#define MO(c) ((model_opts *)(c)->user)
#define MODEL_MAX_PREDICT_BYTES (1ULL << 40)

static int on_file(bench_opt_ctx *c, const char *arg)
{
    MO(c)->files[MO(c)->nfiles++] = arg;
    return 0;
}
static int on_predict(bench_opt_ctx *c, const char *v)
{
    char err[256];
    if (MO(c)->npredict == 8) return bench_opt_fail(c, "at most 8 clusters");
    if (model_cluster_parse(v, &MO(c)->cluster[MO(c)->npredict], err, sizeof err))
        return bench_opt_fail(c, "%s", err);
    MO(c)->predict[MO(c)->npredict++] = v;
    return 0;
}
static int on_train(bench_opt_ctx *c, const char *v)
{
    /* read after the fit: a typo must not cost the fit's pages first */
    if (access(v, R_OK) != 0) return bench_opt_fail(c, "%s: %s", v, strerror(errno));
    MO(c)->train = v;
    return 0;
}
static int on_trace(bench_opt_ctx *c, const char *v)
{
    MO(c)->trace = v; /* read in run(), where a missing jansson is exit 4, not 2 */
    return 0;
}
static int on_collective(bench_opt_ctx *c, const char *v)
{
    if (!bench_coll_find(v)) return bench_opt_fail(c, "unknown collective '%s'", v);
    MO(c)->collective = v;
    return 0;
}
static int on_backend(bench_opt_ctx *c, const char *v)
{
    MO(c)->backend = v;
    return 0;
}
static int on_cores(bench_opt_ctx *c, const char *v)
{
    return bench_opt_int(c, v, 1, 1 << 20, &MO(c)->cores);
}
static int on_no_rows(bench_opt_ctx *c, const char *v)
{
    (void)v;
    MO(c)->no_rows = 1;
    return 0;
}
static int on_sizes(bench_opt_ctx *c, const char *v)
{
    char why[200];
    free(MO(c)->sizes);
    MO(c)->sizes = NULL;
    if (bench_parse_size_list(v, &MO(c)->sizes, &MO(c)->nsizes, why, sizeof why))
        return bench_opt_fail(c, "%s", why);
    /* a prediction at 0 bytes has no bandwidth (nan); past 1T, none was measured near */
    for (size_t i = 0; i < MO(c)->nsizes; i++)
        if (MO(c)->sizes[i] == 0 || MO(c)->sizes[i] > MODEL_MAX_PREDICT_BYTES)
            return bench_opt_fail(c, "'%s': each size must be from 1 byte to 1T", v);
    return 0;
}

static const bench_opt opt_table[] = {
    {0, "predict", "CLUSTER", on_predict,
     "predict for hosts=N[,ranks-per-host=R][,link=RATE,latency=TIME]\n"
     "[,measured-link=RATE,measured-latency=TIME] (see below); may repeat"},
    {0, "train", "FILE", on_train,
     "training rows (collbench train's CSV or JSON): predict\n"
     "their step time on each --predict cluster (see below)"},
    {0, "trace", "DIR", on_trace,
     "a program's trace (collbench replay's: DIR of rank<R>.jsonl,\n"
     "or one rank's file): predict its communication on each\n"
     "--predict cluster (see below)"},
    {0, "sizes", "LIST", on_sizes, "sizes to predict at (default 1M,1G), e.g. 64K,1M,1G"},
    {0, "collective", "NAME", on_collective, "only this collective's rows"},
    {0, "backend", "NAME", on_backend, "only this backend's rows"},
    {0, "cores", "N", on_cores,
     "the rows' ranks shared N cores (one machine, emulated hosts too):\n"
     "where they outnumber them, per-byte CPU costs grow by ranks/N\n"
     "(default: the cores the run recorded, machines.<host>.cores)"},
    {0, "no-rows", NULL, on_no_rows, "leave out the per-row residuals"},
    {'h', "help", NULL, bench_opt_help, "this text"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: collbench model FILE... [--predict CLUSTER [--sizes LIST]]\n"
               "       collbench model FILE... --train TRAINING_FILE --predict CLUSTER...\n"
               "       collbench model FILE... --trace TRACE_DIR --predict CLUSTER...\n\n"
               "Fits the alpha-beta-gamma cost formula of each algorithm (docs/DESIGN.md \"Cost\n"
               "model\") to result files (CSV or JSON, as collbench report reads them): per\n"
               "machine, backend, buffers, collective, algorithm and dtype, the time per message\n"
               "(alpha), per byte (beta; inside a host and between hosts when rows span hosts)\n"
               "and per byte reduced (gamma), by least squares on relative error. Prints each\n"
               "parameter with its standard error and, per row, the model's residual and its\n"
               "weight in the fit (rows far off the rest count less: Tukey's bisquare). A series\n"
               "with too few sizes or process counts is refused, saying what is missing.\n\n"
               "options:\n");
    bench_opt_usage(f, opt_table, BENCH_OPT_COUNT(opt_table), 22);
    fprintf(f, "\n"
               "--predict: the time, algbw and busbw of each fitted algorithm on hosts x\n"
               "ranks-per-host, and the one the model picks. The machine's own terms are\n"
               "the fitted ones; the link's are link= (a rate: 100Gbit/s, 800Mbit/s, 12.5GB/s)\n"
               "and latency= (5us, 0.1ms), plus the software's share per message (the fitted\n"
               "alpha_intra, or, with measured-link= and measured-latency=, the fitted\n"
               "inter-host terms beyond the link the multi-host rows ran on); a flat backend's\n"
               "fitted beta_intra is added to the link's per-byte time as the stack's cost,\n"
               "and a byte never costs less than the one-host rows show (the stack's ceiling:\n"
               "the nearest one-host row in ranks and size; for auto, the tcp rows' in FILE...;\n"
               "\"stack-bound\" where it sets the time).\n"
               "A cluster, size or link beyond the rows is named as an extrapolation.\n"
               "Without link= the fitted inter-host terms are used (multi-host rows needed).\n"
               "cores=N: cores per host, where ranks-per-host outnumber them (see --cores);\n"
               "shared-cores=N: hosts emulated on one machine, all ranks sharing its N cores.\n"
               "Not modelled: contention beyond the link's rate (switch oversubscription,\n"
               "incast), NIC offload, stragglers and noise, placement other than host by host.\n\n"
               "--train: for each allreduce-sync and ddp row of the training file (at its\n"
               "largest process count per model, backend and batch), the step on each cluster:\n"
               "compute + exposed communication, each bucket's all-reduce from the fitted\n"
               "all-reduce of the row's backend (fp16/bf16: half the bytes), ddp buckets\n"
               "overlapping backward as a pipeline, and the exposed time the model misses at\n"
               "the measured world kept as overhead; prints step, exposed comm and scaling\n"
               "efficiency (compute / step). Needs all-reduce rows of that backend in FILE...\n\n"
               "--trace: every rank's calls of a trace (collbench replay's format; the ranks'\n"
               "files checked against each other), each predicted on each cluster by its\n"
               "collective's fitted model where that model validated (held-out error at most\n"
               "25%%), summed per collective, per machine, backend and buffers of FILE...: the\n"
               "rank whose calls add up to the most, and the range over the ranks; calls\n"
               "without such a model are left out and named, with their share of the bytes.\n"
               "A world that grows keeps data-parallel sizes: all-reduce counts unchanged,\n"
               "all-gather and reduce-scatter per-rank counts unchanged.\n"
               "exit codes: 0 ok; 1 a file or row was rejected, or nothing could be fitted or\n"
               "predicted; 2 bad usage.\n");
}

static int run(model_opts *o);

int cmd_model(int argc, char **argv)
{
    model_opts o = {.files = calloc(argc > 0 ? (size_t)argc : 1, sizeof(const char *))};
    if (!o.files) return fprintf(stderr, "collbench model: out of memory\n"), EXIT_RUNTIME;
    int code, rc = cli_parse_options("collbench model", opt_table, BENCH_OPT_COUNT(opt_table), &o,
                                     NULL, on_file, argc, argv);
    if (rc == BENCH_OPT_HELP) usage(stdout), code = 0;
    else if (rc) code = rc;
    else code = run(&o);
    free(o.files);
    free(o.sizes);
    return code;
}

/* ---- printing ---- */

static void print_param(const model_series *s, model_param p)
{
    const char *name = model_param_name(p);
    double v = s->theta[p], e = s->se[p];
    switch (s->state[p]) {
    case MODEL_P_ABSENT: return;
    case MODEL_P_MERGED:
        printf("    %-12s not separable from beta with these rows (its share is in beta)\n", name);
        return;
    case MODEL_P_ZERO:
        if (p == MODEL_BETA_MEM) return; /* a knot that did not hold is no knot */
        printf("    %-12s 0 (fitted below zero: lost in the noise, held at 0)\n", name);
        return;
    case MODEL_P_FITTED: break;
    }
    double rel = v > 0 ? 100 * e / v : INFINITY;
    if (p == MODEL_BETA_MEM) {
        char knot[32];
        printf("    %-12s %10.5f ns/B ± %.5f ns/B (%.0f%%) more per byte beyond %s of buffers per "
               "core\n",
               name, v * 1e3, e * 1e3, rel,
               report_fmt_size((uint64_t)s->cache_bytes, knot, sizeof knot));
    } else if (p == MODEL_ALPHA_INTRA || p == MODEL_ALPHA_INTER)
        printf("    %-12s %10.3f us   ± %.3f us (%.0f%%)\n", name, v, e, rel);
    else
        printf("    %-12s %10.5f ns/B ± %.5f ns/B (%.0f%%)%s%.3g GB/s\n", name, v * 1e3, e * 1e3,
               rel, v > 0 ? ", i.e. " : "", v > 0 ? 1e-3 / v : 0.0);
}

/* Where a series' core count came from: the fit's and the report's agree
 * only when both read it from the files. */
typedef enum cores_source { CORES_UNKNOWN, CORES_GIVEN, CORES_RECORDED } cores_source;

/* The held-out validation: per fold, then the verdict the report follows
 * (stated only where the report would have the fit's cores: read from the files). */
static void print_xval(const model_series *s, cores_source src)
{
    const model_xval *x = &s->xval;
    char why[160];
    model_xval_why_not(s, why, sizeof why);
    if (x->nfolds == 0) {
        printf("    held out: nothing (%s)\n", why);
        return;
    }
    printf("    held out (each count left out, the rest fitted, its rows predicted):");
    for (size_t k = 0; k < x->nfolds; k++) {
        const model_fold *f = &x->folds[k];
        if (f->ok) printf("%s fit %s %.1f%%", k ? ";" : "", f->fit, 100 * f->med_err);
        else printf("%s fit %s cannot predict", k ? ";" : "", f->fit);
    }
    printf("\n");
    if (x->n)
        printf("    held-out error: median %.1f%%, max %.1f%% over %zu rows (in-sample median "
               "%.1f%%): %s\n",
               100 * x->med_err, 100 * x->max_err, x->n, 100 * s->med_abs_res,
               src == CORES_UNKNOWN ? (why[0] ? "a report of these files would not draw it (no "
                                                "core count: see above)"
                                              : "a report of these files would draw it")
               : src == CORES_GIVEN ? (why[0] ? "with these cores a report would not draw it"
                                              : "with these cores a report would draw it")
               : why[0]             ? "the report does not draw it"
                                    : "the report draws it");
}

static void print_series(const model_series *s, int rows, cores_source src)
{
    printf("%s / %s / %s buffers / %s / algo %s / %s: %zu rows\n", s->host, s->backend, s->buffers,
           s->collective, s->algo, s->dtype, s->npts);
    if (!s->ok) {
        printf("    not fitted: %s\n", s->why);
        return;
    }
    int hier = 0;
    for (size_t i = 0; i < s->npts; i++) {
        model_shape sh = {.collective = s->collective,
                          .algo = s->model,
                          .backend = s->backend,
                          .hosts = s->pts[i].hosts,
                          .per_host = s->pts[i].per_host};
        hier |= model_is_hier(&sh);
    }
    int table = s->model == MODEL_ALGO_BOUND && !strcmp(s->backend, "tcp") &&
                coll_algo_auto_pick(s->collective, 1, 2);
    printf("    formula: %s%s\n",
           table ? "the algorithm libcoll's tuning table picks per size and ranks"
           : s->model == MODEL_ALGO_BOUND ? "the backend's own choice, as Chan et al.'s lower bound"
                                          : model_algo_name(s->model),
           hier ? "; hierarchical (intra reduce-scatter, inter all-reduce, intra all-gather, "
                  "pipelined) on several hosts"
                : "");
    if (s->cores)
        printf("    cores: %d%s (where ranks outnumber them, per-byte CPU costs x ranks/%d)\n",
               s->cores, src == CORES_GIVEN ? ", --cores" : ", as the run recorded them", s->cores);
    else
        printf("    cores: not recorded in these files (a CSV has no column for them): fitted "
               "as if each rank had a core\n"
               "           of its own, which is wrong where ranks outnumbered the cores: give "
               "--cores N (the machine's\n"
               "           usable cores), or the run's results.json, which records them\n");
    for (int p = 0; p < MODEL_NPARAM; p++) print_param(s, (model_param)p);
    size_t out = 0;
    for (size_t i = 0; i < s->npts; i++) out += s->pts[i].weight < 0.5;
    printf("    residuals: median %.1f%%, max %.1f%%; %zu of %zu rows outliers (weight < 0.5)\n",
           100 * s->med_abs_res, 100 * s->max_abs_res, out, s->npts);
    print_xval(s, src);
    if (!rows) return;
    printf("    %5s %5s %6s %12s %12s %12s %9s %7s\n", "hosts", "x", "ranks", "bytes",
           "measured_us", "model_us", "residual", "weight");
    for (size_t i = 0; i < s->npts; i++) {
        const model_point *p = &s->pts[i];
        printf("    %5d %5d %6d %12.0f %12.2f %12.2f %+8.1f%% %7.2f%s\n", p->hosts, p->per_host,
               p->hosts * p->per_host, p->bytes, p->measured_us, p->model_us,
               100 * (p->model_us - p->measured_us) / p->measured_us, p->weight,
               p->weight < 0.5 ? " outlier" : "");
    }
}

/* Series of the same machine, backend, buffers, collective and dtype: the
 * algorithms one prediction compares. */
static int same_group(const model_series *a, const model_series *b)
{
    return !strcmp(a->host, b->host) && !strcmp(a->backend, b->backend) &&
           !strcmp(a->buffers, b->buffers) && !strcmp(a->collective, b->collective) &&
           !strcmp(a->dtype, b->dtype);
}

/* Prints the predictions of group g (indices of fits); 1 when at least one was made. */
static int print_group_prediction(const model_fits *f, const size_t *g, size_t ng,
                                  const model_cluster *c, const model_opts *o)
{
    const model_series *s0 = &f->s[g[0]];
    printf("%s / %s / %s buffers / %s / %s on %d hosts x %d ranks", s0->host, s0->backend,
           s0->buffers, s0->collective, s0->dtype, c->hosts, c->per_host);
    if (c->link_Bps > 0)
        printf(", link %.4g Gbit/s, latency %.4g us", c->link_Bps * 8 / 1e9, c->latency_us);
    else printf(", the fitted inter-host terms");
    printf(" (prediction)\n");
    int any = 0;
    double lo = INFINITY, hi = 0;
    for (size_t z = 0; z < o->nsizes; z++)
        lo = fmin(lo, (double)o->sizes[z]), hi = fmax(hi, (double)o->sizes[z]);
    for (size_t k = 0; k < ng; k++) {
        char err[256], beyond[512];
        double theta[MODEL_NPARAM];
        const model_series *s = &f->s[g[k]];
        if (model_cluster_theta(s, c, theta, err, sizeof err))
            printf("    algo %-8s cannot predict: %s\n", s->algo, err);
        else if (model_beyond(s, c, lo, hi, beyond, sizeof beyond))
            printf("    algo %-8s extrapolated beyond the rows: %s; expect errors larger than\n"
                   "    %-13s the fit's residuals (median %.0f%%, max %.0f%%)\n",
                   s->algo, beyond, "", 100 * s->med_abs_res, 100 * s->max_abs_res);
    }
    printf("    %10s %-8s %12s %10s %10s\n", "bytes", "algo", "time_us", "algbw", "busbw");
    for (size_t z = 0; z < o->nsizes; z++) {
        double best = INFINITY;
        const char *pick = NULL;
        char sz[32];
        bench_format_size(o->sizes[z], sz, sizeof sz);
        for (size_t k = 0; k < ng; k++) {
            model_prediction p;
            char err[256];
            const model_series *s = &f->s[g[k]];
            if (model_predict(s, c, (double)o->sizes[z], &p, err, sizeof err) ||
                !isfinite(p.time_us))
                continue;
            printf("    %10s %-8s %12.1f %10.3f %10.3f%s\n", sz, s->algo, p.time_us, p.algbw_GBps,
                   p.busbw_GBps, p.stack_bound ? "  stack-bound" : "");
            if (p.time_us < best) best = p.time_us, pick = s->algo;
            any = 1;
        }
        if (pick) printf("    %10s pick: %s\n", sz, pick);
    }
    return any;
}

static int predict(const model_fits *f, const model_opts *o, const char *spec,
                   const model_cluster *cp)
{
    model_cluster c = *cp;
    size_t *g = malloc((f->n ? f->n : 1) * sizeof *g);
    char *done = calloc(f->n ? f->n : 1, 1);
    if (!g || !done) {
        free(g), free(done);
        fprintf(stderr, "collbench model: out of memory\n");
        return EXIT_RUNTIME;
    }
    int any = 0;
    printf(
        "\n== predictions (not measured; not modelled: contention beyond the link's rate, incast,\n"
        "   NIC offload, stragglers, placement other than host by host; stack-bound: the\n"
        "   backend's stack, as fast as on one host without a link, not the link sets the pace)\n");
    for (size_t i = 0; i < f->n; i++) {
        if (done[i] || !f->s[i].ok) continue;
        size_t ng = 0;
        for (size_t j = i; j < f->n; j++)
            if (!done[j] && f->s[j].ok && same_group(&f->s[i], &f->s[j])) g[ng++] = j, done[j] = 1;
        any |= print_group_prediction(f, g, ng, &c, o);
    }
    free(g);
    free(done);
    if (!any) {
        fprintf(stderr, "collbench model: nothing could be predicted for %s (see above)\n", spec);
        return 1;
    }
    return 0;
}

/* --train: the training rows' steps on the clusters. */
static int predict_train(const model_fits *f, const model_opts *o, const model_cluster *c)
{
    report_data t = {0};
    int rc = report_read_file(&t, o->train, stderr);
    if (rc == COLL_ENOMEM) {
        report_data_free(&t);
        return fprintf(stderr, "collbench model: out of memory\n"), EXIT_RUNTIME;
    }
    report_sort_dedup(&t);
    int code;
    if (t.ntrain == 0) {
        fprintf(stderr,
                "collbench model: --train %s: no training rows (collbench train's CSV or JSON)\n",
                o->train);
        code = 1;
    } else {
        code = cmd_model_train_print(f, c, o->npredict, t.train, t.ntrain);
    }
    report_data_free(&t);
    return code ? code : rc ? 1 : 0;
}

static int predict_all(const model_fits *f, const model_opts *o, const cmd_model_trace *t)
{
    if (o->train) return predict_train(f, o, o->cluster);
    if (t) return cmd_model_trace_print(f, o->cluster, o->predict, o->npredict, t);
    int code = 0;
    for (size_t i = 0; i < o->npredict; i++) {
        int rc = predict(f, o, o->predict[i], &o->cluster[i]);
        if (rc > code) code = rc;
    }
    return code;
}

static int run(model_opts *o)
{
    if (o->nfiles == 0) {
        fprintf(stderr,
                "collbench model: no result files given (FILE... : CSV or JSON from collbench)\n");
        return EXIT_USAGE;
    }
    if (o->train && !o->npredict) {
        fprintf(stderr,
                "collbench model: --train needs --predict (the cluster to predict the step on)\n");
        return EXIT_USAGE;
    }
    if (o->trace && !o->npredict) {
        fprintf(stderr, "collbench model: --trace needs --predict (the cluster to predict the "
                        "trace's communication on)\n");
        return EXIT_USAGE;
    }
    if (o->trace && (o->train || o->sizes)) {
        fprintf(stderr, "collbench model: --trace is the workload: not with %s\n",
                o->train ? "--train (another workload)" : "--sizes (the trace's calls give them)");
        return EXIT_USAGE;
    }
    if (o->sizes && !o->npredict) {
        fprintf(stderr, "collbench model: --sizes needs --predict (the sizes to predict at)\n");
        return EXIT_USAGE;
    }
    if (!o->sizes) {
        static const uint64_t def[] = {1u << 20, 1u << 30};
        o->sizes = malloc(sizeof def);
        if (!o->sizes) return fprintf(stderr, "collbench model: out of memory\n"), EXIT_RUNTIME;
        memcpy(o->sizes, def, sizeof def);
        o->nsizes = 2;
    }
    cmd_model_trace trace = {0};
    if (o->trace) {
        int rc = cmd_model_trace_load(o->trace, &trace);
        if (rc) return rc;
    }
    report_data d = {0};
    int rejected = 0;
    for (size_t i = 0; i < o->nfiles; i++) {
        int rc = report_read_file(&d, o->files[i], stderr);
        if (rc == COLL_ENOMEM) {
            report_data_free(&d);
            cmd_model_trace_free(&trace);
            return fprintf(stderr, "collbench model: out of memory\n"), EXIT_RUNTIME;
        }
        rejected |= rc != 0;
    }
    report_sort_dedup(&d);
    /* the filters: rows of other collectives or backends drop out */
    size_t kept = 0;
    for (size_t i = 0; i < d.ncomm; i++) {
        const bench_row *r = &d.comm[i];
        if ((o->collective && strcmp(r->collective, o->collective)) ||
            (o->backend && strcmp(r->backend, o->backend)))
            continue;
        d.comm[kept++] = *r;
    }
    model_fits f;
    model_host_cores hosts[REPORT_MAX_MACHINES];
    size_t nhosts = report_model_cores(&d, hosts);
    if (model_fit_rows(d.comm, kept, o->cores, hosts, nhosts, &f) || model_xval_fits(&f)) {
        report_data_free(&d);
        cmd_model_trace_free(&trace);
        return fprintf(stderr, "collbench model: out of memory\n"), EXIT_RUNTIME;
    }
    report_data_free(&d);
    size_t fitted = 0;
    printf("== cost model fits (times in microseconds; parameter ± standard error; residual = "
           "(model - measured) / measured)\n");
    for (size_t i = 0; i < f.n; i++) {
        cores_source src = o->cores ? CORES_GIVEN : f.s[i].cores ? CORES_RECORDED : CORES_UNKNOWN;
        print_series(&f.s[i], !o->no_rows, src);
        fitted += (size_t)f.s[i].ok;
    }
    if (f.skipped)
        printf("(%zu rows left out: wrong results, no time, one rank, or ranks not a multiple of "
               "hosts)\n",
               f.skipped);
    int code = 0;
    if (fitted == 0) {
        fprintf(stderr, "collbench model: no series could be fitted (%s)\n",
                f.n ? "see the reasons above" : "no communication rows with 2 or more ranks");
        code = 1;
    } else if (o->npredict) {
        code = predict_all(&f, o, o->trace ? &trace : NULL);
    }
    model_fits_free(&f);
    cmd_model_trace_free(&trace);
    return code ? code : rejected ? 1 : 0;
}
