#include "train/train_run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/errbuf.h"
#include "train/optim_sgd.h"
#include "train/param_hash.h"
#include "train/synth_data.h"

typedef struct run_state {
    coll_comm *comm;
    const train_config *cfg;
    int rank, world;
    train_net m;
    synth_data data;
    sgd opt;
    reducer red;
    float *x;
    int *labels;
} run_state;

static void load_batch(run_state *s, int step)
{
    uint64_t global = (uint64_t)s->world * s->cfg->batch;
    train_synth_batch(&s->data, (uint64_t)step * global + (uint64_t)s->rank * s->cfg->batch,
                      s->cfg->batch, s->x, s->labels);
    if (s->rank == 0 && step + 1 == s->cfg->inject_nan_step) s->x[0] = NAN;
}

/* Forward+backward alone on this step's batch (parameters untouched): the
 * compute part of a step, measured between the training steps so that it sees
 * the same machine (caches, the other ranks' load) as they do. */
static double compute_pass_ms(run_state *s)
{
    double t0 = coll__now_s();
    train_net_forward(&s->m, s->x, s->labels);
    train_net_backward(&s->m, s->x, NULL);
    return (coll__now_s() - t0) * 1e3;
}

static int params_shared(const run_state *s)
{
    return s->world > 1 && (s->cfg->red.mode != MODE_LOCAL_SGD || s->red.synced);
}

static int check_params(run_state *s, int step, train_result *res, char *err, size_t errlen)
{
    int bad;
    int rc = train_param_hash_check(s->comm, s->m.params, s->m.nparams, &bad);
    if (rc < 0) {
        coll__set_err(err, errlen, "parameter hash check after step %d: %s", step,
                      *coll_comm_errmsg(s->comm) ? coll_comm_errmsg(s->comm) : coll_strerror(rc));
        return rc;
    }
    if (rc == 0) return 0;
    res->bad_step = step;
    res->mismatch_rank = bad;
    coll__set_err(err, errlen, "parameters of rank %d differ from rank 0's after step %d", bad,
                  step);
    return TRAIN_EMISMATCH;
}

static int setup(run_state *s, train_result *res, char *err, size_t errlen)
{
    const train_config *c = s->cfg;
    int rc = train_net_build(&c->spec, c->batch, c->seed, &s->m, err, errlen);
    if (rc) return rc;
    if (s->comm && s->world > 1) train_net_grads_to_comm(&s->m, s->comm);
    rc = c->spec.kind == NET_CNN ? train_synth_init_image(&s->data, c->spec.in_channels,
                                                          c->spec.image, s->m.classes, c->seed)
                                 : train_synth_init(&s->data, s->m.in_size, s->m.classes, c->seed);
    if (rc) goto oom;
    /* ps: only rank 0 steps, so only it holds optimizer state */
    float momentum = c->red.mode == MODE_PS && s->rank != 0 && s->world > 1 ? 0.0f : c->momentum;
    if ((rc = train_sgd_init(&s->opt, s->m.nparams, c->lr, momentum))) goto oom;
    if ((rc = train_reducer_create(&s->red, &c->red, s->comm, &s->m, &s->opt))) {
        coll__set_err(err, errlen, "%s", s->red.err);
        return rc;
    }
    s->x = malloc(c->batch * s->m.in_size * sizeof(float));
    s->labels = malloc(c->batch * sizeof(int));
    if (!s->x || !s->labels) goto oom;
    res->nparams = s->m.nparams;
    res->steps = c->steps;
    if (!(res->step_ms = calloc((size_t)c->steps + 1, sizeof(double)))) goto oom;
    return 0;
oom:
    coll__set_err(err, errlen, "out of memory setting up the run (batch %zu)", c->batch);
    return COLL_ENOMEM;
}

static void teardown(run_state *s)
{
    train_reducer_free(&s->red);
    train_sgd_free(&s->opt);
    train_synth_free(&s->data);
    train_net_free(&s->m);
    free(s->x);
    free(s->labels);
}

