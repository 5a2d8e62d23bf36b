/* Series for plots and analysis, built from the sorted rows in one pass. */
#include "report/report_view.h"
#include "report/report_passes.h"
#include "report/report_spread.h"

#include "coll.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int report_series_same_setting(const report_series *a, const report_series *b)
{
    return strcmp(a->collective, b->collective) == 0 && strcmp(a->host, b->host) == 0 &&
           strcmp(a->device, b->device) == 0 && strcmp(a->buffers, b->buffers) == 0 &&
           a->nnodes == b->nnodes;
}

int report_series_same_group(const report_series *a, const report_series *b)
{
    return report_series_same_setting(a, b) && a->nprocs == b->nprocs;
}

static int row_in_series(const report_series *s, const bench_row *r)
{
    return strcmp(s->collective, r->collective) == 0 && strcmp(s->host, r->host) == 0 &&
           strcmp(s->device, r->device) == 0 && strcmp(s->buffers, r->buffers) == 0 &&
           strcmp(s->backend, r->backend) == 0 && s->nprocs == r->nprocs && s->nnodes == r->nnodes;
}

int report_view_build(const report_data *d, report_view *v)
{
    memset(v, 0, sizeof *v);
    if (d->ncomm == 0) return 0;
    v->s = calloc(d->ncomm, sizeof *v->s);
    const bench_row **pts = calloc(d->ncomm, sizeof *pts);
    v->collectives = calloc(d->ncomm, sizeof *v->collectives);
    v->folded = calloc(d->ncomm, sizeof *v->folded);
    if (!v->s || !pts || !v->collectives || !v->folded) {
        free(pts);
        report_view_free(v);
        return COLL_ENOMEM;
    }
    /* One array of points for all series: each series owns a contiguous run. */
    size_t np = 0, nfolded = 0;
    for (size_t i = 0; i < d->ncomm; i++) {
        const bench_row *r = &d->comm[i];
        report_series *s = v->n ? &v->s[v->n - 1] : NULL;
        if (!s || !row_in_series(s, r)) {
            s = &v->s[v->n++];
            *s = (report_series){
                r->collective, r->host,  r->device, r->buffers, r->backend, r->nprocs,
                r->nnodes,     pts + np, 0,         -1,         1};
            if (v->ncollectives == 0 ||
                strcmp(v->collectives[v->ncollectives - 1], r->collective) != 0)
                v->collectives[v->ncollectives++] = r->collective;
        }
        const report_series *s0 = &v->s[0];
        v->many_hosts |= strcmp(s->host, s0->host) != 0;
        v->many_devices |= strcmp(s->device, s0->device) != 0;
        v->many_buffers |= strcmp(s->buffers, s0->buffers) != 0;
        v->many_nnodes |= s->nnodes != s0->nnodes;
        if (r->wrong >= 0)
            s->wrong = (s->wrong < 0 ? 0 : s->wrong) + r->wrong; /* -1: not checked */
        if (s->n > 0 && s->pts[s->n - 1]->bytes == r->bytes)
            continue; /* a less preferred variant */
        size_t passes = report_pass_count(r, d->ncomm - i);
        if (passes > 1) {
            report_fold_passes(r, passes, &v->folded[nfolded]);
            r = &v->folded[nfolded++];
            if ((int)passes > s->passes) s->passes = (int)passes;
        }
        s->pts[s->n++] = r;
        np++;
    }
    return 0;
}

void report_view_free(report_view *v)
{
    if (v->n) free((void *)v->s[0].pts);
    free(v->s);
    free(v->folded);
    free(v->collectives);
    memset(v, 0, sizeof *v);
}

const report_series *report_view_find_procs(const report_view *v, const report_series *like,
                                            int nprocs)
{
    for (size_t i = 0; i < v->n; i++)
        if (v->s[i].nprocs == nprocs && report_series_same_setting(&v->s[i], like) &&
            strcmp(v->s[i].backend, like->backend) == 0)
            return &v->s[i];
    return NULL;
}

