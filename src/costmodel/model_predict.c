/* A fitted series carried to another cluster: the machine's own terms stay,
 * the link's are swapped for the one asked about. */
#include "costmodel/model_predict.h"
#include "engine/bench_coll.h"
#include "engine/opt_table.h"
#include "coll.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const int MODEL_WHATIF_RANKS[MODEL_WHATIF_NRANKS] = {8, 64, 512};
const double MODEL_WHATIF_GBITS[MODEL_WHATIF_NLINKS] = {25, 100, 400};

/* A finite number at the start of s, above zero (or zero where zero_ok);
 * *end after it. */
static int number(const char *s, int zero_ok, double *v, const char **end)
{
    char *e;
    *v = strtod(s, &e);
    *end = e;
    return e != s && isfinite(*v) && (*v > 0 || (zero_ok && *v == 0)) ? 0 : -1;
}

int model_parse_rate(const char *s, double *Bps, char *err, size_t errlen)
{
    static const struct {
        const char *unit;
        double bytes_per_s;
    } units[] = {
        {"Gbit/s", 1e9 / 8},  {"Gbit", 1e9 / 8},  {"Gbps", 1e9 / 8},   {"Mbit/s", 1e6 / 8},
        {"Mbit", 1e6 / 8},    {"Mbps", 1e6 / 8},  {"Kbit/s", 1e3 / 8}, {"Kbit", 1e3 / 8},
        {"Tbit/s", 1e12 / 8}, {"Tbit", 1e12 / 8}, {"bit/s", 1.0 / 8},  {"GB/s", 1e9},
        {"MB/s", 1e6},        {"KB/s", 1e3},      {"B/s", 1},
    };
    const char *e;
    double v;
    if (s && !number(s, 0, &v, &e))
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
            /* bits in any case (tc writes "1gbit"); bytes exactly, "B" upper case */
            if (strstr(units[i].unit, "bit") || strstr(units[i].unit, "bps")
                    ? !strcasecmp(e, units[i].unit)
                    : !strcmp(e, units[i].unit)) {
                *Bps = v * units[i].bytes_per_s;
                return 0;
            }
    snprintf(err, errlen,
             "bad rate '%s' (want a positive number and a unit: 100Gbit/s, 800Mbit/s, "
             "12.5GB/s)",
             s ? s : "");
    return COLL_EINVAL;
}

int model_parse_time_us(const char *s, double *us, char *err, size_t errlen)
{
    static const struct {
        const char *unit;
        double us;
    } units[] = {{"ns", 1e-3}, {"us", 1}, {"ms", 1e3}, {"s", 1e6}};
    const char *e;
    double v;
    if (s && !number(s, 1, &v, &e))
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
            if (!strcmp(e, units[i].unit)) {
                *us = v * units[i].us;
                return 0;
            }
    snprintf(err, errlen, "bad time '%s' (want a number >= 0 and a unit: 5us, 0.1ms, 100ns)",
             s ? s : "");
    return COLL_EINVAL;
}

static int positive_int(const char *key, const char *v, int *out, char *err, size_t errlen)
{
    char *e;
    long x = strtol(v, &e, 10);
    if (e == v || *e || x < 1 || x > 1000000) {
        snprintf(err, errlen, "%s: '%s' is not a whole number from 1 to 1000000", key, v);
        return COLL_EINVAL;
    }
    *out = (int)x;
    return 0;
}