static int train_steps(run_state *s, train_result *res, double *compute_ms, char *err,
                       size_t errlen)
{
    const train_config *c = s->cfg;
    int every = c->compute_steps > 0 ? (c->steps + c->compute_steps - 1) / c->compute_steps : 0;
    int passes = 0;
    double fwd_bwd = 0, opt = 0;
    int total = c->warmup + c->steps, tail = c->steps < 5 ? c->steps : 5;
    double loss_tail = 0;
    for (int step = 0; step < total; step++) {
        load_batch(s, step);
        double t0 = coll__now_s();
        double loss = train_net_forward(&s->m, s->x, s->labels);
        if (!isfinite(loss)) {
            res->bad_step = step + 1;
            coll__set_err(err, errlen, "loss is %s at step %d: stopping",
                          isnan(loss) ? "NaN" : "Inf", step + 1);
            return TRAIN_ENAN;
        }
        train_net_backward(&s->m, s->x, train_reducer_begin_step(&s->red));
        int rc = train_reducer_end_step(&s->red, step);
        double t1 = coll__now_s();
        if (rc) {
            coll__set_err(err, errlen, "step %d: %s", step + 1, s->red.err);
            return rc;
        }
        if (step == 0) res->loss_first = loss;
        int timed = step - c->warmup;
        if (timed >= 0) {
            res->step_ms[timed] = (t1 - t0) * 1e3;
            opt += s->red.opt_ms / c->steps;
            if (every && timed % every == 0) fwd_bwd += compute_pass_ms(s), passes++;
        }
        if (step >= total - tail) loss_tail += loss / tail;
        int last = step == total - 1;
        if (params_shared(s) &&
            (last || (c->check_every > 0 && (step + 1) % c->check_every == 0)) &&
            (rc = check_params(s, step + 1, res, err, errlen)))
            return rc;
    }
    res->loss_last = loss_tail;
    *compute_ms = (passes ? fwd_bwd / passes : 0) + opt;
    return 0;
}

int train_run(coll_comm *comm, const train_config *cfg, train_result *res, char *err, size_t errlen)
{
    run_state s = {.comm = comm,
                   .cfg = cfg,
                   .rank = comm ? coll_comm_rank(comm) : 0,
                   .world = comm ? coll_comm_size(comm) : 1};
    memset(res, 0, sizeof *res);
    res->mismatch_rank = -1;
    train_peak_rss_reset(); /* this run's peak, not an earlier run's */
    if (cfg->steps < 1 || cfg->batch < 1) {
        coll__set_err(err, errlen, "need at least one step and one sample per rank");
        return COLL_EINVAL;
    }
    int rc = setup(&s, res, err, errlen);
    double compute_ms = 0;
    if (rc == 0 && s.world > 1 && (rc = coll_barrier(comm)))
        coll__set_err(err, errlen, "barrier before training: %s", coll_comm_errmsg(comm));
    if (rc == 0) rc = train_steps(&s, res, &compute_ms, err, errlen);
    if (rc == 0) {
        /* slowest rank per step; the last slot carries the compute time */
        res->step_ms[cfg->steps] = compute_ms;
        if (s.world > 1 && (rc = coll_allreduce(comm, res->step_ms, res->step_ms,
                                                (size_t)cfg->steps + 1, COLL_FLOAT64, COLL_MAX)))
            coll__set_err(err, errlen, "gathering step times: %s", coll_comm_errmsg(comm));
        res->compute_ms = res->step_ms[cfg->steps];
    }
    if (rc == 0) {
        res->mem = (train_mem){
            .params_bytes = s.m.nparams * sizeof(float),
            .grads_bytes = s.m.nparams * sizeof(float),
            .optim_bytes = train_sgd_state_bytes(&s.opt),
            .activations_bytes = train_net_activation_bytes(s.m.layers, s.m.nlayers, cfg->batch),
            .comm_buffers_bytes = s.red.comm_bytes,
            .peak_rss_bytes = train_peak_rss_bytes(),
        };
        if (cfg->keep_params && (res->params = malloc(s.m.nparams * sizeof(float))))
            memcpy(res->params, s.m.params, s.m.nparams * sizeof(float));
        else if (cfg->keep_params) rc = COLL_ENOMEM;
    }
    teardown(&s);
    return rc;
}

void train_result_free(train_result *res)
{
    free(res->step_ms);
    free(res->params);
    res->step_ms = NULL;
    res->params = NULL;
}
