/* collbench report, start to end: read every file, merge, then write
 * combined.csv, the markdown tables, analysis.txt, the plots and index.html. */
#include "report/report.h"

#include "costmodel/model_fit.h"
#include "costmodel/model_xval.h"
#include "report/report_analysis.h"
#include "report/report_baseline.h"
#include "report/report_charts.h"
#include "report/report_data.h"
#include "report/report_findings.h"
#include "report/report_html.h"
#include "report/report_merge.h"
#include "report/report_model.h"
#include "report/report_plot.h"
#include "report/report_replay.h"
#include "report/report_table.h"
#include "report/report_text.h"
#include "report/report_view.h"

#include "coll.h"
#include "core/dir_make.h"
#include "core/dir_remove.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int report_have_plots(void)
{
#ifdef COLL_HAVE_PLPLOT
    return 1;
#else
    return 0;
#endif
}

/* A report that failed in a directory it created takes the directory back
 * (its files are whole, but the report is not): else the rerun would be
 * refused with "already exists". Parents made for it stay; they block nothing. */
static void remove_report_dir(const char *dir, FILE *log)
{
    if (coll__remove_flat_dir(dir) == 0)
        fprintf(log,
                "collbench report: %s removed (the report is incomplete); nothing left to "
                "block a rerun\n",
                dir);
    else
        fprintf(log, "collbench report: could not remove the incomplete report %s: %s\n", dir,
                strerror(errno));
}

static int write_md(const char *outdir, const char *name, const char *heading, const rtable *t,
                    size_t n, char *err, size_t errlen)
{
    sbuf b = {0};
    char path[4096];
    report_sb_printf(&b, "# %s\n\n", heading);
    for (size_t i = 0; i < n; i++) report_table_md(&t[i], &b);
    snprintf(path, sizeof path, "%s/%s", outdir, name);
    int rc = report_write_sbuf(path, &b, err, errlen);
    report_sb_free(&b);
    return rc;
}

/* summary_by_config.md: the configurations' tables, then the replay's. */
static int write_summary_md(const char *outdir, const rtable *summary, size_t nsummary,
                            const report_replay *replay, char *err, size_t errlen)
{
    rtable all[2 + 64];
    size_t n = 0;
    for (size_t i = 0; i < nsummary && n < 2; i++) all[n++] = summary[i];
    for (size_t i = 0; i < replay->n && n < sizeof all / sizeof all[0]; i++)
        all[n++] = replay->t[i];
    return write_md(outdir, "summary_by_config.md", "collbench report: summary by configuration",
                    all, n, err, errlen);
}

/* Everything after reading: the files of the report. base: the comparison
 * with a baseline run, or NULL. */
