/* Sentences computed from the data: fastest backend per size and by what
 * factor (within one machine, device and buffer kind, and only beyond the
 * measured spread), what coll buffers gain, machines side by side (saying
 * so), where bus bandwidth saturates, the latency/bandwidth crossover, how
 * time grows with the process count, anomalies, and the training breakdown. */
#include "report/report_analysis.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/report_spread.h"

#include "rows/train_exposed.h"

static const char *procs_word(int p) { return p == 1 ? "process" : "processes"; }

/* Whether an earlier series is in the same comparison group as v->s[i]. */
static int group_seen(const report_view *v, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (report_series_same_group(&v->s[j], &v->s[i])) return 1;
    return 0;
}

/* "; spread unknown" where the rows carry no spread: the claim is unchecked. */
static const char *unchecked(spread_verdict d)
{
    return d == SPREAD_UNKNOWN_VERDICT ? "; spread unknown" : "";
}

/* " over 2 passes" where both backends were measured in several passes (their
 * spreads then cover every pass: report_passes.h); "" otherwise. */
static const char *over_passes(const report_ranked *a, const report_ranked *b, char *buf,
                               size_t len)
{
    int p = a->s->passes < b->s->passes ? a->s->passes : b->s->passes;
    if (p < 2) return "";
    snprintf(buf, len, " over %d passes", p);
    return buf;
}

/* What a claimed difference rests on: "; apart in every pass" where both
 * sides were measured in several passes (report_rank_interleaved ranks no
 * other against them), "" where neither was. */
static const char *pass_basis(const report_ranked *a, const report_ranked *b)
{
    return a->s->passes >= 2 && b->s->passes >= 2 ? "; apart in every pass" : "";
}

static const char NO_CLEAR_WINNER[] = "no clear winner (within noise)";

/* "; mpi (1.20 ms) is not ranked: ..." for rk[m..n): results measured in a
 * step of their own, beside the m >= 2 measured in interleaved passes. */
static void not_ranked(const report_ranked *rk, size_t m, size_t n, sbuf *out)
{
    char t[32];
    for (size_t k = m; k < n; k++)
        report_sb_printf(
            out,
            "; %s (%s) is not ranked against them: measured in a step of its own, in one "
            "pass, where the others were interleaved (a rerun of the steps can reverse "
            "the order)",
            rk[k].s->backend, report_fmt_time_us(rk[k].us, t, sizeof t));
}

/* "; shm is 2.0x faster than tcp (1.00 ms)" for the third and later of the m
 * backends ranked, then the n - m not ranked. */
static void others(const report_ranked *rk, size_t m, size_t n, sbuf *out)
{
    char t[32], f[16];
    spread_kind used;
    for (size_t k = 2; k < m; k++) {
        spread_verdict d = report_rows_differ(rk[0].r, rk[k].r, &used);
        if (d == WITHIN_NOISE)
            report_sb_printf(out, "; %s is within noise of %s (%s)", rk[0].s->backend,
                             rk[k].s->backend, report_fmt_time_us(rk[k].us, t, sizeof t));
        else
            report_sb_printf(out, "; %s is %sx faster than %s (%s%s%s)", rk[0].s->backend,
                             report_fmt_factor(rk[0].us > 0 ? rk[k].us / rk[0].us : INFINITY, f,
                                               sizeof f),
                             rk[k].s->backend, report_fmt_time_us(rk[k].us, t, sizeof t),
                             unchecked(d), pass_basis(&rk[0], &rk[k]));
    }
    not_ranked(rk, m, n, out);
    report_sb_puts(out, ".\n");
}

/* One sentence for one size of one group, ranking the first m of n results
 * (report_rank_interleaved, m >= 2); returns the winner's name or
 * NO_CLEAR_WINNER when the fastest two are within noise. */
