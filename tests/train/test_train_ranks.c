/* Training on N ranks (run as `test_train_ranks NPROCS [BACKEND]`; the first
 * process launches the ranks):
 *  - every mode trains 10 steps with the parameter hash compared across ranks
 *    after every step: allreduce-sync and ddp (plain, fp16, top-k) must stay
 *    bitwise identical, ps too, local-sgd after each average;
 *  - allreduce-sync, ddp and ps on N ranks with batch B end where one process
 *    with batch N*B ends, to float tolerance. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../ranks/rank_harness.h"
#include "train/param_hash.h"
#include "train/train_run.h"

static int failures;

#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "rank %d: %s:%d: ", rh_rank, __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                     \
            fprintf(stderr, "\n");                                            \
            failures++;                                                       \
        }                                                                     \
    } while (0)

#define B 4
static const int hidden[] = {48, 24};

static train_config config(const char *mode, const char *compress, size_t batch)
{
    train_config c = {.batch = batch,
                      .steps = 10,
                      .seed = 9,
                      .lr = 0.05f,
                      .momentum = 0.9f,
                      .check_every = 1,
                      .keep_params = 1};
    c.spec = (net_spec){.kind = NET_MLP, .input = 30, .hidden = hidden, .nhidden = 2, .classes = 5};
    char err[256];
    if (train_reducer_mode_parse(mode, &c.red, err, sizeof err) ||
        train_compress_parse(compress, &c.red.compress, err, sizeof err))
        CHECK(0, "%s", err);
    /* tiny buckets: the 3000 gradients make many buckets, cut inside matrices */
    c.red.bucket_bytes = 2048;
    c.red.first_bucket_bytes = 512;
    return c;
}

static float *run(coll_comm *comm, const char *mode, const char *compress, size_t batch)
{
    train_config c = config(mode, compress, batch);
    train_result res;
    char err[320];
    int rc = train_run(comm, &c, &res, err, sizeof err);
    CHECK(rc == 0, "%s %s: %s", mode, compress, err);
    if (rc == 0) CHECK(isfinite(res.loss_last), "%s: loss not finite", mode);
    float *p = res.params;
    res.params = NULL;
    train_result_free(&res);
    return p;
}

/* One process with the whole batch: the reference. */
static void compare_with_single(coll_comm *comm, const char *mode, float *params)
{
    float *ref = run(NULL, "single", "none", (size_t)B * rh_size);
    train_config c = config("single", "none", 1);
    train_layer layers[NET_MAX_LAYERS];
    size_t nl, np;
    char err[256];
    train_net_plan(&c.spec, layers, &nl, &np, err, sizeof err);
    double worst = 0, moved = 0;
    float *init = NULL;
    train_config c0 = c;
    c0.steps = 1, c0.lr = 1e-30f; /* parameters after "no" step: the initial ones */
    train_result r0;
    if (train_run(NULL, &c0, &r0, err, sizeof err) == 0) init = r0.params, r0.params = NULL;
    train_result_free(&r0);
    for (size_t i = 0; ref && params && i < np; i++) {
        double d = fabs((double)params[i] - ref[i]) / (1e-3 + fabs(ref[i]));
        worst = d > worst ? d : worst;
        if (init) moved += fabs((double)ref[i] - init[i]);
    }
    CHECK(ref && params, "%s: no parameters to compare", mode);
    CHECK(worst < 1e-3,
          "%s on %d ranks x batch %d differs from 1 process x batch %d: "
          "relative difference %g",
          mode, rh_size, B, B * rh_size, worst);
    CHECK(!init || moved > 1e-3, "%s: training did not move the parameters", mode);
    free(ref);
    free(init);
    (void)comm;
}

/* The hash check sees one flipped bit on the last rank. */
static void hash_check_catches_a_difference(coll_comm *comm)
{
    float p[1000];
    for (int i = 0; i < 1000; i++) p[i] = (float)i * 0.5f;
    int bad = 0;
    CHECK(train_param_hash_check(comm, p, 1000, &bad) == 0 && bad == -1,
          "equal parameters flagged");
    if (rh_rank == rh_size - 1) p[999] = nextafterf(p[999], 1e9f);
    CHECK(train_param_hash_check(comm, p, 1000, &bad) == 1 && bad == rh_size - 1,
          "a one-ulp difference on rank %d not found (got rank %d)", rh_size - 1, bad);
}

int main(int argc, char **argv)
{
    coll_comm *comm = rh_start(argc, argv);
    if (!comm) return rh_launch_status;
    static const char *const modes[][2] = {
        {"allreduce-sync", "none"}, {"ddp", "none"}, {"ddp", "fp16"},         {"ddp", "bf16"},
        {"ddp", "topk:0.1"},        {"ps", "none"},  {"local-sgd:3", "none"},
    };
    hash_check_catches_a_difference(comm);
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        float *p = run(comm, modes[i][0], modes[i][1], B);
        int exact = strcmp(modes[i][1], "none") == 0 && strncmp(modes[i][0], "local", 5) != 0;
        if (rh_rank == 0 && exact) compare_with_single(comm, modes[i][0], p);
        free(p);
    }
    if (rh_rank == 0 && failures == 0) printf("training on %d ranks: PASS\n", rh_size);
    return rh_finish(comm, failures);
}
