/* The alpha-beta-gamma cost of each algorithm libcoll runs (docs/DESIGN.md
 * "Cost model"): a collective's time as a linear combination of five machine
 * parameters, so that they can be fitted by linear least squares. */
#ifndef MODEL_FORMULA_H
#define MODEL_FORMULA_H

/* The parameters, in microseconds and microseconds per byte. */
typedef enum model_param {
    MODEL_ALPHA_INTRA, /* per message inside a host */
    MODEL_BETA_INTRA,  /* per byte inside a host */
    MODEL_GAMMA,       /* per byte reduced */
    MODEL_ALPHA_INTER, /* per message between hosts */
    MODEL_BETA_INTER,  /* per byte over a host's link */
    MODEL_BETA_MEM,    /* per byte more, once a core's buffers outgrow its cache (one host) */
    MODEL_NPARAM
} model_param;

const char *model_param_name(model_param p);

/* The algorithms the formulas know. MODEL_ALGO_BOUND stands for a backend's own
 * choice ("auto", and backends without named algorithms): the lower bound of
 * Chan et al. 2007, which the algorithms a good backend picks approach; on
 * several hosts the auto backend's all-reduce is hierarchical instead. */
typedef enum model_algo {
    MODEL_ALGO_BOUND,
    MODEL_ALGO_RING,
    MODEL_ALGO_RHD,
    MODEL_ALGO_RD,
    MODEL_ALGO_DIRECT,
    MODEL_ALGO_TREE,
    MODEL_ALGO_PAIRWISE,
    MODEL_ALGO_DISSEMINATION,
    MODEL_ALGO_COUNT
} model_algo;

/* "auto" -> BOUND, libcoll's names and aliases as `--algo` takes them
 * ("rabenseifner", "binomial", "chain", ...); -1 for an unknown name. */
int model_algo_parse(const char *name);
const char *model_algo_name(model_algo a);

/* What one call is: collective (as in result rows), algorithm, backend (the
 * "auto" backend's all-reduce is hierarchical on several hosts with more than
 * one rank each), hosts x ranks per host, and bytes (the row's bytes: the
 * whole vector, nccl-tests' convention). */
typedef struct model_shape {
    const char *collective;
    model_algo algo;
    const char *backend;
    int hosts, per_host;
    double bytes;
    /* Ranks per core where the ranks outnumber the cores they share (1 or 0:
     * they do not): each rank gets 1/share of a core, so the per-byte costs
     * the CPU pays (beta_intra, gamma) take share times as long. */
    double share;
    /* The cache knot: bytes of buffers a core holds before its bytes cost
     * beta_mem more (0: none). Fitted per series (model_fit.h), not read off
     * the machine, since what spills is the stack's buffers too. */
    double cache_bytes;
} model_shape;

/* The auto backend's pipeline chunk (src/backend/auto/auto.c, $COLL_AUTO_PIPE_BYTES)
 * and libcoll's chunk of the pipelined chain broadcast (COLL_ALGO_DEFAULT_CHUNK). */
#define MODEL_AUTO_PIPE_BYTES (4.0 * 1048576)
#define MODEL_CHAIN_CHUNK_BYTES (1048576.0)

/* Fills coef[MODEL_NPARAM] so that time = sum coef[i] * theta[i]. theta (may
 * be NULL: the inter-host step is taken as the slower) decides which stage of
 * a pipeline is the slower one, the only place the model is not linear.
 * 0, or -1 when the formula does not exist (collective unknown, or an
 * algorithm the collective does not have). */
int model_coeffs(const model_shape *s, const double *theta, double coef[MODEL_NPARAM]);

/* The predicted time in microseconds (NAN where model_coeffs fails). */
double model_time_us(const model_shape *s, const double theta[MODEL_NPARAM]);

/* The algorithm whose formula applies: s->algo, except the tcp backend's
 * "auto", which is what libcoll's tuning table picks at s's size and ranks
 * (rd, rhd, ring for all-reduce), not a lower bound. */
model_algo model_algo_run(const model_shape *s);

/* Whether the shape runs hierarchically (intra-host and inter-host steps). */
int model_is_hier(const model_shape *s);

/* Whether the collective reduces (gamma applies). */
int model_reduces(const char *collective);

#endif