static const char *compare_at(const report_ranked *rk, size_t m, size_t n, const char *coll,
                              uint64_t bytes, const char *where, sbuf *out)
{
    char sz[32], t0[32], t1[32], f[16], ps[48];
    int p = rk[0].s->nprocs;
    report_fmt_size(bytes, sz, sizeof sz);
    spread_kind used;
    spread_verdict d = report_rows_differ(rk[0].r, rk[1].r, &used);
    double factor = rk[0].us > 0 ? rk[1].us / rk[0].us : INFINITY;
    if (d == WITHIN_NOISE) {
        report_sb_printf(out,
                         "%s: %s and %s are within noise at %s with %d %s%s (%s vs %s; their %s "
                         "ranges%s overlap)",
                         coll, rk[0].s->backend, rk[1].s->backend, sz, p, procs_word(p), where,
                         report_fmt_time_us(rk[0].us, t0, sizeof t0),
                         report_fmt_time_us(rk[1].us, t1, sizeof t1), report_spread_name(used),
                         over_passes(&rk[0], &rk[1], ps, sizeof ps));
        others(rk, m, n, out);
        return NO_CLEAR_WINNER;
    }
    if (factor < 1.05) {
        report_sb_printf(
            out, "%s: %s and %s are within 5%% of each other at %s with %d %s%s (%s vs %s%s)", coll,
            rk[0].s->backend, rk[1].s->backend, sz, p, procs_word(p), where,
            report_fmt_time_us(rk[0].us, t0, sizeof t0),
            report_fmt_time_us(rk[1].us, t1, sizeof t1), unchecked(d));
        others(rk, m, n, out);
        return rk[0].s->backend;
    }
    report_sb_printf(out, "%s: %s is %sx faster than %s at %s with %d %s%s (%s vs %s%s%s)", coll,
                     rk[0].s->backend, report_fmt_factor(factor, f, sizeof f), rk[1].s->backend, sz,
                     p, procs_word(p), where, report_fmt_time_us(rk[0].us, t0, sizeof t0),
                     report_fmt_time_us(rk[1].us, t1, sizeof t1), unchecked(d),
                     pass_basis(&rk[0], &rk[1]));
    others(rk, m, n, out);
    return rk[0].s->backend;
}

/* Backends are compared within one comparison group only: the same machine,
 * device, buffer kind, node and process count. */
static void fastest_section(const report_view *v, sbuf *out)
{
    int any = 0;
    report_ranked *rk = calloc(v->n + 1, sizeof *rk);
    size_t maxpts = 1;
    for (size_t i = 0; i < v->n; i++) maxpts += v->s[i].n;
    uint64_t *sizes = calloc(maxpts, sizeof *sizes);
    const char **winner = calloc(maxpts, sizeof *winner);
    if (!rk || !sizes || !winner) goto done;
    report_sb_puts(out, "Fastest backend by size (medians; a difference is claimed only where the "
                        "spreads do not overlap)\n");
    for (size_t gi = 0; gi < v->n; gi++) {
        const report_series *g = &v->s[gi];
        if (group_seen(v, gi)) continue;
        char where[160];
        report_series_where(v, g, where, sizeof where);
        const char *coll = g->collective;
        int p = g->nprocs;
        size_t ns = report_group_sizes(v, g, sizes), nw = 0;
        for (size_t si = 0; si < ns; si++) {
            size_t n = report_rank_backends(v, g, sizes[si], rk);
            size_t m = report_rank_interleaved(rk, n);
            if (m < 2) continue; /* nothing ranked: the tables still list them */
            winner[nw] = compare_at(rk, m, n, coll, sizes[si], where, out);
            sizes[nw++] = sizes[si]; /* compacted: only sizes with a comparison */
            any = 1;
        }
        if (nw == 0) continue;
        /* Where the winner changes: the crossover between backends. */
        char a[32], b[32];
        size_t segs = 1;
        for (size_t k = 1; k < nw; k++) segs += strcmp(winner[k], winner[k - 1]) != 0;
        if (segs == 1 && winner[0] == NO_CLEAR_WINNER) {
            report_sb_printf(
                out,
                "%s with %d %s%s: no backend is the clear fastest at any size compared "
                "(%s to %s): the fastest is within noise of the next.\n",
                coll, p, procs_word(p), where, report_fmt_size(sizes[0], a, sizeof a),
                report_fmt_size(sizes[nw - 1], b, sizeof b));
            continue;
        }
        if (segs == 1) {
            report_sb_printf(
                out,
                "%s with %d %s%s: %s is the fastest backend at every size compared (%s to %s).\n",
                coll, p, procs_word(p), where, winner[0], report_fmt_size(sizes[0], a, sizeof a),
                report_fmt_size(sizes[nw - 1], b, sizeof b));
            continue;
        }
        report_sb_printf(out, "%s with %d %s%s: the fastest backend changes with size:", coll, p,
                         procs_word(p), where);
        for (size_t k = 0, start = 0; k < nw; k++) {
            if (k + 1 < nw && strcmp(winner[k + 1], winner[k]) == 0) continue;
            if (start == k)
                report_sb_printf(out, "%s %s at %s", start ? "," : "", winner[k],
                                 report_fmt_size(sizes[k], a, sizeof a));
            else
                report_sb_printf(out, "%s %s from %s to %s", start ? "," : "", winner[k],
                                 report_fmt_size(sizes[start], a, sizeof a),
                                 report_fmt_size(sizes[k], b, sizeof b));
            start = k + 1;
        }
        report_sb_puts(out, ".\n");
    }
    if (!any)
        report_sb_puts(out,
                       "Only one backend was measured per machine, device, buffer kind and process "
                       "count: nothing to compare.\n");
    report_sb_puts(out, "\n");
done:
    free(rk);
    free(sizes);
    free(winner);
}

