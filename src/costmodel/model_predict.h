/* Predictions for a cluster the user does not have: hosts x ranks per host
 * over a given link (docs/DESIGN.md "Cost model"), from a fitted series
 * (model_fit.h). */
#ifndef MODEL_PREDICT_H
#define MODEL_PREDICT_H

#include <stddef.h>

#include "costmodel/model_fit.h"

typedef struct model_cluster {
    int hosts, per_host;
    double link_Bps;   /* bytes/s of each host's link; 0: the fitted inter-host terms */
    double latency_us; /* one-way latency of the link (with link_Bps) */
    /* The link the fitted multi-host rows ran on (0: not given): the fitted
     * per-message cost beyond its latency is the software's, carried over;
     * the per-byte cost beyond its rate is the protocol's overhead, a share
     * of the link's time, scaled to the new link. */
    double measured_Bps, measured_latency_us;
    int cores;        /* cores per host (0: as many as ranks) */
    int shared_cores; /* hosts emulated on one machine: all ranks share these (0: not) */
} model_cluster;

/* "100Gbit/s", "100gbit" (tc's spelling), "12.5GB/s", "800Mbit/s" -> bytes/s
 * (decimal units); COLL_EINVAL with err naming the text otherwise. */
int model_parse_rate(const char *s, double *Bps, char *err, size_t errlen);
/* "5us", "0.1ms", "100ns", "1s", "0us" -> microseconds (a unit is required). */
int model_parse_time_us(const char *s, double *us, char *err, size_t errlen);
/* The links a prediction is made for: 1 Mbit/s to 100 Tbit/s, a latency of
 * at most 1 s; beyond them a number means a typo, and its prediction would be
 * hundreds of digits. */
#define MODEL_MIN_LINK_BPS (1e6 / 8)
#define MODEL_MAX_LINK_BPS (100e12 / 8)
#define MODEL_MAX_LATENCY_US 1e6
/* The largest cluster a prediction is made for (ranks in all). */
#define MODEL_MAX_RANKS (1 << 24)

/* "hosts=64,ranks-per-host=8,link=100Gbit/s,latency=5us[,measured-link=1Gbit/s,
 * measured-latency=0.1ms][,cores=N][,shared-cores=N]": hosts required; ranks-per-host defaults to 1;
 * latency needs link, measured-latency needs measured-link; no key twice, rates
 * and latencies within the limits above. COLL_EINVAL with err naming the bad
 * key or value. */
int model_cluster_parse(const char *spec, model_cluster *c, char *err, size_t errlen);

/* The parameters for cluster c from series s: its intra-host terms and gamma,
 * and the inter-host terms of c's link (alpha = latency + the software's per
 * message share, beta = 1/rate + the software's per byte share) or, without
 * a link, the fitted ones. COLL_EINVAL with err when s lacks what c needs. */
int model_cluster_theta(const model_series *s, const model_cluster *c, double theta[MODEL_NPARAM],
                        char *err, size_t errlen);

typedef struct model_prediction {
    double time_us, algbw_GBps, busbw_GBps; /* NAN when not predictable */
    int stack_bound; /* the stack's ceiling, not the link, set the per-byte cost */
} model_prediction;

/* The ceiling a flat backend's own stack puts on a host's link, in us per byte:
 * what a byte cost the same stack on one host, where no link slowed it
 * (loopback), from the one-host row nearest in ranks sharing a CPU (hosts x
 * ranks-per-host with shared-cores=, the hosts being emulated on one machine;
 * else ranks-per-host) and then in size, less its fitted per-message and
 * reduction parts. Between hosts a byte costs max(the link's beta, this):
 * the link and the CPUs work at once, the slower sets the pace. The auto
 * backend's one-host rows are shm's: its ceiling comes from s->stack (the tcp
 * series beside it), per link byte 1/L of it where its all-reduce is
 * hierarchical (each of a host's L ranks sends 1/L of the link's bytes). 0
 * where there is none: no one-host rows, shm, auto without tcp rows. */
double model_stack_beta(const model_series *s, const model_cluster *c, double bytes);

/* s's time for c at bytes, with algbw = bytes/time and busbw = algbw x the
 * collective's bus factor (nccl-tests). COLL_EINVAL with err as
 * model_cluster_theta's. */
int model_predict(const model_series *s, const model_cluster *c, double bytes,
                  model_prediction *out, char *err, size_t errlen);

/* The report's "what if" table: s's all-reduce-style prediction at bytes for
 * MODEL_WHATIF_RANKS ranks at MODEL_WHATIF_PER_HOST per host over links of
 * MODEL_WHATIF_GBITS Gbit/s with latency_us; a cell s cannot predict is NAN. */
#define MODEL_WHATIF_NRANKS 3
#define MODEL_WHATIF_NLINKS 3
extern const int MODEL_WHATIF_RANKS[MODEL_WHATIF_NRANKS];    /* 8, 64, 512 */
extern const double MODEL_WHATIF_GBITS[MODEL_WHATIF_NLINKS]; /* 25, 100, 400 */
#define MODEL_WHATIF_PER_HOST 8
void model_whatif(const model_series *s, double bytes, double latency_us,
                  model_prediction out[MODEL_WHATIF_NRANKS][MODEL_WHATIF_NLINKS]);

#endif
