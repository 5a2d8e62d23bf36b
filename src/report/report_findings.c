/* The findings at the top of the report (report_findings.h). */
#include "report/report_findings.h"

#include "report/report_analysis.h"
#include "report/report_replay.h"
#include "report/report_spread.h"

#include "rows/train_exposed.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TIED_MAX 8

/* One size of one comparison group: the fastest backend, and either the next
 * one (beyond noise of it) or the backends within noise of it and the first
 * one that is not: "shm and auto tie, 4x over tcp" is a finding too. */
typedef struct cell {
    uint64_t bytes;
    const char *first;
    const char *second; /* the runner-up beyond noise of first; NULL: none */
    const char *tied[TIED_MAX];
    size_t ntied;  /* first and the backends within noise of it */
    int noise;     /* ntied > 1: the fastest are within noise (or their spread unknown) */
    double factor; /* second's time over first's */
} cell;

static int same_machine(const report_series *a, const report_series *b)
{
    return !strcmp(a->host, b->host) && !strcmp(a->device, b->device) && a->nnodes == b->nnodes;
}

/* The cells of g's group: every size with two backends or more. */
static size_t group_cells(const report_view *v, const report_series *g, report_ranked *rk,
                          uint64_t *sizes, cell *out)
{
    size_t ns = report_group_sizes(v, g, sizes), n = 0;
    for (size_t i = 0; i < ns; i++) {
        /* only what may be ranked: not a step of its own beside interleaved ones */
        size_t nr = report_rank_interleaved(rk, report_rank_backends(v, g, sizes[i], rk));
        if (nr < 2) continue;
        cell x = {.bytes = sizes[i], .first = rk[0].s->backend, .factor = INFINITY};
        x.tied[x.ntied++] = x.first;
        for (size_t j = 1; j < nr; j++) {
            spread_kind used;
            if (report_rows_differ(rk[0].r, rk[j].r, &used) == DIFFERS) {
                x.second = rk[j].s->backend;
                if (rk[0].us > 0) x.factor = rk[j].us / rk[0].us;
                break;
            }
            if (x.ntied < TIED_MAX) x.tied[x.ntied++] = rk[j].s->backend;
        }
        x.noise = x.ntied > 1;
        out[n++] = x;
    }
    return n;
}

static int same_name(const char *a, const char *b) { return a && b ? !strcmp(a, b) : a == b; }

static int in_tie(const cell *c, const char *backend)
{
    for (size_t i = 0; i < c->ntied; i++)
        if (!strcmp(c->tied[i], backend)) return 1;
    return 0;
}

/* Neighbouring sizes read as one range when the same backend wins them, or
 * the same backends tie (in any order) ahead of the same runner-up. */
static int same_segment(const cell *a, const cell *b)
{
    if (a->noise != b->noise) return 0;
    if (!a->noise) return !strcmp(a->first, b->first);
    if (a->ntied != b->ntied || !same_name(a->second, b->second)) return 0;
    for (size_t i = 0; i < a->ntied; i++)
        if (!in_tie(b, a->tied[i])) return 0;
    return 1;
}

/* "shm, auto and mpi" (and = " and ") or "shm, auto, mpi" (and = ", "). */
static const char *tie_names(const cell *c, const char *and, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < c->ntied && at < len; i++) {
        const char *sep = i == 0 ? "" : i + 1 == c->ntied ? and : ", ";
        int w = snprintf(buf + at, len - at, "%s%s", sep, c->tied[i]);
        if (w < 0) break;
        at += (size_t)w;
    }
    return buf;
}

/* "4 KiB" or "4 KiB to 1 MiB". */
static const char *size_range(const cell *c, size_t from, size_t to, char *buf, size_t len)
{
    char a[32], b[32];
    report_fmt_size(c[from].bytes, a, sizeof a);
    if (from == to) snprintf(buf, len, "%s", a);
    else snprintf(buf, len, "%s to %s", a, report_fmt_size(c[to].bytes, b, sizeof b));
    return buf;
}