int model_cluster_parse(const char *spec, model_cluster *c, char *err, size_t errlen)
{
    *c = (model_cluster){.per_host = 1};
    int have_latency = 0, have_mlatency = 0;
    if (!spec || !*spec) {
        snprintf(err, errlen,
                 "empty cluster (want hosts=N[,ranks-per-host=R,link=RATE,latency=TIME])");
        return COLL_EINVAL;
    }
    char buf[512];
    if (strlen(spec) >= sizeof buf) {
        snprintf(err, errlen, "cluster description too long");
        return COLL_EINVAL;
    }
    /* the rule of every list: no empty item, no key given twice */
    if (bench_list_check(spec, 1, err, errlen)) return COLL_EINVAL;
    strcpy(buf, spec);
    char *save = NULL;
    int rc = 0;
    for (char *item = strtok_r(buf, ",", &save); item && !rc; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq || eq == item || !eq[1]) {
            snprintf(err, errlen,
                     "'%s' is not KEY=VALUE (keys: hosts, ranks-per-host, link, latency, "
                     "measured-link, measured-latency, cores, shared-cores)",
                     item);
            return COLL_EINVAL;
        }
        *eq = 0;
        const char *k = item, *v = eq + 1;
        char why[200];
        if (!strcmp(k, "hosts")) rc = positive_int(k, v, &c->hosts, err, errlen);
        else if (!strcmp(k, "cores")) rc = positive_int(k, v, &c->cores, err, errlen);
        else if (!strcmp(k, "shared-cores")) rc = positive_int(k, v, &c->shared_cores, err, errlen);
        else if (!strcmp(k, "ranks-per-host")) rc = positive_int(k, v, &c->per_host, err, errlen);
        else if (!strcmp(k, "link") || !strcmp(k, "measured-link")) {
            double *rate = k[0] == 'l' ? &c->link_Bps : &c->measured_Bps;
            rc = model_parse_rate(v, rate, why, sizeof why);
            if (rc) snprintf(err, errlen, "%s: %s", k, why);
            else if (*rate < MODEL_MIN_LINK_BPS || *rate > MODEL_MAX_LINK_BPS)
                snprintf(err, errlen, "%s: '%s' is outside 1Mbit/s..100Tbit/s", k, v),
                    rc = COLL_EINVAL;
        } else if (!strcmp(k, "latency") || !strcmp(k, "measured-latency")) {
            int own = k[0] == 'l';
            double *us = own ? &c->latency_us : &c->measured_latency_us;
            rc = model_parse_time_us(v, us, why, sizeof why);
            if (rc) snprintf(err, errlen, "%s: %s", k, why);
            else if (*us > MODEL_MAX_LATENCY_US)
                snprintf(err, errlen, "%s: '%s' is more than 1s", k, v), rc = COLL_EINVAL;
            *(own ? &have_latency : &have_mlatency) = 1;
        } else {
            snprintf(err, errlen,
                     "unknown key '%s' (keys: hosts, ranks-per-host, link, latency, "
                     "measured-link, measured-latency, cores, shared-cores)",
                     k);
            return COLL_EINVAL;
        }
    }
    if (rc) return rc;
    if (!c->hosts) {
        snprintf(err, errlen, "hosts=N is required");
        return COLL_EINVAL;
    }
    if ((long long)c->hosts * c->per_host > MODEL_MAX_RANKS) {
        snprintf(err, errlen, "hosts x ranks-per-host is %lld; at most %d",
                 (long long)c->hosts * c->per_host, MODEL_MAX_RANKS);
        return COLL_EINVAL;
    }
    if (have_latency && !c->link_Bps) {
        snprintf(err, errlen, "latency= needs link= (the link it belongs to)");
        return COLL_EINVAL;
    }
    if (c->link_Bps && !have_latency) {
        snprintf(err, errlen, "link= needs latency= (e.g. latency=5us)");
        return COLL_EINVAL;
    }
    if ((c->measured_Bps > 0) != (have_mlatency != 0)) {
        snprintf(err, errlen, "measured-link= and measured-latency= go together");
        return COLL_EINVAL;
    }
    if (c->measured_Bps > 0 && !c->link_Bps) {
        snprintf(err, errlen, "measured-link= only matters with link= (the link to predict)");
        return COLL_EINVAL;
    }
    return 0;
}

