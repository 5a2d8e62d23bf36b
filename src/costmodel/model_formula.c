/* The cost formulas (docs/DESIGN.md "Cost model"): Thakur, Rabenseifner and
 * Gropp 2005 for the named algorithms, Chan et al. 2007's lower bounds for a
 * backend's own choice, and the auto backend's hierarchical all-reduce. */
#include "costmodel/model_formula.h"
#include "coll_tool.h"

#include <limits.h>
#include <math.h>
#include <string.h>
#include <strings.h>

static const char *const param_names[MODEL_NPARAM] = {"alpha_intra", "beta_intra", "gamma",
                                                      "alpha_inter", "beta_inter", "beta_mem"};

const char *model_param_name(model_param p)
{
    return (unsigned)p < MODEL_NPARAM ? param_names[p] : "unknown";
}

static const char *const algo_names[MODEL_ALGO_COUNT] = {"auto",     "ring",         "rhd",
                                                         "rd",       "direct",       "tree",
                                                         "pairwise", "dissemination"};

/* The aliases libcoll's --algo accepts (src/algo/select.c). */
static const struct {
    const char *name;
    model_algo algo;
} aliases[] = {
    {"rabenseifner", MODEL_ALGO_RHD},
    {"halving-doubling", MODEL_ALGO_RHD},
    {"recursive-doubling", MODEL_ALGO_RD},
    {"binomial", MODEL_ALGO_TREE},
    {"chain", MODEL_ALGO_RING},
    {"pipeline", MODEL_ALGO_RING},
    {"one-shot", MODEL_ALGO_DIRECT},
};

int model_algo_parse(const char *name)
{
    if (!name) return -1;
    for (int i = 0; i < MODEL_ALGO_COUNT; i++)
        if (!strcasecmp(name, algo_names[i])) return i;
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (!strcasecmp(name, aliases[i].name)) return (int)aliases[i].algo;
    return -1;
}

const char *model_algo_name(model_algo a)
{
    return (unsigned)a < MODEL_ALGO_COUNT ? algo_names[a] : "unknown";
}

int model_reduces(const char *c)
{
    return c && (!strcmp(c, "allreduce") || !strcmp(c, "reducescatter") || !strcmp(c, "reduce"));
}

/* One algorithm on p ranks as counts: a messages in sequence, b bytes through
 * the busiest port, g bytes reduced by the busiest rank; ring_like: each step
 * sends to a neighbour, so with ranks placed host by host only one rank of a
 * host uses its link at a time. The lower bounds of the gathering and reducing
 * collectives count as ring-like: at large sizes, where the link matters,
 * backends run rings (libcoll's tuning table does). */
typedef struct terms {
    double a, b, g;
    int ring_like;
    /* Ranks at work in the main rounds (0: all p): rd and rhd run them on the
     * largest power of two, while the ranks folded in wait without a core. */
    int active;
    /* A non-power-of-two world's fold steps before and after, run by 2 x rem
     * ranks (fold_active); included in a, b, g above. */
    double fa, fb, fg;
    int fold_active;
} terms;

#define TERMS(a_, b_, g_, ring_) ((terms){.a = (a_), .b = (b_), .g = (g_), .ring_like = (ring_)})

static double lg_ceil(int p) { return p > 1 ? ceil(log2((double)p)) : 0; }
static double lg_floor(int p) { return p > 1 ? floor(log2((double)p)) : 0; }