/* The same setting and backend but malloc buffers: what coll buffers gain. */
static const report_series *malloc_twin(const report_view *v, const report_series *s)
{
    for (size_t i = 0; i < v->n; i++) {
        const report_series *m = &v->s[i];
        if (strcmp(m->buffers, "malloc") == 0 && strcmp(m->collective, s->collective) == 0 &&
            strcmp(m->host, s->host) == 0 && strcmp(m->device, s->device) == 0 &&
            strcmp(m->backend, s->backend) == 0 && m->nprocs == s->nprocs && m->nnodes == s->nnodes)
            return m;
    }
    return NULL;
}

/* coll_alloc buffers (zero-copy on shm) against private ones, the same
 * backend otherwise: reported as its own finding, never as a backend's win. */
static void buffers_section(const report_view *v, sbuf *out)
{
    int any = 0;
    for (size_t i = 0; i < v->n; i++) {
        const report_series *s = &v->s[i], *m;
        if (strcmp(s->buffers, "coll") != 0 || !(m = malloc_twin(v, s))) continue;
        /* The smallest and the largest size both measured. */
        const bench_row *lo[2] = {NULL, NULL}, *hi[2] = {NULL, NULL};
        for (size_t k = 0; k < s->n; k++) {
            const bench_row *r = report_series_at(m, s->pts[k]->bytes);
            if (!r) continue;
            if (!lo[0]) lo[0] = s->pts[k], lo[1] = r;
            hi[0] = s->pts[k], hi[1] = r;
        }
        if (!lo[0]) continue;
        if (!any)
            report_sb_puts(
                out, "Buffer kinds (the same backend with coll_alloc buffers and with private "
                     "malloc buffers)\n");
        any = 1;
        char host[96] = "";
        if (v->many_hosts) snprintf(host, sizeof host, " on %s", s->host);
        for (int e = 0; e < 2; e++) {
            const bench_row *c = e ? hi[0] : lo[0], *p = e ? hi[1] : lo[1];
            if (e && c == lo[0]) break;
            char sz[32], t0[32], t1[32], f[16];
            double tc = report_row_time(c), tp = report_row_time(p);
            spread_kind used;
            spread_verdict d = report_rows_differ(c, p, &used);
            report_sb_printf(out, "coll buffers vs malloc buffers on %s: ", s->backend);
            if (d == WITHIN_NOISE) report_sb_printf(out, "within noise");
            else
                report_sb_printf(out, "%sx %s",
                                 report_fmt_factor(tc <= tp ? tp / tc : tc / tp, f, sizeof f),
                                 tc <= tp ? "faster" : "slower");
            report_sb_printf(out, " (%s at %s with %d %s%s: %s vs %s%s).\n", s->collective,
                             report_fmt_size(c->bytes, sz, sizeof sz), s->nprocs,
                             procs_word(s->nprocs), host, report_fmt_time_us(tc, t0, sizeof t0),
                             report_fmt_time_us(tp, t1, sizeof t1),
                             d == WITHIN_NOISE ? "; the spreads overlap" : unchecked(d));
        }
    }
    if (any) report_sb_puts(out, "\n");
}

