/* The replay section of a report (report_replay.h). */
#include "report/report_replay.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One backend's turns in one setting: their rows, every pass. */
typedef struct backend_turns {
    const char *name;
    const bench_replay_row **sum; /* the passes' summary rows */
    size_t np;
    double comm, lo, hi; /* communication: the passes' median and range */
} backend_turns;

/* The rows of one trace run one way (ranks, buffers, gaps, overlap, bind): d->replay[a, b). */
typedef struct setting {
    const bench_replay_row *rows;
    size_t n;
    backend_turns *b;
    size_t nb;
    const bench_replay_row **sums; /* every backend's summary rows, b[k].sum into it */
} setting;

static int same_setting(const bench_replay_row *x, const bench_replay_row *y)
{
    return !strcmp(x->trace, y->trace) && x->nprocs == y->nprocs &&
           !strcmp(x->buffers, y->buffers) && !strcmp(x->gaps, y->gaps) &&
           !strcmp(x->overlap, y->overlap) && !strcmp(x->bind, y->bind);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median and range of the field at offset over rows (absent values left
 * out); 0 when none has it (all NAN). */
static int fold(const bench_replay_row *const *rows, size_t n, size_t offset, double *med,
                double *lo, double *hi)
{
    double v[64];
    size_t k = 0;
    for (size_t i = 0; i < n && k < 64; i++) {
        double x = *(const double *)((const char *)rows[i] + offset);
        if (isfinite(x)) v[k++] = x;
    }
    *med = *lo = *hi = NAN;
    if (!k) return 0;
    qsort(v, k, sizeof *v, cmp_double);
    *med = k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
    *lo = v[0], *hi = v[k - 1];
    return 1;
}
#define FOLD(rows, n, field, med, lo, hi) \
    fold(rows, n, offsetof(bench_replay_row, field), med, lo, hi)

static int by_comm(const void *a, const void *b)
{
    const backend_turns *x = a, *y = b;
    return cmp_double(&x->comm, &y->comm);
}

/* The setting starting at d->replay[at], its backends sorted by communication
 * (shortest first); the caller frees s->b. */
static int setting_at(const report_data *d, size_t at, setting *s)
{
    size_t end = at;
    while (end < d->nreplay && same_setting(&d->replay[at], &d->replay[end])) end++;
    *s = (setting){&d->replay[at], end - at, calloc(end - at, sizeof *s->b), 0,
                   calloc(end - at, sizeof *s->sums)};
    const bench_replay_row **ptrs = s->sums;
    if (!s->b || !ptrs) {
        free(s->b), free(ptrs);
        return -1;
    }
    size_t used = 0;
    for (size_t i = 0; i < s->n; i++) {
        const bench_replay_row *r = &s->rows[i];
        if (!bench_replay_row_is_summary(r)) continue;
        backend_turns *b = s->nb ? &s->b[s->nb - 1] : NULL;
        if (!b || strcmp(b->name, r->backend)) {
            b = &s->b[s->nb++];
            b->name = r->backend;
            b->sum = &ptrs[used];
        }
        b->sum[b->np++] = r;
        used++;
    }
    for (size_t k = 0; k < s->nb; k++)
        FOLD(s->b[k].sum, s->b[k].np, comm_s, &s->b[k].comm, &s->b[k].lo, &s->b[k].hi);
    qsort(s->b, s->nb, sizeof *s->b, by_comm);
    return 0;
}

static void setting_free(setting *s)
{
    free(s->sums);
    free(s->b);
}

/* Milliseconds with three significant digits or more, never an exponent. */
static const char *fmt_ms(double s, char *buf, size_t len)
{
    double ms = s * 1e3;
    if (!isfinite(ms)) snprintf(buf, len, "-");
    else snprintf(buf, len, "%.*f", ms >= 100 ? 0 : ms >= 10 ? 1 : ms >= 1 ? 2 : 3, ms);
    return buf;
}

/* "12.3" or, over passes that differ, "12.3 (11.9-12.8)". */
static const char *fmt_folded(double med, double lo, double hi, size_t np, char *buf, size_t len)
{
    char a[32], b[32], c[32];
    fmt_ms(med, a, sizeof a);
    fmt_ms(lo, b, sizeof b);
    fmt_ms(hi, c, sizeof c);
    /* three short numbers: a cut would be a bug, not data */
    if (np > 1 && strcmp(b, c)) {
        if (snprintf(buf, len, "%s (%s-%s)", a, b, c) >= (int)len) snprintf(buf, len, "%s", a);
    } else {
        snprintf(buf, len, "%s", a);
    }
    return buf;
}

static const char *setting_name(const setting *s, char *buf, size_t len)
{
    const bench_replay_row *r = &s->rows[0];
    snprintf(buf, len, "%s (%d ranks, %s buffers, gaps %s%s%s%s%s)", r->trace, r->nprocs,
             r->buffers, r->gaps, *r->overlap ? ", overlap " : "", r->overlap,
             *r->bind ? ", bind " : "", r->bind);
    return buf;
}

/* ---- the findings ---- */

/* Which backend's communication is shorter, by the passes' ranges. */
static void comparison(const setting *s, sbuf *out)
{
    if (s->nb < 2) return;
    for (size_t k = 0; k < s->nb; k++)
        if (s->b[k].np < 2) {
            report_sb_puts(out, "; one pass of a backend has no spread to judge a difference "
                                "by (collbench replay --passes 2 gives one)");
            return;
        }
    const backend_turns *f = &s->b[0], *apart = NULL;
    size_t tied = 1;
    for (size_t k = 1; k < s->nb && !apart; k++) {
        if (s->b[k].lo > f->hi) apart = &s->b[k];
        else tied++;
    }
    char x[16];
    if (tied > 1) {
        report_sb_puts(out, "; ");
        for (size_t k = 0; k < tied; k++)
            report_sb_printf(out, "%s%s",
                             k == 0          ? ""
                             : k + 1 == tied ? " and "
                                             : ", ",
                             s->b[k].name);
        report_sb_puts(out, " are within noise of each other (their passes overlap)");
        if (apart)
            report_sb_printf(out, ", %sx shorter than %s's",
                             report_fmt_factor(apart->comm / f->comm, x, sizeof x), apart->name);
    } else if (apart) {
        report_sb_printf(out, "; %s's communication is %sx shorter than %s's (their passes apart)",
                         f->name, report_fmt_factor(apart->comm / f->comm, x, sizeof x),
                         apart->name);
    }
}

static void finding(const setting *s, sbuf *out)
{
    char name[700], a[32], b[32], c[32];
    report_sb_printf(out, "On the trace %s, ", setting_name(s, name, sizeof name));
    double rec = NAN;
    for (size_t k = 0; k < s->nb; k++) {
        const backend_turns *t = &s->b[k];
        double total, exposed, skew, lo, hi;
        FOLD(t->sum, t->np, total_s, &total, &lo, &hi);
        FOLD(t->sum, t->np, exposed_s, &exposed, &lo, &hi);
        int has_skew = FOLD(t->sum, t->np, skew_s, &skew, &lo, &hi);
        if (!isfinite(rec)) FOLD(t->sum, t->np, recorded_s, &rec, &lo, &hi);
        report_sb_printf(out,
                         k == 0 ? "%s spends %s of %s ms in communication" : "; %s %s of %s ms",
                         t->name, fmt_ms(t->comm, a, sizeof a), fmt_ms(total, b, sizeof b));
        /* the other ranks' lateness, which no backend changes (files before it: none) */
        if (has_skew)
            report_sb_printf(out, " (%s before a call's last rank arrived)",
                             fmt_ms(skew, a, sizeof a));
        report_sb_printf(out, ", %s ms exposed", fmt_ms(exposed, c, sizeof c));
    }
    if (isfinite(rec))
        report_sb_printf(out, " (the program recorded %s ms of communication)",
                         fmt_ms(rec, a, sizeof a));
    comparison(s, out);
    report_sb_puts(out, ".\n");
}

void report_replay_findings(const report_data *d, sbuf *out)
{
    for (size_t at = 0; at < d->nreplay;) {
        setting s;
        if (setting_at(d, at, &s) != 0) {
            out->oom = 1;
            return;
        }
        if (s.nb) finding(&s, out);
        at += s.n;
        setting_free(&s);
    }
}

/* ---- the tables ---- */

static void summary_rows(const setting *s, rtable *t)
{
    for (size_t k = 0; k < s->nb; k++) {
        const backend_turns *b = &s->b[k];
        const bench_replay_row *r = b->sum[0];
        double total, gap, exposed, skew, rec, tlo, thi, glo, ghi, elo, ehi, slo, shi, lo, hi;
        FOLD(b->sum, b->np, total_s, &total, &tlo, &thi);
        FOLD(b->sum, b->np, gap_s, &gap, &glo, &ghi);
        FOLD(b->sum, b->np, exposed_s, &exposed, &elo, &ehi);
        FOLD(b->sum, b->np, skew_s, &skew, &slo, &shi); /* NAN ("-") in files before it */
        int has_rec = FOLD(b->sum, b->np, recorded_s, &rec, &lo, &hi);
        char ct[64], gt[64], mt[64], et[64], st[64], rt[32], ratio[32];
        if (has_rec && rec > 0) snprintf(ratio, sizeof ratio, "%.2f", b->comm / rec);
        else snprintf(ratio, sizeof ratio, "-");
        report_table_row(
            t, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%zu\t%.0f\t%s\t%s\t%s\t%s\t%s\t%.0f%%\t%s\t%s",
            r->trace, r->nprocs, r->buffers, r->gaps, *r->overlap ? r->overlap : "-",
            *r->bind ? r->bind : "-", b->name, b->np, r->calls,
            fmt_folded(total, tlo, thi, b->np, ct, sizeof ct),
            fmt_folded(gap, glo, ghi, b->np, gt, sizeof gt),
            fmt_folded(b->comm, b->lo, b->hi, b->np, mt, sizeof mt),
            fmt_folded(skew, slo, shi, b->np, st, sizeof st),
            fmt_folded(exposed, elo, ehi, b->np, et, sizeof et),
            total > 0 ? 100 * b->comm / total : 0.0, has_rec ? fmt_ms(rec, rt, sizeof rt) : "-",
            ratio);
    }
}

/* A collective and size class of a setting, and what it cost. */
typedef struct cost_key {
    const char *collective, *size_class;
    double calls, recorded; /* NAN: no recorded time */
    double recorded_median; /* one call's recorded time; NAN: none */
    double cost;            /* the sort key: recorded, else the largest replayed median */
} cost_key;

static int by_cost(const void *a, const void *b)
{
    const cost_key *x = a, *y = b;
    return cmp_double(&y->cost, &x->cost);
}

/* The rows of setting s for backend b and key k (every pass). */
static size_t class_rows(const setting *s, const char *backend, const cost_key *k,
                         const bench_replay_row **out)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n && n < 64; i++) {
        const bench_replay_row *r = &s->rows[i];
        if (!strcmp(r->backend, backend) && !strcmp(r->collective, k->collective) &&
            !strcmp(r->size_class, k->size_class))
            out[n++] = r;
    }
    return n;
}