static int flat_terms(const char *coll, model_algo algo, int p, double n, terms *t)
{
    double f = (p - 1.0) / p, lg = lg_ceil(p);
    int pow2 = (p & (p - 1)) == 0;
    *t = (terms){0};
    if (p <= 1) return 0; /* one rank: nothing moves */
    if (!strcmp(coll, "allreduce")) {
        switch (algo) {
        case MODEL_ALGO_BOUND: *t = TERMS(2 * lg, 2 * f * n, f * n, 1); return 0;
        case MODEL_ALGO_RING: *t = TERMS(2 * (p - 1.0), 2 * f * n, f * n, 1); return 0;
        case MODEL_ALGO_RHD: {
            /* Not a power of two: an extra step before (alpha + n beta + n gamma)
             * and after (alpha + n beta) folds the surplus ranks in and out. */
            double q = exp2(lg_floor(p)), fq = (q - 1) / q, x = pow2 ? 0 : 1;
            *t = TERMS(2 * log2(q) + 2 * x, 2 * fq * n + 2 * x * n, fq * n + x * n, 0);
            t->active = (int)q;
            t->fa = 2 * x, t->fb = 2 * x * n, t->fg = x * n, t->fold_active = 2 * (p - (int)q);
            return 0;
        }
        case MODEL_ALGO_RD: {
            double l = lg_floor(p), x = pow2 ? 0 : 1;
            *t = TERMS(l + 2 * x, (l + 2 * x) * n, (l + x) * n, 0);
            t->active = (int)exp2(l);
            t->fa = 2 * x, t->fb = 2 * x * n, t->fg = x * n, t->fold_active = 2 * (p - t->active);
            return 0;
        }
        case MODEL_ALGO_DIRECT: *t = TERMS(p - 1.0, (p - 1.0) * n, (p - 1.0) * n, 0); return 0;
        default: return -1;
        }
    }
    if (!strcmp(coll, "allgather")) {
        if (algo == MODEL_ALGO_RING || (algo == MODEL_ALGO_RD && !pow2)) /* rd falls back */
            *t = TERMS(p - 1.0, f * n, 0, 1);
        else if (algo == MODEL_ALGO_BOUND) *t = TERMS(lg, f * n, 0, 1);
        else if (algo == MODEL_ALGO_RD) *t = TERMS(lg, f * n, 0, 0);
        else return -1;
        return 0;
    }
    if (!strcmp(coll, "reducescatter")) {
        if (algo == MODEL_ALGO_RING) *t = TERMS(p - 1.0, f * n, f * n, 1);
        else if (algo == MODEL_ALGO_BOUND) *t = TERMS(lg, f * n, f * n, 1);
        else return -1;
        return 0;
    }
    if (!strcmp(coll, "broadcast")) {
        if (algo == MODEL_ALGO_TREE) *t = TERMS(lg, lg * n, 0, 0);
        else if (algo == MODEL_ALGO_BOUND) *t = TERMS(lg, n, 0, 0);
        else if (algo == MODEL_ALGO_RING) {
            /* pipelined chain of k chunks: p - 2 + k chunk steps */
            double k = n > MODEL_CHAIN_CHUNK_BYTES ? ceil(n / MODEL_CHAIN_CHUNK_BYTES) : 1;
            double steps = p - 2.0 + k;
            *t = TERMS(steps, steps * n / k, 0, 1);
        } else return -1;
        return 0;
    }
    if (!strcmp(coll, "reduce")) {
        if (algo == MODEL_ALGO_TREE) *t = TERMS(lg, lg * n, lg * n, 0);
        else if (algo == MODEL_ALGO_BOUND) *t = TERMS(lg, n, f * n, 0);
        else return -1;
        return 0;
    }
    if (!strcmp(coll, "alltoall")) {
        if (algo == MODEL_ALGO_BOUND || algo == MODEL_ALGO_PAIRWISE || algo == MODEL_ALGO_DIRECT)
            *t = TERMS(p - 1.0, f * n, 0, 0);
        else return -1;
        return 0;
    }
    if (!strcmp(coll, "barrier")) {
        if (algo == MODEL_ALGO_BOUND || algo == MODEL_ALGO_DISSEMINATION) *t = TERMS(lg, 0, 0, 0);
        else return -1;
        return 0;
    }
    if (!strcmp(coll, "sendrecv")) {
        if (algo != MODEL_ALGO_BOUND) return -1;
        *t = TERMS(1, n, 0, 1);
        return 0;
    }
    return -1;
}

int model_is_hier(const model_shape *s)
{
    return s->hosts > 1 && s->per_host > 1 && s->algo == MODEL_ALGO_BOUND && s->backend &&
           !strcmp(s->backend, "auto") && !strcmp(s->collective, "allreduce");
}

static void clear(double c[MODEL_NPARAM]) { memset(c, 0, MODEL_NPARAM * sizeof c[0]); }

static double dot(const double c[MODEL_NPARAM], const double *theta)
{
    double t = 0;
    for (int i = 0; i < MODEL_NPARAM; i++) t += c[i] * theta[i];
    return t;
}

/* The hierarchical all-reduce's stages for m bytes: intra-host reduce-scatter
 * and all-gather (the intra backend's own choice) in ci, the inter-host
 * all-reduce of each rank's m/L block in ce: L ranks of a host run theirs at
 * once over its one link, so the link carries L blocks. */
static void hier_stages(int H, int L, double m, double ci[MODEL_NPARAM], double ce[MODEL_NPARAM])
{
    terms rs, ag, ar;
    clear(ci);
    clear(ce);
    flat_terms("reducescatter", MODEL_ALGO_BOUND, L, m, &rs);
    flat_terms("allgather", MODEL_ALGO_BOUND, L, m, &ag);
    flat_terms("allreduce", MODEL_ALGO_BOUND, H, m / L, &ar);
    ci[MODEL_ALPHA_INTRA] = rs.a + ag.a;
    ci[MODEL_BETA_INTRA] = rs.b + ag.b;
    ci[MODEL_GAMMA] = rs.g;
    ce[MODEL_ALPHA_INTER] = ar.a;
    ce[MODEL_BETA_INTER] = ar.b * L;
    ce[MODEL_GAMMA] = ar.g;
}