/* Same collective, process and node count: what a cross-machine finding
 * joins. Not coll buffers: an opt-in zero-copy mode, reported against malloc
 * buffers only (buffers_section), not a machine's typical speed. */
static int same_task(const report_series *a, const report_series *b)
{
    return !strcmp(a->collective, b->collective) && a->nprocs == b->nprocs &&
           a->nnodes == b->nnodes && strcmp(a->buffers, "coll") != 0 &&
           strcmp(b->buffers, "coll") != 0;
}

/* The fastest series of host among those like t at bytes, or NULL. */
static const bench_row *best_on_host(const report_view *v, const report_series *t, const char *host,
                                     uint64_t bytes, const report_series **of)
{
    const bench_row *best = NULL;
    for (size_t i = 0; i < v->n; i++) {
        const report_series *s = &v->s[i];
        const bench_row *r;
        if (!same_task(s, t) || strcmp(s->host, host) || !(r = report_series_at(s, bytes)))
            continue;
        if (!best || report_row_time(r) < report_row_time(best)) best = r, *of = s;
    }
    return best;
}

/* Machines differ in more than the backend: compared only in this section,
 * which says so, at the largest size two machines measured. */
static void machines_section(const report_view *v, sbuf *out)
{
    if (!v->many_hosts) return;
    int any = 0;
    for (size_t i = 0; i < v->n; i++) {
        const report_series *t = &v->s[i];
        if (!strcmp(t->buffers, "coll")) continue;
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++) seen = same_task(&v->s[j], t);
        if (seen) continue;
        /* The largest size measured on two machines or more. */
        uint64_t at = 0;
        int found = 0;
        for (size_t a = 0; a < v->n; a++)
            for (size_t b = 0; b < v->n; b++) {
                const report_series *x = &v->s[a], *y = &v->s[b];
                if (!same_task(x, t) || !same_task(y, t) || !strcmp(x->host, y->host)) continue;
                for (size_t k = 0; k < x->n; k++)
                    if ((!found || x->pts[k]->bytes > at) && report_series_at(y, x->pts[k]->bytes))
                        at = x->pts[k]->bytes, found = 1;
            }
        if (!found) continue;
        /* The fastest machine (its best series) against every other one. */
        const report_series *fs = NULL;
        const bench_row *fr = NULL;
        for (size_t a = 0; a < v->n; a++) {
            const report_series *of = NULL;
            const bench_row *r;
            if (!same_task(&v->s[a], t) || !(r = best_on_host(v, t, v->s[a].host, at, &of)))
                continue;
            if (!fr || report_row_time(r) < report_row_time(fr)) fr = r, fs = of;
        }
        if (!any)
            report_sb_puts(
                out, "Across machines (different hardware, not a like-for-like comparison: each "
                     "machine's fastest backend at the largest size both measured)\n");
        any = 1;
        for (size_t a = 0; a < v->n; a++) {
            const report_series *os = &v->s[a], *of = NULL;
            int first = 1;
            for (size_t j = 0; j < a && first; j++)
                first = !(same_task(&v->s[j], t) && !strcmp(v->s[j].host, os->host));
            if (!first || !same_task(os, t) || !strcmp(os->host, fs->host)) continue;
            const bench_row *r = best_on_host(v, t, os->host, at, &of);
            if (!r) continue;
            char sz[32], t0[32], t1[32], f[16];
            spread_kind used;
            spread_verdict d = report_rows_differ(fr, r, &used);
            double a0 = report_row_time(fr), a1 = report_row_time(r);
            report_sb_printf(
                out,
                "%s at %s with %d %s: %s on %s (%s, %s buffers) vs %s on %s (%s, %s buffers): ",
                t->collective, report_fmt_size(at, sz, sizeof sz), t->nprocs, procs_word(t->nprocs),
                fs->backend, fs->host, fs->device, fs->buffers, of->backend, of->host, of->device,
                of->buffers);
            if (d == WITHIN_NOISE) report_sb_puts(out, "within noise");
            else
                report_sb_printf(out, "%sx faster",
                                 report_fmt_factor(a0 > 0 ? a1 / a0 : INFINITY, f, sizeof f));
            report_sb_printf(out, " (%s vs %s%s).\n", report_fmt_time_us(a0, t0, sizeof t0),
                             report_fmt_time_us(a1, t1, sizeof t1), unchecked(d));
        }
    }
    if (any) report_sb_puts(out, "\n");
}