/* "1.4x" or "1.2x-2.0x" over the segment's cells. */
static const char *margin(const cell *c, size_t from, size_t to, char *buf, size_t len)
{
    double lo = INFINITY, hi = 0;
    for (size_t k = from; k <= to; k++) {
        if (c[k].factor < lo) lo = c[k].factor;
        if (c[k].factor > hi) hi = c[k].factor;
    }
    char a[16], b[16];
    report_fmt_factor(lo, a, sizeof a);
    report_fmt_factor(hi, b, sizeof b);
    if (!strcmp(a, b)) snprintf(buf, len, "%sx", a);
    else snprintf(buf, len, "%sx-%sx", a, b);
    return buf;
}

/* The runner-up of a segment when it is the same in every cell, else NULL. */
static const char *runner_up(const cell *c, size_t from, size_t to)
{
    for (size_t k = from + 1; k <= to; k++)
        if (!same_name(c[k].second, c[from].second)) return NULL;
    return c[from].second;
}

static const char *procs_word(int p) { return p == 1 ? "process" : "processes"; }

typedef struct work {
    const report_view *v;
    const char *collective;
    report_ranked *rk;
    uint64_t *sizes;
    cell *cells;
    size_t comparisons, in_noise; /* over every group of the collective */
} work;

/* The buffer kind a machine's sentence speaks of: private malloc buffers
 * (what frameworks use), else cuda, else any kind with a comparison. */
static const char *sentence_buffers(work *w, const report_series *m)
{
    static const char *const pref[] = {"malloc", "cuda", NULL};
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < w->v->n; i++) {
            const report_series *s = &w->v->s[i];
            if (strcmp(s->collective, w->collective) || !same_machine(s, m)) continue;
            if (pref[k] && strcmp(s->buffers, pref[k])) continue;
            if (group_cells(w->v, s, w->rk, w->sizes, w->cells) > 0) return s->buffers;
        }
    return NULL;
}

/* Table rows and (for the sentence's buffer kind) the clauses of machine m. */
static void machine_findings(work *w, const report_series *m, int sentence, rtable *t, sbuf *out)
{
    const report_view *v = w->v;
    const char *said = sentence ? sentence_buffers(w, m) : NULL;
    int clauses = 0;
    for (size_t gi = 0; gi < v->n; gi++) {
        const report_series *g = &v->s[gi];
        if (strcmp(g->collective, w->collective) || !same_machine(g, m)) continue;
        int seen = 0;
        for (size_t j = 0; j < gi && !seen; j++) seen = report_series_same_group(&v->s[j], g);
        if (seen) continue;
        size_t n = group_cells(v, g, w->rk, w->sizes, w->cells);
        const cell *c = w->cells;
        int speak = said && !strcmp(g->buffers, said);
        if (n && speak)
            report_sb_printf(out, "%swith %d %s, ", clauses++ ? "; " : "", g->nprocs,
                             procs_word(g->nprocs));
        for (size_t from = 0, k = 0; k < n; k++) {
            w->comparisons++;
            w->in_noise += c[k].noise;
            if (k + 1 < n && same_segment(&c[k + 1], &c[k])) continue;
            char sizes[80], mg[40], machine[96];
            const char *second = runner_up(c, from, k);
            size_range(c, from, k, sizes, sizeof sizes);
            snprintf(machine, sizeof machine, "%.60s (%s)", g->host[0] ? g->host : "?", g->device);
            char tie[160], fastest[176];
            if (c[from].noise) {
                snprintf(fastest, sizeof fastest, "%s (within noise)",
                         tie_names(&c[from], ", ", tie, sizeof tie));
                report_table_row(t, "%s\t%s\t%d\t%s\t%s\t%s\t%s", machine, g->buffers, g->nprocs,
                                 sizes, fastest, second ? second : "-",
                                 second ? margin(c, from, k, mg, sizeof mg) : "within noise");
            } else
                report_table_row(t, "%s\t%s\t%d\t%s\t%s\t%s\t%s", machine, g->buffers, g->nprocs,
                                 sizes, c[from].first, second ? second : "varies",
                                 margin(c, from, k, mg, sizeof mg));
            if (speak) {
                const char *sep = from ? ", " : "";
                if (c[from].noise && !second)
                    report_sb_printf(out, "%sno backend is faster beyond noise %s %s", sep,
                                     from == k ? "at" : "from", sizes);
                else if (c[from].noise)
                    report_sb_printf(
                        out, "%s%s are within noise of each other and fastest %s %s (%s over %s)",
                        sep, tie_names(&c[from], " and ", tie, sizeof tie),
                        from == k ? "at" : "from", sizes, margin(c, from, k, mg, sizeof mg),
                        second);
                else
                    report_sb_printf(out, "%s%s is fastest %s %s (%s over %s)", sep, c[from].first,
                                     from == k ? "at" : "from", sizes,
                                     margin(c, from, k, mg, sizeof mg),
                                     second ? second : "the runner-up");
            }
            from = k + 1;
        }
    }
    if (clauses) report_sb_puts(out, ".");
}