int model_cluster_theta(const model_series *s, const model_cluster *c, double theta[MODEL_NPARAM],
                        char *err, size_t errlen)
{
    if (!s->ok) {
        snprintf(err, errlen, "no fit: %.200s", s->why);
        return COLL_EINVAL;
    }
    if (c->hosts > 1 && !strcmp(s->backend, "shm")) {
        snprintf(err, errlen, "backend shm runs inside one host");
        return COLL_EINVAL;
    }
    memcpy(theta, s->theta, MODEL_NPARAM * sizeof *theta);
    int fitted_e = s->state[MODEL_ALPHA_INTER] != MODEL_P_ABSENT &&
                   s->state[MODEL_BETA_INTER] != MODEL_P_ABSENT;
    int fitted_i = s->state[MODEL_ALPHA_INTRA] != MODEL_P_ABSENT &&
                   s->state[MODEL_BETA_INTRA] != MODEL_P_ABSENT;
    if (c->link_Bps > 0) {
        double sw_a = 0, sw_b = 0;
        if (c->measured_Bps > 0) {
            if (!fitted_e) {
                snprintf(err, errlen,
                         "measured-link= given but the rows have no inter-host terms "
                         "(no multi-host rows)");
                return COLL_EINVAL;
            }
            sw_a = fmax(0, s->theta[MODEL_ALPHA_INTER] - c->measured_latency_us);
            /* A byte's cost beyond the measured link's rate is the protocol's
             * overhead (headers, acknowledgements): a share of the link's time,
             * so it scales with the link. The stack's own per-byte cost runs
             * while the link sends; where it is the slower, the stack's
             * ceiling (model_stack_beta) sets the pace. */
            double link_b = 1e6 / c->measured_Bps;
            sw_b = fmax(0, s->theta[MODEL_BETA_INTER] - link_b) * (c->measured_Bps / c->link_Bps);
        } else if (fitted_i) {
            /* One host's rows of a flat backend ran its whole stack over
             * loopback: its per-message and per-byte costs stay on a real
             * link. The auto backend's intra terms are shm's: only their
             * per-message cost is taken as the stack's. */
            sw_a = s->theta[MODEL_ALPHA_INTRA];
            if (strcmp(s->backend, "auto")) sw_b = s->theta[MODEL_BETA_INTRA];
        }
        theta[MODEL_ALPHA_INTER] = c->latency_us + sw_a;
        theta[MODEL_BETA_INTER] = 1e6 / c->link_Bps + sw_b;
    } else if (c->hosts > 1 && !fitted_e) {
        snprintf(err, errlen,
                 "the rows are from one host only: give the link (link=RATE,latency=TIME) "
                 "or fit on multi-host rows");
        return COLL_EINVAL;
    }
    model_shape sh = {.collective = s->collective,
                      .algo = s->model,
                      .backend = s->backend,
                      .hosts = c->hosts,
                      .per_host = c->per_host,
                      .bytes = 1 << 20};
    double coef[MODEL_NPARAM];
    if (model_coeffs(&sh, theta, coef)) {
        snprintf(err, errlen, "no cost formula for %s with algorithm '%s'", s->collective, s->algo);
        return COLL_EINVAL;
    }
    if ((coef[MODEL_ALPHA_INTRA] != 0 || coef[MODEL_BETA_INTRA] != 0) && !fitted_i) {
        snprintf(err, errlen,
                 "%d ranks per host need intra-host terms, which rows on several "
                 "ranks of one host give; these rows have none",
                 c->per_host);
        return COLL_EINVAL;
    }
    return 0;
}