static void series_name(const report_view *v, const report_series *s, char *buf, size_t len)
{
    char where[160];
    snprintf(buf, len, "%s %s%s, %d %s", s->collective, s->backend,
             report_series_where(v, s, where, sizeof where), s->nprocs, procs_word(s->nprocs));
}

static void saturation_section(const report_view *v, sbuf *out)
{
    report_sb_puts(out, "Bus bandwidth saturation\n");
    int any = 0;
    for (size_t i = 0; i < v->n; i++) {
        const report_series *s = &v->s[i];
        if (s->n < 3) continue;
        size_t kp = 0;
        for (size_t k = 1; k < s->n; k++)
            if (s->pts[k]->busbw_GBps > s->pts[kp]->busbw_GBps) kp = k;
        double peak = s->pts[kp]->busbw_GBps;
        if (!(peak > 0)) continue;
        size_t k90 = 0;
        while (s->pts[k90]->busbw_GBps < 0.9 * peak) k90++;
        char name[256], a[32], b[32];
        series_name(v, s, name, sizeof name);
        any = 1;
        if (k90 == s->n - 1) {
            report_sb_printf(
                out,
                "%s: bus bandwidth is still rising at the largest size (%.3g GB/s at %s): "
                "it does not saturate in the measured range.\n",
                name, peak, report_fmt_size(s->pts[kp]->bytes, a, sizeof a));
            continue;
        }
        report_sb_printf(
            out, "%s: bus bandwidth saturates at about %.3g GB/s from %s on (peak %.3g GB/s at %s)",
            name, s->pts[k90]->busbw_GBps, report_fmt_size(s->pts[k90]->bytes, a, sizeof a), peak,
            report_fmt_size(s->pts[kp]->bytes, b, sizeof b));
        const bench_row *last = s->pts[s->n - 1];
        if (kp != s->n - 1 && last->busbw_GBps < 0.8 * peak)
            report_sb_printf(out, " and falls to %.3g GB/s at %s", last->busbw_GBps,
                             report_fmt_size(last->bytes, a, sizeof a));
        report_sb_puts(out, ".\n");
    }
    if (!any) report_sb_puts(out, "Too few sizes per configuration (3 or more needed) to tell.\n");
    report_sb_puts(out, "\n");
}

/* Hockney's model t(n) = latency + n / bandwidth: the two terms are equal at
 * n* = latency x bandwidth, the size where time stops being flat. Only a time
 * at a small size is a latency. */