/* coll buffers against malloc buffers of the same backend and setting. */
static void buffers_sentence(work *w, sbuf *out)
{
    const report_view *v = w->v;
    const char *done[16];
    size_t ndone = 0, parts = 0;
    for (size_t i = 0; i < v->n; i++) {
        const report_series *s = &v->s[i];
        if (strcmp(s->collective, w->collective) || strcmp(s->buffers, "coll")) continue;
        size_t k = 0;
        while (k < ndone && strcmp(done[k], s->backend)) k++;
        if (k < ndone || ndone == 16) continue;
        done[ndone++] = s->backend;
        int faster = 0, slower = 0, cells = 0;
        double lo = INFINITY, hi = 0;
        for (size_t j = 0; j < v->n; j++) {
            const report_series *c = &v->s[j], *m = NULL;
            if (strcmp(c->collective, w->collective) || strcmp(c->buffers, "coll") ||
                strcmp(c->backend, s->backend))
                continue;
            for (size_t q = 0; q < v->n && !m; q++)
                if (!strcmp(v->s[q].buffers, "malloc") && !strcmp(v->s[q].backend, c->backend) &&
                    !strcmp(v->s[q].collective, c->collective) && same_machine(&v->s[q], c) &&
                    v->s[q].nprocs == c->nprocs)
                    m = &v->s[q];
            for (size_t p = 0; m && p < c->n; p++) {
                const bench_row *a = c->pts[p], *b = report_series_at(m, a->bytes);
                if (!b) continue;
                spread_kind used;
                cells++;
                if (report_rows_differ(a, b, &used) != DIFFERS) continue;
                double f = report_row_time(b) / report_row_time(a);
                if (f >= 1) {
                    faster++;
                    if (f < lo) lo = f;
                    if (f > hi) hi = f;
                } else {
                    slower++;
                }
            }
        }
        if (!cells) continue;
        report_sb_puts(out, parts++
                                ? "; "
                                : "The backends' own (coll) buffers against private malloc ones: ");
        char a[16], b[16];
        if (faster)
            report_sb_printf(out, "%s %sx%s%s%s faster in %d of %d cells", s->backend,
                             report_fmt_factor(lo, a, sizeof a), hi > lo * 1.05 ? "-" : "",
                             hi > lo * 1.05 ? report_fmt_factor(hi, b, sizeof b) : "",
                             hi > lo * 1.05 ? "x" : "", faster, cells);
        else report_sb_printf(out, "%s faster in none of %d cells", s->backend, cells);
        if (slower) report_sb_printf(out, ", slower in %d", slower);
        if (faster + slower < cells)
            report_sb_printf(out, ", within noise in %d", cells - faster - slower);
    }
    if (parts) report_sb_puts(out, ".\n");
}

/* Per machine with a recorded memory-copy rate: each backend's best bus
 * bandwidth (host buffers only, correct rows) against that rate. */