/* The CPU's terms under oversubscription: ranks sharing a core take turns
 * for every byte copied or reduced and for every message's system calls and
 * wake-ups alike (docs/PERFORMANCE.md "Cost model: ranks beyond the cores"). */
static void cpu_share(double c[MODEL_NPARAM], double share)
{
    if (share > 1)
        c[MODEL_ALPHA_INTRA] *= share, c[MODEL_BETA_INTRA] *= share, c[MODEL_GAMMA] *= share,
            c[MODEL_BETA_MEM] *= share;
}

model_algo model_algo_run(const model_shape *s)
{
    /* tcp runs libcoll's algorithms, so its "auto" is the tuning table's pick */
    if (s->algo != MODEL_ALGO_BOUND || !s->backend || strcmp(s->backend, "tcp")) return s->algo;
    int world = s->hosts * s->per_host;
    const char *pick = coll_algo_auto_pick(s->collective, (size_t)s->bytes, world);
    int a = pick ? model_algo_parse(pick) : -1;
    return a < 0 ? s->algo : (model_algo)a;
}

/* Ranks per core while `active` of the p ranks work (the others wait in a
 * blocking receive, using no core): share scaled down, at least 1. */
static double phase_share(double share, int active, int p)
{
    if (share <= 1 || active <= 0 || active >= p) return share > 1 ? share : 1;
    return fmax(1, share * active / p);
}

/* The fraction of a phase's bytes that miss the cache: its ranks hold
 * `share` x n bytes of buffers per core (n the row's bytes), and what exceeds
 * the knot costs beta_mem more per byte. */
static double spill(double n, double share, double cache_bytes)
{
    double held = n * share;
    return cache_bytes > 0 && held > cache_bytes ? 1 - cache_bytes / held : 0;
}

/* One host: each phase's CPU terms shared among the cores by the ranks at
 * work in it, and its bytes beyond the cache knot. */
static void one_host(const terms *t, int p, const model_shape *s, double coef[MODEL_NPARAM])
{
    double sm = phase_share(s->share, t->active, p), sf = phase_share(s->share, t->fold_active, p);
    double ma = t->a - t->fa, mb = t->b - t->fb, mg = t->g - t->fg;
    coef[MODEL_ALPHA_INTRA] = ma * sm + t->fa * sf;
    coef[MODEL_BETA_INTRA] = mb * sm + t->fb * sf;
    coef[MODEL_GAMMA] = mg * sm + t->fg * sf;
    coef[MODEL_BETA_MEM] = mb * sm * spill(s->bytes, sm, s->cache_bytes) +
                           t->fb * sf * spill(s->bytes, sf, s->cache_bytes);
}

int model_coeffs(const model_shape *s, const double *theta, double coef[MODEL_NPARAM])
{
    clear(coef);
    if (!s->collective || s->hosts < 1 || s->per_host < 1 || !(s->bytes >= 0) ||
        (long long)s->hosts * s->per_host > INT_MAX)
        return -1;
    int H = s->hosts, L = s->per_host;
    if (model_is_hier(s)) {
        double ci[MODEL_NPARAM], ce[MODEL_NPARAM];
        double n = s->bytes, c = MODEL_AUTO_PIPE_BYTES;
        if (n < 2 * c) { /* one pass, stage after stage */
            hier_stages(H, L, n, ci, ce);
            cpu_share(ci, s->share);
            cpu_share(ce, s->share);
            for (int i = 0; i < MODEL_NPARAM; i++) coef[i] = ci[i] + ce[i];
            return 0;
        }
        /* Pipelined: chunk i crosses the link while chunk i+1 is reduced in
         * the host, so after the first chunk the slower stage sets the pace. */
        double k = n / c;
        hier_stages(H, L, c, ci, ce);
        cpu_share(ci, s->share);
        cpu_share(ce, s->share);
        int inter_slower = !theta || dot(ce, theta) >= dot(ci, theta);
        for (int i = 0; i < MODEL_NPARAM; i++)
            coef[i] = ci[i] + ce[i] + (k - 1) * (inter_slower ? ce[i] : ci[i]);
        return 0;
    }
    terms t;
    if (flat_terms(s->collective, model_algo_run(s), H * L, s->bytes, &t)) return -1;
    if (H == 1) {
        one_host(&t, L, s, coef);
        return 0;
    }
    /* Flat over several hosts: every step waits for the link (the slowest
     * path), which L ranks share unless the algorithm is ring-like. */
    coef[MODEL_ALPHA_INTER] = t.a;
    coef[MODEL_BETA_INTER] = t.b * (t.ring_like ? 1 : L);
    coef[MODEL_GAMMA] = t.g;
    cpu_share(coef, s->share);
    return 0;
}

double model_time_us(const model_shape *s, const double theta[MODEL_NPARAM])
{
    double c[MODEL_NPARAM];
    if (model_coeffs(s, theta, c)) return NAN;
    return dot(c, theta);
}
