#include "train/optim_sgd.h"

#include <stdlib.h>

#include "coll.h"

int train_sgd_init(sgd *o, size_t n, float lr, float momentum)
{
    o->lr = lr;
    o->momentum = momentum;
    o->n = n;
    o->velocity = momentum != 0 ? calloc(n, sizeof(float)) : NULL;
    return momentum != 0 && !o->velocity ? COLL_ENOMEM : 0;
}

void train_sgd_step_range(sgd *o, float *params, const float *grads, size_t lo, size_t hi)
{
    float lr = o->lr, mu = o->momentum;
    if (!o->velocity) {
        for (size_t i = lo; i < hi; i++) params[i] -= lr * grads[i];
        return;
    }
    float *v = o->velocity;
    for (size_t i = lo; i < hi; i++) {
        v[i] = mu * v[i] + grads[i];
        params[i] -= lr * v[i];
    }
}

void train_sgd_step(sgd *o, float *params, const float *grads)
{
    train_sgd_step_range(o, params, grads, 0, o->n);
}

size_t train_sgd_state_bytes(const sgd *o) { return o->velocity ? o->n * sizeof(float) : 0; }

void train_sgd_free(sgd *o)
{
    free(o->velocity);
    o->velocity = NULL;
}
