/* SGD with momentum, as torch.optim.SGD: v = mu*v + g; p -= lr*v. The velocity
 * is the optimizer state counted in the memory table. */
#ifndef TRAIN_OPTIM_SGD_H
#define TRAIN_OPTIM_SGD_H

#include <stddef.h>

typedef struct sgd {
    float lr, momentum;
    float *velocity;
    size_t n;
} sgd;

int train_sgd_init(sgd *o, size_t n, float lr, float momentum);
/* One step over params[lo, hi). */
void train_sgd_step_range(sgd *o, float *params, const float *grads, size_t lo, size_t hi);
void train_sgd_step(sgd *o, float *params, const float *grads);
size_t train_sgd_state_bytes(const sgd *o);
void train_sgd_free(sgd *o);

#endif