static void costs_table(const setting *s, rtable *t)
{
    static const char *const head[] = {"collective",
                                       "size",
                                       "calls (all ranks)",
                                       "recorded (ms)",
                                       "backend",
                                       "replayed (ms)",
                                       "replayed / recorded",
                                       "busbw (GB/s)",
                                       "one call recorded (ms)",
                                       "one call replayed (ms)"};
    char title[160], name[700];
    snprintf(title, sizeof title, "Largest costs first: %.130s",
             setting_name(s, name, sizeof name));
    report_table_init(t, title, head, sizeof head / sizeof head[0], "llrrlrrrrr");
    cost_key *keys = calloc(s->n, sizeof *keys);
    if (!keys) {
        t->oom = 1;
        return;
    }
    size_t nk = 0;
    for (size_t i = 0; i < s->n; i++) {
        const bench_replay_row *r = &s->rows[i];
        /* a collective overall (size_class "all") repeats its classes */
        if (!strcmp(r->size_class, "all")) continue;
        size_t k = 0;
        while (k < nk && (strcmp(keys[k].collective, r->collective) ||
                          strcmp(keys[k].size_class, r->size_class)))
            k++;
        if (k == nk) keys[nk++] = (cost_key){r->collective, r->size_class, r->calls, NAN, NAN, 0};
        if (isfinite(r->recorded_s)) keys[k].recorded = r->recorded_s;
        if (isfinite(r->recorded_median_s)) keys[k].recorded_median = r->recorded_median_s;
        if (r->time_s > keys[k].cost) keys[k].cost = r->time_s;
    }
    for (size_t k = 0; k < nk; k++)
        if (isfinite(keys[k].recorded)) keys[k].cost = keys[k].recorded;
    qsort(keys, nk, sizeof *keys, by_cost);
    for (size_t k = 0; k < nk && k < REPORT_REPLAY_MAX_COSTS; k++) {
        for (size_t j = 0; j < s->nb; j++) {
            const bench_replay_row *rows[64];
            size_t n = class_rows(s, s->b[j].name, &keys[k], rows);
            double med, lo, hi, bw, blo, bhi, call, clo, chi;
            if (!FOLD(rows, n, time_s, &med, &lo, &hi)) continue;
            FOLD(rows, n, busbw_GBps, &bw, &blo, &bhi);
            FOLD(rows, n, median_s, &call, &clo, &chi);
            char rt[32], mt[64], ratio[32], crt[32], cmt[64];
            if (isfinite(keys[k].recorded) && keys[k].recorded > 0)
                snprintf(ratio, sizeof ratio, "%.2f", med / keys[k].recorded);
            else snprintf(ratio, sizeof ratio, "-");
            report_table_row(t, "%s\t%s\t%.0f\t%s\t%s\t%s\t%s\t%.3g\t%s\t%s", keys[k].collective,
                             keys[k].size_class, keys[k].calls,
                             fmt_ms(keys[k].recorded, rt, sizeof rt), s->b[j].name,
                             fmt_folded(med, lo, hi, n, mt, sizeof mt), ratio, bw,
                             fmt_ms(keys[k].recorded_median, crt, sizeof crt),
                             fmt_folded(call, clo, chi, n, cmt, sizeof cmt));
        }
    }
    if (nk > REPORT_REPLAY_MAX_COSTS)
        report_table_row(t, "(%zu more, smaller)\t\t\t\t\t\t\t\t\t", nk - REPORT_REPLAY_MAX_COSTS);
    free(keys);
}