static void crossover_section(const report_view *v, sbuf *out)
{
    report_sb_puts(out, "Latency/bandwidth crossover\n");
    int any = 0;
    for (size_t i = 0; i < v->n; i++) {
        const report_series *s = &v->s[i];
        if (s->n < 2 || s->pts[0]->bytes == 0) continue;
        double bw = 0;
        for (size_t k = 0; k < s->n; k++)
            if (s->pts[k]->algbw_GBps > bw) bw = s->pts[k]->algbw_GBps;
        double lat = report_row_time(s->pts[0]);
        if (!(bw > 0) || !(lat > 0)) continue;
        char name[256], a[32], b[32], t[32];
        series_name(v, s, name, sizeof name);
        any = 1;
        if (s->nprocs == 1 && s->pts[0]->in_place) { /* nothing to send, nothing to copy */
            report_sb_printf(
                out,
                "%s: one process in place moves no data: %s at %s is the call's own cost, "
                "not a latency, and no bandwidth is measured.\n",
                name, report_fmt_time_us(lat, t, sizeof t),
                report_fmt_size(s->pts[0]->bytes, a, sizeof a));
            continue;
        }
        if (s->pts[0]->bytes > REPORT_LATENCY_MAX_BYTES) {
            report_sb_printf(
                out,
                "%s: time at the smallest size measured (%s) is %s; no size of %s or less "
                "was measured, so the latency and the crossover are not known.\n",
                name, report_fmt_size(s->pts[0]->bytes, a, sizeof a),
                report_fmt_time_us(lat, t, sizeof t),
                report_fmt_size(REPORT_LATENCY_MAX_BYTES, b, sizeof b));
            continue;
        }
        double nstar = lat * 1e-6 * bw * 1e9;
        report_sb_printf(
            out,
            "%s: latency %s at the smallest size (%s); with a peak algorithm bandwidth of "
            "%.3g GB/s the latency/bandwidth crossover is near %s",
            name, report_fmt_time_us(lat, t, sizeof t),
            report_fmt_size(s->pts[0]->bytes, a, sizeof a), bw,
            report_fmt_size((uint64_t)llround(nstar), b, sizeof b));
        if (nstar < (double)s->pts[0]->bytes)
            report_sb_puts(out,
                           ", below the smallest size measured: every size is bandwidth-bound.\n");
        else if (nstar > (double)s->pts[s->n - 1]->bytes)
            report_sb_puts(out,
                           ", above the largest size measured: every size is latency-bound.\n");
        else
            report_sb_puts(out,
                           ": smaller messages are latency-bound, larger ones bandwidth-bound.\n");
    }
    if (!any) report_sb_puts(out, "Too few sizes per configuration (2 or more needed) to tell.\n");
    report_sb_puts(out, "\n");
}

/* Time at one size for every process count of series s's setting and backend. */
static void scaling_line(const report_view *v, const report_series *s, const int *procs, size_t np,
                         uint64_t bytes, sbuf *out)
{
    char sz[32], t[32], where[160];
    const bench_row *r[64];
    report_sb_printf(out, "%s %s%s at %s: ", s->collective, s->backend,
                     report_series_where(v, s, where, sizeof where),
                     report_fmt_size(bytes, sz, sizeof sz));
    for (size_t k = 0; k < np; k++)
        report_sb_printf(out, "%s%d", k ? (k + 1 < np ? ", " : " and ") : "", procs[k]);
    report_sb_puts(out, " processes take ");
    for (size_t k = 0; k < np; k++) {
        r[k] = report_series_at(report_view_find_procs(v, s, procs[k]), bytes);
        report_sb_printf(out, "%s%s", k ? (k + 1 < np ? ", " : " and ") : "",
                         report_fmt_time_us(report_row_time(r[k]), t, sizeof t));
    }
    char f1[16], f2[16];
    double t0 = report_row_time(r[0]), t1 = report_row_time(r[np - 1]);
    report_sb_printf(out, " (%sx the time for %sx the processes; bus bandwidth",
                     report_fmt_factor(t0 > 0 ? t1 / t0 : 0, f1, sizeof f1),
                     report_fmt_factor((double)procs[np - 1] / procs[0], f2, sizeof f2));
    for (size_t k = 0; k < np; k++)
        report_sb_printf(out, "%s%.3g", k ? " -> " : " ", r[k]->busbw_GBps);
    report_sb_puts(out, " GB/s).\n");
}

static int same_line(const report_series *a, const report_series *b)
{
    return report_series_same_setting(a, b) && strcmp(a->backend, b->backend) == 0;
}

static void scaling_section(const report_view *v, sbuf *out)
{
    report_sb_puts(out, "Scaling with the process count\n");
    int any = 0;
    int procs[64];
    for (size_t i = 0; i < v->n; i++) {
        const report_series *s = &v->s[i];
        /* One line per setting x backend, from its first series (the sort
         * keeps their process counts together, ascending). */
        if (i > 0 && same_line(&v->s[i - 1], s)) continue;
        size_t np = 0;
        for (size_t j = i; j < v->n && np < 64 && same_line(&v->s[j], s); j++)
            procs[np++] = v->s[j].nprocs;
        if (np < 2) continue;
        /* Sizes measured at every process count: the smallest and the largest. */
        uint64_t lo = 0, hi = 0;
        int have = 0;
        for (size_t k = 0; k < s->n; k++) {
            uint64_t b = s->pts[k]->bytes;
            size_t j = 1;
            while (j < np && report_series_at(&v->s[i + j], b)) j++;
            if (j < np) continue;
            if (!have) lo = b;
            hi = b;
            have = 1;
        }
        if (!have) continue;
        any = 1;
        if (lo != hi) scaling_line(v, s, procs, np, lo, out);
        scaling_line(v, s, procs, np, hi, out);
    }
    if (!any)
        report_sb_puts(out, "Each configuration ran with one process count: nothing to compare.\n");
    report_sb_puts(out, "\n");
}