static void copy_rate_sentences(const report_data *d, const char *collective, sbuf *out)
{
    for (size_t m = 0; collective && m < d->nmachines && m < REPORT_FINDINGS_MACHINES; m++) {
        const report_machine *mc = &d->machines[m];
        if (!(mc->memcpy_GBps > 0)) continue;
        const bench_row *best[8];
        size_t nb = 0;
        for (size_t i = 0; i < d->ncomm; i++) {
            const bench_row *r = &d->comm[i];
            if (strcmp(r->host, mc->host) || strcmp(r->collective, collective) ||
                strcmp(r->device, "cpu") || r->wrong > 0 || !(r->busbw_GBps > 0) ||
                !isfinite(r->busbw_GBps))
                continue;
            size_t k = 0;
            while (k < nb && strcmp(best[k]->backend, r->backend)) k++;
            if (k == nb && nb == 8) continue;
            if (k == nb) best[nb++] = r;
            else if (r->busbw_GBps > best[k]->busbw_GBps) best[k] = r;
        }
        for (size_t k = 0; k < nb; k++) {
            const bench_row *r = best[k];
            char sz[32];
            if (k == 0) report_sb_printf(out, "On %s, %s: ", mc->host, collective);
            report_sb_printf(
                out, "%s%s reaches %.3g GB/s bus bandwidth at %s (%s buffers, %d %s), %.2fx",
                k ? "; " : "", r->backend, r->busbw_GBps, report_fmt_size(r->bytes, sz, sizeof sz),
                r->buffers, r->nprocs, procs_word(r->nprocs), r->busbw_GBps / mc->memcpy_GBps);
            if (k == 0)
                report_sb_printf(out, " this machine's single-thread memory-copy rate (%.3g GB/s)",
                                 mc->memcpy_GBps);
            if (k + 1 == nb) report_sb_puts(out, ".\n");
        }
    }
}

static const report_train_row *train_find(const report_data *d, const report_train_row *like,
                                          const char *mode)
{
    for (size_t i = 0; i < d->ntrain; i++) {
        const report_train_row *r = &d->train[i];
        if (!strcmp(r->mode, mode) && !strcmp(r->model, like->model) &&
            !strcmp(r->host, like->host) && !strcmp(r->backend, like->backend) &&
            r->nprocs == like->nprocs && r->batch == like->batch &&
            !strcmp(r->compress, like->compress))
            return r; /* sorted newest first within a configuration */
    }
    return NULL;
}

/* What communication costs a step without overlap, and what ddp's overlap saves. */
static void training_sentence(const report_data *d, sbuf *out)
{
    const report_train_row *sync = NULL;
    for (size_t i = 0; i < d->ntrain && !sync; i++)
        if (d->train[i].nprocs > 1 && !strcmp(d->train[i].mode, "allreduce-sync"))
            sync = &d->train[i];
    if (!sync) return;
    train_exposed es, eo;
    char a[48], b[48];
    train_exposed_of(sync, &es);
    report_sb_printf(
        out,
        "Training %s with %d processes (%s): communication adds %s ms to a %.2f ms step "
        "without overlap (allreduce-sync, %.0f%%)",
        sync->model, sync->nprocs, sync->backend, train_exposed_text(&es, a, sizeof a),
        sync->step_ms_avg, es.share);
    const report_train_row *ddp = train_find(d, sync, "ddp");
    if (ddp) {
        train_exposed_of(ddp, &eo);
        double saved = sync->step_ms_avg - ddp->step_ms_avg,
               noise = es.noise_ms > eo.noise_ms ? es.noise_ms : eo.noise_ms;
        report_sb_printf(out, "; ddp overlaps it with backward and leaves %s ms exposed",
                         train_exposed_text(&eo, b, sizeof b));
        if (fabs(saved) > noise)
            report_sb_printf(out, ", the step %.2f ms %s", fabs(saved),
                             saved > 0 ? "shorter" : "longer");
        else report_sb_printf(out, ", a step no shorter beyond the noise (%.2f ms)", noise);
    }
    report_sb_puts(out, ".\n");
}

/* Series that lose more than half their bus bandwidth from one process count
 * to the next at their largest common size: more than the algorithm explains. */
static size_t scaling_drops(const report_view *v, const char *collective)
{
    size_t n = 0;
    for (size_t i = 0; i < v->n; i++) {
        const report_series *s = &v->s[i], *next = NULL;
        if (strcmp(s->collective, collective)) continue;
        for (size_t j = 0; j < v->n; j++) {
            const report_series *t = &v->s[j];
            if (t->nprocs > s->nprocs && report_series_same_setting(t, s) &&
                !strcmp(t->backend, s->backend) && (!next || t->nprocs < next->nprocs))
                next = t;
        }
        for (size_t k = s->n; next && k-- > 0;) {
            const bench_row *b = report_series_at(next, s->pts[k]->bytes);
            if (!b) continue;
            n += b->busbw_GBps > 0 && b->busbw_GBps < 0.5 * s->pts[k]->busbw_GBps;
            break;
        }
    }
    return n;
}

