/* The training part of collbench model (docs/DESIGN.md "Cost model",
 * "Training"): a training row's step rebuilt from its compute time and the
 * fitted all-reduce of its buckets, first at the world it was measured at
 * (what the model misses there is carried over as a per-step overhead:
 * compression casts, framework costs), then on the clusters asked for. */
#include "cmd_model_train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "costmodel/model_train.h"

/* The all-reduce series a training row's backend ran: float32 ones, else any dtype. */
typedef struct ar_ctx {
    const model_fits *f;
    const char *backend;
    const model_cluster *cluster; /* NULL: at the fit's own machine */
    int hosts, per_host;          /* without cluster */
} ar_ctx;

static int usable(const model_series *s, const char *backend, int want_f32)
{
    return s->ok && !strcmp(s->collective, "allreduce") && !strcmp(s->backend, backend) &&
           (!want_f32 || !strcmp(s->dtype, "float32"));
}

/* The fastest fitted algorithm's time: the one the model would pick. */
static double ar_us(double bytes, void *arg)
{
    const ar_ctx *c = arg;
    double best = NAN;
    for (int f32 = 1; f32 >= 0 && !isfinite(best); f32--)
        for (size_t i = 0; i < c->f->n; i++) {
            const model_series *s = &c->f->s[i];
            if (!usable(s, c->backend, f32)) continue;
            double t = NAN;
            if (c->cluster) {
                model_prediction p;
                char err[256];
                if (model_predict(s, c->cluster, bytes, &p, err, sizeof err) == 0) t = p.time_us;
            } else {
                t = model_series_time_us(s, c->hosts, c->per_host, bytes, NULL);
            }
            if (isfinite(t) && !(t >= best)) best = t;
        }
    return best;
}

static int has_fit(const model_fits *f, const char *backend)
{
    for (size_t i = 0; i < f->n; i++)
        if (usable(&f->s[i], backend, 0)) return 1;
    return 0;
}

static int is_modelled_mode(const report_train_row *r)
{
    return !strcmp(r->mode, "allreduce-sync") || !strcmp(r->mode, "ddp");
}

static int same_group(const report_train_row *a, const report_train_row *b)
{
    return !strcmp(a->model, b->model) && !strcmp(a->backend, b->backend) && a->batch == b->batch;
}

static model_train_job job_of(const report_train_row *r)
{
    return (model_train_job){.grad_bytes = 4.0 * (double)r->params,
                             .compute_ms = r->compute_ms,
                             .backward_ms = MODEL_TRAIN_BACKWARD_SHARE * r->compute_ms,
                             .ddp = !strcmp(r->mode, "ddp"),
                             .bucket_bytes = r->bucket_mb * 1048576.0,
                             .first_bucket_bytes = fmin(MODEL_TRAIN_FIRST_BUCKET_BYTES,
                                                        r->bucket_mb * 1048576.0),
                             .wire_ratio = model_train_wire_ratio(r->compress)};
}

static const char *mode_label(const report_train_row *r, char *buf, size_t len)
{
    if (strcmp(r->mode, "ddp")) snprintf(buf, len, "sync");
    else
        snprintf(buf, len, "ddp %gM%s%s", r->bucket_mb, strcmp(r->compress, "none") ? " " : "",
                 strcmp(r->compress, "none") ? r->compress : "");
    return buf;
}

/* The measured world's check: fills *job's overhead; 0 when it could be made,
 * 1 when the overhead is larger than the model's exposed time, -1 when not made. */
static int calibrate(const model_fits *f, const report_train_row *r, model_train_job *job)
{
    char label[48], err[256];
    ar_ctx c = {.f = f, .backend = r->backend, .hosts = 1, .per_host = r->nprocs};
    model_train_step s;
    double measured = fmax(0, r->step_ms_avg - r->compute_ms);
    printf("    %-22s %4d %10.2f %10.2f %11.2f", mode_label(r, label, sizeof label), r->nprocs,
           r->compute_ms, r->step_ms_avg, measured);
    if (r->nprocs < 2 || model_train_predict(job, ar_us, &c, &s, err, sizeof err)) {
        printf("   (no model at %d ranks%s%s: overhead taken as 0)\n", r->nprocs,
               r->nprocs < 2 ? "" : ": ", r->nprocs < 2 ? "" : err);
        return -1;
    }
    job->overhead_ms = fmax(0, measured - s.exposed_ms);
    printf(" %13.2f %11.2f\n", s.exposed_ms, job->overhead_ms);
    return job->overhead_ms > s.exposed_ms ? 1 : 0;
}

static void cluster_text(const model_cluster *c, char *buf, size_t len)
{
    if (c->hosts == 1) snprintf(buf, len, "1 host x %d ranks", c->per_host);
    else if (c->link_Bps > 0)
        snprintf(buf, len, "%d hosts x %d ranks, link %.4g Gbit/s, latency %.4g us", c->hosts,
                 c->per_host, c->link_Bps * 8 / 1e9, c->latency_us);
    else
        snprintf(buf, len, "%d hosts x %d ranks, the fitted inter-host terms", c->hosts,
                 c->per_host);
}