typedef struct noisy {
    const bench_row *r;
    double ratio;
} noisy;

static int cmp_noisy(const void *a, const void *b)
{
    const noisy *x = a, *y = b;
    if (x->ratio != y->ratio) return x->ratio > y->ratio ? -1 : 1;
    return x->r < y->r ? -1 : x->r > y->r;
}

static void row_name(const bench_row *r, char *buf, size_t len)
{
    char sz[32];
    snprintf(buf, len, "%s %s, %d %s, %s (%s %s%s, %s buffers, host %s)", r->collective, r->backend,
             r->nprocs, procs_word(r->nprocs), report_fmt_size(r->bytes, sz, sizeof sz), r->dtype,
             r->op, r->in_place ? ", in place" : "", r->buffers, r->host);
}

static void anomalies_section(const report_data *d, sbuf *out)
{
    report_sb_puts(out, "Anomalies\n");
    size_t nwrong = 0, nn = 0;
    noisy *ns = calloc(d->ncomm + 1, sizeof *ns);
    if (!ns) return;
    for (size_t i = 0; i < d->ncomm; i++) {
        const bench_row *r = &d->comm[i];
        char name[200];
        if (r->wrong > 0) { /* -1: nothing checked */
            row_name(r, name, sizeof name);
            report_sb_printf(out, "WRONG RESULTS: %s: %" PRId64 " wrong elements.\n", name,
                             r->wrong);
            nwrong++;
        }
        if (r->time_us_p50 > 0 && r->time_us_p99 >= REPORT_NOISY_RATIO * r->time_us_p50)
            ns[nn++] = (noisy){r, r->time_us_p99 / r->time_us_p50};
    }
    qsort(ns, nn, sizeof *ns, cmp_noisy);
    const size_t shown = 10;
    for (size_t i = 0; i < nn && i < shown; i++) {
        char name[200], a[32], b[32], f[16];
        row_name(ns[i].r, name, sizeof name);
        report_sb_printf(out, "noisy: %s: p99 %s is %sx the p50 %s.\n", name,
                         report_fmt_time_us(ns[i].r->time_us_p99, a, sizeof a),
                         report_fmt_factor(ns[i].ratio, f, sizeof f),
                         report_fmt_time_us(ns[i].r->time_us_p50, b, sizeof b));
    }
    if (nn > shown)
        report_sb_printf(out, "... and %zu more noisy rows (p99 >= %.0fx p50).\n", nn - shown,
                         REPORT_NOISY_RATIO);
    if (nwrong == 0 && nn == 0)
        report_sb_printf(
            out, "No anomalies: no wrong results, and p99 is within %.0fx of p50 in every row.\n",
            REPORT_NOISY_RATIO);
    else
        report_sb_printf(out, "%zu %s with wrong results, %zu noisy %s (p99 >= %.0fx p50).\n",
                         nwrong, nwrong == 1 ? "row" : "rows", nn, nn == 1 ? "row" : "rows",
                         REPORT_NOISY_RATIO);
    free(ns);
    report_sb_puts(out, "\n");
}

static int same_train_group(const report_train_row *a, const report_train_row *b)
{
    return !strcmp(a->model, b->model) && !strcmp(a->host, b->host) && a->nprocs == b->nprocs;
}