static void anomalies_sentence(const report_data *d, const report_view *v, const work *w, sbuf *out)
{
    size_t wrong = 0, noisy = 0, drops = w->collective ? scaling_drops(v, w->collective) : 0;
    for (size_t i = 0; i < d->ncomm; i++) {
        wrong += d->comm[i].wrong > 0;
        noisy += d->comm[i].time_us_p50 > 0 &&
                 d->comm[i].time_us_p99 >= REPORT_NOISY_RATIO * d->comm[i].time_us_p50;
    }
    if (d->ncomm == 0) return;
    report_sb_printf(out, "Anomalies: %zu wrong %s; %zu noisy %s (p99 >= %.0fx p50)", wrong,
                     wrong == 1 ? "result" : "results", noisy, noisy == 1 ? "row" : "rows",
                     REPORT_NOISY_RATIO);
    if (w->comparisons)
        report_sb_printf(out, "; %zu of %zu comparisons within noise", w->in_noise, w->comparisons);
    if (drops)
        report_sb_printf(out,
                         "; %zu %s lose more than half the bus bandwidth at the next process count",
                         drops, drops == 1 ? "series" : "series");
    report_sb_puts(out, " (every case is listed below).\n");
}

void report_findings(const report_data *d, const report_view *v, const char *lead, sbuf *out,
                     rtable *t)
{
    static const char *const head[] = {"machine", "buffers",   "procs", "sizes",
                                       "fastest", "runner-up", "margin"};
    report_table_init(t, "Fastest backend by size range", head, sizeof head / sizeof head[0],
                      "llrllll");
    work w = {v, v->ncollectives ? v->collectives[0] : NULL, NULL, NULL, NULL, 0, 0};
    size_t maxpts = 1;
    for (size_t i = 0; i < v->n; i++) maxpts += v->s[i].n;
    w.rk = calloc(v->n + 1, sizeof *w.rk);
    w.sizes = calloc(maxpts, sizeof *w.sizes);
    w.cells = calloc(maxpts, sizeof *w.cells);
    if (!w.rk || !w.sizes || !w.cells) {
        out->oom = 1;
        goto done;
    }
    report_sb_puts(out, "Findings\n");
    if (lead) report_sb_puts(out, lead);
    size_t machines = 0, said = 0;
    for (size_t i = 0; w.collective && i < v->n; i++) {
        const report_series *m = &v->s[i];
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = same_machine(&v->s[j], m) && !strcmp(v->s[j].collective, w.collective);
        if (seen || strcmp(m->collective, w.collective)) continue;
        machines++;
        int speak = said < REPORT_FINDINGS_MACHINES;
        sbuf clause = {0};
        machine_findings(&w, m, speak, t, &clause);
        if (clause.len) {
            const char *b = sentence_buffers(&w, m);
            report_sb_printf(out, "On %s (%s, %s buffers), %s: %s\n",
                             m->host[0] ? m->host : "(unknown host)", m->device, b ? b : "?",
                             w.collective, clause.p);
            said++;
        }
        report_sb_free(&clause);
    }
    if (machines > said && said > 0)
        report_sb_printf(out, "%zu more %s in the table below.\n", machines - said,
                         machines - said == 1 ? "machine" : "machines");
    if (w.comparisons == 0 && w.collective)
        report_sb_printf(
            out,
            "One backend per machine, buffer kind and process count: no backend comparison "
            "for %s.\n",
            w.collective);
    if (w.collective) buffers_sentence(&w, out);
    copy_rate_sentences(d, w.collective, out);
    training_sentence(d, out);
    report_replay_findings(d, out);
    anomalies_sentence(d, v, &w, out);
done:
    free(w.rk);
    free(w.sizes);
    free(w.cells);
}