void report_replay_build(const report_data *d, report_replay *r)
{
    static const char *const head[] = {"trace",
                                       "ranks",
                                       "buffers",
                                       "gaps",
                                       "overlap",
                                       "bind",
                                       "backend",
                                       "passes",
                                       "calls (all ranks)",
                                       "total (ms)",
                                       "compute: gaps (ms)",
                                       "communication (ms)",
                                       "of it before the last rank (ms)",
                                       "exposed (ms)",
                                       "communication / total",
                                       "recorded communication (ms)",
                                       "replayed / recorded"};
    memset(r, 0, sizeof *r);
    if (!d->nreplay) return;
    size_t nsettings = 0;
    for (size_t i = 0; i < d->nreplay; i++)
        nsettings += i == 0 || !same_setting(&d->replay[i - 1], &d->replay[i]);
    r->t = calloc(nsettings + 1, sizeof *r->t);
    if (!r->t) {
        r->oom = 1;
        return;
    }
    report_table_init(&r->t[0],
                      "Replay: communication against compute (the whole trace; times the mean "
                      "per rank, total the slowest rank's; median of the passes, their range)",
                      head, sizeof head / sizeof head[0], "lrlllllrrrrrrrrrr");
    r->n = 1;
    for (size_t at = 0; at < d->nreplay;) {
        setting s;
        if (setting_at(d, at, &s) != 0) {
            r->oom = 1;
            return;
        }
        summary_rows(&s, &r->t[0]);
        costs_table(&s, &r->t[r->n++]);
        at += s.n;
        setting_free(&s);
    }
    for (size_t i = 0; i < r->n; i++) r->oom |= r->t[i].oom;
}