double model_stack_beta(const model_series *s, const model_cluster *c, double bytes)
{
    if (!s->ok || !strcmp(s->backend, "shm") || !(bytes > 0)) return 0;
    double per_link_byte = 1; /* the stack's bytes per byte crossing the host's link */
    if (!strcmp(s->backend, "auto")) {
        model_shape sh = {.collective = s->collective,
                          .algo = s->model,
                          .backend = s->backend,
                          .hosts = c->hosts,
                          .per_host = c->per_host};
        /* hierarchical: the L ranks of a host each send 1/L of what crosses its link */
        if (model_is_hier(&sh)) per_link_byte = 1.0 / c->per_host;
        if (!(s = s->stack)) return 0;
    }
    double want = c->shared_cores ? (double)c->hosts * c->per_host : c->per_host;
    const model_point *best = NULL;
    double best_r = INFINITY, best_z = INFINITY;
    for (size_t i = 0; i < s->npts; i++) {
        const model_point *p = &s->pts[i];
        if (p->hosts != 1 || !(p->bytes > 0)) continue;
        double r = fabs(log2(p->per_host / want)), z = fabs(log2(p->bytes / bytes));
        if (r < best_r - 1e-9 || (r < best_r + 1e-9 && z < best_z))
            best = p, best_r = r, best_z = z;
    }
    if (!best) return 0;
    model_shape sh = {.collective = s->collective,
                      .algo = s->model,
                      .backend = s->backend,
                      .hosts = 1,
                      .per_host = best->per_host,
                      .bytes = best->bytes,
                      .share = best->share,
                      .cache_bytes = s->cache_bytes};
    double coef[MODEL_NPARAM];
    if (model_coeffs(&sh, s->theta, coef) || !(coef[MODEL_BETA_INTRA] > 0)) return 0;
    double other = coef[MODEL_ALPHA_INTRA] * s->theta[MODEL_ALPHA_INTRA] +
                   coef[MODEL_GAMMA] * s->theta[MODEL_GAMMA];
    return per_link_byte * fmax(0, best->measured_us - other) / coef[MODEL_BETA_INTRA];
}

int model_predict(const model_series *s, const model_cluster *c, double bytes,
                  model_prediction *out, char *err, size_t errlen)
{
    double theta[MODEL_NPARAM];
    *out = (model_prediction){NAN, NAN, NAN, 0};
    int rc = model_cluster_theta(s, c, theta, err, errlen);
    if (rc) return rc;
    if (c->hosts > 1) {
        double cpu = model_stack_beta(s, c, bytes);
        if (cpu > theta[MODEL_BETA_INTER]) theta[MODEL_BETA_INTER] = cpu, out->stack_bound = 1;
    }
    model_shape sh = {.collective = s->collective,
                      .algo = s->model,
                      .backend = s->backend,
                      .hosts = c->hosts,
                      .per_host = c->per_host,
                      .bytes = bytes,
                      .share = c->shared_cores
                                   ? model_share(c->hosts * c->per_host, c->shared_cores)
                                   : model_share(c->per_host, c->cores),
                      .cache_bytes = s->cache_bytes};
    out->time_us = model_time_us(&sh, theta);
    const bench_coll *bc = bench_coll_find(s->collective);
    if (out->time_us > 0 && bytes > 0) {
        out->algbw_GBps = bytes / out->time_us / 1e3;
        out->busbw_GBps = bc ? out->algbw_GBps * bc->bus_factor(c->hosts * c->per_host) : NAN;
    }
    return 0;
}

void model_whatif(const model_series *s, double bytes, double latency_us,
                  model_prediction out[MODEL_WHATIF_NRANKS][MODEL_WHATIF_NLINKS])
{
    char err[256];
    for (int r = 0; r < MODEL_WHATIF_NRANKS; r++)
        for (int l = 0; l < MODEL_WHATIF_NLINKS; l++) {
            model_cluster c = {.hosts = MODEL_WHATIF_RANKS[r] / MODEL_WHATIF_PER_HOST,
                               .per_host = MODEL_WHATIF_PER_HOST,
                               .link_Bps = MODEL_WHATIF_GBITS[l] * 1e9 / 8,
                               .latency_us = latency_us};
            if (model_predict(s, &c, bytes, &out[r][l], err, sizeof err))
                out[r][l] = (model_prediction){NAN, NAN, NAN, 0};
        }
}
