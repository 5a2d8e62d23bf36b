/* Run-to-run comparison (report_baseline.h). */
#include "report/report_baseline.h"

#include "report/report_spread.h"

#include "coll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Distinct hosts of a view, sorted, comma separated; how many. */
static size_t hosts(const report_view *v, char *buf, size_t len)
{
    const char *h[16];
    size_t n = 0;
    for (size_t i = 0; i < v->n; i++) {
        size_t k = 0;
        while (k < n && strcmp(h[k], v->s[i].host)) k++;
        if (k == n && n < 16) h[n++] = v->s[i].host;
    }
    for (size_t i = 1; i < n; i++)
        for (size_t k = i; k > 0 && strcmp(h[k - 1], h[k]) > 0; k--) {
            const char *t = h[k];
            h[k] = h[k - 1];
            h[k - 1] = t;
        }
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n && at < len; i++)
        at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "",
                               h[i][0] ? h[i] : "(unknown host)");
    return n;
}

/* The same series in then; across machines the host is not compared. */
static const report_series *twin(const report_view *then, const report_series *s, int cross)
{
    for (size_t i = 0; i < then->n; i++) {
        const report_series *t = &then->s[i];
        if (!strcmp(t->collective, s->collective) && (cross || !strcmp(t->host, s->host)) &&
            !strcmp(t->device, s->device) && !strcmp(t->buffers, s->buffers) &&
            !strcmp(t->backend, s->backend) && t->nprocs == s->nprocs && t->nnodes == s->nnodes)
            return t;
    }
    return NULL;
}

static int cmp_moved(const void *a, const void *b)
{
    const baseline_cell *x = a, *y = b;
    return (x->ratio < y->ratio) - (x->ratio > y->ratio);
}

int report_baseline_compare(const report_view *now, const report_view *then, int cross_machine,
                            report_baseline *b, char *err, size_t errlen)
{
    memset(b, 0, sizeof *b);
    size_t hn = hosts(now, b->hosts_now, sizeof b->hosts_now);
    size_t ht = hosts(then, b->hosts_then, sizeof b->hosts_then);
    b->cross = strcmp(b->hosts_now, b->hosts_then) != 0;
    if (b->cross && !cross_machine) {
        snprintf(err, errlen,
                 "the baseline was measured on %s, this run on %s: different machines "
                 "are not compared (--cross-machine compares them anyway, saying so)",
                 b->hosts_then, b->hosts_now);
        return COLL_EINVAL;
    }
    if (b->cross && (hn > 1 || ht > 1)) {
        snprintf(err, errlen,
                 "--cross-machine joins one machine with one other: the baseline has "
                 "%s, this run %s",
                 b->hosts_then, b->hosts_now);
        return COLL_EINVAL;
    }
    size_t cap = 0;
    for (size_t i = 0; i < now->n; i++) cap += now->s[i].n;
    b->moved = calloc(cap ? cap : 1, sizeof *b->moved);
    if (!b->moved) return COLL_ENOMEM;
    for (size_t i = 0; i < now->n; i++) {
        const report_series *s = &now->s[i], *t = twin(then, s, b->cross);
        for (size_t k = 0; t && k < s->n; k++) {
            const bench_row *r = s->pts[k], *p = report_series_at(t, r->bytes);
            if (!p) continue;
            b->compared++;
            spread_kind used;
            if (report_rows_differ(r, p, &used) != DIFFERS) continue;
            double ratio = report_row_time(r) / report_row_time(p);
            b->moved[b->nmoved++] = (baseline_cell){s, r, p, ratio};
            b->nslower += ratio > 1;
        }
    }
    qsort(b->moved, b->nmoved, sizeof *b->moved, cmp_moved);
    return 0;
}

void report_baseline_free(report_baseline *b)
{
    free(b->moved);
    memset(b, 0, sizeof *b);
}

double report_baseline_worst_pct(const report_baseline *b)
{
    return b->nmoved && b->moved[0].ratio > 1 ? 100.0 * (b->moved[0].ratio - 1) : 0;
}

static void cell_name(const baseline_cell *c, char *buf, size_t len)
{
    char sz[32];
    snprintf(buf, len, "%s %s, %s buffers, %d %s, %s", c->s->collective, c->s->backend,
             c->s->buffers, c->s->nprocs, c->s->nprocs == 1 ? "process" : "processes",
             report_fmt_size(c->now->bytes, sz, sizeof sz));
}

void report_baseline_sentence(const report_baseline *b, sbuf *out)
{
    char cross[400] = "";
    if (b->cross)
        snprintf(cross, sizeof cross,
                 " (cross-machine: this run on %s, the baseline on %s; not like "
                 "for like)",
                 b->hosts_now, b->hosts_then);
    size_t faster = b->nmoved - b->nslower;
    report_sb_printf(
        out,
        "Against the baseline%s: %zu of %zu cells slower beyond noise, %zu faster, the rest "
        "within noise",
        cross, b->nslower, b->compared, faster);
    if (b->nslower) {
        char name[160];
        cell_name(&b->moved[0], name, sizeof name);
        report_sb_printf(out, "; the worst %s, %.0f%% slower", name, report_baseline_worst_pct(b));
    }
    report_sb_puts(out, ".\n");
}

void report_baseline_table(const report_baseline *b, rtable *t)
{
    static const char *const head[] = {"collective", "backend", "buffers", "procs", "size",
                                       "baseline",   "now",     "ratio",   "change"};
    char title[160] = "Changes against the baseline beyond noise";
    if (b->cross)
        snprintf(title, sizeof title,
                 "Changes against the baseline beyond noise (cross-machine: %.40s "
                 "vs %.40s)",
                 b->hosts_now, b->hosts_then);
    report_table_init(t, title, head, sizeof head / sizeof head[0], "lllrlrrrl");
    for (size_t i = 0; i < b->nmoved; i++) {
        const baseline_cell *c = &b->moved[i];
        char sz[32], a[32], n[32];
        double r = c->ratio;
        report_table_row(t, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%.2fx\t%s %.0f%%%s", c->s->collective,
                         c->s->backend, c->s->buffers, c->s->nprocs,
                         report_fmt_size(c->now->bytes, sz, sizeof sz),
                         report_fmt_time_us(report_row_time(c->then), a, sizeof a),
                         report_fmt_time_us(report_row_time(c->now), n, sizeof n), r,
                         r > 1 ? "slower" : "faster", r > 1 ? 100.0 * (r - 1) : 100.0 * (1 - r),
                         b->cross ? " (cross-machine)" : "");
    }
}
