/* A prediction's distance from the rows it was fitted on. */
#include "costmodel/model_range.h"
#include "engine/sizes.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

void model_series_span(const model_series *s, model_span *out)
{
    *out = (model_span){0};
    for (size_t i = 0; i < s->npts; i++) {
        const model_point *p = &s->pts[i];
        int ranks = p->hosts * p->per_host;
        if (p->hosts > out->max_hosts) out->max_hosts = p->hosts;
        if (p->per_host > out->max_per_host) out->max_per_host = p->per_host;
        if (ranks > out->max_ranks) out->max_ranks = ranks;
        if (i == 0 || p->bytes < out->min_bytes) out->min_bytes = p->bytes;
        if (i == 0 || p->bytes > out->max_bytes) out->max_bytes = p->bytes;
    }
}

typedef struct phrases {
    char *buf;
    size_t len, used;
    int n;
} phrases;

__attribute__((format(printf, 2, 3))) static void add(phrases *p, const char *fmt, ...)
{
    if (p->len == 0) return;
    if (p->n && p->used + 2 < p->len)
        p->used += (size_t)snprintf(p->buf + p->used, p->len - p->used, "; ");
    if (p->used < p->len) {
        va_list ap;
        va_start(ap, fmt);
        int w = vsnprintf(p->buf + p->used, p->len - p->used, fmt, ap);
        va_end(ap);
        if (w > 0) p->used += (size_t)w;
        if (p->used >= p->len) p->used = p->len - 1;
    }
    p->n++;
}

static void size_text(double bytes, char *buf, size_t len)
{
    bench_format_size(bytes > 0 ? (uint64_t)bytes : 0, buf, len);
}

int model_beyond(const model_series *s, const model_cluster *c, double lo, double hi, char *buf,
                 size_t len)
{
    phrases p = {.buf = buf, .len = len};
    if (len) buf[0] = 0;
    model_span sp;
    model_series_span(s, &sp);
    int ranks = c->hosts * c->per_host;
    if (c->hosts > sp.max_hosts) add(&p, "%d hosts (rows: up to %d)", c->hosts, sp.max_hosts);
    if (c->per_host > sp.max_per_host)
        add(&p, "%d ranks per host (rows: up to %d)", c->per_host, sp.max_per_host);
    if (ranks > sp.max_ranks) add(&p, "%d ranks (rows: up to %d)", ranks, sp.max_ranks);
    char a[32], b[32];
    if (sp.max_bytes > 0 && hi > sp.max_bytes) {
        size_text(hi, a, sizeof a), size_text(sp.max_bytes, b, sizeof b);
        add(&p, "sizes up to %s (rows: up to %s)", a, b);
    }
    if (sp.min_bytes > 0 && lo < sp.min_bytes) {
        size_text(lo, a, sizeof a), size_text(sp.min_bytes, b, sizeof b);
        add(&p, "sizes from %s (rows: from %s)", a, b);
    }
    if (c->link_Bps > 0 && c->hosts > 1) {
        double gbit = c->link_Bps * 8 / 1e9;
        if (sp.max_hosts < 2) add(&p, "a %.4g Gbit/s link (rows: one host only)", gbit);
        else if (!(c->measured_Bps > 0))
            add(&p, "a %.4g Gbit/s link (the rows' link not given: measured-link=)", gbit);
        else if (fabs(c->link_Bps - c->measured_Bps) > 1e-9 * c->measured_Bps)
            add(&p, "link %.4g Gbit/s (rows: %.4g Gbit/s)", gbit, c->measured_Bps * 8 / 1e9);
    }
    return p.n;
}