static int write_report(const report_data *d, const report_view *vp, const report_baseline *base,
                        const char *outdir, FILE *log, char *err, size_t errlen)
{
    const report_view v = *vp;
    int rc = 0;
    rtable full[3], summary[2], changes = {0};
    report_table_comm(d, &full[0]);
    report_table_train(d, &full[1]);
    report_table_mem(d, &full[2]);
    report_table_comm_summary(&v, &summary[0]);
    report_table_train_summary(d, &summary[1]);
    size_t nfull = d->nmem ? 3 : d->ntrain ? 2 : 1, nsummary = d->ntrain ? 2 : 1;
    report_replay replay;
    report_replay_build(d, &replay);
    sbuf analysis = {0}, findings = {0}, details = {0}, html = {0};
    rtable findings_table = {0};
    char *chartjs = NULL;
    model_fits fits = {0};
    const model_fits *fitted = NULL; /* &fits once made */
    report_plots *plots = calloc(1, sizeof *plots);
    if (!plots) {
        rc = COLL_ENOMEM;
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < 3; i++)
        if (full[i].oom || (i < 2 && summary[i].oom) || replay.oom) {
            rc = COLL_ENOMEM;
            snprintf(err, errlen, "out of memory building the tables");
            goto out;
        }
    char path[4096];
    if ((rc = report_write_combined(d, outdir, err, errlen)) != 0) goto out;
    if ((rc = write_md(outdir, "full_results.md", "collbench report: full results", full, nfull,
                       err, errlen)) != 0)
        goto out;
    if ((rc = write_summary_md(outdir, summary, nsummary, &replay, err, errlen)) != 0) goto out;
    /* analysis.txt: the findings and their table first, every comparison below */
    sbuf lead = {0}; /* the regression summary heads the findings */
    if (base) {
        report_baseline_sentence(base, &lead);
        report_baseline_table(base, &changes);
    }
    report_findings(d, &v, lead.p, &findings, &findings_table);
    report_sb_free(&lead);
    report_analysis(d, &v, &details);
    /* Markdown like its tables: names from the input escaped (report_sb_md_escaped) */
    report_sb_md_escaped(&analysis, findings.p);
    report_sb_puts(&analysis, "\n");
    if (findings_table.nrows) report_table_md(&findings_table, &analysis);
    if (base) report_table_md(&changes, &analysis);
    report_replay_md(&replay, &analysis);
    report_sb_puts(&analysis, "Details: every comparison\n\n");
    report_sb_md_escaped(&analysis, details.p);
    if (analysis.oom || findings.oom || details.oom || findings_table.oom || changes.oom) {
        rc = COLL_ENOMEM;
        snprintf(err, errlen, "out of memory writing the analysis");
        goto out;
    }
    snprintf(path, sizeof path, "%s/analysis.txt", outdir);
    if ((rc = report_write_sbuf(path, &analysis, err, errlen)) != 0) goto out;

    /* the cost model, fitted once: its curves join the plots and charts, and
     * its fits and "what if" table are a section of the page */
    model_host_cores hosts[REPORT_MAX_MACHINES];
    size_t nhosts = report_model_cores(d, hosts);
    if (d->ncomm && model_fit_rows(d->comm, d->ncomm, 0, hosts, nhosts, &fits) == 0 &&
        model_xval_fits(&fits) == 0)
        fitted = &fits;
    int prc = report_plots_draw(d, &v, fitted, outdir, plots, log);
    if (prc != 0 && prc != COLL_EUNAVAIL) {
        snprintf(err, errlen, "%s", plots->err);
        rc = prc;
        goto out;
    }
    int skipped = prc == COLL_EUNAVAIL;
    char why[512];
    chartjs = report_chartjs_load(why, sizeof why);
    report_html_in in = {outdir,
                         d,
                         &v,
                         fitted,
                         chartjs,
                         why,
                         plots,
                         skipped,
                         findings.p ? findings.p : "",
                         &findings_table,
                         base ? &changes : NULL,
                         details.p ? details.p : "",
                         summary,
                         nsummary,
                         full,
                         nfull,
                         replay.n ? &replay : NULL};
    if ((rc = report_html(&in, &html, err, errlen)) != 0) goto out;
    snprintf(path, sizeof path, "%s/index.html", outdir);
    rc = report_write_sbuf(path, &html, err, errlen);
out:
    for (size_t i = 0; i < 3; i++) report_table_free(&full[i]);
    for (size_t i = 0; i < 2; i++) report_table_free(&summary[i]);
    report_replay_free(&replay);
    report_sb_free(&analysis);
    report_sb_free(&findings);
    report_sb_free(&details);
    report_table_free(&findings_table);
    report_table_free(&changes);
    report_sb_free(&html);
    model_fits_free(&fits);
    free(plots);
    free(chartjs);
    return rc;
}

/* Past a bound of report.h: 1 with err naming the count and the limit. */
static int too_big(const report_data *d, const report_view *v, char *err, size_t errlen)
{
    const char *hint = "report fewer files at a time (one machine, collective or backend)";
    if (d->ncomm + d->ntrain + d->nreplay > REPORT_MAX_ROWS)
        return snprintf(err, errlen,
                        "%zu rows (after merging duplicates), over the limit of %d "
                        "one report takes; %s",
                        d->ncomm + d->ntrain + d->nreplay, REPORT_MAX_ROWS, hint),
               1;
    for (size_t i = 0, run = 0; i < v->n; i++) {
        const report_series *s = &v->s[i];
        run = i && !strcmp(s->collective, v->s[i - 1].collective) ? run + 1 : 1;
        if (run > REPORT_MAX_SERIES)
            return snprintf(err, errlen,
                            "%s has over %d series (machine x device x buffers x "
                            "backend x processes x nodes), the most its plots can take; %s",
                            s->collective, REPORT_MAX_SERIES, hint),
                   1;
        if (s->n > REPORT_MAX_SIZES)
            return snprintf(err, errlen,
                            "%s %s with %d processes on %s has %zu sizes, over the "
                            "limit of %d points a line takes; %s",
                            s->collective, s->backend, s->nprocs, s->host, s->n, REPORT_MAX_SIZES,
                            hint),
                   1;
    }
    return 0;
}

/* Reads files into d; a negative coll_status (said on log) or whether a row was rejected. */
static int read_all(report_data *d, const char *const *files, size_t n, FILE *log)
{
    int rejected = 0;
    for (size_t i = 0; i < n; i++) {
        int rc = report_read_file(d, files[i], log);
        if (rc < 0) {
            fprintf(log, "collbench report: %s: %s\n", files[i], coll_strerror(rc));
            return rc;
        }
        rejected |= rc == REPORT_INPUT_REJECTED;
    }
    return rejected;
}

/* A baseline given as a directory: its results, as `collbench suite` or
 * `collbench report` wrote them. */
