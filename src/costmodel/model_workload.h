/* A program's communication as a workload for the cost model (docs/DESIGN.md
 * "Cost model", "A trace as the workload"): its calls, each predicted on a
 * cluster by the fitted model of its collective where that model validated
 * (model_xval_trusted, as the report draws it), summed per collective; calls
 * without such a model are left out and counted, with their bytes.
 *
 * When the cluster's world is not the trace's: a group of the trace's whole
 * world runs on the whole cluster, with data-parallel sizes: all-reduce,
 * broadcast and reduce counts unchanged (a gradient keeps its size),
 * all-gather and reduce-scatter per-rank counts unchanged (the whole vector
 * grows with the ranks), all-to-all per-peer counts unchanged; a smaller group
 * keeps its ranks, on as few of the cluster's hosts as hold it. */
#ifndef MODEL_WORKLOAD_H
#define MODEL_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "costmodel/model_fit.h"
#include "costmodel/model_predict.h"

/* One call of the program. */
typedef struct model_call {
    const char *collective; /* the engine's name; "sendrecv" for a send or a receive */
    const char *dtype;      /* libcoll's name (coll_dtype_name) */
    size_t dtype_size;
    uint64_t count; /* libcoll's count argument, as recorded */
    int ranks;      /* the ranks of its group in the trace */
} model_call;

/* What one collective's calls came to. */
typedef struct model_workload_coll {
    const char *collective;
    size_t calls, left_out;
    double bytes, left_out_bytes; /* the engine's bytes of the calls on the cluster */
    double time_us;               /* the predicted calls' sum */
    char why[200];                /* why calls were left out (the first reason) */
} model_workload_coll;

#define MODEL_WORKLOAD_COLLS 16
typedef struct model_workload {
    model_workload_coll c[MODEL_WORKLOAD_COLLS]; /* in the order first called */
    size_t n;
    size_t calls, left_out;
    double bytes, left_out_bytes, time_us;
} model_workload;

/* The cluster a group of group_ranks ranks of a trace of trace_world ranks
 * runs on, within cluster c (the rule above). 0, or -1 with why (a group that
 * fills no whole number of c's hosts, or outgrows c). */
int model_workload_shape(const model_cluster *c, int trace_world, int group_ranks,
                         model_cluster *out, char *why, size_t whylen);

/* Predicts calls[0..n) on c with the fits of f of one machine, backend and
 * buffer kind (the fastest validated algorithm of the call's collective, its
 * dtype's series first, else another dtype's). */
void model_workload_predict(const model_fits *f, const char *host, const char *backend,
                            const char *buffers, const model_cluster *c, int trace_world,
                            const model_call *calls, size_t n, model_workload *out);

#endif
