/* Series for plots and analysis, built from the sorted rows in one pass. */
#include "report/report_view.h"

#include "coll.h"

#include <stdlib.h>
#include <string.h>

static int same_series(const bench_row *a, const bench_row *b)
{
    return strcmp(a->collective, b->collective) == 0 && strcmp(a->backend, b->backend) == 0 &&
           a->nprocs == b->nprocs;
}

int report_view_build(const report_data *d, report_view *v)
{
    memset(v, 0, sizeof *v);
    if (d->ncomm == 0) return 0;
    v->s = calloc(d->ncomm, sizeof *v->s);
    const bench_row **pts = calloc(d->ncomm, sizeof *pts);
    v->collectives = calloc(d->ncomm, sizeof *v->collectives);
    if (!v->s || !pts || !v->collectives) {
        free(pts);
        report_view_free(v);
        return COLL_ENOMEM;
    }
    /* One array of points for all series: each series owns a contiguous run. */
    size_t np = 0;
    for (size_t i = 0; i < d->ncomm; i++) {
        const bench_row *r = &d->comm[i];
        report_series *s = v->n ? &v->s[v->n - 1] : NULL;
        if (!s || !same_series(s->pts[0], r)) {
            s = &v->s[v->n++];
            s->collective = r->collective;
            s->backend = r->backend;
            s->nprocs = r->nprocs;
            s->pts = pts + np;
            if (v->ncollectives == 0 ||
                strcmp(v->collectives[v->ncollectives - 1], r->collective) != 0)
                v->collectives[v->ncollectives++] = r->collective;
        }
        s->wrong += r->wrong;
        if (s->n > 0 && s->pts[s->n - 1]->bytes == r->bytes) continue; /* a less preferred variant */
        s->pts[s->n++] = r;
        np++;
    }
    return 0;
}

void report_view_free(report_view *v)
{
    if (v->n) free((void *)v->s[0].pts);
    free(v->s);
    free(v->collectives);
    memset(v, 0, sizeof *v);
}

const report_series *report_view_find(const report_view *v, const char *collective,
                                      const char *backend, int nprocs)
{
    for (size_t i = 0; i < v->n; i++)
        if (v->s[i].nprocs == nprocs && strcmp(v->s[i].collective, collective) == 0 &&
            strcmp(v->s[i].backend, backend) == 0)
            return &v->s[i];
    return NULL;
}

const bench_row *report_series_at(const report_series *s, uint64_t bytes)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->pts[i]->bytes == bytes) return s->pts[i];
    return NULL;
}

/* How many distinct backends measured bytes in one collective (the best one). */
static int backends_at(const report_view *v, uint64_t bytes)
{
    int best = 0;
    for (size_t c = 0; c < v->ncollectives; c++) {
        int n = 0;
        const char *last = NULL;
        for (size_t i = 0; i < v->n; i++) {
            const report_series *s = &v->s[i];
            if (strcmp(s->collective, v->collectives[c]) != 0 || !report_series_at(s, bytes)) continue;
            if (!last || strcmp(last, s->backend) != 0) n++;
            last = s->backend;
        }
        if (n > best) best = n;
    }
    return best;
}

uint64_t report_comparison_bytes(const report_view *v)
{
    const uint64_t hundred_mib = 100ull << 20;
    if (v->n == 0) return 0;
    if (backends_at(v, hundred_mib) >= 2) return hundred_mib;
    uint64_t largest = 0, largest_shared = 0;
    for (size_t i = 0; i < v->n; i++)
        for (size_t k = 0; k < v->s[i].n; k++) {
            uint64_t b = v->s[i].pts[k]->bytes;
            if (b > largest) largest = b;
            if (b > largest_shared && backends_at(v, b) >= 2) largest_shared = b;
        }
    return largest_shared ? largest_shared : largest;
}