void report_replay_free(report_replay *r)
{
    for (size_t i = 0; i < r->n; i++) report_table_free(&r->t[i]);
    free(r->t);
    memset(r, 0, sizeof *r);
}

static const char NOTE[] =
    "A program's recorded communication replayed by collbench replay on each backend: total is "
    "the trace from its first call to its last (the slowest rank), compute the recorded gaps "
    "between calls as spent, communication the calls' time (of it, the time before a call's last "
    "rank arrived: the other ranks' lateness, which no backend changes) and exposed "
    "communication the total less the gaps (what the program waits for). Recorded: the "
    "trace's own t1 - t0, where it has them. One call: the median over the calls of a call's "
    "time, each call position (a rank's k-th call of the class) averaged over the ranks.";

void report_replay_html(const report_replay *r, sbuf *out)
{
    if (!r->n) return;
    report_sb_puts(out, "<section id=\"replay\">\n<h2>Replay</h2>\n<p class=\"note\">");
    report_sb_html_escaped(out, NOTE);
    report_sb_puts(out, "</p>\n");
    for (size_t i = 0; i < r->n; i++) report_table_html(&r->t[i], out);
    report_sb_puts(out, "</section>\n");
}

void report_replay_md(const report_replay *r, sbuf *out)
{
    if (!r->n) return;
    report_sb_printf(out, "Replay\n\n%s\n\n", NOTE);
    for (size_t i = 0; i < r->n; i++) report_table_md(&r->t[i], out);
}