/* One group (rows g[0..ng) at one world); 1 when a prediction was made. */
static int print_group(const model_fits *f, const model_cluster *cl, size_t ncl,
                       const report_train_row *const *g, size_t ng)
{
    const report_train_row *r0 = g[0];
    printf("\n%s (%lld params, %.1f MB float32 gradient), batch %d per rank, backend %s: rows at "
           "%d ranks\n",
           r0->model, (long long)r0->params, 4e-6 * (double)r0->params, r0->batch, r0->backend,
           r0->nprocs);
    if (!has_fit(f, r0->backend)) {
        printf("    cannot predict: no fitted all-reduce of backend %s in the result files\n",
               r0->backend);
        return 0;
    }
    model_train_job jobs[64];
    int ok[64], unexplained = 0;
    if (ng > 64) {
        printf("    (%zu configurations: the first 64 are shown)\n", ng);
        ng = 64;
    }
    printf("    measured vs model at the measured world (one host; ms per step):\n");
    printf("    %-22s %4s %10s %10s %11s %13s %11s\n", "mode", "np", "compute", "step", "exposed",
           "model_exposed", "overhead");
    for (size_t k = 0; k < ng; k++) {
        jobs[k] = job_of(g[k]);
        ok[k] = jobs[k].wire_ratio > 0;
        if (!ok[k]) {
            char label[48];
            printf("    %-22s not modelled: compression %s (top-k's all-gather grows with the "
                   "world)\n",
                   mode_label(g[k], label, sizeof label), g[k]->compress);
            continue;
        }
        unexplained |= calibrate(f, g[k], &jobs[k]) == 1;
    }
    if (unexplained)
        printf(
            "    note: the model explains under half of some rows' measured exposed time; their\n"
            "    overhead, kept constant, dominates their predictions (a loaded machine, or\n"
            "    all-reduce rows measured at other times: measure both on a quiet machine)\n");
    int any = 0;
    for (size_t c = 0; c < ncl; c++) {
        char ct[128];
        cluster_text(&cl[c], ct, sizeof ct);
        printf("    predicted on %s (prediction, not measured):\n", ct);
        printf("    %-22s %10s %10s %10s %10s %10s %7s %6s\n", "mode", "compute", "overhead",
               "comm", "exposed", "step", "buckets", "eff");
        ar_ctx ctx = {.f = f, .backend = r0->backend, .cluster = &cl[c]};
        for (size_t k = 0; k < ng; k++) {
            if (!ok[k]) continue;
            char label[48], err[256];
            model_train_step s;
            mode_label(g[k], label, sizeof label);
            if (model_train_predict(&jobs[k], ar_us, &ctx, &s, err, sizeof err)) {
                printf("    %-22s cannot predict: %s\n", label, err);
                continue;
            }
            printf("    %-22s %10.2f %10.2f %10.2f %10.2f %10.2f %7zu %6.3f\n", label,
                   jobs[k].compute_ms, jobs[k].overhead_ms, s.comm_ms, s.exposed_ms, s.step_ms,
                   s.nbuckets, s.eff);
            any = 1;
        }
    }
    return any;
}

int cmd_model_train_print(const model_fits *f, const model_cluster *cl, size_t ncl,
                          const report_train_row *rows, size_t n)
{
    printf(
        "\n== training step predictions (not measured). step = compute + overhead + exposed comm;\n"
        "   comm: the fitted all-reduce (fastest algorithm) of each bucket at the cluster's "
        "world;\n"
        "   ddp buckets become ready evenly over backward (%.0f%% of compute) and are all-reduced "
        "in\n"
        "   order; overhead: the measured exposed time the model misses at the measured world\n"
        "   (compression casts, framework costs), kept constant; eff = compute / step.\n"
        "   Not modelled: compute changing with the cluster (same machine and per-rank batch "
        "assumed),\n"
        "   comm contending with compute, stragglers, top-k compression, modes other than\n"
        "   allreduce-sync and ddp, and what the collective model leaves out (contention, "
        "incast).\n",
        100 * MODEL_TRAIN_BACKWARD_SHARE);
    const report_train_row **g = malloc((n ? n : 1) * sizeof *g);
    char *done = calloc(n ? n : 1, 1);
    if (!g || !done) {
        free(g), free(done);
        fprintf(stderr, "collbench model: out of memory\n");
        return 1;
    }
    int any = 0, groups = 0;
    for (size_t i = 0; i < n; i++) {
        if (done[i] || !is_modelled_mode(&rows[i])) continue;
        int world = 0;
        for (size_t j = i; j < n; j++)
            if (is_modelled_mode(&rows[j]) && same_group(&rows[i], &rows[j]) &&
                rows[j].nprocs > world)
                world = rows[j].nprocs;
        size_t ng = 0;
        for (size_t j = i; j < n; j++) {
            if (done[j] || !is_modelled_mode(&rows[j]) || !same_group(&rows[i], &rows[j])) continue;
            done[j] = 1;
            if (rows[j].nprocs == world) g[ng++] = &rows[j];
        }
        groups++;
        any |= print_group(f, cl, ncl, g, ng);
    }
    free(g), free(done);
    if (!groups) {
        fprintf(stderr,
                "collbench model: --train: no allreduce-sync or ddp rows in the training file\n");
        return 1;
    }
    if (!any) {
        fprintf(stderr,
                "collbench model: --train: no training step could be predicted (see above)\n");
        return 1;
    }
    return 0;
}