static int read_baseline(report_data *d, const char *const *paths, size_t n, FILE *log)
{
    int rejected = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        char file[4096];
        const char *path = paths[i];
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
            static const char *const names[] = {"results.csv", "results.json", "combined.csv"};
            path = NULL;
            for (int k = 0; k < 3 && !path; k++) {
                snprintf(file, sizeof file, "%s/%s", paths[i], names[k]);
                if (stat(file, &st) == 0) path = file;
            }
            if (!path) {
                fprintf(log,
                        "collbench report: --baseline %s: a directory without results.csv, "
                        "results.json or combined.csv\n",
                        paths[i]);
                return COLL_EINVAL;
            }
        }
        int rc = read_all(d, &path, 1, log);
        if (rc < 0) return rc;
        rejected |= rc;
    }
    if (d->ncomm == 0) {
        fprintf(log, "collbench report: --baseline: no communication results to compare with\n");
        return COLL_EINVAL;
    }
    return rejected;
}

int report_run(const char *const *files, size_t n, const char *outdir, int force, FILE *log)
{
    report_options o = {files, n, outdir, force, log, NULL, 0, 0, -1, NULL};
    return report_run_opts(&o);
}

int report_run_opts(const report_options *o)
{
    FILE *log = o->log ? o->log : stderr;
    const char *outdir = o->outdir;
    if (!outdir || !*outdir || (o->nfiles > 0 && !o->files) || (o->nbaseline > 0 && !o->baseline)) {
        fprintf(log, "collbench report: no output directory given\n");
        return COLL_EINVAL;
    }
    struct stat st;
    if (stat(outdir, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) {
            fprintf(log, "collbench report: %s exists and is not a directory\n", outdir);
            return COLL_EINVAL;
        }
        if (!o->force) {
            fprintf(log,
                    "collbench report: %s already exists; not overwriting it without --force\n",
                    outdir);
            return COLL_EINVAL;
        }
    }
    report_data d, b;
    report_view v, bv;
    report_baseline cmp;
    memset(&d, 0, sizeof d);
    memset(&b, 0, sizeof b);
    memset(&v, 0, sizeof v);
    memset(&bv, 0, sizeof bv);
    memset(&cmp, 0, sizeof cmp);
    char err[4200];
    int rc = read_all(&d, o->files, o->nfiles, log), rejected = rc > 0;
    if (rc >= 0 && o->nbaseline) {
        rc = read_baseline(&b, o->baseline, o->nbaseline, log);
        rejected |= rc > 0;
    }
    if (rc < 0) goto out;
    size_t dups = report_sort_dedup(&d);
    report_sort_dedup(&b);
    if ((rc = report_view_build(&d, &v)) != 0 || (rc = report_view_build(&b, &bv)) != 0) {
        fprintf(log, "collbench report: out of memory\n");
        goto out;
    }
    /* Refused before anything is written: too much to report, machines that differ. */
    if (too_big(&d, &v, err, sizeof err)) {
        fprintf(log, "collbench report: %s\n", err);
        rc = COLL_EINVAL;
        goto out;
    }
    if (o->nbaseline &&
        (rc = report_baseline_compare(&v, &bv, o->cross_machine, &cmp, err, sizeof err)) != 0) {
        fprintf(log, "collbench report: %s\n", err);
        goto out;
    }
    int created = stat(outdir, &st) != 0;
    rc = coll__dir_make(outdir, err, sizeof err) == 0 ? 0 : COLL_ESYS;
    if (rc == 0)
        rc = write_report(&d, &v, o->nbaseline ? &cmp : NULL, outdir, log, err, sizeof err);
    else created = 0; /* nothing of this run's to take back */
    if (rc != 0) {
        fprintf(log, "collbench report: %s\n", err);
        if (created) remove_report_dir(outdir, log);
        goto out;
    }
    fprintf(log, "collbench report: %zu communication and %zu training rows", d.ncomm, d.ntrain);
    if (d.nreplay) fprintf(log, ", %zu replay rows", d.nreplay);
    fprintf(log, " from %zu file%s", o->nfiles, o->nfiles == 1 ? "" : "s");
    if (dups) fprintf(log, " (%zu duplicate rows merged)", dups);
    fprintf(log, "; report in %s/index.html\n", outdir);
    if (o->nbaseline) {
        sbuf line = {0};
        report_baseline_sentence(&cmp, &line);
        fprintf(log, "collbench report: %s", line.p ? line.p : "\n");
        report_sb_free(&line);
        double worst = report_baseline_worst_pct(&cmp);
        if (o->regressed) *o->regressed = o->fail_pct >= 0 && worst > o->fail_pct;
        if (o->fail_pct >= 0 && worst > o->fail_pct)
            fprintf(
                log,
                "collbench report: a cell slowed by %.0f%%, more than --fail-on-regression %g%%\n",
                worst, o->fail_pct);
    }
    rc = rejected ? REPORT_INPUT_REJECTED : 0;
out:
    report_baseline_free(&cmp);
    report_view_free(&v);
    report_view_free(&bv);
    report_data_free(&d);
    report_data_free(&b);
    return rc;
}