static void training_section(const report_data *d, sbuf *out)
{
    if (d->ntrain == 0 && d->nmem == 0) return;
    report_sb_puts(out, "Training\n");
    int many_hosts = 0;
    for (size_t i = 1; i < d->ntrain; i++)
        many_hosts |= strcmp(d->train[i].host, d->train[0].host) != 0;
    for (size_t i = 0; i < d->ntrain; i++) {
        const report_train_row *r = &d->train[i];
        train_exposed e;
        train_exposed_of(r, &e);
        char eff[64], exposed[96];
        report_scaling_eff(r, eff, sizeof eff);
        if (e.in_noise)
            snprintf(exposed, sizeof exposed,
                     "exposed communication %.2f ms (step - compute is "
                     "within the step's noise of %.2f ms)",
                     e.ms, e.noise_ms);
        else
            snprintf(exposed, sizeof exposed, "exposed communication %.2f ms (%.0f%% of the step)",
                     e.ms, e.share);
        report_sb_printf(
            out,
            "%s (%s, %s, %d %s, batch %d, bucket %g MB, compress %s%s%s): step %.2f ms = "
            "compute %.2f ms + %s; %.1f samples/s; scaling efficiency %s.\n",
            r->model, r->mode, r->backend, r->nprocs, procs_word(r->nprocs), r->batch, r->bucket_mb,
            r->compress, many_hosts ? ", host " : "", many_hosts ? r->host : "", r->step_ms_avg,
            r->compute_ms, exposed, r->samples_per_s, eff);
    }
    /* The best backend per model, machine and process count, by throughput. */
    for (size_t i = 0; i < d->ntrain; i++) {
        const report_train_row *best = &d->train[i], *other = NULL;
        int first = 1;
        for (size_t j = 0; j < i; j++)
            if (same_train_group(&d->train[j], best)) first = 0;
        if (!first) continue;
        for (size_t j = 0; j < d->ntrain; j++) {
            const report_train_row *r = &d->train[j];
            if (!same_train_group(r, best)) continue;
            if (r->samples_per_s > best->samples_per_s) best = r;
        }
        for (size_t j = 0; j < d->ntrain; j++) {
            const report_train_row *r = &d->train[j];
            if (!same_train_group(r, best) || !strcmp(r->backend, best->backend)) continue;
            if (!other || r->samples_per_s > other->samples_per_s) other = r;
        }
        if (!other || !(other->samples_per_s > 0)) continue;
        char f[16];
        /* Training rows record no p25/p75 of the step: the claim says so. */
        report_sb_printf(
            out,
            "%s with %d %s%s%s: %s trains %sx faster than %s (%.1f vs %.1f samples/s, best "
            "configuration of each; spread unknown).\n",
            best->model, best->nprocs, procs_word(best->nprocs), many_hosts ? " on " : "",
            many_hosts ? best->host : "", best->backend,
            report_fmt_factor(best->samples_per_s / other->samples_per_s, f, sizeof f),
            other->backend, best->samples_per_s, other->samples_per_s);
    }
    for (size_t i = 0; i < d->nmem; i++) {
        const report_mem_row *m = &d->mem[i];
        char a[6][32];
        const int64_t v[6] = {m->peak_rss_bytes, m->params_bytes,      m->grads_bytes,
                              m->optim_bytes,    m->activations_bytes, m->comm_buffers_bytes};
        for (int k = 0; k < 6; k++)
            report_fmt_size(v[k] > 0 ? (uint64_t)v[k] : 0, a[k], sizeof a[k]);
        report_sb_printf(
            out,
            "memory of %s, batch %d: peak RSS %s; parameters %s, gradients %s, optimizer "
            "state %s, activations %s, communication buffers %s.\n",
            m->model, m->batch, a[0], a[1], a[2], a[3], a[4], a[5]);
    }
    report_sb_puts(out, "\n");
}

void report_analysis(const report_data *d, const report_view *v, sbuf *out)
{
    report_sb_printf(out,
                     "collbench report: analysis of %zu communication results (%zu configurations) "
                     "and %zu training results.\n\n",
                     d->ncomm, v->n, d->ntrain);
    if (v->n > 0) {
        fastest_section(v, out);
        buffers_section(v, out);
        machines_section(v, out);
        saturation_section(v, out);
        crossover_section(v, out);
        scaling_section(v, out);
        anomalies_section(d, out);
    }
    training_section(d, out);
}