const bench_row *report_series_at(const report_series *s, uint64_t bytes)
{
    if (!s) return NULL;
    for (size_t i = 0; i < s->n; i++)
        if (s->pts[i]->bytes == bytes) return s->pts[i];
    return NULL;
}

const char *report_series_where(const report_view *v, const report_series *s, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
#define PART(...)                                                              \
    do {                                                                       \
        if (at < len) at += (size_t)snprintf(buf + at, len - at, ", ");        \
        if (at < len) at += (size_t)snprintf(buf + at, len - at, __VA_ARGS__); \
    } while (0)
    if (v->many_hosts)
        at = (size_t)snprintf(buf, len, " on %s", s->host[0] ? s->host : "(unknown host)");
    if (v->many_devices) PART("%s", s->device);
    if (v->many_buffers) PART("%s buffers", s->buffers);
    if (v->many_nnodes) PART("%d %s", s->nnodes, s->nnodes == 1 ? "node" : "nodes");
#undef PART
    return buf;
}

/* How many backends of one comparison group measured bytes (the best group). */
static int backends_at(const report_view *v, uint64_t bytes)
{
    int best = 0;
    for (size_t i = 0; i < v->n; i++) {
        if (!report_series_at(&v->s[i], bytes)) continue;
        int n = 0;
        for (size_t j = 0; j < v->n; j++)
            n += report_series_same_group(&v->s[i], &v->s[j]) && report_series_at(&v->s[j], bytes);
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

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

size_t report_group_sizes(const report_view *v, const report_series *g, uint64_t *out)
{
    size_t n = 0;
    for (size_t i = 0; i < v->n; i++) {
        const report_series *s = &v->s[i];
        if (!report_series_same_group(s, g)) continue;
        for (size_t k = 0; k < s->n; k++) {
            size_t j = 0;
            while (j < n && out[j] != s->pts[k]->bytes) j++;
            if (j == n) out[n++] = s->pts[k]->bytes;
        }
    }
    qsort(out, n, sizeof *out, cmp_u64);
    return n;
}

static int cmp_ranked(const void *a, const void *b)
{
    const report_ranked *x = a, *y = b;
    if (x->us != y->us) return x->us < y->us ? -1 : 1;
    return strcmp(x->s->backend, y->s->backend);
}

size_t report_rank_interleaved(report_ranked *rk, size_t n)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) m += rk[i].s->passes >= 2;
    if (m == 0) return n;
    /* stable: the interleaved ones keep their order, then the others theirs */
    for (size_t i = 0, k = 0; i < n; i++) {
        if (rk[i].s->passes < 2) continue;
        report_ranked x = rk[i];
        memmove(&rk[k + 1], &rk[k], (i - k) * sizeof *rk);
        rk[k++] = x;
    }
    return m;
}

size_t report_rank_backends(const report_view *v, const report_series *g, uint64_t bytes,
                            report_ranked *out)
{
    size_t n = 0;
    for (size_t i = 0; i < v->n; i++) {
        const report_series *s = &v->s[i];
        if (!report_series_same_group(s, g)) continue;
        const bench_row *r = report_series_at(s, bytes);
        if (r && isfinite(report_row_time(r))) out[n++] = (report_ranked){s, r, report_row_time(r)};
    }
    /* Like for like: in place and out of place are different work (NCCL's
     * one-rank in-place all-reduce moves nothing), so only the placement most
     * backends have here is ranked; a tie keeps in place, as torch measures. */
    size_t inplace = 0, m = 0;
    for (size_t i = 0; i < n; i++) inplace += out[i].r->in_place != 0;
    int keep = 2 * inplace >= n;
    for (size_t i = 0; i < n; i++)
        if ((out[i].r->in_place != 0) == keep) out[m++] = out[i];
    qsort(out, m, sizeof *out, cmp_ranked);
    return m;
}
