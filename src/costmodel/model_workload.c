/* A program's calls predicted on a cluster and summed (model_workload.h). */
#include "costmodel/model_workload.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "costmodel/model_xval.h"
#include "engine/bench_coll.h"

int model_workload_shape(const model_cluster *c, int trace_world, int group_ranks,
                         model_cluster *out, char *why, size_t whylen)
{
    int world = c->hosts * c->per_host;
    int g = group_ranks == trace_world ? world : group_ranks;
    *out = *c;
    if (g == world) return 0;
    if (g > world)
        return snprintf(why, whylen, "a group of %d ranks, more than the cluster's %d", g, world),
               -1;
    if (g <= c->per_host) {
        out->hosts = 1, out->per_host = g;
        return 0;
    }
    if (g % c->per_host)
        return snprintf(why, whylen, "a group of %d ranks fills no whole number of hosts of %d", g,
                        c->per_host),
               -1;
    out->hosts = g / c->per_host;
    return 0;
}

static model_workload_coll *coll_sum(model_workload *w, const char *collective)
{
    for (size_t i = 0; i < w->n; i++)
        if (!strcmp(w->c[i].collective, collective)) return &w->c[i];
    if (w->n == MODEL_WORKLOAD_COLLS) return NULL;
    model_workload_coll *c = &w->c[w->n++];
    memset(c, 0, sizeof *c);
    c->collective = collective;
    return c;
}

/* The fastest validated prediction of call k's collective at bytes on c;
 * NAN with why when there is none. */
static double predict_call(const model_fits *f, const char *host, const char *backend,
                           const char *buffers, const model_call *k, const model_cluster *c,
                           double bytes, char *why, size_t whylen)
{
    double best = NAN;
    int fitted = 0;
    snprintf(why, whylen, "no fitted %s rows of this backend and buffer kind", k->collective);
    for (int same_dtype = 1; same_dtype >= 0 && !isfinite(best); same_dtype--)
        for (size_t i = 0; i < f->n; i++) {
            const model_series *s = &f->s[i];
            if (!s->ok || strcmp(s->host, host) || strcmp(s->backend, backend) ||
                strcmp(s->buffers, buffers) || strcmp(s->collective, k->collective) ||
                (same_dtype && strcmp(s->dtype, k->dtype)))
                continue;
            char err[256];
            if (!model_xval_trusted(s)) {
                if (!fitted) {
                    model_xval_why_not(s, err, sizeof err);
                    snprintf(why, whylen, "no validated model (%s %s: %.120s)", s->collective,
                             s->algo, err);
                }
                continue;
            }
            fitted = 1;
            model_prediction p;
            if (model_predict(s, c, bytes, &p, err, sizeof err) || !isfinite(p.time_us)) {
                snprintf(why, whylen, "%s %s cannot predict: %.120s", s->collective, s->algo, err);
                continue;
            }
            if (!(p.time_us >= best)) best = p.time_us;
        }
    return best;
}

void model_workload_predict(const model_fits *f, const char *host, const char *backend,
                            const char *buffers, const model_cluster *c, int trace_world,
                            const model_call *calls, size_t n, model_workload *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < n; i++) {
        const model_call *k = &calls[i];
        model_workload_coll *sum = coll_sum(out, k->collective);
        const bench_coll *bc = bench_coll_find(k->collective);
        model_cluster on;
        char why[200] = "";
        double bytes = 0, us = NAN;
        if (!sum) continue; /* more collectives than the engine has: cannot happen */
        if (model_workload_shape(c, trace_world, k->ranks, &on, why, sizeof why) == 0) {
            int p = on.hosts * on.per_host;
            bytes = bc ? (double)bench_coll_bytes(bc, k->count, k->dtype_size, p)
                       : (double)k->count * (double)k->dtype_size;
            us = p == 1 ? 0 /* a group of one communicates nothing */
                        : predict_call(f, host, backend, buffers, k, &on, bytes, why, sizeof why);
        } else {
            bytes = (double)k->count * (double)k->dtype_size;
        }
        sum->calls++, out->calls++;
        sum->bytes += bytes, out->bytes += bytes;
        if (isfinite(us)) {
            sum->time_us += us, out->time_us += us;
            continue;
        }
        sum->left_out++, out->left_out++;
        sum->left_out_bytes += bytes, out->left_out_bytes += bytes;
        if (!sum->why[0]) snprintf(sum->why, sizeof sum->why, "%s", why);
    }
}
